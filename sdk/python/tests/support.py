"""Stand-ins for the componentize-py bindings, so the SDK's tests run in a
plain CPython (``python3 -m unittest discover -s sdk/python/tests``).

Importing this module puts fake ``wit_world`` and ``componentize_py_types``
modules into ``sys.modules`` — the same names and shapes as the generated
bindings of ``wit/skill.wit`` — before ``agent_reach`` is imported, and puts
``sdk/python`` on the path. Tests then set the sandbox's state through
:data:`SANDBOX`: the preopened folders, the working directory, and an HTTP
handler standing in for the host.
"""

import dataclasses
import enum
import pathlib
import sys
import types
import typing

SDK = pathlib.Path(__file__).resolve().parents[1]
REPO = SDK.parents[1]


def _module(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


# componentize_py_types ---------------------------------------------------


@dataclasses.dataclass
class Ok:
    value: typing.Any


@dataclasses.dataclass(frozen=True)
class Err(Exception):
    value: typing.Any


_module("componentize_py_types", Ok=Ok, Err=Err)


# The sandbox a test sets up ---------------------------------------------


class Sandbox:
    """What the fake host grants: folders ``[(path, writable)]``, the working
    directory, and ``http(request) -> (status, headers, body) | error``."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.folders = []
        self.cwd = "/"
        self.http = None
        self.requests = []
        #: Resources still open (a test checks every one was released).
        self.open_resources = 0


SANDBOX = Sandbox()


class _Resource:
    def __init__(self):
        SANDBOX.open_resources += 1
        self._open = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._open:
            self._open = False
            SANDBOX.open_resources -= 1


# wit_world.exports.guest ------------------------------------------------


class ErrorCode(enum.Enum):
    INVALID_ARGUMENTS = 0
    NOT_FOUND = 1
    DENIED = 2
    FAILED = 3


@dataclasses.dataclass
class Example:
    description: str
    arguments: str
    output: typing.Optional[str]


@dataclasses.dataclass
class Tool:
    name: str
    description: str
    parameters: str
    examples: list


@dataclasses.dataclass
class Manifest:
    name: str
    version: str
    description: str
    tools: list
    instructions: typing.Optional[str]


@dataclasses.dataclass
class ToolError:
    code: ErrorCode
    message: str


class Guest(typing.Protocol):
    pass


wit_world = _module("wit_world")
exports = _module("wit_world.exports", Guest=Guest)
guest = _module(
    "wit_world.exports.guest",
    ErrorCode=ErrorCode,
    Example=Example,
    Tool=Tool,
    Manifest=Manifest,
    ToolError=ToolError,
)
wit_world.exports = exports
exports.guest = guest


# wit_world.imports: filesystem and environment -------------------------


class DescriptorFlags(enum.Flag):
    READ = 1
    WRITE = 2
    MUTATE_DIRECTORY = 32


class Descriptor(_Resource):
    def __init__(self, writable):
        super().__init__()
        self._writable = writable

    def get_flags(self):
        flags = DescriptorFlags.READ
        if self._writable:
            flags |= DescriptorFlags.WRITE | DescriptorFlags.MUTATE_DIRECTORY
        return flags


imports = _module("wit_world.imports")
wit_world.imports = imports
filesystem = _module("wit_world.imports.wasi_filesystem_types", DescriptorFlags=DescriptorFlags, Descriptor=Descriptor)
preopens = _module(
    "wit_world.imports.preopens",
    get_directories=lambda: [(Descriptor(w), p) for p, w in SANDBOX.folders],
)
environment = _module("wit_world.imports.environment", initial_cwd=lambda: SANDBOX.cwd)
imports.wasi_filesystem_types = filesystem
imports.preopens = preopens
imports.environment = environment


# wit_world.imports: HTTP ------------------------------------------------


@dataclasses.dataclass
class Request:
    """What the fake host received."""

    method: str
    scheme: str
    authority: str
    path: str
    headers: list
    body: bytes


def _variant(name, payload=False):
    if payload:
        return dataclasses.make_dataclass(name, [("value", typing.Any)])
    return dataclasses.make_dataclass(name, [])


http = _module("wit_world.imports.wasi_http_types")
for _m in ("Get", "Head", "Post", "Put", "Delete", "Patch", "Options"):
    setattr(http, f"Method_{_m}", _variant(f"Method_{_m}"))
http.Method_Other = _variant("Method_Other", payload=True)
http.Scheme_Http = _variant("Scheme_Http")
http.Scheme_Https = _variant("Scheme_Https")
for _e in (
    "HttpRequestDenied",
    "DestinationIpProhibited",
    "ConnectionRefused",
    "ConnectionTimeout",
    "HttpResponseTimeout",
    "DestinationNotFound",
    "ConnectionLimitReached",
    "TlsCertificateError",
):
    setattr(http, f"ErrorCode_{_e}", _variant(f"ErrorCode_{_e}"))
http.ErrorCode_DnsError = _variant("ErrorCode_DnsError", payload=True)
StreamError_Closed = _variant("StreamError_Closed")


class Fields(_Resource):
    def __init__(self, entries=()):
        super().__init__()
        self._entries = list(entries)

    @classmethod
    def from_list(cls, entries):
        return cls(entries)

    def entries(self):
        return list(self._entries)


class OutputStream(_Resource):
    def __init__(self, sink):
        super().__init__()
        self._sink = sink

    def blocking_write_and_flush(self, data):
        assert len(data) <= 4096, "blocking-write-and-flush takes at most 4096 bytes"
        self._sink.append(data)


class OutgoingBody(_Resource):
    def __init__(self):
        super().__init__()
        self.chunks = []
        self.finished = False

    def write(self):
        return OutputStream(self.chunks)

    @classmethod
    def finish(cls, this, trailers):
        this.finished = True
        this.__exit__()


class OutgoingRequest(_Resource):
    def __init__(self, headers):
        super().__init__()
        self.headers = headers.entries()
        headers.__exit__()
        self.outgoing = None

    def set_method(self, m):
        self.method = m.value if type(m).__name__ == "Method_Other" else type(m).__name__[7:].upper()

    def set_scheme(self, s):
        self.scheme = type(s).__name__[7:].lower()

    def set_authority(self, a):
        self.authority = a

    def set_path_with_query(self, p):
        self.path = p

    def body(self):
        self.outgoing = OutgoingBody()
        return self.outgoing


class RequestOptions(_Resource):
    def set_connect_timeout(self, n):
        self.timeout = n

    def set_first_byte_timeout(self, n):
        pass

    def set_between_bytes_timeout(self, n):
        pass


class InputStream(_Resource):
    def __init__(self, data):
        super().__init__()
        self._data = data

    def blocking_read(self, n):
        if not self._data:
            raise Err(StreamError_Closed())
        chunk, self._data = self._data[:n], self._data[n:]
        return chunk


class IncomingBody(_Resource):
    def __init__(self, data):
        super().__init__()
        self._data = data

    def stream(self):
        return InputStream(self._data)


class IncomingResponse(_Resource):
    def __init__(self, status, headers, body):
        super().__init__()
        self._status, self._headers, self._body = status, headers, body

    def status(self):
        return self._status

    def headers(self):
        return Fields([(k, v.encode()) for k, v in self._headers])

    def consume(self):
        return IncomingBody(self._body)


class Pollable(_Resource):
    def block(self):
        pass


class FutureIncomingResponse(_Resource):
    def __init__(self, outcome):
        super().__init__()
        self._outcome = outcome

    def subscribe(self):
        return Pollable()

    def get(self):
        return self._outcome


http.Fields = Fields
http.OutgoingRequest = OutgoingRequest
http.OutgoingBody = OutgoingBody
http.RequestOptions = RequestOptions


def _handle(request, options):
    # The SDK writes the whole body before handing the request over.
    body = b"".join(request.outgoing.chunks) if request.outgoing else b""
    got = Request(request.method, request.scheme, request.authority, request.path, request.headers, body)
    SANDBOX.requests.append(got)
    answer = SANDBOX.http(got)
    request.__exit__()
    options.__exit__()
    if not isinstance(answer, tuple):
        if getattr(answer, "__name__", "").startswith("ErrorCode_"):
            answer = answer()
        if type(answer).__name__ == "ErrorCode_HttpRequestDenied":
            raise Err(answer)  # the host refuses before sending
        return FutureIncomingResponse(Ok(Err(answer)))
    status, headers, body = answer
    return FutureIncomingResponse(Ok(Ok(IncomingResponse(status, headers, body))))


outgoing_handler = _module("wit_world.imports.outgoing_handler", handle=_handle)
streams = _module("wit_world.imports.streams", StreamError_Closed=StreamError_Closed)
imports.wasi_http_types = http
imports.outgoing_handler = outgoing_handler
imports.streams = streams


if str(SDK) not in sys.path:
    sys.path.insert(0, str(SDK))
