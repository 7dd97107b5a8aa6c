"""A client's W3C trace context reaches the command, with the official Python SDK: the request's
`_meta` `traceparent` and `tracestate` (SEP-414) are set on the command as `TRACEPARENT` and
`TRACESTATE`; a malformed `traceparent` (and the `tracestate` beside it) is dropped and never
reaches the command.

The server runs an application that prints its environment (`--application-path` a script
that runs `env` whatever it is asked), so any tool's output is the command's environment.
"""

from __future__ import annotations

import argparse
import json

from common import check, http_parser, run, text_of

import mcp

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
STATE = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"


def env_of(result, what: str) -> dict[str, str]:
    parsed = json.loads(text_of(result))
    check(parsed.get("exit_code") == 0, f"{what}: the command failed: {parsed!r}")
    pairs = (line.split("=", 1) for line in parsed["output"].splitlines() if "=" in line)
    return {name: value for name, value in pairs}


async def main(args: argparse.Namespace) -> None:
    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30) as c:
        tool = args.tool
        env = env_of(await c.call_tool(tool, {}, meta={"traceparent": PARENT, "tracestate": STATE}), "traced")
        check(env.get("TRACEPARENT") == PARENT, f"TRACEPARENT {env.get('TRACEPARENT')!r}, expected {PARENT!r}")
        check(env.get("TRACESTATE") == STATE, f"TRACESTATE {env.get('TRACESTATE')!r}, expected {STATE!r}")
        print(f"traced ({c.protocol_version}): TRACEPARENT={env['TRACEPARENT']} TRACESTATE={env['TRACESTATE']}")

        junk = "00-not-a-trace-id\n-01; rm -rf /"
        env = env_of(await c.call_tool(tool, {}, meta={"traceparent": junk, "tracestate": STATE}), "junk")
        check("TRACEPARENT" not in env, f"a malformed traceparent reached the command: {env.get('TRACEPARENT')!r}")
        check("TRACESTATE" not in env, f"a tracestate without a valid traceparent reached it: {env.get('TRACESTATE')!r}")

        env = env_of(await c.call_tool(tool, {}, meta={"traceparent": PARENT, "tracestate": "BAD STATE"}), "bad state")
        check(env.get("TRACEPARENT") == PARENT, f"TRACEPARENT {env.get('TRACEPARENT')!r}")
        check("TRACESTATE" not in env, f"a malformed tracestate reached the command: {env.get('TRACESTATE')!r}")

        env = env_of(await c.call_tool(tool, {}), "untraced")
        check("TRACEPARENT" not in env, f"a call without trace context got TRACEPARENT {env.get('TRACEPARENT')!r}")
        print("malformed values dropped; no context, no variables")


if __name__ == "__main__":
    p = http_parser(__doc__ or "")
    p.add_argument("--tool", required=True, help="a tool that takes no arguments")
    run(main, p.parse_args())
