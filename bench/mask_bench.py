"""What the structure masks cost: training steps of the structure-masked encoder with each attention kind
against the unmasked model, on the same batches, in the same run.

    python bench/mask_bench.py [--steps 30] [--batch 32] [--length 64] [--threads 1] [--precision auto|bf16|fp32]

The model is the paper's relative-attention encoder (pre-LN, 6 layers, hidden 128, 16 heads, FFN 512); the
batches are synthetic but shaped like CFQ classification rows (``--length`` tokens, the first 40 % the input,
a random tree over each side joined at CLS, a few cross-links). Each step is forward + backward + AdamW. The
attention kinds are timed interleaved step by step, so that a change in machine load hits all alike; 3 untimed
warm-up steps first. Prints examples/s per kind and the ratio of each kind's step time to the unmasked one
(the issue's aim: the hard mask at most 1.3×).

Training steps of the kinds without relation labels (none, hard) run their attention through PyTorch's fused
kernel; the explicit computation (scores, softmax, weighted sum: what evaluation and ``output_attentions`` use,
and what every training step used before) is timed too, as "explicit", from the same initial weights on the same
batches, and the fused step's speed-up over it printed. ``--precision auto`` autocasts to bf16 where the CPU has
native bf16, as the training recipes do.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import time

import torch

from hf_recogs.models import StructureEncoderConfig, StructureEncoderForSequenceClassification
from hf_recogs.models.configuration_structure_encoder import RELATIONS

KINDS = ("none", "hard", "soft", "both")
FUSED = ("none", "hard")  # the kinds whose training steps take the fused kernel
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
    ap.add_argument("--precision", choices=("auto", "bf16", "fp32"), default="auto")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    from hf_recogs.train.hardware import cpu_has_native_bf16

    bf16 = args.precision == "bf16" or (args.precision == "auto" and cpu_has_native_bf16())
    data = batches(args.steps + 3, args.batch, args.length, vocab=200)
    models, optimisers = {}, {}
    timed = [*KINDS, *(f"{kind} explicit" for kind in FUSED)]
    for name in timed:
        torch.manual_seed(0)
        config = StructureEncoderConfig(vocab_size=200, attention=name.split()[0])
        models[name] = StructureEncoderForSequenceClassification(config).train()
        optimisers[name] = torch.optim.AdamW(models[name].parameters(), lr=1e-3)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    times = {name: [] for name in timed}
    for step, batch in enumerate(data):
        for name in timed:
            started = time.perf_counter()
            with autocast:  # output_attentions takes the explicit computation
                loss = models[name](**batch, output_attentions=name.endswith("explicit")).loss
            loss.backward()
            optimisers[name].step()
            optimisers[name].zero_grad()
            if step >= 3:
                times[name].append(time.perf_counter() - started)
    base = statistics.median(times["none"])
    print(f"structure encoder, 6 layers x 128, batch {args.batch} x {args.length} tokens, {args.threads} thread(s), "
          f"{args.steps} timed steps each (median step time), {'bf16 autocast' if bf16 else 'fp32'}")
    for name in timed:
        step = statistics.median(times[name])
        print(f"  attention={name:<14} {args.batch / step:8.1f} examples/s   {step * 1000:7.1f} ms/step   "
              f"{step / base:4.2f}x the unmasked step")
    for kind in FUSED:
        speedup = statistics.median(times[f"{kind} explicit"]) / statistics.median(times[kind])
        print(f"  {kind}: the fused training step is {speedup:.2f}x as fast as the explicit one")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
