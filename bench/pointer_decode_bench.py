"""Greedy decoding speed of a ``pointer_named_words`` checkpoint: ``word_positions`` by keys and binary search (ours)
against the all-pairs version it replaced (the baseline, kept below), on the same gen rows, one thread.

    python bench/pointer_decode_bench.py [--rows 256] [--batch-size 128] [--categories cp_recursion,pp_recursion]

``generate`` recomputes the named words of the whole decoded prefix at every step; the all-pairs version compares
every pair of output tokens, so a step costs O(length²) per row and a decode O(length³). The rows: ``--rows`` of
the published run's gen predictions in ``--categories`` (the longest outputs: recursion to depth 12), drawn with
seed 0, decoded in batches sorted by source length as a run's final evaluation decodes them (under bf16 autocast
where the run decoded so and the CPU has native bf16). The two are timed per batch, interleaved, the first one
alternating; the predictions must be equal. Needs the mirror (the parser's verb classes). Printed: rows/s of each,
the ratio, and whether every prediction agreed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_RECOGS_MIRROR", str(ROOT.parent / "shared" / "mirror"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CHECKPOINT = (ROOT / "results" / "recogs_pos_structure_pointer_keys_sides_coverage_relative_arity_heads_copy_lexicon"
              "_named_words_transformer_fast" / "seed_66")


def all_pairs_word_positions(decoder_input_ids, source_ids, written_token, writes_word, source_mask=None):
    """The baseline: ``word_positions`` as it was, ranks from every pair of tokens."""
    import torch

    written = written_token[source_ids]
    if source_mask is not None:
        written = written.masked_fill(~source_mask.bool(), -1)
    source_rank = torch.tril(written[:, :, None] == written[:, None, :], diagonal=-1).sum(-1)
    output_rank = torch.tril(decoder_input_ids[:, :, None] == decoder_input_ids[:, None, :], diagonal=-1).sum(-1)
    hit = ((decoder_input_ids[:, :, None] == written[:, None, :])
           & (output_rank[:, :, None] == source_rank[:, None, :]) & writes_word[decoder_input_ids][..., None])
    return torch.where(hit.any(-1), hit.int().argmax(-1), -1)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--categories", default="cp_recursion,pp_recursion")
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    import hf_recogs.models  # noqa: F401 - registers structure_transformer with the Auto classes
    from hf_recogs.models import modeling_structure_transformer as modeling
    from hf_recogs.train.data import SourceLayout
    from hf_recogs.train.decode import decode
    from hf_recogs.train.hardware import cpu_has_native_bf16

    torch.set_num_threads(1)
    results = json.loads((args.checkpoint / "results.json").read_text(encoding="utf-8"))
    if not results.get("input_structure", {}).get("pointer_named_words"):
        raise SystemExit(f"{args.checkpoint} is not a pointer_named_words run: pass --checkpoint of one")
    categories = set(args.categories.split(","))
    with gzip.open(args.checkpoint / "predictions_gen.jsonl.gz", "rt", encoding="utf-8") as f:
        pool = [r for r in map(json.loads, f) if r["category"] in categories]
    rows = random.Random(0).sample(pool, min(args.rows, len(pool)))
    sources = [r["input"] for r in rows]

    model = AutoModelForSeq2SeqLM.from_pretrained(args.checkpoint).eval()
    tokenizer = AutoTokenizer.from_pretrained(args.checkpoint)
    encode = SourceLayout.for_model(model, tokenizer).batch
    bf16 = results["mixed_precision"] == "bf16" and cpu_has_native_bf16()
    max_length = results["hyperparameters"]["generation_max_length"]
    order = sorted(range(len(sources)), key=lambda i: len(sources[i].split()))
    batches = [[sources[i] for i in order[s:s + args.batch_size]] for s in range(0, len(order), args.batch_size)]
    print(f"{args.checkpoint.parent.name}/{args.checkpoint.name}: {len(rows)} gen rows of {sorted(categories)} in "
          f"{len(batches)} batches of up to {args.batch_size}; {'bf16' if bf16 else 'fp32'}, 1 thread, torch "
          f"{torch.__version__}", flush=True)

    ours = modeling.word_positions
    versions = {"keys + binary search (ours)": ours, "all pairs (baseline)": all_pairs_word_positions}
    seconds = dict.fromkeys(versions, 0.0)
    outputs: dict[str, list[str]] = {name: [] for name in versions}
    decode(model, tokenizer, batches[0][:2], max_length, bf16=bf16, shared=False, encode=encode)  # warm-up
    for b, batch in enumerate(batches):
        names = list(versions) if b % 2 == 0 else list(reversed(versions))
        for name in names:
            modeling.word_positions = versions[name]
            started = time.perf_counter()
            outputs[name] += decode(model, tokenizer, batch, max_length, bf16=bf16, shared=False, encode=encode)
            seconds[name] += time.perf_counter() - started
    modeling.word_positions = ours
    agree = len(set(map(tuple, outputs.values()))) == 1
    for name in versions:
        print(f"{name:28s} {seconds[name]:8.1f} s  {len(rows) / seconds[name]:6.2f} rows/s")
    baseline, ours_name = "all pairs (baseline)", "keys + binary search (ours)"
    ratio = seconds[baseline] / seconds[ours_name]
    print(f"speed-up {ratio:.2f}x; predictions equal: {agree}")
    return {"rows": len(rows), "seconds": seconds, "ratio": ratio, "equal": agree}


if __name__ == "__main__":
    main()
