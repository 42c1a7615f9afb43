"""URL text helpers shared by the Portal endpoints and the fake providers."""

from urllib.parse import unquote_to_bytes

# docs/protocol.md §2: these bytes pass through, every other byte is %XX (uppercase).
_QUERY_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.*")


def encode_query_bytes(data: bytes) -> str:
    """`data` percent-encoded as docs/protocol.md §2 encodes a query value."""
    return "".join(chr(byte) if byte in _QUERY_SAFE else f"%{byte:02X}" for byte in data)


def encode_query_value(text: str) -> str:
    """`text`'s UTF-8 percent-encoded as docs/protocol.md §2 encodes a query value."""
    return encode_query_bytes(text.encode("utf-8"))


def decode_percent(text: str) -> bytes:
    """The bytes of `text` with its %XX escapes decoded ('+' stays '+')."""
    # Percent escapes only: '+' stays '+', as the client never encodes a space that way.
    return unquote_to_bytes(text)


def append_query(url: str, params: str) -> str:
    """Append `params` to the query of `url`, keeping any #fragment last."""
    base, hash_mark, fragment = url.partition("#")
    if "?" not in base:
        joiner = "?"
    elif base.endswith(("?", "&")):
        joiner = ""
    else:
        joiner = "&"
    return f"{base}{joiner}{params}{hash_mark}{fragment}"
