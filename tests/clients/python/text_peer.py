"""A second, independent MCP server for a fisk application, built on the official Python SDK's
server: the benchmark's stand-in peer when `fisk mcp` cannot be built.

It introspects `--app` (`--fisk-introspect`), serves every visible leaf command not tagged
`ai:deny` as a tool named by its path (`task list` -> `task_list`) with fisk's restricted schema as its input schema, and
answers a call by running the command with the arguments as `--flag=value` (booleans as
`--flag` / `--no-flag`, repeatable flags once per item) and the positional arguments after
`--`, as fisk's own MCP mode does. Results carry text content only (no structuredContent), like
`fisk mcp`. Streamable HTTP on 127.0.0.1:`--port` at /mcp.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import Server

# A call's command is stopped after this long.
CALL_TIMEOUT = 30.0


def leaves(command: dict[str, Any], path: list[str]) -> list[tuple[list[str], dict[str, Any]]]:
    """Every visible leaf below `command`, with its command path."""
    found = []
    for sub in command.get("commands") or []:
        if sub.get("hidden") or "ai:deny" in (sub.get("tags") or []):
            continue
        sub_path = [*path, sub["name"]]
        if sub.get("commands"):
            found.extend(leaves(sub, sub_path))
        else:
            found.append((sub_path, sub))
    return found


def argv_for(path: list[str], command: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """The command line for a call: the path, the flags, then `--` and the positionals."""
    argv = list(path)
    flags = {flag["name"]: flag for flag in command.get("flags") or []}
    positional_names = [arg["name"] for arg in command.get("args") or []]
    for name, value in sorted(arguments.items()):
        if name in positional_names:
            continue
        flag = flags.get(name, {})
        if flag.get("boolean"):
            argv.append(f"--{name}" if value else f"--no-{name}")
        elif isinstance(value, list):
            argv.extend(f"--{name}={item}" for item in value)
        else:
            argv.append(f"--{name}={value}")
    positionals: list[str] = []
    for name in positional_names:
        value = arguments.get(name)
        if isinstance(value, list):
            positionals.extend(str(item) for item in value)
        elif value is not None:
            positionals.append(str(value))
    if positionals:
        argv.append("--")
        argv.extend(positionals)
    return argv


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--app", required=True, help="the fisk application")
    p.add_argument("--port", type=int, required=True, help="the HTTP port")
    args = p.parse_args()

    introspected = subprocess.run(
        [args.app, "--fisk-introspect"], capture_output=True, check=True, timeout=30
    )
    model = json.loads(introspected.stdout)
    commands = {"_".join(path): (path, command) for path, command in leaves(model, [])}
    tools = [
        types.Tool(
            name=name,
            description=command.get("help") or name,
            input_schema=command.get("restricted_schema") or {"type": "object"},
        )
        for name, (_, command) in commands.items()
    ]

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        found = commands.get(params.name)
        if found is None:
            text = f"unknown tool {params.name!r}"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        path, command = found
        argv = argv_for(path, command, params.arguments or {})
        process = await asyncio.create_subprocess_exec(
            args.app,
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), CALL_TIMEOUT)
        except (TimeoutError, asyncio.TimeoutError):
            process.kill()
            await process.wait()
            text = f"{' '.join(argv)} did not finish within {CALL_TIMEOUT:.0f}s"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        text = output.decode("utf-8", "replace")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=process.returncode != 0
        )

    server = Server(
        model.get("name") or "fisk-app", on_list_tools=list_tools, on_call_tool=call_tool
    )
    app = server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
