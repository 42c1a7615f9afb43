"""A nameserver for the network tests, on 127.0.0.1:53 (UDP): it never answers a query for a
name under stalled.test (a VPN's nameserver gone quiet), and answers every other query
"no such name" (NXDOMAIN). Each query's name is printed on its own line as it arrives, so
that a test knows when a lookup has reached it."""

import socket
import sys


def question_name(query: bytes) -> str:
    labels, at = [], 12
    while at < len(query) and query[at]:
        length = query[at]
        labels.append(query[at + 1 : at + 1 + length].decode("ascii", "replace"))
        at += 1 + length
    return ".".join(labels).lower()


def no_such_name(query: bytes) -> bytes:
    # The query's id and question; flags: a response, recursion desired and available, NXDOMAIN.
    flags = 0x8000 | (query[2] & 0x01) << 8 | 0x0080 | 3
    return query[:2] + flags.to_bytes(2, "big") + query[4:6] + b"\0\0\0\0\0\0" + query[12:]


def main() -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 53))
    print("listening", flush=True)
    while True:
        query, client = server.recvfrom(512)
        if len(query) < 12:
            continue
        name = question_name(query)
        print(name, flush=True)
        if name != "stalled.test" and not name.endswith(".stalled.test"):
            server.sendto(no_such_name(query), client)


if __name__ == "__main__":
    sys.exit(main())
