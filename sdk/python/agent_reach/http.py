"""HTTP(S) requests over ``wasi:http``, to the hosts the operator granted.

Every request — and every redirect hop, which this client follows itself —
goes through the host, which checks it against the permission table's
``net`` allowlist and refuses internal addresses the table does not name. A
refusal raises :class:`~agent_reach.Denied` naming the host and what the
operator can add; a bad URL raises :class:`~agent_reach.InvalidArguments`;
anything else (DNS, connection, TLS) :class:`~agent_reach.Failed`, and no
answer in time :class:`Timeout`. A redirect from https to plain http is
never followed.

A URL with a user name or password (``https://user:pass@host/``) is refused
before anything is sent, and so is a redirect to one: credentials are the
host's to add (``[[credentials]]`` in the table). No message of this module
repeats a password; build your own messages about a URL with
:func:`redact_url`.

Outside a component there is no ``wasi:http``: requests raise ``Failed``.
"""

import json
import os
import urllib.parse

from . import _bindings
from .errors import Denied, Failed, InvalidArguments

#: A browser-like User-Agent: many sites serve bots a different page.
BROWSER_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0 Safari/537.36"
)
#: Default cap on a response body; the rest is dropped and ``truncated`` set.
MAX_BODY_BYTES = 10 << 20
#: Default connect, first-byte and between-chunks timeout, in seconds.
TIMEOUT = 30.0
#: Redirects followed by default.
MAX_REDIRECTS = 5
#: What replaces the user info of a URL in text.
MASK = "[REDACTED]"
#: The variable in which the host lists the hosts it adds a credential to.
CREDENTIALS_ENV = "AGENT_REACH_CREDENTIALS"


class Timeout(Failed):
    """No answer within the timeout."""


class Response:
    """A response: status, headers and the body read up to the size cap."""

    def __init__(self, status, headers, body, truncated, url):
        #: The HTTP status code.
        self.status = status
        #: Header names (lower case) to values; repeated headers joined by ``, ``.
        self.headers = headers
        #: The body bytes, at most the request's ``max_body_bytes``.
        self.body = body
        #: Whether the body was cut at the cap.
        self.truncated = truncated
        #: The URL that answered, after redirects (without user info).
        self.url = url

    def header(self, name):
        """The value of a header (any case), or ``None``."""
        return self.headers.get(name.lower())

    @property
    def text(self):
        """The body as text: the charset of ``Content-Type``, else UTF-8;
        undecodable bytes become ``�``."""
        charset = "utf-8"
        for part in (self.header("content-type") or "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:  # an unknown charset name
            return self.body.decode("utf-8", errors="replace")

    def json(self):
        """The body decoded as JSON; a body that is not JSON raises ``Failed``."""
        try:
            return json.loads(self.text)
        except ValueError as err:
            raise Failed(f"{self.url}: the response is not JSON ({err})") from None

    def __repr__(self):
        return f"<Response {self.status} {self.url} {len(self.body)} bytes>"


def get(url, headers=None, timeout=None):
    """``GET url``; see :func:`request`."""
    return request("GET", url, headers=headers, timeout=timeout)


def request(
    method,
    url,
    headers=None,
    body=None,
    timeout=None,
    max_body_bytes=MAX_BODY_BYTES,
    max_redirects=MAX_REDIRECTS,
):
    """Send a request and read its response, following redirects.

    ``headers`` is a dict (or pairs); a browser User-Agent is added unless
    given. ``body`` is bytes, text (sent as UTF-8), or a dict or list (sent
    as JSON with ``Content-Type: application/json``). ``timeout`` (seconds,
    default 30) bounds connecting, the first byte and each pause between
    chunks. Bodies longer than ``max_body_bytes`` are cut (``truncated``).
    """
    method = method.upper()
    pairs = list(headers.items() if isinstance(headers, dict) else headers or [])
    pairs = [(str(k).lower(), str(v)) for k, v in pairs]
    if not any(k == "user-agent" for k, _ in pairs):
        pairs.append(("user-agent", BROWSER_USER_AGENT))
    if isinstance(body, (dict, list)):
        body = json.dumps(body, ensure_ascii=False).encode()
        if not any(k == "content-type" for k, _ in pairs):
            pairs.append(("content-type", "application/json"))
    elif isinstance(body, str):
        body = body.encode()
    elif body is not None and not isinstance(body, (bytes, bytearray)):
        raise InvalidArguments(f"request body must be bytes, str, dict or list, not {type(body).__name__}")
    if body is not None and not any(k == "content-length" for k, _ in pairs):
        # Without it the body goes out chunked, which some servers do not read.
        pairs.append(("content-length", str(len(body))))
    seconds = TIMEOUT if timeout is None else float(timeout)

    current = parse(url)
    refuse_user_info(method, current, None)
    for _ in range(max_redirects + 1):
        response = _send_once(method, current, pairs, body, seconds, max_body_bytes)
        location = response.header("location")
        if response.status not in (301, 302, 303, 307, 308) or not location or max_redirects == 0:
            return response
        following = parse(urllib.parse.urljoin(current.geturl(), location))
        refuse_user_info(method, following, current)
        # An https page that sends us to plain http would have the next
        # request, and its answer, travel unencrypted. The host refuses that
        # hop too; this says why before it is sent.
        if current.scheme == "https" and following.scheme == "http":
            raise Denied(
                f"net: {shown(current)} redirected from https to plain http "
                f"({shown(following)}); such a redirect is not followed"
            )
        # 303, and 301/302 after POST, switch to GET as browsers do.
        if response.status == 303 or (response.status in (301, 302) and method == "POST"):
            method, body = "GET", None
            pairs = [(k, v) for k, v in pairs if k not in ("content-type", "content-length")]
        current = following
    raise Failed(f"{redact_url(url)} redirected more than {max_redirects} times")


def parse(url):
    """Split an http(s) URL; anything else raises ``InvalidArguments``."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # raises ValueError for a port that is not a number
    except ValueError as err:
        raise InvalidArguments(f"invalid URL {redact_url(url)!r}: {err}") from None
    if parts.scheme not in ("http", "https"):
        what = f"scheme {parts.scheme!r} is not supported" if parts.scheme else "it has no scheme"
        raise InvalidArguments(f"invalid URL {redact_url(url)!r}: {what}; use http:// or https://")
    if not parts.hostname:
        raise InvalidArguments(f"invalid URL {redact_url(url)!r}: it has no host")
    return parts


def authority(parts):
    """``host`` or ``host:port`` (the port only when the URL names one), as sent."""
    return parts.netloc.rpartition("@")[2]


def refuse_user_info(method, parts, redirected_from):
    """Refuse a URL that carries a user name or password, before it is sent.

    The host refuses such a request at egress too; refusing here says so in
    the host's own words, and the message never names the user info.
    """
    if "@" not in parts.netloc:
        return
    target = f"{method} {parts.scheme}://{authority(parts)}"
    via = f" (a redirect from {shown(redirected_from)})" if redirected_from is not None else ""
    raise Denied(
        f"net: {target}{via}: the URL carries a user name or password (user:pass@host), which "
        "is refused; credentials are added by the host from the permission table, never "
        "written in URLs"
    )


def redact_url(url):
    """``url`` as it may appear in a message: any user name and password
    (``user:pass@``) replaced by ``[REDACTED]``, everything else as it was.

    Text that does not parse as a URL with a host loses everything between
    its scheme (``https://``, or the start) and its last ``@``, since there is
    no telling which part is a password.

    >>> redact_url("https://me:hunter2@example.com/a")
    'https://[REDACTED]@example.com/a'
    """
    scheme_end = url.find("://")
    start = 0 if scheme_end < 0 else scheme_end + 3
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # raises ValueError for a port that is not a number
        parsed = scheme_end >= 0 and parts.hostname is not None
    except ValueError:
        parsed = False
    if parsed:
        if "@" not in parts.netloc:
            return url
        at = start + parts.netloc.rfind("@")
        return f"{url[:start]}{MASK}{url[at:]}"
    at = url.rfind("@")
    if at < start:
        return url
    return f"{url[:start]}{MASK}{url[at:]}"


def shown(parts):
    """A parsed URL for messages: without user info."""
    return redact_url(parts.geturl())


def credential_configured(host):
    """Whether the operator bound a credential to ``host`` (``"api.example.com"``
    or ``"127.0.0.1:8080"``), which the host then adds to requests there.

    This is all a skill can learn about a credential: the host holds the
    value. Use it to say "no API key is configured for …" instead of sending
    a request that gets a 401.
    """
    listed = os.environ.get(CREDENTIALS_ENV, "")
    name, port = _split_port(host)
    for entry in listed.split(","):
        entry_name, entry_port = _split_port(entry.strip())
        if entry_name.lower() == name.lower() and (entry_port is None or entry_port == port):
            return True
    return False


def _split_port(text):
    host, sep, port = text.rpartition(":")
    if sep and port.isdigit() and (":" not in host or host.endswith("]")):
        return host, port
    return text, None


def map_error(parts, code):
    """A ``wasi:http`` error code as the :class:`ToolError` a model can act on."""
    url = shown(parts)
    kind = type(code).__name__.removeprefix("ErrorCode_")
    if kind == "HttpRequestDenied":
        return Denied(
            f"net: request to {url} is not granted by the permission table (ask the operator "
            f"to add {authority(parts)} to this skill's `net` list)"
        )
    if kind == "DestinationIpProhibited":
        return Denied(
            f"net: {url} resolves to an internal address, which the permission table does not "
            f"name (the operator can grant that address itself, e.g. 127.0.0.1:PORT, in `net`)"
        )
    if kind in ("ConnectionTimeout", "ConnectionReadTimeout", "HttpResponseTimeout", "DnsTimeout"):
        return Timeout(f"{url}: timed out")
    if kind in ("DnsError", "DestinationNotFound"):
        return Failed(f"{url}: the host name could not be resolved")
    if kind == "ConnectionRefused":
        return Failed(f"{url}: connection refused")
    if kind == "ConnectionLimitReached":
        return Failed(
            f"{url}: too many requests of this call are in flight; finish reading one "
            "response before sending another"
        )
    return Failed(f"{url}: {kind}")


def _method(name):
    t = _bindings.http_types
    known = {
        "GET": t.Method_Get,
        "HEAD": t.Method_Head,
        "POST": t.Method_Post,
        "PUT": t.Method_Put,
        "DELETE": t.Method_Delete,
        "PATCH": t.Method_Patch,
        "OPTIONS": t.Method_Options,
    }
    return known[name]() if name in known else t.Method_Other(name)


def _send_once(method, parts, headers, body, seconds, max_body):
    if _bindings.outgoing_handler is None:
        raise Failed(
            "agent_reach.http runs only inside a component built against the SDK's world "
            "(wit/skill.wit, which imports wasi:http/outgoing-handler)"
        )
    t = _bindings.http_types
    Err, Ok = _bindings.Err, _bindings.Ok
    try:
        fields = t.Fields.from_list([(k, v.encode()) for k, v in headers])
    except Err as err:
        raise InvalidArguments(f"request headers: {type(err.value).__name__.removeprefix('HeaderError_')}") from None
    request = t.OutgoingRequest(fields)
    request.set_method(_method(method))
    request.set_scheme(t.Scheme_Https() if parts.scheme == "https" else t.Scheme_Http())
    request.set_authority(authority(parts))
    path = parts.path or "/"
    request.set_path_with_query(f"{path}?{parts.query}" if parts.query else path)

    outgoing = request.body()
    if body:
        with outgoing.write() as stream:
            for start in range(0, len(body), 4096):
                try:
                    stream.blocking_write_and_flush(bytes(body[start : start + 4096]))
                except Err as err:
                    raise Failed(f"{shown(parts)}: sending the request body failed: {err.value}") from None
    options = t.RequestOptions()
    nanos = int(seconds * 1e9)
    for setter in (options.set_connect_timeout, options.set_first_byte_timeout, options.set_between_bytes_timeout):
        try:
            setter(nanos)
        except Err:  # the host does not support this timeout: its own applies
            pass
    try:
        future = _bindings.outgoing_handler.handle(request, options)
    except Err as err:
        raise map_error(parts, err.value) from None
    try:
        t.OutgoingBody.finish(outgoing, None)
    except Err as err:
        raise map_error(parts, err.value) from None

    with future:
        with future.subscribe() as ready:
            ready.block()
        got = future.get()
    if not isinstance(got, Ok) or isinstance(got.value, Err):
        if isinstance(got, Ok):
            raise map_error(parts, got.value.value)
        raise Failed(f"{shown(parts)}: no response")
    response = got.value.value if isinstance(got.value, Ok) else got.value
    with response:
        status = response.status()
        collected = {}
        with response.headers() as fields:
            for name, value in fields.entries():
                name = name.lower()
                text = value.decode("latin-1")
                collected[name] = f"{collected[name]}, {text}" if name in collected else text
        data, truncated = _read_body(parts, response, max_body)
    return Response(status, collected, data, truncated, shown(parts))


def _read_body(parts, response, max_body):
    Err = _bindings.Err
    chunks = []
    size = 0
    truncated = False
    with response.consume() as incoming:
        with incoming.stream() as stream:
            while True:
                try:
                    chunk = stream.blocking_read(64 * 1024)
                except Err as err:
                    failure = err.value
                    if type(failure).__name__.endswith("Closed"):
                        break
                    detail = failure.value.to_debug_string() if hasattr(failure, "value") else failure
                    raise Failed(f"{shown(parts)}: reading the body failed: {detail}") from None
                room = max_body - size
                if len(chunk) > room:
                    chunks.append(chunk[:room])
                    truncated = True
                    break
                chunks.append(chunk)
                size += len(chunk)
    return b"".join(chunks), truncated

