"""A local HTTP server that receives apprise ``json://127.0.0.1:PORT/...`` notifications.

apprise's json:// plugin POSTs ``{"title": ..., "message": ..., "type": ...}``; the sink keeps
each one with the request's path and headers, and can answer the first few with an error to
test the retries.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = "s3cretToken42"  # in every test URL: it must never show up in a file, a log or an output


class NotifySink:
    def __init__(self, fail_first: int = 0):
        self.received: list[dict] = []
        self.requests = 0
        self.fail_first = fail_first
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                sink.requests += 1
                if sink.requests <= sink.fail_first:
                    self.send_response(503)
                    self.end_headers()
                    return
                try:
                    data = json.loads(body)
                except ValueError:
                    data = {"raw": body.decode("utf-8", "replace")}
                sink.received.append({**data, "path": self.path, "auth": self.headers.get("Authorization")})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """A URL with secret parts: a password and a path token."""
        return f"json://rlpanel:{SECRET}@127.0.0.1:{self.port}/hook/{SECRET}"

    def __enter__(self) -> NotifySink:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait(self, predicate, timeout: float = 120.0, what: str = "a notification") -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for msg in list(self.received):
                if predicate(msg):
                    return msg
            time.sleep(0.1)
        raise AssertionError(f"no {what} within {timeout:g} s; received: {[m.get('title') for m in self.received]}")
