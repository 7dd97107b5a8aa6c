"""Text that travels, against the fixture server: the `hostile` command, whose help holds a
right-to-left override (U+202E) and whose flags have a Cyrillic letter and a zero-width space in
their names, is listed with its help intact; a 1 MB tool name and a 900 KB resource URI come
back capped in the error (its text at most a few KB, `data.uri` at most 1 KiB, with the whole
length beside it). With the official Python SDK (`--mode legacy` or `2026-07-28`; in the latter
only the listing: the SDK mirrors a name and a URI into the Mcp-Name header, which HTTP refuses,
or resets the connection, before MCP reads the body).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import check, run  # noqa: E402

import mcp  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

HELP = "Reverse \u202edesrever\u202c text, and look-alike flag names"


async def main(args: argparse.Namespace) -> None:
    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30) as c:
        listed = await c.list_tools()
        hostile = next((tool for tool in listed.tools if tool.name == "hostile"), None)
        check(hostile is not None, "the hostile command is not served")
        check((hostile.description or "").startswith(HELP), f"its help changed: {hostile.description!r}")
        properties = set((hostile.input_schema or {}).get("properties", {}))
        check({"n\u0430me", "zero\u200bwidth"} <= properties, f"its flags: {sorted(properties)!r}")
        print("hostile: listed with its help intact (U+202E, U+202C) and its look-alike flag names")
        if c.protocol_version == "2026-07-28":
            # The SDK mirrors a tool name and a URI into the Mcp-Name header, which HTTP refuses
            # (or resets) before MCP reads the body: the echoes are checked in legacy mode.
            return

        name = "x" * 1_000_000
        try:
            result = await c.call_tool(name, {})
            raise AssertionError(f"a 1 MB tool name was answered: {str(result)[:200]}")
        except MCPError as error:
            text = error.error.message
            whole = json.dumps({"message": text, "data": error.error.data})
            check(len(whole) <= 4096, f"the error is {len(whole)} bytes")
            if c.protocol_version == "2026-07-28":
                # The SDK mirrors the name into the Mcp-Name header, which HTTP refuses before
                # MCP reads the body: still a short error.
                print(f"1 MB tool name: refused, an error of {len(whole)} bytes: {text!r}")
            else:
                check("(1000000 bytes; the first 200 characters are shown)" in text, f"error {text[:400]!r}")
                print(f"1 MB tool name: -32602 error of {len(text)} bytes: {text[:30]}…{text[-60:]}")

        uri = "test://" + "u" * 900_000
        try:
            await c.read_resource(uri)
            raise AssertionError("a 900 KB URI was read")
        except MCPError as error:
            data = error.error.data or {}
            whole = json.dumps({"message": error.error.message, "data": data})
            check(len(whole) <= 4096, f"the error is {len(whole)} bytes")
            if c.protocol_version == "2026-07-28" and not data:
                print(f"900 KB URI: refused, an error of {len(whole)} bytes: {error.error.message!r}")
                return
            check(isinstance(data, dict) and len(data.get("uri", "")) <= 1024, f"data.uri {len(str(data.get('uri')))} bytes")
            check(data.get("uriBytes") == len(uri), f"data {str(data)[:200]}")
            print(f"900 KB URI: error of {len(whole)} bytes, data.uri {len(data['uri'])} bytes, uriBytes {data['uriBytes']}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True)
    p.add_argument("--mode", default="auto")
    run(main, p.parse_args())
