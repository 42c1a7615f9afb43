"""The HTTP layer: a loopback ThreadingHTTPServer whose handler reads requests,
applies queued faults, dispatches to the Portal or control endpoints and logs
method, path (never the query) and status only."""

import socket
import ssl
import sys
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, ClassVar

from .messages import CONTROL_PREFIX, Request, Response, error_response, json_response

if TYPE_CHECKING:
    from .runtime import Emulator  # runtime imports this module

MAX_BODY = 1 << 20
# Control requests may carry large fault bodies (a test of the client's response cap).
MAX_CONTROL_BODY = 8 << 20
# An oversized body up to this size is read and discarded before the 413, so the
# client is not reset mid-upload and reliably reads the answer.
MAX_DRAIN = 16 << 20

# Receives one line of the emulator's log.
LogLine = Callable[[str], None]
# socketserver's request: the (data, socket) form is UDP's; this TCP server is handed
# the connection socket.
_Request = socket.socket | tuple[bytes, socket.socket]


# What _portal returns when it has already written a (deliberately broken) response.
_TRUNCATED = Response(200)


class _BodyTooLarge(Exception):
    pass


class _BadBody(Exception):
    pass


class EmulatorServer(ThreadingHTTPServer):
    """The threaded HTTP server on 127.0.0.1 that hands each request to the emulator."""
    daemon_threads = True
    # An ephemeral port is never reused; a fixed one may be rebound right after a stop.
    allow_reuse_address = True
    # socketserver's default backlog of 5 drops the connections of a burst of concurrent
    # calls (the client then sees a connect timeout that a real server would not cause).
    request_queue_size = 1024

    def __init__(
        self, port: int, app: "Emulator", log: LogLine | None, tls: tuple[str, str] | None = None
    ) -> None:
        self.app = app
        self.log = log
        self._connections: set[_Request] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), Handler)
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.socket: socket.socket = context.wrap_socket(self.socket, server_side=True)

    def process_request(self, request: _Request, client_address: tuple[str, int]) -> None:
        """Serves `request` on a thread of its own, remembering the connection."""
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def close_request(self, request: _Request) -> None:
        """Forgets and closes the connection `request`."""
        with self._connections_lock:
            self._connections.discard(request)
        super().close_request(request)

    def close_connections(self) -> None:
        """End idle keep-alive connections so nothing is served after stop()."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            if not isinstance(connection, socket.socket):
                continue  # see _Request
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: _Request, client_address: tuple[str, int]) -> None:
        """Logs the kind of a connection's error, never its text."""
        # The default prints a traceback whose text could quote request data. This runs
        # in the except block that caught the error, so there is one to name.
        if self.log is not None:
            self.log(f"connection error: {type(sys.exc_info()[1]).__name__}")


class Handler(BaseHTTPRequestHandler):
    """One connection's requests, keep-alive, dispatched to Portal's endpoints or the control ones."""

    protocol_version = "HTTP/1.1"  # keep-alive
    disable_nagle_algorithm = True  # without TCP_NODELAY each request costs ~44 ms
    timeout: ClassVar[float | None] = 300  # an abandoned keep-alive connection eventually frees its thread
    close_connection: bool
    server: EmulatorServer  # the base class only knows it as a BaseServer

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The Date header by the emulator's clock, which clockOffsetSeconds moves: a server
        whose clock is ahead says so in every answer."""
        return super().date_time_string(self.server.app.state.now() if timestamp is None else timestamp)

    def do_GET(self) -> None:
        """Dispatches the request."""
        self._dispatch()

    def do_POST(self) -> None:
        """Dispatches the request."""
        self._dispatch()

    def do_PUT(self) -> None:
        """Dispatches the request (answered 404: no endpoint takes PUT)."""
        self._dispatch()

    def do_PATCH(self) -> None:
        """Dispatches the request (answered 404: no endpoint takes PATCH)."""
        self._dispatch()

    def do_DELETE(self) -> None:
        """Dispatches the request."""
        self._dispatch()

    def do_OPTIONS(self) -> None:
        """Dispatches the request (answered 404: no endpoint takes OPTIONS)."""
        self._dispatch()

    def do_HEAD(self) -> None:
        """Dispatches the request (answered 404: no endpoint takes HEAD)."""
        self._dispatch()

    def version_string(self) -> str:
        """The Server header's value."""
        return "portal-auth-emulator"

    # -- request handling ----------------------------------------------------

    def _dispatch(self) -> None:
        app = self.server.app
        target = self.path
        # A request through an HTTP proxy names the absolute URL (RFC 9112 §3.2.2); the
        # emulator then serves as proxy and origin at once, so proxy settings can be tested.
        self._proxied = target.startswith(("http://", "https://"))
        if self._proxied:
            target = "/" + target.split("://", 1)[1].partition("/")[2]
        path, _, query = target.partition("?")
        try:
            body = self._read_body()
        except _BodyTooLarge:
            self.close_connection = True  # the body may be unread: the stream is unusable
            self._send(error_response(413, "request body too large"))
            return
        except _BadBody:
            self.close_connection = True
            self._send(error_response(400, "unreadable request body"))
            return
        headers = tuple((name.lower(), value) for name, value in self.headers.items())
        request = Request(self.command, path, query, headers, body)
        response: Response | None
        try:
            if path.startswith(CONTROL_PREFIX):
                response = app.control.handle(request)
            else:
                response = self._portal(app, request)
        except Exception as exc:  # keep serving; report the type only
            if self.server.log is not None:
                self.server.log(f"internal error: {type(exc).__name__}")
            response = error_response(500, "internal error")
        if response is None:
            self.close_connection = True
            self._log_line("dropped")
            return
        if response is _TRUNCATED:
            return  # already written
        self._send(response)

    def _portal(self, app: "Emulator", request: Request) -> Response | None:
        """Record, apply any fault, then answer; None means drop the connection."""
        fault, ticket = app.faults.take(request.method, request.path)
        app.requests.record({**request.record(), "peerPort": self.client_address[1], "proxied": self._proxied})
        if fault is not None:
            if fault.kind == "drop":
                return None
            if fault.kind == "lost":
                app.portal.handle(request)  # acted on, its answer never sent
                return None
            if fault.kind == "status":
                extra = [("Retry-After", fault.retry_after)] if fault.retry_after is not None else []
                return Response(fault.status, fault.body.encode("utf-8"), headers=extra)
            if fault.kind == "malformed":
                return Response(200, fault.body.encode("utf-8"))
            if fault.kind == "oversized":
                # A valid envelope, `size` bytes in all.
                head, tail = b'{"data":{"pad":"', b'"}}'
                return Response(200, head + b"x" * (fault.size - len(head) - len(tail)) + tail)
            if fault.kind == "truncated":
                self._send_truncated(fault.body.encode("utf-8"))
                return _TRUNCATED
            if fault.kind == "latency":
                app.faults.pause(fault.ms)
            elif fault.kind == "hold":
                app.faults.hold(ticket)
        return app.portal.handle(request)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            return b""
        try:
            length = int(length_text)
        except ValueError:
            raise _BadBody() from None
        if length < 0:
            raise _BadBody()
        if length > self._body_limit():
            if length <= MAX_DRAIN:
                while length > 0:
                    discarded = len(self.rfile.read(min(length, 1 << 16)))
                    if not discarded:
                        break
                    length -= discarded
            raise _BodyTooLarge()
        body = self.rfile.read(length)
        if len(body) != length:
            raise _BadBody()
        return body

    def _body_limit(self) -> int:
        return MAX_CONTROL_BODY if self.path.startswith(CONTROL_PREFIX) else MAX_BODY

    def _read_chunked(self) -> bytes:
        chunks = []
        total = 0
        while True:
            size_line = self.rfile.readline(1024)
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise _BadBody() from None
            if size == 0:
                break
            total += size
            if total > self._body_limit():
                raise _BodyTooLarge()
            chunk = self.rfile.read(size)
            if len(chunk) != size or self.rfile.readline(1024) not in (b"\r\n", b"\n"):
                raise _BadBody()
            chunks.append(chunk)
        while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
            pass  # trailers carry nothing the emulator uses
        return b"".join(chunks)

    def handle_expect_100(self) -> bool:
        """Refuses an oversized body before the client sends it, else answers 100 Continue."""
        # Refuse an oversized body before the client sends it.
        try:
            too_large = int(self.headers.get("Content-Length", "0")) > self._body_limit()
        except ValueError:
            too_large = False
        if too_large:
            self.close_connection = True
            self._send(error_response(413, "request body too large"))
            return False
        return super().handle_expect_100()

    # -- response writing ----------------------------------------------------

    def _send(self, response: Response) -> None:
        status = response.status
        no_body = status in (204, 304) or self.command == "HEAD"
        self.send_response(status)
        if status not in (204, 304):
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
        for name, value in response.headers:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if not no_body:
            self.wfile.write(response.body)
        self._log_line(str(status))

    def _send_truncated(self, body: bytes) -> None:
        """A 200 whose Content-Length promises more than the body, then the connection closes."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) + 1024))
        self.end_headers()
        self.wfile.write(body)
        self._log_line("truncated")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A protocol-level error as JSON, never echoing the offending input."""
        # Protocol-level errors (bad request line, oversized headers...): JSON, and
        # never echo the offending input.
        self.close_connection = True
        try:
            phrase = HTTPStatus(code).phrase.lower()
        except ValueError:
            phrase = "error"
        self._send(json_response(code, {"error": phrase}))

    # -- logging: method, path without query, outcome; nothing else -----------

    def _log_line(self, outcome: str) -> None:
        log = self.server.log
        if log is None:
            return
        method = self.command or "-"
        path = (getattr(self, "path", "") or "").partition("?")[0] or "-"
        log(f"{method} {path} {outcome}")

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Silent: the emulator's own line covers the request."""
        pass  # _log_line covers it without the raw request line

    def log_message(self, format: str, *args: object) -> None:
        """Silent: the base class would print the raw request line, query included."""
        pass  # the base class would print the raw request line, query included
