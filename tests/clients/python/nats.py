"""The real NATS CLI through its generated MCP server, with the official Python SDK.

The server (`nats-mcp`, built from tests/fixtures/nats-streams.yaml) runs the real `nats` against
a real `nats-server`, where the test created the stream `--stream` with the CLI. The script reads
it with `stream_info` (read-only, never gated), then calls `stream_rm` (tagged impact:rw, gated by
`confirm_tags`) twice: with a client that declines (a refusal, the stream stays) and with one that
approves (it runs and the stream is gone, which the test checks with the CLI afterwards).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import mcp
import mcp.types as types

from common import check, command_result, error_result, http_parser, run, text_of


def answering(action: str, prompts: list[str]) -> Any:
    """An elicitation callback that records the prompt and answers `action`."""

    async def answer(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        prompts.append(params.message)
        if action == "approve":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    return answer


async def main(args: argparse.Namespace) -> None:
    stream = args.stream
    prompts: list[str] = []
    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30, elicitation_callback=answering("decline", prompts)) as c:
        print(f"protocol: {c.protocol_version}")
        names = [tool.name for tool in (await c.list_tools()).tools]
        check(names == ["stream_info", "stream_rm"], f"tools {names!r}")

        info = command_result(await c.call_tool("stream_info", {"stream": stream, "json": True}), "stream_info")
        check(info["exit_code"] == 0, f"stream_info failed: {info['output']!r}")
        check(info["command"] == f"stream info --json -- {stream}", f"stream_info ran {info['command']!r}")
        state = json.loads(info["output"])
        check(state["config"]["name"] == stream, f"stream_info: {state['config']!r}")
        check(state["config"]["subjects"] == [f"{stream.lower()}.>"], f"stream_info: {state['config']!r}")
        check(prompts == [], f"stream_info (impact:ro) asked for approval: {prompts!r}")
        print(f"stream_info: {stream} with subjects {state['config']['subjects']} and {state['state']['messages']} messages")

        declined = error_result(await c.call_tool("stream_rm", {"stream": stream, "force": True}), "stream_rm declined")
        cmd = f"stream rm --force -- {stream}"
        check(
            declined.startswith(f'Not approved: the user declined to run "{cmd}".'),
            f"stream_rm declined: {declined!r}",
        )
        check(len(prompts) == 1 and f"Command: {cmd}\nGated by: impact:rw" in prompts[0], f"prompts {prompts!r}")
        print(f"declined: {declined}")

    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30, elicitation_callback=answering("approve", prompts)) as c:
        # Still there after the refusal.
        info = command_result(await c.call_tool("stream_info", {"stream": stream, "state": True}), "stream_info")
        check(info["exit_code"] == 0, f"the stream is gone after a refusal: {info['output']!r}")
        removed = command_result(await c.call_tool("stream_rm", {"stream": stream, "force": True}), "stream_rm approved")
        check(len(prompts) == 2, f"the approval was not asked: {prompts!r}")
        check(removed["exit_code"] == 0, f"stream_rm failed: {removed['output']!r}")
        print(f"approved: ran {removed['command']} -> exit {removed['exit_code']}")
        gone = await c.call_tool("stream_info", {"stream": stream, "json": True})
        after = command_result(gone, "stream_info after rm")
        check(after["exit_code"] != 0, f"stream_info still finds {stream}: {text_of(gone)[:300]!r}")
        print(f"after: stream_info exits {after['exit_code']}")


if __name__ == "__main__":
    p = http_parser(__doc__)
    p.add_argument("--stream", required=True, help="the stream the test created")
    run(main, p.parse_args())
