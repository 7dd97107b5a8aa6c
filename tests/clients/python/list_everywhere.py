"""Raw `tools/list` everywhere (no SDK shows every member of an entry): a server's entries are
the ones fiskgen computed at build time (`--expected`, the golden crate's `listing.json`),
member for member, `execution` included, however they are asked for: over stdio and HTTP
(legacy sessions and stateless), in both protocol eras, with and without `Origin` (browsers and
the Inspector send one), asking for gzip or not, page after page by cursor.

A narrowed server (`--narrowed-url`) must list the named tools with the same entries. Prints one
line per way of asking, then `PASS`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any
from urllib.parse import urlparse

import httpx

from common import check, run

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "list-everywhere", "version": "1"},
}


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--expected", required=True, help="the build-time entries (listing.json)")
    p.add_argument("--url", action="append", default=[], help="an HTTP endpoint of the server")
    p.add_argument("--header", action="append", default=[], help="NAME=VALUE for every HTTP request")
    p.add_argument("--stdio", help="the server's stdio command line, a JSON list")
    p.add_argument("--narrowed-url", help="the same server narrowed at start")
    p.add_argument("--narrowed", help="the narrowed server's tools, a JSON list")
    return p.parse_args()


def body_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a JSON or SSE response."""
    check(response.status_code == 200, f"HTTP {response.status_code}: {response.text[:300]}")
    kind = response.headers.get("content-type", "")
    if kind.startswith("application/json"):
        return json.loads(response.text)
    check(kind.startswith("text/event-stream"), f"content type {kind!r}")
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    raise AssertionError(f"no data in the event stream: {response.text[:300]!r}")


def list_request(id_: int, cursor: str | None, modern: bool) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if cursor is not None:
        params["cursor"] = cursor
    if modern:
        params["_meta"] = META
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/list", "params": params}


def page_of(message: dict[str, Any], modern: bool, what: str) -> tuple[list[Any], str | None]:
    check("result" in message, f"{what}: {json.dumps(message)[:300]}")
    result = message["result"]
    if modern:
        check(
            result.get("ttlMs") == 600000 and result.get("cacheScope") == "public",
            f"{what}: the 2026-07-28 cache hints: {list(result)}",
        )
    else:
        check("ttlMs" not in result, f"{what}: cache hints for a legacy client")
    return result["tools"], result.get("nextCursor")


class Http:
    """Requests of one protocol era to one HTTP endpoint."""

    def __init__(self, http: httpx.AsyncClient, url: str, modern: bool, extra: dict[str, str]) -> None:
        self.http, self.url, self.modern, self.extra = http, url, modern, extra
        self.session: str | None = None
        self.next_id = 1

    async def open(self) -> None:
        if self.modern:
            return
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "list-everywhere", "version": "1"},
            },
        }
        response = await self.http.post(self.url, json=init, headers=self.headers())
        body_of(response)
        self.session = response.headers.get("mcp-session-id")
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        done = await self.http.post(self.url, json=note, headers=self.headers())
        check(done.status_code == 202, f"initialized: HTTP {done.status_code}")

    def headers(self, method: str | None = None) -> dict[str, str]:
        headers = {"accept": "application/json, text/event-stream", **self.extra}
        if self.modern:
            headers["mcp-protocol-version"] = MODERN
            if method:
                headers["mcp-method"] = method
        else:
            headers["mcp-protocol-version"] = LEGACY
            if self.session:
                headers["mcp-session-id"] = self.session
        return headers

    async def entries(self, origin: bool, encoding: str) -> tuple[list[Any], int]:
        entries: list[Any] = []
        cursor: str | None = None
        for page in range(1, 101):
            headers = self.headers("tools/list")
            headers["accept-encoding"] = encoding
            if origin:
                headers["origin"] = f"http://localhost:{urlparse(self.url).port}"
            request = list_request(self.next_id, cursor, self.modern)
            self.next_id += 1
            response = await self.http.post(self.url, json=request, headers=headers)
            tools, cursor = page_of(body_of(response), self.modern, f"{self.url} page {page}")
            entries.extend(tools)
            if cursor is None:
                return entries, page
        raise AssertionError("more than 100 pages")


class Stdio:
    """One stdio server process, in one era."""

    def __init__(self, command: list[str], modern: bool) -> None:
        self.command, self.modern = command, modern
        self.next_id = 1

    async def __aenter__(self) -> Stdio:
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=64 * 1024 * 1024,
        )
        if not self.modern:
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "list-everywhere", "version": "1"},
                },
            }
            await self.ask(init)
            await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await asyncio.wait_for(self.process.wait(), 10)

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        await self.process.stdin.drain()

    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        await self.send(message)
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), 30)
            check(line, "the server closed stdout")
            answer = json.loads(line)
            if answer.get("id") == message["id"]:
                return answer

    async def entries(self) -> tuple[list[Any], int]:
        entries: list[Any] = []
        cursor: str | None = None
        for page in range(1, 101):
            request = list_request(self.next_id, cursor, self.modern)
            self.next_id += 1
            tools, cursor = page_of(await self.ask(request), self.modern, f"stdio page {page}")
            entries.extend(tools)
            if cursor is None:
                return entries, page
        raise AssertionError("more than 100 pages")


def same(entries: list[Any], expected: list[Any], what: str) -> None:
    names = [entry.get("name") for entry in entries]
    check(names == [entry["name"] for entry in expected], f"{what}: lists {names}")
    for entry, built in zip(entries, expected, strict=True):
        check(entry == built, f"{what}: {built['name']} differs:\n{json.dumps(entry)[:600]}\n{json.dumps(built)[:600]}")


async def main(args: argparse.Namespace) -> None:
    with open(args.expected, encoding="utf-8") as file:
        expected = json.load(file)
    tasks = sum(1 for entry in expected if "execution" in entry)
    extra = dict(header.split("=", 1) for header in args.header)
    async with httpx.AsyncClient(timeout=30) as http:
        for url in args.url:
            for modern in (False, True):
                era = MODERN if modern else "legacy"
                client = Http(http, url, modern, extra)
                await client.open()
                for origin in (False, True):
                    for encoding in ("gzip", "identity"):
                        entries, pages = await client.entries(origin, encoding)
                        what = f"{url} {era} origin={origin} {encoding}"
                        same(entries, expected, what)
                        print(f"{what}: {len(entries)} entries ({tasks} task-only) in {pages} page(s), as built")
        if args.stdio:
            for modern in (False, True):
                era = MODERN if modern else "legacy"
                async with Stdio(json.loads(args.stdio), modern) as server:
                    entries, pages = await server.entries()
                    same(entries, expected, f"stdio {era}")
                    print(f"stdio {era}: {len(entries)} entries ({tasks} task-only) in {pages} page(s), as built")
        if args.narrowed_url:
            narrowed = json.loads(args.narrowed)
            kept = [entry for entry in expected if entry["name"] in narrowed]
            for modern in (False, True):
                client = Http(http, args.narrowed_url, modern, extra)
                await client.open()
                entries, _ = await client.entries(False, "identity")
                same(entries, kept, "narrowed")
                print(f"narrowed ({MODERN if modern else 'legacy'}): {len(entries)} entries, as built")


if __name__ == "__main__":
    run(main, arguments())
