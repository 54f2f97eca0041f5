"""Opening the table a call names, and reading it as a stream of rows.

A table is a CSV (or TSV) file with a header line, a JSON array of objects
(or an object holding one), or JSON lines. Rows are dicts; only the current
row, and the buffer behind it, are in memory, so a file larger than the
sandbox's memory is read in one pass all the same.

The runtime enforces the grants; this module only turns its refusals, and
malformed files, into errors that say what to do: the grants, the names
nearby, the line and column of a syntax error.
"""

import codecs
import csv
import json
import os
import posixpath

from agent_reach import Failed, InvalidArguments, fs

from . import jsonarray

#: The formats a table can be in.
FORMATS = ("csv", "tsv", "json", "jsonl")
#: Formats known from a file's extension (``.json`` is checked: JSON lines
#: are often saved as ``.json``).
_BY_EXTENSION = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
#: Bytes read first, to recognise the encoding, the format and the delimiter.
HEAD = 64 * 1024
#: Bytes asked of the host per read.
READ_BUFFER = 1024 * 1024
#: Rows read ahead from a JSON file to learn its columns before a query runs.
PEEK_ROWS = 1000
#: Delimiters a CSV file may use, most usual first (ties go to the first).
DELIMITERS = ",;\t|"
#: Longest CSV field accepted (the csv module's default is 128 KiB).
csv.field_size_limit(16 * 1024 * 1024)

_COMPRESSED = [
    (b"\x1f\x8b", "gzip-compressed"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed"),
    (b"BZh", "bzip2-compressed"),
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx file is one)"),
    (b"\xd0\xcf\x11\xe0", "an old Excel/Office file"),
]


def _encoding(head):
    """The text encoding of a file from its first bytes: UTF-8 (with or
    without a byte order mark), UTF-16 with one, else Windows-1252, which
    reads any byte (Excel's "CSV" on Windows)."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        # A character cut at the end of the head is not an error.
        if not (len(head) == HEAD and err.start >= len(head) - 3):
            return "cp1252"
    return "utf-8"


def _sniff_json(text):
    """``json`` or ``jsonl`` for text that starts with ``{``."""
    first, _, rest = text.partition("\n")
    try:
        value = json.loads(first)
    except ValueError:
        return "json"  # an object over several lines
    if not isinstance(value, dict):
        return "json"
    if rest.strip():
        return "jsonl" if rest.lstrip().startswith("{") else "json"
    # One line, one object: records only if it holds a list of them.
    holds_records = any(isinstance(v, list) and v and isinstance(v[0], dict) for v in value.values())
    return "json" if holds_records else "jsonl"


def _delimiter(line):
    """The delimiter of a CSV header line: the candidate found most often
    outside quotes."""
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in counts:
            counts[ch] += 1
    best = max(DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] else ","


def _header(names):
    """Column names from a header row: trimmed, blanks named ``column_N``,
    repeats numbered (``price``, ``price_2``)."""
    out = []
    seen = set()
    for i, raw in enumerate(names):
        name = raw.strip() or f"column_{i + 1}"
        base, n = name, 1
        while name in seen:
            n += 1
            name = f"{base}_{n}"
        seen.add(name)
        out.append(name)
    return out


class Table:
    """An opened table: its path, format and columns, and its rows."""

    def __init__(self, tool, path, form, encoding, delimiter=None):
        #: The tool reading it, for messages.
        self.tool = tool
        #: The file, absolute.
        self.path = path
        #: One of :data:`FORMATS`.
        self.format = form
        #: The text encoding.
        self.encoding = encoding
        #: The CSV delimiter, or ``None``.
        self.delimiter = delimiter
        #: For JSON: the key of the object that holds the records, if any.
        self.records_key = None
        #: Column names: a CSV header; for JSON, the keys of the rows read so
        #: far (objects one level deep as ``parent.child``), in order.
        self.columns = []
        self._known = set()
        self._peeked = []
        self._stream = None
        self._file = None

    # Opening and streaming ------------------------------------------------

    def _open(self):
        try:
            # Large reads: each one is a call out of the sandbox into the host.
            return open(self.path, encoding=self.encoding, errors="replace", newline="", buffering=READ_BUFFER)
        except OSError as err:
            raise fs.io_error(fs.READ, self.path, err) from None

    def _start(self):
        self._file = self._open()
        if self.format in ("csv", "tsv"):
            self._stream = self._csv_rows(self._file)
        elif self.format == "jsonl":
            self._stream = self._jsonl_rows(self._file)
        else:
            self._stream = self._json_rows(self._file)

    def fail(self, line, column, message):
        """A malformed-file error at ``line`` (and ``column``, if known)."""
        at = f"line {line}, column {column}" if column else f"line {line}"
        return Failed(f"{self.tool}: {self.path}: {at}: {message}")

    def _csv_rows(self, file):
        reader = csv.reader(file, delimiter=self.delimiter, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                return
            self.columns = _header(header)
            self._known = set(self.columns)
            width = len(self.columns)
            columns = self.columns
            for fields in reader:
                if len(fields) > width:
                    # Trailing delimiters ("a,b,c,") add empty fields; those lose nothing.
                    if any(f.strip() for f in fields[width:]):
                        raise self.fail(
                            reader.line_num,
                            None,
                            f"this row has {len(fields)} fields but the header has {width} "
                            f"({', '.join(columns)}); a field that contains "
                            f"{_shown_delimiter(self.delimiter)} must be in double quotes",
                        )
                    fields = fields[:width]
                elif not fields:
                    continue  # a blank line
                yield dict(zip(columns, fields))
        except csv.Error as err:
            raise self.fail(reader.line_num, None, f"{err} (CSV quoting is broken here)") from None

    def _jsonl_rows(self, file):
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as err:
                raise self.fail(number, err.colno, f"{err.msg} (each line must be one JSON object)") from None
            if not isinstance(value, dict):
                raise self.fail(number, 1, f"this line holds {_kind(value)}, not an object (each line must be one JSON object)")
            self._learn(value)
            yield value

    def _json_rows(self, file):
        found = {}
        try:
            for value, line, column in jsonarray.elements(file, found):
                if self.records_key is None and "key" in found:
                    self.records_key = found["key"]
                if not isinstance(value, dict):
                    raise self.fail(line, column, f"an element of the array is {_kind(value)}, not an object (each record must be an object)")
                self._learn(value)
                yield value
        except jsonarray.Malformed as err:
            raise self.fail(err.line, err.column, err.message) from None

    def _learn(self, row):
        """Note the columns of a JSON row not seen before."""
        known = self._known
        for key, value in row.items():
            if key not in known:
                known.add(key)
                self.columns.append(key)
            if isinstance(value, dict):
                for inner in value:
                    name = f"{key}.{inner}"
                    if name not in known:
                        known.add(name)
                        self.columns.append(name)

    def peek(self):
        """Read the first rows ahead (a CSV header; for JSON up to
        :data:`PEEK_ROWS` rows), so that :attr:`columns` can be checked
        before the whole file is read."""
        if self._stream is None:
            self._start()
            limit = 0 if self.format in ("csv", "tsv") else PEEK_ROWS
            try:
                for row in self._stream:
                    self._peeked.append(row)
                    if len(self._peeked) > limit:
                        break
            except BaseException:
                self._file.close()
                raise
        return self

    def rows(self):
        """Every row, from the first, once."""
        self.peek()
        try:
            yield from self._peeked
            self._peeked = []
            yield from self._stream
        finally:
            self._file.close()

    def close(self):
        """Close the file (rows() closes it at its end; an error may come first)."""
        if self._file is not None:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def knows(self, column):
        """Whether ``column`` has been seen (or, dotted, reaches into a seen object)."""
        return column in self._known

    # Columns --------------------------------------------------------------

    def column(self, name, where):
        """The column a call means by ``name``: itself if known, else the
        one column equal to it ignoring case. Unknown in a CSV file, this is
        an error listing the columns; in JSON, where a column may first
        appear late in the file, ``name`` is returned and :meth:`check_seen`
        decides after the read."""
        if name in self._known:
            return name
        folded = [c for c in self.columns if c.casefold() == name.casefold()]
        if len(folded) == 1:
            return folded[0]
        if self.format in ("csv", "tsv"):
            raise self.unknown_column(name, where)
        return name

    def unknown_column(self, name, where):
        """The error for a column the table does not have, listing those it has."""
        suggestion = _closest(name, self.columns)
        listed = ", ".join(self.columns[:100])
        more = f" and {len(self.columns) - 100} more" if len(self.columns) > 100 else ""
        hint = f" Did you mean `{suggestion}`?" if suggestion else ""
        return InvalidArguments(
            f"{self.tool}: {where}: no column `{name}` in {self.path}.{hint} Its columns are: {listed}{more}"
        )


def _closest(name, columns):
    folded = {c.casefold(): c for c in columns}
    for candidate in (name.casefold().replace(" ", "_"), name.casefold().replace("_", " ")):
        if candidate in folded:
            return folded[candidate]
    ranked = sorted(columns, key=lambda c: -fs.similarity(c, name))
    return ranked[0] if ranked and fs.similarity(ranked[0], name) >= 0.6 else None


def _kind(value):
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    return "an object"


def _shown_delimiter(d):
    return {"\t": "a tab", ",": "a comma", ";": "a semicolon", "|": "a `|`"}.get(d, repr(d))


def open_table(tool, path, form=None):
    """Open the table at ``path`` (absolute, or relative to the host's
    working directory) for ``tool``. ``form`` forces a format; otherwise
    it comes from the extension, checked against the first bytes."""
    full = fs.resolve(path)
    try:
        if os.path.isdir(full):
            raise InvalidArguments(f"{tool}: {full} is a folder; give one file. {_data_files(full)}")
        with open(full, "rb") as f:
            head = f.read(HEAD)
    except OSError as err:
        failure = fs.io_error(fs.READ, full, err)
        failure.message = f"{tool}: {failure.message}"
        raise failure from None
    for magic, what in _COMPRESSED:
        if head.startswith(magic):
            raise InvalidArguments(
                f"{tool}: {full} is {what}; this skill reads plain CSV, JSON and JSON lines — ask "
                "the user for an uncompressed CSV or JSON export"
            )
    encoding = _encoding(head)
    text = head.decode(encoding, errors="replace").lstrip("\ufeff")
    if form is None:
        ext = posixpath.splitext(full)[1].lower()
        form = _BY_EXTENSION.get(ext)
        start = text.lstrip()[:1]
        if form in (None, "json") and start == "{":
            form = _sniff_json(text.lstrip())
        elif form is None:
            form = "json" if start == "[" else "csv"
    delimiter = None
    if form == "tsv":
        delimiter = "\t"
    elif form == "csv":
        delimiter = _delimiter(text.partition("\n")[0])
    return Table(tool, full, form, encoding, delimiter)


def _data_files(folder):
    """Which tables a folder holds, for a message."""
    try:
        names = sorted(
            e.name for e in os.scandir(folder) if e.is_file() and posixpath.splitext(e.name)[1].lower() in _BY_EXTENSION
        )
    except OSError:
        return ""
    if not names:
        return "It holds no .csv, .tsv, .json or .jsonl files."
    shown = ", ".join(names[:30])
    more = f" ({len(names) - 30} more)" if len(names) > 30 else ""
    return f"Its tables: {shown}{more}."

