"""Docstrings as descriptions: the text a tool's model reads, and the
descriptions of its parameters.

A tool's docstring is its description, minus the section that documents the
parameters; that section gives each parameter its description. Three common
spellings of that section are understood, so authors write what their
editor and linters already expect::

    Args:                         :param path: The file.     Parameters
        path: The file.                                      ----------
        limit (int): Most rows,                              path : str
            at most 200.                                         The file.
"""

import inspect
import re

#: Headers of the section that documents parameters (Google style). Classes
#: (dataclasses, TypedDicts) document their fields under ``Attributes:``.
_GOOGLE_HEADERS = {"args", "arguments", "parameters", "params", "attributes", "fields"}
#: ``name (type): text`` or ``name: text``.
_GOOGLE_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(.*)$")
#: ``:param name: text`` or ``:param type name: text``.
_REST_ENTRY = re.compile(r"^:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")
#: Any reST field line (``:returns: …``), which ends a ``:param`` entry.
_REST_FIELD = re.compile(r"^:[a-z]+")
#: ``name : type`` (NumPy style) — the text follows on indented lines.
_NUMPY_ENTRY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?::.*)?$")
_NUMPY_HEADERS = {"parameters", "attributes", "other parameters"}


def _indent(line):
    return len(line) - len(line.lstrip())


def _join(parts):
    """Wrapped lines of one description, as one line of text."""
    return " ".join(p.strip() for p in parts if p.strip())


def parse(doc):
    """Split a docstring into ``(description, {name: description})``.

    The description is the cleaned docstring without the parameters
    section; it is ``""`` for no docstring.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    params = {}
    kept = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        lowered = stripped.lower()
        # Google style: a header ending in ':' over indented entries.
        if lowered.endswith(":") and lowered[:-1] in _GOOGLE_HEADERS:
            base = _indent(line)
            i += 1
            name, text = None, []
            while i < len(lines):
                entry = lines[i]
                if entry.strip() and _indent(entry) <= base:
                    break
                match = _GOOGLE_ENTRY.match(entry.strip())
                # A new entry is indented less than the text it follows.
                if match and (name is None or _indent(entry) <= entry_indent):
                    if name:
                        params[name] = _join(text)
                    name, text = match.group(1).lstrip("*"), [match.group(3)]
                    entry_indent = _indent(entry)
                elif name:
                    text.append(entry)
                i += 1
            if name:
                params[name] = _join(text)
            continue
        # NumPy style: a header underlined with dashes.
        if (
            lowered in _NUMPY_HEADERS
            and i + 1 < len(lines)
            and set(lines[i + 1].strip()) == {"-"}
        ):
            base = _indent(line)
            i += 2
            name, text = None, []
            while i < len(lines):
                entry = lines[i]
                if entry.strip() and _indent(entry) <= base:
                    match = _NUMPY_ENTRY.match(entry.strip())
                    next_line = lines[i + 1] if i + 1 < len(lines) else ""
                    if not match or set(next_line.strip()) == {"-"}:
                        break
                    if name:
                        params[name] = _join(text)
                    name, text = match.group(1), []
                elif name:
                    text.append(entry)
                i += 1
            if name:
                params[name] = _join(text)
            continue
        # reST style: field lines anywhere.
        match = _REST_ENTRY.match(stripped)
        if match:
            name, text = match.group(1), [match.group(2)]
            i += 1
            while i < len(lines) and lines[i].strip() and not _REST_FIELD.match(lines[i].strip()):
                text.append(lines[i])
                i += 1
            params[name] = _join(text)
            continue
        kept.append(line)
        i += 1
    description = "\n".join(kept).strip()
    # Leave no run of blank lines where a section was taken out.
    description = re.sub(r"\n{3,}", "\n\n", description)
    return description, params
