"""The Python SDK's lane of the fault soak (bench/src/soak): run the calls the driver sends.

The driver (fiskgen-soak) writes one JSON object per line on stdin:
    {"id": 7, "arguments": {...}, "action": "call" | "cancel" | "disconnect", "after": 0.3}
and reads one JSON object per finished call on stdout:
    {"id": 7, "start": <unix s>, "end": <unix s>, "outcome": "result", "is_error": false,
     "text": "...", "structured": {...}}
or with "outcome" "transport" (and "error": what the SDK raised), "cancelled" (the call was
cancelled by this client after `after` seconds) or "disconnected" (this client closed its
connection, or stopped its stdio server, after `after` seconds) or "no_answer" (nothing came
back within --give-up-after seconds). Every line the driver sends
gets exactly one answer; the driver checks each against what that call must produce.

`call` runs on the lane's shared client, which is reconnected after a transport failure (the
server may be stopped and restarted mid-load); `cancel` too; `disconnect` runs on a client of
its own, opened for that call only. At most `--concurrency` calls run at once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any

import mcp
from mcp import StdioServerParameters

TOOL = "behave"
# How long a reconnect keeps trying (the server restarts within seconds).
RECONNECT_FOR = 60.0
# Bounds one call as the client sees it (the server's timeouts are far shorter); the driver
# sets the bound it judges by with --give-up-after.
READ_TIMEOUT = 120.0


def target(args: argparse.Namespace) -> str | StdioServerParameters:
    if args.url:
        return args.url
    return StdioServerParameters(
        command=args.server,
        args=["--stdio", *args.server_arg],
        env=dict(os.environ),
    )


def new_client(args: argparse.Namespace) -> mcp.Client:
    return mcp.Client(target(args), mode=args.mode, read_timeout_seconds=READ_TIMEOUT, cache=None)


class Connection:
    """One connected client, held open by its own task until it is closed or breaks."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.client: mcp.Client | None = None
        self.connected = time.time()
        self.ready = asyncio.Event()
        self.failed: BaseException | None = None
        self.close = asyncio.Event()
        self.task = asyncio.create_task(self.hold())

    async def hold(self) -> None:
        try:
            async with new_client(self.args) as client:
                self.client = client
                self.connected = time.time()
                self.ready.set()
                await self.close.wait()
        except BaseException as error:  # noqa: BLE001 - reported to the callers
            self.failed = error
        finally:
            self.client = None
            self.ready.set()

    async def get(self) -> mcp.Client:
        await self.ready.wait()
        if self.client is None:
            raise ConnectionError(f"connecting failed: {self.failed!r}")
        return self.client

    async def shut(self) -> None:
        self.close.set()
        try:
            await asyncio.wait_for(self.task, 30)
        except BaseException:  # noqa: BLE001 - closing a broken connection
            self.task.cancel()


class Lane:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.connection: Connection | None = None
        self.lock = asyncio.Lock()

    async def client(self) -> tuple[Connection, mcp.Client]:
        async with self.lock:
            deadline = time.monotonic() + RECONNECT_FOR
            while True:
                if self.connection is None:
                    self.connection = Connection(self.args)
                try:
                    return self.connection, await self.connection.get()
                except ConnectionError:
                    old, self.connection = self.connection, None
                    await old.shut()
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.2)

    async def broken(self, connection: Connection) -> None:
        async with self.lock:
            if self.connection is connection:
                self.connection = None
                asyncio.create_task(connection.shut())


def answer(call: dict[str, Any], start: float, **fields: Any) -> None:
    line = {"id": call["id"], "start": start, "end": time.time(), **fields}
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def result_fields(result: Any) -> dict[str, Any]:
    texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
    return {
        "outcome": "result",
        "is_error": bool(result.is_error),
        "text": "\n".join(texts),
        "structured": result.structured_content,
    }


async def run_call(lane: Lane, call: dict[str, Any]) -> None:
    start = time.time()
    action = call.get("action", "call")
    if action == "disconnect":
        own = Connection(lane.args)
        try:
            client = await own.get()
            pending = asyncio.create_task(client.call_tool(TOOL, call["arguments"]))
            await asyncio.sleep(call.get("after", 0.3))
            if pending.done() and pending.exception() is None:
                answer(call, start, connected=own.connected, **result_fields(pending.result()))
                return
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
        except BaseException as error:  # noqa: BLE001 - reported
            answer(call, start, outcome="transport", error=repr(error))
            return
        finally:
            await own.shut()
        answer(call, start, connected=own.connected, outcome="disconnected")
        return
    try:
        connection, client = await lane.client()
    except BaseException as error:  # noqa: BLE001 - reported
        answer(call, start, outcome="transport", error=repr(error))
        return
    try:
        if action == "cancel":
            try:
                result = await asyncio.wait_for(
                    client.call_tool(TOOL, call["arguments"]), call.get("after", 0.3)
                )
            except TimeoutError:
                answer(call, start, connected=connection.connected, outcome="cancelled")
                return
        else:
            try:
                result = await asyncio.wait_for(
                    client.call_tool(TOOL, call["arguments"]), lane.args.give_up_after
                )
            except TimeoutError:
                answer(call, start, connected=connection.connected, outcome="no_answer")
                await lane.broken(connection)
                return
    except asyncio.CancelledError:
        raise
    except BaseException as error:  # noqa: BLE001 - a transport failure, reported
        answer(call, start, connected=connection.connected, outcome="transport", error=repr(error))
        await lane.broken(connection)
        return
    answer(call, start, connected=connection.connected, **result_fields(result))


async def main(args: argparse.Namespace) -> None:
    lane = Lane(args)
    slots = asyncio.Semaphore(args.concurrency)
    running: set[asyncio.Task[None]] = set()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def guarded(call: dict[str, Any]) -> None:
        try:
            await run_call(lane, call)
        finally:
            slots.release()

    while line := await reader.readline():
        if not line.strip():
            continue
        await slots.acquire()
        task = asyncio.create_task(guarded(json.loads(line)))
        running.add(task)
        task.add_done_callback(running.discard)
    await asyncio.gather(*running, return_exceptions=True)
    if lane.connection is not None:
        await lane.connection.shut()


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", help="streamable HTTP endpoint")
    p.add_argument("--mode", default="legacy", help="legacy or 2026-07-28")
    p.add_argument("--server", help="server binary to start over stdio")
    p.add_argument("--server-arg", action="append", default=[], help="an argument for it")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--give-up-after", type=float, default=READ_TIMEOUT, help="seconds per call")
    asyncio.run(main(p.parse_args()))
