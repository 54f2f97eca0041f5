#!/usr/bin/env python3
"""Counts the public items of the agent-reach library from its rustdoc JSON.

Usage: scripts/public-items.py [cargo feature flags…], e.g.
`scripts/public-items.py --no-default-features`. Needs a nightly toolchain
(rustdoc's JSON output is unstable). An item counts when an embedder can
name it: a public module, type, trait, function, constant, method, field or
variant of the crate, reached from its root (re-exports counted once).
"""

import json
import subprocess
import sys
from pathlib import Path


def main() -> None:
    flags = sys.argv[1:]
    subprocess.run(
        ["cargo", "+nightly", "rustdoc", "-q", "-p", "agent-reach", "--lib", *flags, "--",
         "-Z", "unstable-options", "--output-format", "json"],
        check=True,
    )
    metadata = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        check=True, capture_output=True, text=True,
    ).stdout
    target = Path(json.loads(metadata)["target_directory"])
    doc = json.loads((target / "doc" / "agent_reach.json").read_text())
    index = doc["index"]
    seen: set[str] = set()
    kinds: dict[str, int] = {}

    def visit(item_id: str) -> None:
        if item_id in seen or str(item_id) not in index:
            return
        item = index[str(item_id)]
        unmarked = "impl" in item["inner"] or "variant" in item["inner"]
        if item.get("crate_id") != 0 or (item.get("visibility") != "public" and not unmarked):
            return
        seen.add(item_id)
        kind, inner = next(iter(item["inner"].items()))
        kinds[kind] = kinds.get(kind, 0) + 1
        children: list = []
        if kind == "module":
            children = inner["items"]
        elif kind == "use":
            if inner.get("id") is not None:
                visit_target(inner["id"])
            return
        elif kind == "struct":
            fields = inner["kind"]
            if isinstance(fields, dict) and "plain" in fields:
                children = fields["plain"]["fields"]
            elif isinstance(fields, dict) and "tuple" in fields:
                children = [f for f in fields["tuple"] if f is not None]
            children += inner["impls"]
        elif kind == "enum":
            children = inner["variants"] + inner["impls"]
        elif kind == "union":
            children = inner["fields"] + inner["impls"]
        elif kind == "trait":
            children = inner["items"]
        elif kind == "impl":
            if inner.get("trait") is None:
                children = inner["items"]
        for child in children:
            visit(child)

    def visit_target(item_id) -> None:
        item = index.get(str(item_id))
        if item is not None and item.get("crate_id") == 0:
            # A re-export of the crate's own item: counted where it is defined.
            visit(str(item_id))

    visit(str(doc["root"]))
    # Impl blocks and `pub use` lines are not items an embedder names;
    # what they hold and point at are, and are counted as such.
    kinds.pop("impl", None)
    kinds.pop("use", None)
    total = sum(kinds.values())
    print(f"{total} public items", " ".join(f"{k}={v}" for k, v in sorted(kinds.items())))


if __name__ == "__main__":
    main()
