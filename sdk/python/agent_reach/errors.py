"""Tool errors: what went wrong, in a form the model can react to.

Raise one of these from a tool. The host shows the model the code and the
message, so the message says what was wrong and, where it can, how to fix it:
``NotFound("orders.csv: no such file; reports/ has: orders_2024.csv")``.
"""

from enum import Enum


class ErrorCode(Enum):
    """The kind of a failure; the host maps it to the error code the model sees."""

    #: The arguments do not fit the tool (``INVALID_ARGS``).
    INVALID_ARGUMENTS = "invalid-arguments"
    #: A named file, URL or item does not exist (``NOT_FOUND``).
    NOT_FOUND = "not-found"
    #: The operator's permission table does not grant what was needed (``DENIED``).
    DENIED = "denied"
    #: Anything else (``FAILED``).
    FAILED = "failed"


class ToolError(Exception):
    """A failed tool call: a code and a message for the model.

    ``ToolError(ErrorCode.NOT_FOUND, "…")``, or one of the subclasses
    :class:`InvalidArguments`, :class:`NotFound`, :class:`Denied`,
    :class:`Failed`, which fix the code.
    """

    #: The code a subclass stands for; ``ToolError`` itself takes one.
    default_code = ErrorCode.FAILED

    def __init__(self, code, message=None):
        # ``ToolError("text")`` and ``Failed("text")`` read naturally; so does
        # ``ToolError(ErrorCode.DENIED, "text")``.
        if message is None and not isinstance(code, ErrorCode):
            code, message = self.default_code, code
        if not isinstance(code, ErrorCode):
            raise TypeError(f"ToolError code must be an ErrorCode, not {code!r}")
        super().__init__(message)
        #: The kind of failure.
        self.code = code
        #: What went wrong and how to fix it.
        self.message = str(message)

    def __str__(self):
        return self.message

    def __repr__(self):
        return f"{type(self).__name__}({self.code.name}, {self.message!r})"


class InvalidArguments(ToolError):
    """The arguments are wrong: say which one and what would be right."""

    default_code = ErrorCode.INVALID_ARGUMENTS

    def __init__(self, message):
        super().__init__(self.default_code, message)


class NotFound(ToolError):
    """A file, URL or item the arguments name does not exist."""

    default_code = ErrorCode.NOT_FOUND

    def __init__(self, message):
        super().__init__(self.default_code, message)


class Denied(ToolError):
    """The permission table does not grant what the call needed.

    Say what was refused and what is granted, so the model stops retrying
    and the operator knows what to add to the table.
    """

    default_code = ErrorCode.DENIED

    def __init__(self, message):
        super().__init__(self.default_code, message)


class Failed(ToolError):
    """Anything else went wrong."""

    default_code = ErrorCode.FAILED

    def __init__(self, message):
        super().__init__(self.default_code, message)
