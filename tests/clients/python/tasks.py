"""Tasks (the SEP-2663 extension) and progress, with the official Python SDK, against the
fixture app's server (its `ticker` command prints a line per tick).

The SDK has no tasks API (mcp 2.3.0): this script adds a small client extension, as the SDK's
extension mechanism intends: it advertises `io.modelcontextprotocol/tasks`, claims the
`resultType: "task"` answer of `tools/call`, and sends `tasks/get`, `tasks/update` and
`tasks/cancel` as typed requests through the SDK's own session (which adds the 2026-07-28 `_meta`,
`Mcp-Method` and `Mcp-Name` itself). No raw HTTP is needed.

The server is `--url` (streamable HTTP) or `--server PATH --app APP [--flag=--task-after=500ms
...]`, started over stdio.

Scenarios (`--scenario`):

  lifecycle  a quick call answers directly; a slow one becomes a task that is polled (status,
             elapsed time, the output so far) until it completes, also through the claim's
             resolver; a task is cancelled and its whole process group is gone; a cancelled task
             polled again says so, takes no input, and a second cancel is acknowledged; an
             unknown task id is -32602
  full       with `--max-tasks 1`, a second long call is refused: the task store is full
  confirm    a gated tool (ai:confirm) called by a client that declares tasks becomes a task
             that asks for approval (input_required); `tasks/update` approves and it completes
  expiry     with `--task-ttl 1500ms`, a task still running at its TTL is killed and `failed`
  off        with `--no-tasks`, the extension is not declared and a slow call answers directly
  v1         a 2025-11-25 client using the experimental tasks of that revision (`params.task`,
             `tasks/list`), which rmcp 3.11 does not serve: the call answers on its request and
             `tasks/list` is -32601 (typed requests through the SDK session; the SDK has no API
             for them either)
  catalog    with `--catalog search`, a slow `ticker` run through the catalog's `run` becomes a
             task of `ticker` itself: polled (its output so far) until it completes, with the
             tool's own result
  progress   a call with a progress token gets notifications about once a second, progress
             strictly increasing, the latest output line as message, none after the result
             (`--mode legacy` and `--mode 2026-07-28`: both eras)
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import time
from typing import Any, Literal

import mcp
import mcp.types as types
import mcp_types
from mcp import StdioServerParameters
from mcp.client.extension import ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError

from common import check, command_result, run, text_of

EXTENSION = "io.modelcontextprotocol/tasks"
PROFILE = {"profile": "dev"}


class CreateTaskResult(mcp_types.Result):
    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskIdParams(mcp_types.RequestParams):
    task_id: str


class UpdateParams(mcp_types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class GetTask(mcp_types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class CancelTask(mcp_types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


class UpdateTask(mcp_types.Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateParams
    name_param = "taskId"


class DetailedTask(mcp_types.Result):
    result_type: str | None = None
    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
    poll_interval_ms: int | None = None


class Ack(mcp_types.Result):
    result_type: str | None = None


async def get(session: Any, task_id: str) -> DetailedTask:
    return await session.send_request(GetTask(params=TaskIdParams(task_id=task_id)), DetailedTask)


async def cancel(session: Any, task_id: str) -> Ack:
    return await session.send_request(CancelTask(params=TaskIdParams(task_id=task_id)), Ack)


async def update(session: Any, task_id: str, responses: dict[str, Any]) -> Ack:
    params = UpdateParams(task_id=task_id, input_responses=responses)
    return await session.send_request(UpdateTask(params=params), Ack)


def detail(task: DetailedTask) -> dict[str, Any]:
    """What the server adds to tasks/get under `_meta["fiskgen/task"]`."""
    meta = task.meta or {}
    found = meta.get("fiskgen/task") if isinstance(meta, dict) else None
    check(isinstance(found, dict), f"tasks/get has no _meta fiskgen/task: {task!r}")
    return found


async def until(session: Any, task_id: str, done: Any, what: str, limit: float = 15.0) -> DetailedTask:
    """Polls tasks/get every 100 ms until `done(task)` holds."""
    deadline = time.monotonic() + limit
    while True:
        task = await get(session, task_id)
        if done(task):
            return task
        check(time.monotonic() < deadline, f"{what}: not reached within {limit}s, last {task!r}")
        await asyncio.sleep(0.1)


async def resolve(created: CreateTaskResult, ctx: Any) -> types.CallToolResult:
    """The claim's resolver: polls until the task ends, as a client that knows tasks does."""
    task = await until(ctx.session, created.task_id, lambda t: t.status not in ("working", "input_required"), "resolve")
    check(task.status == "completed", f"the task ended {task.status}: {task!r}")
    return types.CallToolResult.model_validate(task.result)


class Tasks(ClientExtension):
    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=resolve)]


def digest(task_id: str) -> str:
    """How the server names a task in errors and logs: the first 8 hex digits of its SHA-256."""
    return hashlib.sha256(task_id.encode()).hexdigest()[:8]


def ticker(count: int, every: str, spawn: bool = False) -> dict[str, Any]:
    return {**PROFILE, "count": count, "every": every, "spawn": spawn}


def group_members(pgid: int) -> list[int]:
    """The processes whose process group is `pgid` (from /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after the last ')'.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry))
    return members


def value_after(output: str, word: str) -> int:
    for line in output.splitlines():
        if line.startswith(word + " "):
            return int(line.split()[1])
    raise AssertionError(f"no {word!r} line in {output!r}")


async def lifecycle(c: mcp.Client) -> None:
    session = c.session
    # A quick call is answered directly, even from a client that declares tasks.
    quick = await session.call_tool("ticker", ticker(0, "0s"), allow_claimed=True)
    check(isinstance(quick, types.CallToolResult), f"a quick call became {quick!r}")
    check("done" in command_result(quick, "quick ticker")["output"], "the quick call did not run")
    print("quick call: answered directly")

    # A slow one becomes a task: polled while it runs, then completed with the result inlined.
    created = await session.call_tool("ticker", ticker(8, "250ms"), allow_claimed=True)
    check(isinstance(created, CreateTaskResult), f"a slow call was not a task: {created!r}")
    # The caller checks that no task id reaches the server's log.
    print(f"task id: {created.task_id}")
    check(created.status == "working", f"created {created.status}")
    check(created.ttl_ms == 3_600_000 and created.poll_interval_ms == 1000, f"ttl/poll {created!r}")
    first = await until(session, created.task_id, lambda t: "tick" in detail(t).get("output", ""), "output so far")
    check(first.status == "working", f"polled {first.status}")
    check((first.status_message or "").startswith("running for "), f"statusMessage {first.status_message!r}")
    info = detail(first)
    check(info["tool"] == "ticker" and info["elapsedMs"] >= 500, f"detail {info!r}")
    check(info["outputBytes"] >= len(info["output"]) and info["outputTruncated"] is False, f"detail {info!r}")
    print(f"polled: {first.status_message!r}, {info['elapsedMs']} ms, {info['outputBytes']} bytes so far")
    done = await until(session, created.task_id, lambda t: t.status != "working", "completion")
    check(done.status == "completed", f"ended {done.status}: {done!r}")
    result = types.CallToolResult.model_validate(done.result)
    output = command_result(result, "task result")["output"]
    check("tick 8/8" in output and "done" in output, f"the result misses the end: {output!r}")
    print(f"completed: {done.status_message!r}")

    # Through the claim: call_tool resolves the task and returns the plain result.
    resolved = await c.call_tool("ticker", ticker(4, "250ms"))
    check("tick 4/4" in command_result(resolved, "resolved ticker")["output"], "resolve missed the end")
    print("resolved through the claim")

    # Cancel: the task ends cancelled and its whole process group is gone.
    created = await session.call_tool("ticker", ticker(600, "100ms", spawn=True), allow_claimed=True)
    check(isinstance(created, CreateTaskResult), f"not a task: {created!r}")
    running = await until(session, created.task_id, lambda t: "pgid" in detail(t).get("output", ""), "pgid line")
    output = detail(running)["output"]
    pgid, spawned = value_after(output, "pgid"), value_after(output, "spawned")
    check(spawned in group_members(pgid), f"the background process {spawned} is not in group {pgid}")
    ack = await cancel(session, created.task_id)
    check(ack.result_type in (None, "complete"), f"cancel ack {ack!r}")
    task = await get(session, created.task_id)
    check(task.status == "cancelled", f"after the cancel ack the task is {task.status}")
    check(group_members(pgid) == [], f"group {pgid} still has {group_members(pgid)} after the cancel")
    print(f"cancelled: group {pgid} (with background process {spawned}) is gone")

    # Polled again, it says what happened; a second cancel is acknowledged; it takes no input.
    again = await get(session, created.task_id)
    check(again.status == "cancelled" and again.result is None, f"polled again: {again!r}")
    check(
        (again.status_message or "").startswith(
            "cancelled by tasks/cancel; the command and everything it started were killed (after "
        ),
        f"statusMessage {again.status_message!r}",
    )
    await cancel(session, created.task_id)
    try:
        await update(session, created.task_id, {"confirm": {"action": "accept"}})
        raise AssertionError("tasks/update on a cancelled task was accepted")
    except MCPError as error:
        check(error.error.code == -32602, f"update code {error.error.code}")
        expected = f"task (id digest {digest(created.task_id)}) has ended (cancelled); it takes no more input"
        check(error.error.message == expected, f"update message {error.error.message!r}")
    print(f"polled again: {again.status_message!r}; update refused")

    # An unknown task id.
    try:
        await get(session, "no-such-task")
        raise AssertionError("tasks/get of an unknown id succeeded")
    except MCPError as error:
        check(error.error.code == -32602, f"unknown id code {error.error.code}")
        expected = f"unknown task (id digest {digest('no-such-task')}): this server holds no such task."
        check(error.error.message.startswith(expected), error.error.message)
        print(f"unknown id: {error.error.message}")


async def full(c: mcp.Client) -> None:
    session = c.session
    held = await session.call_tool("ticker", ticker(600, "100ms"), allow_claimed=True)
    check(isinstance(held, CreateTaskResult), f"not a task: {held!r}")
    refused = await session.call_tool("ticker", ticker(600, "100ms"), allow_claimed=True)
    check(isinstance(refused, types.CallToolResult) and refused.is_error, f"a second task in a store of one: {refused!r}")
    text = text_of(refused)
    check(
        "so it had to become a task, but the task store is full: it holds 1 task (tasks.max, --max-tasks), "
        "it is still running or waiting for approval; the command" in text,
        f"the refusal: {text!r}",
    )
    print(f"full: {text}")
    await cancel(session, held.task_id)


async def expiry(c: mcp.Client) -> None:
    session = c.session
    created = await session.call_tool("ticker", ticker(600, "100ms", spawn=True), allow_claimed=True)
    check(isinstance(created, CreateTaskResult), f"not a task: {created!r}")
    check(created.ttl_ms == 1500, f"ttlMs {created.ttl_ms}")
    running = await until(session, created.task_id, lambda t: "pgid" in detail(t).get("output", ""), "pgid line")
    pgid = value_after(detail(running)["output"], "pgid")
    ended = await until(session, created.task_id, lambda t: t.status != "working", "expiry", limit=10.0)
    check(ended.status == "failed", f"ended {ended.status}: {ended!r}")
    error = ended.error or {}
    check(error.get("code") == -32603, f"error {error!r}")
    check(
        error.get("message", "").startswith("task expired: its TTL (1.5s, tasks.ttl) passed before the command finished"),
        f"error {error!r}",
    )
    check(group_members(pgid) == [], f"group {pgid} outlived the TTL: {group_members(pgid)}")
    print(f"expired: {error['message']}")


async def off(c: mcp.Client) -> None:
    caps = c.server_capabilities
    extensions = getattr(caps, "extensions", None) or {}
    check(EXTENSION not in extensions, f"the extension is declared: {caps!r}")
    result = await c.session.call_tool("ticker", ticker(4, "250ms"), allow_claimed=True)
    check(isinstance(result, types.CallToolResult), f"a task although tasks are off: {result!r}")
    check("tick 4/4" in command_result(result, "ticker")["output"], "the call did not run to its end")
    print("off: answered directly, the extension not declared")


class V1CallParams(mcp_types.RequestParams):
    name: str
    arguments: dict[str, Any]
    task: dict[str, Any]


class V1Call(mcp_types.Request[V1CallParams, Literal["tools/call"]]):
    method: Literal["tools/call"] = "tools/call"
    params: V1CallParams


class V1ListParams(mcp_types.RequestParams):
    pass


class V1List(mcp_types.Request[V1ListParams, Literal["tasks/list"]]):
    method: Literal["tasks/list"] = "tasks/list"
    params: V1ListParams


async def v1(c: mcp.Client) -> None:
    check(c.protocol_version == "2025-11-25", f"negotiated {c.protocol_version}")
    params = V1CallParams(name="ticker", arguments=ticker(3, "300ms"), task={"ttl": 60000})
    result = await c.session.send_request(V1Call(params=params), types.CallToolResult)
    check("tick 3/3" in command_result(result, "v1 call")["output"], "the call did not run to its end")
    try:
        await c.session.send_request(V1List(params=V1ListParams()), Ack)
        raise AssertionError("tasks/list was answered")
    except MCPError as error:
        check(error.error.code == -32601, f"tasks/list code {error.error.code}: {error.error.message}")
    print("v1: params.task ignored (answered on the request), tasks/list -32601")


async def confirm(c: mcp.Client) -> None:
    session = c.session
    created = await session.call_tool("tags_confirm", {**PROFILE, "value": "v"}, allow_claimed=True)
    check(isinstance(created, CreateTaskResult), f"a gated call was not a task: {created!r}")
    print(f"task id: {created.task_id}")
    check(created.status == "input_required", f"created {created.status}")
    asking = await get(session, created.task_id)
    check(asking.status == "input_required", f"polled {asking.status}")
    question = (asking.input_requests or {}).get("confirm")
    check(isinstance(question, dict) and question.get("method") == "elicitation/create", f"inputRequests {asking.input_requests!r}")
    check("Gated by: ai:confirm" in question["params"]["message"], f"prompt {question!r}")
    print(f"asking: {asking.status_message!r}")
    await update(session, created.task_id, {"unrelated": 1})
    still = await get(session, created.task_id)
    check(still.status == "input_required", f"an unrelated key changed the task: {still.status}")
    await update(session, created.task_id, {"confirm": {"action": "accept", "content": {"approve": True}}})
    done = await until(session, created.task_id, lambda t: t.status in ("completed", "failed", "cancelled"), "approval run")
    check(done.status == "completed", f"ended {done.status}: {done!r}")
    ran = command_result(types.CallToolResult.model_validate(done.result), "approved run")
    check(ran["exit_code"] == 0 and '"tags confirm"' in ran["output"], f"the approved command {ran!r}")
    print(f"approved and completed: {done.status_message!r}")


async def catalog(c: mcp.Client) -> None:
    session = c.session
    names = [tool.name for tool in (await c.list_tools()).tools]
    check(names == ["search", "describe", "run_read_only", "run"], f"not in catalog mode: {names!r}")
    created = await session.call_tool("run", {"tool": "ticker", "arguments": ticker(8, "250ms")}, allow_claimed=True)
    check(isinstance(created, CreateTaskResult), f"a slow call through run was not a task: {created!r}")
    print(f"task id: {created.task_id}")
    running = await until(session, created.task_id, lambda t: "tick" in detail(t).get("output", ""), "output so far")
    check(detail(running)["tool"] == "ticker", f"the task is of {detail(running)['tool']!r}, not ticker")
    done = await until(session, created.task_id, lambda t: t.status != "working", "completion")
    check(done.status == "completed", f"ended {done.status}: {done!r}")
    output = command_result(types.CallToolResult.model_validate(done.result), "task result")["output"]
    check("tick 8/8" in output and "done" in output, f"the result misses the end: {output!r}")
    print(f"catalog run: a task of ticker, completed: {done.status_message!r}")


async def progress(c: mcp.Client) -> None:
    seen: list[tuple[float, float | None, str | None, float]] = []
    ended = False
    late: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        if ended:
            late.append(value)
        else:
            seen.append((value, total, message, time.monotonic()))

    result = await c.call_tool("ticker", ticker(6, "600ms"), progress_callback=on_progress)
    ended = True
    check("tick 6/6" in command_result(result, "ticker")["output"], "the call did not run to its end")
    values = [v for v, _, _, _ in seen]
    check(len(seen) >= 2, f"expected at least two notifications for a 3.6 s command, got {seen!r}")
    check(all(a < b for a, b in zip(values, values[1:])), f"progress is not strictly increasing: {values!r}")
    gaps = [b[3] - a[3] for a, b in zip(seen, seen[1:])]
    check(all(gap > 0.5 for gap in gaps), f"notifications closer than the rate limit: {gaps!r}")
    messages = [m for _, _, m, _ in seen]
    check(all(m is None or m.startswith(("tick ", "pgid ", "{")) for m in messages), f"messages {messages!r}")
    check(any(m and m.startswith("tick ") for m in messages), f"no output line as message: {messages!r}")
    await asyncio.sleep(1.5)
    check(late == [], f"notifications after the result: {late!r}")
    print(f"progress ({c.protocol_version}): {[(v, m) for v, _, m, _ in seen]}")


async def main(args: argparse.Namespace) -> None:
    extensions = [] if args.scenario in ("progress", "v1") else [Tasks()]

    async def approve_never(_ctx: Any, _params: Any) -> types.ElicitResult:
        raise AssertionError("asked by elicitation/create, not through the task")

    async with mcp.Client(
        target(args),
        mode=args.mode,
        read_timeout_seconds=30,
        extensions=extensions,
        elicitation_callback=approve_never if args.scenario == "confirm" else None,
    ) as c:
        print(f"protocol: {c.protocol_version}")
        scenarios = {"lifecycle": lifecycle, "full": full, "confirm": confirm, "expiry": expiry, "off": off, "v1": v1, "catalog": catalog}
        await {**scenarios, "progress": progress}[args.scenario](c)


def target(args: argparse.Namespace) -> str | StdioServerParameters:
    """The HTTP endpoint, or the server started over stdio with its own flags."""
    if args.url:
        return args.url
    check(args.server and args.app, "give --url, or --server and --app")
    return StdioServerParameters(
        command=args.server,
        args=["--stdio", "--application-path", args.app, *args.flag],
        env=dict(os.environ),
    )


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", help="streamable HTTP endpoint")
    p.add_argument("--server", help="server binary to start over stdio (instead of --url)")
    p.add_argument("--app", help="the application path the stdio server runs")
    p.add_argument("--flag", action="append", default=[], help="a flag for the stdio server (--flag=--task-after=500ms)")
    p.add_argument("--mode", default="auto")
    p.add_argument("--scenario", required=True, choices=["lifecycle", "full", "confirm", "expiry", "off", "v1", "catalog", "progress"])
    run(main, p.parse_args())
