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
  frozen   the replica running a task is stopped (SIGSTOP) until another fails the task, then
           continued (SIGCONT): it finds its task failed, kills the command's process group, and
           every replica, its own included, answers the same `failed` from then on (a task ends
           once: it is never also completed or cancelled)
  flood    1,000 gated calls (tasks that ask at once) through nginx against `--max-tasks 64`:
           exactly 64 tasks are created, every other call is refused with the store-full text,
           and each of the 64 is `input_required` through nginx
  refused  one replica (`--url`) whose NATS server cannot be reached (`--reason`, as the refusal
           says it: a TLS server without its CA, a wrong password): a quick call answers; a slow
           call and a gated call are refused saying the shared task store cannot be reached, and
           why (not the store-full text)
  approvals  a gated call without the tasks extension (raw 2026-07-28 requests) asks on replica 1
           with a `requestState`; approved on replica 2 it runs; the same approval replayed on
           replica 3 is refused as already used (the shared record of used approvals)
  outage   with `--kill-pid` (the one nats-server): a task runs on replica 1 when the server is
           killed; replica 2 still answers a quick call, refuses a slow one (the shared task store
           cannot be reached) and answers `tasks/get` -32603 (the state is unknown), while
           replica 1 answers for its own task; the outage is made to last past the bound (12 s),
           and the task's id and process group are printed for `after`
  after    (`--task ID --pgid PGID`, the server back): the task is `failed` as a silent
           replica's, its process group is gone, every replica answers that one failure, and a
           new task completes
  cluster  with `--kill-pid` (a node of a three-node NATS cluster): a task runs across the
           replicas while the node is killed mid-run, and completes with its whole output; a
           task that completed before the kill keeps its result on every replica; a new task
           after that completes too
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
from request_state import Raw, command
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


async def frozen(args: argparse.Namespace) -> None:
    (one, one_pid), (two, _), (three, _) = args.replica
    async with connect(one) as a, connect(two) as b, connect(three) as c:
        created, pgid, runner = await started(a.session)
        check(runner == one_pid, f"the task runs in {runner}, not in replica 1 ({one_pid})")
        os.kill(one_pid, signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            failed = await until(b.session, created.task_id, lambda t: t.status != "working", "failure", limit=BOUND + 5)
            took = time.monotonic() - stopped
        finally:
            os.kill(one_pid, signal.SIGCONT)
        check(failed.status == "failed" and "fell silent" in (failed.error or {}).get("message", ""), f"while stopped: {failed!r}")
        check(took <= BOUND, f"failed {took:.1f}s after the stop, beyond the documented {BOUND}s")
        print(f"replica 1 stopped (SIGSTOP): its task failed through replica 2 after {took:.1f}s; continued (SIGCONT)")
        deadline = time.monotonic() + 10
        while group_members(pgid) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        check(group_members(pgid) == [], f"group {pgid} still runs {group_members(pgid)} after replica 1 continued")
        print(f"replica 1 found its task failed and killed group {pgid}")
        await asyncio.sleep(2.5)  # one more heartbeat: nothing may rewrite the record now
        for name, client in (("replica 1", a), ("replica 2", b), ("replica 3", c)):
            task = await get(client.session, created.task_id)
            check(task.status == "failed" and task.error == failed.error, f"{name} answers {task!r}, not the failure {failed.error!r}")
            check(task.result is None, f"{name}: a failed task with a result: {task.result!r}")
        print("every replica, replica 1 included, answers the one failure")


async def outage(args: argparse.Namespace) -> None:
    (one, one_pid), (two, _), _ = args.replica
    async with connect(one) as a, connect(two) as b:
        created, pgid, runner = await started(a.session)
        check(runner == one_pid, f"the task runs in {runner}, not in replica 1 ({one_pid})")
        os.kill(args.kill_pid, signal.SIGKILL)
        killed = time.monotonic()
        print("killed the nats-server while a task ran on replica 1")
        quick = await b.session.call_tool("ticker", ticker(0, "0s"), allow_claimed=True)
        check(isinstance(quick, types.CallToolResult) and not quick.is_error, f"a quick call: {quick!r}")
        slow = await b.session.call_tool("ticker", ticker(20, "100ms"), allow_claimed=True)
        check(isinstance(slow, types.CallToolResult) and slow.is_error, f"a slow call: {slow!r}")
        reason = "the shared task store cannot be reached, so no task can be created ("
        check(reason in text_of(slow), f"the slow call's refusal: {text_of(slow)!r}")
        try:
            answered = await get(b.session, created.task_id)
            raise AssertionError(f"replica 2 answered a task it cannot read: {answered!r}")
        except MCPError as error:
            unknown = "the shared task store cannot be read, so the task's state is unknown"
            check(error.error.code == -32603 and unknown in error.error.message, f"replica 2's tasks/get: {error.error!r}")
        own = await get(a.session, created.task_id)
        check(own.status == "working", f"replica 1 on its own task: {own!r}")
        print("NATS down: replica 2 answers a quick call, refuses a task, says the task's state is unknown; replica 1 answers for its own")
        await asyncio.sleep(max(0.0, BOUND + 0.5 - (time.monotonic() - killed)))
        print(f"outage task {created.task_id} {pgid}")


async def get_when_back(session: Any, task_id: str, limit: float = 20.0) -> DetailedTask:
    """`tasks/get`, retried while the replica's connection to NATS is still coming back."""
    deadline = time.monotonic() + limit
    while True:
        try:
            return await get(session, task_id)
        except MCPError as error:
            check(error.error.code == -32603 and time.monotonic() < deadline, f"tasks/get after the outage: {error.error!r}")
            await asyncio.sleep(0.2)


async def after(args: argparse.Namespace) -> None:
    (one, _), (two, _), (three, _) = args.replica
    async with connect(one) as a, connect(two) as b, connect(three) as c, connect(args.url) as lb:
        failed = await get_when_back(b.session, args.task)
        check(failed.status == "failed", f"after the outage: {failed!r}")
        message = (failed.error or {}).get("message", "")
        check("fell silent" in message and "lost its NATS connection" in message, f"error {failed.error!r}")
        print(f"after an outage past the bound the task is failed: {message}")
        deadline = time.monotonic() + 10
        while group_members(args.pgid) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        check(group_members(args.pgid) == [], f"group {args.pgid} still runs {group_members(args.pgid)}")
        print(f"replica 1 stopped its command: group {args.pgid} is gone")
        await asyncio.sleep(2.5)  # one more heartbeat: nothing may rewrite the record now
        for name, client in (("replica 1", a), ("replica 2", b), ("replica 3", c)):
            task = await get_when_back(client.session, args.task)
            check(task.status == "failed" and task.error == failed.error, f"{name} answers {task!r}, not {failed.error!r}")
        print("every replica, replica 1 included, answers the one failure")
        fresh = await lb.session.call_tool("ticker", ticker(3, "200ms"), allow_claimed=True)
        check(isinstance(fresh, CreateTaskResult), f"not a task after the outage: {fresh!r}")
        done = await until(b.session, fresh.task_id, lambda t: t.status != "working", "completion")
        check(done.status == "completed", f"a new task after the outage ended {done.status}")
        print("a task created after the outage completed")


async def approvals(args: argparse.Namespace) -> None:
    (one, _), (two, _), (three, _) = args.replica
    arguments = {"profile": "dev", "value": "once"}
    asked = Raw(one).call("tags_confirm", arguments)
    check(asked.get("resultType") == "input_required", f"replica 1: not asked: {asked!r}")
    state = asked.get("requestState")
    check(isinstance(state, str) and state, f"no requestState in {asked!r}")
    ran = command(Raw(two).call("tags_confirm", arguments, state, APPROVE), "approved on replica 2")
    check(ran["exit_code"] == 0 and '"tags confirm"' in ran["output"], f"the approved command {ran!r}")
    print("asked on replica 1, approved on replica 2: ran")
    again = Raw(three).send("tags_confirm", arguments, state, APPROVE)
    error = again.get("error") or {}
    check(error.get("code") == -32602 and "already used" in error.get("message", ""), f"the replay on replica 3: {again!r}")
    print(f"replayed on replica 3: refused: {error['message']}")


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
        earlier = await c.session.call_tool("ticker", ticker(3, "200ms"), allow_claimed=True)
        check(isinstance(earlier, CreateTaskResult), f"not a task: {earlier!r}")
        await until(a.session, earlier.task_id, lambda t: t.status == "completed", "the earlier task")
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
        for name, client in (("replica 1", a), ("replica 2", b), ("replica 3", c)):
            kept = await get(client.session, earlier.task_id)
            check(kept.status == "completed" and kept.result, f"{name}: the earlier task is {kept!r}")
            check("tick 3/3" in command_result(types.CallToolResult.model_validate(kept.result), "earlier")["output"], f"{name}: its result")
        print("the task that completed before the node died keeps its result on every replica")
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
        check(reason in text_of(slow) and args.reason in text_of(slow), f"the slow call's refusal: {text_of(slow)!r}")
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
    scenarios = {"across": across, "kill": kill, "frozen": frozen, "approvals": approvals, "flood": flood, "cluster": cluster, "outage": outage, "after": after}
    await scenarios[args.scenario](args)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True, help="nginx in front of the replicas")
    p.add_argument("--replica", action="append", default=[], help="URL=PID of one replica (three times)")
    p.add_argument("--scenario", required=True, choices=["across", "kill", "frozen", "approvals", "flood", "cluster", "outage", "after", "refused"])
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--max", type=int, default=64)
    p.add_argument("--kill-pid", type=int, default=0)
    p.add_argument("--task", default="", help="after: the task id `outage` printed")
    p.add_argument("--pgid", type=int, default=0, help="after: its command's process group")
    p.add_argument("--reason", default="the TLS handshake failed", help="refused: why NATS cannot be reached")
    run(main, p.parse_args())
