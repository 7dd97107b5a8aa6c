"""A client's W3C trace context reaches the command, with the official Python SDK: the request's
`_meta` `traceparent` and `tracestate` (SEP-414) are set on the command as `TRACEPARENT` and
`TRACESTATE`; a malformed `traceparent` (and the `tracestate` beside it) is dropped and never
reaches the command. The server was started with a `TRACEPARENT` and `TRACESTATE` of its own
(`--inherited`), which no command may see. With `--task-tool`, a traced call of that tool
becomes a task (the server runs with `--task-after`, the tool's command is slow) and its
command gets the call's context too (2026-07-28, the tasks extension of tasks.py).

The server runs an application that prints its environment (`--application-path` a script
that runs `env` whatever it is asked), so any tool's output is the command's environment.
"""

from __future__ import annotations

import argparse
import json

from common import check, http_parser, run, text_of
from tasks import CreateTaskResult, Tasks, until

import mcp
import mcp.types as types

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
STATE = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"


def env_of(result, what: str) -> dict[str, str]:
    parsed = json.loads(text_of(result))
    check(parsed.get("exit_code") == 0, f"{what}: the command failed: {parsed!r}")
    pairs = (line.split("=", 1) for line in parsed["output"].splitlines() if "=" in line)
    return {name: value for name, value in pairs}


async def main(args: argparse.Namespace) -> None:
    extensions = [Tasks()] if args.task_tool else []
    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30, extensions=extensions) as c:
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

        env = env_of(await c.call_tool(tool, {}, meta={"traceparent": PARENT}), "traceparent alone")
        check(env.get("TRACEPARENT") == PARENT, f"TRACEPARENT {env.get('TRACEPARENT')!r}")
        check("TRACESTATE" not in env, f"the server's own TRACESTATE reached the command: {env.get('TRACESTATE')!r}")

        env = env_of(await c.call_tool(tool, {}), "untraced")
        check("TRACEPARENT" not in env, f"a call without trace context got TRACEPARENT {env.get('TRACEPARENT')!r}")
        check("TRACESTATE" not in env, f"a call without trace context got TRACESTATE {env.get('TRACESTATE')!r}")
        for name, value in (args.inherited or {}).items():
            check(value not in env.values(), f"the server's own {name} reached a command")
        print("malformed values dropped; no context, no variables, nothing inherited")

        if args.task_tool:
            created = await c.session.call_tool(
                args.task_tool, {}, meta={"traceparent": PARENT, "tracestate": STATE}, allow_claimed=True
            )
            check(isinstance(created, CreateTaskResult), f"the slow call was not a task: {created!r}")
            done = await until(c.session, created.task_id, lambda t: t.status != "working", "the task's end")
            check(done.status == "completed", f"the task ended {done.status}: {done!r}")
            env = env_of(types.CallToolResult.model_validate(done.result), "task")
            check(env.get("TRACEPARENT") == PARENT, f"task: TRACEPARENT {env.get('TRACEPARENT')!r}, expected {PARENT!r}")
            check(env.get("TRACESTATE") == STATE, f"task: TRACESTATE {env.get('TRACESTATE')!r}, expected {STATE!r}")
            print(f"task: TRACEPARENT={env['TRACEPARENT']} TRACESTATE={env['TRACESTATE']}")


if __name__ == "__main__":
    p = http_parser(__doc__ or "")
    p.add_argument("--tool", required=True, help="a tool that takes no arguments")
    p.add_argument("--task-tool", default="", help="a tool without arguments whose call becomes a task")
    p.add_argument("--inherited", type=json.loads, default={}, help="the server's own variables, as JSON")
    run(main, p.parse_args())
