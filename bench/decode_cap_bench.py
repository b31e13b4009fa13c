"""Greedy decoding with a per-row length cap (``decode_cap_per_source_word``, ours) against decoding every row to
``generation_max_length`` (the baseline), on the same gen rows of a published run, one thread.

    python bench/decode_cap_bench.py [--checkpoint results/<run>/seed_<n>] [--rows 512] [--cap 8 32]

A batch decodes until all its rows have ended, so one row that never writes its end token keeps the whole
batch going to 512 tokens. The rows: ``--rows`` drawn with seed 0 from the run's gen predictions (all
categories), decoded in batches of 128 sorted by source length, as a run's final evaluation decodes them (under
bf16 autocast where the run decoded so and the CPU has native bf16). The two are timed per batch, interleaved, the
first one alternating. Printed: rows/s of each and the ratio; the rows the cap cut; whether every other row's
prediction is the same and every cut one the first words of the uncapped one; and how many SEM verdicts differ
(against the gold forms). A structure checkpoint needs the mirror (the parser's verb classes).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_RECOGS_MIRROR", str(ROOT.parent / "shared" / "mirror"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CHECKPOINT = (ROOT / "results" / "recogs_pos_structure_pointer_keys_sides_coverage_relative_arity_heads_copy_lexicon"
              "_named_words_transformer_fast" / "seed_66")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    parser.add_argument("--rows", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--cap", type=float, nargs=2, default=(8.0, 32), metavar=("PER_SOURCE_WORD", "MARGIN"))
    args = parser.parse_args(argv)

    import torch

    from bench.published_sample import load_published, time_arms
    from hf_recogs.scoring import score_rows

    sample = load_published(args.checkpoint, args.rows)
    bf16, max_length, rows = sample.bf16, sample.max_length, sample.rows
    cap = (args.cap[0], int(args.cap[1]))
    batches = [rows[s:s + args.batch_size] for s in range(0, len(rows), args.batch_size)]
    print(f"{args.checkpoint.parent.name}/{args.checkpoint.name}: {len(rows)} gen rows in {len(batches)} batches "
          f"of up to {args.batch_size}; cap {cap[0]:g} tokens per source word + {cap[1]}, max_length {max_length}; "
          f"{'bf16' if bf16 else 'fp32'}, 1 thread, torch {torch.__version__}", flush=True)

    arms = {"no cap (baseline)": {}, "per-row cap (ours)": {"length_cap": cap}}
    seconds, outputs = time_arms(sample, arms, args.batch_size)
    cut = outputs["per-row cap (ours)"].cut
    full, capped = outputs["no cap (baseline)"], outputs["per-row cap (ours)"]
    same = all(full[i] == capped[i] for i in range(len(rows)) if i not in set(cut))
    prefixes = all(full[i].split()[:len(capped[i].split())] == capped[i].split() != full[i].split() for i in cut)
    gold = [r["gold"] for r in rows]
    verdicts = [[record["sem"] for record in score_rows(predicted, gold)] for predicted in (full, capped)]
    verdicts_differ = sum(a != b for a, b in zip(*verdicts, strict=True))
    for name in arms:
        print(f"{name:22s} {seconds[name]:8.1f} s  {len(rows) / seconds[name]:6.2f} rows/s")
    ratio = seconds["no cap (baseline)"] / seconds["per-row cap (ours)"]
    print(f"speed-up {ratio:.2f}x; rows cut {len(cut)}; other rows equal: {same}; cut rows are prefixes: "
          f"{prefixes}; SEM verdicts that differ: {verdicts_differ}")
    return {"rows": len(rows), "seconds": seconds, "ratio": ratio, "cut": len(cut), "same": same,
            "prefixes": prefixes, "verdicts_differ": verdicts_differ}


if __name__ == "__main__":
    main()
