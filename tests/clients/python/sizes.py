"""The size of a server's `tools/list` on `/mcp` and on each group endpoint, with the official
Python SDK.

The groups are read from the 404 of an unknown group (which names them). For each endpoint the
script lists every page and sums the `result` objects as compact JSON (`body`), and each tool's
entry (`entries`). It prints one JSON object: `{"whole": {...}, "groups": {name: {...}}}`, each
with `tools`, `pages`, `body` and `entries`, and for a group `whole_entries`, the size of its
tools' entries in the whole list. With `--catalog` the server is in catalog mode: every list
must be the four fixed tools and at most 4096 bytes; otherwise each group's entries must be the
whole list's entries byte for byte, and its body at most its tools' entries plus the whole
list's own overhead (what `/mcp`'s body holds besides its entries).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import httpx
import mcp

from common import check, http_parser, run

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
FIXED = ["search", "describe", "run_read_only", "run"]
CATALOG_MAX = 4096


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


async def listed(url: str, mode: str) -> dict[str, Any]:
    """Every page of tools/list at `url`: sizes and entries."""
    entries: dict[str, str] = {}
    body = pages = 0
    async with mcp.Client(url, mode=mode, read_timeout_seconds=60) as client:
        cursor = None
        while True:
            result = await client.list_tools(cursor=cursor, cache_mode="bypass")
            pages += 1
            body += len(compact(result.model_dump(by_alias=True, exclude_none=True, mode="json")).encode())
            for tool in result.tools:
                entries[tool.name] = compact(tool.model_dump(by_alias=True, exclude_none=True, mode="json"))
            cursor = result.next_cursor
            if not cursor:
                break
            check(pages < 1000, f"{url}: more than 1000 pages")
    size = sum(len(e.encode()) for e in entries.values())
    return {"tools": len(entries), "pages": pages, "body": body, "entries": size, "_entries": entries}


async def main(args: argparse.Namespace) -> None:
    base = args.url.rstrip("/")
    async with httpx.AsyncClient(timeout=30) as http:
        missing = await http.post(f"{base}/no-such-group", headers=HEADERS, content="{}")
    check(missing.status_code == 404, f"/mcp/no-such-group answered {missing.status_code}")
    named = missing.text.split(": ")[-1] if "(each at /mcp/<group>)" in missing.text else ""
    groups = [g.strip() for g in named.split(",") if g.strip()]
    check(groups, f"no groups named: {missing.text!r}")

    whole = await listed(base, args.mode)
    report: dict[str, Any] = {"whole": whole, "groups": {}}
    overhead = whole["body"] - whole["entries"]
    for group in groups:
        part = await listed(f"{base}/{group}", args.mode)
        report["groups"][group] = part
        if args.catalog:
            check(list(part["_entries"]) == FIXED, f"/mcp/{group}: {list(part['_entries'])!r}")
            check(part["body"] <= CATALOG_MAX, f"/mcp/{group}: the catalog list is {part['body']} bytes")
            continue
        for name, entry in part["_entries"].items():
            check(whole["_entries"].get(name) == entry, f"/mcp/{group}: the entry of {name} differs from /mcp's")
        part["whole_entries"] = part["entries"]
        check(part["body"] <= part["entries"] + overhead, f"/mcp/{group}: {part['body']} bytes for {part['entries']} bytes of entries")
    if args.catalog:
        check(list(whole["_entries"]) == FIXED, f"/mcp: {list(whole['_entries'])!r}")
        check(whole["body"] <= CATALOG_MAX, f"/mcp: the catalog list is {whole['body']} bytes")
    for part in [whole, *report["groups"].values()]:
        del part["_entries"]
    print(compact(report))
    largest = max(report["groups"].items(), key=lambda item: item[1]["body"])
    print(f"/mcp: {whole['tools']} tools, {whole['body']} bytes; {len(groups)} groups, the largest {largest[0]}: {largest[1]['body']} bytes")


if __name__ == "__main__":
    p = http_parser(__doc__)
    p.add_argument("--catalog", action="store_true", help="the server is in catalog mode")
    run(main, p.parse_args())
