"""Resources, prompts and completions of the conformance fixture's server `test-mcp`
(tests/fixtures/conformance.yaml, 4 items per page), driven with the Python SDK:

    docs.py --url URL --mode legacy|2026-07-28

Lists every resource across pages (each served tool's help, then the cheat sheets, then each
skill's SKILL.md, which a client without the Skills extension reads as an ordinary resource),
reads a tool's help, a cheat sheet and a skill's SKILL.md, reads a URI built from the resource template, reads an unknown
URI (not found, with data.uri), lists the prompts across pages and gets two (placeholders
filled, a tool's help embedded), completes the template's `tool` variable and a prompt
argument, and checks the errors for an unknown completion argument, an unknown prompt and
argument, and an invalid cursor.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import check, http_parser, run  # noqa: E402

import mcp  # noqa: E402
import mcp.types as types  # noqa: E402

# The tools of the conformance fixture app, in serving order.
TOOLS = [
    "test_simple_text",
    "test_reconnection",
    "test_error_handling",
    "test_tool_with_progress",
    "test_logging_tool",
    "test_tool_with_logging",
    "test_elicitation",
    "test_streaming_elicitation",
    "test_input_required_result_request_state",
    "test_input_required_result_tampered_state",
    "test_input_required_result_elicitation",
    "test_input_required_result_multi_round",
    "test_elicitation_sep1034_defaults",
    "multi_input",
    "confirm_greeting",
    "test_prompt_with_embedded_resource",
    "slow_compute",
    "greet",
    "failing_job",
    "test_tool_with_task",
    "confirm_delete",
]
# Its cheats, by label (each a cheat sheet and a prompt).
CHEATS = [
    "conformance",
    "slow_compute",
    "static-text",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_simple_prompt",
    "watched-resource",
]
# The skill of each cheat: its label made a skill name (SEP-2640).
SKILLS = [label.replace("_", "-") for label in CHEATS]
PAGE_SIZE = 4
TEMPLATE = "test://help/{tool}"


async def pages(fetch: Any, field: str) -> tuple[list[Any], int]:
    """Every item of a paginated list, and how many pages it took."""
    items: list[Any] = []
    cursor = None
    count = 0
    while True:
        page = await fetch(cursor=cursor, cache_mode="refresh")
        count += 1
        got = getattr(page, field)
        check(len(got) <= PAGE_SIZE, f"{field}: a page of {len(got)} items, page size {PAGE_SIZE}")
        items.extend(got)
        cursor = page.next_cursor
        if not cursor:
            return items, count
        check(count < 50, f"{field}: more than 50 pages")


async def error_of(what: str, call: Any) -> mcp.MCPError:
    """The JSON-RPC error `call` must raise."""
    try:
        result = await call
    except mcp.MCPError as error:
        print(f"{what}: {error.code} {error.message}")
        return error
    raise AssertionError(f"{what}: expected a JSON-RPC error, got {result!r}")


def text_contents(result: types.ReadResourceResult, uri: str) -> str:
    check(len(result.contents) == 1, f"{uri}: {len(result.contents)} contents")
    content = result.contents[0]
    check(isinstance(content, types.TextResourceContents), f"{uri}: not text: {content!r}")
    check(str(content.uri) == uri, f"{uri}: contents for {content.uri}")
    check(content.mime_type == "text/markdown", f"{uri}: MIME type {content.mime_type}")
    return content.text


async def main(args: argparse.Namespace) -> None:
    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30) as client:
        resources, count = await pages(client.list_resources, "resources")
        uris = [str(resource.uri) for resource in resources]
        expected = (
            [f"test://help/{tool}" for tool in TOOLS]
            + [f"test://{label}" for label in CHEATS]
            + [f"skill://test/{name}/SKILL.md" for name in SKILLS]
        )
        check(uris == expected, f"resources {uris}, expected {expected}")
        check(count > 1, f"resources/list took {count} page(s)")
        print(f"resources: {len(uris)} in {count} pages")

        uri = "test://help/slow_compute"
        help_text = text_contents(await client.read_resource(uri), uri)
        for part in [
            "# conformance slow_compute",
            "MCP tool: `slow_compute`",
            "conformance slow_compute [<flags>] [<label>]",
            "| `--seconds=SECONDS` | no | `1` |",
            "Values: `fast`, `thorough`.",
            "## Tags\n\n`impact:ro`",
            "## Cheat\n\n```text\n# Compute for a while",
        ]:
            check(part in help_text, f"{uri}: {part!r} missing from:\n{help_text}")
        print(f"read {uri}: {len(help_text)} bytes of Markdown")

        sheet = text_contents(await client.read_resource("test://static-text"), "test://static-text")
        check("content of the static text resource" in sheet, f"static-text: {sheet!r}")

        skill_uri = "skill://test/static-text/SKILL.md"
        skill = text_contents(await client.read_resource(skill_uri), skill_uri)
        check(skill.startswith("---\nname: static-text\ndescription: "), f"{skill_uri}: {skill!r}")
        check("content of the static text resource" in skill, f"{skill_uri}: {skill!r}")
        listed = next(resource for resource in resources if str(resource.uri) == skill_uri)
        check(listed.name == "static-text" and listed.size == len(skill.encode()), f"{skill_uri}: {listed!r}")
        print(f"read {skill_uri}: the cheat under its frontmatter")

        templates = (await client.list_resource_templates(cache_mode="refresh")).resource_templates
        check([t.uri_template for t in templates] == [TEMPLATE], f"templates {templates!r}")
        from_template = TEMPLATE.replace("{tool}", "greet")
        greet = text_contents(await client.read_resource(from_template), from_template)
        check(greet.startswith("# conformance greet\n"), f"{from_template}: {greet[:80]!r}")
        print(f"template: {TEMPLATE} -> {from_template}")

        missing = "test://help/no_such_tool"
        error = await error_of("unknown resource", client.read_resource(missing))
        expected_code = -32602 if args.mode == "2026-07-28" else -32002
        check(error.code == expected_code, f"unknown resource: code {error.code}, expected {expected_code}")
        check(error.data == {"uri": missing}, f"unknown resource: data {error.data!r}")

        prompts, count = await pages(client.list_prompts, "prompts")
        names = [prompt.name for prompt in prompts]
        check(names == CHEATS, f"prompts {names}, expected {CHEATS}")
        check(all(prompt.description for prompt in prompts), "a prompt without a description")
        with_args = next(p for p in prompts if p.name == "test_prompt_with_arguments")
        check(
            [a.name for a in with_args.arguments or []] == ["arg1", "arg2"],
            f"test_prompt_with_arguments arguments: {with_args.arguments!r}",
        )
        print(f"prompts: {len(names)} in {count} pages")

        got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "Ada", "arg2": "?"})
        first = got.messages[0].content
        check(isinstance(first, types.TextContent), f"prompt message: {first!r}")
        check("conformance greet Ada --punctuation ?" in first.text, f"prompt text: {first.text!r}")
        got = await client.get_prompt("slow_compute", {"mode": "thorough"})
        check(len(got.messages) == 2, f"slow_compute prompt: {len(got.messages)} messages")
        text = got.messages[0].content
        check(isinstance(text, types.TextContent), f"slow_compute text: {text!r}")
        check("--mode thorough <label>" in text.text, f"slow_compute text: {text.text!r}")
        embedded = got.messages[1].content
        check(isinstance(embedded, types.EmbeddedResource), f"not embedded: {embedded!r}")
        check(str(embedded.resource.uri) == uri, f"embedded {embedded.resource.uri}")
        print("prompt: placeholders filled, the tool's help embedded")

        completed = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri=TEMPLATE),
            {"name": "tool", "value": "test_input"},
        )
        values = completed.completion.values
        check(
            values == [t for t in TOOLS if t.startswith("test_input")],
            f"template completion: {values}",
        )
        completed = await client.complete(
            types.PromptReference(type="ref/prompt", name="slow_compute"),
            {"name": "mode", "value": "t"},
        )
        check(completed.completion.values == ["thorough"], f"prompt completion: {completed.completion}")
        print("completions: template variable and prompt argument")

        error = await error_of(
            "unknown completion argument",
            client.complete(
                types.PromptReference(type="ref/prompt", name="slow_compute"),
                {"name": "colour", "value": ""},
            ),
        )
        check(error.code == -32602, f"unknown completion argument: code {error.code}")
        check(
            'prompt "slow_compute" has no argument "colour" to complete; its arguments: seconds, mode, label'
            == error.message,
            f"unknown completion argument: {error.message!r}",
        )
        error = await error_of("unknown prompt", client.get_prompt("nope"))
        check(error.code == -32602 and "unknown prompt" in error.message, f"unknown prompt: {error.message}")
        error = await error_of(
            "unknown prompt argument", client.get_prompt("test_simple_prompt", {"x": "1"})
        )
        check(
            error.code == -32602 and 'has no argument "x"' in error.message,
            f"unknown prompt argument: {error.message}",
        )
        error = await error_of(
            "invalid cursor", client.list_resources(cursor="bm90LW91cnM", cache_mode="refresh")
        )
        check(error.code == -32602 and "invalid cursor" in error.message, f"invalid cursor: {error.message}")


if __name__ == "__main__":
    run(main, http_parser(__doc__).parse_args())
