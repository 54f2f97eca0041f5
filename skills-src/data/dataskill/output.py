"""Keeping answers small: a model reads every byte of them.

Long cell values are cut, and lists of rows stop at a byte budget well
under the host's default output limit (256 KiB), with a note saying what
was left out and how to get it.
"""

import json

from .values import MISSING, cell

#: Longest text shown for one cell; the rest is replaced by "…".
MAX_CELL = 500
#: Bytes of rows one answer may hold.
MAX_ROWS_BYTES = 48 * 1024


def clip(value):
    """A cell for an answer: missing as null, long text cut, large nested
    JSON shown as cut text. Returns ``(value, cut)``."""
    if value is MISSING:
        return None, False
    if isinstance(value, str):
        if len(value) > MAX_CELL:
            return value[:MAX_CELL] + "…", True
        return value, False
    if isinstance(value, (dict, list)):
        encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if len(encoded) > MAX_CELL:
            return encoded[:MAX_CELL] + "…", True
    return value, False


def clip_row(row, columns=None):
    """A row for an answer (only ``columns``, if given); and whether a cell was cut."""
    out = {}
    cut = False
    names = columns if columns is not None else row.keys()
    for name in names:
        value, was_cut = clip(cell(row, name) if columns is not None else row[name])
        out[name] = value
        cut = cut or was_cut
    return out, cut


def fit(rows, budget=MAX_ROWS_BYTES):
    """The longest prefix of ``rows`` whose JSON fits in ``budget`` bytes."""
    used = 2
    for i, row in enumerate(rows):
        used += len(json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode()) + 1
        if used > budget:
            return rows[:i]
    return rows
