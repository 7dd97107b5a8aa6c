"""The `telemetry` block of tasks-builtins-mcp (tests/fixtures/builtins.yaml), with the official
Python SDK making the calls and a real OTLP/HTTP receiver, the OpenTelemetry Collector's
`otlpreceiver` (tests/apps/otlpsink), writing every batch it accepts to `--spans` as a line of
OTLP/JSON.

The server runs an application that prints its environment, with `--task-after`; a command
whose `TRACESTATE` says `slow` sleeps long enough to become a task. The client calls a command
with a `_meta` trace context (directly, then as a task), knowledge_search, knowledge_enumerate,
an enumeration its query language refuses, and a tool nobody serves; then every span must arrive
with Fisk AI's names, kinds and attributes (docs/telemetry.md); a gated read_file the user
declines is two calls in 2026-07-28 (the question, then the answer), `unanswered` and
`confirm_denied`: one `execute_tool <tool>` server
span per call, parented on the client's `traceparent` when it sent one, with `retrieval` and
`knowledge_enumerate` spans inside the knowledge calls, and each command's `TRACEPARENT` naming
its call's span.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

import mcp
import mcp.types as types

from common import Failure, check, http_parser, run, text_of
from tasks import CreateTaskResult, Tasks, until

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
PARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
STATE = "rojo=00f067aa0ba902b7"
SLOW_STATE = "fisk=slow"
AGENT = "tasks-builtins"
SERVER, INTERNAL, CLIENT = 2, 1, 3
STATUS_ERROR = 2

# The spans the calls below must produce.
EXPECTED = 11


def received(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every span in the receiver's output so far, and the resources they came with."""
    spans: list[dict[str, Any]] = []
    resources: list[dict[str, Any]] = []
    if not path.exists():
        return spans, resources
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        for resource_spans in json.loads(line).get("resourceSpans", []):
            resources.append(attributes(resource_spans.get("resource", {})))
            for scope in resource_spans.get("scopeSpans", []):
                spans.extend(scope.get("spans", []))
    return spans, resources


def value_of(value: dict[str, Any]) -> Any:
    """An OTLP/JSON AnyValue as a plain value (int64 travels as a string)."""
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "boolValue" in value:
        return value["boolValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    raise Failure(f"an attribute value of an unexpected type: {value!r}")


def attributes(item: dict[str, Any]) -> dict[str, Any]:
    """A span's (or a resource's) attributes as plain values."""
    return {kv["key"]: value_of(kv.get("value", {})) for kv in item.get("attributes", [])}


def served_attributes(span: dict[str, Any], tool: str, outcome: str) -> dict[str, Any]:
    """What an `execute_tool` span carries (Fisk AI's served-call span); the request tag and
    the client's name are checked for presence, their values are the SDK's."""
    attrs = attributes(span)
    check(attrs.get("fisk.served.request", "") != "", f"{span['name']}: no fisk.served.request: {attrs!r}")
    check(attrs.get("fisk.served.sender", "") != "", f"{span['name']}: no fisk.served.sender: {attrs!r}")
    expected = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.type": "function",
        "gen_ai.agent.name": AGENT,
        "gen_ai.tool.name": tool,
        "fisk.tool.outcome": outcome,
        "fisk.served.request": attrs["fisk.served.request"],
        "fisk.served.sender": attrs["fisk.served.sender"],
        # Nobody signs in to this server: the transport vouches for no caller.
        "fisk.served.caller_verified": False,
    }
    return expected


def env_of(result: Any, what: str) -> dict[str, str]:
    parsed = json.loads(text_of(result))
    check(parsed.get("exit_code") == 0, f"{what}: the command failed: {parsed!r}")
    pairs = (line.split("=", 1) for line in parsed["output"].splitlines() if "=" in line)
    return {name: value for name, value in pairs}


async def calls(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, str]]:
    """Makes the calls; returns the environment of the direct command and the task's."""
    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30) as c:
        print(f"protocol: {c.protocol_version}")
        direct = env_of(await c.call_tool("task_list", {}, meta={"traceparent": PARENT, "tracestate": STATE}), "task_list")
        found = await c.call_tool("knowledge_search", {"query": "backpressure"})
        check(not found.is_error, f"knowledge_search failed: {found.content!r}")
        mapped = await c.call_tool("knowledge_enumerate", {"query": "retry"})
        check(not mapped.is_error, f"knowledge_enumerate failed: {mapped.content!r}")
        refused = await c.call_tool("knowledge_enumerate", {"query": "api OR web"})
        check(refused.is_error is True, f"a refused query answered {refused!r}")
        try:
            unknown = await c.call_tool("no_such_tool", {})
            check(unknown.is_error is True, f"a tool nobody serves answered {unknown!r}")
        except mcp.MCPError:
            pass
    async def decline(_ctx: Any, _params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30, elicitation_callback=decline) as c:
        declined = await c.call_tool("read_file", {"path": "notes.txt"})
        check(declined.is_error is True and "declined" in text_of(declined), f"a declined read_file answered {declined!r}")
    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30, extensions=[Tasks()]) as c:
        created = await c.session.call_tool(
            "task_list", {}, meta={"traceparent": PARENT, "tracestate": SLOW_STATE}, allow_claimed=True
        )
        check(isinstance(created, CreateTaskResult), f"the slow call was not a task: {created!r}")
        done = await until(c.session, created.task_id, lambda t: t.status != "working", "the task's end")
        check(done.status == "completed", f"the task ended {done.status}: {done!r}")
        deferred = env_of(types.CallToolResult.model_validate(done.result), "task")
    return direct, deferred


async def capacity(args: argparse.Namespace) -> None:
    """One tool slot (`--max-concurrent-tools 1`) and a 2 s tool timeout; every command
    sleeps past it. Three calls a little apart: the first holds the slot until its timeout,
    the second takes it then and holds it for another timeout, so the third, waiting longer
    than the tool timeout, is answered busy without running: `capacity`, a failed span with no
    exit code."""
    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30) as c:
        async def call(delay: float) -> Any:
            await asyncio.sleep(delay)
            return await c.call_tool("task_list", {})

        answers = await asyncio.gather(call(0.0), call(0.2), call(1.0))
    busy = [i for i, a in enumerate(answers) if a.is_error and "the server is busy" in text_of(a)]
    check(2 in busy, f"the third call was not answered busy: {[text_of(a) for a in answers]}")
    path = Path(args.spans)
    deadline = time.monotonic() + 20
    spans, _ = received(path)
    while len(spans) < 3 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        spans, _ = received(path)
    check(len(spans) == 3, f"the receiver got {len(spans)} spans, expected 3: {spans!r}")
    refused = [s for s in spans if attributes(s).get("fisk.tool.outcome") == "capacity"]
    check(len(refused) == len(busy), f"{len(refused)} capacity spans for {len(busy)} busy answers")
    for span in refused:
        check(span["name"] == "execute_tool task_list" and span["kind"] == SERVER, f"capacity span {span!r}")
        expected = {**served_attributes(span, "task_list", "capacity"), "error.type": "tool_error"}
        check(attributes(span) == expected, f"capacity attributes {attributes(span)!r}, expected {expected!r}")
        check(span.get("status", {}).get("code") == STATUS_ERROR, f"capacity status {span.get('status')!r}")
    print("capacity: execute_tool task_list capacity, tool_error, no exit code")


async def main(args: argparse.Namespace) -> None:
    if args.scenario == "capacity":
        await capacity(args)
        return
    direct, deferred = await calls(args)
    path = Path(args.spans)
    deadline = time.monotonic() + 20
    spans, resources = received(path)
    while len(spans) < EXPECTED and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        spans, resources = received(path)
    names = sorted(span["name"] for span in spans)
    check(len(spans) == EXPECTED, f"the receiver got {len(spans)} spans, expected {EXPECTED}: {names}")
    print(f"received: {names}")
    for resource in resources:
        check(resource.get("service.name") == AGENT, f"resource {resource!r}")
        check(resource.get("service.version", "") != "", f"resource without service.version {resource!r}")

    by_tool: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        if span["name"].startswith("execute_tool "):
            by_tool.setdefault(span["name"], []).append(span)
    children = {span.get("parentSpanId", ""): span for span in spans if not span["name"].startswith("execute_tool ")}

    # The command, directly and as a task: server spans in the client's trace, under the
    # client's span, and each command's TRACEPARENT is its call's span.
    commands = by_tool.get("execute_tool task_list", [])
    check(len(commands) == 2, f"{len(commands)} execute_tool task_list spans")
    for command in commands:
        check(command["kind"] == SERVER, f"task_list span kind {command['kind']}")
        check(command["traceId"] == TRACE_ID, f"task_list trace {command['traceId']}, expected the client's")
        check(command.get("parentSpanId") == PARENT_ID, f"task_list parent {command.get('parentSpanId')}")
    (executed,) = [s for s in commands if attributes(s)["fisk.tool.outcome"] == "executed"]
    expected = {**served_attributes(executed, "task_list", "executed"), "fisk.tool.exit_code": 0}
    check(attributes(executed) == expected, f"task_list attributes {attributes(executed)!r}, expected {expected!r}")
    own = f"00-{TRACE_ID}-{executed['spanId']}-01"
    check(direct.get("TRACEPARENT") == own, f"the command's TRACEPARENT {direct.get('TRACEPARENT')!r}, expected {own!r}")
    check(direct.get("TRACESTATE") == STATE, f"the command's TRACESTATE {direct.get('TRACESTATE')!r}")
    print("command: TRACEPARENT is the execute_tool task_list span, under the client's")

    (task,) = [s for s in commands if attributes(s)["fisk.tool.outcome"] == "deferred"]
    expected = served_attributes(task, "task_list", "deferred")
    check(attributes(task) == expected, f"deferred task_list attributes {attributes(task)!r}, expected {expected!r}")
    own = f"00-{TRACE_ID}-{task['spanId']}-01"
    check(deferred.get("TRACEPARENT") == own, f"the task's TRACEPARENT {deferred.get('TRACEPARENT')!r}, expected {own!r}")
    check(deferred.get("TRACESTATE") == SLOW_STATE, f"the task's TRACESTATE {deferred.get('TRACESTATE')!r}")
    print("task: TRACEPARENT is the deferred execute_tool task_list span")

    # knowledge_search: a retrieval span inside its call's span, Fisk AI's attributes.
    (search,) = by_tool.get("execute_tool knowledge_search", [None])
    check(search is not None, "no execute_tool knowledge_search span")
    expected = served_attributes(search, "knowledge_search", "executed")
    check(attributes(search) == expected, f"{attributes(search)!r}, expected {expected!r}")
    check(search.get("parentSpanId", "") == "", f"an untraced call has a parent: {search.get('parentSpanId')}")
    retrieval = children.get(search["spanId"])
    check(retrieval is not None and retrieval["name"] == "retrieval", f"no retrieval span under knowledge_search: {retrieval!r}")
    check(retrieval["kind"] == CLIENT and retrieval["traceId"] == search["traceId"], f"retrieval span {retrieval!r}")
    expected = {
        "gen_ai.operation.name": "retrieval",
        "fisk.knowledge.top_k": 3,
        "fisk.knowledge.tier.configured": "lexical",
        "fisk.knowledge.search.status": "ok",
        "fisk.knowledge.tier.effective": "lexical",
        "fisk.knowledge.indexed_chunks": args.chunks,
        "fisk.knowledge.sections": 2,
    }
    check(attributes(retrieval) == expected, f"retrieval attributes {attributes(retrieval)!r}, expected {expected!r}")
    print(f"retrieval: {sorted(expected)}")

    # knowledge_enumerate: its own span inside the call's, once answered and once refused.
    enumerations = by_tool.get("execute_tool knowledge_enumerate", [])
    check(len(enumerations) == 2, f"{len(enumerations)} execute_tool knowledge_enumerate spans")
    answered = [s for s in enumerations if attributes(s)["fisk.tool.outcome"] == "executed"]
    failed = [s for s in enumerations if attributes(s)["fisk.tool.outcome"] == "error"]
    check(len(answered) == 1 and len(failed) == 1, f"outcomes {[attributes(s) for s in enumerations]}")
    inner = children.get(answered[0]["spanId"])
    check(
        inner is not None and inner["name"] == "knowledge_enumerate" and inner["kind"] == INTERNAL,
        f"enumerate span {inner!r}",
    )
    expected = {
        "fisk.knowledge.enumerate.status": "ok",
        "fisk.knowledge.indexed_documents": 4,
        "fisk.knowledge.matched": 2,
        "fisk.knowledge.documents": 2,
    }
    check(attributes(inner) == expected, f"knowledge_enumerate attributes {attributes(inner)!r}, expected {expected!r}")
    print(f"knowledge_enumerate: {sorted(expected)}")
    expected = {**served_attributes(failed[0], "knowledge_enumerate", "error"), "error.type": "tool_error"}
    check(attributes(failed[0]) == expected, f"refused call attributes {attributes(failed[0])!r}")
    check(failed[0].get("status", {}).get("code") == STATUS_ERROR, f"refused call status {failed[0].get('status')!r}")
    refused_inner = children.get(failed[0]["spanId"])
    check(
        refused_inner is not None
        and refused_inner.get("status", {}).get("code") == STATUS_ERROR
        and attributes(refused_inner) == {"error.type": "invalid_query"},
        f"the refused enumeration's span {refused_inner!r}",
    )
    print("refused: execute_tool knowledge_enumerate error, tool_error; knowledge_enumerate invalid_query")

    # The gated read_file, declined: the question (unanswered), then the answer (confirm_denied).
    reads = by_tool.get("execute_tool read_file", [])
    outcomes = sorted(attributes(s)["fisk.tool.outcome"] for s in reads)
    check(outcomes == ["confirm_denied", "unanswered"], f"read_file outcomes {outcomes}")
    for span in reads:
        outcome = attributes(span)["fisk.tool.outcome"]
        expected = served_attributes(span, "read_file", outcome)
        if outcome == "confirm_denied":
            expected["error.type"] = "tool_error"
            check(span.get("status", {}).get("code") == STATUS_ERROR, f"a denial's status {span.get('status')!r}")
        check(attributes(span) == expected, f"read_file attributes {attributes(span)!r}, expected {expected!r}")
    print("declined: execute_tool read_file unanswered, then confirm_denied")

    # A tool nobody serves: the made-up name reaches an attribute, never the span's name.
    (unknown,) = by_tool.get("execute_tool unknown_tool", [None])
    check(unknown is not None, "no execute_tool unknown_tool span")
    expected = served_attributes(unknown, "", "unknown_tool")
    del expected["gen_ai.tool.name"]
    expected |= {"fisk.tool.requested_name": "no_such_tool", "error.type": "tool_error"}
    check(attributes(unknown) == expected, f"unknown tool attributes {attributes(unknown)!r}, expected {expected!r}")
    check(unknown.get("status", {}).get("code") == STATUS_ERROR, f"unknown tool status {unknown.get('status')!r}")
    print("unknown: execute_tool unknown_tool, fisk.tool.requested_name no_such_tool")


if __name__ == "__main__":
    p = http_parser(__doc__ or "")
    p.add_argument("--spans", required=True, help="the receiver's output: OTLP/JSON, a batch per line")
    p.add_argument("--scenario", choices=["calls", "capacity"], default="calls")
    p.add_argument("--chunks", type=int, default=0, help="the chunks the index holds")
    run(main, p.parse_args())
