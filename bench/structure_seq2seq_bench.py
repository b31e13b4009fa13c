"""Training-step speed of ``structure_transformer`` (hard mask; + pointer cross-attention; + pointer keys; + the
argument mask, coverage, distances in the decoder or tree labels on the values) against ``transformer`` on the
same ReCOGS_pos batches, one thread.

    python bench/structure_seq2seq_bench.py [--steps 30] [--batch-size 64] [--precision auto|bf16|fp32]

What is compared: the fast recipe's model size (2+2 layers, d_model 300, 4 heads) built from the same seed (so the
same weights) as ``transformer``, as ``structure_transformer`` with the structure recipe's setting (hard mask on 2
of the 4 heads of both encoder layers), and as that with both pointer terms in the cross-attention
(``cross_attention_structure: pointer``, ``pointer_offsets: 4``), and with their query-dependent part on top
(``pointer_keys: true``), and that with sides and the argument mask (``pointer_sides``, ``pointer_argument_mask``)
or with sides and coverage (``pointer_coverage``), or with sides and a decoder that reads distances instead of
learned positions (``decoder_relative_positions: 16``: an explicit float self-attention mask instead of the causal
flag of SDPA), and sides, coverage and the relative decoder together without and with the tree labels on the
cross-attention's values (``pointer_values``: the attention weights computed a second time) or with the arity mask
(``pointer_arity_mask``: one more masked fill of the cross-attention masks), alone and with the head counts on the
values (``pointer_head_counts``: the attention weights computed a second time, as for ``pointer_values``), and the
relative setting with the copying output layer (``output_copy``: one more attention and a mixture over the
vocabulary) or with its offsets ranked by tree relation (``pointer_offsets_by: relation``: a running count per
relation over the source for every decoder token), or with both offset terms side by side (``pointer_offsets_by:
both``). All train
on the same batches: ``--steps`` batches of ``--batch-size`` ReCOGS_pos training rows grouped by source + target
length (the recipe's ``data_order: grouped``), drawn at random (seed 0). A step is forward, backward and an AdamW
step; the models are timed interleaved, rotating which goes first, after 2 untimed warm-up steps each, so that a
change in the machine's load hits all alike. ``--precision auto`` autocasts to bf16 where the CPU has native bf16,
as the recipe does.

Also timed: the collators that make those batches (``DataCollatorForSeq2Seq`` against it plus
``relation_ids``), and the one-off layout of the training inputs (parse, head-word tree, ids), which a run pays
once when it tokenizes its training split. Printed: examples/s of each and the ratios.
"""

from __future__ import annotations

import argparse
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


def grouped_batches(rows: list[dict], batch_size: int, steps: int) -> list[list[dict]]:
    """``steps`` random batches (seed 0) of rows sorted by source + target length, as grouped batching makes."""
    ordered = sorted(rows, key=lambda r: len(r["input_ids"]) + len(r["labels"]))
    batches = [ordered[i:i + batch_size] for i in range(0, len(ordered) - batch_size + 1, batch_size)]
    return random.Random(0).sample(batches, min(steps, len(batches)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--precision", choices=("auto", "bf16", "fp32"), default="auto")
    args = parser.parse_args()

    import contextlib

    import torch
    from transformers import DataCollatorForSeq2Seq

    from hf_recogs import load_dataset
    from hf_recogs.models import build_model
    from hf_recogs.structure import cogs_default_lexicon, cogs_parse_sentence
    from hf_recogs.tokenization import build_tokenizer
    from hf_recogs.train.data import COGS_MARKERS, SourceLayout, StructureSeq2SeqCollator
    from hf_recogs.train.hardware import cpu_has_native_bf16

    torch.set_num_threads(1)
    bf16 = args.precision == "bf16" or (args.precision == "auto" and cpu_has_native_bf16())
    train = load_dataset("recogs_pos", split="train")
    sources, targets = list(train["input"]), list(train["output"])
    tokenizer = build_tokenizer(sources, targets)
    lexicon = cogs_default_lexicon()
    layout = SourceLayout(tokenizer, lambda text: cogs_parse_sentence(text, lexicon).structure, COGS_MARKERS)

    started = time.perf_counter()
    laid_out = [layout.encode(text) for text in sources]
    layout_s = time.perf_counter() - started
    labels = tokenizer(targets, truncation=True, max_length=512)["input_ids"]
    rows = [{"input_ids": ids, "attention_mask": [1] * len(ids), "labels": lab, "source_heads": heads}
            for (ids, heads), lab in zip(laid_out, labels, strict=True)]
    batches = grouped_batches(rows, args.batch_size, args.steps)

    hard = {"encoder_structure": "hard", "structure_heads": 2}
    pointer = {**hard, "cross_attention_structure": "pointer", "pointer_offsets": 4}
    settings = {"transformer": ("transformer", {}), "structure_transformer": ("structure_transformer", hard),
                "+ pointer": ("structure_transformer", pointer),
                "+ pointer keys": ("structure_transformer", {**pointer, "pointer_keys": True}),
                "+ sides, argument mask": ("structure_transformer", {**pointer, "pointer_keys": True,
                                                                     "pointer_sides": True,
                                                                     "pointer_argument_mask": True}),
                "+ sides, coverage": ("structure_transformer", {**pointer, "pointer_keys": True, "pointer_sides": True,
                                                                "pointer_coverage": True}),
                "+ sides, relative decoder": ("structure_transformer", {**pointer, "pointer_keys": True,
                                                                        "pointer_sides": True,
                                                                        "decoder_relative_positions": 16})}
    recipe = {**pointer, "pointer_keys": True, "pointer_sides": True, "pointer_coverage": True,
              "decoder_relative_positions": 16}
    settings["+ sides, coverage, relative"] = ("structure_transformer", recipe)
    settings["+ sides, coverage, relative, values"] = ("structure_transformer", {**recipe, "pointer_values": True})
    settings["+ sides, coverage, relative, arity"] = ("structure_transformer", {**recipe, "pointer_arity_mask": True})
    settings["+ sides, coverage, relative, arity, head counts"] = (
        "structure_transformer", {**recipe, "pointer_arity_mask": True, "pointer_head_counts": True})
    settings["+ sides, coverage, relative, copy"] = ("structure_transformer", {**recipe, "output_copy": True})
    settings["+ sides, coverage, relative, offsets by relation"] = (
        "structure_transformer", {**recipe, "pointer_offsets_by": "relation"})
    settings["+ sides, coverage, relative, offsets by position and by relation"] = (
        "structure_transformer", {**recipe, "pointer_offsets_by": "both"})
    models = {}
    for name, (arch, overrides) in settings.items():
        torch.manual_seed(0)
        model = build_model(arch, tokenizer, max_positions=512, **overrides).train()
        models[name] = (model, torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01))
    plain = DataCollatorForSeq2Seq(tokenizer, model=models["transformer"][0], label_pad_token_id=-100, padding=True)
    structured = StructureSeq2SeqCollator(plain)
    collators = {"transformer": lambda b: plain([{k: r[k] for k in ("input_ids", "attention_mask", "labels")}
                                                 for r in b]),
                 "structure_transformer": structured}

    collate_s = {name: 0.0 for name in collators}
    for name, collate in collators.items():
        for batch in batches:
            t = time.perf_counter()
            collate(batch)
            collate_s[name] += time.perf_counter() - t
    inputs = {name: [collate(b) for b in batches] for name, collate in collators.items()}
    names_after = [n for n in settings if n.startswith("+")]
    for name in names_after:
        inputs[name] = inputs["structure_transformer"]  # the same collator
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()

    def step(name: str, i: int) -> float:
        model, optimiser = models[name]
        t = time.perf_counter()
        with autocast:
            loss = model(**inputs[name][i]).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        return time.perf_counter() - t

    for name in models:  # warm-up, untimed
        for i in range(min(2, len(batches))):
            step(name, i)
    step_s = {name: 0.0 for name in models}
    names = list(models)
    for i in range(len(batches)):
        for name in names[i % len(names):] + names[:i % len(names)]:
            step_s[name] += step(name, i)

    examples = sum(len(b) for b in batches)
    print(f"ReCOGS_pos train: {len(batches)} grouped batches of {args.batch_size} ({examples} rows), one thread, "
          f"{'bf16 autocast' if bf16 else 'fp32'}, torch {torch.__version__}")
    print(f"input layout (parse + head-word tree + ids), once per run: {len(sources) / layout_s:,.0f} rows/s "
          f"({layout_s:.1f} s for {len(sources)} rows, {len(layout.unparsed)} without a parse)")
    for name in models:
        collator = collate_s.get(name, collate_s["structure_transformer"])
        print(f"{name:<48} training steps {examples / step_s[name]:7.1f} examples/s   "
              f"collator {1000 * collator / len(batches):6.2f} ms/batch")
    collate_ratio = collate_s["structure_transformer"] / collate_s["transformer"]
    for name in ("structure_transformer", *names_after):
        print(f"{name} / transformer: {step_s['transformer'] / step_s[name]:.3f}x the training-step throughput")
    print(f"the structure collator takes {collate_ratio:.2f}x the time of the plain one (collators: "
          f"{100 * collate_s['structure_transformer'] / step_s['structure_transformer']:.1f} % of a structure step)")


if __name__ == "__main__":
    main()
