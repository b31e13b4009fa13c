"""Regenerate the model negatives of a classification config from scratch (Kim, Ravikumar, Ainslie & Ontañón
2021's leak-free scheme): folds, generators, beams, selection, a shipment pinned by checksum.

    python dataset_scripts/make_model_negatives.py build recogs_pos_cls           # folds; prints the train commands
    python dataset_scripts/make_model_negatives.py build recogs_pos_cls --run     # trains, decodes, selects, ships
    python dataset_scripts/make_model_negatives.py verify ~/runs/model_negatives/recogs_pos_cls/shipment
    python dataset_scripts/make_model_negatives.py report ~/runs/model_negatives/recogs_pos_cls/shipment
    python dataset_scripts/make_model_negatives.py install ~/runs/model_negatives/recogs_pos_cls/shipment

Configs: ``recogs_pos_cls``, ``cfq_mcd1_cls``, ``sygns_systematicity_one_cls``. Everything goes under a work folder
(``--work``, default ``~/runs/model_negatives/<config>``); each stage skips itself when its outputs exist and check
out, so a killed run is rerun with the same command.

1. ``folds``: the source train split less the classification module's fixed ``train_holdout`` cut, shuffled (seed 0)
   into halves ``train_A`` / ``train_B``; ReCOGS_pos's ``gen`` into ``gen_A`` / ``gen_B``; CFQ's ``validation``
   (dev) and ``test`` (its compositional splits) each a fold. ``folds/<fold>.jsonl`` (train.py ``data_files``
   rows with their source split and row index) and ``folds/manifest.json`` (which rows each fold holds, which
   folds each training fold's generators decode).
2. ``train_generators``: per training fold and architecture (default: the fast Transformer recipe and the
   attention LSTM) one ``train.py`` run on that fold alone, fixed seed; printed, run with ``--run``.
3. ``decode_candidates``: each generator decodes only rows it did not train on (the other half; the train halves'
   models also ``train_holdout`` and the splits no other fold covers; gen halves crosswise; CFQ dev ↔ test) with
   beam search, 4 beams, all 4 returned with their ``sequences_scores``: ``candidates/<generator>.jsonl``.
4. ``select_negatives``: per row, the generators that decoded it in a fixed rotation, each one's next-best beam;
   a candidate that does not parse, or is equivalent to the positive or to a negative already chosen, is
   skipped; at most 3, no back-fill: ``selection/<split>.jsonl``.
5. ``write_shipment``: ``shipment/<split>.jsonl.gz`` (sorted keys, gzip without name or time: the same negatives
   give the same bytes) and ``shipment/manifest.json`` (SHA-256 per file, generators' recipes, overrides and
   seeds, the folds' row ids, the commit). ``verify_shipment`` re-checks every shipped row.
6. ``install``: a verified shipment copied into ``hf_recogs/model_negatives/<config>/``, where
   ``load_dataset(<config>, negatives="model")`` reads it once its manifest's SHA-256 is pinned in
   ``hf_recogs.benchmarks.classification.MODEL_NEGATIVES`` (the command prints the line).

Generators see the decode rows' words in their vocabulary (``data_files`` validation = the rows they decode, as
the recipes build the vocabulary from every split) but never train on them; train.py's greedy score on 1,000 of
them is each generator's ``results.json``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import random
import re
import shlex
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from hf_recogs.benchmarks import cfq, classification, cogs, sygns

FORMAT = 1  # of the shipment; bump when its layout changes
FOLD_SEED = 0
BEAMS = 4
PER_ROW = classification.MAX_PER_ROW
GENERATOR_SEED = 42  # the recipes' first seed
ARCHS = {  # architecture name -> recipe (train.py YAML); data and metric are overridden per config
    "transformer_fast": "configs/recogs_pos_transformer_fast.yaml",
    "lstm": "configs/recogs_pos_lstm.yaml",
}
STAGES = ("folds", "train", "decode", "select", "ship")
SOURCE_PREFIX = "model:"
_SOURCE = re.compile(r"^model:([^:]+):(\d+)$")


class NegativesError(RuntimeError):
    """A stage cannot go on; the message is one line and names the fix."""


# ---------------------------------------------------------------------------------------------------------
# What differs between configs


@dataclass(frozen=True)
class Spec:
    """How one classification config's negatives are made: its source rows, which splits are cut in halves or
    decode each other, the generators' metric, and the validity and equivalence filters of its outputs."""

    name: str
    module: object
    source: str
    metric: str  # train.py's metric for the generators (data_files runs default to sem)
    halves: tuple[str, ...]  # source splits cut into seeded halves that decode each other (train always)
    crosswise: tuple[tuple[str, str], ...]  # whole splits that decode each other
    kind: str  # "lf" | "sparql" | "fol"
    key: Callable
    same: Callable

    def base(self):
        return next(c for c in self.module.CONFIGS if c.name == self.source)


SPECS = {
    "recogs_pos_cls": Spec("recogs_pos_cls", cogs, "recogs_pos", "sem", ("train", "gen"), (), "lf",
                           classification.sem_key, classification.sem_same),
    "cfq_mcd1_cls": Spec("cfq_mcd1_cls", cfq, "cfq_mcd1", "exact", ("train",), (("validation", "test"),),
                         "sparql", classification.sparql_key, classification.equal),
    "sygns_systematicity_one_cls": Spec("sygns_systematicity_one_cls", sygns, "sygns_systematicity_one", "exact",
                                        ("train",), (), "fol", classification.string_key, classification.equal),
}


def get_spec(config: str) -> Spec:
    if config not in SPECS:
        raise NegativesError(f"config {config!r} has no model negatives; use one of {', '.join(SPECS)}")
    return SPECS[config]


def parses(kind: str, text: str) -> bool:
    """Whether a candidate is well formed in the config's output language (the paper's validity filter)."""
    if not isinstance(text, str) or not text.strip():
        return False
    if kind == "lf":
        from hf_recogs.logical_forms import parse

        return bool(parse(text, "recogs"))
    if kind == "sparql":
        from hf_recogs.structure import StructureError, cfq_query_structure

        try:
            cfq_query_structure(text)
        except StructureError:
            return False
        return True
    if kind == "fol":
        from hf_recogs.sygns_eval import Malformed, parse_fol

        try:
            parse_fol(text)
        except Malformed:
            return False
        return True
    raise ValueError(f"unknown output kind {kind!r}")


def row_id(split: str, row: int) -> str:
    """A row's identity: its source split and index there (train and train_holdout share the source train)."""
    return f"{split}:{row}"


def split_id(rid: str) -> tuple[str, int]:
    split, _, index = rid.rpartition(":")
    return split, int(index)


# ---------------------------------------------------------------------------------------------------------
# Small file helpers


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dump_line(obj) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(path: Path, records: Iterable[dict]) -> None:
    """Written to a temporary name then renamed: a killed stage never leaves a file that looks finished."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.writelines(dump_line(record) + "\n" for record in records)
    tmp.replace(path)


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


_NUMBER_LIST = re.compile(r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]")


def write_json(path: Path, obj) -> None:
    """Indented, sorted keys, lists of numbers (the folds' row ids) on one line: readable and not huge."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    text = json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False)
    text = _NUMBER_LIST.sub(lambda m: "[" + re.sub(r"\s+", "", m.group(1)) + "]", text)
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(path)


def read_json(path: Path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------------------
# Stage 1: folds


def load_rows(spec: Spec) -> dict[str, list[dict]]:
    """The source config's rows (default parameters), as the classification config reads them."""
    base = spec.base()
    return {split: [{k: r[k] for k in ("input", "output", "category")} for r in base.rows(split)]
            for split in base.splits}


def halves(indices: Sequence[int]) -> tuple[list[int], list[int]]:
    """A seeded shuffle (FOLD_SEED) cut in two; each half sorted. The first half has the extra row when odd."""
    order = list(indices)
    random.Random(FOLD_SEED).shuffle(order)
    cut = (len(order) + 1) // 2
    return sorted(order[:cut]), sorted(order[cut:])


def fold_plan(spec: Spec, sizes: dict[str, int], rows_train: Sequence | None = None) -> tuple[dict, dict]:
    """(folds, decodes): each fold's source split, classification split and row indices; which folds the
    generators of each training fold decode. The train cut is ``classification.split_rows``'s."""
    train = list(rows_train) if rows_train is not None else [None] * sizes["train"]
    folds: dict[str, dict] = {}
    decodes: dict[str, list[str]] = {}
    train_a, train_b = halves(classification.split_rows(train, "train"))
    folds["train_A"] = {"split": "train", "cls_split": "train", "rows": train_a}
    folds["train_B"] = {"split": "train", "cls_split": "train", "rows": train_b}
    folds["train_holdout"] = {"split": "train", "cls_split": "train_holdout",
                              "rows": classification.split_rows(train, "train_holdout")}
    covered = {"train"}
    for split in spec.halves:
        if split == "train" or split not in sizes:
            continue
        a, b = halves(range(sizes[split]))
        folds[f"{split}_A"] = {"split": split, "cls_split": split, "rows": a}
        folds[f"{split}_B"] = {"split": split, "cls_split": split, "rows": b}
        decodes[f"{split}_A"], decodes[f"{split}_B"] = [f"{split}_B"], [f"{split}_A"]
        covered.add(split)
    for first, second in spec.crosswise:
        for split in (first, second):
            folds[split] = {"split": split, "cls_split": split, "rows": list(range(sizes.get(split, 0)))}
        decodes[first], decodes[second] = [second], [first]
        covered |= {first, second}
    rest = [s for s in sizes if s not in covered]  # decoded by the train halves' generators only
    for split in rest:
        folds[split] = {"split": split, "cls_split": split, "rows": list(range(sizes[split]))}
    decodes["train_A"] = ["train_B", "train_holdout", *rest]
    decodes["train_B"] = ["train_A", "train_holdout", *rest]
    decodes = {fold: [f for f in targets if folds[f]["rows"]] for fold, targets in decodes.items()
               if folds[fold]["rows"]}  # an empty fold trains nothing and is decoded by nobody
    return folds, dict(sorted(decodes.items(), key=lambda kv: list(folds).index(kv[0])))


def folds(config: str, work: Path, rows: dict[str, list[dict]] | None = None) -> dict:
    """Stage 1: write ``folds/<fold>.jsonl`` for every fold and ``folds/<fold>.decode.jsonl`` (the rows a training
    fold's generators decode) and ``folds/manifest.json``; skipped when the manifest's files check out.
    ``rows``: the source rows by split (default: read from the source config)."""
    spec = get_spec(config)
    out = work / "folds"
    manifest_path = out / "manifest.json"
    if manifest_path.is_file():
        manifest = read_json(manifest_path)
        if manifest.get("config") == config and not _fold_problems(out, manifest):
            print(f"folds: {manifest_path} checks out; skipped")
            return manifest
        print(f"folds: {manifest_path} does not check out; rewriting the folds")
    rows = rows if rows is not None else load_rows(spec)
    plan, decodes = fold_plan(spec, {s: len(r) for s, r in rows.items()}, rows.get("train", []))
    files = {}
    for name, fold in plan.items():
        path = out / f"{name}.jsonl"
        write_jsonl(path, _fold_records(rows, fold))
        files[name] = {"file": path.name, "sha256": sha256_file(path)}
    for name, targets in decodes.items():
        path = out / f"{name}.decode.jsonl"
        write_jsonl(path, (r for t in targets for r in _fold_records(rows, plan[t])))
        files[f"{name}.decode"] = {"file": path.name, "sha256": sha256_file(path)}
    manifest = {"config": config, "source_config": spec.source, "fold_seed": FOLD_SEED,
                "holdout": "hf_recogs.benchmarks.classification.split_rows (len // 20 of a seed-0 shuffle)",
                "folds": plan, "decodes": decodes, "training_folds": list(decodes), "files": files}
    write_json(manifest_path, manifest)
    sizes = ", ".join(f"{n} {len(f['rows'])}" for n, f in plan.items())
    print(f"folds: wrote {len(plan)} folds to {out} ({sizes})")
    return manifest


def _fold_records(rows: dict[str, list[dict]], fold: dict) -> Iterable[dict]:
    for i in fold["rows"]:
        row = rows[fold["split"]][i]
        yield {"input": row["input"], "output": row["output"], "category": row["category"],
               "split": fold["split"], "row": i, "cls_split": fold["cls_split"]}


def _fold_problems(folder: Path, manifest: dict) -> list[str]:
    problems = []
    for entry in manifest.get("files", {}).values():
        path = folder / entry["file"]
        if not path.is_file():
            problems.append(f"{path} is missing")
        elif sha256_file(path) != entry["sha256"]:
            problems.append(f"{path} changed since the folds were written")
    return problems


def fold_ids(fold: dict) -> set[str]:
    return {row_id(fold["split"], i) for i in fold["rows"]}


# ---------------------------------------------------------------------------------------------------------
# Stage 2: generators


def generators(manifest: dict, archs: dict[str, str]) -> dict[str, dict]:
    """Every generator, in the fixed rotation order (training folds in order, architectures alternating within
    each): name ``<arch>-<fold>`` -> arch, recipe, trained-on fold, decoded folds."""
    out = {}
    for fold in manifest["training_folds"]:  # JSON objects are written with sorted keys: the order is this list
        for arch, recipe in archs.items():
            out[f"{arch}-{fold}"] = {"arch": arch, "recipe": recipe, "trained_on": fold,
                                     "decodes": list(manifest["decodes"][fold])}
    return out


def train_command(spec: Spec, work: Path, name: str, gen: dict, seed: int, overrides: Sequence[str],
                  launcher: Sequence[str]) -> list[str]:
    """The train.py command of one generator: its recipe, its training fold as ``train``, the rows it decodes as
    ``validation`` (vocabulary, learning curves and a 1,000-row greedy score; never trained on)."""
    folds_dir = (work / "folds").resolve()
    data_files = {"train": str(folds_dir / f"{gen['trained_on']}.jsonl"),
                  "validation": str(folds_dir / f"{gen['trained_on']}.decode.jsonl")}
    return [*launcher, str(ROOT / "train.py"), str(ROOT / gen["recipe"]), "dataset=null",
            f"data_files={json.dumps(data_files)}", f"metric={spec.metric}",
            f"output_dir={(work / 'generators' / name).resolve()}", f"seeds=[{seed}]", "eval_splits=[validation]",
            "max_eval_samples=1000", "curve_splits=[validation]", "resume_from_checkpoint=true", *overrides]


def generator_dir(work: Path, name: str, seed: int) -> Path:
    return work / "generators" / name / f"seed_{seed}"


def train_generators(config: str, work: Path, archs: dict[str, str] | None = None, seed: int = GENERATOR_SEED,
                     overrides: dict[str, list[str]] | None = None, run: bool = False,
                     launcher: Sequence[str] = ("accelerate", "launch")) -> dict:
    """Stage 2: write ``generators/plan.json`` and print each generator's train.py command; with ``run`` train
    those not trained yet, one at a time. Returns the plan."""
    spec = get_spec(config)
    manifest = read_json(work / "folds" / "manifest.json")
    archs = dict(archs or ARCHS)
    overrides = overrides or {}
    gens = generators(manifest, archs)
    plan = {"seed": seed, "rotation": list(gens), "generators": {}}
    for name, gen in gens.items():
        extra = list(overrides.get(gen["arch"], []))
        command = train_command(spec, work, name, gen, seed, extra, launcher)
        recipe = ROOT / gen["recipe"]
        plan["generators"][name] = {**gen, "seed": seed, "overrides": extra, "command": shlex.join(command),
                                    "recipe_sha256": sha256_file(recipe) if recipe.is_file() else None}
    write_json(work / "generators" / "plan.json", plan)
    for name in plan["rotation"]:
        gen = plan["generators"][name]
        done = (generator_dir(work, name, seed) / "results.json").is_file()
        print(f"# {name}: {'trained' if done else 'to train'}\n{gen['command']}")
        if run and not done:
            result = subprocess.run(shlex.split(gen["command"]), cwd=ROOT, check=False)
            if result.returncode != 0:
                raise NegativesError(f"training {name} failed (exit {result.returncode}); fix it and rerun the "
                                     "same command (it resumes from the last checkpoint)")
    return plan


def untrained(work: Path, plan: dict) -> list[str]:
    return [n for n in plan["rotation"] if not (generator_dir(work, n, plan["seed"]) / "results.json").is_file()]


# ---------------------------------------------------------------------------------------------------------
# Stage 3: beams


def load_generator(folder: Path, device: str | None = None):
    """A trained generator and its tokenizer (train.py's seed folder)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    import hf_recogs.models  # noqa: F401  (registers the LSTM with the Auto classes)

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForSeq2SeqLM.from_pretrained(str(folder)).to(device)
    return model.eval(), tokenizer


def beam_length_limit(model, max_length: int) -> int:
    """``max_length``, or less where the generator has learned positions (Bart: ``max_position_embeddings``): a
    beam that ran past them would index outside the position table. Training cut its targets at the same limit,
    so no output it learnt is longer."""
    positions = getattr(model.config, "max_position_embeddings", None)
    return min(max_length, positions) if positions else max_length


def generate_beams(model, tokenizer, sources: Sequence[str], num_beams: int = BEAMS, max_length: int = 512,
                   bf16: bool = False) -> list[list[tuple[str, float]]]:
    """For each source, its ``num_beams`` finished beams, best first: (text, ``sequences_scores``, the
    length-normalised log-probability beam search ranks by). Beams stop at ``beam_length_limit``."""
    import contextlib

    import torch

    from hf_recogs.train.decode import decode_ids

    device = next(model.parameters()).device
    max_length = beam_length_limit(model, max_length)
    enc = tokenizer(list(sources), return_tensors="pt", padding=True, truncation=True,
                    max_length=getattr(model.config, "max_position_embeddings", None) or 512).to(device)
    enc.pop("token_type_ids", None)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    with torch.no_grad(), autocast:
        out = model.generate(**enc, max_length=max_length, num_beams=num_beams, num_return_sequences=num_beams,
                             output_scores=True, return_dict_in_generate=True, do_sample=False, length_penalty=1.0)
    texts = decode_ids(tokenizer, out.sequences.cpu())
    scores = out.sequences_scores.float().cpu().tolist()
    beams = []
    for i in range(len(sources)):
        group = list(zip(texts[i * num_beams:(i + 1) * num_beams], scores[i * num_beams:(i + 1) * num_beams],
                         strict=True))
        beams.append(sorted(group, key=lambda b: -b[1]))  # stable: ties keep beam search's order
    return beams


def default_max_length(work: Path) -> int:
    """Output tokens a beam may reach: 1.5 × the longest output of any fold, plus </s> (bounds runaway beams;
    no right answer is longer)."""
    longest = 0
    for path in (work / "folds").glob("*.jsonl"):
        if not path.name.endswith(".decode.jsonl"):
            longest = max([longest, *(len(r["output"].split()) for r in read_jsonl(path))])
    return int(longest * 1.5) + 1


def decode_candidates(work: Path, names: Sequence[str] | None = None, batch_size: int = 32,
                      num_beams: int = BEAMS, max_length: int | None = None, device: str | None = None,
                      bf16: str = "auto") -> None:
    """Stage 3: each generator beam-decodes the rows of its decode folds into ``candidates/<generator>.jsonl``
    (row id, generator, rank, text, score; sorted) with ``candidates/<generator>.json`` (the settings; written
    last, so it marks a finished file). Progress is kept in ``.partial`` files: a killed run continues."""
    plan = read_json(work / "generators" / "plan.json")
    manifest = read_json(work / "folds" / "manifest.json")
    max_length = max_length or default_max_length(work)
    for name in names or plan["rotation"]:
        gen = plan["generators"][name]
        out, meta_path = work / "candidates" / f"{name}.jsonl", work / "candidates" / f"{name}.json"
        rows = read_jsonl(work / "folds" / f"{gen['trained_on']}.decode.jsonl")
        if meta_path.is_file() and out.is_file() and read_json(meta_path).get("sha256") == sha256_file(out):
            print(f"decode: {name} done; skipped")
            continue
        folder = generator_dir(work, name, plan["seed"])
        if not (folder / "results.json").is_file():
            raise NegativesError(f"generator {name} is not trained ({folder}); run stage 2 (add --run)")
        model, tokenizer = load_generator(folder, device)
        use_bf16 = _decode_bf16(bf16, folder, model)
        trained = fold_ids(manifest["folds"][gen["trained_on"]])
        leaked = [r for r in rows if row_id(r["split"], r["row"]) in trained]
        if leaked:
            raise NegativesError(f"{name} would decode {len(leaked)} rows it trained on; rewrite the folds "
                                 "(delete folds/ and rerun)")
        partial = out.with_name(out.name + ".partial")
        partial.parent.mkdir(parents=True, exist_ok=True)
        done = _read_partial(partial, num_beams)
        todo = sorted((r for r in rows if row_id(r["split"], r["row"]) not in done),
                      key=lambda r: (len(r["input"].split()), r["split"], r["row"]))
        limit = beam_length_limit(model, max_length)
        print(f"decode: {name}: {len(rows)} rows ({len(done)} done before), {num_beams} beams, max_length "
              f"{limit}, {'bf16' if use_bf16 else 'fp32'} on {next(model.parameters()).device}")
        with open(partial, "a", encoding="utf-8") as handle:
            for start in range(0, len(todo), batch_size):
                batch = todo[start:start + batch_size]
                beams = generate_beams(model, tokenizer, [r["input"] for r in batch], num_beams, max_length,
                                       use_bf16)
                handle.writelines(
                    dump_line({"row": row_id(r["split"], r["row"]), "generator": name, "rank": rank, "text": text,
                               "score": round(score, 6)}) + "\n"
                    for r, group in zip(batch, beams, strict=True) for rank, (text, score) in enumerate(group))
                handle.flush()
                print(f"decode: {name}: {len(done) + start + len(batch)}/{len(rows)}", end="\r", flush=True)
        records = sorted(read_jsonl(partial), key=lambda c: (*split_id(c["row"]), c["rank"]))
        write_jsonl(out, records)
        partial.unlink()
        write_json(meta_path, {"generator": name, "rows": len(rows), "beams": num_beams, "max_length": limit,
                               "bf16": use_bf16, "device": str(next(model.parameters()).device),
                               "batch_size": batch_size, "length_penalty": 1.0,
                               "sha256": sha256_file(out)})
        print(f"\ndecode: wrote {out}")


def _decode_bf16(setting: str, folder: Path, model) -> bool:
    """``auto``: bf16 autocast on CPU when the generator trained in bf16 (its results.json says); never on GPU."""
    if setting in ("true", "false"):
        return setting == "true"
    if next(model.parameters()).device.type != "cpu":
        return False
    return bool(read_json(folder / "results.json").get("bf16", False))


def _read_partial(path: Path, num_beams: int) -> set[str]:
    """The rows a killed decode finished (all beams written); the file is cut back to exactly those."""
    if not path.is_file():
        return set()
    kept: list[dict] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            kept.append(json.loads(line))
        except json.JSONDecodeError:
            break  # the line being written when the run died
    counts = Counter(c["row"] for c in kept)
    done = {r for r, n in counts.items() if n == num_beams}
    write_jsonl(path, (c for c in kept if c["row"] in done))
    return done


# ---------------------------------------------------------------------------------------------------------
# Stage 4: selection


def choose(positive: str, beams: Sequence[tuple[str, Sequence[tuple[int, str, float]]]], valid: Callable[[str], bool],
           key: Callable, same: Callable, per_row: int = PER_ROW) -> list[dict]:
    """The paper's rule: visit the generators (``beams``: (name, [(rank, text, score), ...] best first), in
    rotation order) round by round, each one's next-best beam; skip what does not parse or is equivalent to the
    positive or to a negative already chosen; stop at ``per_row``. No back-fill."""
    chosen: list[dict] = []
    keys = [key(positive)]
    rounds = max((len(b) for _, b in beams), default=0)
    for depth in range(rounds):
        for name, ranked in beams:
            if len(chosen) >= per_row:
                return chosen
            if depth >= len(ranked):
                continue
            rank, text, score = ranked[depth]
            if not valid(text):
                continue
            k = key(text)
            if any(same(k, other) for other in keys):
                continue
            keys.append(k)
            chosen.append({"candidate": text, "negative_source": f"{SOURCE_PREFIX}{name}:{rank}",
                           "negative_score": score})
    return chosen


def select_negatives(config: str, work: Path, per_row: int = PER_ROW) -> None:
    """Stage 4: ``selection/<split>.jsonl``, one line per source row of the classification split (rows that
    keep no negative too): source_row, category, the positive ``output`` and its ``negatives``."""
    spec = get_spec(config)
    manifest = read_json(work / "folds" / "manifest.json")
    plan = read_json(work / "generators" / "plan.json")
    order = plan["rotation"]
    decoded_by: dict[str, list[str]] = defaultdict(list)  # fold -> generators that decode it, in rotation order
    for name in order:
        for fold in plan["generators"][name]["decodes"]:
            decoded_by[fold].append(name)
    missing = [n for n in order if not (work / "candidates" / f"{n}.json").is_file()]
    if missing:
        raise NegativesError(f"no finished candidates for {', '.join(missing)}; run stage 3 (decode) first")
    out = work / "selection"
    inputs = {n: sha256_file(work / "candidates" / f"{n}.jsonl") for n in order}
    if (out / "settings.json").is_file():
        old = read_json(out / "settings.json")
        if old.get("candidates") == inputs and old.get("per_row") == per_row and all(
                (out / f"{s}.jsonl").is_file() for s in old["splits"]):
            print("select: selection/ made from these candidates; skipped")
            return
    by_split: dict[str, list[str]] = defaultdict(list)
    for fold, entry in manifest["folds"].items():
        if fold in decoded_by:
            by_split[entry["cls_split"]].append(fold)
    for cls_split, split_folds in by_split.items():
        rows: dict[str, dict] = {}
        for fold in split_folds:
            for r in read_jsonl(work / "folds" / f"{fold}.jsonl"):
                rows[row_id(r["split"], r["row"])] = {**r, "fold": fold}
        beams: dict[tuple[str, str], list] = defaultdict(list)
        for name in {g for f in split_folds for g in decoded_by[f]}:
            allowed = set().union(*(fold_ids(manifest["folds"][f]) for f in plan["generators"][name]["decodes"]))
            for c in read_jsonl(work / "candidates" / f"{name}.jsonl"):
                if c["row"] not in allowed:
                    raise NegativesError(f"candidates/{name}.jsonl holds row {c['row']}, which {name} may not "
                                         "decode; delete that file and rerun stage 3")
                if c["row"] in rows:
                    beams[(c["row"], name)].append((c["rank"], c["text"], c["score"]))
        records = []
        for rid, r in sorted(rows.items(), key=lambda kv: split_id(kv[0])):
            ranked = [(g, sorted(beams.get((rid, g), []))) for g in decoded_by[r["fold"]]]
            negatives = choose(r["output"], ranked, lambda t: parses(spec.kind, t), spec.key, spec.same, per_row)
            records.append({"source_row": r["row"], "category": r["category"], "output": r["output"],
                            "negatives": negatives})
        write_jsonl(out / f"{cls_split}.jsonl", records)
        kept = sum(len(r["negatives"]) for r in records)
        print(f"select: {cls_split}: {len(records)} rows, {kept} negatives ({kept / max(len(records), 1):.2f} per row)")
    write_json(out / "settings.json", {"per_row": per_row, "rotation": order, "splits": sorted(by_split),
                                       "candidates": inputs})


# ---------------------------------------------------------------------------------------------------------
# Stage 5: shipment


def gzip_bytes(text: str) -> bytes:
    """Deterministic gzip: no file name, time 0, level 9."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as handle:
        handle.write(text.encode("utf-8"))
    return buffer.getvalue()


def _git(*args: str) -> str | None:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def write_shipment(config: str, work: Path, out: Path | None = None) -> Path:
    """Stage 5: ``shipment/<split>.jsonl.gz`` and ``shipment/manifest.json``; returns the folder."""
    import hf_recogs

    out = out or work / "shipment"
    manifest = read_json(work / "folds" / "manifest.json")
    plan = read_json(work / "generators" / "plan.json")
    settings = read_json(work / "selection" / "settings.json")
    made_from = {s: sha256_file(work / "selection" / f"{s}.jsonl") for s in settings["splits"]}
    if (out / "manifest.json").is_file() and read_json(out / "manifest.json").get("made_from") == made_from \
            and not verify_shipment(out):
        print(f"ship: {out} holds this selection and checks out; skipped")
        return out
    files = {}
    for split in settings["splits"]:
        records = read_jsonl(work / "selection" / f"{split}.jsonl")
        data = gzip_bytes("".join(dump_line(r) + "\n" for r in sorted(records, key=lambda r: r["source_row"])))
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{split}.jsonl.gz").write_bytes(data)
        files[f"{split}.jsonl.gz"] = {"split": split, "sha256": hashlib.sha256(data).hexdigest(), "rows": len(records),
                                      "negatives": sum(len(r["negatives"]) for r in records)}
    gens = {}
    for name, gen in plan["generators"].items():
        meta_path = work / "candidates" / f"{name}.json"
        decoding = read_json(meta_path) if meta_path.is_file() else None
        gens[name] = {**gen, "trained": trained_as(generator_dir(work, name, gen["seed"])), "decoding": decoding}
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    write_json(out / "manifest.json", {
        "format": FORMAT, "config": config, "source_config": manifest["source_config"], "files": files,
        "selection": {"per_row": settings["per_row"], "beams": BEAMS, "rotation": settings["rotation"],
                      "rule": "rotation over the generators that decoded the row, each one's next-best beam; "
                              "skip unparsable or equivalent (to the positive or a chosen negative); no back-fill"},
        "folds": manifest["folds"], "fold_seed": manifest["fold_seed"], "holdout": manifest["holdout"],
        "generators": gens, "made_from": made_from, "commit": commit, "dirty": bool(status), "hf_recogs_version": hf_recogs.__version__,
    })
    print(f"ship: wrote {len(files)} files and manifest.json to {out}")
    return out


def trained_as(seed_dir: Path) -> dict | None:
    """What a generator's training really ran, from its run record: the commit, the command (``command`` in the
    plan is the one this code would give now) and the steps."""
    path = seed_dir / "results.json"
    if not path.is_file():
        return None
    record = read_json(path)
    env = record.get("environment", {})
    return {"commit": env.get("git_commit"), "dirty": env.get("git_dirty"), "command": record.get("command"),
            "steps": record.get("train", {}).get("global_step"), "runtime_s": record.get("train", {}).get("runtime_s")}


def read_shipment(folder: Path) -> tuple[dict, dict[str, list[dict]]]:
    manifest = read_json(Path(folder) / "manifest.json")
    rows = {}
    for name, entry in manifest["files"].items():
        with gzip.open(Path(folder) / name, "rt", encoding="utf-8") as handle:
            rows[entry["split"]] = [json.loads(line) for line in handle if line.strip()]
    return manifest, rows


def verify_shipment(folder: Path) -> list[str]:
    """Every problem of a shipment (empty: it checks out): checksums; folds a generator trained on never among
    those it decodes; per row at most ``per_row`` negatives, each from a generator that decoded (and did not
    train on) the row, with a beam rank below ``beams``, in rotation order, parsing, and equivalent neither to
    the positive nor to an earlier negative."""
    folder = Path(folder)
    manifest = read_json(folder / "manifest.json")
    spec = get_spec(manifest["config"])
    problems = []
    for name, entry in manifest["files"].items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif sha256_file(path) != entry["sha256"]:
            problems.append(f"{name}: SHA-256 differs from the manifest")
    if problems:
        return problems
    folds_ = manifest["folds"]
    ids = {name: fold_ids(f) for name, f in folds_.items()}
    gens = manifest["generators"]
    rotation = manifest["selection"]["rotation"]
    per_row, beams = manifest["selection"]["per_row"], manifest["selection"]["beams"]
    decodable = {}
    for name, gen in gens.items():
        trained = ids[gen["trained_on"]]
        decodable[name] = set().union(*(ids[f] for f in gen["decodes"])) if gen["decodes"] else set()
        overlap = trained & decodable[name]
        if overlap:
            problems.append(f"generator {name} decodes {len(overlap)} rows it trained on (e.g. {min(overlap)})")
    fold_of_split = defaultdict(set)
    for name, f in folds_.items():
        fold_of_split[f["cls_split"]].add(f["split"])
    _, shipped = read_shipment(folder)
    for split, records in shipped.items():
        (source_split,) = fold_of_split[split] or {split}
        for record in records:
            rid = row_id(source_split, record["source_row"])
            where = f"{split} row {record['source_row']}"
            negatives = record["negatives"]
            if len(negatives) > per_row:
                problems.append(f"{where}: {len(negatives)} negatives, more than {per_row}")
            keys = [spec.key(record["output"])]
            visits = []
            for neg in negatives:
                match = _SOURCE.match(neg.get("negative_source", ""))
                if not match or match.group(1) not in gens:
                    problems.append(f"{where}: unknown source {neg.get('negative_source')!r}")
                    continue
                name, rank = match.group(1), int(match.group(2))
                if rid in ids[gens[name]["trained_on"]]:
                    problems.append(f"{where}: negative from {name}, which trained on this row")
                elif rid not in decodable[name]:
                    problems.append(f"{where}: negative from {name}, which does not decode this row")
                if rank >= beams:
                    problems.append(f"{where}: beam rank {rank} of {beams}")
                if not isinstance(neg.get("negative_score"), (int, float)):
                    problems.append(f"{where}: negative without a beam score")
                visits.append((rank, rotation.index(name) if name in rotation else -1))
                text = neg["candidate"]
                if not parses(spec.kind, text):
                    problems.append(f"{where}: negative does not parse: {text!r}")
                    continue
                k = spec.key(text)
                if spec.same(k, keys[0]):
                    problems.append(f"{where}: negative equivalent to the positive: {text!r}")
                elif any(spec.same(k, other) for other in keys[1:]):
                    problems.append(f"{where}: negative equivalent to an earlier negative: {text!r}")
                keys.append(k)
            if visits != sorted(set(visits)):
                problems.append(f"{where}: negatives not in rotation order")
    return problems


# ---------------------------------------------------------------------------------------------------------
# Report


def difference(kind: str, positive: str, negative: str) -> int | None:
    """How far a negative is from its positive: conjuncts changed (LFs: multisets of ``parse``'s conjuncts),
    clauses changed (SPARQL: the equivalence's clause sets), tokens changed (FOL); the larger side of the
    difference, so a substitution counts once."""
    if kind == "lf":
        from hf_recogs.logical_forms import parse

        p, n = parse(positive, "recogs"), parse(negative, "recogs")
        if not p or not n:
            return None
        a, b = Counter(map(str, p.atoms)), Counter(map(str, n.atoms))
    elif kind == "sparql":
        (pt, pc), (nt, nc) = classification.sparql_key(positive), classification.sparql_key(negative)
        a, b = Counter(pc), Counter(nc)
        if pt != nt:
            a[("header", pt)] += 1
            b[("header", nt)] += 1
    else:
        a, b = Counter(positive.split()), Counter(negative.split())
    return max(sum((a - b).values()), sum((b - a).values()))


def report(folder: Path, out=None) -> dict:
    """Print (and return) negatives per row per split and per category, where they came from, and how far
    they are from their positive."""
    out = out or sys.stdout
    manifest, shipped = read_shipment(Path(folder))
    kind = get_spec(manifest["config"]).kind
    unit = {"lf": "conjuncts", "sparql": "clauses", "fol": "tokens"}[kind]
    summary = {}
    print(f"# model negatives of {manifest['config']} (commit {manifest.get('commit')})", file=out)
    for split in sorted(shipped):
        records = shipped[split]
        per_row = Counter(len(r["negatives"]) for r in records)
        by_category: dict[str, Counter] = defaultdict(Counter)
        for r in records:
            by_category[r["category"]][len(r["negatives"])] += 1
        sources = Counter(n["negative_source"].rsplit(":", 1)[0] for r in records for n in r["negatives"])
        ranks = Counter(int(n["negative_source"].rsplit(":", 1)[1]) for r in records for n in r["negatives"])
        changed = Counter(difference(kind, r["output"], n["candidate"]) for r in records for n in r["negatives"])
        summary[split] = {"rows": len(records), "per_row": dict(per_row), "by_category": {
            c: dict(v) for c, v in by_category.items()}, "sources": dict(sources), "ranks": dict(ranks),
            "changed": dict(changed)}
        total = max(len(records), 1)
        negatives = sum(k * v for k, v in per_row.items())
        print(f"\n## {split}: {len(records)} rows, {negatives} negatives ({negatives / total:.2f} per row)", file=out)
        print("negatives per row: " + ", ".join(f"{k}: {per_row[k]} ({100 * per_row[k] / total:.1f} %)"
                                                for k in range(PER_ROW + 1)), file=out)
        print("| category | rows | " + " | ".join(f"{k}" for k in range(PER_ROW + 1)) + " | mean |", file=out)
        print("|---|---|" + "---|" * (PER_ROW + 2), file=out)
        for category, counts in sorted(by_category.items()):
            n = sum(counts.values())
            mean = sum(k * v for k, v in counts.items()) / n
            print(f"| {category} | {n} | " + " | ".join(str(counts[k]) for k in range(PER_ROW + 1))
                  + f" | {mean:.2f} |", file=out)
        print("from: " + (", ".join(f"{g} {c}" for g, c in sorted(sources.items())) or "-") + "; beam ranks: "
              + (", ".join(f"{k}: {ranks[k]}" for k in sorted(ranks)) or "-"), file=out)
        print(f"{unit} changed: " + ", ".join(f"{'unparsed' if k is None else k}: {v}"
                                              for k, v in sorted(changed.items(), key=lambda kv: (kv[0] is None,
                                                                                                   kv[0] or 0))),
              file=out)
    return summary


# ---------------------------------------------------------------------------------------------------------
# Command line


def default_work(config: str) -> Path:
    return Path.home() / "runs" / "model_negatives" / config


def build(config: str, work: Path, archs: dict[str, str], seed: int, overrides: dict[str, list[str]], run: bool,
          launcher: Sequence[str], stop_after: str, decode_options: dict) -> int:
    """Every stage whose inputs are ready, in order; stops (status 0) where generators still need training."""
    folds(config, work)
    if stop_after == "folds":
        return 0
    plan = train_generators(config, work, archs, seed, overrides, run, launcher)
    waiting = untrained(work, plan)
    if waiting or stop_after == "train":
        if waiting:
            print(f"\n{len(waiting)} generators to train: run the commands above (or add --run), then this command "
                  "again")
        return 0
    decode_candidates(work, **decode_options)
    if stop_after == "decode":
        return 0
    select_negatives(config, work)
    if stop_after == "select":
        return 0
    folder = write_shipment(config, work)
    problems = verify_shipment(folder)
    for problem in problems:
        print(f"verify: {problem}", file=sys.stderr)
    if problems:
        return 1
    report(folder)
    return 0


def _arch_option(values: list[str] | None) -> dict[str, str]:
    if not values:
        return dict(ARCHS)
    archs = {}
    for value in values:
        name, _, recipe = value.partition("=")
        if not recipe:
            if name not in ARCHS:
                raise NegativesError(f"--arch {value!r}: give NAME=RECIPE.yaml or one of {', '.join(ARCHS)}")
            recipe = ARCHS[name]
        if not re.fullmatch(r"[A-Za-z0-9_.]+", name):
            raise NegativesError(f"--arch {value!r}: name the architecture with letters, digits, _ and . only")
        archs[name] = recipe
    return archs


def _set_option(values: list[str] | None, archs: dict[str, str]) -> dict[str, list[str]]:
    overrides: dict[str, list[str]] = defaultdict(list)
    for value in values or []:
        arch, _, setting = value.partition(":")
        if arch not in archs or "=" not in setting:
            raise NegativesError(f"--set {value!r}: write ARCH:key=value with ARCH one of {', '.join(archs)}")
        overrides[arch].append(setting)
    return dict(overrides)


def install(folder: Path, package: Path | None = None) -> Path:
    """Copy a shipment that checks out into the package (replacing the config's earlier one) and say how to pin
    it; returns the package folder."""
    folder = Path(folder)
    problems = verify_shipment(folder)
    if problems:
        raise NegativesError(f"{folder} does not check out ({problems[0]}; {len(problems)} problems); rebuild it")
    manifest = read_json(folder / "manifest.json")
    target = (package or ROOT / "hf_recogs" / "model_negatives") / manifest["config"]
    target.mkdir(parents=True, exist_ok=True)
    wanted = {"manifest.json", *manifest["files"]}
    for old in target.iterdir():
        if old.name not in wanted:
            old.unlink()
    for name in sorted(wanted):
        (target / name).write_bytes((folder / name).read_bytes())
    pin = sha256_file(target / "manifest.json")
    size = sum((target / name).stat().st_size for name in wanted)
    print(f"install: {len(wanted)} files ({size / 1e6:.1f} MB) in {target}\n"
          f"install: pin it in hf_recogs/benchmarks/classification.py: MODEL_NEGATIVES[{manifest['config']!r}] = "
          f"{pin!r}")
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="run the stages (training only with --run)")
    b.add_argument("config", help=", ".join(SPECS))
    b.add_argument("--work", type=Path, help="work folder (default ~/runs/model_negatives/<config>)")
    b.add_argument("--arch", action="append", metavar="NAME[=RECIPE]",
                   help=f"generator architectures, repeatable (default: {', '.join(f'{k}={v}' for k, v in ARCHS.items())})")
    b.add_argument("--set", action="append", metavar="ARCH:key=value",
                   help="a train.py override for one architecture, e.g. lstm:num_train_epochs=30")
    b.add_argument("--seed", type=int, default=GENERATOR_SEED, help="every generator's training seed")
    b.add_argument("--run", action="store_true", help="train the generators (default: print their commands)")
    b.add_argument("--launcher", default="accelerate launch", help="what runs train.py (default: accelerate launch)")
    b.add_argument("--stop-after", choices=STAGES, default="ship")
    b.add_argument("--batch-size", type=int, default=32, help="rows per beam-search batch")
    b.add_argument("--max-length", type=int, help="output tokens per beam (default 1.5 x the longest output)")
    b.add_argument("--device", help="cuda or cpu (default: cuda when there is one)")
    b.add_argument("--bf16", choices=("auto", "true", "false"), default="auto",
                   help="bf16 autocast while decoding (auto: on CPU when the generator trained in bf16)")
    for name, text in (("verify", "check a shipment (exit 1 on any problem)"),
                       ("report", "print a shipment's distribution of negatives"),
                       ("install", "copy a shipment that checks out into hf_recogs/model_negatives/<config>/")):
        p = sub.add_parser(name, help=text)
        p.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "verify":
            problems = verify_shipment(args.folder)
            for problem in problems:
                print(problem)
            print(f"{args.folder}: {'ok' if not problems else f'{len(problems)} problems'}")
            return 1 if problems else 0
        if args.command == "report":
            report(args.folder)
            return 0
        if args.command == "install":
            install(args.folder)
            return 0
        archs = _arch_option(args.arch)
        work = args.work or default_work(args.config)
        get_spec(args.config)
        return build(args.config, work, archs, args.seed, _set_option(args.set, archs), args.run,
                     shlex.split(args.launcher), args.stop_after,
                     {"batch_size": args.batch_size, "max_length": args.max_length, "device": args.device,
                      "bf16": args.bf16})
    except (NegativesError, FileNotFoundError) as exc:
        print(f"make_model_negatives: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
