"""The knowledge spans and the metric of a hybrid index (tests/fixtures/hybrid.yaml,
`tasks-hybrid-mcp`), with the official Python SDK making the calls, the OpenTelemetry
Collector's `otlpreceiver` (tests/apps/otlpsink) writing the spans it accepts to `--spans` and
the metrics to `--metrics`, and the embeddings stand-in (embeddings_standin.py) told through
`--control` how to answer.

Three searches: the embeddings server answers (the `hybrid` tier ran), answers 503 (degraded,
reason `embeddings`) and answers too late (degraded, reason `timeout`). Each is an
`execute_tool knowledge_search` span holding a `retrieval` span holding one
`embeddings <model>` span, with Fisk AI's names, kinds and attributes (docs/telemetry.md); the
two degraded searches are counted by `fisk.knowledge.degraded_searches`, by reason.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import mcp

from common import check, http_parser, run, text_of
from telemetry import CLIENT, SERVER, STATUS_ERROR, attributes, received, value_of

MODEL = "stand-in-embeddings"
PORT = 47311
QUERY = "backpressure"


def control(url: str, answer: str) -> None:
    """Tells the stand-in how to answer from now on."""
    request = urllib.request.Request(url, data=answer.encode(), method="POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        check(response.status == 200, f"the stand-in refused {answer!r}")


def metrics(path: Path) -> list[dict[str, Any]]:
    """Every metric in the receiver's output so far, in order."""
    out: list[dict[str, Any]] = []
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        for resource in json.loads(line).get("resourceMetrics", []):
            for scope in resource.get("scopeMetrics", []):
                out.extend(scope.get("metrics", []))
    return out


def degraded_counts(path: Path) -> dict[str, int] | None:
    """The last export of `fisk.knowledge.degraded_searches`: the count by reason."""
    found = [m for m in metrics(path) if m.get("name") == "fisk.knowledge.degraded_searches"]
    if not found:
        return None
    last = found[-1]
    check(last.get("unit") == "{search}", f"the counter's unit {last.get('unit')!r}")
    total = last.get("sum")
    check(total is not None, f"the counter is not a sum: {last!r}")
    check(total.get("isMonotonic") is True, f"the counter is not monotonic: {total!r}")
    check(total.get("aggregationTemporality") == 2, f"the counter is not cumulative: {total!r}")
    counts: dict[str, int] = {}
    for point in total.get("dataPoints", []):
        attrs = attributes(point)
        check(set(attrs) == {"fisk.knowledge.degraded_reason"}, f"a data point's attributes {attrs!r}")
        counts[attrs["fisk.knowledge.degraded_reason"]] = int(value_of({"intValue": point["asInt"]}))
    return counts


async def search(c: mcp.Client) -> dict[str, Any]:
    found = await c.call_tool("knowledge_search", {"query": QUERY})
    check(not found.is_error, f"knowledge_search failed: {found.content!r}")
    return json.loads(text_of(found))


async def main(args: argparse.Namespace) -> None:
    answers: dict[str, dict[str, Any]] = {}
    async with mcp.Client(args.url, mode=args.mode, read_timeout_seconds=30) as c:
        for answer in ["ok", "fail", "hang"]:
            control(args.control, answer)
            answers[answer] = await search(c)
    control(args.control, "ok")
    check("DEGRADED" not in answers["ok"]["tier"], f"the answered search degraded: {answers['ok']['tier']!r}")
    for answer in ["fail", "hang"]:
        check("DEGRADED" in answers[answer]["tier"], f"the {answer} search did not degrade: {answers[answer]!r}")

    path = Path(args.spans)
    deadline = time.monotonic() + 20
    spans, resources = received(path)
    while len(spans) < 9 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        spans, resources = received(path)
    names = sorted(span["name"] for span in spans)
    check(len(spans) == 9, f"the receiver got {len(spans)} spans, expected 9: {names}")
    print(f"received: {names}")
    for resource in resources:
        check(resource.get("service.name") == "tasks-hybrid", f"resource {resource!r}")

    by_parent: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_parent.setdefault(span.get("parentSpanId", ""), []).append(span)
    calls = sorted(
        (s for s in spans if s["name"] == "execute_tool knowledge_search"), key=lambda s: int(s["startTimeUnixNano"])
    )
    check(len(calls) == 3, f"{len(calls)} execute_tool knowledge_search spans")
    for call, answer in zip(calls, ["ok", "fail", "hang"], strict=True):
        check(call["kind"] == SERVER, f"call span {call!r}")
        check(attributes(call)["fisk.tool.outcome"] == "executed", f"the {answer} call {attributes(call)!r}")
        (retrieval,) = by_parent.get(call["spanId"], [None])
        check(retrieval is not None and retrieval["name"] == "retrieval", f"no retrieval under the {answer} call")
        check(retrieval["kind"] == CLIENT, f"retrieval kind {retrieval['kind']}")
        check(retrieval.get("status", {}).get("code") != STATUS_ERROR, f"a failed retrieval {retrieval!r}")
        expected: dict[str, Any] = {
            "gen_ai.operation.name": "retrieval",
            "fisk.knowledge.top_k": 3,
            "fisk.knowledge.tier.configured": "hybrid",
            "fisk.knowledge.search.status": "ok",
            "fisk.knowledge.tier.effective": "hybrid" if answer == "ok" else "lexical",
            "fisk.knowledge.indexed_chunks": args.chunks,
            "fisk.knowledge.sections": len(answers[answer]["results"]),
        }
        if answer != "ok":
            expected["fisk.knowledge.degraded"] = True
            expected["fisk.knowledge.degraded_reason"] = "embeddings" if answer == "fail" else "timeout"
        check(
            attributes(retrieval) == expected,
            f"the {answer} retrieval {attributes(retrieval)!r}, expected {expected!r}",
        )

        (embeddings,) = by_parent.get(retrieval["spanId"], [None])
        check(
            embeddings is not None and embeddings["name"] == f"embeddings {MODEL}",
            f"no embeddings span under the {answer} retrieval",
        )
        check(embeddings["kind"] == CLIENT, f"embeddings kind {embeddings['kind']}")
        check(embeddings["traceId"] == call["traceId"], "the embeddings span left the call's trace")
        inside = int(retrieval["startTimeUnixNano"]) <= int(embeddings["startTimeUnixNano"])
        inside = inside and int(embeddings["endTimeUnixNano"]) <= int(retrieval["endTimeUnixNano"])
        check(inside, f"the {answer} embeddings span is not within its retrieval span")
        expected = {
            "gen_ai.operation.name": "embeddings",
            "gen_ai.request.model": MODEL,
            "fisk.embeddings.inputs": 1,
            "fisk.embeddings.purpose": "query",
            "server.address": "127.0.0.1",
            "server.port": PORT,
        }
        if answer == "ok":
            expected["http.response.status_code"] = 200
        elif answer == "fail":
            expected |= {"http.response.status_code": 503, "error.type": "provider"}
        else:
            expected["error.type"] = "timeout"
        check(
            attributes(embeddings) == expected,
            f"the {answer} embeddings span {attributes(embeddings)!r}, expected {expected!r}",
        )
        failed = embeddings.get("status", {}).get("code") == STATUS_ERROR
        check(failed == (answer != "ok"), f"the {answer} embeddings span's status {embeddings.get('status')!r}")
        print(f"{answer}: retrieval {expected.get('error.type', 'hybrid')}, embeddings {MODEL}")

    deadline = time.monotonic() + 20
    counts = degraded_counts(Path(args.metrics))
    while counts != {"embeddings": 1, "timeout": 1} and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        counts = degraded_counts(Path(args.metrics))
    check(counts == {"embeddings": 1, "timeout": 1}, f"fisk.knowledge.degraded_searches {counts!r}")
    print("metric: fisk.knowledge.degraded_searches embeddings=1 timeout=1")


if __name__ == "__main__":
    p = http_parser(__doc__ or "")
    p.add_argument("--spans", required=True, help="the receiver's spans: OTLP/JSON, a batch per line")
    p.add_argument("--metrics", required=True, help="the receiver's metrics: OTLP/JSON, a batch per line")
    p.add_argument("--control", required=True, help="the stand-in's control URL")
    p.add_argument("--chunks", type=int, required=True, help="the chunks the index holds")
    run(main, p.parse_args())
