"""Where a ReCOGS_pos run's outputs first go wrong when the decoder is given the gold prefix (teacher forcing).

    python bench/first_error_probe.py --checkpoint RUN/seed_N --category obj_pp_to_subj_pp [--category ...] \
        [--rows 1000]

For each gen row of a category (the first ``--rows``), the gold form is fed to the decoder and each step's most
likely token compared with the gold one; the first step where they differ is classed by what the gold form writes
there (``error_kind``): the noun list; which conjunct comes next (its first token: a role, an ``nmod``, a verb's
lemma, or the end); a verb's own index (``give ( 5 )``); a conjunct's first or second index; an ``nmod``'s
preposition. Each class is split by the row's verdict in the run's own free decoding (``predictions_gen``): a
class that holds most of the wrong rows is the decision the model cannot make even from a right prefix, where
``hf-recogs errors`` (free decoding) also counts errors that follow an earlier one. A run trained on reordered
targets (``target_order: depth_first`` or ``nmod_last``) is fed the gold forms in its own order.

One thread; the run's precision. A structure checkpoint needs the mirror (the parser's verb classes).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_RECOGS_MIRROR", str(ROOT.parent / "shared" / "mirror"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.noun_swap_probe import read_predictions, require_checkpoint

ROLES = ("agent", "theme", "recipient", "xcomp", "ccomp")
END = "</s>"


def error_kind(gold: list[str], step: int) -> str:
    """The class of step ``step`` of a ReCOGS_pos form ``gold`` (its words, ``</s>`` appended), by what the gold
    form writes there."""
    last_list_end = max((i for i, w in enumerate(gold) if w == ";"), default=-1)
    if step <= last_list_end:
        return "noun list"
    start = max([last_list_end] + [i for i in range(step) if gold[i] == "AND"]) + 1
    if step == start or gold[step] in ("AND", END):
        word = gold[step]
        what = ("the end" if word == END else "another conjunct" if word == "AND" else "a role" if word in ROLES
                else "an nmod" if word == "nmod" else "a verb's lemma")
        return f"which conjunct next (gold: {what})"
    conjunct = gold[start:step + 1]
    if gold[start] == "nmod" and step == start + 2:
        return "an nmod's preposition"
    if gold[step].isdigit():
        if "," not in until_conjunct_end(gold, start):  # a one-argument conjunct: a verb's own position
            return "a verb's own index"
        return "a conjunct's second index" if "," in conjunct else "a conjunct's first index"
    return "other"


def until_conjunct_end(gold: list[str], start: int) -> list[str]:
    end = next((i for i in range(start, len(gold)) if gold[i] in ("AND", END)), len(gold))
    return gold[start:end]


def gold_in_run_order(results: dict, checkpoint: Path):
    """The gold forms as the run was trained to write them: its ``target_order`` (a conjunct order: the same
    tokens, so the classes hold); ``arguments_first`` rewrites the forms themselves and is refused."""
    from hf_recogs.train.data import target_rewrite

    order = results["hyperparameters"].get("target_order", "dataset")
    if order == "arguments_first":
        raise SystemExit(f"{checkpoint} was trained on arguments_first targets, which are not ReCOGS forms: this "
                         "probe classes ReCOGS conjuncts; probe a run trained on a conjunct order")
    return target_rewrite(order) or (lambda gold: gold)


def first_errors(model, tokenizer, encode, rows: list[dict], bf16: bool) -> Counter:
    """(kind, free-decoding verdict) -> rows, for the teacher-forced first wrong step of each row."""
    import torch

    counts: Counter = Counter()
    for start in range(0, len(rows), 32):
        batch = rows[start:start + 32]
        enc = encode([r["input"] for r in batch]) if encode else tokenizer([r["input"] for r in batch],
                                                                            return_tensors="pt", padding=True)
        labels = tokenizer([r["gold"] for r in batch], return_tensors="pt", padding=True)["input_ids"]
        masked = labels.masked_fill(labels == tokenizer.pad_token_id, -100)
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            best = model(**enc, labels=masked).logits.argmax(-1)
        for row, r in enumerate(batch):
            # our word-level tokenizers give one id per word and no <s>: word i is label i, then </s>
            gold = [*r["gold"].split(), END]
            wrong = (best[row, :len(gold)] != labels[row, :len(gold)]).nonzero()
            kind = "none (teacher-forced right)" if len(wrong) == 0 else error_kind(gold, wrong[0].item())
            counts[(kind, "right" if r["sem"] else "wrong")] += 1
    return counts


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--category", action="append", required=True)
    parser.add_argument("--rows", type=int, default=1000)
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    import hf_recogs.models  # noqa: F401 - registers structure_transformer with the Auto classes
    from hf_recogs.train.data import SourceLayout
    from hf_recogs.train.hardware import cpu_has_native_bf16

    torch.set_num_threads(1)
    results = json.loads((args.checkpoint / "results.json").read_text(encoding="utf-8"))
    if results.get("dataset") != "recogs_pos":
        raise SystemExit(f"{args.checkpoint} is a {results.get('dataset')} run: this probe reads ReCOGS_pos forms "
                         "(conjuncts after a noun list, word indices)")
    rewrite = gold_in_run_order(results, args.checkpoint)
    predictions = read_predictions(args.checkpoint)
    require_checkpoint(args.checkpoint)
    model = AutoModelForSeq2SeqLM.from_pretrained(args.checkpoint).eval()
    tokenizer = AutoTokenizer.from_pretrained(args.checkpoint)
    encode = SourceLayout.for_model(model, tokenizer).batch if results.get("input_structure") else None
    bf16 = results["mixed_precision"] == "bf16" and cpu_has_native_bf16()
    report: dict = {}
    for category in args.category:
        rows = [{**r, "gold": rewrite(r["gold"])} for r in predictions if r["category"] == category][:args.rows]
        if not rows:
            raise SystemExit(f"no gen row of category {category!r} in {args.checkpoint}: check the name")
        counts = first_errors(model, tokenizer, encode, rows, bf16)
        wrong = sum(v for (_, verdict), v in counts.items() if verdict == "wrong")
        print(f"\n{category}: {len(rows)} rows, {wrong} wrong in free decoding\n\n"
              "| teacher-forced first error | rows wrong in free decoding | rows right |\n|---|---|---|")
        kinds = sorted({k for k, _ in counts}, key=lambda k: -counts[(k, "wrong")] - counts[(k, "right")])
        for kind in kinds:
            print(f"| {kind} | {counts[(kind, 'wrong')]} | {counts[(kind, 'right')]} |")
            report[f"{category} | {kind}"] = [counts[(kind, "wrong")], counts[(kind, "right")]]
    return report


if __name__ == "__main__":
    main()
