"""Copy a finished training run into the repository's ``results/`` folder: small, reproducible, loadable.

    hf-recogs publish outputs/recogs_pos_transformer_fast results/recogs_pos_transformer_fast \\
        [--checkpoint median | <seed>] [--replace]

(``python -m hf_recogs.publish.results_folder`` takes the same arguments.)

For every finished seed (``seed_<n>/results.json`` present) it copies ``results.json``, the plots and
``curves.jsonl``, writes each ``predictions_<split>.jsonl`` as ``predictions_<split>.jsonl.gz`` (gzip without a
timestamp, so the same predictions give the same bytes), and renders the model card afresh from
``results.json`` (so that a run trained by an older version of the package gets the current card).
``--checkpoint`` also copies one seed's model, generation config and tokenizer (and a custom architecture's
code files), so that ``AutoModelForSeq2SeqLM.from_pretrained("results/<run>/seed_<n>")`` works (after
``import hf_recogs.models``, or with ``trust_remote_code=True``): ``median`` picks the seed whose primary
score on the headline split (``scoring.headline_split``: gen, else test, else validation) is the median of all
the seeds, those published to ``dest`` before included (the lower one of the middle two for an even count). A
published run keeps one checkpoint: the model files of its other seeds are removed from ``dest`` (their results
and predictions stay), and a median seed published earlier keeps the checkpoint it already has there.
Checkpoints above ``MAX_CHECKPOINT_MB`` are refused (push those with ``hf-recogs push``). With two or more
finished seeds the aggregate (mean ± std over seeds) is computed here from their ``results.json``, so seeds trained by separate
commands count, and so do seeds published to ``dest`` earlier from another run folder; seeds that trained
different set-ups are refused before anything is written. A seed already in ``dest`` is republished only if
it is the same training (same set-up, same ``train`` record, same weights where both have them); another
training of that seed is refused unless ``--replace`` is given, which replaces its folder as a whole (no stale
model or predictions of the earlier copy stay). A republished seed keeps only the predictions files of the new
copy. Unfinished seeds are skipped with a message; nothing in the run folder is modified, and nothing is read,
copied or removed outside the seed folders (``auto_map`` names plain modules only).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import sys
from pathlib import Path

from ..report.aggregate import write_aggregate
from ..report.card import write_model_card
from ..scoring import headline_split
from ..train.arguments import MACHINE_LOCAL_OPTIONS

MAX_CHECKPOINT_MB = 20
RUN_FILES = ("results.json", "per_category.png", "curves.png", "curves.jsonl")
CHECKPOINT_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
                    "tokenizer_config.json", "special_tokens_map.json")
AGGREGATE_FILES = ("aggregate.json", "aggregate.md", "aggregate.png")


class PublishError(ValueError):
    """A run that cannot be published as asked; the message is one line and names the fix."""


# What the cards, the aggregate and the choice of the median seed read from every results.json.
RESULTS_KEYS = ("dataset", "dataset_params", "arch", "metric", "seed", "hyperparameters", "splits")


def finished_seeds(run_dir: Path, fix: str = "train it again or remove the folder") -> dict[int, dict]:
    """seed -> results of every finished seed folder of ``run_dir``; a results.json that is not complete
    raises PublishError (one line, ending with ``fix``) before anything is written."""
    seeds = {}
    for folder in sorted(run_dir.glob("seed_*")):
        path = folder / "results.json"
        if path.is_file() and folder.name.removeprefix("seed_").isdigit():
            seed = int(folder.name.removeprefix("seed_"))
            seeds[seed] = _read_results(path, seed, fix)
    return seeds


def _read_results(path: Path, seed: int, fix: str) -> dict:
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        reason = "cut short or not JSON" if isinstance(exc, (UnicodeDecodeError, json.JSONDecodeError)) else exc.strerror
        raise PublishError(f"{path}: unreadable ({reason}); {fix}") from None
    missing = [k for k in RESULTS_KEYS if k not in results] if isinstance(results, dict) else ["an object"]
    if missing:
        raise PublishError(f"{path}: not a training run's results.json (no {', '.join(missing)}); {fix}")
    splits = results["splits"]
    if not isinstance(splits, dict) or not isinstance(results["hyperparameters"], dict) or any(
            not isinstance(v, dict) or v.get("primary") not in v for v in splits.values()):
        raise PublishError(f"{path}: its splits or hyperparameters are not a training run's; {fix}")
    if results["seed"] is None and results.get("evaluated_model"):
        # an evaluation started before the scored model's training wrote its results.json cannot know its seed
        raise PublishError(f"{path}: an evaluation of {results['evaluated_model']} made when that folder held no "
                           "results.json (seed unknown); evaluate it again once its training has finished")
    if results["seed"] != seed:
        raise PublishError(f"{path}: says seed {results['seed']!r} in the folder of seed {seed}; {fix}")
    return results


def _headline_score(results: dict) -> float:
    """The seed's primary score on its headline split, the one the median seed is chosen by."""
    split = headline_split(results["splits"])
    if split is None:
        raise PublishError(f"seed {results['seed']} has no scored split; evaluate it first")
    summary = results["splits"][split]
    return summary[summary["primary"]] or 0.0


def median_seed(seeds: dict[int, dict]) -> int:
    """The seed whose headline score is the median (the lower of the middle two for an even count)."""
    ranked = sorted(seeds, key=lambda s: (_headline_score(seeds[s]), s))
    return ranked[(len(ranked) - 1) // 2]


def _gzip_copy(src: Path, dest: Path) -> None:
    with open(src, "rb") as f_in, open(dest, "wb") as raw, gzip.GzipFile(
        filename="", mode="wb", fileobj=raw, mtime=0
    ) as f_out:
        shutil.copyfileobj(f_in, f_out)


def publish(run_dir: Path, dest: Path, checkpoint: str | None = None, replace: bool = False) -> list[Path]:
    """Copy the finished seeds of ``run_dir`` to ``dest``; returns the files written. Everything that can be
    refused is checked before the first file is written."""
    run_dir, dest = Path(run_dir), Path(dest)
    if checkpoint is not None and checkpoint != "median" and not checkpoint.isdigit():
        raise PublishError(f"--checkpoint {checkpoint}: give 'median' or a seed number")
    if dest.exists() and not dest.is_dir():
        raise PublishError(f"{dest} is a file; give a folder to publish into, e.g. results/<run name>")
    if dest.resolve() == run_dir.resolve() or run_dir.resolve() in dest.resolve().parents:
        raise PublishError(f"{dest} is the run folder {run_dir} or inside it; publish into results/<run name>")
    seeds = finished_seeds(run_dir)
    if not seeds:
        raise PublishError(f"{run_dir}: no finished seed (no seed_<n>/results.json); let the run finish first")
    # Seeds published to dest before (their run folders may be gone) count in the aggregate with the new ones,
    # and in the choice of the median seed.
    published = finished_seeds(dest, "repair it from its run folder, or remove that seed folder") \
        if dest.is_dir() else {}
    replaced = _republished(run_dir, dest, seeds, published, replace)
    every_seed = {**{s: r for s, r in published.items() if s not in replaced}, **seeds}
    if len(every_seed) > 1:
        check_same_setup(every_seed)  # before anything is written
    chosen = _checked_checkpoint(checkpoint, run_dir, dest, seeds, every_seed)
    code_files = {seed: model_code_files(run_dir / f"seed_{seed}" if seed in seeds else dest / f"seed_{seed}")
                  for seed in (every_seed if chosen is not None else ())}  # read only when models are copied

    # every path checked before the first write: nothing outside the seed folders is read or removed
    plan = {}
    for seed in seeds:
        src, out = run_dir / f"seed_{seed}", _inside(dest, f"seed_{seed}")
        names = [n for n in RUN_FILES if _inside(src, n).is_file()]
        if seed == chosen:
            names += [n for n in CHECKPOINT_FILES + code_files[seed] if _inside(src, n).is_file()]
        predictions = [_inside(src, p.name).name for p in sorted(src.glob("predictions_*.jsonl"))]
        kept = {p + ".gz" for p in predictions}
        stale = [] if seed in replaced else [_inside(out, p.name) for p in sorted(out.glob("predictions_*.jsonl.gz"))
                                             if p.name not in kept]
        for name in [*names, *(p + ".gz" for p in predictions), "README.md"]:  # nor written through a link
            _inside(out, name)
        plan[seed] = (src, out, names, predictions, stale)
    removals = [_inside(dest / f"seed_{seed}", name) for seed in every_seed.keys() - {chosen}
                for name in CHECKPOINT_FILES + code_files[seed]] if chosen is not None else []

    written: list[Path] = []
    for seed in sorted(replaced):
        shutil.rmtree(dest / f"seed_{seed}")
        print(f"replaced {dest / f'seed_{seed}'} (it held another training of seed {seed})")
    for seed, (src, out, names, predictions, stale) in plan.items():
        out.mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copyfile(src / name, out / name)
            written.append(out / name)
        for name in predictions:
            target = out / (name + ".gz")
            _gzip_copy(src / name, target)
            written.append(target)
        for path in stale:  # a split the new copy of the seed no longer has
            path.unlink()
            print(f"removed {path} (not in seed {seed} of {run_dir})")
        written.append(write_model_card(out, seeds[seed]))
    for seed in every_seed.keys() - seeds.keys():  # published earlier: its card follows this version too
        written.append(write_model_card(dest / f"seed_{seed}", every_seed[seed]))
    for stale in removals:  # one checkpoint per published run: the other seeds' models go
        if stale.is_file():
            stale.unlink()
            print(f"removed {stale} (seed {chosen} holds this run's checkpoint now)")
    if len(every_seed) > 1:
        # Recomputed from the finished seeds: seeds trained by separate commands into one output_dir leave no
        # aggregate (or one over fewer seeds) in the run folder.
        write_aggregate(dest, [every_seed[s] for s in sorted(every_seed)])
        written += [dest / name for name in AGGREGATE_FILES if (dest / name).is_file()]
    return written


def _inside(folder: Path, name: str) -> Path:
    """``folder / name``, refused (PublishError) if it resolves outside ``folder``: a link or a path from a
    config never makes publishing read, copy or remove another file."""
    path = folder / name
    if folder.resolve() not in path.resolve().parents:
        raise PublishError(f"{path} leads outside {folder}; replace the link with the file itself")
    return path


def _same_training(published: dict, incoming: dict, published_dir: Path, incoming_dir: Path) -> list[str]:
    """What tells a seed's published copy from the run folder's (empty when they are one training): its
    set-up, its ``train`` record, and its weights where both sides have them."""
    differ = check_same_setup({0: published, 1: incoming}, raise_error=False)
    if published.get("train") != incoming.get("train"):
        differ.append("train")
    weights = [_inside(d, "model.safetensors") for d in (published_dir, incoming_dir)]
    if all(w.is_file() for w in weights) and weights[0].read_bytes() != weights[1].read_bytes():
        differ.append("model.safetensors")
    return differ


def _republished(run_dir: Path, dest: Path, seeds: dict[int, dict], published: dict[int, dict],
                 replace: bool) -> set[int]:
    """The seeds of ``run_dir`` already in ``dest`` from another training: refused, or (``replace``) to be
    replaced as a whole."""
    replaced = set()
    for seed in sorted(seeds.keys() & published.keys()):
        folder = dest / f"seed_{seed}"
        differ = _same_training(published[seed], seeds[seed], folder, run_dir / f"seed_{seed}")
        if not differ:
            continue
        if not replace:
            raise PublishError(f"seed {seed} is already published in {dest} from another training "
                               f"({', '.join(differ)} differ); pass --replace to replace it as a whole, or publish "
                               "to another folder")
        if folder.is_symlink():
            raise PublishError(f"{folder} is a link; replace it with a folder before --replace")
        replaced.add(seed)
    return replaced


def _checked_checkpoint(checkpoint: str | None, run_dir: Path, dest: Path, seeds: dict[int, dict],
                        every_seed: dict[int, dict]) -> int | None:
    """The seed whose model ``--checkpoint`` asks for, once its weights are known to exist and to be small enough
    for the repository (checked before anything is written)."""
    if checkpoint is None:
        return None
    chosen = median_seed(every_seed) if checkpoint == "median" else int(checkpoint)
    if chosen in seeds:
        weights = run_dir / f"seed_{chosen}" / "model.safetensors"
    elif chosen in every_seed:  # published earlier: its checkpoint must already be in dest
        weights = dest / f"seed_{chosen}" / "model.safetensors"
    else:
        raise PublishError(f"--checkpoint {checkpoint}: seed {chosen} is not a finished seed of {run_dir}")
    if not weights.is_file():
        raise PublishError(f"{weights} is missing (seed {chosen} is the one asked for); publish it from its run "
                           "folder, or pass --checkpoint <seed> for another seed")
    size_mb = weights.stat().st_size / 2**20
    if size_mb > MAX_CHECKPOINT_MB:
        raise PublishError(f"{weights} is {size_mb:.1f} MB, above {MAX_CHECKPOINT_MB} MB; publish it to the Hub "
                           "with hf-recogs push instead")
    return chosen


# Hyper-parameters that may differ between the seeds of one published run: how each ran, which seed, which splits
# it scored, and bf16, what the machine gave (cpu_bf16, the setting, must agree; the aggregate states each seed's
# precision).
PER_PROCESS_KEYS = MACHINE_LOCAL_OPTIONS | {"seeds", "data_seed", "eval_splits", "bf16"}
# The decoding length cap: where it changed no verdict (no gold form longer than its row's cap in any split) seeds
# decoded with and without it score alike, and it is compared as "harmless"; otherwise by its values.
DECODE_CAP_KEYS = frozenset({"decode_cap_per_source_word", "decode_cap_margin"})


def _option_defaults() -> dict:
    """Our training options' defaults, as results.json records them. A run trained before an option existed did
    not record it, and trained as its default does."""
    import dataclasses

    from ..train.arguments import ExperimentArguments

    defaults = {}
    for f in dataclasses.fields(ExperimentArguments):
        if f.default is not dataclasses.MISSING:
            defaults[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            defaults[f.name] = f.default_factory()
    return json.loads(json.dumps(defaults, default=str))


# An auto_map entry we copy the code of: module.Class, a plain module name in the seed folder itself (not a
# path, not another repository's "repo--module.Class").
_AUTO_MAP_REF = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\.[A-Za-z_][A-Za-z0-9_]*")


def model_code_files(folder: Path) -> tuple[str, ...]:
    """The code files a custom architecture's ``config.json`` names in its ``auto_map`` (the LSTM's), so that
    the published folder also loads with ``trust_remote_code=True`` where hf_recogs is not installed. Only
    plain module names count: a path (``/some/dir/victim.Cfg``) or another repository's module is never read,
    copied or removed."""
    config = _inside(folder, "config.json")
    if not config.is_file():
        return ()
    try:
        auto_map = json.loads(config.read_text(encoding="utf-8")).get("auto_map") or {}
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        raise PublishError(f"{config}: not a model config (JSON object); train the seed again") from None
    refs = auto_map.values() if isinstance(auto_map, dict) else ()
    modules = set()
    for ref in refs:
        for one in ref if isinstance(ref, list) else [ref]:  # a tokenizer's entry is [slow, fast]
            match = _AUTO_MAP_REF.fullmatch(one) if isinstance(one, str) else None
            if match:
                modules.add(match.group(1) + ".py")
    return tuple(sorted(modules))


def _evaluation_only(results: dict) -> bool:
    return not results.get("train") and bool(results.get("evaluated_model"))


def _evaluated_model_config(results: dict) -> dict | None:
    """The config.json of the model an evaluation-only seed scored, without the fields that name where and with
    which library it was saved; None for a training run or where that folder is not on this machine."""
    if not _evaluation_only(results):
        return None
    try:
        config = json.loads((Path(results["evaluated_model"]) / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(config, dict):
        return None
    return {k: v for k, v in config.items() if k not in {"_name_or_path", "transformers_version"}}


def check_same_setup(seeds: dict[int, dict], raise_error: bool = True) -> list[str]:
    """Refuse to average seeds that trained different set-ups (another config written to the same folder);
    with ``raise_error=False``, the options that differ instead (empty when none)."""
    defaults = _option_defaults()

    def setup(results: dict) -> dict:
        recorded = {**defaults, **results["hyperparameters"]}
        hp = {k: v for k, v in recorded.items() if k not in PER_PROCESS_KEYS | DECODE_CAP_KEYS}
        cut_a_verdict = any(s.get("decode_cap", {}).get("gold_over_cap") for s in results["splits"].values())
        hp["decode_cap"] = [recorded.get(k) for k in sorted(DECODE_CAP_KEYS)] if cut_a_verdict else "harmless"
        if _evaluation_only(results):
            # Each seed of an evaluation scores its own seed's model, so the paths differ by design; the
            # models' own configs are compared instead (evaluated_model_config).
            hp.pop("model_name_or_path", None)
        return {"dataset": results["dataset"], "dataset_params": results["dataset_params"],
                "arch": results["arch"], "metric": results["metric"], **hp}

    first_seed, *others = sorted(seeds)
    reference = setup(seeds[first_seed])
    for seed in others:
        other = setup(seeds[seed])
        differ = sorted(k for k in reference.keys() | other.keys() if reference.get(k) != other.get(k))
        first_model, model = (_evaluated_model_config(seeds[s]) for s in (first_seed, seed))
        if first_model is not None and model is not None and first_model != model:
            differ.append("evaluated_model_config")
        if differ and not raise_error:
            return differ
        if differ:
            raise PublishError(f"seeds {first_seed} and {seed} trained different set-ups ({', '.join(differ)}); "
                               "publish them to separate folders")
    return []


def main(argv=None, prog: str = "python -m hf_recogs.publish.results_folder") -> int:
    """``hf-recogs publish RUN_DIR DEST [--checkpoint median|SEED] [--replace]``; errors are one line, exit
    status 2."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path, help="a train.py output_dir (holds seed_<n>/ folders)")
    ap.add_argument("dest", type=Path, help="where to write, e.g. results/<run name>")
    ap.add_argument("--checkpoint", default=None, help="'median' or a seed: also copy that seed's model")
    ap.add_argument("--replace", action="store_true",
                    help="replace, as a whole, a seed published in DEST from another training")
    args = ap.parse_args(argv)
    try:
        written = publish(args.run_dir, args.dest, args.checkpoint, args.replace)
    except PublishError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    skipped = sorted(p.name for p in args.run_dir.glob("seed_*")
                     if p.name.removeprefix("seed_").isdigit() and not (p / "results.json").is_file())
    if skipped:
        print(f"skipped unfinished: {', '.join(skipped)}")
    print(f"wrote {len(written)} files under {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
