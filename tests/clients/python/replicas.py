"""One approval, one run, across replicas: raw 2026-07-28 requests with httpx.

Two stateless replicas of the demo server (`--url` and `--other`) share one sealing key and one
record of used approvals (a NATS JetStream KV bucket). With the demo app's store in `--store`:

1. `task_add`: task 1.
2. `task_delete {id: 1, force: true}` on the first replica: an input-required result with a
   `requestState` S.
3. The approved retry with S on the *other* replica runs the command: task 1 is deleted.
4. Task 1 is put back by hand, and S (approved) is replayed on both replicas: each refuses it as
   already used (the JSON-RPC error -32602), and the store stays byte for byte the same.

With `--unreachable`, the record is down (the test stopped nats-server): a fresh approval asked
on one replica and approved on the other is refused (fail closed, a tool error: the server could
not check the record), and nothing runs.
"""

from __future__ import annotations

import json

from common import check, parser, read_store, run, task_ids
from request_state import APPROVE, Raw, command, refused


def unchecked(result: dict, what: str, store_before: bytes, store: str) -> str:
    """Checks that a retry was refused as a tool error (the record of used approvals did not
    answer: the server's fault, not a bad state) without running anything; returns the text."""
    check(result.get("resultType", "complete") == "complete", f"{what}: not a final result: {result!r}")
    check(result.get("isError") is True, f"{what}: not refused: {result!r}")
    check("structuredContent" not in result, f"{what}: refused, but with a command result: {result!r}")
    text = result["content"][0]["text"]
    check(text.startswith("Not approved: requesting approval to run "), f"{what}: unexpected refusal text {text!r}")
    with open(store, "rb") as f:
        check(f.read() == store_before, f"{what}: the store changed, so the command ran")
    print(f"{what}: refused: {text}")
    return text


def asked_state(result: dict, what: str) -> str:
    """The requestState of an input-required result."""
    check(result.get("resultType") == "input_required", f"{what}: not gated: {result!r}")
    state = result.get("requestState")
    check(isinstance(state, str) and state, f"{what}: no requestState in {result!r}")
    return state


def main_sync(args) -> None:
    one, other = Raw(args.url), Raw(args.other)
    store = args.store
    if args.unreachable:
        delete = {"id": 1, "force": True, "store": store}
        state = asked_state(one.call("task_delete", delete), "task_delete")
        with open(store, "rb") as f:
            before = f.read()
        text = unchecked(other.call("task_delete", delete, state, APPROVE), "record unreachable", before, store)
        check("could not check that the approval was not used before" in text, f"unexpected refusal {text!r}")
        return

    added = command(one.call("task_add", {"title": "first", "store": store}), "task_add")
    check(added["exit_code"] == 0, f"task_add failed: {added!r}")
    check(task_ids(store) == [1], f"expected task 1, the store has {task_ids(store)}")

    delete = {"id": 1, "force": True, "store": store}
    state = asked_state(one.call("task_delete", delete), "task_delete")
    print("asked on the first replica")

    ran = command(other.call("task_delete", delete, state, APPROVE), "approved on the other replica")
    check(ran["exit_code"] == 0, f"the approved retry failed: {ran!r}")
    check(1 not in task_ids(store), "the approved retry did not delete task 1")
    print(f"approved on the other replica: ran {ran['command']}")

    restored = read_store(store)
    restored["tasks"].insert(0, {"id": 1, "title": "first", "priority": "normal", "done": False, "created": "2026-01-01T00:00:00Z"})
    with open(store, "w", encoding="utf-8") as f:
        json.dump(restored, f, indent=2)
        f.write("\n")
    with open(store, "rb") as f:
        before = f.read()
    for name, replica in [("the first replica", one), ("the other replica", other)]:
        text = refused(replica.send("task_delete", delete, state, APPROVE), f"replayed on {name}", before, store)
        check("already used" in text, f"the replay refusal does not say the approval was used: {text!r}")
    check(1 in task_ids(store), "a replay deleted task 1")


async def main(args) -> None:
    main_sync(args)


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--other", required=True, help="the other replica's endpoint")
    p.add_argument("--unreachable", action="store_true", help="the shared record is down")
    run(main, p.parse_args())
