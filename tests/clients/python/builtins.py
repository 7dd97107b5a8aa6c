"""The built-in tools of `tasks-builtins-mcp` (tests/fixtures/builtins.yaml) with the official
Python SDK over streamable HTTP, one scenario per run.

The server runs in `--dir`, where the test wrote the files these scenarios read (the script
reads them too, to compare) and built the knowledge index over `corpus/`; `--outside` is a
file outside every root. `read_file` is gated (`confirm: true`), so the client approves every
prompt unless the scenario says otherwise, and the prompts are checked.

Scenarios:

  tools        the exact tool set, the built-ins' schemas, and one call of each built-in
  read_file    small file whole, large file cut with the marker, offset/length paging, UTF-8
               windows, binary content refused pointing to base64_encode, invalid arguments
  confinement  "..", absolute paths and symlinks out of the root, a FIFO (bounded), a
               directory, a missing file: each refused with a clear error; a link inside is fine.
               Paths outside the root and missing files are refused before the user is asked.
  base64       text, files under data/, the size cap (exact and one over), files outside data/
  confirm      read_file gated: `--answer approve` reads, `--answer decline` refuses
  knowledge    knowledge_search ranking, citations, top_k, statuses; knowledge_read; _list
  enumerate    knowledge_enumerate: the complete set with counts, absence said as complete,
               stems and related forms, field scopes, exclusion, refused syntax with its fix
  concurrent   8 knowledge_search calls at once
  not_built    a server whose index does not exist: index_not_built, never a crash (every
               knowledge tool)
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
from typing import Any

import mcp
import mcp.types as types

from common import Failure, check, client, error_result, http_parser, json_result, run, text_of

# What tasks-builtins-mcp serves, in order: the demo's read-only commands, then the built-ins.
SERVED = [
    "task_list",
    "task_show",
    "note_search",
    "store_export",
    "read_file",
    "base64_encode",
    "knowledge_search",
    "knowledge_read",
    "knowledge_list",
    "knowledge_enumerate",
]
BUILTINS = SERVED[4:]
IDENTITY = "tasks-builtins"

# Command output's cap and marker (docs/runtime.md), which read_file shares.
LIMIT = 64 * 1024
HALF = LIMIT // 2
MARKER = "\n...[output truncated]...\n"

# base64_encode's max_bytes in builtins.yaml.
BASE64_CAP = 65536

LEXICAL_TIER = "tier: lexical (FTS5) - no embeddings configured"
NOT_BUILT_NOTE = f"the knowledge index has not been built yet; run: {IDENTITY}-mcp knowledge index"
EMPTY_NOTE = "the knowledge index is empty or the query had no searchable terms"

# The corpus the test wrote under corpus/ (tests/tests/integration/builtins.rs): a chunk's
# content is the section's text; its breadcrumb is the section (index format 2).
FLOW_BACKPRESSURE = (
    "Backpressure slows fast producers when the consumer queue fills up. Backpressure is "
    "signalled per stream, and backpressure never drops messages."
)
DOCUMENTS = [
    {"path": "corpus/flow.md", "title": "Flow control", "chunks": 3},
    {"path": "corpus/guide/retries.md", "title": "Retry policy", "chunks": 1},
    {"path": "corpus/notes.txt", "chunks": 1},
    {"path": "corpus/storage.md", "title": "Storage", "chunks": 2},
]

async def all_tools(c: mcp.Client) -> list[types.Tool]:
    """Every page of `tools/list` (builtins.yaml serves pages of 4 tools)."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(10):
        page = await c.list_tools(cursor=cursor) if cursor else await c.list_tools()
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
    raise Failure("tools/list did not end within 10 pages")


# Bound of a call that must answer at once (a FIFO must never block read_file).
QUICK = 10.0


def approving() -> tuple[list[types.ElicitRequestParams], Any]:
    """An elicitation callback that approves every prompt, and the prompts it saw."""
    prompts: list[types.ElicitRequestParams] = []

    async def answer(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        prompts.append(params)
        return types.ElicitResult(action="accept", content={"approve": True})

    return prompts, answer


def prompt_text(trace: str) -> str:
    """The approval prompt of a gated built-in (docs/builtins.md, Confirmation)."""
    return (
        f"{IDENTITY} wants to run a command that requires your approval.\n\n"
        f"Command: {trace}\nGated by: ai:confirm\n\n"
        "Approve to run it now, or refuse to skip it."
    )


def disk(args: argparse.Namespace, path: str) -> bytes:
    """A file the test wrote in the server's directory."""
    with open(os.path.join(args.dir, path), "rb") as f:
        return f.read()


def outside_error(tool: str, path: str, root: str) -> str:
    """The refusal of a path that resolves outside `root`."""
    return (
        f'{tool}: "{path}" is outside the allowed directories ("{root}"); paths are checked after '
        'resolving ".." and symbolic links'
    )


async def call(c: Any, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """A call bounded by QUICK seconds."""
    try:
        return await asyncio.wait_for(c.call_tool(tool, arguments), QUICK)
    except (TimeoutError, asyncio.TimeoutError):
        raise Failure(f"{tool} {arguments!r} did not answer within {QUICK:.0f}s") from None


async def read(c: Any, what: str, **arguments: Any) -> dict[str, Any]:
    """read_file, which must succeed."""
    return json_result(await call(c, "read_file", arguments), what)


async def refused(c: Any, tool: str, what: str, **arguments: Any) -> str:
    """A call that must fail; its text."""
    return error_result(await call(c, tool, arguments), what)


def check_prompts(prompts: list[types.ElicitRequestParams], traces: list[str]) -> None:
    """Exactly one approval prompt per gated call, showing its trace line, in order."""
    seen = [p.message for p in prompts]
    expected = [prompt_text(t) for t in traces]
    check(seen == expected, f"approval prompts {seen!r}, expected {expected!r}")
    print(f"prompts: {len(prompts)}, one per read_file call")


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------


async def tools(args: argparse.Namespace) -> None:
    prompts, answer = approving()
    async with client(args, elicitation_callback=answer) as c:
        print(f"protocol: {c.protocol_version}")
        listed = await all_tools(c)
        names = [tool.name for tool in listed]
        print(f"tools: {' '.join(names)}")
        check(names == SERVED, f"served tools {names}, expected {SERVED}")
        by_name = {tool.name: tool for tool in listed}
        required = {
            "read_file": ["path"],
            "base64_encode": [],
            "knowledge_search": ["query"],
            "knowledge_read": ["citation"],
            "knowledge_list": [],
            "knowledge_enumerate": ["query"],
        }
        properties = {
            "read_file": {"path", "offset", "length"},
            "base64_encode": {"text", "path"},
            "knowledge_search": {"query", "top_k"},
            "knowledge_read": {"citation"},
            "knowledge_list": set(),
            "knowledge_enumerate": {"query"},
        }
        for name in BUILTINS:
            tool = by_name[name]
            schema = tool.input_schema
            check(tool.output_schema is None, f"{name}: a built-in has an outputSchema {tool.output_schema!r}")
            check(schema.get("type") == "object", f"{name}: inputSchema {schema!r} is not an object")
            check(schema.get("additionalProperties") is False, f"{name}: inputSchema allows unknown properties")
            check(set(schema.get("properties", {})) == properties[name], f"{name}: properties {schema!r}")
            check(sorted(schema.get("required", [])) == required[name], f"{name}: required {schema!r}")
            hints = tool.annotations
            check(hints is not None and hints.read_only_hint is True, f"{name}: not annotated read-only: {hints!r}")
            check(bool(tool.description), f"{name}: no description")
        print("schemas: ok")

        listed_tasks = await call(c, "task_list", {})
        check(not listed_tasks.is_error, f"task_list failed beside the built-ins: {listed_tasks.content!r}")

        notes = await read(c, "read_file", path="notes.txt")
        check(notes["content"] == disk(args, "notes.txt").decode(), f"read_file notes.txt: {notes!r}")
        print(f"read_file: {notes['content']!r}")

        encoded = json_result(await call(c, "base64_encode", {"text": "fisk"}), "base64_encode")
        check(encoded == {"bytes": 4, "base64": "Zmlzaw=="}, f"base64_encode: {encoded!r}")
        print(f"base64_encode: {encoded['base64']}")

        found = json_result(await call(c, "knowledge_search", {"query": "backpressure"}), "knowledge_search")
        check(found.get("status") == "ok" and found.get("results"), f"knowledge_search: {found!r}")
        first = found["results"][0]["citation"]
        print(f"knowledge_search: {first}")

        chunk = json_result(await call(c, "knowledge_read", {"citation": first}), "knowledge_read")
        check(chunk.get("citation") == first, f"knowledge_read {first}: {chunk!r}")
        check("Backpressure slows fast producers" in chunk.get("content", ""), f"knowledge_read: {chunk!r}")
        print(f"knowledge_read: {first} ({len(chunk['content'])} bytes)")

        documents = json_result(await call(c, "knowledge_list", {}), "knowledge_list")
        check(documents.get("count") == len(DOCUMENTS), f"knowledge_list: {documents!r}")
        print(f"knowledge_list: {documents['count']} documents")

        mapped = json_result(await call(c, "knowledge_enumerate", {"query": "backpressure"}), "knowledge_enumerate")
        check(mapped.get("status") == "ok" and mapped.get("matched") == 2, f"knowledge_enumerate: {mapped!r}")
        print(f"knowledge_enumerate: {[d['citation'] for d in mapped['documents']]}")
    check_prompts(prompts, ["read_file notes.txt"])


async def read_file(args: argparse.Namespace) -> None:
    prompts, answer = approving()
    traces: list[str] = []
    async with client(args, elicitation_callback=answer) as c:
        print(f"protocol: {c.protocol_version}")

        # A small text file, whole and verbatim.
        notes = disk(args, "notes.txt").decode()
        small = await read(c, "small file", path="notes.txt")
        traces.append("read_file notes.txt")
        expected = {"path": "notes.txt", "size": len(notes), "offset": 0, "content": notes, "truncated": False}
        check(small == expected, f"read_file notes.txt answered {small!r}, expected {expected!r}")
        print(f"small: {small['size']} bytes whole")

        # A file over 64 KiB: the first and last 32 KiB around the marker.
        big = disk(args, "big.log")
        size = len(big)
        check(size > LIMIT + 1000, f"big.log is only {size} bytes")
        cut = await read(c, "large file", path="big.log")
        traces.append("read_file big.log")
        check(cut["truncated"] is True, f"big.log was not truncated: {cut['truncated']!r}")
        check(cut["size"] == size and cut["offset"] == 0, f"big.log size/offset: {cut['size']}, {cut['offset']}")
        content = cut["content"]
        check(
            content == big[:HALF].decode() + MARKER + big[-HALF:].decode(),
            f"big.log content is not head + marker + tail ({len(content)} chars; starts {content[:40]!r})",
        )
        check(cut.get("next_offset") == HALF, f"big.log next_offset {cut.get('next_offset')!r}")
        note = (
            f"the file has {size} bytes: this shows bytes 0 to {HALF} and {size - HALF} to {size}; "
            f"read the rest with offset and length (at most {LIMIT} bytes a call)"
        )
        check(cut.get("note") == note, f"big.log note {cut.get('note')!r}, expected {note!r}")
        print(f"large: {size} bytes cut to {len(content)} with the marker, next_offset {cut['next_offset']}")

        # One page by offset and length.
        page = await read(c, "page", path="big.log", offset=40000, length=1000)
        traces.append("read_file big.log offset=40000 length=1000")
        expected = {
            "path": "big.log",
            "size": size,
            "offset": 40000,
            "content": big[40000:41000].decode(),
            "truncated": False,
            "next_offset": 41000,
        }
        check(page == expected, f"page 40000+1000 answered {page!r}")
        print("page: offset=40000 length=1000 -> next_offset 41000")

        # Paging through the whole file rebuilds it exactly.
        pieces: list[str] = []
        offset: int | None = 0
        pages = 0
        while offset is not None:
            check(pages < 5, "paging big.log took more than 5 pages")
            got = await read(c, f"page at {offset}", path="big.log", offset=offset, length=LIMIT)
            traces.append(f"read_file big.log offset={offset} length={LIMIT}")
            check(got["offset"] == offset and got["truncated"] is False, f"page at {offset}: {got!r}")
            pieces.append(got["content"])
            offset = got.get("next_offset")
            pages += 1
        check("".join(pieces).encode() == big, "the pages of big.log do not add up to the file")
        print(f"paged: {pages} pages rebuild all {size} bytes")

        # The tail from an offset, without length: the rest, no next_offset.
        tail = await read(c, "tail", path="big.log", offset=size - 12)
        traces.append(f"read_file big.log offset={size - 12}")
        check(tail["content"] == big[-12:].decode() and "next_offset" not in tail, f"tail: {tail!r}")
        past = await refused(c, "read_file", "offset past the end", path="big.log", offset=size + 1)
        traces.append(f"read_file big.log offset={size + 1}")
        check(
            past == f'read_file: offset {size + 1} is past the end of "big.log" ({size} bytes)',
            f"offset past the end: {past!r}",
        )
        print("tail: ok; past the end refused")

        # Windows never split a UTF-8 character ("€" is 3 bytes).
        euro = await read(c, "utf8 window", path="utf8.txt", offset=1, length=6)
        traces.append("read_file utf8.txt offset=1 length=6")
        check(
            (euro["offset"], euro["content"], euro.get("next_offset")) == (3, "€", 6),
            f"the window 1+6 of utf8.txt answered {euro!r}, expected offset 3, content '€', next_offset 6",
        )
        print("utf8: the window 1+6 reads the whole character at 3")

        # Binary content is refused, pointing to base64_encode, and never returned.
        for path, why in [("blob.bin", "it contains NUL bytes"), ("latin1.txt", "it is not valid UTF-8")]:
            text = await refused(c, "read_file", f"binary {path}", path=path)
            traces.append(f"read_file {path}")
            expected_text = f'read_file: "{path}" is not a text file ({why}); use base64_encode to get its bytes'
            check(text == expected_text, f"read_file {path}: {text!r}, expected {expected_text!r}")
            print(f"binary: {text}")

        # Invalid arguments are refused before the gate (no prompt).
        for arguments, needle in [
            ({"path": "notes.txt", "length": 0}, 'property `length`'),
            ({"path": "notes.txt", "offset": -1}, 'property `offset`'),
            ({"path": "notes.txt", "mode": "r"}, "mode"),
            ({}, "path"),
        ]:
            text = error_result(await call(c, "read_file", arguments), f"read_file {arguments!r}")
            check(
                text.startswith("invalid arguments") and needle in text,
                f"read_file {arguments!r}: {text!r} is not an invalid-arguments error naming {needle}",
            )
        print("invalid arguments: refused before asking")
    check_prompts(prompts, traces)


async def confinement(args: argparse.Namespace) -> None:
    prompts, answer = approving()
    traces: list[str] = []
    root = args.dir
    with open(args.outside, encoding="utf-8") as f:
        secret = f.read().strip()
    async with client(args, elicitation_callback=answer) as c:
        print(f"protocol: {c.protocol_version}")
        escapes = [
            "../x",
            "../outside/secret.txt",
            "data/../../outside/secret.txt",
            args.outside,
            "/etc/passwd",
            "escape.txt",
        ]
        for path in escapes:
            text = await refused(c, "read_file", f"read_file {path}", path=path)
            # Refused before asking: no prompt, so no trace.
            check(text == outside_error("read_file", path, root), f"read_file {path!r}: {text!r}")
            check(secret not in text, f"read_file {path!r} leaked the file: {text!r}")
            print(f"refused: {text}")

        # Non-regular files, each by name; the FIFO must answer at once (bounded by QUICK).
        for path, what in [("fifo", "a named pipe (FIFO)"), ("data", "a directory"), ("corpus/guide", "a directory")]:
            text = await refused(c, "read_file", f"read_file {path}", path=path)
            traces.append(f"read_file {path}")
            expected = f'read_file: "{path}" is {what}, not a regular file'
            check(text == expected, f"read_file {path!r}: {text!r}, expected {expected!r}")
            print(f"refused: {text}")

        missing = await refused(c, "read_file", "missing file", path="missing.txt")
        check(missing == 'read_file: "missing.txt" does not exist', f"read_file missing.txt: {missing!r}")
        print(f"refused: {missing}")

        # A link inside the root to a file inside it is fine; so is a `..` that stays inside.
        notes = disk(args, "notes.txt").decode()
        for path in ["inside-link.txt", "data/../notes.txt", os.path.join(root, "notes.txt")]:
            allowed = await read(c, f"read_file {path}", path=path)
            traces.append(f"read_file {path}")
            check(allowed["content"] == notes, f"read_file {path!r}: {allowed!r}")
        print("allowed: a link inside, a .. inside, an absolute path inside")
    # A path that does not resolve inside the root is refused before the user is asked; the
    # others were approved first, and their refusals come from running the approved call.
    check_prompts(prompts, traces)


async def base64_encode(args: argparse.Namespace) -> None:
    prompts, answer = approving()
    data_root = os.path.join(args.dir, "data")
    async with client(args, elicitation_callback=answer) as c:
        print(f"protocol: {c.protocol_version}")
        text = "héllo ✓ wörld"
        encoded = json_result(await call(c, "base64_encode", {"text": text}), "text")
        raw = text.encode()
        expected: dict[str, Any] = {"bytes": len(raw), "base64": base64.b64encode(raw).decode()}
        check(encoded == expected, f"base64_encode text: {encoded!r}, expected {expected!r}")
        print(f"text: {encoded['bytes']} bytes -> {encoded['base64']}")

        for path in ["data/logo.bin", "data/exact.bin"]:
            raw = disk(args, path)
            encoded = json_result(await call(c, "base64_encode", {"path": path}), path)
            expected = {"path": path, "bytes": len(raw), "base64": base64.b64encode(raw).decode()}
            check(encoded == expected, f"base64_encode {path}: {encoded!r:.300}")
            check(base64.b64decode(encoded["base64"]) == raw, f"{path}: the encoding does not decode to the file")
            print(f"file: {path} ({len(raw)} bytes) encoded")

        big = len(disk(args, "data/big.bin"))
        check(big == BASE64_CAP + 1, f"data/big.bin has {big} bytes")
        over = await refused(c, "base64_encode", "file over the cap", path="data/big.bin")
        check(
            over == f'base64_encode: "data/big.bin" is {big} bytes; base64_encode encodes at most {BASE64_CAP} bytes (max_bytes)',
            f"data/big.bin: {over!r}",
        )
        print(f"refused: {over}")
        long_text = "a" * (BASE64_CAP + 1)
        over = await refused(c, "base64_encode", "text over the cap", text=long_text)
        check(
            over == f"base64_encode: the text is {BASE64_CAP + 1} bytes; base64_encode encodes at most {BASE64_CAP} bytes (max_bytes)",
            f"long text: {over!r}",
        )
        print(f"refused: {over}")

        for path in ["notes.txt", "data/escape.txt", "../outside/secret.txt", args.outside]:
            refusal = await refused(c, "base64_encode", f"outside data: {path}", path=path)
            expected_refusal = outside_error("base64_encode", path, data_root)
            check(refusal == expected_refusal, f"base64_encode {path!r}: {refusal!r}")
            print(f"refused: {refusal}")
        fifo = await refused(c, "base64_encode", "fifo", path="data/fifo")
        check(fifo == 'base64_encode: "data/fifo" is a named pipe (FIFO), not a regular file', f"data/fifo: {fifo!r}")

        for arguments in [{}, {"text": "a", "path": "data/logo.bin"}]:
            refusal = await refused(c, "base64_encode", f"arguments {arguments!r}", **arguments)
            check(refusal.startswith("invalid arguments"), f"base64_encode {arguments!r}: {refusal!r}")
        print("invalid arguments: neither or both of text and path refused")
    check(prompts == [], f"base64_encode is not gated, but the client was asked: {prompts!r}")


async def confirm(args: argparse.Namespace) -> None:
    path = f"confirm-{args.mode}.txt"
    secret = disk(args, path).decode()
    prompts: list[types.ElicitRequestParams] = []

    async def answer(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        prompts.append(params)
        if args.answer == "approve":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    async with client(args, elicitation_callback=answer) as c:
        print(f"protocol: {c.protocol_version}")
        result = await call(c, "read_file", {"path": path})

    check(len(prompts) == 1, f"expected one approval prompt, got {len(prompts)}")
    prompt = prompts[0]
    check(prompt.message == prompt_text(f"read_file {path}"), f"prompt {prompt.message!r}")
    schema = prompt.requested_schema
    schema = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True, exclude_none=True)
    check(schema.get("required") == ["approve"], f"requested schema {schema!r} does not require approve")
    print(f"asked: {prompt.message.splitlines()[2]}")

    if args.answer == "approve":
        approved = json_result(result, "approved read_file")
        check(approved["content"] == secret, f"approved read_file answered {approved!r}")
        print(f"outcome: read {approved['size']} bytes")
        return
    text = text_of(result)
    print(f"outcome: {text}")
    check(result.is_error, f"a declined read_file is not an error: {text!r}")
    expected = (
        f'Not approved: the user declined to run "read_file {path}". This was their decision, not an '
        "error; do not retry, ask how they want to proceed."
    )
    check(text == expected, f"declined text {text!r}, expected {expected!r}")
    check("declined" in text, "the refusal does not say declined")
    check(secret.strip() not in text, f"the declined call returned the file: {text!r}")
    check(result.structured_content is None, "a refusal carries structuredContent")


async def knowledge(args: argparse.Namespace) -> None:
    async with client(args) as c:
        print(f"protocol: {c.protocol_version}")

        async def search(query: str, **extra: Any) -> dict[str, Any]:
            found = json_result(await call(c, "knowledge_search", {"query": query, **extra}), f"search {query!r}")
            check(found.get("tier") == LEXICAL_TIER, f"search {query!r}: tier {found.get('tier')!r}")
            check(isinstance(found.get("results"), list), f"search {query!r}: results {found!r}")
            return found

        def citations(found: dict[str, Any]) -> list[str]:
            return [hit["citation"] for hit in found["results"]]

        # Ranked: three mentions in a short chunk beat one; only the matching chunks come back.
        found = await search("backpressure")
        print(f"backpressure: {citations(found)}")
        check(found["status"] == "ok" and "note" not in found, f"backpressure: {found!r}")
        check(citations(found) == ["corpus/flow.md#1", "corpus/storage.md#1"], f"backpressure ranked {citations(found)}")
        hit = found["results"][0]
        expected_hit = {"citation": "corpus/flow.md#1", "section": "Flow control > Backpressure", "content": FLOW_BACKPRESSURE}
        check(hit == expected_hit, f"the first backpressure result {hit!r}, expected {expected_hit!r}")
        check(
            found["results"][1]["section"] == "Storage > Compaction",
            f"second result section {found['results'][1]!r}",
        )

        found = await search("retries")
        print(f"retries: {citations(found)}")
        check(citations(found)[:1] == ["corpus/guide/retries.md#0"], f"retries ranked {citations(found)}")
        check("corpus/flow.md#2" in citations(found)[1:], f"retries misses corpus/flow.md#2: {citations(found)}")
        check(
            found["results"][0]["section"] == "Retry policy > Retries and timeouts",
            f"retries section {found['results'][0]!r}",
        )

        # A text file without headings: no section.
        found = await search("zebra migration")
        print(f"zebra: {citations(found)}")
        check(citations(found) == ["corpus/notes.txt#0"], f"zebra: {citations(found)}")
        check("section" not in found["results"][0], f"a chunk without headings has a section: {found!r}")
        check("zebra migration" in found["results"][0]["content"], f"zebra content: {found!r}")

        # top_k: the configured 3 by default, the argument when given.
        broad = "backpressure retries compaction producers tasks zebra"
        check(len((await search(broad))["results"]) == 3, "the configured top_k (3) is not applied")
        check(len((await search(broad, top_k=1))["results"]) == 1, "top_k=1 gave another count")
        five = await search(broad, top_k=5)
        check(len(five["results"]) == 5, f"top_k=5 gave {len(five['results'])} results")
        check(len(set(citations(five))) == 5, f"duplicate citations: {citations(five)}")
        print("top_k: 3 by default, 1 and 5 when asked")

        # Statuses: no match is ok and empty; no searchable terms is index_empty.
        nothing = await search("xylophone")
        check(nothing["status"] == "ok" and nothing["results"] == [], f"no match: {nothing!r}")
        empty = await search("? !")
        check(
            empty["status"] == "index_empty" and empty.get("note") == EMPTY_NOTE and empty["results"] == [],
            f"no searchable terms: {empty!r}",
        )
        invalid = error_result(await call(c, "knowledge_search", {"query": "x", "top_k": "3"}), "top_k string")
        check(
            invalid == 'invalid arguments for knowledge_search: property `top_k`: expected an integer, got the string "3"',
            f"top_k string: {invalid!r}",
        )
        print("statuses: no match ok/[], no terms index_empty, top_k \"3\" invalid")

        # knowledge_read returns the cited text, with neighbours to read on.
        chunk = json_result(await call(c, "knowledge_read", {"citation": "corpus/flow.md#1"}), "knowledge_read")
        expected_chunk = {
            "citation": "corpus/flow.md#1",
            "title": "Flow control",
            "section": "Flow control > Backpressure",
            "content": FLOW_BACKPRESSURE,
            "truncated": False,
            "previous": "corpus/flow.md#0",
            "next": "corpus/flow.md#2",
        }
        check(chunk == expected_chunk, f"knowledge_read corpus/flow.md#1: {chunk!r}, expected {expected_chunk!r}")
        print(f"read: {chunk['citation']} = the cited text, previous {chunk['previous']}, next {chunk['next']}")
        for hit in (await search("retries"))["results"]:
            got = json_result(await call(c, "knowledge_read", {"citation": hit["citation"]}), hit["citation"])
            check(got["content"] == hit["content"], f"knowledge_read {hit['citation']} differs from the search hit")
        last = json_result(await call(c, "knowledge_read", {"citation": "corpus/flow.md#2"}), "last chunk")
        check("next" not in last and last.get("previous") == "corpus/flow.md#1", f"last chunk: {last!r}")

        for citation, expected_error in [
            (
                "corpus/flow.md",
                'knowledge_read: "corpus/flow.md" is not a citation: expected <document path>#<chunk number>, '
                "as knowledge_search returns them (for example docs/guide.md#3)",
            ),
            (
                "corpus/nope.md#0",
                'knowledge_read: no indexed document "corpus/nope.md"; knowledge_list shows the indexed documents',
            ),
            (
                "corpus/flow.md#7",
                'knowledge_read: "corpus/flow.md" has chunks #0 to #2; "corpus/flow.md#7" does not exist',
            ),
        ]:
            text = error_result(await call(c, "knowledge_read", {"citation": citation}), citation)
            check(text == expected_error, f"knowledge_read {citation!r}: {text!r}, expected {expected_error!r}")
        print("read errors: not a citation, unknown document, chunk out of range")

        # knowledge_list: exactly the indexed documents (dot-directories and other files skipped).
        listed = json_result(await call(c, "knowledge_list", {}), "knowledge_list")
        expected_list = {"status": "ok", "count": len(DOCUMENTS), "truncated": False, "documents": DOCUMENTS}
        check(listed == expected_list, f"knowledge_list {listed!r}, expected {expected_list!r}")
        total = sum(d["chunks"] for d in listed["documents"])
        check(total == args.chunks, f"knowledge_list counts {total} chunks, the indexer wrote {args.chunks}")
        print(f"list: {[d['path'] for d in listed['documents']]}, {total} chunks")


ENUMERATE_TIER = "tier: lexical (FTS5) - matching is complete, never ranked"
ENUMERATE_NOT_BUILT_NOTE = (
    "The knowledge index has not been built yet, so this is not an answer about the operator's "
    "documents. Nothing can be concluded about what they contain."
)


def complete_note(matched: int) -> str:
    """Fisk AI's note of an answer that lists every matching document."""
    return f"This is the complete set: all {matched} matching documents of {len(DOCUMENTS)} indexed, not a ranked selection."


async def enumerate_scenario(args: argparse.Namespace) -> None:
    async with client(args) as c:
        print(f"protocol: {c.protocol_version}")

        async def enumerate_(query: str) -> dict[str, Any]:
            found = json_result(await call(c, "knowledge_enumerate", {"query": query}), f"enumerate {query!r}")
            check(found.get("tier") == ENUMERATE_TIER, f"enumerate {query!r}: tier {found.get('tier')!r}")
            check(found.get("indexed_documents") == len(DOCUMENTS), f"enumerate {query!r}: {found!r}")
            return found

        def cited(found: dict[str, Any]) -> list[str]:
            return [d["citation"] for d in found["documents"]]

        # The complete set, most matches first, each document cited by its first matching
        # chunk, with counts and never any text.
        found = await enumerate_("backpressure")
        expected: dict[str, Any] = {
            "tier": ENUMERATE_TIER,
            "status": "ok",
            "compiled": '"backpressure"',
            "matched": 2,
            "returned": 2,
            "truncated": False,
            "indexed_documents": len(DOCUMENTS),
            "note": complete_note(2),
            "documents": [
                {"citation": "corpus/flow.md#1", "body_matches": 1, "heading_matches": 1, "total_chunks": 3},
                {"citation": "corpus/storage.md#1", "body_matches": 1, "heading_matches": 0, "total_chunks": 2},
            ],
            "terms": [{"term": "backpressure", "documents": 2, "as_written": 2}],
        }
        check(found == expected, f"enumerate backpressure: {found!r}, expected {expected!r}")
        print(f"backpressure: {cited(found)}")

        # Absence is said to be complete, which a ranked search cannot say.
        found = await enumerate_("xylophone")
        note = (
            f"No document in the index of {len(DOCUMENTS)} contains this. This is the complete answer and not a "
            'ranking cutoff, so it is safe to say the documents do not mention it. No document contains "xylophone" '
            "in any form."
        )
        check(
            found["status"] == "ok" and found["matched"] == 0 and found["documents"] == [] and found["note"] == note,
            f"enumerate xylophone: {found!r}",
        )
        print(f"absent: {found['note']}")

        # Matching by stem: "retry" finds "retries", and the note says how many hold it as written.
        found = await enumerate_("retry")
        check(cited(found) == ["corpus/flow.md#2", "corpus/guide/retries.md#0"], f"enumerate retry: {found!r}")
        term = found["terms"][0]
        check(
            term == {"term": "retry", "documents": 2, "as_written": 1, "related_forms": ["retries"]},
            f"enumerate retry: term {term!r}",
        )
        stem_note = '2 documents contain "retry" or a related form (retries); 1 contain it as written.'
        check(found["note"] == f"{complete_note(2)} {stem_note}", f"enumerate retry: note {found['note']!r}")
        print(f"stem: {stem_note}")

        # Words side by side must all appear in one document; -word excludes; heading: scopes.
        both = await enumerate_("backpressure compaction")
        check(cited(both) == ["corpus/storage.md#1"], f"backpressure compaction: {both!r}")
        excluded = await enumerate_("backpressure -compaction")
        check(cited(excluded) == ["corpus/flow.md#1"], f"backpressure -compaction: {excluded!r}")
        check(excluded["compiled"] == '"backpressure" AND -"compaction"', f"compiled {excluded['compiled']!r}")
        heading = await enumerate_("heading:retries")
        check(cited(heading) == ["corpus/flow.md#2", "corpus/guide/retries.md#0"], f"heading:retries: {heading!r}")
        check(
            [(d["body_matches"], d["heading_matches"]) for d in heading["documents"]] == [(0, 1), (0, 1)],
            f"heading:retries counts body matches: {heading!r}",
        )
        body = await enumerate_("body:compaction")
        check(cited(body) == ["corpus/storage.md#1"], f"body:compaction: {body!r}")
        phrase = await enumerate_('"consumer queue"')
        check(cited(phrase) == ["corpus/flow.md#1"], f"phrase: {phrase!r}")
        apart = await enumerate_('"queue consumer"')
        check(apart["matched"] == 0, f"a phrase in the wrong order matched: {apart!r}")
        print("language: together, -exclude, heading:, body:, \"phrase\"")

        # Too short to look up: said, never searched.
        short = await enumerate_("x")
        check(
            short["status"] == "query_empty"
            and short["terms"] == [{"term": "x", "documents": 0, "as_written": 0, "not_queried": True}],
            f"enumerate x: {short!r}",
        )

        # Syntax the language does not have is refused with the fix, never misread.
        for query, expected_error in [
            ("api OR web", 'knowledge_enumerate: "OR" is not an operator here; alternatives are not supported; run one query per term and compare'),
            ("dep*", "knowledge_enumerate: \"dep*\" uses '*', which this command does not support; matching is by word stem already, so deprecated finds deprecate and deprecation"),
            ("-deprecated", "knowledge_enumerate: a query of only exclusions has nothing to exclude from; add a term to match, as in: api -deprecated"),
            ("title:flow", 'knowledge_enumerate: unknown field "title"; body: and heading: are the only fields this command knows'),
        ]:
            text = error_result(await call(c, "knowledge_enumerate", {"query": query}), query)
            check(text == expected_error, f"enumerate {query!r}: {text!r}, expected {expected_error!r}")
            print(f"refused: {text}")


# Eight different searches and the chunk each must rank first.
CONCURRENT = [
    ("backpressure", "corpus/flow.md#1"),
    ("retries timeouts", "corpus/guide/retries.md#0"),
    ("compaction", "corpus/storage.md#1"),
    ("zebra", "corpus/notes.txt#0"),
    ("JSON file", "corpus/storage.md#0"),
    ("consumers in step", "corpus/flow.md#0"),
    ("exponential delay publisher", "corpus/flow.md#2"),
    ("five attempts", "corpus/guide/retries.md#0"),
]


async def concurrent(args: argparse.Namespace) -> None:
    async with client(args) as c:
        print(f"protocol: {c.protocol_version}")
        await c.list_tools()

        async def one(query: str) -> types.CallToolResult:
            return await c.call_tool("knowledge_search", {"query": query})

        try:
            results = await asyncio.wait_for(asyncio.gather(*(one(q) for q, _ in CONCURRENT)), 30)
        except (TimeoutError, asyncio.TimeoutError):
            raise Failure("8 concurrent searches did not all answer within 30s") from None
    for (query, top), result in zip(CONCURRENT, results, strict=True):
        found = json_result(result, f"search {query!r}")
        check(found.get("status") == "ok", f"search {query!r}: {found!r}")
        first = found["results"][0]["citation"] if found["results"] else None
        check(first == top, f"search {query!r} ranked {first!r} first, expected {top!r}")
    print(f"concurrent: {len(results)} searches, each with its expected first result")


async def not_built(args: argparse.Namespace) -> None:
    async with client(args) as c:
        print(f"protocol: {c.protocol_version}")
        names = [tool.name for tool in await all_tools(c)]
        check(names == SERVED, f"served tools {names}, expected {SERVED}")
        found = json_result(await call(c, "knowledge_search", {"query": "backpressure"}), "knowledge_search")
        expected: dict[str, Any] = {"tier": LEXICAL_TIER, "status": "index_not_built", "note": NOT_BUILT_NOTE, "results": []}
        check(found == expected, f"knowledge_search without an index: {found!r}, expected {expected!r}")
        print(f"search: {found['status']}")
        listed = json_result(await call(c, "knowledge_list", {}), "knowledge_list")
        expected = {"status": "index_not_built", "note": NOT_BUILT_NOTE, "count": 0, "documents": [], "truncated": False}
        check(listed == expected, f"knowledge_list without an index: {listed!r}, expected {expected!r}")
        print(f"list: {listed['status']}")
        text = error_result(await call(c, "knowledge_read", {"citation": "corpus/flow.md#0"}), "knowledge_read")
        check(text == f"knowledge_read: {NOT_BUILT_NOTE}", f"knowledge_read without an index: {text!r}")
        print(f"read: {text}")
        mapped = json_result(await call(c, "knowledge_enumerate", {"query": "backpressure"}), "knowledge_enumerate")
        expected = {
            "tier": ENUMERATE_TIER,
            "status": "index_not_built",
            "compiled": "",
            "matched": 0,
            "returned": 0,
            "truncated": False,
            "indexed_documents": 0,
            "note": ENUMERATE_NOT_BUILT_NOTE,
            "documents": [],
            "terms": [],
        }
        check(mapped == expected, f"knowledge_enumerate without an index: {mapped!r}, expected {expected!r}")
        print(f"enumerate: {mapped['status']}")
        # Still serving: a second search answers the same.
        again = json_result(await call(c, "knowledge_search", {"query": "retries"}), "second search")
        check(again["status"] == "index_not_built", f"second search: {again!r}")


SCENARIOS = {
    "tools": tools,
    "read_file": read_file,
    "confinement": confinement,
    "base64": base64_encode,
    "confirm": confirm,
    "knowledge": knowledge,
    "enumerate": enumerate_scenario,
    "concurrent": concurrent,
    "not_built": not_built,
}


def first_failure(error: BaseException) -> Failure | None:
    """The failed check inside `error`, which the client's task group may have wrapped in an
    exception group."""
    if isinstance(error, Failure):
        return error
    for inner in getattr(error, "exceptions", ()):
        found = first_failure(inner)
        if found is not None:
            return found
    return None


async def main(args: argparse.Namespace) -> None:
    try:
        await SCENARIOS[args.scenario](args)
    except Exception as error:
        failure = first_failure(error)
        if failure is None or failure is error:
            raise
        raise failure from None


if __name__ == "__main__":
    p = http_parser(__doc__)
    p.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    p.add_argument("--dir", required=True, help="the server's working directory (canonical)")
    p.add_argument("--outside", default="", help="a file outside every root")
    p.add_argument("--answer", choices=["approve", "decline"], default="approve", help="confirm: the answer")
    p.add_argument("--chunks", type=int, default=-1, help="knowledge: the chunks the indexer reported")
    run(main, p.parse_args())
