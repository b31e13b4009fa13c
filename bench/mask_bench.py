"""What the structure masks cost: training steps of the structure-masked encoder with each attention kind
against the unmasked model, on the same batches, in the same run.

    python bench/mask_bench.py [--steps 30] [--batch 32] [--length 64] [--threads 1]

The model is the paper's relative-attention encoder (pre-LN, 6 layers, hidden 128, 16 heads, FFN 512); the
batches are synthetic but shaped like CFQ classification rows (``--length`` tokens, the first 40 % the input,
a random tree over each side joined at CLS, a few cross-links). Each step is forward + backward + AdamW. The
attention kinds are timed interleaved step by step, so that a change in machine load hits all alike; 3 untimed
warm-up steps first. Prints examples/s per kind and the ratio of each kind's step time to the unmasked one
(the issue's aim: the hard mask at most 1.3×).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

from hf_recogs.models import StructureEncoderConfig, StructureEncoderForSequenceClassification
from hf_recogs.models.configuration_structure_encoder import RELATIONS

KINDS = ("none", "hard", "soft", "both")
R = {name: i for i, name in enumerate(RELATIONS)}


def relations(length: int, rng: random.Random) -> torch.Tensor:
    """One row's relation labels: CLS over two random trees (input, candidate), blocks, 3 cross-links."""
    split = max(2, int(0.4 * length))
    rel = torch.full((length, length), R["none"])
    rel[1:split, 1:split] = R["input_block"]
    rel[split:, split:] = R["candidate_block"]
    for start, end in ((1, split), (split, length)):
        for child in range(start + 1, end):
            parent = rng.randrange(start, child)
            rel[parent, child], rel[child, parent] = R["parent_to_child"], R["child_to_parent"]
    for _ in range(3):
        i, j = rng.randrange(1, split), rng.randrange(split, length)
        rel[i, j], rel[j, i] = R["input_to_candidate_link"], R["candidate_to_input_link"]
    rel[0, :], rel[:, 0] = R["from_cls"], R["to_cls"]
    rel.fill_diagonal_(R["self"])
    return rel


def batches(n: int, batch: int, length: int, vocab: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    torch.manual_seed(seed)
    out = []
    for _ in range(n):
        out.append({
            "input_ids": torch.randint(1, vocab, (batch, length)),
            "token_type_ids": (torch.arange(length) >= int(0.4 * length)).long().expand(batch, length),
            "relation_ids": torch.stack([relations(length, rng) for _ in range(batch)]),
            "labels": torch.randint(0, 2, (batch,)).float(),
        })
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--length", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    data = batches(args.steps + 3, args.batch, args.length, vocab=200)
    models, optimisers = {}, {}
    for kind in KINDS:
        torch.manual_seed(0)
        models[kind] = StructureEncoderForSequenceClassification(StructureEncoderConfig(vocab_size=200,
                                                                                        attention=kind)).train()
        optimisers[kind] = torch.optim.AdamW(models[kind].parameters(), lr=1e-3)
    times = {kind: [] for kind in KINDS}
    for step, batch in enumerate(data):
        for kind in KINDS:
            started = time.perf_counter()
            loss = models[kind](**batch).loss
            loss.backward()
            optimisers[kind].step()
            optimisers[kind].zero_grad()
            if step >= 3:
                times[kind].append(time.perf_counter() - started)
    base = statistics.median(times["none"])
    print(f"structure encoder, 6 layers x 128, batch {args.batch} x {args.length} tokens, {args.threads} thread(s), "
          f"{args.steps} timed steps each (median step time)")
    for kind in KINDS:
        step = statistics.median(times[kind])
        print(f"  attention={kind:<5} {args.batch / step:8.1f} examples/s   {step * 1000:7.1f} ms/step   "
              f"{step / base:4.2f}x the unmasked step")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
