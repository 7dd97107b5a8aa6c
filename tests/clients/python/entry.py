"""Feeds one client entry printed by `<server> config --client KIND` to the Python SDK, the
way that client reads it: the server name and its fields from the client's own layout
(`mcpServers` for json and claude-desktop, `servers` for vscode, `mcp` for fx), then a stdio
session started from exactly `command`/`args` (or fx's `command` array), or an HTTP session at
exactly `url`. Lists the tools and calls task_list.

    entry.py --client KIND --name NAME --store FILE --entry ENTRY.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import check, run  # noqa: E402

import mcp  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402

LAYOUT = {"json": "mcpServers", "claude-desktop": "mcpServers", "vscode": "servers", "fx": "mcp"}


def target(kind: str, name: str, entry: dict, store: str) -> str | StdioServerParameters:
    top = LAYOUT[kind]
    check(list(entry) == [top], f"{kind}: the entry is not {{{top!r}: ...}}: {entry}")
    servers = entry[top]
    check(list(servers) == [name], f"{kind}: servers {list(servers)}, expected [{name!r}]")
    server = servers[name]
    env = dict(os.environ)
    env["TASKS_STORE"] = store
    cwd = os.path.dirname(os.path.abspath(store))
    if kind == "fx":
        check(
            set(server) <= {"type", "command", "url", "header_env", "bearer_token_env"},
            f"fx: keys {sorted(server)}",
        )
        if server["type"] == "local":
            command = server["command"]
            check(isinstance(command, list) and command, f"fx: command {command!r}")
            return StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
        check(server["type"] == "http", f"fx: type {server['type']!r}")
        return server["url"]
    if kind == "vscode":
        if server["type"] == "stdio":
            return StdioServerParameters(command=server["command"], args=server["args"], env=env, cwd=cwd)
        check(server["type"] == "http", f"vscode: type {server['type']!r}")
        return server["url"]
    if "url" in server:
        check(server.get("type") in ("streamable-http", "http"), f"{kind}: type {server.get('type')!r}")
        return server["url"]
    return StdioServerParameters(command=server["command"], args=server["args"], env=env, cwd=cwd)


async def main(args: argparse.Namespace) -> None:
    with open(args.entry, encoding="utf-8") as f:
        entry = json.load(f)
    where = target(args.client, args.name, entry, args.store)
    async with mcp.Client(where, read_timeout_seconds=30) as client:
        listed = await client.list_tools()
        names = [tool.name for tool in listed.tools]
        result = await client.call_tool("task_list", {})
        check(not result.is_error, f"task_list failed: {result.content!r}")
    kind = "stdio" if isinstance(where, StdioServerParameters) else "http"
    print(f"{args.client} {kind}: {' '.join(names)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--client", required=True, choices=sorted(LAYOUT))
    parser.add_argument("--name", required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--entry", required=True, help="a file holding the printed entry")
    run(main, parser.parse_args())
