"""Training and evaluation of from-scratch seq2seq baselines: ``accelerate launch train.py configs/<name>.yaml``.

Arguments are two dataclasses read by ``transformers.HfArgumentParser``: :class:`ExperimentArguments` (data,
model, metric, seeds) and ``Seq2SeqTrainingArguments`` (optimisation, batch sizes, checkpoints, Hub). A run
reads a YAML file whose top-level keys are fields of either dataclass, then applies command-line overrides,
either ``--learning_rate 3e-4`` (argparse style) or ``learning_rate=3e-4`` (value parsed as YAML, so
``seeds=[1,2]`` works). Unknown keys, malformed values and broken YAML stop with a one-line ``ConfigError``.

For each seed in ``seeds`` the run trains a ``Seq2SeqTrainer`` (``BaselineTrainer``: source-gap checks,
learning curves at every evaluation, batches grouped by source + target length, bf16 autocast on CPUs that
have it; see docs/TRAINING.md) in ``<output_dir>/seed_<seed>/`` and then decodes greedily
(``predict_with_generate``) every split named in ``eval_splits``; it writes the model, tokenizer and config,
``predictions_<split>.jsonl``, ``results.json``, ``per_category.png``, ``curves.png`` and the model card
``README.md``. With several seeds it also writes ``aggregate.json`` / ``aggregate.md`` / ``aggregate.png``
(mean and bootstrapped 95 % CI per category and per lexical/structural group) in ``<output_dir>``.

Command lines (tested):

    accelerate launch train.py configs/smoke.yaml                     # one process; CPU or one GPU
    python train.py configs/smoke.yaml                                 # the same without accelerate
    accelerate launch train.py configs/recogs_pos_transformer.yaml seeds=[42] learning_rate=3e-4
    accelerate launch --multi_gpu --num_processes 2 train.py configs/smoke.yaml   # DDP; on CPU too (gloo)
    torchrun --nproc_per_node 2 train.py configs/smoke.yaml                       # the same DDP run
    accelerate launch train.py configs/smoke.yaml resume_from_checkpoint=true     # continue a killed run
    python train.py configs/smoke.yaml do_train=false model_name_or_path=outputs/smoke/seed_42  # evaluate only

On CPU, ``accelerate launch`` exports ``OMP_NUM_THREADS=1``; :func:`configure_cpu_threads` gives torch the idle
physical cores again (``cpu_threads: N`` to choose). ``accelerate launch --cpu --num_processes 2`` does not start
two processes (accelerate 1.15 needs MPI for MULTI_CPU); ``--multi_gpu`` goes through torch.distributed.run and
works on a CPU-only machine because ``use_cpu`` is set automatically there (accelerate then picks gloo).
Seeds whose ``seed_<n>/results.json`` exists are skipped (``overwrite_output_dir: true`` retrains them).
With ``push_to_hub: true`` each seed folder is uploaded by :func:`hf_recogs.hub.push` to ``hub_model_id``
(several seeds: ``<hub_model_id>-seed<n>``).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import difflib
import errno
import functools
import json
import logging
import os
import random
import re
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .registry import METRICS as DATASET_METRICS
from .registry import SPLITS

logger = logging.getLogger("hf_recogs.training")

EVAL_SPLITS = tuple(s for s in SPLITS if s != "train")
METRICS = ("auto", *DATASET_METRICS)  # auto: the one the dataset's catalogue entry declares
DATA_ORDERS = ("reshuffle", "fixed", "grouped")
LOSS_WEIGHTINGS = ("batch", "token")


class ConfigError(ValueError):
    """A problem with the YAML file or the command line; the message is one line and names the fix."""


@dataclass
class ExperimentArguments:
    """What to train on, which model, how to score. Optimisation settings are ``Seq2SeqTrainingArguments``."""

    dataset: str | None = field(
        default=None, metadata={"help": "hf_recogs config name, e.g. recogs_pos, cogs, scan_length (list_configs())"}
    )
    dataset_params: dict[str, Any] | str | None = field(
        default=None,
        metadata={"help": "parameters of the dataset config as a mapping (YAML) or JSON string, e.g. {seed: 42}"},
    )
    data_files: dict[str, Any] | str | None = field(
        default=None,
        metadata={
            "help": "instead of `dataset`: a mapping split -> JSON-lines file with input/output/category fields "
            "(YAML mapping or JSON string); relative paths are relative to the YAML file"
        },
    )
    arch: str = field(default="transformer", metadata={"help": "transformer | lstm | relative_transformer"})
    model_overrides: dict[str, Any] | str | None = field(
        default=None,
        metadata={"help": "keyword overrides for hf_recogs.models.build_model (mapping or JSON), e.g. {d_model: 64}"},
    )
    max_positions: int = field(default=512, metadata={"help": "maximum source/target length in tokens"})
    metric: str = field(
        default="auto",
        metadata={"help": "sem | exact | sygns | auto (sem for COGS/ReCOGS/SLOG logical forms, sygns for SyGNS: "
                  "exact match plus the SyGNS paper's levels, exact otherwise)"},
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
    loss_weighting: str = field(
        default="batch",
        metadata={
            "help": "batch: each batch's loss is the mean over its target tokens (the Trainer's; with grouped "
            "batches every example then weighs the same, whatever its length); token: every target token of the "
            "training set weighs the same (each batch's summed loss over the mean tokens of a training batch), "
            "what random batches give long examples"
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
    model_name_or_path: str | None = field(
        default=None,
        metadata={
            "help": "with do_train=false: a trained checkpoint (folder or Hub id) to decode and score; its "
            "tokenizer is used. Results go to <output_dir>/evaluation/"
        },
    )
    cpu_bf16: str = field(
        default="auto",
        metadata={
            "help": "bf16 autocast on CPU: auto (on where the CPU has native bf16, e.g. AVX-512 BF16/AMX: "
            "same losses to 2-3 decimals, 1.7-2x faster) | true | false. GPU runs use bf16/fp16 as set"
        },
    )
    curve_samples: int = field(
        default=200,
        metadata={
            "help": "rows of each curve split (fixed, stratified by category) decoded and scored at every "
            "evaluation when eval_strategy is steps/epoch: learning curves, never used to select a model"
        },
    )
    curve_splits: list[str] = field(
        default_factory=lambda: ["validation", "gen"],
        metadata={"help": "splits sampled for the learning curves (those the dataset lacks are skipped)"},
    )
    early_stopping_patience: int = field(
        default=0,
        metadata={
            "help": "stop after this many evaluations without improving metric_for_best_model on validation, and "
            "keep the best checkpoint (needs load_best_model_at_end; SyGNS's protocol: 3). 0: off"
        },
    )
    source_check: bool = field(
        default=True,
        metadata={
            "help": "log the shuffled-source loss gap on a fixed validation sample at steps 50, 100, 200, ... "
            "1600 and at every evaluation, and warn when the model has learnt its outputs but ignores its source"
        },
    )

    def __post_init__(self):
        """Checks that need no other argument; a problem raises :class:`ConfigError` (one line)."""
        from .models import ARCHITECTURES

        if self.arch not in ARCHITECTURES:
            raise ConfigError(f"arch={self.arch!r} is not one of {', '.join(ARCHITECTURES)}")
        if self.metric not in METRICS:
            raise ConfigError(f"metric={self.metric!r} is not one of {', '.join(METRICS)}")
        if self.cpu_bf16 not in ("auto", "true", "false"):
            raise ConfigError(f"cpu_bf16={self.cpu_bf16!r} is not one of auto, true, false")
        bad = [sp for sp in self.curve_splits if sp not in SPLITS]
        if bad:
            raise ConfigError(f"curve_splits: {', '.join(map(repr, bad))} not among {', '.join(SPLITS)}")
        if self.curve_samples < 1:
            raise ConfigError(f"curve_samples must be a positive integer, got {self.curve_samples}")
        if self.early_stopping_patience < 0:
            raise ConfigError("early_stopping_patience must be 0 (off) or positive, "
                              f"got {self.early_stopping_patience}")
        if self.data_order not in DATA_ORDERS:
            raise ConfigError(f"data_order={self.data_order!r} is not one of {', '.join(DATA_ORDERS)}")
        if self.loss_weighting not in LOSS_WEIGHTINGS:
            raise ConfigError(f"loss_weighting={self.loss_weighting!r} is not one of {', '.join(LOSS_WEIGHTINGS)}")
        for name, allowed in (("eval_splits", EVAL_SPLITS), ("tokenizer_splits", SPLITS)):
            bad = [s for s in getattr(self, name) if s not in allowed]
            if bad:
                raise ConfigError(f"{name}: {', '.join(map(repr, bad))} not among {', '.join(allowed)}")
        for name in ("dataset_params", "data_files", "model_overrides"):
            setattr(self, name, _as_mapping(name, getattr(self, name)))
        if (self.dataset is None) == (not self.data_files):
            raise ConfigError("give exactly one of `dataset` (an hf_recogs config name) or `data_files`")
        if self.data_files:
            bad = [s for s in self.data_files if s not in SPLITS]
            if bad:
                raise ConfigError(f"data_files: split names {bad} are not among {', '.join(SPLITS)}")
            if "train" not in self.data_files:
                raise ConfigError("data_files needs a 'train' file")
            for split, path in self.data_files.items():
                if not Path(path).is_file():
                    raise ConfigError(f"data_files: {split} file {path!r} not found")
        else:
            from .registry import get_config

            try:
                spec = get_config(self.dataset)
            except ValueError as exc:
                from .registry import all_configs

                close = difflib.get_close_matches(self.dataset, list(all_configs()), n=1, cutoff=0.6)
                if close:
                    raise ConfigError(
                        f"unknown hf_recogs config {self.dataset!r}; did you mean {close[0]!r}?"
                    ) from None
                raise ConfigError(str(exc)) from None
            try:
                spec.resolve_params(self.dataset_params)
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
        for name in ("max_train_samples", "max_eval_samples", "cpu_threads"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be a positive integer or null, got {value}")
        if self.max_positions < 8:
            raise ConfigError(f"max_positions must be at least 8, got {self.max_positions}")


# ---------------------------------------------------------------------------------------------------------
# Argument parsing


_MAPPING_FIELDS = ("dataset_params", "data_files", "model_overrides")


def _make_parser():
    from transformers import HfArgumentParser, Seq2SeqTrainingArguments

    # exit_on_error=False: a bad value raises argparse.ArgumentError (turned into one line) instead of printing
    # the whole usage and exiting.
    return HfArgumentParser(
        (ExperimentArguments, Seq2SeqTrainingArguments),
        prog="train.py",
        allow_abbrev=False,
        exit_on_error=False,
        description="Train and evaluate a seq2seq baseline: train.py CONFIG.yaml [--key value | key=value ...]",
    )


def _option_fields() -> dict[str, Any]:
    """Every option train.py accepts -> its resolved type (fields of both argument dataclasses)."""
    import typing

    from transformers import Seq2SeqTrainingArguments

    options = {}
    for cls in (ExperimentArguments, Seq2SeqTrainingArguments):
        hints = typing.get_type_hints(cls)
        options.update({f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init})
    return options


YAML11_BOOLEANS = {"yes": True, "on": True, "no": False, "off": False}


def _takes_only_bool(annotation) -> bool:
    """bool or Optional[bool]: not an option that also takes words (``Union[bool, str]``, enums)."""
    import typing

    return annotation is bool or set(typing.get_args(annotation)) == {bool, type(None)}


def _takes_list(annotation) -> bool:
    import typing

    return typing.get_origin(annotation) is list or any(
        typing.get_origin(arg) is list for arg in typing.get_args(annotation)
    )


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


@functools.lru_cache(maxsize=1)
def _options_loader():
    """PyYAML's safe loader with YAML 1.2 booleans: only true/false. YAML 1.1 also reads no/yes/on/off as
    booleans, which turned the Trainer's ``save_strategy: no`` into False (an invalid choice); parse_args turns
    these words into booleans only for options that take nothing else."""
    import yaml

    class OptionsLoader(yaml.SafeLoader):
        pass

    bool_tag = "tag:yaml.org,2002:bool"
    OptionsLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != bool_tag]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    OptionsLoader.add_implicit_resolver(bool_tag, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                        list("tTfF"))
    return OptionsLoader


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} not found; pass a YAML file such as configs/smoke.yaml")
    class UniqueKeyLoader(_options_loader()):
        """A mapping that repeats a key is an error (PyYAML would silently keep the last value)."""

        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise ConfigError(f"{path}: line {key_node.start_mark.line + 1}: {key!r} is given twice; "
                                      "keep one")
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeyLoader)  # noqa: S506 (safe loader)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
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
    known = _option_fields()

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
            if not raw.strip():
                raise ConfigError(f"{key}= has no value; give one (e.g. {key}=<value>) or leave it out for the "
                                  "default")
            try:
                values[key] = yaml.load(raw, Loader=_options_loader())  # noqa: S506 (safe loader)
            except yaml.YAMLError:
                values[key] = raw
        elif item.endswith((".yaml", ".yml")) and not item.startswith("-") and not passthrough:
            raise ConfigError(f"the config file must come first and only once: {item!r}")
        else:
            passthrough.append(item)
    for key, value in values.items():  # the YAML 1.1 words, for options that only take a boolean
        if isinstance(value, str) and value.lower() in YAML11_BOOLEANS and _takes_only_bool(known[key]):
            values[key] = YAML11_BOOLEANS[value.lower()]
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
    if "do_train" not in values and not any(a.startswith("--do_train") for a in passthrough):
        values["do_train"] = True  # TrainingArguments defaults to False, which the Trainer ignores; we honour it
    if "output_dir" not in values and config_path is not None:
        values["output_dir"] = str(Path("outputs") / config_path.stem)

    for key, value in values.items():
        if isinstance(value, (list, tuple)) and not _takes_list(known[key]):
            hint = " (a mapping such as {key: value})" if key in _MAPPING_FIELDS else ""
            raise ConfigError(f"{key} takes a single value{hint}, not the list {value!r}")
    full = _to_argv(values) + passthrough
    try:
        exp, targs, remaining = parser.parse_args_into_dataclasses(
            args=full, return_remaining_strings=True, look_for_args_file=False
        )
    except argparse.ArgumentError as exc:
        raise ConfigError(f"invalid value: {exc}; check the YAML file and the overrides") from None
    except ConfigError:  # from ExperimentArguments.__post_init__: already one line
        raise
    except (ValueError, TypeError) as exc:  # raised by TrainingArguments.__post_init__
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"invalid training arguments: {first}") from None
    if remaining:
        flags = [r for r in remaining if r.startswith("-")] or remaining
        key = flags[0].lstrip("-").split("=")[0]
        raise ConfigError(
            f"unknown option {flags[0]!r}{_suggest(key, known)}; see `python train.py --help` for the valid options"
        )
    if targs.max_steps <= 0 and targs.num_train_epochs <= 0 and targs.do_train:
        raise ConfigError(f"num_train_epochs={targs.num_train_epochs} trains nothing; give a positive "
                          "num_train_epochs or max_steps")
    for name in ("per_device_train_batch_size", "per_device_eval_batch_size"):
        if getattr(targs, name) < 1:
            raise ConfigError(f"{name}={getattr(targs, name)} must be at least 1")
    if targs.do_train:
        _check_model_overrides(exp)
    if not targs.do_train and not exp.model_name_or_path:
        raise ConfigError("do_train=false evaluates a trained model: add model_name_or_path=<folder or Hub id>")
    if targs.do_train and exp.model_name_or_path:
        raise ConfigError("model_name_or_path is for evaluation only: add do_train=false (training always "
                          "starts from a fresh model; resume with resume_from_checkpoint=true)")
    if exp.early_stopping_patience and not (targs.load_best_model_at_end and targs.metric_for_best_model):
        raise ConfigError("early_stopping_patience needs load_best_model_at_end=true and a metric_for_best_model on "
                          "validation (e.g. eval_loss), with eval_strategy equal to save_strategy")
    best = (targs.metric_for_best_model or "") if targs.load_best_model_at_end else ""
    if re.search(r"(^|_)(gen|test)(_|$)", best):
        raise ConfigError(f"metric_for_best_model={best!r} would select the model on gen/test; select on "
                          "validation (e.g. eval_validation_sem_match) or take the last checkpoint")
    exp.config_path = str(config_path) if config_path is not None else None  # for the model card
    return exp, targs


def _check_model_overrides(exp: ExperimentArguments) -> None:
    """Build the model's config now, so that e.g. d_model not divisible by the heads is a one-line error before
    any data is loaded."""
    from .models import build_config

    try:
        build_config(exp.arch, vocab_size=16, max_positions=exp.max_positions, **exp.model_overrides)
    except (ValueError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"model_overrides for {exp.arch}: {first}") from None


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _as_mapping(name: str, raw) -> dict[str, Any]:
    """A mapping option given as a dict (YAML) or as a JSON/YAML string (command line)."""
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
    which halves CPU training speed; torchrun does the same. Unless ``requested`` says otherwise,
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


def dataset_metric(name: str | None) -> str:
    """How a dataset's outputs are scored, as its catalogue entry declares it (``registry.METRICS``); ``sem``
    for ``data_files`` (no catalogue entry)."""
    if name is None:
        return "sem"
    from .registry import get_config

    return get_config(name).metric


def resolve_metric(exp: ExperimentArguments) -> str:
    return dataset_metric(exp.dataset) if exp.metric == "auto" else exp.metric


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
        enc["length"] = [len(a) + len(b) for a, b in zip(enc["input_ids"], enc["labels"], strict=True)]
        return enc

    return ds.map(encode, batched=True, remove_columns=ds.column_names, keep_in_memory=True, desc=None)


# ---------------------------------------------------------------------------------------------------------
# Trainer


SOURCE_CHECK_STEPS = (50, 100, 200, 400, 800, 1600)
SOURCE_GAP_MIN = 0.01  # nats per target token; a model that reads its source is far above this within ~100 steps


def source_gap(model, batches, bf16: bool = False) -> tuple[float, float]:
    """(loss with the true sources, loss with every row given another row's source) on fixed ``batches``.

    The difference is how much the model's predictions depend on its input. A model that has learnt the
    targets' language but ignores the source (the collapse ``transformer`` shows with the reference init, see
    ``hf_recogs.models.transformer``) has a large drop in loss and a gap of ~0.
    """
    import contextlib

    import torch

    was_training = model.training
    model.eval()
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    true_losses, shuffled_losses = [], []
    device = next(model.parameters()).device
    with torch.no_grad(), autocast:
        for batch in batches:
            batch = {k: v.to(device) for k, v in batch.items()}
            true_losses.append(float(model(**batch).loss))
            # every row gets the previous row's source (its mask too); labels stay
            rolled = dict(batch, input_ids=batch["input_ids"].roll(1, 0),
                          attention_mask=batch["attention_mask"].roll(1, 0))
            shuffled_losses.append(float(model(**rolled).loss))
    model.train(was_training)
    true_loss = sum(true_losses) / len(true_losses)
    return true_loss, sum(shuffled_losses) / len(shuffled_losses) - true_loss


def _callback_base():
    from transformers import TrainerCallback

    return TrainerCallback


class SourceUseMonitor(_callback_base()):
    """Trainer callback: logs ``source_gap`` early in training and warns when the model ignores its source."""

    def __init__(self, batches, bf16: bool, steps=SOURCE_CHECK_STEPS):
        self.batches, self.bf16, self.steps = batches, bf16, set(steps)
        self.initial_loss: float | None = None
        self.warned = False

    def check(self, model, state) -> dict[str, float]:
        loss, gap = source_gap(model, self.batches, self.bf16)
        if self.initial_loss is None:
            self.initial_loss = loss
        record = {"step": state.global_step, "source_gap": round(gap, 5), "source_sample_loss": round(loss, 5)}
        state.log_history.append(record)
        logger.info("step %d: loss on the source-check sample %.4f, shuffled-source gap %.4f", state.global_step,
                    loss, gap)
        learnt_outputs = loss < 0.5 * self.initial_loss
        if learnt_outputs and gap < SOURCE_GAP_MIN and not self.warned:
            self.warned = True
            logger.warning(
                "!!! step %d: the model IGNORES ITS SOURCE: loss fell from %.3f to %.3f but giving each row "
                "another row's source changes it by only %.4f. It is learning a language model of the outputs. "
                "Stop and change the set-up (see docs/TRAINING.md, 'source collapse').",
                state.global_step, self.initial_loss, loss, gap,
            )
        return record

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if state.global_step == 0 and state.is_world_process_zero:
            self.check(model, state)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step in self.steps and state.is_world_process_zero:
            self.check(model, state)


TRAINING_TIME_FILE = "training_time.json"


class TrainingClock(_callback_base()):
    """Trainer callback: the training time of a run across its resumes.

    Each process that trains is one *part* (steps from → to, wall seconds, torch threads, processes). Every
    checkpoint carries the parts so far in ``training_time.json``, so a run resumed from it reports the time of
    the whole run. A checkpoint written before this file existed gives a part with ``wall_s: null`` (unknown).
    """

    def __init__(self, resume: str | None):
        self.earlier: list[dict] = []
        if resume:
            path = Path(resume) / TRAINING_TIME_FILE
            if path.is_file():
                self.earlier = json.loads(path.read_text(encoding="utf-8"))["parts"]
            else:
                step = json.loads((Path(resume) / "trainer_state.json").read_text(encoding="utf-8"))["global_step"]
                self.earlier = [{"from_step": 0, "to_step": step, "wall_s": None, "threads": None,
                                 "processes": None}]
        self.started = self.ended = None
        self.first_step = 0

    def parts(self, state, world_size: int) -> list[dict]:
        import torch

        if self.started is None:
            return list(self.earlier)
        wall = (self.ended or time.perf_counter()) - self.started
        now = {"from_step": self.first_step, "to_step": state.global_step, "wall_s": round(wall, 1),
               "threads": torch.get_num_threads(), "processes": world_size}
        return [*self.earlier, now] if now["to_step"] > now["from_step"] else list(self.earlier)

    def on_train_begin(self, args, state, control, **kwargs):
        self.started, self.first_step = time.perf_counter(), state.global_step

    def on_train_end(self, args, state, control, **kwargs):
        self.ended = time.perf_counter()

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if folder.is_dir():
                parts = self.parts(state, args.world_size)
                (folder / TRAINING_TIME_FILE).write_text(json.dumps({"parts": parts}, indent=1), encoding="utf-8")


def training_time(parts: list[dict]) -> dict:
    """Totals of a run's parts: wall seconds and thread-seconds (wall × torch threads × processes), ``None``
    when a part's time is unknown."""
    known = all(p["wall_s"] is not None for p in parts)
    return {
        "wall_s": round(sum(p["wall_s"] for p in parts), 1) if known else None,
        "cpu_thread_s": (round(sum(p["wall_s"] * p["threads"] * p["processes"] for p in parts), 1)
                         if known else None),
        "parts": parts,
    }


def _stratified_sample(ds, n: int, seed: int = 0) -> list[int]:
    """``n`` row indices spread evenly over the categories (round robin over shuffled categories), sorted."""
    if n >= len(ds):
        return list(range(len(ds)))
    rng = random.Random(seed)
    by_cat: dict[str, list[int]] = {}
    for i, cat in enumerate(ds["category"]):
        by_cat.setdefault(cat, []).append(i)
    pools = [rng.sample(rows, len(rows)) for _, rows in sorted(by_cat.items())]
    picked: list[int] = []
    while len(picked) < n:
        for pool in pools:
            if pool and len(picked) < n:
                picked.append(pool.pop())
    return sorted(picked)


def greedy_decode(model, tokenizer, sources: list[str], max_length: int, batch_size: int = 64, bf16=False,
                  source_max_length: int | None = None):
    """Greedy predictions for ``sources`` (decoded in batches of similar length, returned in input order).

    Outputs stop at ``max_length`` tokens; sources are cut at ``source_max_length`` (default ``max_length``),
    as ``tokenize_dataset`` cuts them for training."""
    import contextlib

    import torch

    order = sorted(range(len(sources)), key=lambda i: len(sources[i].split()))
    out: list[str | None] = [None] * len(sources)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    with torch.no_grad(), autocast:
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            enc = tokenizer([sources[i] for i in idx], return_tensors="pt", padding=True, truncation=True,
                            max_length=source_max_length or max_length).to(device)
            ids = model.generate(**enc, max_length=max_length, num_beams=1, do_sample=False)
            for i, text in zip(idx, decode(tokenizer, ids.cpu()), strict=True):
                out[i] = text
    model.train(was_training)
    return out


def _trainer_class():
    """``Seq2SeqTrainer`` with our options: weight decay on every parameter, batches grouped by source + target
    length, and evaluations that log SEM learning curves on fixed samples and the source gap."""
    from transformers import Seq2SeqTrainer
    from transformers.trainer_pt_utils import LengthGroupedSampler

    from . import reporting

    class BaselineTrainer(Seq2SeqTrainer):
        def __init__(self, *args, decay_all=False, curve_sets=None, metric="sem", category_groups=None,
                     source_monitor=None, curve_max_length=512, curve_log=None, cpu_bf16=False,
                     tokens_per_batch=None, **kwargs):
            super().__init__(*args, **kwargs)
            self.tokens_per_batch = tokens_per_batch  # set: loss_weighting token
            self.cpu_bf16 = cpu_bf16  # our own decoding loops autocast like the Trainer's steps
            self.decay_all, self.curve_sets, self.metric = decay_all, curve_sets or {}, metric
            self.category_groups = category_groups
            self.source_monitor, self.curve_max_length, self.curve_log = source_monitor, curve_max_length, curve_log

        def get_decay_parameter_names(self, model):
            if self.decay_all:  # the ReCOGS reference decays biases and LayerNorm weights too
                return [name for name, p in model.named_parameters() if p.requires_grad]
            return super().get_decay_parameter_names(model)

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            if self.tokens_per_batch is None or not model.training:
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            # The models return the mean over the batch's target tokens; rescale it to their sum over the
            # training set's mean per batch, so that a long batch counts for its tokens.
            n_tokens = (inputs["labels"] != -100).sum()
            loss, outputs = super().compute_loss(model, inputs, True, num_items_in_batch)
            loss = loss * (n_tokens / self.tokens_per_batch)
            return (loss, outputs) if return_outputs else loss

        def _get_train_sampler(self, train_dataset=None):
            # The Trainer groups by source length only (it drops a `length` column before sampling); decoder
            # cost follows the target, so group by source + target tokens.
            dataset = train_dataset if train_dataset is not None else self.train_dataset
            if self.args.train_sampling_strategy != "group_by_length" or "length" not in dataset.column_names:
                return super()._get_train_sampler(train_dataset)
            return LengthGroupedSampler(
                self.args.train_batch_size * self.args.gradient_accumulation_steps, dataset=dataset,
                lengths=dataset["length"],
            )

        def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval", **gen_kwargs):
            """Loss and source gap on the fixed validation sample, and greedy-decoded scores on the fixed curve
            samples; logged (and written to ``curves.jsonl``), never used to pick a checkpoint on gen/test."""
            metrics: dict[str, float] = {}
            if self.is_world_process_zero():
                model = self.accelerator.unwrap_model(self.model)
                bf16 = self.cpu_bf16
                if self.source_monitor is not None:
                    loss, gap = source_gap(model, self.source_monitor.batches, bf16)
                    metrics[f"{metric_key_prefix}_loss"] = loss
                    metrics[f"{metric_key_prefix}_source_gap"] = gap
                for split, rows in self.curve_sets.items():
                    preds = greedy_decode(model, self.processing_class, rows["input"], self.curve_max_length,
                                          self.args.per_device_eval_batch_size, bf16)
                    summary = reporting.summarize(score_split(rows, preds, self.metric), self.metric,
                                                  self.category_groups)
                    key = summary["primary"]
                    metrics[f"{metric_key_prefix}_{split}_{key}"] = summary[key]
                    for group in reporting.group_display(summary)["brief"]:  # the config's brief groups
                        if group in summary["groups"]:
                            metrics[f"{metric_key_prefix}_{split}_{group}_{key}"] = summary["groups"][group][key]
                metrics["epoch"] = self.state.epoch
                if self.curve_log is not None:
                    with open(self.curve_log, "a", encoding="utf-8") as f:
                        f.write(json.dumps({"step": self.state.global_step, **metrics}) + "\n")
            self.log(metrics)
            self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
            return metrics

    return BaselineTrainer


def decode(tokenizer, ids) -> list[str]:
    import numpy as np

    ids = np.asarray(ids)
    ids = np.where(ids < 0, tokenizer.pad_token_id, ids)
    texts = tokenizer.batch_decode(ids.tolist(), skip_special_tokens=True, clean_up_tokenization_spaces=False)
    return [" ".join(t.split()) for t in texts]


def score_split(raw, predictions: list[str], metric: str) -> list[dict[str, Any]]:
    """One record per row: input, gold, prediction, category, sem (None for metric=exact), exact."""
    from .reporting import score_rows

    rows = list(raw)  # a Dataset or a list of row dicts
    return score_rows(predictions, [r["output"] for r in rows], [r["category"] for r in rows], metric,
                      inputs=[r["input"] for r in rows])


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


def cpu_has_native_bf16() -> bool:
    """True on CPUs with bf16 instructions (AVX-512 BF16 or AMX), where bf16 autocast speeds training up."""
    import torch

    try:
        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
                    and (torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()))
    except (AttributeError, RuntimeError):  # pragma: no cover - other builds
        return False


def _use_cpu_bf16(exp, args) -> bool:
    import torch

    if torch.cuda.is_available() and not args.use_cpu:
        return False
    if exp.cpu_bf16 == "auto":
        return cpu_has_native_bf16()
    return exp.cpu_bf16 == "true"


def _early_stopping(exp: ExperimentArguments):
    if not exp.early_stopping_patience:
        return None
    from transformers import EarlyStoppingCallback

    return EarlyStoppingCallback(early_stopping_patience=exp.early_stopping_patience)


def _tokens_per_batch(train_ds, args) -> float:
    """Mean target tokens (the labels the loss counts) of a training batch: the divisor of loss_weighting token."""
    per_row = sum(len(labels) for labels in train_ds["labels"]) / len(train_ds)
    return per_row * args.per_device_train_batch_size


def _source_check_batches(raw, tokenizer, max_positions: int, collator, rows: int = 128, batch_size: int = 64):
    """Fixed batches for the source gap: a random sample (seed 0) of validation (or train) rows."""
    split = raw["validation"] if "validation" in raw else raw["train"]
    sample = tokenize_dataset(_subset(split, rows), tokenizer, max_positions).remove_columns(["length"])
    features = [sample[i] for i in range(len(sample))]
    return [collator(features[i : i + batch_size]) for i in range(0, len(features), batch_size)]


def run_seed(exp, targs, seed: int, seed_dir: Path, raw, tokenizer, metric: str, n_seeds: int, command: str,
             model=None):
    """Train one seed in ``seed_dir`` (or, with ``model`` given and ``do_train`` false, only evaluate it) and
    evaluate it; returns the results dict (on every process)."""
    import torch
    from transformers import DataCollatorForSeq2Seq, IntervalStrategy, set_seed

    from . import reporting
    from .models import build_model
    from .registry import get_config

    args = copy.deepcopy(targs)
    args.seed = seed
    args.output_dir = str(seed_dir)
    args.predict_with_generate = True
    args.push_to_hub = False  # we push ourselves with our own model card (hub.push)
    if args.ddp_find_unused_parameters is None:
        # The reference BERT encoder carries a pooler whose output no loss uses.
        args.ddp_find_unused_parameters = exp.arch == "reference_transformer"
    if args.data_seed is None:
        args.data_seed = seed
    if args.use_cpu or not torch.cuda.is_available():
        args.dataloader_pin_memory = False
    if model is not None:
        # Evaluation only: the config's training-time evaluations and checkpoint choice do not apply, and the
        # Trainer refuses an evaluation strategy without an eval_dataset.
        args.eval_strategy, args.load_best_model_at_end = IntervalStrategy.NO, False
    cpu_bf16 = _use_cpu_bf16(exp, args)
    if cpu_bf16:
        # The Trainer's Accelerator reads ``mixed_precision``, which TrainingArguments derives from ``bf16`` in
        # __post_init__: setting ``bf16`` alone after construction would record bf16 and train in fp32.
        args.bf16, args.mixed_precision = True, "bf16"
    if exp.data_order == "fixed":
        args.train_sampling_strategy = "sequential"
    elif exp.data_order == "grouped":
        args.train_sampling_strategy = "group_by_length"

    # data_files have no catalogue entry, hence no category groups
    category_groups = get_config(exp.dataset).category_groups if exp.dataset else None
    set_seed(seed)
    training = model is None
    if training:
        model = build_model(exp.arch, tokenizer, max_positions=exp.max_positions, **exp.model_overrides)
    train_raw = _subset(raw["train"], exp.max_train_samples)
    if exp.data_order == "fixed":
        train_raw = train_raw.shuffle(seed=seed, keep_in_memory=True)
    train_ds = tokenize_dataset(train_raw, tokenizer, exp.max_positions) if training else None
    collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100, padding=True)
    monitor = None
    if exp.source_check:
        monitor = SourceUseMonitor(_source_check_batches(raw, tokenizer, exp.max_positions, collator), cpu_bf16)
    curve_sets = {}
    if args.eval_strategy != "no" and training:
        for split in exp.curve_splits:
            if split in raw:
                curve_sets[split] = raw[split].select(_stratified_sample(raw[split], exp.curve_samples))
    seed_dir.mkdir(parents=True, exist_ok=True)
    resume = _resume_target(targs.resume_from_checkpoint, seed_dir, n_seeds) if training else None
    clock = TrainingClock(resume) if training else None
    tokens_per_batch = _tokens_per_batch(train_ds, args) if training and exp.loss_weighting == "token" else None
    trainer = _trainer_class()(
        model=model, args=args, train_dataset=train_ds, data_collator=collator, processing_class=tokenizer,
        # our evaluate() reads the fixed samples, not eval_dataset; the Trainer only checks that one is given
        eval_dataset=train_ds if training and args.eval_strategy != "no" else None,
        callbacks=[c for c in (monitor, clock, _early_stopping(exp)) if c] if training else None,
        decay_all=exp.decay_all_parameters, curve_sets=curve_sets, metric=metric, category_groups=category_groups,
        source_monitor=monitor,
        curve_max_length=args.generation_max_length or exp.max_positions, curve_log=seed_dir / "curves.jsonl",
        cpu_bf16=cpu_bf16, tokens_per_batch=tokens_per_batch,
    )
    if resume:
        logger.info("seed %d: resuming from %s", seed, resume)
    train_out = trainer.train(resume_from_checkpoint=resume) if training else None
    hp = hyperparameters(exp, args)
    # transformers 5 length-groups the *evaluation* order too when training is length-grouped, which would
    # pair predictions with the wrong rows: decode every split in dataset order.
    trainer.args.train_sampling_strategy = "sequential"
    if training:
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
        logger.info("seed %d: decoding %s (%d rows)", seed, split, len(split_raw))
        if args.world_size == 1 and gen_kwargs["num_beams"] == 1:
            # One process: our greedy decoding, batches of similar source length under the training's autocast.
            # Seq2SeqTrainer.predict generates in dataset order, in fp32, and runs a second forward pass for the
            # loss: on ReCOGS_pos gen it took ~20 s per batch of 128 on this project's CPU.
            started = time.perf_counter()
            predictions = greedy_decode(model, tokenizer, list(split_raw["input"]), gen_kwargs["max_length"],
                                        args.per_device_eval_batch_size, cpu_bf16, exp.max_positions)
            records = score_split(split_raw, predictions, metric)
            reporting.write_predictions(seed_dir / f"predictions_{split}.jsonl", records)
            splits[split] = reporting.summarize(records, metric, category_groups)
            splits[split]["loss"] = None  # not computed on this path
            splits[split]["runtime_s"] = round(time.perf_counter() - started, 2)
            continue
        split_ds = tokenize_dataset(split_raw, tokenizer, exp.max_positions).remove_columns(["length"])
        out = trainer.predict(split_ds, metric_key_prefix=split, **gen_kwargs)
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
        splits[split] = reporting.summarize(records, metric, category_groups)
        splits[split]["loss"] = out.metrics.get(f"{split}_loss")
        splits[split]["runtime_s"] = out.metrics.get(f"{split}_runtime")

    history = trainer.state.log_history
    results = {
        "dataset": exp.dataset or "data_files",
        "dataset_params": exp.dataset_params,
        "arch": exp.arch,
        "metric": metric,
        "seed": seed,
        "num_parameters": sum(p.numel() for p in model.parameters()),
        "vocab_size": len(tokenizer),
        "bf16": bool(args.bf16),
        "mixed_precision": trainer.accelerator.mixed_precision,  # what the training steps actually used
        "train": None if not training else {
            # the Trainer's training_loss covers only the steps of this process (after a resume: only the steps
            # since the resume, 0.0 when resuming a finished run); "loss" is over the whole run's logged steps
            "loss": _whole_run_loss(history),
            "loss_this_process": train_out.training_loss,
            "global_step": train_out.global_step,
            "runtime_s": train_out.metrics.get("train_runtime"),  # this process only
            # the whole run, resumes included: wall seconds, thread-seconds, and each part
            "time": training_time(clock.parts(trainer.state, args.world_size)),
            "epochs": args.num_train_epochs,
            "epochs_done": trainer.state.epoch,
            "train_rows": len(train_raw),
            "resumed_from": resume,
            "loss_history": [{"step": h["step"], "loss": h["loss"]} for h in history if "loss" in h],
            "source_gap_history": [
                {"step": h["step"], "source_gap": h["source_gap"]} for h in history if "source_gap" in h
            ],
            "curves": [h for h in history if any(k.startswith("eval_") for k in h)],
        },
        "evaluated_model": None if training else exp.model_name_or_path,
        "hyperparameters": hp,
        "splits": splits,
        "command": command,
        "environment": environment(),
    }
    if trainer.is_world_process_zero():
        reporting.write_json(seed_dir / "results.json", results)
        reporting.plot_per_category(results, seed_dir / "per_category.png")
        if training:
            reporting.plot_curves(results, seed_dir / "curves.png")
            reporting.write_model_card(seed_dir, results)
    trainer.accelerator.wait_for_everyone()
    del trainer, model
    return results


def environment() -> dict[str, Any]:
    """What a reproduction needs to know: versions, git commit, date, hardware and the threads torch used."""
    import datetime
    import platform
    import subprocess
    from importlib import metadata

    import torch

    versions = {}
    for package in ("hf-recogs", "torch", "transformers", "datasets", "accelerate", "evaluate", "tokenizers",
                    "huggingface_hub"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    try:
        root = Path(__file__).resolve().parent.parent
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5).stdout.strip() or None
        dirty = bool(commit) and bool(subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"], capture_output=True,
            text=True, timeout=5).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        commit, dirty = None, False
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": versions,
        "python": platform.python_version(),
        "git_commit": commit,
        "git_dirty": dirty,
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "cpu_native_bf16": cpu_has_native_bf16(),
        "argv": list(sys.argv),
    }


def _whole_run_loss(history: list[dict]) -> float | None:
    """Mean training loss over all logged steps of the run, resumes included (each logged value is the mean of
    the steps since the previous log, so it is weighted by their number)."""
    total = weight = 0.0
    previous = 0
    for h in history:
        if "loss" in h:
            total += h["loss"] * (h["step"] - previous)
            weight += h["step"] - previous
            previous = h["step"]
    return total / weight if weight else None


def hyperparameters(exp, args) -> dict[str, Any]:
    keep = ("learning_rate", "per_device_train_batch_size", "per_device_eval_batch_size",
            "gradient_accumulation_steps", "num_train_epochs", "max_steps", "warmup_steps", "weight_decay",
            "max_grad_norm", "lr_scheduler_type", "optim", "adam_beta1", "adam_beta2", "adam_epsilon",
            "label_smoothing_factor", "generation_max_length", "generation_num_beams", "data_seed",
            "train_sampling_strategy", "bf16", "tf32", "eval_strategy", "eval_steps")
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
    from .sources import SourceError

    try:
        _check_writable(Path(targs.output_dir))
        return run(exp, targs, command)
    except (ConfigError, SourceError) as exc:  # SourceError: upstream data missing or corrupt; names the fix
        print(f"train.py: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EROFS):
            raise
        print(f"train.py: error: could not write {exc.filename or targs.output_dir!s}: {exc.strerror}; free space "
              "or choose another output_dir (checkpoints already written are kept; resume with "
              "resume_from_checkpoint=true)", file=sys.stderr)
        return 1


def _check_writable(out_dir: Path) -> None:
    """Fail before any work when ``output_dir`` cannot hold files."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe = out_dir / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f"output_dir={str(out_dir)!r} is not writable ({exc.strerror or exc}); choose another "
                          "output_dir") from None


def _move_aside(seed_dir: Path) -> None:
    """Before a seed is retrained from scratch, its old folder becomes ``<seed_dir>.previous-<time>``: nothing
    written is lost, and a run killed half way cannot leave old results next to new checkpoints (where a later
    resume would report the old results as its own)."""
    from accelerate import PartialState

    state = PartialState()
    if state.is_main_process and seed_dir.is_dir() and any(seed_dir.iterdir()):
        import time

        target = seed_dir.with_name(f"{seed_dir.name}.previous-{time.strftime('%Y%m%d-%H%M%S')}")
        seed_dir.rename(target)
        logger.warning("overwrite_output_dir: moved the previous %s to %s", seed_dir, target)
    state.wait_for_everyone()


def evaluate_only(exp: ExperimentArguments, targs, raw, metric: str, command: str) -> int:
    """``do_train=false``: decode and score ``model_name_or_path`` on ``eval_splits`` into
    ``<output_dir>/evaluation/``."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from . import models  # noqa: F401  (registers the lstm with the Auto classes)
    from . import reporting

    try:
        tokenizer = AutoTokenizer.from_pretrained(exp.model_name_or_path)
        model = AutoModelForSeq2SeqLM.from_pretrained(exp.model_name_or_path)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"model_name_or_path={exp.model_name_or_path!r} could not be loaded ({first}); "
                          "give a folder written by train.py or a Hub model id") from None
    out = run_seed(exp, targs, targs.seed, Path(targs.output_dir) / "evaluation", raw, tokenizer, metric, 1,
                   command, model=model)
    if int(os.environ.get("RANK", "0")) == 0:
        logger.info("evaluation: %s", reporting.one_line(out))
    return 0


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
    if not targs.do_train:
        return evaluate_only(exp, targs, raw, metric, command)
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
        resume = _resume_target(targs.resume_from_checkpoint, seed_dir, len(seeds))
        if exp.overwrite_output_dir and resume is None:
            _move_aside(seed_dir)
        elif resume is None and _last_checkpoint(seed_dir) and targs.do_train:
            # Training from scratch here would mix two runs' curves and let checkpoint rotation delete the old ones.
            raise ConfigError(f"{seed_dir} holds checkpoints of an unfinished run: add resume_from_checkpoint=true "
                              "to continue it, or overwrite_output_dir=true to start over (the old folder is kept "
                              "aside)")
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


if __name__ == "__main__":  # accelerate launch --module hf_recogs.training (what `hf-recogs train` starts)
    sys.exit(main())
