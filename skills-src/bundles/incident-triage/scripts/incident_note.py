"""Write an incident note in the team's fixed format.

Reads one JSON object on stdin (title, severity, start, end, impact, cause,
evidence, next_steps) and prints the note; `--out PATH` writes it there too.
Standard library only, so it runs in Agent Reach's sandboxed CPython.
"""

import argparse
import datetime
import json
import sys

SEVERITIES = ("SEV1", "SEV2", "SEV3", "SEV4")
FIELDS = ("title", "severity", "start", "impact", "cause")


def parse_time(text):
    text = str(text).strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    return datetime.datetime.fromisoformat(text)


def duration(start, end):
    try:
        minutes = int((parse_time(end) - parse_time(start)).total_seconds() // 60)
    except (TypeError, ValueError):
        return "unknown"
    if minutes < 0:
        return "unknown (end before start)"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def bullets(items):
    items = [str(i).strip() for i in items or [] if str(i).strip()]
    return "\n".join(f"- {i}" for i in items) if items else "- (none recorded)"


def note(incident):
    missing = [f for f in FIELDS if not str(incident.get(f, "")).strip()]
    if missing:
        raise SystemExit(f"missing fields: {', '.join(missing)} (see SKILL.md for the shape)")
    severity = str(incident["severity"]).upper().replace(" ", "")
    if severity not in SEVERITIES:
        raise SystemExit(f"severity must be one of {', '.join(SEVERITIES)}, not {incident['severity']!r}")
    end = str(incident.get("end") or "").strip()
    lines = [
        f"# Incident: {incident['title'].strip()}",
        "",
        f"**Severity:** {severity}  ",
        f"**Start:** {incident['start']}  ",
        f"**End:** {end or 'ongoing'}  ",
        f"**Duration:** {duration(incident['start'], end) if end else 'ongoing'}",
        "",
        "## Impact",
        str(incident["impact"]).strip(),
        "",
        "## Suspected cause",
        str(incident["cause"]).strip(),
        "",
        "## Evidence",
        bullets(incident.get("evidence")),
        "",
        "## Next steps",
        bullets(incident.get("next_steps")),
    ]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description="Write an incident note from JSON on stdin.")
    parser.add_argument("--out", help="also write the note to this file")
    args = parser.parse_args()
    raw = sys.stdin.read()
    try:
        incident = json.loads(raw)
    except ValueError as err:
        raise SystemExit(f"stdin is not a JSON object: {err}")
    if not isinstance(incident, dict):
        raise SystemExit("stdin must be one JSON object")
    text = note(incident)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    if args.out:
        print(f"\n(saved to {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
