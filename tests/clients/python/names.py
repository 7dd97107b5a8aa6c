"""Served names (`tool_prefix`, `tool_names`), with the real NATS CLI and the official Python SDK.

The server (built from tests/fixtures/nats-names.yaml) serves `stream_info` as `info`,
`stream_rm` as `nats_stream_rm` and `kv_ls` under a 70-character name. A client lists exactly
those names, calls `info` and gets what `nats stream info` printed for the stream; the command's
own name `stream_info` is an unknown tool. On `/mcp/stream` the group keeps its tools under
their served names. With `--catalog search`, search finds `info`, describe describes it and the
read-only runner runs it by that name.
"""

from __future__ import annotations

import argparse
import json

import mcp

from common import check, command_result, http_parser, json_result, run

LONG = "key_value_buckets_listed_with_their_sizes_histories_and_replica_counts"
SERVED = [LONG, "info", "nats_stream_rm"]  # natscli's command order: kv before stream


async def listed_and_called(base: str, args: argparse.Namespace) -> None:
    async with mcp.Client(base, mode=args.mode, read_timeout_seconds=30) as c:
        names = [tool.name for tool in (await c.list_tools()).tools]
        check(names == SERVED, f"tools {names!r}, expected {SERVED!r}")
        print(f"tools: {' '.join(names)}")
        info = command_result(await c.call_tool("info", {"stream": args.stream, "json": True}), "info")
        check(info["exit_code"] == 0, f"info failed: {info['output']!r}")
        check(json.loads(info["output"])["config"]["name"] == args.stream, "info named another stream")
        print(f"info ran: {info['command']}")
        try:
            other = await c.call_tool("stream_info", {"stream": args.stream})
        except mcp.MCPError as error:
            check(error.code == -32602, f"stream_info refused with code {error.code}")
            print(f"stream_info refused: {error.message}")
        else:
            check(False, f"the own name stream_info ran: {other!r}")
    async with mcp.Client(f"{base}/stream", mode=args.mode, read_timeout_seconds=30) as part:
        names = [tool.name for tool in (await part.list_tools()).tools]
        check(names == ["info", "nats_stream_rm"], f"/mcp/stream lists {names!r}")
        print(f"/mcp/stream: {' '.join(names)}")


async def through_the_catalog(base: str, args: argparse.Namespace) -> None:
    async with mcp.Client(base, mode=args.mode, read_timeout_seconds=30) as c:
        found = json_result(await c.call_tool("search", {"query": "stream info"}), "search")
        first = found["matches"][0]
        check(first["name"] == "info" and first["runner"] == "run_read_only", f"search: {found!r}")
        described = json_result(await c.call_tool("describe", {"tools": ["info"]}), "describe")
        check(described["tools"][0]["name"] == "info", f"describe: {described!r}")
        ran = command_result(
            await c.call_tool("run_read_only", {"tool": "info", "arguments": {"stream": args.stream, "json": True}}),
            "run_read_only info",
        )
        check(ran["exit_code"] == 0, f"run_read_only info failed: {ran['output']!r}")
        print(f"catalog: found {first['name']}, ran {ran['command']}")


async def main(args: argparse.Namespace) -> None:
    base = args.url.rstrip("/")
    if args.catalog:
        await through_the_catalog(base, args)
    else:
        await listed_and_called(base, args)


if __name__ == "__main__":
    p = http_parser(__doc__)
    p.add_argument("--stream", required=True)
    p.add_argument("--catalog", action="store_true")
    run(main, p.parse_args())
