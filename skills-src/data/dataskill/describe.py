"""The `describe` tool: what a table holds, in one pass.

Per column: its type (from every value, not a sample), how many cells are
empty, the range of numbers and dates, and for text how many distinct
values there are and the most frequent ones — what a model needs to write
conditions that match the data as it is spelled. Memory per column is
bounded: at most :data:`MAX_DISTINCT` distinct values are counted.
"""

from .output import clip_row, fit
from .values import classify, column_type, kind, tidy

#: Distinct values counted per column; past that only "more than" is known.
MAX_DISTINCT = 1000
#: A text column with at most this many distinct values lists them all.
LIST_VALUES_UP_TO = 25
#: Most frequent values shown for a text column with more distinct values.
TOP_VALUES = 10
#: Rows shown as a sample.
SAMPLE_ROWS = 5
#: Columns described; a wider table is described in part.
MAX_COLUMNS = 300
#: Longest value counted as a distinct value (longer ones are free text).
MAX_VALUE_LENGTH = 200


class _Column:
    """What one column's values have shown so far."""

    __slots__ = ("kinds", "filled", "low", "high", "low_text", "high_text", "counts", "overflow")

    def __init__(self):
        self.kinds = {}
        self.filled = 0
        self.low = self.high = None
        self.low_text = self.high_text = None
        #: value -> [times seen, kind]; a repeated value needs no second look.
        self.counts = {}
        self.overflow = False

    def add(self, value):
        if isinstance(value, str):
            seen = self.counts.get(value)
            if seen is not None:
                # Seen before: its kind is known and it cannot move the range.
                seen[0] += 1
                self.filled += 1
                self.kinds[seen[1]] += 1
                return
            k, n = classify(value)
            if k is None:
                return
        elif value is None:
            return
        else:
            k = kind(value)
            n = value if k in ("integer", "number") else None
            if k in ("object", "array"):
                self.filled += 1
                self.kinds[k] = self.kinds.get(k, 0) + 1
                return
            if k == "boolean":
                value = "true" if value else "false"
            seen = self.counts.get(value)
            if seen is not None:
                seen[0] += 1
                self.filled += 1
                self.kinds[seen[1]] += 1
                return
        self.filled += 1
        self.kinds[k] = self.kinds.get(k, 0) + 1
        if not self.overflow:
            if len(self.counts) < MAX_DISTINCT and (not isinstance(value, str) or len(value) <= MAX_VALUE_LENGTH):
                self.counts[value] = [1, k]
            else:
                self.overflow = True
        if n is not None:
            if self.low is None or n < self.low:
                self.low = n
            if self.high is None or n > self.high:
                self.high = n
        elif k in ("date", "datetime"):
            t = value.strip()
            if self.low_text is None or t < self.low_text:
                self.low_text = t
            if self.high_text is None or t > self.high_text:
                self.high_text = t

    def summary(self, name, rows):
        out = {"name": name, "type": column_type(self.kinds), "empty": rows - self.filled}
        kind_of = out["type"]
        if kind_of == "mixed":
            out["kinds"] = dict(sorted(self.kinds.items(), key=lambda kv: -kv[1]))
        if self.low is not None:
            out["min"], out["max"] = tidy(self.low), tidy(self.high)
        if self.low_text is not None and kind_of in ("date", "datetime", "mixed"):
            out["first"], out["last"] = self.low_text, self.high_text
        # Whole numbers that repeat (ratings, years, codes) are categories too.
        few_integers = (
            kind_of == "integer"
            and not self.overflow
            and len(self.counts) <= LIST_VALUES_UP_TO
            and self.filled > 2 * len(self.counts)
        )
        if kind_of in ("text", "boolean", "mixed") or few_integers:
            out["distinct"] = f"more than {MAX_DISTINCT}" if self.overflow else len(self.counts)
            ranked = sorted(((k, seen[0]) for k, seen in self.counts.items()), key=lambda kv: -kv[1])
            if self.overflow:
                # Counts stopped at the cap would rank the file's first values
                # only: show what values look like, not how often they occur.
                out["examples"] = [str(k) for k in list(self.counts)[:5]]
            elif len(ranked) <= LIST_VALUES_UP_TO:
                out["values"] = {str(k): n for k, n in ranked}
            elif ranked[0][1] > 1:
                out["top_values"] = {str(k): n for k, n in ranked[:TOP_VALUES] if n > 1}
        return out


def describe(table):
    """The answer of `describe` for an opened table."""
    columns = {}
    rows = 0
    sample = []
    cut = False
    for row in table.rows():
        rows += 1
        if rows <= SAMPLE_ROWS:
            shown, was_cut = clip_row(row)
            sample.append(shown)
            cut = cut or was_cut
        for key, value in row.items():
            stats = columns.get(key)
            if stats is None:
                if len(columns) >= MAX_COLUMNS:
                    continue
                stats = columns[key] = _Column()
            stats.add(value)
            if isinstance(value, dict):
                for inner, inner_value in value.items():
                    name = f"{key}.{inner}"
                    stats = columns.get(name)
                    if stats is None:
                        if len(columns) >= MAX_COLUMNS:
                            continue
                        stats = columns[name] = _Column()
                    stats.add(inner_value)
    names = [c for c in table.columns if c in columns] or list(columns)
    # A CSV column that is empty in every row has no stats; it still exists.
    for name in table.columns:
        columns.setdefault(name, _Column())
        if name not in names:
            names.append(name)
    answer = {"path": table.path, "format": table.format}
    if table.delimiter and table.delimiter != ",":
        answer["delimiter"] = table.delimiter
    if table.encoding not in ("utf-8", "utf-8-sig"):
        answer["encoding"] = table.encoding
    if table.records_key is not None:
        answer["records_at"] = table.records_key
    answer["rows"] = rows
    answer["columns"] = [columns[n].summary(n, rows) for n in names[:MAX_COLUMNS]]
    answer["sample"] = fit(sample, 16 * 1024)
    notes = []
    if len(names) > MAX_COLUMNS:
        notes.append(f"the table has {len(names)} columns; the first {MAX_COLUMNS} are described")
    if cut:
        notes.append("long values in the sample are cut with …")
    if notes:
        answer["note"] = "; ".join(notes)
    return answer
