"""Group commit subjects (stdin, one per line) into a Keep a Changelog entry.

Usage: changelog.py VERSION [DATE]. Standard library only.
"""

import re
import sys

SECTIONS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
PREFIXES = {
    "feat": "Added", "add": "Added", "adds": "Added", "added": "Added", "new": "Added",
    "introduce": "Added",
    "fix": "Fixed", "fixes": "Fixed", "fixed": "Fixed", "bug": "Fixed", "correct": "Fixed",
    "remove": "Removed", "removes": "Removed", "removed": "Removed", "drop": "Removed",
    "delete": "Removed",
    "deprecate": "Deprecated", "deprecated": "Deprecated",
    "security": "Security", "sec": "Security",
    "perf": "Changed", "refactor": "Changed", "change": "Changed", "changed": "Changed",
    "update": "Changed", "improve": "Changed", "bump": "Changed", "rename": "Changed",
    "docs": "Changed", "doc": "Changed",
}
NOISE = {"chore", "ci", "test", "tests", "style", "build", "wip"}
CONVENTIONAL = re.compile(r"^(?P<kind>[a-zA-Z]+)(\([^)]*\))?(?P<bang>!)?:\s*(?P<rest>.+)$")


def classify(subject):
    """(section, text) for one subject, or None to leave it out."""
    subject = subject.strip()
    if not subject or subject.lower().startswith(("merge ", "revert \"merge")):
        return None
    match = CONVENTIONAL.match(subject)
    if match:
        kind = match["kind"].lower()
        if kind in NOISE:
            return None
        text = match["rest"].strip()
        if re.search(r"\b(CVE-\d{4}-\d+|vulnerab|security)\b", text, re.I):
            return "Security", text
        return PREFIXES.get(kind, "Changed"), text
    word = subject.split()[0].lower().rstrip(":")
    if re.search(r"\b(CVE-\d{4}-\d+|vulnerab)", subject, re.I):
        return "Security", subject
    return PREFIXES.get(word, "Changed"), subject


def entry(version, date, subjects):
    groups = {s: [] for s in SECTIONS}
    for subject in subjects:
        found = classify(subject)
        if found and found[1] not in groups[found[0]]:
            groups[found[0]].append(found[1][0].upper() + found[1][1:])
    heading = f"## [{version}] - {date}" if date else f"## [{version}]"
    out = [heading]
    for section in SECTIONS:
        if groups[section]:
            out += ["", f"### {section}"] + [f"- {line}" for line in groups[section]]
    if len(out) == 1:
        out += ["", "No user-facing changes."]
    return "\n".join(out) + "\n"


def main(argv):
    if not argv or len(argv) > 2:
        raise SystemExit("usage: changelog.py VERSION [DATE]; commit subjects on stdin")
    version = argv[0].lstrip("v")
    date = argv[1] if len(argv) == 2 else ""
    if date and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        raise SystemExit(f"DATE must be YYYY-MM-DD, not {date!r}")
    sys.stdout.write(entry(version, date, sys.stdin.read().splitlines()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
