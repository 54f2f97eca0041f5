"""The `aggregate` tool: one number per group — a count, a sum, a mean,
the smallest or largest value, the median, or how many distinct values.

One pass over the file, holding one small accumulator per group (at most
:data:`MAX_GROUPS`). Two operations keep values: ``median`` keeps every
number of the column (8 bytes each, at most :data:`MAX_KEPT` in all) and
``distinct`` every distinct value (at most :data:`MAX_KEPT`).
"""

import array
import math

from agent_reach import Failed, InvalidArguments

from .conditions import compile_all, describe as describe_conditions
from .output import clip
from .values import MISSING, cell, is_empty, number, sort_key, text, tidy

#: The operations.
OPS = ("count", "distinct", "sum", "mean", "min", "max", "median")
#: Most groups one call may make.
MAX_GROUPS = 100_000
#: Most values `median` and `distinct` keep, over all groups.
MAX_KEPT = 2_000_000
#: Most groups one answer shows.
MAX_LIMIT = 500


class _Group:
    """The accumulator of one group."""

    __slots__ = ("key", "rows", "n", "sum", "carry", "exact", "low", "high", "low_text", "high_text", "kept", "skipped")

    def __init__(self, key):
        self.key = key
        self.rows = 0
        self.n = 0
        self.sum = 0.0
        self.carry = 0.0  # Neumaier compensation: sums of many prices stay exact to the cent
        self.exact = 0  # the sum while every value is an integer
        self.low = self.high = None
        self.low_text = self.high_text = None
        self.kept = None
        self.skipped = 0

    def add_number(self, n):
        self.n += 1
        if self.exact is not None and isinstance(n, int):
            self.exact += n
        else:
            self.exact = None
        x = float(n)
        total = self.sum + x
        if abs(self.sum) >= abs(x):
            self.carry += (self.sum - total) + x
        else:
            self.carry += (x - total) + self.sum
        self.sum = total
        if self.low is None or n < self.low:
            self.low = n
        if self.high is None or n > self.high:
            self.high = n

    def total(self):
        return self.exact if self.exact is not None else self.sum + self.carry


def aggregate(table, op, column, group_by, where, order, limit, case_sensitive):
    """The answer of `aggregate` for an opened table."""
    tool = table.tool
    if op != "count" and not column:
        raise InvalidArguments(f"{tool}: `{op}` needs a `column` (the column to {op}); only `count` works without one")
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidArguments(f"{tool}: limit must be between 1 and {MAX_LIMIT}")
    table.peek()
    test, places = compile_all(table, where, case_sensitive)
    target = table.column(column, "column") if column else None
    if target:
        places.setdefault(target, "column")
    groups_by = [table.column(g, f"group_by[{i}]") for i, g in enumerate(group_by)]
    for i, g in enumerate(groups_by):
        places.setdefault(g, f"group_by[{i}]")
    # Columns of a JSON file not seen in its first rows: see `query`.
    pending = {c for c in places if not table.knows(c)}

    groups = {}
    kept_total = 0
    empty = 0
    numeric = op in ("sum", "mean", "median", "min", "max")
    example_skipped = None
    for row in table.rows():
        if pending:
            for c in [c for c in pending if cell(row, c) is not MISSING]:
                pending.discard(c)
        if not test(row):
            continue
        if groups_by:
            values = tuple(cell(row, g) for g in groups_by)
            key = tuple(None if is_empty(v) else text(v) for v in values)
        else:
            values = key = ()
        group = groups.get(key)
        if group is None:
            if len(groups) >= MAX_GROUPS:
                raise Failed(
                    f"{tool}: more than {MAX_GROUPS} groups; group by fewer or coarser columns, or "
                    "add `where` conditions"
                )
            group = groups[key] = _Group(values)
        group.rows += 1
        if target is None:
            continue
        value = cell(row, target)
        if is_empty(value):
            empty += 1
            continue
        if op == "count":
            group.n += 1
        elif op == "distinct":
            if group.kept is None:
                group.kept = set()
            before = len(group.kept)
            group.kept.add(text(value) if case_sensitive else text(value).casefold())
            kept_total += len(group.kept) - before
        else:
            n = number(value)
            if n is None or (isinstance(n, float) and not math.isfinite(n)):
                if op in ("min", "max"):
                    t = text(value)
                    if group.low_text is None or t < group.low_text:
                        group.low_text = t
                    if group.high_text is None or t > group.high_text:
                        group.high_text = t
                group.skipped += 1
                if example_skipped is None:
                    example_skipped = clip(value)[0]
                continue
            group.add_number(n)
            if op == "median":
                if group.kept is None:
                    group.kept = array.array("d")
                group.kept.append(float(n))
                kept_total += 1
        if kept_total > MAX_KEPT:
            raise Failed(
                f"{tool}: `{op}` keeps every value in memory and this needs more than {MAX_KEPT}; "
                "add `where` conditions or group less finely"
                + ("; `mean` needs no memory" if op == "median" else "")
            )
    if pending:
        missing = min(pending, key=list(places).index)
        raise table.unknown_column(missing, places[missing])

    results = []
    skipped = 0
    for group in groups.values():
        value, used_text = _result(op, target, group)
        skipped += group.skipped if not used_text else 0
        row = {name: clip(v)[0] for name, v in zip(groups_by, group.key)}
        row["value"] = value
        row["rows"] = group.rows
        results.append(row)
    if not groups and not groups_by:
        results.append({"value": 0 if op in ("count", "distinct", "sum") else None, "rows": 0})

    # By group first, so that equal values keep the groups' order.
    results.sort(key=lambda r: tuple(sort_key(r[g], case_sensitive) for g in groups_by))
    if order != "group":
        descending = order == "desc"
        results.sort(key=lambda r: _rank(r["value"], descending), reverse=descending)

    answer = {"path": table.path, "op": op}
    if target:
        answer["column"] = target
    if groups_by:
        answer["group_by"] = groups_by
    if where:
        answer["filter"] = describe_conditions(where)
    answer["rows_matched"] = sum(g.rows for g in groups.values())
    if target and empty:
        answer["empty_values"] = empty
    if numeric and skipped:
        answer["not_numbers"] = skipped
        answer["not_number_example"] = example_skipped
    answer["groups"] = len(results)
    answer["results"] = results[:limit]
    answer["truncated"] = len(results) > limit
    if len(results) > limit:
        answer["note"] = f"showing {limit} of {len(results)} groups; raise limit (at most {MAX_LIMIT}) or add `where`"
    elif numeric and skipped:
        answer["note"] = f"{skipped} non-empty values of `{target}` are not numbers and were left out (e.g. {example_skipped!r})"
    return answer


def _rank(value, descending):
    """Sort key for a result value: numbers by size, then text (a min or max
    of dates); no value (a group without numbers) last in either order."""
    if value is None:
        return (-1, 0) if descending else (2, 0)
    if isinstance(value, (int, float)):
        return (0, value)
    return (1, str(value))


def _result(op, target, group):
    """A group's value, and whether it came from text (min/max of dates, say)."""
    if op == "count":
        return (group.n if target else group.rows), False
    if op == "distinct":
        return len(group.kept or ()), False
    if group.n == 0:
        if op in ("min", "max") and group.low_text is not None:
            return (group.low_text if op == "min" else group.high_text), True
        return (0 if op == "sum" else None), False
    if op == "sum":
        return tidy(group.total()), False
    if op == "mean":
        return tidy(group.total() / group.n), False
    if op == "min":
        return tidy(group.low), False
    if op == "max":
        return tidy(group.high), False
    values = sorted(group.kept)
    mid = len(values) // 2
    middle = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    return tidy(int(middle) if middle.is_integer() and group.exact is not None else middle), False
