"""Training and generation throughput of the ``transformer`` baseline against the ReCOGS reference set-up.

    python bench/train_bench.py [--config recogs_pos] [--steps N] [--json out.json] [--ablations]

One run, same data (the config's official train file, read through ``hf_recogs.sources`` from the mirror named
by ``HF_RECOGS_MIRROR``, default ``../shared/mirror``), same word-level vocabulary, same optimiser
(``torch.optim.AdamW``, lr 1e-4, weight decay 0.01), plain training loops (forward, backward, optimiser step; no
Trainer, so that only the model, the batching and the precision differ):

- ``reference``: what frankaging/ReCOGS ``run_cogs.py`` does — its BERT2BERT ``EncoderDecoderModel`` (our
  ``reference_transformer``) with **eager** attention (transformers 4.21, which the reference pins, has no
  SDPA); every row ``[BOS] … [EOS]`` on both sides, truncated to 512; the train list shuffled once and cut into
  consecutive batches of 128; each batch padded to **its own longest** source and target (padding to the batch
  max, not to 512 — 512 is only the truncation length); fp32; loss over non-pad labels.
- ``paper``: our paper config (``configs/recogs_pos_transformer.yaml``): ``reference_transformer`` with SDPA
  attention, rows ``… </s>``, the same batches of 128, fp32.
- ``fast``: our fast recipe (``configs/recogs_pos_transformer_fast.yaml``): the Bart ``transformer``, batches
  of 64 grouped by source + target length (transformers' ``LengthGroupedSampler`` on those lengths, as our
  Trainer does with ``data_order: grouped``), bf16 autocast where the CPU has native bf16 (``--no-bf16``: fp32).
- ``--extra-archs lstm,relative_transformer`` times those hf_recogs models like ``fast``.
- ``--ablations`` adds ``fast_fp32`` (the fast set-up without bf16), ``fast_random`` (the Bart model on the
  reference's batches of 128, fp32: the model/attention effect alone) and ``reference_grouped`` (the reference
  model on grouped batches of 64, fp32: the batching effect alone).

Measurement: ``--steps`` batches of each set-up's epoch, chosen by stratified sampling with the largest
batches taken for certain (``_stratified_sample``), each weighted by the number of epoch batches it stands
for; ``Σ weight × step time`` estimates the epoch time without bias. 2 untimed warm-up steps first; set-ups are timed **interleaved** step by step so
that a change in machine load (shared CPU) hits all of them alike. Reported: examples/s, target tokens/s (the
set-up's own non-pad labels; the reference has one more per row, its leading ``[BOS]``), their ratios, and an
extrapolated epoch time (= mean step time × steps per epoch — an extrapolation, not a measured epoch). The
padding efficiency over the whole epoch (real / padded cells, model-free) is computed exactly.

Generation: greedy decoding of ``--gen-sentences`` train sources with our fast model and with the paper-size
LSTM, each with and without its cache (KV cache / recurrent state); to make an untrained model decode like a trained one, each batch is forced to emit exactly its longest
gold target length (``min_length = max_length``), sources sorted by length into batches of ``--gen-batch-size``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TRAIN_FILES = {  # config → (pin, path) of its official train file
    "recogs_pos": ("recogs", "recogs_positional_index/train.tsv"),
    "cogs": ("cogs", "data/train.tsv"),
}


def _load(config: str) -> list[tuple[str, str]]:
    mirror = ROOT.parent / "shared" / "mirror"
    if not os.environ.get("HF_RECOGS_MIRROR") and (mirror / "MANIFEST.tsv").is_file():
        os.environ["HF_RECOGS_MIRROR"] = str(mirror)
    from hf_recogs.sources import pinned, read_tsv

    pin, path = TRAIN_FILES[config]
    rows = read_tsv(pinned(pin, path))
    return [(r[0], r[1]) for r in rows if len(r) >= 2]


def _pad(seqs: list[list[int]], value: int = 0):
    import torch

    width = max(map(len, seqs))
    out = torch.full((len(seqs), width), value, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out


class Setup:
    """A model, its optimiser and its epoch of batches (lists of (source ids, label ids))."""

    def __init__(self, name, model, examples, batches, bf16: bool = False):
        import torch

        self.name, self.model, self.bf16 = name, model, bf16
        self.model.train()
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
        self.examples, self.batches = examples, batches
        self.times: list[float] = []
        self.weights: list[float] = []  # how many epoch batches each timed one stands for
        self.rows = self.tokens = 0.0  # weighted: estimates of the epoch's totals

    def tensors(self, batch):
        src = [self.examples[i][0] for i in batch]
        tgt = [self.examples[i][1] for i in batch]
        input_ids = _pad(src)
        labels = _pad(tgt, -100)
        return {"input_ids": input_ids, "attention_mask": (input_ids != 0).long(), "labels": labels}

    def step(self, batch, timed: bool, weight: float = 1.0):
        import torch

        inputs = self.tensors(batch)
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            loss = self.model(**inputs).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        elapsed = time.perf_counter() - t0
        if not torch.isfinite(loss):
            raise RuntimeError(f"{self.name}: non-finite loss")
        if timed:
            self.times.append(elapsed)
            self.weights.append(weight)
            self.rows += weight * len(batch)
            self.tokens += weight * int((inputs["labels"] != -100).sum())

    def padding_efficiency(self) -> dict:
        real_s = real_t = cells_s = cells_t = 0
        for batch in self.batches:
            ls = [len(self.examples[i][0]) for i in batch]
            lt = [len(self.examples[i][1]) for i in batch]
            real_s, real_t = real_s + sum(ls), real_t + sum(lt)
            cells_s, cells_t = cells_s + max(ls) * len(ls), cells_t + max(lt) * len(lt)
        return {"source": real_s / cells_s, "target": real_t / cells_t}

    def summary(self) -> dict:
        total = sum(w * t for w, t in zip(self.weights, self.times))  # estimated epoch time
        mean = total / sum(self.weights)
        return {
            "params": sum(p.numel() for p in self.model.parameters()),
            "steps_timed": len(self.times),
            "s_per_step_mean": mean,
            "s_per_step_median_sampled": statistics.median(self.times),
            "examples_per_s": self.rows / total,
            "target_tokens_per_s": self.tokens / total,
            "steps_per_epoch": len(self.batches),
            "epoch_estimate_s": total,
            "padding_efficiency": self.padding_efficiency(),
        }


def _stratified_sample(batches, examples, n: int, rng: random.Random) -> list[tuple[list[int], float]]:
    """``n`` (batch, weight) pairs that stand for the whole epoch of ``batches``.

    Batches are ranked by padded size (rows × (longest source + longest target), a proxy of their cost). The
    ``n // 4`` largest are always timed (weight 1: the few batches of long ``concat`` rows cost up to ~10× a
    typical one and would otherwise dominate the variance); the rest are cut into equal-count strata by size and
    one batch is drawn from each (weight = stratum size). ``Σ weight × time`` then estimates the epoch time
    without bias, with much less variance than a simple random sample."""

    def cells(batch):
        return len(batch) * (max(len(examples[i][0]) for i in batch) + max(len(examples[i][1]) for i in batch))

    order = sorted(range(len(batches)), key=lambda i: cells(batches[i]))
    n = min(n, len(order))
    top = n // 4 if n < len(order) else n
    picks = [(batches[i], 1.0) for i in order[len(order) - top :]]
    rest, k = order[: len(order) - top], n - top
    bounds = [round(j * len(rest) / k) for j in range(k + 1)] if k else [0]
    for j in range(k):
        lo, hi = bounds[j], bounds[j + 1]
        picks.append((batches[rest[rng.randrange(lo, hi)]], float(hi - lo)))
    rng.shuffle(picks)
    return picks


def _chunks(order: list[int], size: int) -> list[list[int]]:
    return [order[i : i + size] for i in range(0, len(order), size)]


def _grouped_batches(lengths: list[int], batch_size: int, seed: int) -> list[list[int]]:
    import torch
    from transformers.trainer_pt_utils import LengthGroupedSampler

    g = torch.Generator().manual_seed(seed)
    sampler = LengthGroupedSampler(batch_size, lengths=lengths, generator=g)
    return _chunks(list(sampler), batch_size)


def bench_generation(model, tok, pairs, n: int, batch_size: int, seed: int) -> dict:
    import torch
    from transformers import GenerationConfig

    rng = random.Random(seed + 1)
    sample = sorted(rng.sample(pairs, n), key=lambda p: len(p[0].split()))
    model.eval()
    out = {}
    for use_cache in (True, False):
        total, new_tokens = 0.0, 0
        for chunk in _chunks(list(range(n)), batch_size):
            src = [sample[i][0] for i in chunk]
            k = max(len(tok(text_target=sample[i][1])["input_ids"]) for i in chunk)  # + </s>
            gc = GenerationConfig(**{**model.generation_config.to_dict(), "max_length": k + 1, "min_length": k + 1})
            inputs = tok(src, padding=True, return_tensors="pt")
            t0 = time.perf_counter()
            with torch.no_grad():
                gen = model.generate(**inputs, generation_config=gc, use_cache=use_cache)
            total += time.perf_counter() - t0
            assert gen.shape[1] == k + 1, gen.shape
            new_tokens += k * len(chunk)
        out["with_cache" if use_cache else "without_cache"] = {
            "sentences_per_s": n / total, "seconds": total, "new_tokens_per_sentence": new_tokens / n,
        }
    out["cache_speedup"] = out["with_cache"]["sentences_per_s"] / out["without_cache"]["sentences_per_s"]
    out["sentences"], out["batch_size"] = n, batch_size
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="recogs_pos", choices=sorted(TRAIN_FILES))
    ap.add_argument("--steps", type=int, default=20, help="timed training steps per set-up (default 20)")
    ap.add_argument("--batch-size", type=int, default=128, help="the reference's batch size (default 128)")
    ap.add_argument("--fast-batch-size", type=int, default=64, help="the fast recipe's batch size (default 64)")
    ap.add_argument("--no-bf16", action="store_true", help="time the fast set-up in fp32")
    ap.add_argument("--gen-sentences", type=int, default=128)
    ap.add_argument("--gen-batch-size", type=int, default=64)
    ap.add_argument("--no-generation", action="store_true")
    ap.add_argument("--ablations", action="store_true",
                    help="also time fast_fp32, fast_random and reference_grouped")
    ap.add_argument("--compile", action="store_true",
                    help="also time fast_compiled: the fast set-up under torch.compile(dynamic=True); its "
                    "compilation happens in the untimed warm-up steps and is reported separately")
    ap.add_argument(
        "--extra-archs", default="", help="comma-separated other hf_recogs archs (lstm, relative_transformer) to "
        "time like the fast set-up, as fast_<arch>",
    )
    ap.add_argument(
        "--threads", type=int, default=None,
        help="torch intra-op threads (default: 1 when the 1-minute load average is >= 1, i.e. someone else is "
        "using the CPU — with 2 threads on a busy 2-core machine OpenMP spinning made steps ~10x slower — "
        "else torch's default)",
    )
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import warnings

    warnings.filterwarnings("ignore", message="Version v4.12.0 introduces", category=FutureWarning)
    import torch

    from hf_recogs.models import build_model
    from hf_recogs.tokenization import build_tokenizer
    from hf_recogs.train.hardware import cpu_has_native_bf16

    load_before = os.getloadavg()
    if args.threads is None and load_before[0] >= 1.0:
        args.threads = 1
    if args.threads:
        torch.set_num_threads(args.threads)
    t_start = time.perf_counter()

    pairs = _load(args.config)
    tok = build_tokenizer([s for s, _ in pairs], [t for _, t in pairs])
    ours_ex = [
        (tok(s)["input_ids"][:512], tok(text_target=t)["input_ids"][:512]) for s, t in pairs
    ]  # words + </s>
    ref_ex = [
        ([1] + tok(s, add_special_tokens=False)["input_ids"][:510] + [2],
         [1] + tok(t, add_special_tokens=False)["input_ids"][:510] + [2])
        for s, t in pairs
    ]  # [BOS] words [EOS], truncated to 512
    rng = random.Random(args.seed)
    order = list(range(len(pairs)))
    rng.shuffle(order)  # the reference: shuffled once per seed, consecutive batches
    ref_batches = _chunks(order, args.batch_size)
    lengths = [len(s) + len(t) for s, t in ours_ex]
    grouped = _grouped_batches(lengths, args.fast_batch_size, args.seed)
    bf16 = cpu_has_native_bf16() and not args.no_bf16

    def model(arch, **overrides):
        torch.manual_seed(args.seed)
        return build_model(arch, tok, **overrides)

    setups = [
        Setup("reference", model("reference_transformer", attn_implementation="eager"), ref_ex, ref_batches),
        Setup("paper", model("reference_transformer"), ours_ex, ref_batches),
        Setup("fast", model("transformer"), ours_ex, grouped, bf16=bf16),
    ]
    if args.ablations:
        setups.append(Setup("fast_fp32", model("transformer"), ours_ex, grouped))
        setups.append(Setup("fast_random", model("transformer"), ours_ex, ref_batches))
        setups.append(Setup("reference_grouped", model("reference_transformer", attn_implementation="eager"),
                            ref_ex, grouped))
    for arch in filter(None, (a.strip() for a in args.extra_archs.split(","))):
        setups.append(Setup(f"fast_{arch}", model(arch), ours_ex, grouped, bf16=bf16))
    if args.compile:
        setups.append(Setup("fast_compiled", torch.compile(model("transformer"), dynamic=True), ours_ex, grouped,
                            bf16=bf16))

    print(f"{args.config}: {len(pairs):,} train rows, vocabulary {len(tok)}, batches {args.batch_size} "
          f"(reference, paper) / {args.fast_batch_size} grouped (fast), fast bf16 {bf16}, torch {torch.__version__} "
          f"threads {torch.get_num_threads()}, load {load_before}", flush=True)

    # The same sampled batches for set-ups that share an epoch of batches (grouped or reference order), so that
    # the model comparisons within one batching are on identical data.
    picks = {}
    for s in setups:
        key = "grouped" if s.batches is grouped else "reference"
        picks[s.name] = _stratified_sample(s.batches, ours_ex, args.steps, random.Random(f"{args.seed}-{key}"))
        t0 = time.perf_counter()
        s.step(s.batches[0], timed=False)
        s.step(s.batches[-1], timed=False)
        if s.name == "fast_compiled":
            print(f"  fast_compiled: 2 warm-up steps with compilation took {time.perf_counter() - t0:.0f} s",
                  flush=True)
    for i in range(args.steps):
        for s in setups:
            if i < len(picks[s.name]):
                batch, weight = picks[s.name][i]
                s.step(batch, timed=True, weight=weight)
        if (i + 1) % 5 == 0:
            print(f"  step {i + 1}/{args.steps}", flush=True)

    results = {s.name: s.summary() for s in setups}
    base = results["reference"]
    for name, r in results.items():
        r["speedup_examples_per_s"] = r["examples_per_s"] / base["examples_per_s"]
        r["speedup_target_tokens_per_s"] = r["target_tokens_per_s"] / base["target_tokens_per_s"]

    print(f"\n{'set-up':<26} {'params':>10} {'s/step':>7} {'ex/s':>7} {'tgt tok/s':>9} {'×ref ex':>7} "
          f"{'×ref tok':>8} {'pad eff src/tgt':>15} {'epoch (extrap.)':>15}")
    for name, r in results.items():
        pe = r["padding_efficiency"]
        print(f"{name:<26} {r['params']:>10,} {r['s_per_step_mean']:>7.3f} {r['examples_per_s']:>7.1f} "
              f"{r['target_tokens_per_s']:>9.0f} {r['speedup_examples_per_s']:>7.2f} "
              f"{r['speedup_target_tokens_per_s']:>8.2f} {pe['source']:>7.2f}/{pe['target']:.2f} "
              f"{r['epoch_estimate_s'] / 60:>11.1f} min")
    print(f"(epoch times extrapolated from {args.steps} sampled steps per set-up, not measured)")

    gen = None
    if not args.no_generation:
        gen = bench_generation(setups[2].model, tok, pairs, args.gen_sentences, args.gen_batch_size, args.seed)
        print(f"\ngreedy generation, fast model, {gen['sentences']} sentences in batches of {gen['batch_size']}, "
              f"{gen['with_cache']['new_tokens_per_sentence']:.1f} new tokens/sentence: "
              f"with cache {gen['with_cache']['sentences_per_s']:.1f} sent/s, "
              f"without {gen['without_cache']['sentences_per_s']:.1f} sent/s "
              f"(×{gen['cache_speedup']:.1f})")
        # the paper-size LSTM carries its recurrent state between steps the same way (hf_recogs.models)
        gen["lstm"] = bench_generation(model("lstm"), tok, pairs, args.gen_sentences, args.gen_batch_size, args.seed)
        print(f"greedy generation, paper-size LSTM: with cache {gen['lstm']['with_cache']['sentences_per_s']:.1f} "
              f"sent/s, without {gen['lstm']['without_cache']['sentences_per_s']:.1f} sent/s "
              f"(×{gen['lstm']['cache_speedup']:.1f})")

    load_after = os.getloadavg()
    print(f"\nload average before {load_before}, after {load_after}; wall {time.perf_counter() - t_start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({
            "config": args.config, "rows": len(pairs), "vocab": len(tok), "batch_size": args.batch_size,
            "steps": args.steps, "threads": torch.get_num_threads(), "torch": torch.__version__,
            "machine": platform.machine(), "cpus": os.cpu_count(), "load_before": load_before,
            "load_after": load_after, "fast_bf16": bf16, "fast_batch_size": args.fast_batch_size,
            "training": results, "generation": gen,
        }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
