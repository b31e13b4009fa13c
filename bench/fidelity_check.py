"""Does our paper config learn the way the ReCOGS reference does?  Loss and source-gap curves side by side.

    python bench/fidelity_check.py [--steps 2000] [--seeds 42 66 77] [--models reference_transformer transformer@0.02]
                                   [--out bench_out/fidelity] [--bf16]
    python bench/fidelity_check.py --diagnose        # the ablations that isolate the cause of the collapse

Paper mode (default): each model trains on ReCOGS_pos with the reference schedule (Wu, Manning & Potts 2023, their run_cogs.py: AdamW
lr 1e-4, weight decay 0.01 on every parameter, linear warm-up over 10 % of 300 epochs then linear decay, batch
128, the train list shuffled once per seed and cut into consecutive batches, no clipping) for the first
``--steps`` steps. All models of a seed see the same batches. Every ``--every`` steps we log the mean training
loss since the last log, and on a fixed sample of 128 validation rows the loss with the true sources and the
*source gap*: the loss when every row is given another row's source minus the true loss
(``hf_recogs.train.trainer.source_gap``). A model that reads its input has a gap that grows with training; a
collapsed one learns the outputs' language (loss falls) with a gap of ~0.

Models are ``hf_recogs.models.build_model`` architectures; ``name@std`` overrides the init std
(``transformer@0.02`` = our Bart model with the reference init, the paper config before this check).
Each (model, seed) curve is written to ``<out>/<model>_seed<seed>.json`` and skipped when present, so a long
check can be run a seed at a time; an unfinished one continues from ``<model>_seed<seed>.state.pt`` (saved at
every log point). The table is printed from every curve present (mean over seeds). On 2 CPU cores a paper
step (random batches of 128, padded to each batch's longest row) takes several seconds: 2,000 steps of one
model and seed are hours, so run the models in parallel processes (``--models`` one each).

Diagnose mode: lr 1e-3 constant, batch 64, 100 steps, one run per ``--seeds`` seed, on Bart variants with
init 0.02 — the model as shipped (one table for encoder input, decoder input and output layer), with a separate
encoder table, with a separate output layer, with both, without the embedding LayerNorm — next to the reference
and our default init; also the mean cosine between the encoder's embedding rows of the 200 most frequent source
words (a drift of every row in one direction shows up there). Curves go to ``<out>/diagnose_*.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "mirror"


def _data(max_positions: int = 512):
    if not os.environ.get("HF_RECOGS_MIRROR") and (MIRROR / "MANIFEST.tsv").is_file():
        os.environ["HF_RECOGS_MIRROR"] = str(MIRROR)
    import hf_recogs
    from hf_recogs.tokenization import build_tokenizer

    ds = hf_recogs.load_dataset("recogs_pos")
    splits = [s for s in ("train", "validation", "test", "gen") if s in ds]
    tok = build_tokenizer((x for s in splits for x in ds[s]["input"]), (y for s in splits for y in ds[s]["output"]))

    def encode(split):
        src = tok(list(ds[split]["input"]), truncation=True, max_length=max_positions)["input_ids"]
        tgt = tok(list(ds[split]["output"]), truncation=True, max_length=max_positions)["input_ids"]
        return list(zip(src, tgt, strict=True))

    return tok, encode("train"), encode("validation")


def _collate(rows):
    import torch

    def pad(seqs, value):
        out = torch.full((len(seqs), max(map(len, seqs))), value, dtype=torch.long)
        for i, s in enumerate(seqs):
            out[i, : len(s)] = torch.tensor(s)
        return out

    ids = pad([r[0] for r in rows], 0)
    return {"input_ids": ids, "attention_mask": (ids != 0).long(), "labels": pad([r[1] for r in rows], -100)}


def _build(spec: str, tok, variant: str = ""):
    import torch
    from torch import nn

    from hf_recogs.models import build_model

    arch, _, std = spec.partition("@")
    overrides = {}
    if std:
        overrides = {"initializer_range": float(std)} if arch == "reference_transformer" else {"init_std": float(std)}
    model = build_model(arch, tok, **overrides)
    std = model.config.init_std if arch == "transformer" else None
    if variant in ("separate_encoder_embedding", "untied_all"):  # the encoder gets a table of its own
        table = nn.Embedding(len(tok), model.config.d_model, padding_idx=0)
        nn.init.normal_(table.weight, std=std)
        with torch.no_grad():
            table.weight[0].zero_()
        model.model.encoder.embed_tokens = table
    if variant in ("untied_output_layer", "untied_all"):  # the output layer gets a matrix of its own
        model.config.tie_word_embeddings = False
        model.lm_head = nn.Linear(model.config.d_model, len(tok), bias=False)
        nn.init.normal_(model.lm_head.weight, std=std)
    if variant == "no_embedding_layernorm":
        model.model.encoder.layernorm_embedding = nn.Identity()
        model.model.decoder.layernorm_embedding = nn.Identity()
    return model


def _embedding_cosine(model, tok, sources) -> float:
    """Mean pairwise cosine between the encoder's input-embedding rows of the 200 most frequent source words."""
    from collections import Counter

    counts = Counter(i for s in sources for i in s if i > 3)
    ids = [i for i, _ in counts.most_common(200)]
    table = model.get_encoder().get_input_embeddings().weight.detach()[ids].float()
    table = table / table.norm(dim=1, keepdim=True)
    cos = table @ table.T
    n = len(ids)
    return float((cos.sum() - n) / (n * n - n))


def train_curve(spec, tok, train, val_batches, *, seed, steps, every, batch_size, lr, warmup, total, bf16,
                variant="", data_seed=None, state_path: Path | None = None):
    """Train and log the curve; with ``state_path``, model/optimizer/RNG state is saved there at every log
    point and a rerun continues from it (a long paper-schedule check can span several sessions)."""
    import torch

    from hf_recogs.train.trainer import source_gap

    torch.manual_seed(seed)
    model = _build(spec, tok, variant)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)

    def factor(step):  # transformers' linear schedule with warm-up
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    order = list(range(len(train)))
    random.Random(seed if data_seed is None else data_seed).shuffle(order)  # once per seed, as the reference
    per_epoch = math.ceil(len(order) / batch_size)
    curve, window, t0, start = [], [], time.perf_counter(), 0
    if state_path is not None and state_path.is_file():
        state = torch.load(state_path, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        curve, start = state["curve"], state["step"] + 1
        t0 -= curve[-1]["seconds"]
        print(f"resuming {spec} seed {seed} after step {state['step']}", flush=True)
    sources = [r[0] for r in train[:5000]]
    for step in range(start, steps + 1):
        if step % every == 0:
            loss, gap = source_gap(model, val_batches, bf16)
            point = {"step": step, "train_loss": sum(window) / len(window) if window else None,
                     "val_loss": round(loss, 5), "source_gap": round(gap, 5),
                     "embedding_cosine": round(_embedding_cosine(model, tok, sources), 4),
                     "lr": sched.get_last_lr()[0], "seconds": round(time.perf_counter() - t0, 1)}
            curve.append(point)
            window = []
            print(json.dumps({"model": spec + (f"+{variant}" if variant else ""), "seed": seed, **point}),
                  flush=True)
            if state_path is not None and step < steps:
                tmp = state_path.with_suffix(".tmp")
                torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                            "scheduler": sched.state_dict(), "rng": torch.get_rng_state(), "curve": curve,
                            "step": step}, tmp)
                tmp.replace(state_path)
        if step == steps:
            break
        b = step % per_epoch
        batch = _collate([train[i] for i in order[b * batch_size : (b + 1) * batch_size]])
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(**batch).loss
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        window.append(loss.item())
    return curve


def _table(curves: dict[str, list[list[dict]]]) -> str:
    """Markdown: per step, each model's mean (over seeds) validation loss and source gap."""
    models = list(curves)
    steps = sorted({p["step"] for runs in curves.values() for run in runs for p in run})
    head = "| step | " + " | ".join(f"{m} loss | {m} gap" for m in models) + " |"
    lines = [head, "|" + "---|" * (1 + 2 * len(models))]
    for step in steps:
        cells = []
        for m in models:
            pts = [p for run in curves[m] for p in run if p["step"] == step]
            if pts:
                cells += [f"{sum(p['val_loss'] for p in pts) / len(pts):.3f}",
                          f"{sum(p['source_gap'] for p in pts) / len(pts):.3f} (n={len(pts)})"]
            else:
                cells += ["", ""]
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--seeds", type=int, nargs="+", default=[42, 66, 77])
    ap.add_argument("--models", nargs="+", default=["reference_transformer", "transformer@0.02"])
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--epochs", type=int, default=300, help="length of the schedule the warm-up is 10 %% of")
    ap.add_argument("--bf16", action="store_true", help="bf16 autocast (the reference trained in fp32)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default="bench_out/fidelity")
    ap.add_argument("--diagnose", action="store_true")
    ap.add_argument("--variants", nargs="*", help="with --diagnose: only these runs (names as in the table)")
    args = ap.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    tok, train, val = _data()
    val_sample = random.Random(0).sample(val, 128)
    val_batches = [_collate(val_sample[i : i + 64]) for i in range(0, 128, 64)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    if args.diagnose:
        runs = [("transformer@0.02", ""), ("transformer@0.02", "separate_encoder_embedding"),
                ("transformer@0.02", "untied_output_layer"), ("transformer@0.02", "untied_all"),
                ("transformer@0.02", "no_embedding_layernorm"), ("reference_transformer", ""), ("transformer", "")]
        wanted = set(args.variants or [])
        curves = {}
        for spec, variant in runs:
            name = spec + (f"+{variant}" if variant else "")
            if wanted and name not in wanted:
                continue
            for seed in args.seeds:
                path = out / f"diagnose_{name.replace('@', '_init').replace('+', '_')}_seed{seed}.json"
                if not path.is_file():
                    path.write_text(json.dumps(train_curve(
                        spec, tok, train, val_batches, seed=seed, steps=100, every=25, batch_size=64, lr=1e-3,
                        warmup=0, total=10**9, bf16=args.bf16, variant=variant)))
                curves.setdefault(name, []).append(json.loads(path.read_text()))
        print(_table(curves))
        for name, runs_ in curves.items():
            first = sum(r[0]["embedding_cosine"] for r in runs_) / len(runs_)
            last = sum(r[-1]["embedding_cosine"] for r in runs_) / len(runs_)
            print(f"{name}: mean cosine of encoder input embeddings {first:.3f} -> {last:.3f}")
        return 0

    per_epoch = math.ceil(len(train) / args.batch_size)
    total = per_epoch * args.epochs
    warmup = math.ceil(0.1 * total)
    print(f"schedule: {per_epoch} steps/epoch, {total} steps, warm-up {warmup}; lr at step {args.steps}: "
          f"{args.lr * min(1, args.steps / warmup):.2e}", flush=True)
    for seed in args.seeds:
        for spec in args.models:
            path = out / f"{spec.replace('@', '_init')}_seed{seed}.json"
            if path.is_file():
                continue
            state_path = path.with_suffix(".state.pt")
            curve = train_curve(spec, tok, train, val_batches, seed=seed, steps=args.steps, every=args.every,
                                batch_size=args.batch_size, lr=args.lr, warmup=warmup, total=total, bf16=args.bf16,
                                state_path=state_path)
            state_path.unlink(missing_ok=True)
            meta = {"model": spec, "seed": seed, "bf16": args.bf16, "threads": torch.get_num_threads(),
                    "batch_size": args.batch_size, "lr": args.lr, "warmup": warmup, "total": total}
            path.write_text(json.dumps({**meta, "curve": curve}, indent=1))
    curves: dict[str, list] = {}
    for spec in args.models:
        for path in sorted(out.glob(f"{spec.replace('@', '_init')}_seed*.json")):
            curves.setdefault(spec, []).append(json.loads(path.read_text())["curve"])
    print(_table(curves))
    return 0


if __name__ == "__main__":
    sys.exit(main())
