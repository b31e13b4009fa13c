"""Greedy decoding under the rules of ReCOGS_pos forms (``constrained_decoding``, ours) against plain greedy
decoding (the baseline), on the same gen rows of a published run, one thread.

    python bench/constrained_decode_bench.py [--checkpoint results/<run>/seed_<n>] [--rows 512] [--any-order]

The rows: ``--rows`` drawn with seed 0 from the run's gen predictions (all categories), decoded in batches of 128
sorted by source length, as a run's final evaluation decodes them. The two arms are timed per batch, interleaved,
the first one alternating. Printed: rows/s of each and the ratio; the seconds spent in the rules themselves
(``ConstrainedDecoding.__call__``), as a share of the constrained arm; how many outputs changed and how many rows
reached a dead end; and SEM on the sample for each arm (against the gold forms). The rules end runaway rows, so
the constrained arm can be the faster one; the share in the rules is the cost of checking them. A structure
checkpoint needs the mirror (the parser's verb classes). ``--any-order``: our arm without the order rule
(``constrained_any_order``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_RECOGS_MIRROR", str(ROOT.parent / "shared" / "mirror"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CHECKPOINT = ROOT / "results" / "recogs_pos_transformer_fast" / "seed_77"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    parser.add_argument("--rows", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--any-order", action="store_true", help="our arm without the order rule")
    args = parser.parse_args(argv)

    import torch

    from bench.published_sample import load_published, time_arms
    from hf_recogs.form_rules import ConstrainedDecoding
    from hf_recogs.scoring import score_rows

    sample = load_published(args.checkpoint, args.rows)
    bf16, max_length, rows = sample.bf16, sample.max_length, sample.rows
    batches = [rows[s:s + args.batch_size] for s in range(0, len(rows), args.batch_size)]
    print(f"{args.checkpoint.parent.name}/{args.checkpoint.name}: {len(rows)} gen rows in {len(batches)} batches "
          f"of up to {args.batch_size}; max_length {max_length}; {'bf16' if bf16 else 'fp32'}, 1 thread, "
          f"torch {torch.__version__}; rules {'in any order' if args.any_order else 'in the notation order'}",
          flush=True)

    in_rules = [0.0]
    checked = ConstrainedDecoding.__call__

    def timed(self, input_ids, scores):
        started = time.perf_counter()
        try:
            return checked(self, input_ids, scores)
        finally:
            in_rules[0] += time.perf_counter() - started

    ConstrainedDecoding.__call__ = timed
    arms = {"plain greedy (baseline)": {},
            "under the rules (ours)": {"constrained": True, "any_order": args.any_order}}
    seconds, outputs = time_arms(sample, arms, args.batch_size)
    dead_ends = len(outputs["under the rules (ours)"].dead_ends)
    ConstrainedDecoding.__call__ = checked
    plain, ruled = outputs["plain greedy (baseline)"], outputs["under the rules (ours)"]
    gold = [r["gold"] for r in rows]
    sem = {name: 100 * sum(r["sem"] for r in score_rows(outputs[name], gold)) / len(rows) for name in arms}
    for name in arms:
        print(f"{name:24s} {seconds[name]:8.1f} s  {len(rows) / seconds[name]:6.2f} rows/s  SEM {sem[name]:.1f}")
    ratio = seconds["under the rules (ours)"] / seconds["plain greedy (baseline)"]
    share = in_rules[0] / seconds["under the rules (ours)"]
    changed = sum(a != b for a, b in zip(plain, ruled, strict=True))
    print(f"time ratio (ours / baseline) {ratio:.2f}; in the rules {in_rules[0]:.1f} s ({100 * share:.1f} % of "
          f"ours); outputs changed {changed}; dead ends {dead_ends}")
    return {"rows": len(rows), "seconds": seconds, "ratio": ratio, "in_rules_s": in_rules[0], "changed": changed,
            "dead_ends": dead_ends, "sem": sem}


if __name__ == "__main__":
    main()
