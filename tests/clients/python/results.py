"""What a call answers and sends beyond its text, with the official Python SDK: a non-zero exit
as a tool error (`exit_code_is_error`), task-required tools (`tasks.required`) and a command's
output lines as log notifications. Against `test-mcp` (the conformance fixture app's server,
config tests/fixtures/conformance.yaml), except `limits` (the fixture app's server, whose
`ticker` prints as many lines as asked).

The server is `--url` (streamable HTTP) or `--server PATH --app APP`, started over stdio by the
SDK (`logs` only). The SDK has no tasks API; the tasks client extension of tasks.py is reused. The HTTP status of
the -32021 refusal is read with raw HTTP (httpx), as the SDK does not expose it.

Scenarios (`--scenario`):

  exit      test_error_handling exits 1: `isError: true`, with the usual command result (text
            and structuredContent, exit_code 1); a command that exits 0 is `isError: false`. In
            2026-07-28 failing_job, a task, ends `completed` with `result.isError: true`
  required  failing_job and test_tool_with_task list `execution.taskSupport: "required"` (greet
            does not); without the tasks extension a call is refused with -32021 naming the
            extension in `data.requiredCapabilities` (HTTP 400 in 2026-07-28); with it, the quick
            test_tool_with_task asks for its name on the request, then is a task at once and
            completes with its greeting
  off       (a server started with --no-tasks) the task-required tools list no
            `execution` and answer on their request: failing_job is a plain tool error
  logs      test_tool_with_logging's three lines arrive as `notifications/message` (level info,
            logger the tool, data the line, in order) once the client asked for `info`
            (legacy: logging/setLevel; 2026-07-28: the request's _meta logLevel, and all of them
            before the result); none without asking, none at `warning`
  limits    a command printing 300 lines 5 ms apart: the first 256 are sent, in order; all at
            once: fewer (lines beyond the 128 waiting while the client is slower are dropped),
            in the order printed. Either way one warning then says how many were not sent, and
            the sent and unsent lines add up to what the command printed
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from typing import Any

import httpx
import mcp
import mcp.types as types
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError

from common import check, run, text_of
from tasks import EXTENSION, CreateTaskResult, Tasks, until

PROFILE = {"profile": "dev"}


def command(result: types.CallToolResult, what: str) -> dict[str, Any]:
    """The command result {command, exit_code, output, truncated} of `result`, error or not."""
    parsed = json.loads(text_of(result))
    check(isinstance(parsed, dict) and "exit_code" in parsed, f"{what}: not a command result: {parsed!r}")
    check(result.structured_content == parsed, f"{what}: structuredContent {result.structured_content!r}")
    return parsed


def client(args: argparse.Namespace, tasks: bool = False, **kwargs: Any) -> mcp.Client:
    endpoint: str | StdioServerParameters = args.url
    if not args.url:
        check(args.server and args.app, "give --url, or --server and --app")
        endpoint = StdioServerParameters(
            command=args.server, args=["--stdio", "--application-path", args.app], env=dict(os.environ)
        )
    return mcp.Client(
        endpoint, mode=args.mode, read_timeout_seconds=30, extensions=[Tasks()] if tasks else [], **kwargs
    )


async def exit_codes(args: argparse.Namespace) -> None:
    async with client(args) as c:
        failed = await c.call_tool("test_error_handling", {})
        check(failed.is_error is True, f"a non-zero exit is not a tool error: {failed!r}")
        ran = command(failed, "test_error_handling")
        check(ran["exit_code"] == 1, f"exit_code {ran['exit_code']}")
        check("intentionally returns an error" in ran["output"], f"output {ran['output']!r}")
        ok = await c.call_tool("test_simple_text", {})
        check(ok.is_error is False and command(ok, "test_simple_text")["exit_code"] == 0, f"{ok!r}")
        print(f"exit 1: isError true, exit_code 1 ({c.protocol_version}); exit 0: isError false")
    if args.mode != "2026-07-28":
        return
    async with client(args, tasks=True) as c:
        created = await c.session.call_tool("failing_job", {}, allow_claimed=True)
        check(isinstance(created, CreateTaskResult), f"failing_job was not a task: {created!r}")
        done = await until(c.session, created.task_id, lambda t: t.status not in ("working", "input_required"), "failing_job")
        check(done.status == "completed", f"failing_job ended {done.status}: {done!r}")
        result = types.CallToolResult.model_validate(done.result)
        check(result.is_error is True, f"the task's result is not a tool error: {done.result!r}")
        check(command(result, "failing_job")["exit_code"] == 1, f"{done.result!r}")
        print(f"failing_job: task {done.status}, result.isError true ({done.status_message!r})")


async def required(args: argparse.Namespace) -> None:
    async with client(args) as c:
        listed = {tool.name: tool for tool in (await c.list_tools()).tools}
        for name in ("failing_job", "test_tool_with_task"):
            execution = listed[name].execution
            check(execution is not None and execution.task_support == "required", f"{name}: {execution!r}")
        check(listed["greet"].execution is None, f"greet lists {listed['greet'].execution!r}")
        try:
            answer = await c.call_tool("failing_job", {})
            raise AssertionError(f"a task-required tool answered a client without tasks: {answer!r}")
        except MCPError as error:
            check(error.error.code == -32021, f"code {error.error.code}: {error.error.message}")
            data = error.error.data or {}
            extensions = (data.get("requiredCapabilities") or {}).get("extensions") or {}
            check(EXTENSION in extensions, f"data {data!r}")
            check("runs only as a task" in error.error.message, f"message {error.error.message!r}")
            print(f"without the extension ({c.protocol_version}): -32021 {error.error.message!r}")
    if args.mode != "2026-07-28":
        return
    await raw_refusal(args.url)
    async def never(_ctx: Any, _params: Any) -> types.ElicitResult:
        raise AssertionError("the question is answered by hand here")

    async with client(args, tasks=True, elicitation_callback=never) as c:
        # test_tool_with_task asks the user for its name (expose.agent.mcp.ask): the question is
        # asked on the request first, and the call that answers it is a task at once.
        first = await c.session.call_tool("test_tool_with_task", {}, allow_input_required=True, allow_claimed=True)
        check(isinstance(first, types.InputRequiredResult), f"round 1 is not input-required: {first!r}")
        check(list(first.input_requests or {}) == ["user_name"], f"round 1 asks {first.input_requests!r}")
        started = time.monotonic()
        created = await c.session.call_tool(
            "test_tool_with_task",
            {},
            input_responses={"user_name": types.ElicitResult(action="accept", content={"name": "Alice"})},
            request_state=first.request_state,
            allow_input_required=True,
            allow_claimed=True,
        )
        check(isinstance(created, CreateTaskResult), f"a task-required call was not a task: {created!r}")
        check(time.monotonic() - started < 0.45, "the task was not created at once (before tasks.after)")
        done = await until(c.session, created.task_id, lambda t: t.status == "completed", "test_tool_with_task")
        ran = command(types.CallToolResult.model_validate(done.result), "test_tool_with_task")
        check(ran["output"] == "Hello, Alice!\n", f"output {ran['output']!r}")
        print(f"with the extension: a task at once, completed: {ran['output']!r}")


async def off(args: argparse.Namespace) -> None:
    async with client(args) as c:
        listed = {tool.name: tool for tool in (await c.list_tools()).tools}
        check(all(tool.execution is None for tool in listed.values()), f"{listed['failing_job']!r}")
        failed = await c.call_tool("failing_job", {})
        check(failed.is_error is True and command(failed, "failing_job")["exit_code"] == 1, f"{failed!r}")
        print(f"tasks off ({c.protocol_version}): no taskSupport listed, failing_job answered on its request")


async def raw_refusal(url: str) -> None:
    """The -32021 refusal's HTTP status, which the SDK does not expose: one 2026-07-28 POST."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "results-raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "failing_job", "arguments": {}, "_meta": meta}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "failing_job",
    }
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(url, json=body, headers=headers)
    check(response.status_code == 400, f"HTTP {response.status_code}: {response.text!r}")
    check('"code":-32021' in response.text.replace(" ", ""), f"body {response.text!r}")
    print("raw HTTP (2026-07-28): 400 with -32021")


class Collector:
    """Log notifications, and whether each came before the call's result."""

    def __init__(self) -> None:
        self.seen: list[tuple[types.LoggingMessageNotificationParams, bool]] = []
        self.answered = False

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.seen.append((params, self.answered))

    async def call(self, c: mcp.Client, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        self.seen.clear()
        self.answered = False
        result = await c.call_tool(tool, arguments)
        self.answered = True
        return result

    async def settled(self, want: int, limit: float = 2.0) -> list[types.LoggingMessageNotificationParams]:
        """The notifications once `want` arrived (or `limit` passed), then 300 ms more."""
        deadline = time.monotonic() + limit
        while len(self.seen) < want and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        return [params for params, _ in self.seen]


LINES = ["Tool execution started", "Tool processing data", "Tool execution completed"]


def check_lines(got: list[types.LoggingMessageNotificationParams], what: str) -> None:
    check([p.data for p in got] == LINES, f"{what}: data {[p.data for p in got]!r}")
    check(all(p.level == "info" and p.logger == "test_tool_with_logging" for p in got), f"{what}: {got!r}")


async def logs(args: argparse.Namespace) -> None:
    logged = Collector()
    if args.mode == "legacy":
        async with client(args, logging_callback=logged) as c:
            await logged.call(c, "test_tool_with_logging", {})
            check(await logged.settled(1, 0.5) == [], f"logs before setLevel: {logged.seen!r}")
            await c.set_logging_level("info")
            await logged.call(c, "test_tool_with_logging", {})
            check_lines(await logged.settled(3), "after setLevel info")
            await c.set_logging_level("warning")
            await logged.call(c, "test_tool_with_logging", {})
            check(await logged.settled(1, 0.5) == [], f"logs at warning: {logged.seen!r}")
            print(f"legacy: none before setLevel, {LINES} at info, none at warning")
        return
    async with client(args, logging_callback=logged, log_level="info") as c:
        result = await logged.call(c, "test_tool_with_logging", {})
        check(command(result, "test_tool_with_logging")["exit_code"] == 0, f"{result!r}")
        check_lines(await logged.settled(3), "logLevel info")
        check(not any(late for _, late in logged.seen), f"a notification after the result: {logged.seen!r}")
    for level in (None, "warning"):
        quiet = Collector()
        async with client(args, logging_callback=quiet, log_level=level) as c:
            await quiet.call(c, "test_tool_with_logging", {})
            check(await quiet.settled(1, 0.5) == [], f"logs with logLevel {level}: {quiet.seen!r}")
    print(f"2026-07-28: {LINES} before the result at logLevel info; none without it or at warning")


async def limits(args: argparse.Namespace) -> None:
    # 300 lines 5 ms apart: the client keeps up, so exactly the first 256 are sent. 300 lines at
    # once: the lines beyond the 128 waiting are dropped too. Either way one warning ends them.
    for every, sent_all in (("5ms", True), ("0s", False)):
        logged = Collector()
        async with client(args, logging_callback=logged, log_level="debug") as c:
            if args.mode == "legacy":
                await c.set_logging_level("debug")
            result = await logged.call(c, "ticker", {**PROFILE, "count": 300, "every": every})
            output = command(result, "ticker")["output"]
            printed = [line for line in output.splitlines() if line.strip()]
            check(len(printed) > 300, f"the command printed {len(printed)} lines")
            got = await logged.settled(257)
            version = c.protocol_version
        lines = [p for p in got if p.level == "info"]
        check(0 < len(lines) <= 256, f"{len(lines)} lines sent")
        if sent_all:
            check([p.data for p in lines] == printed[:256], "the first 256 lines were not sent in order")
        rest = iter(printed)
        check(all(any(line == p.data for line in rest) for p in lines), "the lines sent are not printed lines, in order")
        notice = got[-1]
        check(notice.level == "warning" and notice.logger == "ticker", f"the last notification {notice!r}")
        unsent = int(str(notice.data).split()[0])
        check(len(lines) + unsent == len(printed), f"{len(lines)} sent + {unsent} not sent != {len(printed)} printed")
        check(len(got) == len(lines) + 1, f"{len(got)} notifications")
        print(f"limits ({version}, every {every}): {len(lines)} of {len(printed)} lines sent; notice {notice.data!r}")


async def main(args: argparse.Namespace) -> None:
    scenarios = {"exit": exit_codes, "required": required, "off": off, "logs": logs, "limits": limits}
    await scenarios[args.scenario](args)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", help="streamable HTTP endpoint")
    p.add_argument("--server", help="server binary to start over stdio (instead of --url)")
    p.add_argument("--app", help="the application path the stdio server runs")
    p.add_argument("--mode", default="auto", help="legacy or 2026-07-28")
    p.add_argument("--scenario", required=True, choices=["exit", "required", "off", "logs", "limits"])
    run(main, p.parse_args())
