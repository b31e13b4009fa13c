"""Training and evaluation of from-scratch seq2seq baselines: ``accelerate launch train.py configs/<name>.yaml``.

Arguments are two dataclasses read by ``transformers.HfArgumentParser``: :class:`ExperimentArguments` (data,
model, metric, seeds) and ``Seq2SeqTrainingArguments`` (optimisation, batch sizes, checkpoints, Hub). A run
reads a YAML file whose top-level keys are fields of either dataclass, then applies command-line overrides,
either ``--learning_rate 3e-4`` (argparse style) or ``learning_rate=3e-4`` (value parsed as YAML, so
``seeds=[1,2]`` works). Unknown keys, malformed values and broken YAML stop with a one-line ``ConfigError``.

For each seed in ``seeds`` the run trains a ``Seq2SeqTrainer`` in ``<output_dir>/seed_<seed>/`` and then
decodes greedily (``predict_with_generate``) every split named in ``eval_splits``; it writes the model,
tokenizer and config, ``predictions_<split>.jsonl``, ``results.json``, ``per_category.png`` and the model card
``README.md``. With several seeds it also writes ``aggregate.json`` / ``aggregate.md`` / ``aggregate.png``
(mean and bootstrapped 95 % CI per category and per lexical/structural group) in ``<output_dir>``.

Command lines (tested):

    accelerate launch train.py configs/smoke.yaml                     # one process; CPU or one GPU
    python train.py configs/smoke.yaml                                 # the same without accelerate
    accelerate launch train.py configs/recogs_pos_transformer.yaml seeds=[42] learning_rate=3e-4
    accelerate launch --multi_gpu --num_processes 2 train.py configs/smoke.yaml   # DDP; on CPU too (gloo)
    torchrun --nproc_per_node 2 train.py configs/smoke.yaml                       # the same DDP run
    accelerate launch train.py configs/smoke.yaml resume_from_checkpoint=true     # continue a killed run

On CPU, ``accelerate launch`` exports ``OMP_NUM_THREADS=1``; :func:`configure_cpu_threads` gives torch the idle
physical cores again (``cpu_threads: N`` to choose). ``accelerate launch --cpu --num_processes 2`` does not start
two processes (accelerate 1.15 needs MPI for MULTI_CPU); ``--multi_gpu`` goes through torch.distributed.run and
works on a CPU-only machine because ``use_cpu`` is set automatically there (accelerate then picks gloo).
Seeds whose ``seed_<n>/results.json`` exists are skipped (``overwrite_output_dir: true`` retrains them).
With ``push_to_hub: true`` each seed folder is uploaded by :func:`hf_recogs.hub.push` to ``hub_model_id``
(several seeds: ``<hub_model_id>-seed<n>``).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import logging
import os
import random
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger("hf_recogs.training")

SPLITS = ("train", "validation", "test", "gen")
EVAL_SPLITS = ("validation", "test", "gen")
METRICS = ("auto", "sem", "exact")
DATA_ORDERS = ("reshuffle", "fixed", "grouped")
# Config families whose outputs are logical forms (SEM is meaningful); everything else is scored by exact match.
SEM_FAMILIES = ("cogs", "recogs", "slog")


class ConfigError(ValueError):
    """A problem with the YAML file or the command line; the message is one line and names the fix."""


@dataclass
class ExperimentArguments:
    """What to train on, which model, how to score. Optimisation settings are ``Seq2SeqTrainingArguments``."""

    dataset: str | None = field(
        default=None, metadata={"help": "hf_recogs config name, e.g. recogs_pos, cogs, scan_length (list_configs())"}
    )
    dataset_params: str | None = field(
        default=None,
        metadata={"help": "parameters of the dataset config as a mapping (YAML) or JSON string, e.g. {seed: 42}"},
    )
    data_files: str | None = field(
        default=None,
        metadata={
            "help": "instead of `dataset`: a mapping split -> JSON-lines file with input/output/category fields "
            "(YAML mapping or JSON string); relative paths are relative to the YAML file"
        },
    )
    arch: str = field(default="transformer", metadata={"help": "transformer | lstm | relative_transformer"})
    model_overrides: str | None = field(
        default=None,
        metadata={"help": "keyword overrides for hf_recogs.models.build_model (mapping or JSON), e.g. {d_model: 64}"},
    )
    max_positions: int = field(default=512, metadata={"help": "maximum source/target length in tokens"})
    metric: str = field(
        default="auto",
        metadata={"help": "sem | exact | auto (sem for COGS/ReCOGS/SLOG logical forms, exact otherwise)"},
    )
    seeds: list[int] = field(
        default_factory=list,
        metadata={"help": "seeds to train, one subfolder seed_<n> each (default: [seed])"},
    )
    eval_splits: list[str] = field(
        default_factory=lambda: list(EVAL_SPLITS),
        metadata={"help": "splits decoded and scored after training (those the dataset lacks are skipped)"},
    )
    tokenizer_splits: list[str] = field(
        default_factory=lambda: list(SPLITS),
        metadata={
            "help": "splits whose words form the vocabulary (the ReCOGS reference uses all splits; "
            "[train] maps unseen words to <unk>)"
        },
    )
    tokenizer_min_frequency: int = field(default=1, metadata={"help": "minimum count of a word in the vocabulary"})
    max_train_samples: int | None = field(
        default=None, metadata={"help": "use a fixed random subset (seed 0) of this many training rows"}
    )
    max_eval_samples: int | None = field(
        default=None, metadata={"help": "score a fixed random subset (seed 0) of this many rows per eval split"}
    )
    data_order: str = field(
        default="reshuffle",
        metadata={
            "help": "reshuffle: new order every epoch (Trainer default); fixed: shuffle once per seed and read "
            "in that order every epoch (ReCOGS reference); grouped: batches of similar source length, reshuffled "
            "every epoch (less padding: 3-4x the training throughput on CPU, bench/train_bench.py)"
        },
    )
    decay_all_parameters: bool = field(
        default=False,
        metadata={"help": "apply weight_decay to biases and LayerNorm too (ReCOGS reference; Trainer exempts them)"},
    )
    cpu_threads: int | None = field(
        default=None,
        metadata={
            "help": "torch threads per process on CPU; default: physical cores / local processes "
            "(undoes the OMP_NUM_THREADS=1 that accelerate launch exports)"
        },
    )
    hub_endpoint: str | None = field(
        default=None, metadata={"help": "Hub address for push_to_hub (default: HF_ENDPOINT or huggingface.co)"}
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={"help": "retrain seeds whose seed_<n>/results.json exists (default: skip them and reuse results)"},
    )


# ---------------------------------------------------------------------------------------------------------
# Argument parsing


_MAPPING_FIELDS = ("dataset_params", "data_files", "model_overrides")


def _make_parser():
    from transformers import HfArgumentParser, Seq2SeqTrainingArguments

    parser = HfArgumentParser(
        (ExperimentArguments, Seq2SeqTrainingArguments),
        prog="train.py",
        allow_abbrev=False,
        description="Train and evaluate a seq2seq baseline: train.py CONFIG.yaml [--key value | key=value ...]",
    )

    def error(message: str):  # argparse would print the whole usage and exit; we want one line
        raise ConfigError(message)

    parser.error = error
    return parser


def _dests(parser) -> dict[str, Any]:
    return {a.dest: a for a in parser._actions if a.dest != "help"}


def _suggest(key: str, known) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _to_argv(values: dict[str, Any]) -> list[str]:
    argv: list[str] = []
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            argv += [f"--{key}", "true" if value else "false"]
        elif isinstance(value, (list, tuple)):
            if not value:
                raise ConfigError(f"{key}: an empty list is not allowed; leave the key out to use the default")
            argv += [f"--{key}", *(json.dumps(v) if isinstance(v, (dict, list)) else str(v) for v in value)]
        elif isinstance(value, dict):
            argv += [f"--{key}", json.dumps(value)]
        else:
            argv += [f"--{key}", str(value)]
    return argv


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} not found; pass a YAML file such as configs/smoke.yaml")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}:{where}: invalid YAML ({problem}); fix the syntax there") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the YAML file must be a mapping of option: value, not {type(data).__name__}")
    return data


def parse_args(argv: Sequence[str] | None = None):
    """Parse ``[CONFIG.yaml] [--key value | key=value ...]`` into ``(ExperimentArguments, Seq2SeqTrainingArguments)``.

    Raises :class:`ConfigError` with a one-line message for any problem.
    """
    import yaml

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _make_parser()
    if any(a in ("-h", "--help") for a in argv):
        parser.print_help()
        raise SystemExit(0)
    known = _dests(parser)

    config_path: Path | None = None
    if argv and argv[0].endswith((".yaml", ".yml")) and not argv[0].startswith("-"):
        config_path = Path(argv.pop(0))
    values: dict[str, Any] = {}
    if config_path is not None:
        values = _read_yaml(config_path)
        for key in values:
            if key not in known:
                raise ConfigError(
                    f"{config_path}: unknown option {key!r}{_suggest(key, known)}; "
                    "see `python train.py --help` for the valid options"
                )
    # key=value overrides (value parsed as YAML); --key value pairs go to argparse unchanged.
    passthrough: list[str] = []
    for item in argv:
        if "=" in item and not item.startswith("-"):
            key, _, raw = item.partition("=")
            key = key.strip()
            if key not in known:
                raise ConfigError(
                    f"unknown option {key!r} on the command line{_suggest(key, known)}; "
                    "see `python train.py --help`"
                )
            try:
                values[key] = yaml.safe_load(raw) if raw.strip() else None
            except yaml.YAMLError:
                values[key] = raw
        elif item.endswith((".yaml", ".yml")) and not item.startswith("-") and not passthrough:
            raise ConfigError(f"the config file must come first and only once: {item!r}")
        else:
            passthrough.append(item)
    # Relative data_files are relative to the YAML file.
    if config_path is not None and isinstance(values.get("data_files"), dict):
        values["data_files"] = {
            split: str(p if Path(p).is_absolute() or not (config_path.parent / p).exists() else config_path.parent / p)
            for split, p in values["data_files"].items()
        }
    if "use_cpu" not in values and "--use_cpu" not in passthrough and not _cuda_available():
        # CPU-only machine: use_cpu makes accelerate's state MULTI_CPU (gloo) under a multi-process launcher;
        # without it each process would silently train alone on all the data.
        values["use_cpu"] = True
    if "output_dir" not in values and config_path is not None:
        values["output_dir"] = str(Path("outputs") / config_path.stem)

    for key, value in values.items():
        if isinstance(value, (list, tuple)) and known[key].nargs not in ("+", "*"):
            hint = " (a mapping such as {key: value})" if key in _MAPPING_FIELDS else ""
            raise ConfigError(f"{key} takes a single value{hint}, not the list {value!r}")
    full = _to_argv(values) + passthrough
    try:
        exp, targs, remaining = parser.parse_args_into_dataclasses(
            args=full, return_remaining_strings=True, look_for_args_file=False
        )
    except ConfigError as exc:
        raise ConfigError(f"invalid value: {exc}; check the YAML file and the overrides") from None
    except (ValueError, TypeError) as exc:  # raised by TrainingArguments.__post_init__
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"invalid training arguments: {first}") from None
    if remaining:
        flags = [r for r in remaining if r.startswith("-")] or remaining
        key = flags[0].lstrip("-").split("=")[0]
        raise ConfigError(
            f"unknown option {flags[0]!r}{_suggest(key, known)}; see `python train.py --help` for the valid options"
        )
    _check_experiment(exp)
    exp.config_path = str(config_path) if config_path is not None else None  # for the model card
    return exp, targs


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _json_field(exp: ExperimentArguments, name: str) -> dict[str, Any]:
    raw = getattr(exp, name)
    if raw is None or isinstance(raw, dict):
        return dict(raw or {})
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        import yaml

        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = None
    if not isinstance(value, dict):
        raise ConfigError(f"{name} must be a mapping such as {{key: value}}, got {raw!r}")
    return value


def _check_experiment(exp: ExperimentArguments) -> None:
    from .models import ARCHITECTURES

    if exp.arch not in ARCHITECTURES:
        raise ConfigError(f"arch={exp.arch!r} is not one of {', '.join(ARCHITECTURES)}")
    if exp.metric not in METRICS:
        raise ConfigError(f"metric={exp.metric!r} is not one of {', '.join(METRICS)}")
    if exp.data_order not in DATA_ORDERS:
        raise ConfigError(f"data_order={exp.data_order!r} is not one of {', '.join(DATA_ORDERS)}")
    for name, allowed in (("eval_splits", EVAL_SPLITS), ("tokenizer_splits", SPLITS)):
        bad = [s for s in getattr(exp, name) if s not in allowed]
        if bad:
            raise ConfigError(f"{name}: {', '.join(map(repr, bad))} not among {', '.join(allowed)}")
    for name in ("dataset_params", "data_files", "model_overrides"):
        setattr(exp, name, _json_field(exp, name))
    if (exp.dataset is None) == (not exp.data_files):
        raise ConfigError("give exactly one of `dataset` (an hf_recogs config name) or `data_files`")
    if exp.data_files:
        bad = [s for s in exp.data_files if s not in SPLITS]
        if bad:
            raise ConfigError(f"data_files: split names {bad} are not among {', '.join(SPLITS)}")
        if "train" not in exp.data_files:
            raise ConfigError("data_files needs a 'train' file")
        for split, path in exp.data_files.items():
            if not Path(path).is_file():
                raise ConfigError(f"data_files: {split} file {path!r} not found")
    else:
        from .registry import get_config

        try:
            spec = get_config(exp.dataset)
        except ValueError as exc:
            from .registry import all_configs

            close = difflib.get_close_matches(exp.dataset, list(all_configs()), n=1, cutoff=0.6)
            if close:
                raise ConfigError(f"unknown hf_recogs config {exp.dataset!r}; did you mean {close[0]!r}?") from None
            raise ConfigError(str(exc)) from None
        try:
            spec.resolve_params(exp.dataset_params)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    for name in ("max_train_samples", "max_eval_samples", "cpu_threads"):
        value = getattr(exp, name)
        if value is not None and value < 1:
            raise ConfigError(f"{name} must be a positive integer or null, got {value}")
    if exp.max_positions < 8:
        raise ConfigError(f"max_positions must be at least 8, got {exp.max_positions}")


# ---------------------------------------------------------------------------------------------------------
# CPU threads


def physical_cores() -> int:
    try:
        import psutil

        cores = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    except Exception:  # pragma: no cover - psutil comes with accelerate
        cores = os.cpu_count() or 1
    try:
        cores = min(cores, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        pass
    return max(1, cores)


def configure_cpu_threads(requested: int | None = None) -> int | None:
    """Set torch's intra-op threads on CPU-only runs; returns the number set (None when left alone).

    ``accelerate launch`` without ``--cpu --num_processes 1`` (or a config file) exports ``OMP_NUM_THREADS=1``,
    which halves CPU training speed (HF_STACK §5); torchrun does the same. Unless ``requested`` says otherwise,
    a CPU run uses physical cores / processes on this machine, reduced to the cores not already busy (1-minute
    load average) since oversubscribed OpenMP threads are much slower than fewer threads. GPU runs are left alone.
    """
    import torch

    if torch.cuda.is_available() and requested is None:
        return None
    local = int(os.environ.get("LOCAL_WORLD_SIZE") or os.environ.get("WORLD_SIZE") or 1)
    threads = requested or max(1, physical_cores() // max(1, local))
    if requested is None and threads > 1:
        # On cores already busy with other work, extra OpenMP threads spin and wait for each other: measured
        # 3-10x slower with 2 threads than with 1 on 2 cores at load average 4-5. Use only the idle cores.
        try:
            idle = physical_cores() - os.getloadavg()[0]
        except OSError:  # pragma: no cover
            idle = threads
        threads = max(1, min(threads, int(idle + 0.5)))
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


# ---------------------------------------------------------------------------------------------------------
# Data


def resolve_metric(exp: ExperimentArguments) -> str:
    if exp.metric != "auto":
        return exp.metric
    if exp.dataset is None:
        return "sem"
    from .registry import get_config

    family = get_config(exp.dataset).family.lower()
    return "sem" if any(family.startswith(f) for f in SEM_FAMILIES) else "exact"


def load_raw_data(exp: ExperimentArguments):
    """The dataset as a ``DatasetDict`` with columns input/output/category (others dropped)."""
    import datasets

    if exp.data_files:
        dd = datasets.DatasetDict()
        for split, path in exp.data_files.items():
            rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
            for i, row in enumerate(rows):
                if not isinstance(row, dict) or "input" not in row or "output" not in row:
                    raise ConfigError(f"{path}: line {i + 1} needs 'input' and 'output' fields")
                row.setdefault("category", split)
            dd[split] = datasets.Dataset.from_list(
                [{"input": r["input"], "output": r["output"], "category": str(r["category"])} for r in rows]
            )
        return dd
    from . import load_dataset

    dd = load_dataset(exp.dataset, **exp.dataset_params)
    keep = ("input", "output", "category")
    return datasets.DatasetDict(
        {s: d.remove_columns([c for c in d.column_names if c not in keep]) for s, d in dd.items()}
    )


def _subset(ds, n: int | None):
    if n is None or n >= len(ds):
        return ds
    picked = sorted(random.Random(0).sample(range(len(ds)), n))
    return ds.select(picked)


def tokenize_dataset(ds, tokenizer, max_positions: int):
    def encode(batch):
        enc = tokenizer(batch["input"], truncation=True, max_length=max_positions)
        enc["labels"] = tokenizer(batch["output"], truncation=True, max_length=max_positions)["input_ids"]
        return enc

    return ds.map(encode, batched=True, remove_columns=ds.column_names, keep_in_memory=True, desc=None)


# ---------------------------------------------------------------------------------------------------------
# Trainer


def _trainer_class(decay_all: bool):
    from transformers import Seq2SeqTrainer

    if not decay_all:
        return Seq2SeqTrainer

    class DecayAllTrainer(Seq2SeqTrainer):
        def get_decay_parameter_names(self, model):
            return [name for name, p in model.named_parameters() if p.requires_grad]

    return DecayAllTrainer


def decode(tokenizer, ids) -> list[str]:
    import numpy as np

    ids = np.asarray(ids)
    ids = np.where(ids < 0, tokenizer.pad_token_id, ids)
    texts = tokenizer.batch_decode(ids.tolist(), skip_special_tokens=True, clean_up_tokenization_spaces=False)
    return [" ".join(t.split()) for t in texts]


def score_split(raw, predictions: list[str], metric: str) -> list[dict[str, Any]]:
    """One record per row: input, gold, prediction, category, sem (None for metric=exact), exact."""
    from .logical_forms import exact_match, sem_match

    records = []
    for row, pred in zip(raw, predictions, strict=True):
        gold = row["output"]
        exact = bool(exact_match(pred, gold))
        sem = bool(sem_match(pred, gold)) if metric == "sem" else None
        records.append(
            {"input": row["input"], "gold": gold, "prediction": pred, "category": row["category"],
             "sem": sem, "exact": exact}
        )
    return records


def _last_checkpoint(folder: Path) -> str | None:
    """The newest *complete* ``checkpoint-<step>`` in ``folder``.

    The Trainer writes ``trainer_state.json`` last; a run killed while saving leaves a checkpoint folder without
    it (or with a truncated one), which ``transformers.trainer_utils.get_last_checkpoint`` would still pick.
    """
    if not folder.is_dir():
        return None
    steps = sorted(
        (int(p.name.split("-", 1)[1]), p) for p in folder.glob("checkpoint-*")
        if p.is_dir() and p.name.split("-", 1)[1].isdigit()
    )
    for _, path in reversed(steps):
        try:
            json.loads((path / "trainer_state.json").read_text())
        except (OSError, ValueError):
            logger.warning("skipping incomplete checkpoint %s (killed while saving?)", path)
            continue
        return str(path)
    return None


def _resume_target(value: str | None, seed_dir: Path, n_seeds: int) -> str | None:
    if value is None or str(value).lower() in ("", "false", "no", "none"):
        return None
    if str(value).lower() in ("true", "yes", "last", "auto"):
        return _last_checkpoint(seed_dir)  # None (start fresh) when this seed has no checkpoint yet
    if n_seeds > 1:
        raise ConfigError("resume_from_checkpoint with several seeds must be `true` (each seed resumes its last)")
    if not Path(value).is_dir():
        raise ConfigError(f"resume_from_checkpoint: {value!r} is not a checkpoint folder")
    return value


def run_seed(exp, targs, seed: int, seed_dir: Path, raw, tokenizer, metric: str, n_seeds: int, command: str):
    """Train one seed in ``seed_dir`` and evaluate it; returns the results dict (on every process)."""
    import torch
    from transformers import DataCollatorForSeq2Seq, set_seed

    from . import reporting
    from .models import build_model

    args = copy.deepcopy(targs)
    args.seed = seed
    args.output_dir = str(seed_dir)
    args.predict_with_generate = True
    args.push_to_hub = False  # we push ourselves with our own model card (hub.push)
    if args.ddp_find_unused_parameters is None:
        args.ddp_find_unused_parameters = False
    if args.data_seed is None:
        args.data_seed = seed
    if args.use_cpu or not torch.cuda.is_available():
        args.dataloader_pin_memory = False
    if exp.data_order == "fixed":
        args.train_sampling_strategy = "sequential"
    elif exp.data_order == "grouped":
        args.train_sampling_strategy = "group_by_length"

    set_seed(seed)
    model = build_model(exp.arch, tokenizer, max_positions=exp.max_positions, **exp.model_overrides)
    train_raw = _subset(raw["train"], exp.max_train_samples)
    if exp.data_order == "fixed":
        train_raw = train_raw.shuffle(seed=seed, keep_in_memory=True)
    train_ds = tokenize_dataset(train_raw, tokenizer, exp.max_positions)
    collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100, padding=True)
    trainer = _trainer_class(exp.decay_all_parameters)(
        model=model, args=args, train_dataset=train_ds, data_collator=collator, processing_class=tokenizer
    )
    resume = _resume_target(targs.resume_from_checkpoint, seed_dir, n_seeds)
    if resume:
        logger.info("seed %d: resuming from %s", seed, resume)
    train_out = trainer.train(resume_from_checkpoint=resume)
    hp = hyperparameters(exp, args)
    # transformers 5 length-groups the *evaluation* order too when training is length-grouped, which would
    # pair predictions with the wrong rows: decode every split in dataset order.
    trainer.args.train_sampling_strategy = "sequential"
    trainer.save_model(str(seed_dir))
    if trainer.is_world_process_zero():
        model.generation_config.save_pretrained(str(seed_dir))

    gen_kwargs = {"max_length": args.generation_max_length or exp.max_positions,
                  "num_beams": args.generation_num_beams or 1}
    splits: dict[str, Any] = {}
    for split in exp.eval_splits:
        if split not in raw:
            logger.warning("seed %d: dataset has no %s split; skipped", seed, split)
            continue
        split_raw = _subset(raw[split], exp.max_eval_samples)
        out = trainer.predict(tokenize_dataset(split_raw, tokenizer, exp.max_positions), metric_key_prefix=split,
                              **gen_kwargs)
        if not trainer.is_world_process_zero():
            continue
        predictions = decode(tokenizer, out.predictions)
        if args.world_size > 1 and len(predictions) > len(split_raw):
            # accelerate shards the sequential eval loader batch by batch (process i gets batches i, i+N, …)
            # and pads the last round with rows from the start; the gather is therefore in dataset order with
            # the padding at the end. (gather_for_metrics does not drop it here on MULTI_CPU; tested against
            # single-process decoding in tests/test_training.py::test_ddp_two_processes_cpu.)
            predictions = predictions[: len(split_raw)]
        if len(predictions) != len(split_raw):
            raise RuntimeError(f"{split}: {len(predictions)} predictions for {len(split_raw)} rows")
        records = score_split(split_raw, predictions, metric)
        reporting.write_predictions(seed_dir / f"predictions_{split}.jsonl", records)
        splits[split] = reporting.summarize(records, metric)
        splits[split]["loss"] = out.metrics.get(f"{split}_loss")
        splits[split]["runtime_s"] = out.metrics.get(f"{split}_runtime")

    results = {
        "dataset": exp.dataset or "data_files",
        "dataset_params": exp.dataset_params,
        "arch": exp.arch,
        "metric": metric,
        "seed": seed,
        "num_parameters": sum(p.numel() for p in model.parameters()),
        "vocab_size": len(tokenizer),
        "train": {
            "loss": train_out.training_loss,
            "global_step": train_out.global_step,
            "runtime_s": train_out.metrics.get("train_runtime"),
            "epochs": args.num_train_epochs,
            "train_rows": len(train_raw),
            "resumed_from": resume,
            "loss_history": [
                {"step": h["step"], "loss": h["loss"]} for h in trainer.state.log_history if "loss" in h
            ],
        },
        "hyperparameters": hp,
        "splits": splits,
        "command": command,
    }
    if trainer.is_world_process_zero():
        reporting.write_json(seed_dir / "results.json", results)
        reporting.plot_per_category(results, seed_dir / "per_category.png")
        reporting.write_model_card(seed_dir, results)
    trainer.accelerator.wait_for_everyone()
    del trainer, model
    return results


def hyperparameters(exp, args) -> dict[str, Any]:
    keep = ("learning_rate", "per_device_train_batch_size", "per_device_eval_batch_size",
            "gradient_accumulation_steps", "num_train_epochs", "max_steps", "warmup_steps", "weight_decay",
            "max_grad_norm", "lr_scheduler_type", "optim", "adam_beta1", "adam_beta2", "adam_epsilon",
            "label_smoothing_factor", "generation_max_length", "generation_num_beams", "data_seed",
            "train_sampling_strategy")
    hp = {k: getattr(args, k, None) for k in keep}
    hp = {k: (v.value if hasattr(v, "value") else v) for k, v in hp.items()}
    hp["world_size"] = args.world_size
    for f in dataclasses.fields(ExperimentArguments):
        if f.name not in ("hub_endpoint",):
            hp[f.name] = getattr(exp, f.name)
    return json.loads(json.dumps(hp, default=str))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``train.py``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = "accelerate launch train.py " + " ".join(shlex.quote(a) for a in argv)
    try:
        exp, targs = parse_args(argv)
    except ConfigError as exc:
        print(f"train.py: error: {exc}", file=sys.stderr)
        return 2
    threads = configure_cpu_threads(exp.cpu_threads)
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    if threads:
        logger.info("CPU run: %d torch threads per process", threads)
    try:
        return run(exp, targs, command)
    except ConfigError as exc:
        print(f"train.py: error: {exc}", file=sys.stderr)
        return 2


def run(exp: ExperimentArguments, targs, command: str = "") -> int:
    from . import reporting
    from .tokenization import build_tokenizer

    import datasets

    datasets.disable_progress_bars()
    out_dir = Path(targs.output_dir)
    seeds = list(exp.seeds) or [targs.seed]
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"seeds must be distinct, got {seeds}")
    metric = resolve_metric(exp)
    with targs.main_process_first(local=False, desc="load dataset"):
        raw = load_raw_data(exp)
    missing = [s for s in exp.eval_splits if s not in raw]
    if missing:
        logger.warning("dataset has no %s split(s); they are not evaluated", ", ".join(missing))
    vocab_splits = [s for s in exp.tokenizer_splits if s in raw]
    tokenizer = build_tokenizer(
        (x for s in vocab_splits for x in raw[s]["input"]),
        (y for s in vocab_splits for y in raw[s]["output"]),
        min_frequency=exp.tokenizer_min_frequency,
    )
    all_results = []
    for seed in seeds:
        seed_dir = out_dir / f"seed_{seed}"
        done = seed_dir / "results.json"
        if done.is_file() and not exp.overwrite_output_dir:
            logger.info("seed %d: %s exists, skipping (set overwrite_output_dir: true to retrain)", seed, done)
            all_results.append(json.loads(done.read_text()))
            continue
        all_results.append(run_seed(exp, targs, seed, seed_dir, raw, tokenizer, metric, len(seeds), command))

    is_main = int(os.environ.get("RANK", "0")) == 0
    if is_main:
        if len(all_results) > 1:
            reporting.write_aggregate(out_dir, all_results)
        if targs.push_to_hub:
            from .hub import HubPushError, push

            repo = targs.hub_model_id or out_dir.name
            for res in all_results:
                target = repo if len(all_results) == 1 else f"{repo}-seed{res['seed']}"
                try:
                    url = push(out_dir / f"seed_{res['seed']}", target, token=targs.hub_token,
                               endpoint=exp.hub_endpoint, private=bool(targs.hub_private_repo))
                    logger.info("pushed seed %s to %s", res["seed"], url)
                except HubPushError as exc:
                    print(f"train.py: error: {exc}", file=sys.stderr)
                    return 1
        for res in all_results:
            logger.info("seed %s: %s", res["seed"], reporting.one_line(res))
    return 0
