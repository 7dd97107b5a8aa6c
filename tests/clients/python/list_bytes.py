"""Raw HTTP `tools/list` (no SDK has a way to show the bytes): the answer served as precomputed
bytes equals rmcp's own answer to the same request, in both eras, and a narrowed server's
entries are the full server's entries byte for byte.

rmcp answers a request that carries an allowed `Origin` (the precomputed path leaves those to
it, docs/runtime.md "Listing tools"), so sending the same request with and without
`Origin: http://localhost:<port>` compares the two. Pages are followed by cursor. httpx asks
for gzip (`Accept-Encoding: gzip, deflate`), so the precomputed answers come gzipped; each is
also fetched with `Accept-Encoding: identity` and must be the same bytes once decoded, and
sent chunked (no `Content-Length`: the server's front leaves it to the layer after its body
check), which must get the same bytes too. Prints `PASS`.
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


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True, help="the full server's endpoint")
    p.add_argument("--narrowed-url", required=True, help="the same server narrowed at start")
    p.add_argument("--narrowed", required=True, help="the narrowed server's tools, a JSON list")
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


def raw_entries(text: str) -> list[str]:
    """Each entry of the `tools` array of a raw JSON-RPC answer, as the text it was sent as."""
    start = text.index('"tools":[') + len('"tools":[')
    decoder = json.JSONDecoder()
    entries, index = [], start
    while text[index] != "]":
        _, end = decoder.raw_decode(text, index)
        entries.append(text[index:end])
        index = end + 1 if text[end] == "," else end
    return entries


class Era:
    """Requests of one protocol era to one server."""

    def __init__(self, http: httpx.AsyncClient, url: str, modern: bool) -> None:
        self.http, self.url, self.modern = http, url, modern
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
                "clientInfo": {"name": "list-bytes", "version": "1"},
            },
        }
        response = await self.http.post(self.url, json=init, headers=self.headers())
        body_of(response)
        self.session = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        done = await self.http.post(self.url, json=note, headers=self.headers())
        check(done.status_code == 202, f"initialized: HTTP {done.status_code}")

    def headers(self, method: str | None = None) -> dict[str, str]:
        headers = {"accept": "application/json, text/event-stream"}
        if self.modern:
            headers["mcp-protocol-version"] = MODERN
            if method:
                headers["mcp-method"] = method
        else:
            headers["mcp-protocol-version"] = LEGACY
            if self.session:
                headers["mcp-session-id"] = self.session
        return headers

    async def list(
        self,
        cursor: str | None,
        origin: bool,
        encoding: str | None = None,
        chunked: bool = False,
    ) -> httpx.Response:
        params: dict[str, Any] = {}
        if cursor is not None:
            params["cursor"] = cursor
        if self.modern:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "list-bytes", "version": "1"},
            }
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/list", "params": params}
        self.next_id += 1
        headers = self.headers("tools/list")
        if origin:
            port = urlparse(self.url).port
            headers["origin"] = f"http://localhost:{port}"
        if encoding is not None:
            headers["accept-encoding"] = encoding
        if not chunked:
            return await self.http.post(self.url, json=request, headers=headers)
        # A body without a length (Transfer-Encoding: chunked): the server's front does not
        # read it, and the layer after the body check answers it.
        headers["content-type"] = "application/json"
        data = json.dumps(request).encode()

        async def parts():
            yield data[: len(data) // 2]
            yield data[len(data) // 2 :]

        return await self.http.post(self.url, content=parts(), headers=headers)

    async def pages(self, origin: bool) -> list[httpx.Response]:
        pages, cursor = [], None
        for _ in range(100):
            response = await self.list(cursor, origin)
            pages.append(response)
            cursor = body_of(response)["result"].get("nextCursor")
            if cursor is None:
                return pages
        raise AssertionError("more than 100 pages")


async def main(args: argparse.Namespace) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        full_entries: dict[bool, list[str]] = {}
        for modern in (False, True):
            era = Era(http, args.url, modern)
            await era.open()
            fast = await era.pages(origin=False)
            slow = await era.pages(origin=True)
            name = MODERN if modern else "legacy"
            check(len(fast) == len(slow), f"{name}: {len(fast)} pages, rmcp {len(slow)}")
            for number, (f, s) in enumerate(zip(fast, slow, strict=True), start=1):
                check(
                    f.headers.get("content-type", "").startswith("application/json"),
                    f"{name} page {number}: not the precomputed JSON answer",
                )
                ours, theirs = body_of(f), body_of(s)
                check(ours["id"] == theirs["id"] - len(fast), f"{name}: ids {ours['id']} {theirs['id']}")
                check(
                    ours["result"] == theirs["result"],
                    f"{name} page {number}: the bytes differ from rmcp's answer:\n{f.text[:400]}\n{s.text[:400]}",
                )
                check(
                    f.headers.get("content-encoding") == "gzip",
                    f"{name} page {number}: not gzipped for a client that accepts gzip: {dict(f.headers)}",
                )
                check(
                    "accept-encoding" in f.headers.get("vary", "").lower(),
                    f"{name} page {number}: no Vary: accept-encoding",
                )
                cursor = None if number == 1 else body_of(fast[number - 2])["result"]["nextCursor"]
                plain = await era.list(cursor, origin=False, encoding="identity")
                check("content-encoding" not in plain.headers, f"{name} page {number}: identity refused")
                # A body of known length: Content-Length, not chunked, for both encodings.
                for answer, wire in ((f, f.num_bytes_downloaded), (plain, len(plain.content))):
                    check(
                        "transfer-encoding" not in answer.headers
                        and answer.headers.get("content-length") == str(wire),
                        f"{name} page {number}: not sent with its length: {dict(answer.headers)}",
                    )
                after_id = lambda text: text[text.index(',"result":') :]  # noqa: E731
                check(
                    after_id(plain.text) == after_id(f.text),
                    f"{name} page {number}: gzipped and plain answers differ",
                )
                chunked = await era.list(cursor, origin=False, encoding="identity", chunked=True)
                check(
                    chunked.request.headers.get("transfer-encoding") == "chunked",
                    f"{name} page {number}: the request was not sent chunked",
                )
                check(
                    chunked.headers.get("content-type", "").startswith("application/json")
                    and after_id(chunked.text) == after_id(plain.text),
                    f"{name} page {number}: a chunked request got another answer: {chunked.text[:300]}",
                )
                print(
                    f"{name} page {number}: {len(f.content)} bytes ({f.num_bytes_downloaded} gzipped), "
                    "the same result as rmcp's, and the same bytes to a chunked request"
                )
            full_entries[modern] = [e for page in fast for e in raw_entries(page.text)]

        narrowed = json.loads(args.narrowed)
        for modern in (False, True):
            era = Era(http, args.narrowed_url, modern)
            await era.open()
            entries = [e for page in await era.pages(origin=False) for e in raw_entries(page.text)]
            names = [json.loads(e)["name"] for e in entries]
            check(names == narrowed, f"narrowed server lists {names}, expected {narrowed}")
            for entry in entries:
                check(entry in full_entries[modern], f"narrowed entry not byte-identical: {entry[:200]}")
            print(f"narrowed ({MODERN if modern else 'legacy'}): {len(entries)} entries, byte-identical")


if __name__ == "__main__":
    run(main, arguments())
