"""List the demo's tools and call two of them with the official Python SDK.

Checks: the served tool set is exactly the demo's (never `store_purge`), in the listed order,
each listed lean (its title once, in the annotations; no outputSchema, which the demo's config
leaves off); `task_add` then `task_list` return command results {command, exit_code, output,
truncated} whose structuredContent equals the text all the same; the task lands in the store
file.
"""

from __future__ import annotations

import argparse

from common import DENIED, SERVED, check, client, command_result, parser, read_store, run, store_flag, with_store


async def main(args: argparse.Namespace) -> None:
    title = f"milk-{args.mode}"
    async with client(args) as c:
        print(f"protocol: {c.protocol_version}")
        listed = await c.list_tools()
        names = [tool.name for tool in listed.tools]
        print(f"tools: {' '.join(names)}")
        check(DENIED not in names, f"{DENIED} (ai:deny) is served: {names}")
        check(names == SERVED, f"served tools {names}, expected {SERVED}")
        for tool in listed.tools:
            check(tool.output_schema is None, f"{tool.name}: outputSchema {tool.output_schema!r}")
            check(tool.title is None, f"{tool.name}: a top-level title {tool.title!r}")
            check(tool.annotations and tool.annotations.title, f"{tool.name}: no annotations.title")
            check(tool.input_schema.get("type") == "object", f"{tool.name}: inputSchema is not an object")

        added = command_result(await c.call_tool("task_add", with_store(args, {"title": title})), "task_add")
        print(f"task_add: {added['command']} -> exit {added['exit_code']}: {added['output'].strip()}")
        expected_command = f"task add {store_flag(args)}-- {title}"
        check(added["command"] == expected_command, f"task_add ran {added['command']!r}, expected {expected_command!r}")
        check(added["exit_code"] == 0, f"task_add exited {added['exit_code']}: {added['output']!r}")
        check(added["truncated"] is False, "task_add output was truncated")
        check(
            added["output"].startswith("Added task #") and added["output"].endswith(f": {title}\n"),
            f"task_add printed {added['output']!r}",
        )
        task_id = int(added["output"].split("#", 1)[1].split(":", 1)[0])

        listed_tasks = command_result(
            await c.call_tool("task_list", with_store(args, {"status": "all"})), "task_list"
        )
        print(f"task_list: {listed_tasks['command']} -> exit {listed_tasks['exit_code']}")
        check(listed_tasks["exit_code"] == 0, f"task_list exited {listed_tasks['exit_code']}")
        line = f"#{task_id} [open] {title} (normal)"
        check(line in listed_tasks["output"], f"task_list output {listed_tasks['output']!r} lacks {line!r}")
        print(f"listed: {line}")

    stored = [task["title"] for task in read_store(args.store).get("tasks") or []]
    check(title in stored, f"the store {args.store} holds {stored}, not {title!r}")
    print(f"store: {len(stored)} task(s)")


if __name__ == "__main__":
    run(main, parser(__doc__).parse_args())
