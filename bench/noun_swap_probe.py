"""Where a ReCOGS_pos model takes a noun's role from: the noun swapped for others in the gen rows it gets wrong.

    python bench/noun_swap_probe.py --checkpoint RUN/seed_N --category only_seen_as_unacc_subj_as_unerg_subj \
        [--category ...] [--noun hippo] [--swap dog cat girl] [--rows 200]

For each category, the first ``--rows`` rows the run got wrong and half as many it got right (its own
``predictions_gen.jsonl[.gz]``), two measurements:

1. **Free decoding**: the sentences with every ``--noun`` replaced by each ``--swap`` noun, decoded greedily as the
   run decoded (its precision, its length cap) and scored by SEM against the gold form with the same replacement.
   If the wrong rows come right when only the noun changes, the noun is what the model got wrong.
2. **Teacher forcing**: the gold form fed to the decoder; at the step that writes the role of the first role
   conjunct whose argument is the noun, whether the gold role outscores the other roles (agent, theme,
   recipient), with the noun replaced (by the first ``--swap`` noun) in the source only, in the output prefix only
   (the noun list and the conjuncts before it), in both, in neither. This tells whether the noun reaches the role
   through the encoder (the source) or through the decoder's own output.

One thread. A structure checkpoint needs the mirror (the parser's verb classes).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_RECOGS_MIRROR", str(ROOT.parent / "shared" / "mirror"))
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROLES = ("agent", "theme", "recipient")


def read_predictions(folder: Path) -> list[dict]:
    for name in ("predictions_gen.jsonl.gz", "predictions_gen.jsonl"):
        if (folder / name).exists():
            opener = gzip.open if name.endswith(".gz") else open
            with opener(folder / name, "rt", encoding="utf-8") as f:
                return list(map(json.loads, f))
    raise SystemExit(f"{folder} has no predictions_gen.jsonl[.gz]: pass the seed folder of a run that scored gen")


def require_checkpoint(folder: Path) -> None:
    if not (folder / "config.json").exists():
        raise SystemExit(f"{folder} holds no model (a published run keeps one for few seeds): pass a seed folder with "
                         "config.json and model.safetensors, or the run's own output folder")


def replaced(text: str, noun: str, by: str) -> str:
    return " ".join(by if word == noun else word for word in text.split())


def role_step(gold: str, index: int) -> int | None:
    """The word position in ``gold`` of the role of its first ``role ( v , index )`` conjunct, or None."""
    words = gold.split()
    for i in range(len(words) - 5):
        if words[i] in ROLES and words[i + 1] == "(" and words[i + 3] == "," and words[i + 4] == str(index):
            return i
    return None


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--category", action="append", required=True)
    parser.add_argument("--noun", default="hippo")
    parser.add_argument("--swap", nargs="+", default=["dog", "cat", "girl"])
    parser.add_argument("--rows", type=int, default=200)
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    import hf_recogs.models  # noqa: F401 - registers structure_transformer with the Auto classes
    from hf_recogs.scoring import score_rows
    from hf_recogs.train.data import SourceLayout
    from hf_recogs.train.decode import decode
    from hf_recogs.train.hardware import cpu_has_native_bf16

    torch.set_num_threads(1)
    results = json.loads((args.checkpoint / "results.json").read_text(encoding="utf-8"))
    if results.get("dataset") != "recogs_pos":
        raise SystemExit(f"{args.checkpoint} is a {results.get('dataset')} run: this probe reads ReCOGS_pos forms "
                         "(role ( verb , argument ) with word indices)")
    rows = read_predictions(args.checkpoint)
    require_checkpoint(args.checkpoint)
    model = AutoModelForSeq2SeqLM.from_pretrained(args.checkpoint).eval()
    tokenizer = AutoTokenizer.from_pretrained(args.checkpoint)
    encode = SourceLayout.for_model(model, tokenizer).batch if results.get("input_structure") else None
    bf16 = results["mixed_precision"] == "bf16" and cpu_has_native_bf16()
    hyper = results["hyperparameters"]
    max_length = hyper["generation_max_length"]
    cap = ((hyper["decode_cap_per_source_word"], hyper.get("decode_cap_margin", 32))
           if hyper.get("decode_cap_per_source_word") else None)
    role_ids = tokenizer.convert_tokens_to_ids(list(ROLES))
    report: dict = {}
    for category in args.category:
        in_category = [r for r in rows if r["category"] == category and args.noun in r["input"].split()]
        if not in_category:
            raise SystemExit(f"no gen row of category {category!r} holds {args.noun!r}: check both names")
        wrong = [r for r in in_category if not r["sem"]][:args.rows]
        right = [r for r in in_category if r["sem"]][:args.rows // 2]
        print(f"{category}: {len(wrong)} wrong and {len(right)} right rows with {args.noun!r}", flush=True)
        for label, group in (("wrong", wrong), ("right", right)):
            for noun in (args.noun, *args.swap):
                sources = [replaced(r["input"], args.noun, noun) for r in group]
                predicted = decode(model, tokenizer, sources, max_length, bf16=bf16, shared=False, encode=encode,
                                   length_cap=cap)
                verdicts = score_rows(list(predicted), [replaced(r["gold"], args.noun, noun) for r in group])
                sem = 100 * sum(v["sem"] for v in verdicts) / max(1, len(verdicts))
                report[f"{category} | {label} rows | {args.noun} -> {noun} | SEM"] = round(sem, 1)
                print(f"  free decoding, {label} rows, {args.noun} -> {noun}: SEM {sem:.1f}", flush=True)
        swap = args.swap[0]
        for in_source in (False, True):
            for in_output in (False, True):
                gold_wins = counted = 0
                for r in wrong:
                    step = role_step(r["gold"], r["input"].split().index(args.noun))
                    if step is None:
                        continue
                    source = replaced(r["input"], args.noun, swap) if in_source else r["input"]
                    target = replaced(r["gold"], args.noun, swap) if in_output else r["gold"]
                    enc = encode([source]) if encode else tokenizer([source], return_tensors="pt")
                    labels = tokenizer([target], return_tensors="pt")["input_ids"]
                    # our word-level tokenizers give one id per word and no <s>: word i is label i
                    gold_role = labels[0, step].item()
                    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                        logits = model(**enc, labels=labels).logits[0, step]
                    best = max(role_ids, key=lambda i: logits[i].item())
                    gold_wins += int(best == gold_role)
                    counted += 1
                where = f"source {swap if in_source else args.noun}, output prefix {swap if in_output else args.noun}"
                report[f"{category} | teacher forcing | {where}"] = [gold_wins, counted]
                print(f"  teacher forcing, {where}: the gold role first in {gold_wins} of {counted} wrong rows",
                      flush=True)
    return report


if __name__ == "__main__":
    main()
