"""Conditions on rows (``{"column": "price", "op": ">", "value": 100}``),
compiled once per call into a test each row goes through.

Numbers compare as numbers when both sides read as numbers; otherwise
values compare as text, ignoring case unless the call asks otherwise —
except that `<` `<=` `>` `>=` with a number never match a cell that is not
one (``"n/a" > 100`` is not true). An
empty cell (missing, null or blank) matches only ``empty``, ``!=`` against a
value, ``= null`` and ``in`` lists holding null; ordering operators never
match it.
"""

import dataclasses
import json
from typing import Annotated, List, Literal, Optional, Union

from agent_reach import InvalidArguments

from .values import cell, is_empty, number, text

#: The operators, in the order the schema lists them.
OPS = ("=", "!=", "<", "<=", ">", ">=", "contains", "startswith", "endswith", "in", "empty", "not_empty")

Scalar = Union[str, int, float, bool]


@dataclasses.dataclass
class Condition:
    """One condition a row must meet.

    Attributes:
        column: The column to test (as `describe` lists it; dotted names such as `customer.city` reach into nested JSON objects).
        op: How to compare. `=` `!=` `<` `<=` `>` `>=` compare numbers as numbers (`<` `>` with a number skip cells that are not numbers) and anything else as text (ISO dates order correctly); `contains`, `startswith`, `endswith` test text; `in` matches any value of a list; `empty` and `not_empty` take no value.
        value: What to compare with: a number, a text, true/false, a list for `in`, or null.
    """

    column: str
    op: Literal[OPS]
    value: Optional[Union[Scalar, List[Optional[Scalar]]]] = None


def _comparer(value, fold, ordered_as_text=False):
    """``compare(cell) -> -1, 0 or 1`` against a fixed ``value``: numerically
    when both read as numbers, else as text; ``None`` for a cell that is not
    a number when ``value`` is one (unless ``ordered_as_text``: equality
    still compares the texts). The value's side is worked out once, not
    once per row."""
    n_value = number(value)
    t_value = text(value).casefold() if fold else text(value)

    def compare(a):
        if n_value is not None:
            n = number(a)
            if n is not None:
                return (n > n_value) - (n < n_value)
            if not ordered_as_text:
                return None  # "n/a" is neither more nor less than 100
        t = text(a)
        if fold:
            t = t.casefold()
        return (t > t_value) - (t < t_value)

    return compare


def compile_one(c, column, case_sensitive, where):
    """A test ``row -> bool`` for one condition on ``column`` (resolved)."""
    fold = not case_sensitive
    op, value = c.op, c.value
    if op in ("empty", "not_empty"):
        want = op == "empty"
        return lambda row: is_empty(cell(row, column)) == want
    if op == "in":
        if not isinstance(value, list):
            raise InvalidArguments(f"{where}: `in` takes a list of values, e.g. \"value\": [\"North\", \"South\"]")
        wants_empty = any(v is None for v in value)
        options = [_comparer(v, fold, ordered_as_text=True) for v in value if v is not None]

        def is_in(row):
            v = cell(row, column)
            if is_empty(v):
                return wants_empty
            return any(compare(v) == 0 for compare in options)

        return is_in
    if isinstance(value, list):
        raise InvalidArguments(f"{where}: `{op}` compares with one value, not a list (use `in` for a list)")
    if value is None:
        if op == "=":
            return lambda row: is_empty(cell(row, column))
        if op == "!=":
            return lambda row: not is_empty(cell(row, column))
        raise InvalidArguments(f"{where}: `{op}` needs a value")
    if op in ("=", "!=", "<", "<=", ">", ">="):
        compare = _comparer(value, fold, ordered_as_text=op in ("=", "!="))
        accept = {"=": (0,), "!=": (-1, 1), "<": (-1,), "<=": (-1, 0), ">": (1,), ">=": (1, 0)}[op]
        if op == "!=":
            # An empty cell differs from any value.
            return lambda row: is_empty(v := cell(row, column)) or compare(v) != 0
        return lambda row: not is_empty(v := cell(row, column)) and compare(v) in accept
    needle = text(value).casefold() if fold else text(value)
    method = {"contains": "__contains__", "startswith": "startswith", "endswith": "endswith"}[op]

    def test_text(row):
        v = cell(row, column)
        if is_empty(v):
            return False
        haystack = text(v).casefold() if fold else text(v)
        return getattr(haystack, method)(needle)

    return test_text


def compile_all(table, conditions, case_sensitive):
    """One test for all ``conditions`` (all must hold), with the columns
    they name resolved against ``table``; and ``{column: where it was named}``."""
    tests = []
    used = {}
    for i, c in enumerate(conditions):
        where = f"where[{i}]"
        column = table.column(c.column, f"{where}.column")
        used.setdefault(column, f"{where}.column")
        tests.append(compile_one(c, column, case_sensitive, f"{table.tool}: {where}"))
    if not tests:
        return (lambda row: True), used
    if len(tests) == 1:
        return tests[0], used
    return (lambda row: all(t(row) for t in tests)), used


def describe(conditions):
    """The conditions as one line of text, for answers: `price > 100 and region = North`."""
    parts = []
    for c in conditions:
        if c.op in ("empty", "not_empty"):
            parts.append(f"{c.column} is {'empty' if c.op == 'empty' else 'not empty'}")
        else:
            parts.append(f"{c.column} {c.op} {json.dumps(c.value, ensure_ascii=False)}")
    return " and ".join(parts)


__all__ = ["Condition", "OPS", "compile_all"]
