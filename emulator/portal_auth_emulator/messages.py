"""The request/response values passed between the HTTP layer and the endpoint code."""

import html
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NoReturn

PORTAL_PREFIX = "/api/v3/auth"
CONTROL_PREFIX = "/_emulator/"

# A decoded JSON object: the keys are text, the values whatever the document holds.
JsonObject = dict[str, Any]


@dataclass(frozen=True)
class Request:
    """An HTTP request as the endpoints see it: method, raw path and query, headers, body."""

    method: str
    path: str  # raw path, without the query
    query: str  # raw query text, without the '?'
    headers: tuple[tuple[str, str], ...]  # ((lowercased name, value), ...) in arrival order
    body: bytes

    def header_values(self, name: str) -> list[str]:
        """Every value of the header `name` (any case), in arrival order."""
        wanted = name.lower()
        return [value for key, value in self.headers if key == wanted]

    def header(self, name: str) -> str | None:
        """The single value of a header, or None when absent or repeated."""
        values = self.header_values(name)
        return values[0] if len(values) == 1 else None

    def has_header(self, name: str) -> bool:
        """Whether the header `name` was sent at all."""
        return bool(self.header_values(name))

    def record(self) -> JsonObject:
        """The shape served by GET /_emulator/requests."""
        headers: dict[str, str] = {}
        for key, value in self.headers:
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return {
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": headers,
            "body": self.body.decode("utf-8", "replace"),
        }


@dataclass
class Response:
    """An HTTP answer: status, body, content type and extra headers."""

    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: list[tuple[str, str]] = field(default_factory=list)


class ApiError(Exception):
    """Raised by endpoint code to answer `{"error": message}` with `status`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def json_response(status: int, payload: object) -> Response:
    """A JSON answer of `payload` with `status`."""
    return Response(status, json.dumps(payload, separators=(",", ":")).encode("utf-8"))


def data_response(payload: JsonObject) -> Response:
    """Portal's 200 envelope: {"data": payload}."""
    return json_response(200, {"data": payload})


def error_response(status: int, message: str) -> Response:
    """Portal's error answer: {"error": message} with `status`."""
    return json_response(status, {"error": message})


def html_response(
    status: int,
    title: str,
    text: str,
    headers: Iterable[tuple[str, str]] | None = None,
    link: str | None = None,
) -> Response:
    """A small HTML page of `title` and `text` (with a Continue link to `link`)."""
    # The link lets a person (or a test reading the body) continue where a browser
    # would have followed the redirect.
    anchor = f' <a id="continue" href="{html.escape(link)}">Continue</a>' if link else ""
    page = (
        "<!doctype html><html><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title></head>"
        f"<body><p>{html.escape(text)}{anchor}</p></body></html>"
    )
    return Response(status, page.encode("utf-8"), "text/html; charset=utf-8", list(headers or []))


def portal_path_matches(pattern: str, path: str) -> bool:
    """Faults and waits may name a Portal path in full or relative to /api/v3/auth."""
    return path == pattern or path == PORTAL_PREFIX + pattern


def parse_json_object(body: bytes) -> JsonObject:
    """Decode a request body that must be one JSON object, else ApiError 400."""
    try:
        value = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError):
        raise ApiError(400, "invalid JSON body") from None
    if not isinstance(value, dict):
        raise ApiError(400, "JSON body must be an object")
    return value


def _reject_constant(name: str) -> NoReturn:
    # NaN and Infinity are not JSON; Python accepts them by default.
    raise ValueError(name)
