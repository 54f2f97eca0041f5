"""What a cell's value means: number, text or empty, and how values compare.

A CSV cell is always text; a JSON value may be a number, a string, a
boolean, null, an object or an array. The tools treat them alike: a value
that reads as a number (``12``, ``-3.5``, ``1e6``, ``" 42 "``) is a number
when the other side of a comparison is one too, so ``"price" > 100``
compares numbers in a CSV file as well as in JSON. Everything else compares
as text, which also orders ISO dates (``2024-03-01``) correctly.
"""

import json
import re

#: A decimal number as people and exports write it. Thousands separators
#: (``1,234``) are not numbers here: in half the world ``,`` is the decimal
#: point, and guessing would change values silently.
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")


class _Missing:
    """The value of a column a row does not have."""

    def __repr__(self):
        return "<missing>"


MISSING = _Missing()


def cell(row, column):
    """The value of ``column`` in ``row``. A dotted name (``customer.city``)
    reaches into nested JSON objects when no key has that exact name."""
    value = row.get(column, MISSING)
    if value is not MISSING or "." not in column:
        return value
    value = row
    for part in column.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def is_empty(value):
    """Missing, null, or text with nothing but spaces."""
    return value is MISSING or value is None or (isinstance(value, str) and not value.strip())


def number(value):
    """The value as an ``int`` or ``float``, or ``None`` if it is not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        text = value.strip()
        if NUMBER.fullmatch(text):
            return int(text) if _INTEGER.fullmatch(text) else float(text)
    return None


def text(value):
    """The value as text for comparing and grouping: JSON objects and arrays
    as compact JSON, booleans as ``true``/``false``, null as ``""``."""
    if isinstance(value, str):
        return value
    if value is None or value is MISSING:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def classify(text_value):
    """What a text looks like, and its number if it is one: ``(kind, n)``
    with kind ``integer``, ``number``, ``boolean``, ``date``, ``datetime``
    or ``text``; ``(None, None)`` for blank text. One look per value: this
    runs for every new value of every column `describe` reads."""
    t = text_value.strip()
    if not t:
        return None, None
    first = t[0]
    if first.isdigit() or first in "+-.":
        if NUMBER.fullmatch(t):
            if "." in t or "e" in t or "E" in t:
                return "number", float(t)
            return "integer", int(t)
        if first.isdigit():
            if _DATE.fullmatch(t):
                return "date", None
            if _DATETIME.fullmatch(t):
                return "datetime", None
        return "text", None
    if len(t) in (4, 5) and t.lower() in ("true", "false"):
        return "boolean", None
    return "text", None


def kind(value):
    """What a non-empty value looks like: ``integer``, ``number``,
    ``boolean``, ``date``, ``datetime``, ``text``, ``object`` or ``array``."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return classify(value)[0] or "text"


#: Kinds that merge into a wider one when a column holds both.
_WIDER = {
    frozenset({"integer", "number"}): "number",
    frozenset({"date", "datetime"}): "datetime",
}


def column_type(counts):
    """A column's type from how many values of each kind it holds: one kind,
    a wider one for integer+number or date+datetime, ``mixed`` otherwise,
    ``empty`` when it holds nothing."""
    kinds = frozenset(k for k, n in counts.items() if n)
    if not kinds:
        return "empty"
    if len(kinds) == 1:
        return next(iter(kinds))
    return _WIDER.get(kinds, "mixed")


def sort_key(value, case_sensitive=False):
    """Orders numbers before text, and puts empty values last (ascending)."""
    if is_empty(value):
        return (2, 0)
    n = number(value)
    if n is not None:
        return (0, n)
    t = text(value)
    return (1, t if case_sensitive else t.casefold())


def tidy(x):
    """A computed float without binary noise (``0.30000000000000004`` →
    ``0.3``), and integral results of integer inputs as integers."""
    if isinstance(x, float):
        if x != x or x in (float("inf"), float("-inf")):
            return None  # JSON has no NaN; an answer with it would not parse
        return float(f"{x:.15g}")
    return x
