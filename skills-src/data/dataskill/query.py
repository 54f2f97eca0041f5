"""The `query` tool: the rows that meet every condition, some columns of
them, sorted, a page at a time.

One pass over the file. Matching rows are counted as they go by; only the
page asked for is kept — the first ``offset + limit`` matches, or, when
sorting, the best ``offset + limit`` of them in a heap — so memory does not
grow with the file.
"""

import heapq

from agent_reach import InvalidArguments

from .conditions import compile_all, describe as describe_conditions
from .output import clip_row, fit
from .values import MISSING, cell, sort_key

#: Most rows one call returns.
MAX_LIMIT = 200
#: Deepest page: ``offset + limit`` rows are held while sorting.
MAX_WINDOW = 10_000


def query(table, where, columns, sort_by, order, limit, offset, case_sensitive):
    """The answer of `query` for an opened table."""
    tool = table.tool
    if not 0 <= limit <= MAX_LIMIT:
        raise InvalidArguments(f"{tool}: limit must be between 0 and {MAX_LIMIT} (0 only counts the matches)")
    if offset < 0 or offset + limit > MAX_WINDOW:
        raise InvalidArguments(f"{tool}: offset + limit can be at most {MAX_WINDOW}; narrow `where` instead of paging this deep")
    table.peek()
    test, places = compile_all(table, where, case_sensitive)
    selected = [table.column(c, f"columns[{i}]") for i, c in enumerate(columns)] if columns else None
    for i, c in enumerate(selected or []):
        places.setdefault(c, f"columns[{i}]")
    sort_column = table.column(sort_by, "sort_by") if sort_by else None
    if sort_column:
        places.setdefault(sort_column, "sort_by")
    # In JSON a column may first appear late: those not seen yet are looked
    # for in every row, and an error listing the columns follows if one
    # never turns up.
    pending = {c for c in places if not table.knows(c)}
    counted = [0]

    def matches():
        seq = 0
        for row in table.rows():
            if pending:
                for c in [c for c in pending if cell(row, c) is not MISSING]:
                    pending.discard(c)
            if test(row):
                counted[0] += 1
                seq += 1
                yield seq, row

    window = offset + limit
    if sort_column is None:
        kept = []
        for seq, row in matches():
            if offset < seq <= window:
                kept.append(row)
    else:
        descending = order == "desc"

        def key(item):
            group, value = sort_key(cell(item[1], sort_column), case_sensitive)
            # Going down, numbers still come first and empty values last.
            return (2 - group, value) if descending else (group, value)

        pick = heapq.nlargest if descending else heapq.nsmallest
        if window:
            kept = [row for _, row in pick(window, matches(), key=key)][offset:]
        else:
            kept = []
            for _ in matches():  # limit 0: count only
                pass
    if pending:
        missing = min(pending, key=list(places).index)
        raise table.unknown_column(missing, places[missing])

    matched = counted[0]
    shown = []
    cut = False
    for row in kept:
        out, was_cut = clip_row(row, selected)
        shown.append(out)
        cut = cut or was_cut
    fitted = fit(shown)
    answer = {"path": table.path, "matched": matched}
    if where:
        answer["filter"] = describe_conditions(where)
    if sort_column:
        answer["sorted_by"] = f"{sort_column} {'desc' if order == 'desc' else 'asc'}"
    answer["rows"] = fitted
    first, last = offset + 1, offset + len(fitted)
    notes = []
    if len(fitted) < len(shown):
        notes.append(
            f"cut to {len(fitted)} rows to keep the answer small; select fewer `columns` "
            f"or call again with offset {last}"
        )
    elif matched > last and limit:
        notes.append(f"showing rows {first}–{last} of {matched} matches; call again with offset {last} for more")
    elif matched > last:
        notes.append("limit 0: only counted")
    if cut:
        notes.append("long values are cut with …")
    answer["truncated"] = matched > last
    if notes:
        answer["note"] = "; ".join(notes)
    return answer
