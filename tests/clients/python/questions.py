"""Questions (expose.agent.mcp.ask) with the official Python SDK, against the conformance fixture
app's server (tests/fixtures/conformance.yaml): parameters the user answers, not the model.

The server is `--url http://127.0.0.1:PORT/mcp` (with `--mode legacy|2026-07-28`) or
`--server PATH --app PATH` (stdio). `--case` picks what is checked:

  answers   test_input_required_result_elicitation: `name` is not in the advertised schema; the
            user is asked once (form: `name`, a required string with its help) and the command
            runs with the answer.
  rounds    test_input_required_result_multi_round: both questions asked (step1 before step2 in
            a legacy session); the command runs with both answers.
  defaults  test_elicitation_sep1034_defaults: the form carries each flag's type and default.
  decline   the user declines: "Not run: the user declined to answer ...".
  cancel    the user dismisses the form: "Not run: the user dismissed ...".
  invalid   the answer has the wrong type (name: 12345). 2026-07-28: asked again, saying why,
            then the right answer runs it; legacy: refused, saying why.
  none      the client declares no elicitation: refused, nothing runs.
  model     the model passes the asked parameter itself: refused, nobody is asked.
  approval  confirm_greeting (asked and ai:confirm): the question first, then the approval of
            the command line that carries the answer.
  manual    2026-07-28, driving the rounds by hand: the first round asks both questions with a
            sealed requestState; answering one asks only the other, with a new state; a state
            that does not verify is refused (-32602).
  task      a client that declares the tasks extension (the client extension of tasks.py): a
            call with questions becomes a task that asks inside it. multi_input's two questions
            are answered one `tasks/update` at a time (only the pending key stays shown);
            confirm_greeting's unfit answer is asked again, then its approval shows the command
            line with the answer; a declined question completes the task with the refusal.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import mcp
import mcp.types as types
from mcp import StdioServerParameters

from common import check, command_result, run, text_of
from tasks import CreateTaskResult, Tasks, get, until, update

HELLO = "test_input_required_result_elicitation"
ROUNDS = "test_input_required_result_multi_round"
DEFAULTS = "test_elicitation_sep1034_defaults"
GATED = "confirm_greeting"


def target(args: argparse.Namespace) -> str | StdioServerParameters:
    if args.url:
        return args.url
    check(args.server and args.app, "give --url, or --server and --app")
    return StdioServerParameters(command=args.server, args=["--stdio", "--application-path", args.app])


def schema_of(params: types.ElicitRequestParams) -> dict[str, Any]:
    return json.loads(json.dumps(params.requested_schema, default=lambda o: o.model_dump(by_alias=True)))


def accept(content: dict[str, Any]) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


def field_of(schema: dict[str, Any]) -> str:
    """The one field a question's form asks for."""
    names = list(schema.get("properties", {}))
    check(len(names) == 1, f"expected a one-field form, got {schema!r}")
    return names[0]


def refused(result: types.CallToolResult, start: str) -> str:
    text = text_of(result)
    print(f"text: {text}")
    check(result.is_error, f"expected an error result, got {text!r}")
    check(text.startswith(start), f"text {text!r} does not start with {start!r}")
    check('"exit_code"' not in text, f"a refusal carries command output: {text!r}")
    return text


async def manual(c: mcp.Client) -> None:
    """Drives the 2026-07-28 rounds of test_input_required_result_multi_round by hand."""
    first = await c.session.call_tool(ROUNDS, {}, allow_input_required=True)
    check(isinstance(first, types.InputRequiredResult), f"round 1 is not input-required: {first!r}")
    check(sorted(first.input_requests or {}) == ["step1", "step2"], f"round 1 asks {first.input_requests!r}")
    check(bool(first.request_state), "round 1 has no requestState")
    second = await c.session.call_tool(
        ROUNDS,
        {},
        input_responses={"step1": accept({"name": "Alice"})},
        request_state=first.request_state,
        allow_input_required=True,
    )
    check(isinstance(second, types.InputRequiredResult), f"round 2 is not input-required: {second!r}")
    check(list(second.input_requests or {}) == ["step2"], f"round 2 asks {second.input_requests!r}")
    check(second.request_state and second.request_state != first.request_state, "round 2 kept the old state")
    third = await c.session.call_tool(
        ROUNDS,
        {},
        input_responses={"step2": accept({"color": "blue"})},
        request_state=second.request_state,
        allow_input_required=True,
    )
    ran = command_result(third, ROUNDS)
    check("Hello, Alice! Your favourite colour is blue." in ran["output"], f"output {ran['output']!r}")
    print("rounds: step1+step2, then step2, then ran")
    try:
        await c.session.call_tool(
            ROUNDS,
            {},
            input_responses={"step2": accept({"color": "red"})},
            request_state=second.request_state + "x",
            allow_input_required=True,
        )
    except mcp.MCPError as error:
        check(error.code == -32602, f"a bad state: error {error.code}, expected -32602")
        check("invalid requestState" in error.message, f"a bad state: {error.message!r}")
        print(f"bad state: {error.code} {error.message}")
        return
    raise AssertionError("a state that does not verify was accepted")


def asking(keys: list[str]) -> Any:
    """A tasks/get predicate: the task asks for exactly `keys`."""
    return lambda t: t.status == "input_required" and sorted(t.input_requests or {}) == keys


def ended(task: Any) -> bool:
    return task.status in ("completed", "failed", "cancelled")


async def in_task(c: mcp.Client) -> None:
    """Questions inside tasks, answered with tasks/update."""
    session = c.session
    created = await session.call_tool("multi_input", {}, allow_claimed=True)
    check(isinstance(created, CreateTaskResult), f"a call with questions was not a task: {created!r}")
    check(created.status == "input_required", f"created {created.status}")
    both = await until(session, created.task_id, asking(["sure", "who"]), "both questions")
    check(both.input_requests["who"]["method"] == "elicitation/create", f"inputRequests {both.input_requests!r}")
    await update(session, created.task_id, {"who": accept({"name": "partial-1", "confirm": True})})
    one = await get(session, created.task_id)
    check(asking(["sure"])(one), f"after a partial answer: {one.status} {sorted(one.input_requests or {})}")
    await update(session, created.task_id, {"sure": accept({"name": "partial-2", "confirm": True})})
    done = await until(session, created.task_id, ended, "multi_input")
    ran = command_result(types.CallToolResult.model_validate(done.result), "multi_input")
    check("multi_input: name=partial-1 confirm=true" in ran["output"], f"output {ran['output']!r}")
    print("partial: who, then sure, then ran")

    created = await session.call_tool(GATED, {}, allow_claimed=True)
    check(isinstance(created, CreateTaskResult), f"not a task: {created!r}")
    await until(session, created.task_id, asking(["who"]), "the question")
    await update(session, created.task_id, {"who": accept({"name": 12345})})
    again = await until(
        session,
        created.task_id,
        lambda t: asking(["who"])(t) and "previous answer" in t.input_requests["who"]["params"]["message"],
        "the question asked again",
    )
    message = again.input_requests["who"]["params"]["message"]
    check(message.startswith('Your previous answer could not be used: "name" must be a string, not 12345.'), message)
    await update(session, created.task_id, {"who": accept({"name": "Alice"})})
    approval = await until(session, created.task_id, asking(["confirm"]), "the approval")
    message = approval.input_requests["confirm"]["params"]["message"]
    check("Command: confirm_greeting --name=Alice" in message, f"approval {message!r}")
    await update(session, created.task_id, {"confirm": accept({"approve": True})})
    done = await until(session, created.task_id, ended, "confirm_greeting")
    ran = command_result(types.CallToolResult.model_validate(done.result), GATED)
    check("Hello, Alice! (approved)" in ran["output"], f"output {ran['output']!r}")
    print("gated: question, asked again, approval, ran")

    created = await session.call_tool(HELLO, {}, allow_claimed=True)
    await until(session, created.task_id, asking(["user_name"]), "the question")
    await update(session, created.task_id, {"user_name": {"action": "decline"}})
    done = await until(session, created.task_id, ended, "declined")
    check(done.status == "completed", f"ended {done.status}")
    result = types.CallToolResult.model_validate(done.result)
    refused(result, f'Not run: the user declined to answer the question "user_name" of {HELLO}')


async def main(args: argparse.Namespace) -> None:
    prompts: list[types.ElicitRequestParams] = []
    modern = args.mode == "2026-07-28"

    async def answer(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        prompts.append(params)
        schema = schema_of(params)
        if "approve" in schema.get("properties", {}):
            return accept({"approve": True})
        if args.case == "decline":
            return types.ElicitResult(action="decline")
        if args.case == "cancel":
            return types.ElicitResult(action="cancel")
        if args.case == "invalid" and len(prompts) == 1:
            return accept({"name": 12345})
        if args.case == "defaults":
            return accept({"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": False})
        field = field_of(schema)
        return accept({field: {"name": "Alice", "color": "blue"}[field]})

    async def never(_ctx: Any, _params: Any) -> types.ElicitResult:
        raise AssertionError("asked by elicitation/create, not through the task")

    callback = {"none": None, "task": never}.get(args.case, answer)
    extensions = [Tasks()] if args.case == "task" else []
    async with mcp.Client(
        target(args), mode=args.mode, read_timeout_seconds=30, elicitation_callback=callback, extensions=extensions
    ) as c:
        print(f"protocol: {c.protocol_version}")
        tools = {tool.name: tool for tool in (await c.list_tools()).tools}
        for name in [HELLO, ROUNDS, DEFAULTS, GATED]:
            properties = tools[name].input_schema.get("properties", {})
            check(properties == {}, f"{name} advertises the asked parameters: {properties!r}")
        if args.case == "manual":
            check(modern, "the manual rounds are a 2026-07-28 case")
            await manual(c)
            return
        if args.case == "task":
            await in_task(c)
            return

        tool = {"rounds": ROUNDS, "defaults": DEFAULTS, "approval": GATED}.get(args.case, HELLO)
        arguments = {"name": "Mallory"} if args.case == "model" else {}
        result = await c.call_tool(tool, arguments)

    print(f"asked: {[p.message.splitlines()[-2] for p in prompts]}")
    if args.case in ("none", "model"):
        check(prompts == [], f"the client was asked: {prompts!r}")
    if args.case == "none":
        refused(
            result,
            f'Not run: {HELLO} needs the user\'s answer to the question "user_name" (name), and this '
            "client cannot be asked (it does not support elicitation). The command did not run.",
        )
        return
    if args.case == "model":
        refused(result, f'Not run: parameter "name" of {HELLO} is the user\'s to answer (question "user_name")')
        return
    if args.case == "decline":
        refused(result, f'Not run: the user declined to answer the question "user_name" of {HELLO}')
        return
    if args.case == "cancel":
        refused(result, f'Not run: the user dismissed the question "user_name" of {HELLO} without answering')
        return
    if args.case == "invalid" and not modern:
        check(len(prompts) == 1, f"asked {len(prompts)} times")
        refused(
            result,
            f'Not run: the answer to the question "user_name" of {HELLO} does not fit: "name" must be a '
            "string, not 12345. The command did not run",
        )
        return

    first = prompts[0]
    check(getattr(first, "mode", "form") in (None, "form"), f"not a form: {first!r}")
    check(tool in first.message, f"the form does not name the tool: {first.message!r}")
    if args.case in ("answers", "invalid", "approval"):
        question = "who" if args.case == "approval" else "user_name"
        check(f"Question: {question}" in first.message, f"the form does not name the question: {first.message!r}")
        schema = schema_of(first)
        check(schema.get("required") == ["name"], f"form {schema!r} does not require name")
        name = schema["properties"]["name"]
        check(name.get("type") == "string" and name.get("description") == "Your name", f"name field {name!r}")
    if args.case == "invalid":
        check(len(prompts) == 2, f"expected the question twice, got {len(prompts)}")
        again = 'Your previous answer could not be used: "name" must be a string, not 12345.'
        check(prompts[1].message.startswith(again), f"second form {prompts[1].message!r}")
    if args.case == "rounds":
        asked = [field_of(schema_of(p)) for p in prompts]
        check(sorted(asked) == ["color", "name"], f"asked for {asked}")
        if not modern:
            check(asked == ["name", "color"], f"legacy order {asked}")
    if args.case == "defaults":
        props = schema_of(first)["properties"]
        defaults = {key: field.get("default") for key, field in props.items()}
        want = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}
        check(defaults == want, f"defaults {defaults}, expected {want}")
        types_of = {key: field.get("type") for key, field in props.items()}
        check(types_of["age"] == "integer" and types_of["score"] == "number", f"types {types_of}")
        check(props["status"].get("enum") == ["active", "inactive", "pending"], f"status {props['status']!r}")
    if args.case == "approval":
        check(len(prompts) == 2, f"expected the question then the approval, got {len(prompts)}")
        check("approve" in schema_of(prompts[1]).get("properties", {}), "the second form is not the approval")
        check("Command: confirm_greeting --name=Alice" in prompts[1].message, f"approval {prompts[1].message!r}")

    ran = command_result(result, tool)
    print(f"outcome: ran {ran['command']} -> {ran['output'].strip()}")
    want = {
        "rounds": "Hello, Alice! Your favourite colour is blue.",
        "defaults": "name: Jane Smith, age: 25, score: 88, status: inactive, verified: false",
        "approval": "Hello, Alice! (approved)",
    }.get(args.case, "Hello, Alice!")
    check(want in ran["output"], f"output {ran['output']!r} lacks {want!r}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url")
    p.add_argument("--mode", default="auto")
    p.add_argument("--server")
    p.add_argument("--app")
    p.add_argument(
        "--case",
        required=True,
        choices=["answers", "rounds", "defaults", "decline", "cancel", "invalid", "none", "model", "approval", "manual", "task"],
    )
    run(main, p.parse_args())
