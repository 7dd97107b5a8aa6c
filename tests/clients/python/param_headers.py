"""A parameter mirrored in an HTTP header (SEP-2243 `x-mcp-header`, config `param_headers`):
the conformance fixture's `test_prompt_with_embedded_resource.resourceUri` is advertised with
`"x-mcp-header": "Resource-Uri"`, and the server checks `Mcp-Param-Resource-Uri` against the
body on every 2026-07-28 `tools/call`.

    param_headers.py --url URL

1. The Python SDK (2026-07-28) lists the tool, sees the annotation, and calls it with an ASCII
   value and a non-ASCII one (which the SDK sends Base64-encoded): both run. The server
   rejects a call whose header is missing, so these calls show the SDK sent it.
2. Raw HTTP (httpx): the same call without the header, and with a header that differs from
   the body, is refused with HTTP 400 and the JSON-RPC error -32020 (HeaderMismatch); nothing
   runs.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Failure, check, command_result, http_parser, run  # noqa: E402

import httpx  # noqa: E402
import mcp  # noqa: E402

VERSION = "2026-07-28"
TOOL = "test_prompt_with_embedded_resource"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "raw-param-headers", "version": "1.0.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def raw_call(url: str, value: str, header: str | None) -> httpx.Response:
    """One 2026-07-28 tools/call with `Mcp-Param-Resource-Uri: header` (none when None)."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": "tools/call",
        "Mcp-Name": TOOL,
    }
    if header is not None:
        headers["Mcp-Param-Resource-Uri"] = header
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": TOOL, "arguments": {"resourceUri": value}, "_meta": META},
    }
    return httpx.post(url, json=body, headers=headers, timeout=30)


def refused(response: httpx.Response, what: str) -> str:
    """Checks an HTTP 400 with the JSON-RPC error -32020; returns its message."""
    check(response.status_code == 400, f"{what}: HTTP {response.status_code}: {response.text!r}")
    try:
        error = response.json().get("error") or {}
    except json.JSONDecodeError:
        raise Failure(f"{what}: not JSON: {response.text!r}") from None
    check(error.get("code") == -32020, f"{what}: not a header mismatch: {response.text!r}")
    return error.get("message", "")


async def main(args: Any) -> None:
    async with mcp.Client(args.url, mode=VERSION, read_timeout_seconds=30) as client:
        tools = (await client.list_tools()).tools
        tool = next((t for t in tools if t.name == TOOL), None)
        check(tool is not None, f"{TOOL} is not listed")
        annotation = tool.input_schema["properties"]["resourceUri"].get("x-mcp-header")
        check(annotation == "Resource-Uri", f"resourceUri's x-mcp-header: {annotation!r}")
        print(f"listed: resourceUri x-mcp-header {annotation}")
        for value in ("test://example-resource", "test://café/ünïcode"):
            result = await client.call_tool(TOOL, {"resourceUri": value})
            ran = command_result(result, f"call with {value!r}")
            check(ran["output"].strip() == value, f"printed {ran['output']!r}, sent {value!r}")
            print(f"sdk: mirrored and ran with {value}")

    message = refused(raw_call(args.url, "test://example-resource", None), "missing header")
    print(f"missing header: refused: {message}")
    message = refused(raw_call(args.url, "test://example-resource", "test://other"), "mismatch")
    print(f"mismatched header: refused: {message}")
    response = raw_call(args.url, "test://example-resource", "test://example-resource")
    check(response.status_code == 200, f"matching header: HTTP {response.status_code}: {response.text!r}")
    print("matching header: accepted")


if __name__ == "__main__":
    run(main, http_parser(__doc__).parse_args())
