"""A Python skill that misbehaves on request, for the host's sandbox tests
(tests/tests/all/other_languages.rs): the same checks the Rust `probe` and
`misbehave` skills go through, run against an interpreter in a component.
Plain `open()`, `os.environ` and the SDK's HTTP client: what a Python author
would use, so the tests prove the runtime enforces the table."""

import os
import time
from typing import Literal

from agent_reach import NotFound, Skill, export, http

skill = Skill("misbehave_py", "0.1.0", "Test skill: reads, writes, fetches and misbehaves on request.")


@skill.tool
def read(path: str) -> str:
    """The text of a file, with plain open()."""
    with open(path) as f:
        return f.read()


@skill.tool
def write(path: str, content: str) -> str:
    """Write a file with plain open()."""
    with open(path, "w") as f:
        f.write(content)
    return "written"


@skill.tool
def fetch(url: str) -> str:
    """GET a URL through the SDK; the status and body."""
    response = http.get(url)
    return f"{response.status} {response.text}"


@skill.tool
def env(variable: str) -> str:
    """A variable's value; not-found (listing what the sandbox has) when absent."""
    if variable not in os.environ:
        raise NotFound(f"no variable {variable} in the sandbox (it has: {', '.join(sorted(os.environ)) or 'none'})")
    return os.environ[variable]


@skill.tool
def spin() -> str:
    """Loop forever."""
    n = 0
    while True:
        n += 1


@skill.tool
def sleep(ms: int) -> str:
    """Block in the host (a clock wait), not computing."""
    time.sleep(ms / 1000)
    return f"slept {ms} ms"


@skill.tool
def alloc(mib: int) -> str:
    """Allocate mib MiB, writing to every 4 KiB page."""
    blocks = []
    for _ in range(mib):
        block = bytearray(1 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        blocks.append(block)
    return f"allocated {mib} MiB"


@skill.tool
def flood(kib: int) -> str:
    """Return kib KiB of text."""
    return "x" * (kib * 1024)


@skill.tool
def crash(how: Literal["error", "trap"]) -> str:
    """error: an ordinary exception (not a ToolError); trap: abort the interpreter."""
    if how == "trap":
        os.abort()
    raise RuntimeError("something broke")


Guest = export(skill)
