"""`tools/list` pages with the official Python SDK: following `nextCursor` gives exactly the
served set, in the same order every time, each page at most the built-in page size; 2026-07-28
pages carry `ttlMs` and `cacheScope: public`; a cursor the server did not issue is -32602 with
the server's message.

Takes the server as `--url` (streamable HTTP, `--mode legacy|2026-07-28`) or `--command PATH
[ARG ...]` (stdio). `--expect` is the served tool names as a JSON list, in serving order.
Prints one line per page, then `PASS`.
"""

from __future__ import annotations

import argparse
import json

import mcp
from mcp import StdioServerParameters

from common import Failure, check, run

# The 2026-07-28 cache hints the server sends (docs/runtime.md, "Listing tools").
TTL_MS = 600_000


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", help="streamable HTTP endpoint")
    p.add_argument("--mode", default="legacy", help="legacy or 2026-07-28")
    p.add_argument("--expect", required=True, help="the served tool names, a JSON list")
    p.add_argument("--page-size", type=int, required=True, help="the built-in page size")
    p.add_argument("--command", nargs=argparse.REMAINDER, help="stdio server command line")
    return p.parse_args()


async def listing(client: mcp.Client, modern: bool, page_size: int) -> tuple[list[str], list[str]]:
    """Every page, by cursor: the names and the cursors seen."""
    names: list[str] = []
    cursors: list[str] = []
    cursor: str | None = None
    for _ in range(100):
        # Bypass the SDK's cache so every page is the server's answer.
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        names.extend(tool.name for tool in page.tools)
        print(f"page {len(cursors) + 1}: {[tool.name for tool in page.tools]}")
        check(0 < len(page.tools) <= page_size, f"a page of {len(page.tools)} tools (size {page_size})")
        if modern:
            check(
                "ttl_ms" in page.model_fields_set and page.ttl_ms == TTL_MS,
                f"ttlMs {getattr(page, 'ttl_ms', None)!r}, expected {TTL_MS}",
            )
            check(page.cache_scope == "public", f"cacheScope {page.cache_scope!r}, expected public")
        cursor = page.next_cursor
        if not cursor:
            check(len(page.tools) > 0, "the last page is empty")
            return names, cursors
        check(isinstance(cursor, str) and cursor not in cursors, f"cursor {cursor!r} repeats")
        check(len(page.tools) == page_size, "a page before the last is not full")
        cursors.append(cursor)
    raise Failure("tools/list did not end within 100 pages")


async def main(args: argparse.Namespace) -> None:
    check(bool(args.url) != bool(args.command), "give --url or --command, not both")
    expected = json.loads(args.expect)
    target: str | StdioServerParameters = args.url or StdioServerParameters(
        command=args.command[0], args=args.command[1:]
    )
    async with mcp.Client(target, mode=args.mode, read_timeout_seconds=30) as client:
        modern = client.protocol_version == "2026-07-28"
        print(f"protocol: {client.protocol_version}")
        check(modern == (args.mode == "2026-07-28"), f"negotiated {client.protocol_version}")
        names, cursors = await listing(client, modern, args.page_size)
        check(names == expected, f"listed {names}, expected {expected}")
        check(len(cursors) >= 2, f"expected several pages, got cursors {cursors}")
        again, again_cursors = await listing(client, modern, args.page_size)
        check(again == names and again_cursors == cursors, "a second listing differs")

        for bad in ["not-a-cursor", cursors[0] + "0", ""]:
            try:
                await client.list_tools(cursor=bad, cache_mode="bypass")
            except mcp.MCPError as error:
                check(error.error.code == -32602, f"cursor {bad!r}: code {error.error.code}")
                message = error.error.message
                check(
                    message.startswith(f"invalid cursor {json.dumps(bad)}: this server did not issue it"),
                    f"cursor {bad!r}: message {message!r}",
                )
                print(f"invalid cursor {bad!r}: {error.error.code} {message}")
            else:
                raise Failure(f"cursor {bad!r} was accepted")
    print(f"tools: {json.dumps(names)}")


if __name__ == "__main__":
    run(main, arguments())
