"""List any server's tools with the official Python SDK and print their names.

Takes the server as `--url http://127.0.0.1:PORT/mcp` (streamable HTTP, `--mode`) or as
`--command PATH [ARG ...]` (stdio: the script starts that command). `--expect N` fails unless
exactly N tools are listed. Prints `tools: <names as a JSON list>`, then `PASS`.
"""

from __future__ import annotations

import argparse
import json

import mcp
from mcp import StdioServerParameters

from common import check, run


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", help="streamable HTTP endpoint")
    p.add_argument("--mode", default="auto", help="legacy, 2026-07-28 or auto")
    p.add_argument("--expect", type=int, required=True, help="how many tools must be listed")
    p.add_argument("--command", nargs=argparse.REMAINDER, help="stdio server command line")
    return p.parse_args()


async def main(args: argparse.Namespace) -> None:
    check(bool(args.url) != bool(args.command), "give --url or --command, not both")
    target: str | StdioServerParameters = args.url or StdioServerParameters(
        command=args.command[0], args=args.command[1:]
    )
    async with mcp.Client(target, mode=args.mode, read_timeout_seconds=30) as client:
        names: list[str] = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
            names.extend(tool.name for tool in page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
    print(f"tools: {json.dumps(names)}")
    check(len(names) == len(set(names)), f"a tool is listed twice: {names}")
    check(len(names) == args.expect, f"{len(names)} tools listed, expected {args.expect}")


if __name__ == "__main__":
    run(main, arguments())
