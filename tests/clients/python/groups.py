"""Groups as endpoints, with the real NATS CLI and the official Python SDK.

The server (built from tests/fixtures/nats-groups.yaml) serves `stream_info`, `stream_rm`,
`kv_ls` and `account_info` on `/mcp`, and each command group alone on `/mcp/<group>`. A client on
`/mcp/stream` sees only the stream tools and runs `stream_info`, and cannot run a tool of another
group; every group's entries are the whole list's entries for its tools, byte for byte in JSON;
an unknown tool there is a protocol error (-32602) as on `/mcp`; an unknown group is a 404
naming the groups; a legacy session opened on `/mcp` is unknown on
`/mcp/stream`.
"""

from __future__ import annotations

import argparse
import json

import httpx
import mcp

from common import check, command_result, http_parser, run

GROUPS = {"stream": ["stream_info", "stream_rm"], "kv": ["kv_ls"], "account": ["account_info"]}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def entries(tools: list) -> dict[str, str]:
    """Each tool's entry as compact JSON, by name."""
    return {tool.name: json.dumps(tool.model_dump(by_alias=True, exclude_none=True), sort_keys=True) for tool in tools}


async def main(args: argparse.Namespace) -> None:
    base = args.url.rstrip("/")
    async with mcp.Client(base, mode=args.mode, read_timeout_seconds=30) as whole:
        everything = entries((await whole.list_tools()).tools)
    check(sorted(everything) == sorted(n for names in GROUPS.values() for n in names), f"whole list {sorted(everything)!r}")

    for group, names in GROUPS.items():
        async with mcp.Client(f"{base}/{group}", mode=args.mode, read_timeout_seconds=30) as part:
            listed = entries((await part.list_tools()).tools)
            check(list(listed) == names, f"/mcp/{group} lists {list(listed)!r}, not {names!r}")
            for name, entry in listed.items():
                check(entry == everything[name], f"/mcp/{group}: the entry of {name} differs from the whole list's")
            size = sum(len(entry) for entry in listed.values())
            check(size <= sum(len(everything[n]) for n in names), f"/mcp/{group}: {size} bytes")
            print(f"/mcp/{group}: {len(listed)} tools, {size} bytes of entries")
            if group == "stream":
                info = command_result(await part.call_tool("stream_info", {"stream": args.stream, "json": True}), "stream_info")
                check(info["exit_code"] == 0, f"stream_info failed: {info['output']!r}")
                check(json.loads(info["output"])["config"]["name"] == args.stream, "stream_info named another stream")
                print(f"/mcp/stream ran: {info['command']}")
                try:
                    other = await part.call_tool("kv_ls", {})
                except mcp.MCPError as error:
                    check(error.code == -32602, f"/mcp/stream refused kv_ls with code {error.code}")
                    print(f"/mcp/stream refused kv_ls: {error.message}")
                else:
                    check(False, f"/mcp/stream ran kv_ls: {other!r}")

    async with httpx.AsyncClient(timeout=30) as http:
        missing = await http.post(f"{base}/nope", headers=HEADERS, content="{}")
        check(missing.status_code == 404, f"/mcp/nope answered {missing.status_code}")
        check("account, kv, stream" in missing.text, f"/mcp/nope: {missing.text!r}")
        print(f"/mcp/nope: 404 {missing.text}")
        if args.mode == "legacy":
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "groups", "version": "1"}},
            }
            opened = await http.post(base, headers=HEADERS, json=init)
            session = opened.headers.get("mcp-session-id")
            check(opened.status_code == 200 and session, f"initialize on /mcp: {opened.status_code} {opened.text!r}")
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            crossed = await http.post(f"{base}/stream", headers={**HEADERS, "mcp-session-id": session}, json=listing)
            check(crossed.status_code == 404, f"a /mcp session on /mcp/stream answered {crossed.status_code}: {crossed.text!r}")
            print(f"a /mcp session on /mcp/stream: {crossed.status_code}")


if __name__ == "__main__":
    p = http_parser(__doc__)
    p.add_argument("--stream", required=True, help="the stream the test created")
    run(main, p.parse_args())
