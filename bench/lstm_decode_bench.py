"""Benchmark: decoding speed of the attention LSTM with and without its recurrent-state cache, one thread.

    python bench/lstm_decode_bench.py                            # ReCOGS_pos train rows, the recipe's LSTM
    python bench/lstm_decode_bench.py --rows 64 --no-baseline    # cached decoding only
    python bench/lstm_decode_bench.py --dataset cfq_mcd1 --rows 128 --extrapolate-rows 50000

Rows: ``--rows`` rows of ``--split`` (default train: what the model-negative generators decode), drawn with a
fixed seed and loaded through ``hf_recogs.load_dataset`` (mirror named by ``HF_RECOGS_MIRROR``, default
``../shared/mirror``). Tokenizer: our word-level tokenizer over every split of the config (the vocabulary a
trained model would have). Model: a randomly initialised ``lstm`` of the recipe ``--recipe`` (default
``configs/recogs_pos_lstm.yaml``: 2 + 2 layers, hidden 512, dot attention), in eval mode.

An untrained model does not know when to stop, so every batch is made to decode exactly as many tokens as its
longest gold target (``min_length = max_length``): the number of steps a trained model would take for
that batch, because a batch runs until its longest output ends. Rows are sorted by source length and cut into
batches of ``--batch-size`` (as ``hf_recogs.train.decode.decode`` does).

Modes, timed batch by batch and interleaved (cached and uncached runs of a batch back to back, their order
alternating), so that a change in machine load hits both alike:
- greedy (``num_beams=1``), with the cache and with ``use_cache=False``;
- beam search, ``--beams`` beams (default 4), all of them returned with ``sequences_scores`` (what the
  model-negative generators ask for), with the cache and without.
For each mode: seconds, rows/s and generated tokens/s (per returned sequence), and the uncached / cached time
ratio. The cached and uncached outputs are compared: identical token sequences, largest beam-score difference.

``--extrapolate-rows N`` prints the hours that N rows would take at the measured cached beam rate: an
extrapolation (a random model forced to gold lengths, on this machine's load), not a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _rows(dataset: str, split: str, n: int, seed: int) -> tuple[list[dict], list[str], list[str]]:
    """``n`` rows of ``split`` (fixed seed), and all sources and targets of the config (for the vocabulary)."""
    mirror = ROOT.parent / "shared" / "mirror"
    if not os.environ.get("HF_RECOGS_MIRROR") and (mirror / "MANIFEST.tsv").is_file():
        os.environ["HF_RECOGS_MIRROR"] = str(mirror)
    import hf_recogs

    splits = hf_recogs.load_dataset(dataset)
    rows = splits[split]
    picked = random.Random(seed).sample(range(len(rows)), min(n, len(rows)))
    sources = [s for name in splits for s in splits[name]["input"]]
    targets = [t for name in splits for t in splits[name]["output"]]
    return [rows[i] for i in picked], sources, targets


def _model(recipe: Path, tokenizer, seed: int):
    import torch
    import yaml

    from hf_recogs.models import build_model

    config = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    if config.get("arch") != "lstm":
        raise SystemExit(f"{recipe} is not an lstm recipe (arch: {config.get('arch')})")
    torch.manual_seed(seed)
    model = build_model("lstm", tokenizer, max_positions=config.get("max_positions", 512),
                        **(config.get("model_overrides") or {}))
    return model.eval()


def _batches(rows: list[dict], tokenizer, batch_size: int) -> list[tuple[dict, int]]:
    """(tokenized sources, tokens to generate) per batch of rows sorted by source length."""
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]["input"].split()))
    out = []
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        enc = tokenizer([rows[i]["input"] for i in idx], return_tensors="pt", padding=True)
        gold = tokenizer(text_target=[rows[i]["output"] for i in idx])["input_ids"]  # words + </s>
        out.append((enc, max(map(len, gold))))
    return out


def _decode(model, enc, steps: int, beams: int, use_cache: bool):
    # max_length counts the decoder start token: exactly ``steps`` new tokens
    kwargs = {"max_length": steps + 1, "min_length": steps + 1, "do_sample": False, "use_cache": use_cache,
              "num_beams": beams}
    if beams > 1:
        kwargs.update(num_return_sequences=beams, output_scores=True, return_dict_in_generate=True)
    return model.generate(**enc, **kwargs)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="recogs_pos")
    parser.add_argument("--split", default="train")
    parser.add_argument("--recipe", type=Path, default=ROOT / "configs" / "recogs_pos_lstm.yaml")
    parser.add_argument("--rows", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--beams", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-baseline", action="store_true", help="time the cached decoding only")
    parser.add_argument("--no-greedy", action="store_true")
    parser.add_argument("--no-beam", action="store_true")
    parser.add_argument("--extrapolate-rows", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    import torch

    from hf_recogs.tokenization import build_tokenizer

    torch.set_num_threads(1)
    rows, sources, targets = _rows(args.dataset, args.split, args.rows, args.seed)
    tokenizer = build_tokenizer(sources, targets)
    model = _model(args.recipe, tokenizer, args.seed)
    batches = _batches(rows, tokenizer, args.batch_size)
    cfg = model.config
    print(f"{args.dataset}/{args.split}: {len(rows)} rows in {len(batches)} batches of up to {args.batch_size}; "
          f"lstm hidden {cfg.hidden_size}, {cfg.encoder_layers}+{cfg.decoder_layers} layers, vocab "
          f"{cfg.vocab_size}; torch {torch.__version__}, 1 thread, {platform.processor() or platform.machine()}; "
          f"steps per batch {[steps for _, steps in batches]}", flush=True)

    modes = [] if args.no_greedy else [("greedy", 1)]
    modes += [] if args.no_beam else [(f"beam{args.beams}", args.beams)]
    caches = (True,) if args.no_baseline else (True, False)
    results: dict = {"dataset": args.dataset, "split": args.split, "rows": len(rows),
                     "batch_size": args.batch_size, "hidden_size": cfg.hidden_size, "vocab_size": cfg.vocab_size,
                     "modes": {}}
    with torch.no_grad():
        _decode(model, batches[0][0], 2, 1, True)  # warm-up
        for name, beams in modes:
            seconds = {c: 0.0 for c in caches}
            same = compared = 0
            score_diff = 0.0
            tokens = 0
            for b, (enc, steps) in enumerate(batches):
                outs = {}
                for use_cache in (caches if b % 2 == 0 else caches[::-1]):
                    start = time.perf_counter()
                    outs[use_cache] = _decode(model, enc, steps, beams, use_cache)
                    seconds[use_cache] += time.perf_counter() - start
                tokens += enc["input_ids"].shape[0] * beams * steps
                if len(outs) == 2:
                    a, z = outs[True], outs[False]
                    seq_a, seq_z = (a.sequences, z.sequences) if beams > 1 else (a, z)
                    same += int((seq_a == seq_z).all(dim=1).sum())
                    compared += seq_a.shape[0]
                    if beams > 1:
                        score_diff = max(score_diff, float((a.sequences_scores - z.sequences_scores).abs().max()))
                print(f"  {name} batch {b + 1}/{len(batches)}: {steps} steps, "
                      + ", ".join(f"{'cache' if c else 'no cache'} {seconds[c]:.1f}s so far" for c in caches),
                      flush=True)
            mode = {}
            for use_cache in caches:
                key = "cache" if use_cache else "no_cache"
                mode[key] = {"seconds": seconds[use_cache], "rows_per_s": len(rows) / seconds[use_cache],
                             "tokens_per_s": tokens / seconds[use_cache]}
            if len(caches) == 2:
                mode["no_cache_over_cache"] = seconds[False] / seconds[True]
                mode["identical_sequences"] = f"{same}/{compared}"
                if beams > 1:
                    mode["max_score_diff"] = score_diff
            results["modes"][name] = mode

    print(f"\n{'mode':<8} {'cache':<9} {'seconds':>9} {'rows/s':>9} {'tokens/s':>10}")
    for name, mode in results["modes"].items():
        for key in ("cache", "no_cache"):
            if key in mode:
                m = mode[key]
                print(f"{name:<8} {key:<9} {m['seconds']:>9.1f} {m['rows_per_s']:>9.2f} {m['tokens_per_s']:>10.0f}")
        if "no_cache_over_cache" in mode:
            diff = f", max |score diff| {mode['max_score_diff']:.1e}" if "max_score_diff" in mode else ""
            print(f"{name:<8} ratio no cache / cache: {mode['no_cache_over_cache']:.1f}x; identical sequences "
                  f"{mode['identical_sequences']}{diff}")
    beam = results["modes"].get(f"beam{args.beams}")
    if args.extrapolate_rows and beam:
        hours = args.extrapolate_rows / beam["cache"]["rows_per_s"] / 3600
        results["extrapolated_hours"] = hours
        print(f"\nEXTRAPOLATION (not measured): {args.extrapolate_rows} {args.dataset} rows, {args.beams} beams, "
              f"with the cache, one thread at this load: {hours:.2f} h")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results


if __name__ == "__main__":
    main()
