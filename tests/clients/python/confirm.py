"""One cell of the confirmation matrix, with the official Python SDK.

Adds a task, then calls a tool on it (default `task_delete --force`, tagged ai:confirm) with a
client that answers the approval prompt as `--answer` says:

  approve  accept, approve=true          reject   accept, approve=false
  decline  decline                        invalid  accept, approve="yes" (not a boolean)
  cancel   cancel                         error    the callback answers a JSON-RPC error
  none     no elicitation callback: the client does not declare elicitation

and checks the outcome `--expect` names, with the reference's texts (fisk-ai-mcp.md 5.3):

  ran        the command ran (a command result, exit 0; a deleted task is gone)
  declined   "Not approved: the user declined to run <cmd>. ..."
  dismissed  "Approval not completed: the user dismissed the approval prompt for <cmd> ..."
  rejected   "Not approved: the user reviewed <cmd> and chose not to run it. ..."
  failed     "Not approved: requesting approval to run <cmd> failed: <why>. The command did not run. ..."
  refused    "Not approved: running <cmd> requires approval, but this client cannot be asked ..."
  stranded   "Not approved: running <cmd> requires approval, and this client supports elicitation,
             but this server is stateless ..." (a legacy client of a stateless server)

Every refusal that is not the user's own decision ends with FINAL: it tells the model not to retry.

`--asked yes|no` says whether the prompt must have been shown; when shown, its text and
schema are checked too. Every denial must leave the store as it was.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import mcp.types as types

from common import IDENTITY, check, client, command_result, parser, read_store, run, store_flag, task_ids, text_of, with_store

ANSWERS = {
    "approve": types.ElicitResult(action="accept", content={"approve": True}),
    "reject": types.ElicitResult(action="accept", content={"approve": False}),
    "invalid": types.ElicitResult(action="accept", content={"approve": "yes"}),
    "decline": types.ElicitResult(action="decline"),
    "cancel": types.ElicitResult(action="cancel"),
    "error": types.ErrorData(code=-32603, message="the approval dialog crashed"),
}


def go_quote(text: str) -> str:
    """Go's %q for the plain ASCII command lines these tests produce."""
    check(all(32 <= ord(ch) < 127 for ch in text), f"unexpected characters in {text!r}")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# The closing sentences of every refusal that is not the user's own decision.
FINAL = (
    "The command did not run. This answer is final for this call, not a transient error; "
    "do not retry, tell the user the command needs their approval."
)


def denial_text(expect: str, cmd: str) -> str | None:
    """The exact text of a denial, or None for `failed` (whose reason varies)."""
    q = go_quote(cmd)
    return {
        "declined": f"Not approved: the user declined to run {q}. This was their decision, not an error; "
        "do not retry, ask how they want to proceed.",
        "dismissed": f"Approval not completed: the user dismissed the approval prompt for {q} without "
        "deciding. The command did not run. The dismissal is the user's answer, not an error; do not "
        "retry, ask how they want to proceed.",
        "rejected": f"Not approved: the user reviewed {q} and chose not to run it. This was their decision, "
        "not an error; do not retry.",
        "refused": f"Not approved: running {q} requires approval, but this client cannot be asked (it does "
        f"not support elicitation). {FINAL}",
        "stranded": f"Not approved: running {q} requires approval, and this client supports elicitation, "
        "but this server is stateless and cannot send a request to a client of a 2025 protocol version, "
        f"so it cannot ask. {FINAL} (To approve such commands, connect with protocol 2026-07-28 or to a "
        "server with sessions.)",
    }.get(expect)


async def main(args: argparse.Namespace) -> None:
    prompts: list[types.ElicitRequestParams] = []

    async def answer(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        prompts.append(params)
        return ANSWERS[args.answer]

    callback = None if args.answer == "none" else answer
    async with client(args, elicitation_callback=callback) as c:
        print(f"protocol: {c.protocol_version}")
        await c.list_tools()
        added = command_result(await c.call_tool("task_add", with_store(args, {"title": "doomed"})), "task_add")
        check(added["exit_code"] == 0, f"task_add failed: {added['output']!r}")
        task_id = int(added["output"].split("#", 1)[1].split(":", 1)[0])
        check(prompts == [], f"task_add (not gated) asked for approval: {prompts!r}")

        if args.tool == "task_delete":
            arguments = {"id": task_id, "force": True}
            cmd = f"task delete {store_flag(args)}--force -- {task_id}"
        elif args.tool == "task_add":
            arguments = {"title": "extra"}
            cmd = f"task add {store_flag(args)}-- extra"
        else:
            arguments = {}
            cmd = f"task list {store_flag(args)}".rstrip()
        before = read_store(args.store)
        result = await c.call_tool(args.tool, with_store(args, arguments))

    print(f"asked: {'yes' if prompts else 'no'}")
    if args.asked == "yes":
        check(len(prompts) == 1, f"expected one approval prompt, got {len(prompts)}")
        prompt = prompts[0]
        expected = (
            f"{IDENTITY} wants to run a command that requires your approval.\n\n"
            f"Command: {cmd}\nGated by: ai:confirm\n\n"
            "Approve to run it now, or refuse to skip it."
        )
        check(getattr(prompt, "mode", "form") in (None, "form"), f"the prompt is not a form: {prompt!r}")
        check(prompt.message == expected, f"prompt {prompt.message!r}, expected {expected!r}")
        schema = json.loads(json.dumps(prompt.requested_schema, default=lambda o: o.model_dump(by_alias=True)))
        check(schema.get("required") == ["approve"], f"requested schema {schema!r} does not require approve")
        check(
            schema.get("properties", {}).get("approve", {}).get("type") == "boolean",
            f"requested schema {schema!r}: approve is not a boolean",
        )
    else:
        check(prompts == [], f"the client was asked although it must not be: {prompts!r}")

    if args.expect == "ran":
        ran = command_result(result, args.tool)
        print(f"outcome: ran {ran['command']} -> exit {ran['exit_code']}: {ran['output'].strip()}")
        check(ran["command"] == cmd, f"ran {ran['command']!r}, expected {cmd!r}")
        check(ran["exit_code"] == 0, f"{args.tool} exited {ran['exit_code']}: {ran['output']!r}")
        if args.tool == "task_delete":
            check(task_id not in task_ids(args.store), f"task {task_id} is still in the store after it ran")
        return

    text = text_of(result)
    print(f"outcome: {args.expect}")
    print(f"text: {text}")
    check(result.is_error, f"expected an error result ({args.expect}), got {text!r}")
    check(result.structured_content is None, f"a denial carries structuredContent {result.structured_content!r}")
    check('"output"' not in text and '"exit_code"' not in text, f"a denial carries command output: {text!r}")
    exact = denial_text(args.expect, cmd)
    if exact is not None:
        check(text == exact, f"text {text!r}, expected {exact!r}")
    else:
        prefix = f"Not approved: requesting approval to run {go_quote(cmd)} failed: "
        check(text.startswith(prefix), f"text {text!r} does not start with {prefix!r}")
        check(text.endswith(f". {FINAL}"), f"text {text!r} lacks the closing sentences")
    check(read_store(args.store) == before, f"the store changed although {args.tool} was denied")
    check(task_id in task_ids(args.store), f"task {task_id} is gone although {args.tool} was denied")


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--answer", required=True, choices=sorted([*ANSWERS, "none"]))
    p.add_argument("--expect", required=True, choices=["ran", "declined", "dismissed", "rejected", "failed", "refused", "stranded"])
    p.add_argument("--asked", required=True, choices=["yes", "no"])
    p.add_argument("--tool", default="task_delete", choices=["task_delete", "task_add", "task_list"])
    run(main, p.parse_args())
