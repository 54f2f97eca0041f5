"""HTTP over wasi:http: requests as the host receives them, redirects,
refusals in the host's words, and URLs that never repeat a password."""

import json
import unittest

import support
from agent_reach import Denied, ErrorCode, Failed, InvalidArguments, http


class Requests(unittest.TestCase):
    def setUp(self):
        support.SANDBOX.reset()

    def serve(self, pages):
        """Answer each `scheme://authority/path` from `pages`; 404 otherwise."""

        def answer(request):
            key = f"{request.scheme}://{request.authority}{request.path}"
            page = pages.get(key, (404, [], b"not found"))
            return page(request) if callable(page) else page

        support.SANDBOX.http = answer

    def test_a_get_sends_the_parts_of_the_url_and_reads_the_whole_answer(self):
        self.serve({"https://api.example.com:8443/v1/items?page=2": (200, [("Content-Type", "application/json"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2")], b'{"items": [1, 2]}')})
        response = http.get("https://api.example.com:8443/v1/items?page=2#top", headers={"Accept": "application/json"})
        (sent,) = support.SANDBOX.requests
        self.assertEqual((sent.method, sent.scheme, sent.authority, sent.path), ("GET", "https", "api.example.com:8443", "/v1/items?page=2"))
        self.assertIn(("accept", b"application/json"), sent.headers)
        self.assertIn(("user-agent", http.BROWSER_USER_AGENT.encode()), sent.headers)
        self.assertEqual(response.status, 200)
        self.assertEqual(response.json(), {"items": [1, 2]})
        self.assertEqual(response.header("SET-COOKIE"), "a=1, b=2")
        self.assertFalse(response.truncated)
        self.assertEqual(support.SANDBOX.open_resources, 0, "every resource is released")

    def test_a_dict_body_is_sent_as_json_in_chunks_of_4096_bytes(self):
        self.serve({"http://127.0.0.1:8080/echo": lambda r: (201, [], r.body)})
        payload = {"text": "é" * 5000}
        response = http.request("post", "http://127.0.0.1:8080/echo", body=payload)
        (sent,) = support.SANDBOX.requests
        self.assertEqual(sent.method, "POST")
        self.assertIn(("content-type", b"application/json"), sent.headers)
        self.assertEqual(json.loads(response.text), payload)
        self.assertEqual(response.status, 201)

    def test_the_body_is_cut_at_the_cap(self):
        self.serve({"http://h.test/big": (200, [], b"x" * 100_000)})
        response = http.request("GET", "http://h.test/big", max_body_bytes=70_000)
        self.assertEqual((len(response.body), response.truncated), (70_000, True))
        self.assertEqual(support.SANDBOX.open_resources, 0)

    def test_text_follows_the_declared_charset(self):
        self.serve({"http://h.test/": (200, [("content-type", 'text/plain; charset="latin-1"')], "café".encode("latin-1"))})
        self.assertEqual(http.get("http://h.test/").text, "café")

    def test_redirects_are_followed_and_303_turns_a_post_into_a_get(self):
        self.serve({
            "https://h.test/form": (303, [("location", "/done")], b""),
            "https://h.test/done": (200, [], b"thanks"),
        })
        response = http.request("POST", "https://h.test/form", body="a=1")
        self.assertEqual(response.text, "thanks")
        self.assertEqual(response.url, "https://h.test/done")
        self.assertEqual([(r.method, r.path, r.body) for r in support.SANDBOX.requests], [("POST", "/form", b"a=1"), ("GET", "/done", b"")])

    def test_a_redirect_from_https_to_http_is_not_followed(self):
        self.serve({"https://h.test/a": (301, [("location", "http://h.test/b")], b"")})
        with self.assertRaisesRegex(Denied, "redirected from https to plain http"):
            http.get("https://h.test/a")
        self.assertEqual(len(support.SANDBOX.requests), 1)

    def test_a_redirect_loop_stops(self):
        self.serve({"http://h.test/a": (302, [("location", "/a")], b"")})
        with self.assertRaisesRegex(Failed, "redirected more than 5 times"):
            http.get("http://h.test/a")
        self.assertEqual(len(support.SANDBOX.requests), 6)

    def test_a_refused_host_is_denied_naming_the_host_and_net(self):
        support.SANDBOX.http = lambda r: support.http.ErrorCode_HttpRequestDenied
        with self.assertRaises(Denied) as caught:
            http.get("https://evil-example.com/x")
        self.assertEqual(caught.exception.code, ErrorCode.DENIED)
        self.assertEqual(
            caught.exception.message,
            "net: request to https://evil-example.com/x is not granted by the permission table (ask "
            "the operator to add evil-example.com to this skill's `net` list)",
        )

    def test_transport_failures_are_failed_and_timeouts_say_so(self):
        rows = [
            ("ErrorCode_ConnectionRefused", http.Failed, "http://h.test/: connection refused"),
            ("ErrorCode_ConnectionTimeout", http.Timeout, "http://h.test/: timed out"),
            ("ErrorCode_DestinationNotFound", http.Failed, "http://h.test/: the host name could not be resolved"),
            ("ErrorCode_DestinationIpProhibited", Denied, "net: http://h.test/ resolves to an internal address"),
            ("ErrorCode_TlsCertificateError", http.Failed, "http://h.test/: TlsCertificateError"),
        ]
        for name, kind, message in rows:
            support.SANDBOX.http = lambda r, name=name: getattr(support.http, name)
            with self.assertRaises(kind) as caught:
                http.get("http://h.test/")
            self.assertTrue(caught.exception.message.startswith(message), caught.exception.message)

    def test_user_info_is_refused_before_anything_is_sent(self):
        support.SANDBOX.http = lambda r: self.fail("sent")
        with self.assertRaises(Denied) as caught:
            http.get("http://admin:hunter2@127.0.0.1:8080/login")
        self.assertEqual(
            caught.exception.message,
            "net: GET http://127.0.0.1:8080: the URL carries a user name or password (user:pass@host), "
            "which is refused; credentials are added by the host from the permission table, never "
            "written in URLs",
        )

    def test_a_bad_url_is_invalid_arguments_without_its_password(self):
        for url, part in [("ftp://me:hunter2@example.com/", "scheme 'ftp'"), ("example.com/a", "no scheme"), ("http://me:hunter2@h:notaport/", "Port"), ("http:///path", "no host")]:
            with self.assertRaises(InvalidArguments) as caught:
                http.get(url)
            self.assertIn(part, caught.exception.message, url)
            self.assertNotIn("hunter2", caught.exception.message)


class Redaction(unittest.TestCase):
    def test_redact_url_never_repeats_a_user_name_or_password(self):
        rows = [
            ("https://me:hunter2@example.com/a?b=c", "https://[REDACTED]@example.com/a?b=c"),
            ("http://me@example.com:8080/", "http://[REDACTED]@example.com:8080/"),
            ("http://:hunter2@example.com/", "http://[REDACTED]@example.com/"),
            ("https://me:hunter2@[::1]:8443/", "https://[REDACTED]@[::1]:8443/"),
            ("https://me:pw@example.com/?mail=a@b.org", "https://[REDACTED]@example.com/?mail=a@b.org"),
            ("me:hunter2@example.com/a", "[REDACTED]@example.com/a"),
            ("http://me:hun/ter2@example.com/", "http://[REDACTED]@example.com/"),
            ("https://example.com/@me", "https://example.com/@me"),
            ("https://example.com/?mail=me@example.org", "https://example.com/?mail=me@example.org"),
            ("HTTPS://Example.COM/a", "HTTPS://Example.COM/a"),
            ("not a url", "not a url"),
        ]
        for text, shown in rows:
            self.assertEqual(http.redact_url(text), shown, text)
            self.assertNotIn("hunter2", http.redact_url(text))
            self.assertNotIn("ter2", http.redact_url(text))


class Credentials(unittest.TestCase):
    def test_credential_configured_matches_host_and_port(self):
        import os

        os.environ[http.CREDENTIALS_ENV] = "api.github.com, 127.0.0.1:8080"
        try:
            self.assertTrue(http.credential_configured("API.github.com"))
            self.assertTrue(http.credential_configured("127.0.0.1:8080"))
            self.assertFalse(http.credential_configured("127.0.0.1:9090"))
            self.assertFalse(http.credential_configured("github.com"))
        finally:
            del os.environ[http.CREDENTIALS_ENV]
        self.assertFalse(http.credential_configured("api.github.com"))


if __name__ == "__main__":
    unittest.main()
