"""A published run's model and a sample of its gen rows, loaded the way its final evaluation decoded them: the
shared set-up of the decoding benchmarks (``decode_cap_bench``, ``constrained_decode_bench``)."""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class PublishedSample:
    model: Any
    tokenizer: Any
    encode: Any  # a structure checkpoint's SourceLayout.batch (None: the tokenizer)
    bf16: bool  # the run decoded under bf16 autocast and this CPU has native bf16
    max_length: int
    rows: list[dict]  # gen prediction rows (input, gold, prediction, category, ...)


def load_published(checkpoint: Path, n_rows: int) -> PublishedSample:
    """``checkpoint``'s model on one thread and ``n_rows`` of its gen predictions drawn with seed 0, sorted by
    source length as ``decode`` sorts them (so the batches are of the kind a run decodes). A structure
    checkpoint needs the mirror (the parser's verb classes)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    import hf_recogs.models  # noqa: F401 - registers structure_transformer with the Auto classes
    from hf_recogs.train.data import SourceLayout
    from hf_recogs.train.hardware import cpu_has_native_bf16

    torch.set_num_threads(1)
    results = json.loads((checkpoint / "results.json").read_text(encoding="utf-8"))
    with gzip.open(checkpoint / "predictions_gen.jsonl.gz", "rt", encoding="utf-8") as f:
        pool = list(map(json.loads, f))
    rows = random.Random(0).sample(pool, min(n_rows, len(pool)))
    rows.sort(key=lambda r: len(r["input"].split()))
    model = AutoModelForSeq2SeqLM.from_pretrained(checkpoint).eval()
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    encode = SourceLayout.for_model(model, tokenizer).batch if results.get("input_structure") else None
    bf16 = results["mixed_precision"] == "bf16" and cpu_has_native_bf16()
    return PublishedSample(model, tokenizer, encode, bf16, results["hyperparameters"]["generation_max_length"], rows)


def time_arms(sample: PublishedSample, arms: dict[str, dict], batch_size: int) -> tuple[dict, dict]:
    """Decode the sample's rows once per arm (``decode`` keyword arguments per arm name) in batches of
    ``batch_size``, the arms interleaved batch by batch and the first alternating, after one warm-up row.
    Returns each arm's seconds and its outputs (every row's text, in the sample's order), with the outputs'
    ``cut`` and ``dead_ends`` row indices counted over the whole sample."""
    import time

    from hf_recogs.train.decode import Predictions, decode

    rows = sample.rows
    batches = [rows[s:s + batch_size] for s in range(0, len(rows), batch_size)]
    seconds = dict.fromkeys(arms, 0.0)
    outputs = {name: Predictions() for name in arms}
    for out in outputs.values():
        out.cut, out.dead_ends = [], []
    decode(sample.model, sample.tokenizer, [rows[0]["input"]], sample.max_length, bf16=sample.bf16, shared=False,
           encode=sample.encode)  # warm-up
    for b, batch in enumerate(batches):
        sources = [r["input"] for r in batch]
        for name in (list(arms) if b % 2 == 0 else list(reversed(arms))):
            started = time.perf_counter()
            predicted = decode(sample.model, sample.tokenizer, sources, sample.max_length, batch_size=len(sources),
                               bf16=sample.bf16, shared=False, encode=sample.encode, **arms[name])
            seconds[name] += time.perf_counter() - started
            out = outputs[name]
            out.cut += [len(out) + i for i in predicted.cut]
            out.dead_ends += [len(out) + i for i in predicted.dead_ends]
            out += predicted
        print(f"  batch {b + 1}/{len(batches)}: " + ", ".join(f"{n} {s:.1f} s" for n, s in seconds.items()),
              flush=True)
    return seconds, outputs
