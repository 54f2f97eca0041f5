"""Reading the elements of a top-level JSON array one at a time.

``json.load`` would hold the whole file, and the objects made from it, in
memory at once. Here the text is read in chunks and each element is decoded
on its own with the C decoder (``raw_decode``) as soon as it is complete;
only the current chunk and one element are held. Errors give the line and
column in the file, the way an editor counts them.
"""

import json
import re

#: Characters read at a time.
CHUNK = 256 * 1024
#: Largest element accepted. Bounds the memory an element may take, and
#: how far the reader looks ahead before calling an element malformed.
MAX_ELEMENT = 16 * 1024 * 1024

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class Malformed(Exception):
    """The text is not the JSON expected: what, and at which line and column."""

    def __init__(self, message, line, column):
        super().__init__(f"line {line}, column {column}: {message}")
        self.message = message
        self.line = line
        self.column = column


class _Cursor:
    """A window on the text, and where in the file a position of it is."""

    def __init__(self, file):
        self.file = file
        self.buf = ""
        self.pos = 0
        self.eof = False
        # A position in `buf` whose line and column are known. Positions are
        # asked for in increasing order, so counting from the last one keeps
        # the whole count linear in the file's length.
        self.mark = 0
        self.mark_line = 1
        self.mark_column = 1

    def more(self):
        """Read another chunk; False at the end of the file."""
        if self.eof:
            return False
        chunk = self.file.read(CHUNK)
        if not chunk:
            self.eof = True
            return False
        # Drop what has been read, keeping its count of lines.
        if self.pos:
            self.mark_line, self.mark_column = self.where(self.pos)
            self.mark = 0
            self.buf = self.buf[self.pos :]
            self.pos = 0
        self.buf += chunk
        return True

    def where(self, at):
        """(line, column) of ``buf[at]``, both counted from 1."""
        if at < self.mark:
            raise ValueError("positions are asked for in order")
        newlines = self.buf.count("\n", self.mark, at)
        if newlines:
            line = self.mark_line + newlines
            column = at - self.buf.rfind("\n", self.mark, at)
        else:
            line, column = self.mark_line, self.mark_column + (at - self.mark)
        self.mark, self.mark_line, self.mark_column = at, line, column
        return line, column

    def fail(self, message, at=None):
        line, column = self.where(self.pos if at is None else at)
        return Malformed(message, line, column)

    def skip_space(self):
        """Move past white space; the next character, or ``""`` at the end."""
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def value(self):
        """Decode the value that starts here, reading on until it is complete."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as err:
                # Most likely the value goes on past the chunk: read on, up to
                # the element limit; after that the error is real.
                if len(self.buf) - self.pos < MAX_ELEMENT and self.more():
                    continue
                if len(self.buf) - self.pos >= MAX_ELEMENT:
                    raise self.fail(f"an element is larger than {MAX_ELEMENT >> 20} MiB or is not valid JSON") from None
                raise self.fail(_reason(err), err.pos) from None
            # A number or a word at the very end of the chunk may go on.
            if end == len(self.buf) and not isinstance(value, (dict, list, str)) and self.more():
                continue
            start, self.pos = self.pos, end
            return value, start


def _reason(err):
    """The decoder's message without its own position (we give ours)."""
    return err.msg[0].lower() + err.msg[1:]


def elements(file, found=None):
    """Yield ``(value, line, column)`` for each element of the array of
    records the text file holds: the top-level array, or else the first
    array value of a top-level object (``{"meta": …, "rows": [ … ]}``), whose
    key is then put in ``found["key"]``. Raises :class:`Malformed`."""
    cursor = _Cursor(file)
    first = cursor.skip_space()
    if first == "":
        raise Malformed("the file is empty; expected a JSON array of objects", 1, 1)
    inside_object = first == "{"
    if inside_object:
        key = _find_array(cursor)
        if found is not None:
            found["key"] = key
    elif first != "[":
        raise cursor.fail("the file holds a single JSON value, not an array of objects")
    cursor.pos += 1
    if cursor.skip_space() == "]":
        cursor.pos += 1
    else:
        while True:
            if cursor.skip_space() == "":
                raise cursor.fail("the file ends inside the array (a `]` is missing)")
            value, start = cursor.value()
            yield (value, *cursor.where(start))
            after = cursor.skip_space()
            if after == ",":
                cursor.pos += 1
                continue
            if after == "]":
                cursor.pos += 1
                break
            if after == "":
                raise cursor.fail("the file ends inside the array (a `]` is missing)")
            raise cursor.fail(f"expected `,` or `]` after an element, found `{after}`")
    if inside_object:
        return  # the keys after the records do not matter
    rest = cursor.skip_space()
    if rest:
        raise cursor.fail(f"unexpected `{rest}` after the end of the array")


def _find_array(cursor):
    """Move to the first array value of the object that starts here; its key."""
    cursor.pos += 1
    keys = []
    while True:
        c = cursor.skip_space()
        if c == "}" or c == "":
            listed = ", ".join(keys[:20]) or "none"
            raise cursor.fail(
                f"the file holds an object with no array in it (keys: {listed}); expected an "
                "array of objects, an object holding one, or JSON lines"
            )
        if c != '"':
            raise cursor.fail(f"expected a key in double quotes, found `{c}`")
        key, _ = cursor.value()
        if cursor.skip_space() != ":":
            raise cursor.fail("expected `:` after a key")
        cursor.pos += 1
        if cursor.skip_space() == "[":
            return key
        cursor.value()
        keys.append(key)
        c = cursor.skip_space()
        if c == ",":
            cursor.pos += 1
        elif c != "}":
            raise cursor.fail(f"expected `,` or `}}` after a value, found `{c or 'the end of the file'}`")
