"""What length-grouped batches save when training the structure-masked classifier: training steps on random
batches (``data_order: reshuffle``) against batches grouped by pair length (``data_order: grouped``), same rows,
same model, same run.

    python bench/cls_batching_bench.py [--config cfq_mcd1_cls] [--steps 10] [--batch 112] [--threads 1]
                                       [--predict-rows 2048] [--predict-batch 256]

Rows: the config's train split with random negatives (offline, from the mirror named by ``HF_RECOGS_MIRROR``).
Each batch is laid out by train.py's own ``PairCollator`` with the config's annotator (trees, cross-links,
relation labels); the model is the paper's relative-attention encoder with ``attention: both`` and cross-links
(the configs/cfq_mcd1_cls_structure.yaml model). ``reshuffle`` batches are consecutive slices of a random
permutation; ``grouped`` batches come from transformers' ``LengthGroupedSampler`` over ``with_pair_lengths``
(what our Trainer does with ``data_order: grouped``). ``--steps`` batches of each kind are drawn at random from
its epoch and timed interleaved step by step (forward + backward + AdamW; 2 untimed warm-up steps), so that a
change in machine load hits both alike. Printed: examples/s of each, the ratio, and the padding efficiency of
the whole epoch's batches (real / padded token cells, exact, model-free). Then prediction, as evaluation runs
it: ``--predict-rows`` validation pairs in batches cut in source order against ``classify``'s batches of pairs
sorted by length (pairs/s, the ratio, and how far the two ways' probabilities differ).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_RECOGS_MIRROR", str(ROOT.parent / "shared" / "mirror"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="cfq_mcd1_cls")
    ap.add_argument("--steps", type=int, default=10, help="timed steps per kind of batch")
    ap.add_argument("--batch", type=int, default=112, help="batch size (the paper's 112)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--predict-rows", type=int, default=2048, help="validation pairs classified")
    ap.add_argument("--predict-batch", type=int, default=256, help="prediction batch size (the configs' 256)")
    args = ap.parse_args(argv)

    import torch
    from transformers.trainer_pt_utils import LengthGroupedSampler

    from hf_recogs import load_dataset
    from hf_recogs.models import build_model
    from hf_recogs.tokenization import build_tokenizer
    from hf_recogs.train.data import PairCollator, annotator_of, structure_labels, with_pair_lengths

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rows = with_pair_lengths(load_dataset(args.config, split="train", negatives="random"))
    annotate = annotator_of(args.config)
    labels = " ".join(structure_labels(annotate, rows))  # the vocabulary as train.py builds it
    tokenizer = build_tokenizer(rows["input"], [*rows["candidate"], labels])
    model = build_model("structure_encoder", tokenizer, max_positions=256, attention="both", cross_links=True,
                        structure_tokens=True)
    collator = PairCollator(tokenizer, annotate)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    n = len(rows)
    rng = random.Random(args.seed)
    order = list(range(n))
    rng.shuffle(order)
    generator = torch.Generator().manual_seed(args.seed)
    grouped = list(LengthGroupedSampler(args.batch, dataset=rows, lengths=rows["length"], generator=generator))
    epochs = {"reshuffle": order, "grouped": grouped}
    batches = {kind: [ids[k:k + args.batch] for k in range(0, n, args.batch)] for kind, ids in epochs.items()}

    # padding efficiency of each epoch, model-free: the laid-out pair lengths (structure tokens included)
    pair_length = {}

    def laid_out(i: int) -> int:
        if i not in pair_length:
            pair_length[i] = len(collator.encode(rows[i]["input"], rows[i]["candidate"]))
        return pair_length[i]

    sample_rows = rng.sample(range(n), min(n, 20000))
    for i in sample_rows:
        laid_out(i)
    efficiency = {}
    for kind, epoch in batches.items():
        real = padded = 0
        for batch in epoch:
            lengths = [pair_length[i] for i in batch if i in pair_length]
            if lengths:  # the sampled rows of this batch stand for it
                real += sum(lengths)
                padded += max(lengths) * len(lengths)
        efficiency[kind] = real / padded

    def step(batch_ids, timed: bool) -> float:
        features = [rows[i] for i in batch_ids]
        start = time.perf_counter()
        batch = collator(features)
        out = model(**batch)
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return time.perf_counter() - start if timed else 0.0

    model.train()
    chosen = {kind: rng.sample(epoch[:-1], args.steps + 2) for kind, epoch in batches.items()}
    times = {kind: [] for kind in batches}
    for k in range(args.steps + 2):
        for kind in batches:
            seconds = step(chosen[kind][k], timed=k >= 2)
            if k >= 2:
                times[kind].append(seconds)
    print(f"{args.config}: {n:,} training pairs, batches of {args.batch}, {args.steps} timed steps each, "
          f"{args.threads} thread(s); collator + forward + backward + AdamW")
    print("| batches | s/step (median) | examples/s | padding efficiency (epoch) |")
    print("|---|---|---|---|")
    speed = {}
    for kind, ts in times.items():
        median = statistics.median(ts)
        speed[kind] = args.batch / median
        print(f"| {kind} | {median:.2f} | {speed[kind]:.1f} | {100 * efficiency[kind]:.0f} % |")
    print(f"grouped / reshuffle throughput: {speed['grouped'] / speed['reshuffle']:.2f}x")

    # Prediction (what evaluation runs): a split's pairs come in source order (a positive, then its negatives).
    # Baseline: batches cut in that order, each classified alone (sorting inside one batch changes nothing);
    # ours: classify over all of them, which cuts batches from the pairs sorted by length.
    from hf_recogs.train.decode import classify

    eval_rows = load_dataset(args.config, split="validation").select(range(args.predict_rows)).to_list()
    size = args.predict_batch
    ways = {
        "source order": lambda: [p for k in range(0, len(eval_rows), size)
                                 for p in classify(model, collator, eval_rows[k:k + size], size, shared=False)],
        "sorted by length": lambda: classify(model, collator, eval_rows, size, shared=False),
    }
    seconds = {way: [] for way in ways}
    answers = {}
    for _ in range(3):  # interleaved, so that a change in machine load hits both alike
        for way, run in ways.items():
            start = time.perf_counter()
            answers[way] = run()
            seconds[way].append(time.perf_counter() - start)
    agree = max(abs(a - b) for a, b in zip(*answers.values(), strict=True))
    rate = {way: len(eval_rows) / statistics.median(ts) for way, ts in seconds.items()}
    print(f"\nprediction: {len(eval_rows):,} validation pairs (the default negatives) in batches of {size}, "
          f"median of 3 interleaved passes; largest difference between the two ways' probabilities {agree:.1e}")
    print("| batches | pairs/s |\n|---|---|")
    for way, r in rate.items():
        print(f"| {way} | {r:.0f} |")
    print(f"sorted / source order throughput: {rate['sorted by length'] / rate['source order']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
