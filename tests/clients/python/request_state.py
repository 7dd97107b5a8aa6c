"""A forged, an altered, a misapplied and a replayed `requestState` never run a command.

Raw 2026-07-28 requests with httpx (the SDK would not send a bad state). Against the HTTP
server in `--url`, with the demo app's store in `--store`:

1. `task_add` twice: tasks 1 and 2.
2. `task_delete {id: 1, force: true}` returns an input-required result asking for approval,
   with a `requestState` S.
3. Retries that approve, each of which must be refused with a JSON-RPC error (-32602) and
   nothing run:
   S with one byte changed (in the payload, then in the tag); a state made up from scratch;
   S with the arguments of another call (`id: 2`).
4. The retry with S itself and an approval runs the command: task 1 is deleted.
5. Task 1 is put back into the store file by hand, and the same retry (S, approved) is sent
   twice more: both are refused and the store file stays byte for byte the same.
6. A retry without the answer is asked again (SEP-2322): `task_delete {id: 2}` gives a state
   T1; the retry with T1 and no `inputResponses` is a new input-required result with a new
   state T2, and the retry with T2 and an answer under another key gives T3. Nothing runs;
   T1 and T2 are used up (refused, approved or not); T3 approved deletes task 2.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
from typing import Any

import httpx

from common import Failure, check, parser, read_store, run, task_ids

VERSION = "2026-07-28"
APPROVE = {"confirm": {"action": "accept", "content": {"approve": True}}}
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "raw-request-state", "version": "1.0.0"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


class Raw:
    """A 2026-07-28 client over bare HTTP."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.next_id = 0
        self.http = httpx.Client(timeout=30)

    def call(self, tool: str, arguments: dict[str, Any], state: str | None = None, answers: Any = None) -> dict[str, Any]:
        """One tools/call; returns the JSON-RPC result (fails on a JSON-RPC error)."""
        message = self.send(tool, arguments, state, answers)
        check("error" not in message, f"JSON-RPC error: {message!r}")
        return message["result"]

    def send(self, tool: str, arguments: dict[str, Any], state: str | None = None, answers: Any = None) -> dict[str, Any]:
        """One tools/call; returns the JSON-RPC response (a result or an error)."""
        self.next_id += 1
        params: dict[str, Any] = {"name": tool, "arguments": arguments, "_meta": META}
        if state is not None:
            params["requestState"] = state
        if answers is not None:
            params["inputResponses"] = answers
        response = self.http.post(
            self.url,
            json={"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params},
            headers={
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": VERSION,
                "Mcp-Method": "tools/call",
                "Mcp-Name": tool,
            },
        )
        check(response.status_code == 200, f"HTTP {response.status_code}: {response.text!r}")
        return self.message(response, self.next_id)

    @staticmethod
    def message(response: httpx.Response, request_id: int) -> dict[str, Any]:
        """The JSON-RPC response to `request_id`, from a JSON or an SSE body."""
        kind = response.headers.get("content-type", "")
        if kind.startswith("application/json"):
            return response.json()
        check(kind.startswith("text/event-stream"), f"unexpected content type {kind!r}")
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if message.get("id") == request_id:
                    return message
        raise Failure(f"no response to request {request_id} in the stream {response.text!r}")


def command(result: dict[str, Any], what: str) -> dict[str, Any]:
    """The command result of a completed call."""
    check(result.get("resultType", "complete") == "complete", f"{what}: not complete: {result!r}")
    check(not result.get("isError"), f"{what}: error result {result!r}")
    return result["structuredContent"]


def refused(message: dict[str, Any], what: str, store_before: bytes, store: str) -> str:
    """Checks that a retry was refused with a JSON-RPC error (-32602: a requestState that does
    not verify, SEP-2322) without running anything; returns the error's message."""
    check("result" not in message, f"{what}: not refused: {message!r}")
    error = message.get("error") or {}
    check(error.get("code") == -32602, f"{what}: not refused as invalid params: {message!r}")
    text = error.get("message", "")
    check(
        text.startswith("invalid requestState: ")
        and text.endswith(" did not run; call the tool again without requestState and inputResponses to be asked anew"),
        f"{what}: unexpected refusal text {text!r}",
    )
    with open(store, "rb") as f:
        check(f.read() == store_before, f"{what}: the store changed, so the command ran")
    print(f"{what}: refused: {text}")
    return text


def asks(result: dict[str, Any], what: str, again: bool = True) -> str:
    """Checks that `result` asks for approval (again); returns its new requestState."""
    check(result.get("resultType") == "input_required", f"{what}: not asked: {result!r}")
    request = (result.get("inputRequests") or {}).get("confirm") or {}
    check(request.get("method") == "elicitation/create", f"{what}: unexpected inputRequests {result!r}")
    state = result.get("requestState")
    check(isinstance(state, str) and state, f"{what}: no requestState in {result!r}")
    print(f"{what}: {'asked again' if again else 'asked'}")
    return state


def flip(state: str, index: int) -> str:
    """`state` with the base64url character at `index` replaced by another one."""
    check(state[index] in ALPHABET, f"character {index} of {state!r} is not base64url")
    replacement = ALPHABET[(ALPHABET.index(state[index]) + 1) % len(ALPHABET)]
    return state[:index] + replacement + state[index + 1 :]


async def main(args: argparse.Namespace) -> None:
    raw = Raw(args.url)
    store = args.store
    for title in ("first", "second"):
        added = command(raw.call("task_add", {"title": title, "store": store}), "task_add")
        check(added["exit_code"] == 0, f"task_add failed: {added!r}")
    check(task_ids(store) == [1, 2], f"expected tasks 1 and 2, the store has {task_ids(store)}")

    delete_1 = {"id": 1, "force": True, "store": store}
    asked = raw.call("task_delete", delete_1)
    check(asked.get("resultType") == "input_required", f"task_delete was not gated: {asked!r}")
    state = asked.get("requestState")
    check(isinstance(state, str) and state, f"no requestState in {asked!r}")
    request = (asked.get("inputRequests") or {}).get("confirm") or {}
    check(request.get("method") == "elicitation/create", f"unexpected inputRequests {asked.get('inputRequests')!r}")
    print(f"asked: requestState of {len(state)} characters")
    with open(store, "rb") as f:
        before = f.read()

    # Altered: one byte of the payload, then one of the tag (assuming `prefix.payload.tag`;
    # otherwise the middle and the last character).
    parts = state.split(".")
    if len(parts) >= 3:
        payload_at = len(parts[0]) + 1 + len(parts[1]) // 2
        tag_at = len(state) - len(parts[-1]) // 2
    else:
        payload_at, tag_at = len(state) // 2, len(state) - 2
    refused(raw.send("task_delete", delete_1, flip(state, payload_at), APPROVE), "altered payload", before, store)
    refused(raw.send("task_delete", delete_1, flip(state, tag_at), APPROVE), "altered tag", before, store)

    # Forged: the same shape, made up.
    forged = ".".join(
        [parts[0] if len(parts) >= 3 else "rs1"]
        + [base64.urlsafe_b64encode(os.urandom(max(8, len(p) * 3 // 4))).decode().rstrip("=") for p in parts[1:] or [""]]
    )
    refused(raw.send("task_delete", delete_1, forged, APPROVE), "forged", before, store)
    refused(raw.send("task_delete", delete_1, "not-a-state", APPROVE), "garbage", before, store)

    # Misapplied: a genuine state, for other arguments.
    refused(
        raw.send("task_delete", {"id": 2, "force": True, "store": store}, state, APPROVE),
        "other arguments",
        before,
        store,
    )

    # The genuine retry runs the command, once.
    ran = command(raw.call("task_delete", delete_1, state, APPROVE), "approved retry")
    check(ran["exit_code"] == 0, f"the approved retry failed: {ran!r}")
    check(1 not in task_ids(store), "the approved retry did not delete task 1")
    print(f"approved: ran {ran['command']}: {ran['output'].strip()}")

    # Replays: put task 1 back so that a replay that ran would show in the store.
    restored = read_store(store)
    restored["tasks"].insert(0, {"id": 1, "title": "first", "priority": "normal", "done": False, "created": "2026-01-01T00:00:00Z"})
    with open(store, "w", encoding="utf-8") as f:
        json.dump(restored, f, indent=2)
        f.write("\n")
    with open(store, "rb") as f:
        before = f.read()
    first = refused(raw.send("task_delete", delete_1, state, APPROVE), "replayed", before, store)
    refused(raw.send("task_delete", delete_1, state, APPROVE), "replayed again", before, store)
    check("already used" in first, f"the replay refusal does not say the approval was used: {first!r}")
    check(1 in task_ids(store), "a replay deleted task 1")

    # A retry without the answer is asked again, with a new state each time.
    delete_2 = {"id": 2, "force": True, "store": store}
    t1 = asks(raw.call("task_delete", delete_2), "task_delete 2", again=False)
    with open(store, "rb") as f:
        before = f.read()
    t2 = asks(raw.call("task_delete", delete_2, t1), "no inputResponses")
    wrong_key = {"other": {"action": "accept", "content": {"approve": True}}}
    t3 = asks(raw.call("task_delete", delete_2, t2, wrong_key), "answer under another key")
    check(len({t1, t2, t3}) == 3, "asking again did not issue a new requestState")
    with open(store, "rb") as f:
        check(f.read() == before, "a retry without the answer ran the command")
    for state, what in ((t1, "first state after asking again"), (t2, "second state after asking again")):
        text = refused(raw.send("task_delete", delete_2, state, APPROVE), what, before, store)
        check("already used" in text, f"{what}: the refusal does not say the state was used: {text!r}")
    ran = command(raw.call("task_delete", delete_2, t3, APPROVE), "answered retry")
    check(ran["exit_code"] == 0 and 2 not in task_ids(store), f"the answered retry did not delete task 2: {ran!r}")
    print(f"answered after asking again: ran {ran['command']}: {ran['output'].strip()}")


if __name__ == "__main__":
    arguments = parser(__doc__).parse_args()
    if not arguments.url:
        raise SystemExit("request_state.py needs --url")
    run(main, arguments)
