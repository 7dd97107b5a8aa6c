"""Connections that cannot be held hostage (docs/runtime.md, "Limits"): a client opens
`--count` connections from 127.0.0.2, each sending a POST's headers and the first bytes of its
body, then stalls. Meanwhile a normal client (the official Python SDK, from 127.0.0.1) lists
the tools and is served. Every stalled connection must be closed by the server within the
request deadline (`--deadline` seconds, the server's --request-timeout) plus `--slack`: those
over the per-peer limit at once, the others when their body does not arrive in time.
"""

from __future__ import annotations

import argparse
import os
import selectors
import socket
import sys
import time
from urllib.parse import urlparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import check, run  # noqa: E402

import mcp  # noqa: E402


def stall(host: str, port: int) -> socket.socket:
    """A connection from 127.0.0.2 that sends headers and half a body, then nothing."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.2", 0))
    sock.settimeout(5)
    sock.connect((host, port))
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
        '{"jsonrpc":"2.0",'
    )
    try:
        sock.sendall(head.encode())
    except OSError:
        pass  # refused over the per-peer limit: closed at once
    sock.setblocking(False)
    return sock


def closed(sock: socket.socket) -> bool:
    """Whether the server has closed the connection (read what it answered, then EOF)."""
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


class Watch:
    """The stalled connections, each with when it was opened and when the server closed it."""

    def __init__(self) -> None:
        self.selector = selectors.DefaultSelector()
        self.opened: dict[socket.socket, float] = {}
        self.lasted: list[float] = []

    def add(self, sock: socket.socket) -> None:
        self.opened[sock] = time.monotonic()
        self.selector.register(sock, selectors.EVENT_READ)

    def poll(self, timeout: float = 0) -> None:
        """Records the connections the server has closed since the last poll."""
        for key, _ in self.selector.select(timeout):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if closed(sock):
                self.lasted.append(time.monotonic() - self.opened.pop(sock))
                self.selector.unregister(sock)
                sock.close()


async def main(args: argparse.Namespace) -> None:
    url = urlparse(args.url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    watch = Watch()
    started = time.monotonic()
    for _ in range(args.count):
        watch.add(stall(host, port))
        watch.poll()
    print(f"opened {args.count} stalled connections from 127.0.0.2 in {time.monotonic() - started:.1f}s")

    # A normal client is served while they stall.
    async with mcp.Client(args.url, mode="legacy", read_timeout_seconds=10) as c:
        listed = await c.list_tools()
        check(len(listed.tools) > 0, "the normal client listed no tools")
    watch.poll()
    check(watch.opened, "no stalled connection was still open when the normal client was served")
    print(f"a normal client from 127.0.0.1 was served while {len(watch.opened)} stalled connections were open")

    limit = args.deadline + args.slack
    end = time.monotonic() + limit
    while watch.opened and time.monotonic() < end:
        watch.poll(0.05)
    check(not watch.opened, f"{len(watch.opened)} stalled connections still open after {limit:.0f}s")
    longest = max(watch.lasted)
    check(longest <= limit, f"a stalled connection lasted {longest:.1f}s")
    early = sum(1 for lasted in watch.lasted if lasted < args.deadline - 0.5)
    check(early > 0, "no connection was refused before the deadline: no per-peer limit")
    print(f"{early} closed before the deadline (over the per-peer limit), the rest at it; the longest lasted {longest:.1f}s")
    print(f"every stalled connection was closed within {args.deadline:.0f}s (+{args.slack:.0f}s slack)")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True)
    p.add_argument("--count", type=int, default=1100)
    p.add_argument("--deadline", type=float, required=True)
    p.add_argument("--slack", type=float, default=3.0)
    run(main, p.parse_args())
