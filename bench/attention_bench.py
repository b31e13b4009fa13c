"""Training-step speed of the two recipes' models with PyTorch's fused attention (``attn_implementation: sdpa``,
transformers' default) against plain matmul + softmax (``eager``), on the same ReCOGS_pos batches.

    python bench/attention_bench.py [--steps 40] [--batch-size 64] [--threads 1] [--precision auto|bf16|fp32]

What is compared: the fast recipe's ``transformer`` (2+2 layers, d_model 300, 4 heads) and the structure track's
best setting so far (``structure_transformer`` with the hard mask on 2 heads, the pointer terms with keys, sides,
coverage, the relative decoder, the arity mask, head counts, the copy with its lexicon and named words), each
built twice from the same seed (the same weights), once per implementation. The structure model's masks are
float tensors added to the logits, which the fused kernel takes as a general mask. A step is forward, backward
and an AdamW step on ``--steps`` random grouped batches (seed 0; the recipe's ``data_order: grouped``), after 2
untimed warm-up steps each; the models are timed interleaved, rotating which goes first. ``--precision auto``
autocasts to bf16 where the CPU has native bf16, as the recipes do. Printed: examples/s of each, the ratio, and
the two implementations' losses on the first batch in eval mode (no dropout: the two draw their dropout masks
differently), which differ by rounding only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_RECOGS_MIRROR", str(ROOT.parent / "shared" / "mirror"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SIZE = {"d_model": 300, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
        "decoder_attention_heads": 4, "encoder_ffn_dim": 512, "decoder_ffn_dim": 512}
BEST_STRUCTURE = {"encoder_structure": "hard", "structure_heads": 2, "cross_attention_structure": "pointer",
                  "pointer_offsets": 4, "pointer_keys": True, "pointer_sides": True, "pointer_coverage": True,
                  "decoder_relative_positions": 16, "pointer_arity_mask": True, "pointer_head_counts": True,
                  "output_copy": True, "output_copy_lexicon": True, "pointer_named_words": True}
IMPLEMENTATIONS = ("sdpa", "eager")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--precision", choices=("auto", "bf16", "fp32"), default="auto")
    args = parser.parse_args(argv)

    import torch
    from transformers import DataCollatorForSeq2Seq

    from bench.structure_seq2seq_bench import grouped_batches
    from hf_recogs import load_dataset
    from hf_recogs.models import build_model
    from hf_recogs.tokenization import build_tokenizer
    from hf_recogs.train.data import SourceLayout, StructureSeq2SeqCollator, cogs_source_parser
    from hf_recogs.train.hardware import cpu_has_native_bf16

    torch.set_num_threads(args.threads)
    bf16 = args.precision == "bf16" or (args.precision == "auto" and cpu_has_native_bf16())
    train = load_dataset("recogs_pos", split="train")
    sources, targets = list(train["input"]), list(train["output"])
    tokenizer = build_tokenizer(sources, targets)
    parse, markers, parser_name = cogs_source_parser()
    layout = SourceLayout(tokenizer, parse, markers, False, max_length=512, parser_name=parser_name)
    labels = tokenizer(targets, truncation=True, max_length=512)["input_ids"]
    rows = []
    for text, label in zip(sources, labels, strict=True):
        ids, heads = layout.encode(text)
        rows.append({"input_ids": ids, "attention_mask": [1] * len(ids), "labels": label, "source_heads": heads})
    batches = grouped_batches(rows, args.batch_size, args.steps)

    settings = {"transformer": ("transformer", {}), "structure, best setting": ("structure_transformer",
                                                                                BEST_STRUCTURE)}
    models = {}
    for setting, (arch, overrides) in settings.items():
        for implementation in IMPLEMENTATIONS:
            torch.manual_seed(0)
            model = build_model(arch, tokenizer, max_positions=512, training_pairs=(sources, targets),
                                attn_implementation=implementation, **SIZE, **overrides).train()
            models[setting, implementation] = (model, torch.optim.AdamW(model.parameters(), lr=1e-4))
    plain = DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100, padding=True)
    inputs = {"transformer": [plain([{k: r[k] for k in ("input_ids", "attention_mask", "labels")} for r in batch])
                              for batch in batches],
              "structure, best setting": [StructureSeq2SeqCollator(plain)(batch) for batch in batches]}
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()

    def step(key, i: int) -> tuple[float, float]:
        model, optimiser = models[key]
        started = time.perf_counter()
        with autocast:
            loss = model(**inputs[key[0]][i]).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        return time.perf_counter() - started, loss.item()

    def eval_loss(key) -> float:
        """The loss of the first batch without dropout (the kernels draw their dropout masks differently)."""
        model = models[key][0].eval()
        with torch.no_grad(), autocast:
            loss = model(**inputs[key[0]][0]).loss.item()
        model.train()
        return loss

    first_loss = {key: eval_loss(key) for key in models}  # the same weights, the same batch
    for key in models:  # warm-up
        step(key, 0)
        step(key, 1)
    seconds = dict.fromkeys(models, 0.0)
    keys = list(models)
    for i in range(len(batches)):
        for key in keys[i % len(keys):] + keys[:i % len(keys)]:
            seconds[key] += step(key, i)[0]

    examples = sum(len(b) for b in batches)
    print(f"ReCOGS_pos train: {len(batches)} grouped batches of {args.batch_size} ({examples} rows), "
          f"{args.threads} thread(s), {'bf16 autocast' if bf16 else 'fp32'}, torch {torch.__version__}")
    ratios = {}
    for setting in settings:
        for implementation in IMPLEMENTATIONS:
            print(f"{setting:<26} {implementation:<6} {examples / seconds[setting, implementation]:7.1f} examples/s")
        ratios[setting] = seconds[setting, "sdpa"] / seconds[setting, "eager"]
        gap = abs(first_loss[setting, "sdpa"] - first_loss[setting, "eager"])
        print(f"{setting}: eager is {ratios[setting]:.3f}x sdpa's throughput; first-batch losses without dropout "
              f"{first_loss[setting, 'sdpa']:.4f} / {first_loss[setting, 'eager']:.4f} (difference {gap:.2e})")
    return {"ratios": ratios, "seconds": {f"{s} / {i}": v for (s, i), v in seconds.items()}}


if __name__ == "__main__":
    main()
