"""Whose is it: tasks, their approvals and sessions belong to the principal that made them
(docs/security.md), driven with the official Python SDK and its tasks client extension
(`tasks.py`), plus raw HTTP (httpx) where the SDK hides the status.

Every scenario has an owner create a gated task (a tool tagged ai:confirm, called by a client
that declares tasks and form elicitation: a task at once, `input_required`) and a second
principal try to read it (`tasks/get`), approve it (`tasks/update` with `approve: true`) and
cancel it (`tasks/cancel`): each is refused with exactly the error of an id the server does not
hold, and the task is still waiting for the owner, who then reads it and approves it, and the
command runs once. Each task id is printed as `task id: <id>` so that the caller can check the
server's log never shows one.

  sessions  no credentials, legacy HTTP sessions (--url, --mode legacy): the second principal is
            another session; the fixture server's `tags_confirm`
  users     credentials required (the auth server, --url --dir --token): the second principal
            is another OAuth user, then the static token's holder; the demo's `task_delete`,
            whose store (--store) keeps the task until the owner approves (--mode legacy or
            2026-07-28); in 2026-07-28 mode first without tasks: the input-required result's
            requestState is bound to the owner, so another user's answer to it is refused and
            runs nothing, and the owner's runs; in legacy mode also: another user's token in the owner's session is
            404, as is DELETE of it, and the owner's DELETE is 204
  delete    no credentials (--url): the SDK ends its session without a complaint (it reports
            any status but 200 and 204 as a failed termination), DELETE of a live session is
            204 and of an unknown or ended one 404
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Any

import httpx2
import mcp
import mcp.types as types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from auth import mint  # noqa: E402
from common import check, read_store, run  # noqa: E402
from mcp.client.extension import ClientExtension  # noqa: E402
from request_state import Raw  # noqa: E402
from tasks import EXTENSION, CreateTaskResult, Tasks, cancel, digest, get, until, update  # noqa: E402

APPROVE = {"confirm": {"action": "accept", "content": {"approve": True}}}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def never_asked(_ctx: Any, _params: Any) -> types.ElicitResult:
    raise AssertionError("asked by elicitation/create, not through the task")


class LegacyTasks(ClientExtension):
    """The tasks extension declared at `initialize`: the SDK leaves out an extension whose
    result claims are inactive at the legacy version, so this one claims nothing, and the
    gated call is sent raw, its answer read as a CreateTaskResult."""

    identifier = EXTENSION


def connect(url: str, mode: str, headers: dict[str, str] | None = None) -> tuple[httpx2.AsyncClient, mcp.Client]:
    """An SDK client that declares tasks and form elicitation, sending `headers`."""
    http = httpx2.AsyncClient(headers=headers or {}, timeout=30)
    client = mcp.Client(
        streamable_http_client(url, http_client=http),
        mode=mode,
        read_timeout_seconds=30,
        extensions=[LegacyTasks()] if mode == "legacy" else [Tasks()],
        elicitation_callback=never_asked,
    )
    return http, client


async def refused(what: str, attempt: Any, unknown: str) -> None:
    """`attempt` fails with -32602 and exactly the message `unknown` of an id nobody holds."""
    try:
        await attempt
    except MCPError as error:
        check(error.error.code == -32602, f"{what}: code {error.error.code}: {error.error.message}")
        check(error.error.message == unknown, f"{what}: {error.error.message!r}, not the unknown-task error {unknown!r}")
        return
    raise AssertionError(f"{what}: answered")


async def unknown_message(session: Any, task_id: str) -> str:
    """The error text of an id the server does not hold, with `task_id`'s digest in its place
    (errors name a task by the digest of its id)."""
    made_up = "0" * 32
    try:
        await get(session, made_up)
    except MCPError as error:
        check(made_up not in error.error.message, f"the error names the id: {error.error.message!r}")
        return error.error.message.replace(digest(made_up), digest(task_id))
    raise AssertionError("a made-up task id was answered")


async def contest(owner: mcp.Client, other: mcp.Client, tool: str, arguments: dict[str, Any], who: str) -> str:
    """The owner's gated task; `other` can neither read, approve nor cancel it. Returns its id."""
    if owner.protocol_version == "2025-11-25":
        # The SDK checks a legacy tools/call answer against CallToolResult: the raw request,
        # through the session's own dispatcher, and the answer read as a CreateTaskResult.
        params = {"name": tool, "arguments": arguments}
        raw = await owner.session._dispatcher.send_raw_request("tools/call", params, {"timeout": 30})
        created = CreateTaskResult.model_validate(raw)
    else:
        created = await owner.session.call_tool(tool, arguments, allow_claimed=True)
    check(isinstance(created, CreateTaskResult), f"the gated call was not a task: {created!r}")
    check(created.status == "input_required", f"created {created.status}")
    task_id = created.task_id
    print(f"task id: {task_id}")
    unknown = await unknown_message(other.session, task_id)
    await refused(f"{who} tasks/get", get(other.session, task_id), unknown)
    await refused(f"{who} tasks/update", update(other.session, task_id, APPROVE), unknown)
    await refused(f"{who} tasks/cancel", cancel(other.session, task_id), unknown)
    still = await get(owner.session, task_id)
    check(still.status == "input_required", f"after {who}'s attempts the task is {still.status}")
    print(f"{who}: get, update and cancel refused as an unknown task; still {still.status}")
    return task_id


async def approve(owner: mcp.Client, task_id: str) -> types.CallToolResult:
    """The owner approves; the task completes with the command's result."""
    await update(owner.session, task_id, APPROVE)
    done = await until(owner.session, task_id, lambda t: t.status in ("completed", "failed", "cancelled"), "approval")
    check(done.status == "completed", f"ended {done.status}: {done!r}")
    return types.CallToolResult.model_validate(done.result)


async def sessions(args: argparse.Namespace) -> None:
    http_a, a = connect(args.url, args.mode)
    http_b, b = connect(args.url, args.mode)
    async with http_a, http_b, a, b:
        check(a.protocol_version == "2025-11-25", f"negotiated {a.protocol_version}")
        task_id = await contest(a, b, "tags_confirm", {"profile": "dev", "value": "v"}, "another session")
        result = await approve(a, task_id)
        text = result.content[0].text if result.content else ""
        check(not result.is_error and '"command":"tags confirm ' in text, f"the approved command {text!r}")
        print("the owner session approved and the command ran")


def store_ids(path: str) -> list[int]:
    return [task["id"] for task in read_store(path)["tasks"]]


def keep_one(store: str) -> None:
    """The store with task 1 alone."""
    with open(store, "w", encoding="utf-8") as f:
        task = {"id": 1, "title": "keep me", "priority": "low", "done": True, "created": "2026-01-01T00:00:00Z"}
        json.dump({"next_id": 2, "tasks": [task], "notes": []}, f)


def bound_state(url: str, store: str, alice: dict[str, str], bob: dict[str, str]) -> None:
    """2026-07-28 without tasks: alice is asked with an input-required result; bob's retry with
    her requestState and an approval is refused as an invalid state and runs nothing; hers runs."""
    owner, other = Raw(url), Raw(url)
    owner.http.headers.update(alice)
    other.http.headers.update(bob)
    asked = owner.call("task_delete", {"id": 1})
    check(asked.get("resultType") == "input_required", f"alice was not asked: {asked!r}")
    state = asked.get("requestState")
    check(isinstance(state, str) and state, f"no requestState in {asked!r}")
    theirs = other.send("task_delete", {"id": 1}, state, APPROVE)
    error = theirs.get("error") or {}
    check(
        "result" not in theirs and error.get("code") == -32602 and error.get("message", "").startswith("invalid requestState: "),
        f"bob's answer to alice's approval was not refused: {theirs!r}",
    )
    check(store_ids(store) == [1], f"bob's answer ran the command: the store holds {store_ids(store)}")
    ran = owner.call("task_delete", {"id": 1}, state, APPROVE)
    text = (ran.get("content") or [{}])[0].get("text", "")
    check(ran.get("resultType", "complete") == "complete" and not ran.get("isError"), f"alice's approval: {ran!r}")
    check(store_ids(store) == [], f"alice's approval did not run: the store holds {store_ids(store)} ({text!r})")
    print("another user's answer to alice's requestState is refused and runs nothing; hers runs")


async def users(args: argparse.Namespace) -> None:
    alice = {"Authorization": f"Bearer {mint(args.dir, sub='alice')}"}
    bob = {"Authorization": f"Bearer {mint(args.dir, sub='bob')}"}
    if args.mode != "legacy":
        keep_one(args.store)
        bound_state(args.url, args.store, alice, bob)
    keep_one(args.store)
    static = {"Authorization": f"Bearer {args.token}"}
    http_a, a = connect(args.url, args.mode, alice)
    http_b, b = connect(args.url, args.mode, bob)
    http_s, s = connect(args.url, args.mode, static)
    async with http_a, http_b, http_s, a, b, s:
        print(f"protocol: {a.protocol_version}")
        task_id = await contest(a, b, "task_delete", {"id": 1}, "another user")
        await contest_again(s, a, task_id, "the static token's holder")
        check(store_ids(args.store) == [1], f"the gated command ran: the store holds {store_ids(args.store)}")
        result = await approve(a, task_id)
        text = result.content[0].text if result.content else ""
        check(not result.is_error and "Deleted task #1" in text, f"the approved command {text!r}")
        check(store_ids(args.store) == [], f"the store after the approved run: {store_ids(args.store)}")
        print("the owner approved and the command ran once")
    if args.mode == "legacy":
        await bound_sessions(args.url, alice, bob)


async def contest_again(other: mcp.Client, owner: mcp.Client, task_id: str, who: str) -> None:
    unknown = await unknown_message(other.session, task_id)
    await refused(f"{who} tasks/get", get(other.session, task_id), unknown)
    await refused(f"{who} tasks/update", update(other.session, task_id, APPROVE), unknown)
    await refused(f"{who} tasks/cancel", cancel(other.session, task_id), unknown)
    still = await get(owner.session, task_id)
    check(still.status == "input_required", f"after {who}'s attempts the task is {still.status}")
    print(f"{who}: get, update and cancel refused as an unknown task; still {still.status}")


def initialize(url: str, headers: dict[str, str]) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "ownership.py", "version": "1"}},
    }
    response = httpx2.post(url, headers={**HEADERS, **headers}, json=body, timeout=10)
    check(response.status_code == 200, f"initialize: {response.status_code} {response.text}")
    session = response.headers.get("mcp-session-id", "")
    check(session, "initialize opened no session")
    return session


async def bound_sessions(url: str, alice: dict[str, str], bob: dict[str, str]) -> None:
    session = initialize(url, alice)
    in_session = {**HEADERS, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    theirs = httpx2.post(url, headers={**in_session, **bob}, json=listing, timeout=10)
    check(theirs.status_code == 404, f"another user's token in alice's session: {theirs.status_code} {theirs.text}")
    gone = httpx2.post(url, headers={**in_session, **bob, "Mcp-Session-Id": "no-such-session"}, json=listing, timeout=10)
    check(theirs.text == gone.text, f"the refusal differs from an unknown session's: {theirs.text!r} / {gone.text!r}")
    ended_by_bob = httpx2.delete(url, headers={**in_session, **bob}, timeout=10)
    check(ended_by_bob.status_code == 404, f"bob's DELETE of alice's session: {ended_by_bob.status_code}")
    hers = httpx2.post(url, headers={**in_session, **alice}, json=listing, timeout=10)
    check(hers.status_code == 200, f"alice in her own session: {hers.status_code} {hers.text}")
    ended = httpx2.delete(url, headers={**in_session, **alice}, timeout=10)
    check(ended.status_code in (200, 204), f"alice's DELETE of her session: {ended.status_code}")
    print("sessions: another user's token in a session is 404 (as an unknown one), and so is its DELETE; the owner's DELETE is 204")


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def delete(args: argparse.Namespace) -> None:
    collect = Collect()
    logging.getLogger().addHandler(collect)
    logging.getLogger().setLevel(logging.DEBUG)
    async with mcp.Client(args.url, mode="legacy", read_timeout_seconds=30) as c:
        check(c.protocol_version == "2025-11-25", f"negotiated {c.protocol_version}")
        await c.list_tools()
    failed = [line for line in collect.lines if "termination" in line.lower()]
    check(not failed, f"the SDK reported: {failed}")
    session = initialize(args.url, {})
    headers = {**HEADERS, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
    ended = httpx2.delete(args.url, headers=headers, timeout=10)
    check(ended.status_code == 204, f"DELETE of a live session: {ended.status_code}")
    again = httpx2.delete(args.url, headers=headers, timeout=10)
    check(again.status_code == 404, f"DELETE of an ended session: {again.status_code}")
    unknown = httpx2.delete(args.url, headers={**headers, "Mcp-Session-Id": "no-such-session"}, timeout=10)
    check(unknown.status_code == 404, f"DELETE of an unknown session: {unknown.status_code}")
    print("delete: the SDK ended its session quietly; a live session 204, an ended or unknown one 404")


async def main(args: argparse.Namespace) -> None:
    await {"sessions": sessions, "users": users, "delete": delete}[args.scenario](args)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True, help="streamable HTTP endpoint")
    p.add_argument("--mode", default="legacy")
    p.add_argument("--dir", help="the directory of auth.py keygen (users)")
    p.add_argument("--token", help="the server's static bearer token (users)")
    p.add_argument("--store", help="the demo app's store file, the server's TASKS_STORE (users)")
    p.add_argument("--scenario", required=True, choices=["sessions", "users", "delete"])
    run(main, p.parse_args())
