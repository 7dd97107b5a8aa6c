"""An OpenAI-compatible embeddings endpoint for the telemetry test of a hybrid index
(tests/tests/integration/telemetry.rs): `POST /v1/embeddings` answers every input with an
8-dimensional bag-of-words vector, so indexing and searching work; `POST /control` with a body
of `ok`, `fail` (answer 503) or `hang` (answer after 3 s, past the server's 1 s embeddings
timeout) sets how the next requests are answered. A real embeddings server needs model
weights, which the test machine does not have; this one speaks the same protocol.

Usage: embeddings_standin.py --port PORT. It retries the bind for up to 60 s (the port is
compiled into tests/fixtures/hybrid.yaml, so a concurrent run of the same test waits), then
prints `embeddings stand-in: listening on 127.0.0.1:PORT` on stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIMENSION = 8
MODE = {"answer": "ok"}
LOCK = threading.Lock()


def vector(text: str) -> list[float]:
    """The same vector for the same words, whatever their order."""
    out = [0.0] * DIMENSION
    for word in text.lower().split():
        digest = hashlib.sha256(word.encode()).digest()
        out[digest[0] % DIMENSION] += 1.0
    if not any(out):
        out[0] = 1.0
    return out


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *_args: object) -> None:
        pass

    def reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if self.path == "/control":
            with LOCK:
                MODE["answer"] = raw.decode().strip()
            self.reply(200, b"{}")
            return
        if self.path != "/v1/embeddings":
            self.reply(404, b'{"error":{"message":"not found"}}')
            return
        with LOCK:
            answer = MODE["answer"]
        if answer == "fail":
            self.reply(503, b'{"error":{"message":"overloaded"}}')
            return
        if answer == "hang":
            time.sleep(3)
        inputs = json.loads(raw)["input"]
        data = [{"object": "embedding", "index": i, "embedding": vector(text)} for i, text in enumerate(inputs)]
        self.reply(200, json.dumps({"object": "list", "data": data}).encode())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--port", type=int, required=True)
    args = p.parse_args()
    deadline = time.monotonic() + 60
    while True:
        try:
            server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
            break
        except OSError as error:
            if time.monotonic() > deadline:
                print(f"embeddings stand-in: cannot listen on 127.0.0.1:{args.port}: {error}", file=sys.stderr)
                sys.exit(1)
            time.sleep(0.5)
    server.daemon_threads = True
    print(f"embeddings stand-in: listening on 127.0.0.1:{args.port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
