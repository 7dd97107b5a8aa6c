"""Opens `--count` legacy sessions one after the other (initialize, initialized, tools/list
each, raw HTTP with httpx, as a client that never ends them would) and leaves them to expire.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import check, run  # noqa: E402

import httpx2  # noqa: E402

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "sessions.py", "version": "1"}},
}


async def main(args: argparse.Namespace) -> None:
    with httpx2.Client(timeout=10) as http:
        for _ in range(args.count):
            opened = http.post(args.url, headers=HEADERS, json=INITIALIZE)
            check(opened.status_code == 200, f"initialize: {opened.status_code} {opened.text[:200]}")
            session = {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            http.post(args.url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            listed = http.post(args.url, headers=session, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
            check(listed.status_code == 200, f"tools/list: {listed.status_code}")
    print(f"opened {args.count} sessions")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True)
    p.add_argument("--count", type=int, default=1000)
    run(main, p.parse_args())
