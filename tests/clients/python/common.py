"""Helpers shared by the client scripts: the command line, connecting, and checking results.

Every script takes the server either as `--url http://127.0.0.1:PORT/mcp` (streamable HTTP,
with `--mode legacy|2026-07-28|auto`) or as `--server PATH --app PATH` (stdio: the script
starts `PATH --stdio --application-path APP`). `--store FILE` is the demo app's store: the
scripts pass it as the `store` argument (the app's global --store flag, offered on every
tool) unless `--store-from-env` says the server got it as TASKS_STORE instead.

A script prints what it checked on stdout, ends with a line `PASS`, and exits 0; on a failed
check it prints `FAIL: <why>` on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import mcp
import mcp.types as types
from mcp import StdioServerParameters

# The tools the demo serves, in the order it lists them; `store_purge` is tagged ai:deny.
SERVED = [
    "task_add",
    "task_list",
    "task_show",
    "task_done",
    "task_delete",
    "note_add",
    "note_search",
    "store_export",
]
DENIED = "store_purge"

# The keys of every command result (`signal` only when a signal ended the command).
RESULT_KEYS = {"command", "exit_code", "output", "truncated"}

# The server's identity, shown in the approval prompt.
IDENTITY = "tasks"

# Bounds every script as a whole.
SCRIPT_TIMEOUT = 60.0


class Failure(Exception):
    """A failed check."""


def check(condition: object, message: str) -> None:
    """Fails the script with `message` unless `condition` holds."""
    if not condition:
        raise Failure(message)


def parser(description: str) -> argparse.ArgumentParser:
    """The common command line."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--url", help="streamable HTTP endpoint")
    p.add_argument("--mode", default="auto", help="legacy, 2026-07-28 or auto (HTTP and stdio)")
    p.add_argument("--server", help="server binary to start over stdio")
    p.add_argument("--app", help="the application path the stdio server runs")
    p.add_argument("--store", required=True, help="the demo app's JSON store file")
    p.add_argument(
        "--store-from-env",
        action="store_true",
        help="the server has TASKS_STORE set; do not pass `store` in the arguments",
    )
    return p


def target(args: argparse.Namespace) -> str | StdioServerParameters:
    """What `mcp.Client` connects to."""
    if args.url:
        return args.url
    check(args.server and args.app, "give --url, or --server and --app")
    env = dict(os.environ)
    env["TASKS_STORE"] = args.store
    return StdioServerParameters(
        command=args.server,
        args=["--stdio", "--application-path", args.app],
        env=env,
        cwd=os.path.dirname(os.path.abspath(args.store)),
    )


def client(args: argparse.Namespace, **kwargs: Any) -> mcp.Client:
    """A client for the server named on the command line."""
    return mcp.Client(target(args), mode=args.mode, read_timeout_seconds=30, **kwargs)


def with_store(args: argparse.Namespace, arguments: dict[str, Any]) -> dict[str, Any]:
    """`arguments` plus the store, unless the server has it from its environment."""
    if args.store_from_env:
        return dict(arguments)
    return {**arguments, "store": args.store}


def store_flag(args: argparse.Namespace) -> str:
    """How the store shows in a command line."""
    return "" if args.store_from_env else f"--store={args.store} "


def text_of(result: types.CallToolResult) -> str:
    """The single text block of a result."""
    check(len(result.content) == 1, f"expected one content block, got {result.content!r}")
    block = result.content[0]
    check(isinstance(block, types.TextContent), f"expected a text block, got {block!r}")
    return block.text


def command_result(result: types.CallToolResult, what: str) -> dict[str, Any]:
    """Checks that `result` is a command result and returns it as a dict: the text block is
    the JSON object {command, exit_code, output, truncated}, and structuredContent equals it."""
    check(not result.is_error, f"{what}: unexpected error result: {result.content!r}")
    text = text_of(result)
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as error:
        raise Failure(f"{what}: the text block is not JSON ({error}): {text!r}") from None
    check(isinstance(parsed, dict), f"{what}: the text block is not a JSON object: {text!r}")
    keys = set(parsed)
    check(
        RESULT_KEYS <= keys <= RESULT_KEYS | {"signal"},
        f"{what}: result keys {sorted(keys)}, expected {sorted(RESULT_KEYS)}",
    )
    check(isinstance(parsed["exit_code"], int), f"{what}: exit_code is not an integer: {parsed!r}")
    check(isinstance(parsed["truncated"], bool), f"{what}: truncated is not a boolean: {parsed!r}")
    check(
        result.structured_content == parsed,
        f"{what}: structuredContent {result.structured_content!r} differs from the text {parsed!r}",
    )
    return parsed


def read_store(path: str) -> dict[str, Any]:
    """The demo app's store file (an empty store when it does not exist yet)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {"next_id": 1, "tasks": [], "notes": []}


def task_ids(path: str) -> list[int]:
    """The ids of the tasks in the store."""
    return [task["id"] for task in read_store(path).get("tasks") or []]


def run(main: Callable[[argparse.Namespace], Awaitable[None]], args: argparse.Namespace) -> None:
    """Runs `main(args)` bounded by SCRIPT_TIMEOUT; exits 0 after printing PASS, 1 on failure."""
    try:
        asyncio.run(asyncio.wait_for(main(args), SCRIPT_TIMEOUT))
    except Failure as failure:
        print(f"FAIL: {failure}", file=sys.stderr, flush=True)
        sys.exit(1)
    except (TimeoutError, asyncio.TimeoutError):
        print(f"FAIL: the script did not finish within {SCRIPT_TIMEOUT:.0f}s", file=sys.stderr, flush=True)
        sys.exit(1)
    except BaseException as error:  # noqa: BLE001 - report anything else as a failure too
        if isinstance(error, SystemExit):
            raise
        traceback.print_exc()
        print(f"FAIL: unexpected {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        sys.exit(1)
    print("PASS", flush=True)


# ---------------------------------------------------------------------------------------------
# Helpers for scripts that talk to a server over HTTP only and need no store (builtins.py).
# ---------------------------------------------------------------------------------------------


def http_parser(description: str) -> argparse.ArgumentParser:
    """A command line with only `--url` (required) and `--mode`; `client(args)` accepts it."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--url", required=True, help="streamable HTTP endpoint")
    p.add_argument("--mode", default="auto", help="legacy, 2026-07-28 or auto")
    return p


def json_result(result: types.CallToolResult, what: str) -> dict[str, Any]:
    """Checks that `result` is a successful built-in answer (one text block holding a JSON
    object, no structuredContent) and returns the object."""
    check(not result.is_error, f"{what}: unexpected error result: {result.content!r}")
    text = text_of(result)
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as error:
        raise Failure(f"{what}: the text block is not JSON ({error}): {text[:500]!r}") from None
    check(isinstance(parsed, dict), f"{what}: the text block is not a JSON object: {text[:500]!r}")
    check(result.structured_content is None, f"{what}: a built-in answered structuredContent")
    return parsed


def error_result(result: types.CallToolResult, what: str) -> str:
    """Checks that `result` is an error result with one text block and returns the text."""
    text = text_of(result)
    check(result.is_error, f"{what}: expected an error result, got {text[:500]!r}")
    check(result.structured_content is None, f"{what}: an error carries structuredContent")
    return text
