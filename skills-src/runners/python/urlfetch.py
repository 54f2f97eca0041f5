"""`urllib.request.urlopen` over `wasi:http`, for the scripts the runner runs.

A sandboxed CPython has no sockets: every request goes out through the
host's `wasi:http`, which checks it against the bundle's allowlist and adds
its credentials at egress. Scripts written for ordinary Python call
`urllib.request.urlopen`; while a script runs, that name sends the request
with `agent_reach.http.request` instead, so a granted host answers and an
ungranted one is refused with `denied`.
"""

import contextlib
import email.message
import io
import urllib.error
import urllib.request

from agent_reach import http


class Response(io.BytesIO):
    """What `urlopen` returns: a readable body with `status`, `headers`, `url`."""

    def __init__(self, reply):
        super().__init__(reply.body)
        self.status = reply.status
        self.code = reply.status
        self.url = reply.url
        self.reason = ""
        self.headers = email.message.Message()
        for name, value in reply.headers.items():
            self.headers[name] = value

    def getcode(self):
        return self.status

    def geturl(self):
        return self.url

    def getheader(self, name, default=None):
        return self.headers.get(name, default)

    def info(self):
        return self.headers


def urlopen(url, data=None, timeout=None, **_ignored):
    """`urllib.request.urlopen(url_or_request, data, timeout)` through the host."""
    if isinstance(url, urllib.request.Request):
        method = url.get_method()
        headers = dict(url.header_items())
        body = url.data if data is None else data
        target = url.full_url
    else:
        method = "POST" if data is not None else "GET"
        headers, body, target = {}, data, url
    reply = http.request(method, target, headers=headers, body=body, timeout=timeout)
    if reply.status >= 400:
        raise urllib.error.HTTPError(target, reply.status, f"HTTP {reply.status}", None, io.BytesIO(reply.body))
    return Response(reply)


@contextlib.contextmanager
def installed():
    """`urllib.request.urlopen` is :func:`urlopen` inside the block."""
    saved = urllib.request.urlopen
    urllib.request.urlopen = urlopen
    try:
        yield
    finally:
        urllib.request.urlopen = saved
