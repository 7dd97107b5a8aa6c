"""Catalog mode (`--catalog search`) with the real NATS CLI and the official Python SDK.

The server (built from tests/fixtures/nats-groups.yaml, started with `--catalog search`) lists
four fixed tools. The client searches "stream info", describes the tool it found, runs it with
a bad and then a good argument through `run_read_only`, runs the gated `stream_rm` through `run`
and declines (nothing ran: the stream is still there), and sees `run_read_only` refuse
`stream_rm` with a clear error. On `/mcp/kv` the search finds only the kv part.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import mcp
import mcp.types as types

from common import check, command_result, error_result, http_parser, json_result, run

FIXED = ["search", "describe", "run_read_only", "run"]


async def decline(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Records nothing and declines every approval."""
    PROMPTS.append(params.message)
    return types.ElicitResult(action="decline")


PROMPTS: list[str] = []


def answer(result: types.CallToolResult, what: str) -> dict[str, Any]:
    """A fixed tool's JSON answer (text, no structuredContent)."""
    return json_result(result, what)


async def main(args: argparse.Namespace) -> None:
    stream = args.stream
    base = args.url.rstrip("/")
    async with mcp.Client(base, mode=args.mode, read_timeout_seconds=30, elicitation_callback=decline) as c:
        tools = (await c.list_tools()).tools
        names = [tool.name for tool in tools]
        check(names == FIXED, f"tools {names!r}")
        size = len(json.dumps([t.model_dump(by_alias=True, exclude_none=True) for t in tools], separators=(",", ":")))
        check(size <= 4096, f"the catalog list is {size} bytes")
        print(f"catalog list: {names} in {size} bytes")

        found = answer(await c.call_tool("search", {"query": "stream info"}), "search")
        first = found["matches"][0]
        check(first["name"] == "stream_info" and first["runner"] == "run_read_only", f"search: {found!r}")
        print(f"search found: {first['name']} ({first['runner']})")

        described = answer(await c.call_tool("describe", {"tools": [first["name"]]}), "describe")
        entry = described["tools"][0]
        check(entry["name"] == "stream_info" and "stream" in entry["inputSchema"]["properties"], f"describe: {entry!r}")
        print(f"described: {entry['name']} takes {sorted(entry['inputSchema']['properties'])}")

        bad = error_result(
            await c.call_tool("run_read_only", {"tool": "stream_info", "arguments": {"stream": stream, "jsonn": True}}),
            "run_read_only with a bad argument",
        )
        check(bad.startswith("invalid arguments for stream_info"), f"bad argument: {bad!r}")
        print(f"bad argument: {bad}")
        good = command_result(
            await c.call_tool("run_read_only", {"tool": "stream_info", "arguments": {"stream": stream, "json": True}}),
            "run_read_only stream_info",
        )
        check(good["exit_code"] == 0 and json.loads(good["output"])["config"]["name"] == stream, f"stream_info: {good!r}")
        print(f"ran: {good['command']}")

        declined = error_result(
            await c.call_tool("run", {"tool": "stream_rm", "arguments": {"stream": stream, "force": True}}),
            "run stream_rm declined",
        )
        cmd = f"stream rm --force -- {stream}"
        check(declined.startswith(f'Not approved: the user declined to run "{cmd}".'), f"declined: {declined!r}")
        check(len(PROMPTS) == 1 and cmd in PROMPTS[0], f"prompts {PROMPTS!r}")
        print(f"declined: {declined}")
        still = command_result(
            await c.call_tool("run_read_only", {"tool": "stream_info", "arguments": {"stream": stream}}),
            "stream_info after the refusal",
        )
        check(still["exit_code"] == 0, f"the stream is gone after a refusal: {still!r}")

        refused = error_result(
            await c.call_tool("run_read_only", {"tool": "stream_rm", "arguments": {"stream": stream, "force": True}}),
            "run_read_only stream_rm",
        )
        check("run_read_only runs only tools with the read-only hint" in refused and "`run`" in refused, f"refused: {refused!r}")
        check(len(PROMPTS) == 1, f"run_read_only asked for approval: {PROMPTS!r}")
        print(f"refused: {refused}")

    async with mcp.Client(f"{base}/kv", mode=args.mode, read_timeout_seconds=30) as kv:
        names = [tool.name for tool in (await kv.list_tools()).tools]
        check(names == FIXED, f"/mcp/kv tools {names!r}")
        found = answer(await kv.call_tool("search", {"query": "stream info"}), "search on /mcp/kv")
        listed = [m["name"] for m in found["matches"]]
        check(all(n.startswith("kv_") for n in listed), f"/mcp/kv search found {listed!r}")
        other = error_result(await kv.call_tool("run_read_only", {"tool": "stream_info", "arguments": {"stream": stream}}), "stream_info on /mcp/kv")
        check('no such tool: "stream_info"' in other, f"/mcp/kv ran stream_info: {other!r}")
        print(f"/mcp/kv: {listed}; {other}")


if __name__ == "__main__":
    p = http_parser(__doc__)
    p.add_argument("--stream", required=True, help="the stream the test created")
    run(main, p.parse_args())
