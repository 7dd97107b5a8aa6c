"""Tasks shared by stateless replicas (docs/deploy.md, "Tasks across replicas"), with the
official Python SDK and the tasks extension of `tasks.py`, against replicas of the fixture app's
server that share a NATS JetStream KV bucket (`FISKGEN_MCP_TASK_STORE`), behind nginx round robin.

`--url` is nginx; `--replica URL=PID` (three times) names each replica directly, so a request can
be sent to a chosen one. A task's command runs as a child of the replica that created it, so the
replica running a task is found from its command's process group (`/proc/<pgid>/stat`).

Scenarios (`--scenario`):

  across   a task created on replica 1 is polled (status, elapsed time, output so far) through
           replicas 2 and 3 and nginx, cancelled through replica 2: it ends `cancelled` and its
           whole process group is gone; a gated call's task, created on replica 1, is approved
           with `tasks/update` through replica 3 and completes; a quick call answers directly
  kill     the replica running a task is killed (SIGKILL): through the others the task is
           `failed`, saying its replica fell silent, within the documented bound (12 s)
  flood    1,000 gated calls (tasks that ask at once) through nginx against `--max-tasks 64`:
           exactly 64 tasks are created, every other call is refused with the store-full text,
           and each of the 64 is `input_required` through nginx
  refused  one replica (`--url`) whose NATS server cannot be reached (a TLS server without its
           CA): a quick call answers; a slow call and a gated call are refused saying the shared
           task store cannot be reached, and why (not the store-full text)
  cluster  with `--kill-pid` (a node of a three-node NATS cluster): a task runs across the
           replicas while the node is killed mid-run, and completes with its whole output; a
           new task after that completes too
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import time
from typing import Any

import mcp
import mcp.types as types
from mcp.shared.exceptions import MCPError

from common import check, command_result, run, text_of
from tasks import (
    CreateTaskResult,
    DetailedTask,
    Tasks,
    cancel,
    detail,
    get,
    group_members,
    ticker,
    update,
    value_after,
)

APPROVE = {"confirm": {"action": "accept", "content": {"approve": True}}}
# The bound docs/deploy.md documents: a heartbeat every 2 s, failed after 10 s of silence.
BOUND = 12.0


async def ask_never(_ctx: Any, _params: Any) -> types.ElicitResult:
    raise AssertionError("asked by elicitation/create, not through the task")


def connect(url: str) -> mcp.Client:
    """A 2026-07-28 client that declares tasks and elicitation (so gated calls ask in a task)."""
    return mcp.Client(url, mode="2026-07-28", read_timeout_seconds=30, extensions=[Tasks()], elicitation_callback=ask_never)


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


async def until(session: Any, task_id: str, done: Any, what: str, limit: float = 20.0) -> DetailedTask:
    deadline = time.monotonic() + limit
    while True:
        task = await get(session, task_id)
        if done(task):
            return task
        check(time.monotonic() < deadline, f"{what}: not reached within {limit}s, last {task!r}")
        await asyncio.sleep(0.2)


async def started(session: Any) -> tuple[CreateTaskResult, int, int]:
    """A ticker task that spawns a background process, created through `session`: the task, its
    process group, and the pid of the replica running it."""
    created = await session.call_tool("ticker", ticker(600, "100ms", spawn=True), allow_claimed=True)
    check(isinstance(created, CreateTaskResult), f"a slow call was not a task: {created!r}")
    running = await until(session, created.task_id, lambda t: "pgid" in detail(t).get("output", ""), "pgid line")
    pgid = value_after(detail(running)["output"], "pgid")
    return created, pgid, parent_of(pgid)


async def across(args: argparse.Namespace) -> None:
    (one, one_pid), (two, _), (three, _) = args.replica
    async with connect(one) as a, connect(two) as b, connect(three) as c, connect(args.url) as lb:
        quick = await lb.session.call_tool("ticker", ticker(0, "0s"), allow_claimed=True)
        check(isinstance(quick, types.CallToolResult), f"a quick call became {quick!r}")
        print("quick call through nginx: answered directly")

        created, pgid, runner = await started(a.session)
        check(runner == one_pid, f"the task runs in {runner}, not in replica 1 ({one_pid})")
        for name, client in (("replica 2", b), ("replica 3", c), ("nginx", lb)):
            polled = await until(client.session, created.task_id, lambda t: "tick" in detail(t).get("output", ""), f"{name} output")
            info = detail(polled)
            check(polled.status == "working", f"{name}: {polled.status}")
            check(info["tool"] == "ticker" and info["elapsedMs"] > 0, f"{name}: detail {info!r}")
            check((polled.status_message or "").startswith("running for "), f"{name}: {polled.status_message!r}")
            print(f"polled through {name}: {polled.status}, {info['outputBytes']} bytes of output so far")
        members = group_members(pgid)
        check(len(members) >= 2, f"the command's group {pgid} holds {members}")
        await cancel(b.session, created.task_id)
        task = await get(c.session, created.task_id)
        check(task.status == "cancelled", f"after the cancel through replica 2, replica 3 says {task.status}")
        check(group_members(pgid) == [], f"group {pgid} still has {group_members(pgid)} after the cancel")
        print(f"cancelled through replica 2: cancelled on replica 3, group {pgid} ({len(members)} processes) is gone")
        try:
            await update(lb.session, created.task_id, APPROVE)
            raise AssertionError("tasks/update on a cancelled task was accepted")
        except MCPError as error:
            check(error.error.code == -32602 and "has ended (cancelled)" in error.error.message, f"update: {error.error!r}")

        gated = await a.session.call_tool("tags_confirm", {"profile": "dev", "value": "v"}, allow_claimed=True)
        check(isinstance(gated, CreateTaskResult), f"a gated call was not a task: {gated!r}")
        asking = await get(b.session, gated.task_id)
        check(asking.status == "input_required" and "confirm" in (asking.input_requests or {}), f"replica 2: {asking!r}")
        await update(c.session, gated.task_id, APPROVE)
        done = await until(lb.session, gated.task_id, lambda t: t.status not in ("working", "input_required"), "approved run")
        check(done.status == "completed", f"ended {done.status}: {done!r}")
        ran = command_result(types.CallToolResult.model_validate(done.result), "approved run")
        check(ran["exit_code"] == 0 and '"tags confirm"' in ran["output"], f"the approved command {ran!r}")
        print("approved through replica 3 a task asking on replica 1: completed")


async def kill(args: argparse.Namespace) -> None:
    (one, one_pid), (two, _), _ = args.replica
    async with connect(one) as a, connect(two) as b, connect(args.url) as lb:
        created, pgid, runner = await started(a.session)
        check(runner == one_pid, f"the task runs in {runner}, not in replica 1 ({one_pid})")
        before = await get(b.session, created.task_id)
        check(before.status == "working", f"before the kill: {before.status}")
        os.kill(one_pid, signal.SIGKILL)
        killed = time.monotonic()
        print("killed replica 1 (SIGKILL) while its task ran")
        failed = await until(b.session, created.task_id, lambda t: t.status != "working", "failure", limit=BOUND + 5)
        took = time.monotonic() - killed
        check(failed.status == "failed", f"ended {failed.status}: {failed!r}")
        message = (failed.error or {}).get("message", "")
        check("fell silent" in message and "killed, crashed or lost its NATS connection" in message, f"error {failed.error!r}")
        check(took <= BOUND, f"failed {took:.1f}s after the kill, beyond the documented {BOUND}s")
        again = await get(lb.session, created.task_id)
        check(again.status == "failed", f"through nginx: {again.status}")
        # The killed replica's command is an orphan now; the test cleans it up.
        for pid in group_members(pgid):
            os.kill(pid, signal.SIGKILL)
        print(f"failed {took:.1f}s after the kill (bound {BOUND:.0f}s): {message}")


async def flood(args: argparse.Namespace) -> None:
    async with connect(args.url) as lb:
        gate = asyncio.Semaphore(24)

        async def one(i: int) -> Any:
            async with gate:
                return await lb.session.call_tool("tags_confirm", {"profile": "dev", "value": f"v{i}"}, allow_claimed=True)

        answers = await asyncio.gather(*(one(i) for i in range(args.calls)))
        tasks = [a for a in answers if isinstance(a, CreateTaskResult)]
        refused = [a for a in answers if not isinstance(a, CreateTaskResult)]
        check(len(tasks) == args.max, f"{len(tasks)} tasks created against a max of {args.max}")
        expected = f"the task store is full: it holds {args.max} tasks (tasks.max, --max-tasks)"
        for answer in refused:
            check(isinstance(answer, types.CallToolResult) and answer.is_error, f"not a refusal: {answer!r}")
            check(expected in text_of(answer), f"a refusal that is not the store-full error: {text_of(answer)!r}")
        check(len({t.task_id for t in tasks}) == args.max, "task ids repeat")
        for task in tasks:
            polled = await get(lb.session, task.task_id)
            check(polled.status == "input_required", f"task {task.task_id}: {polled.status}")
        print(f"{args.calls} calls: {len(tasks)} tasks, {len(refused)} refused with the store-full error, every task held")
        for task in tasks:
            await cancel(lb.session, task.task_id)


async def cluster(args: argparse.Namespace) -> None:
    (one, _), (two, _), (three, _) = args.replica
    async with connect(one) as a, connect(two) as b, connect(three) as c:
        created = await a.session.call_tool("ticker", ticker(30, "200ms"), allow_claimed=True)
        check(isinstance(created, CreateTaskResult), f"not a task: {created!r}")
        await until(b.session, created.task_id, lambda t: "tick" in detail(t).get("output", ""), "output")
        os.kill(args.kill_pid, signal.SIGKILL)
        print("killed one NATS node mid-run")
        done = await until(c.session, created.task_id, lambda t: t.status != "working", "completion", limit=30)
        check(done.status == "completed", f"ended {done.status}: {done!r}")
        output = command_result(types.CallToolResult.model_validate(done.result), "ticker")["output"]
        check("tick 30/30" in output and "done" in output, f"the result misses the end: {output!r}")
        print("the task completed through the cluster with a node down")
        after = await b.session.call_tool("ticker", ticker(6, "200ms"), allow_claimed=True)
        check(isinstance(after, CreateTaskResult), f"not a task: {after!r}")
        done = await until(a.session, after.task_id, lambda t: t.status != "working", "completion", limit=30)
        check(done.status == "completed", f"ended {done.status}: {done!r}")
        print("a task created after the node died completed")


async def refused(args: argparse.Namespace) -> None:
    async with connect(args.url) as c:
        quick = await c.session.call_tool("ticker", ticker(0, "0s"), allow_claimed=True)
        check(isinstance(quick, types.CallToolResult) and not quick.is_error, f"a quick call: {quick!r}")
        reason = "the shared task store cannot be reached, so no task can be created ("
        slow = await c.session.call_tool("ticker", ticker(20, "100ms"), allow_claimed=True)
        check(isinstance(slow, types.CallToolResult) and slow.is_error, f"a slow call: {slow!r}")
        check(reason in text_of(slow) and "the TLS handshake failed" in text_of(slow), f"the slow call's refusal: {text_of(slow)!r}")
        check("task store is full" not in text_of(slow), f"refused as full: {text_of(slow)!r}")
        gated = await c.session.call_tool("tags_confirm", {"profile": "dev", "value": "v"}, allow_claimed=True)
        check(isinstance(gated, types.CallToolResult) and gated.is_error, f"a gated call: {gated!r}")
        check(reason in text_of(gated), f"the gated call's refusal: {text_of(gated)!r}")
        print(f"NATS unreachable: a quick call answers; a slow one is refused: {text_of(slow)}")


async def main(args: argparse.Namespace) -> None:
    args.replica = [(url, int(pid)) for url, pid in (r.rsplit("=", 1) for r in args.replica)]
    if args.scenario == "refused":
        await refused(args)
        return
    check(len(args.replica) == 3, "give three --replica URL=PID")
    await {"across": across, "kill": kill, "flood": flood, "cluster": cluster}[args.scenario](args)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True, help="nginx in front of the replicas")
    p.add_argument("--replica", action="append", default=[], help="URL=PID of one replica (three times)")
    p.add_argument("--scenario", required=True, choices=["across", "kill", "flood", "cluster", "refused"])
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--max", type=int, default=64)
    p.add_argument("--kill-pid", type=int, default=0)
    run(main, p.parse_args())
