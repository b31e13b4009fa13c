"""The run record: what a finished seed writes to ``results.json``, and what every later stage reads.

:class:`RunRecord` is the schema of ``results.json`` (its fields, in the file's order). ``RunRecord.read``
accepts the files published by earlier versions (fields they lack are ``None``; fields this version does not
know are kept in ``extra`` and written back).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .arguments import ExperimentArguments

# Training options that results.json records besides ExperimentArguments (the rest of TrainingArguments is
# the Trainer's defaults or machine-local).
RECORDED_TRAINING_OPTIONS = (
    "learning_rate", "per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps",
    "num_train_epochs", "max_steps", "warmup_steps", "weight_decay", "max_grad_norm", "lr_scheduler_type", "optim",
    "adam_beta1", "adam_beta2", "adam_epsilon", "label_smoothing_factor", "generation_max_length",
    "generation_num_beams", "data_seed", "train_sampling_strategy", "bf16", "tf32", "eval_strategy", "eval_steps",
)


@dataclass
class TrainingRecord:
    """How the seed trained: losses, time (over every resumed part), and the learning curves."""

    loss: float | None = None  # over the whole run's logged steps, resumes included
    loss_this_process: float | None = None  # the Trainer's training_loss: the steps since the last resume only
    global_step: int | None = None
    runtime_s: float | None = None  # this process only
    time: dict | None = None  # the whole run: wall seconds, thread-seconds, CPU seconds, and each part
    epochs: float | None = None
    epochs_done: float | None = None
    train_rows: int | None = None
    resumed_from: str | None = None
    loss_history: list = field(default_factory=list)
    source_gap_history: list = field(default_factory=list)
    curves: list = field(default_factory=list)


@dataclass
class RunRecord:
    dataset: str
    dataset_params: dict
    arch: str
    metric: str
    seed: int | None  # None: an evaluated model whose own seed is unknown
    num_parameters: int | None = None
    vocab_size: int | None = None
    bf16: bool = False
    mixed_precision: str | None = None  # what the training steps actually used
    train: TrainingRecord | None = None  # None for an evaluation-only run
    evaluated_model: str | None = None  # the model an evaluation-only run scored
    # an evaluation-only run: the scored model's own run record (how it trained), its splits left out; None where
    # the model folder has none (a Hub id, a bare model)
    model_record: dict | None = None
    hyperparameters: dict = field(default_factory=dict)
    splits: dict = field(default_factory=dict)  # split -> the summary of hf_recogs.scoring.summarize
    command: str | None = None
    environment: dict = field(default_factory=dict)
    # structure_transformer runs: the track, the parser, the structure settings, the inputs that did not parse
    # (``_input_structure`` in run.py); None for a model that reads tokens only
    input_structure: dict | None = None
    extra: dict = field(default_factory=dict)  # fields of a newer version, kept as they are

    @property
    def precision(self) -> str:
        """How the training steps computed: "bf16" / "fp16" autocast or "fp32"."""
        mode = self.mixed_precision or ("bf16" if self.bf16 else "no")
        return "fp32" if mode == "no" else mode

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        data["train"] = dataclasses.asdict(self.train) if self.train is not None else None
        return {**data, **self.extra}

    def write(self, path: Path) -> None:
        text = json.dumps(self.to_json(), indent=2, ensure_ascii=False, default=str) + "\n"
        Path(path).write_text(text, encoding="utf-8")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in data.items() if k in names}
        train = known.get("train")
        if isinstance(train, dict):
            fields = {f.name for f in dataclasses.fields(TrainingRecord)}
            known["train"] = TrainingRecord(**{k: v for k, v in train.items() if k in fields})
        for name in ("dataset", "dataset_params", "arch", "metric", "seed"):
            known.setdefault(name, None)
        return cls(**known, extra={k: v for k, v in data.items() if k not in names})

    @classmethod
    def read(cls, path: Path) -> RunRecord:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def recorded_hyperparameters(exp: ExperimentArguments, args) -> dict[str, Any]:
    """The options that define the experiment: ours, and the training options of ``RECORDED_TRAINING_OPTIONS``."""
    hp = {k: getattr(args, k, None) for k in RECORDED_TRAINING_OPTIONS}
    hp = {k: (v.value if hasattr(v, "value") else v) for k, v in hp.items()}
    hp["world_size"] = args.world_size
    for f in dataclasses.fields(ExperimentArguments):
        if f.name != "hub_endpoint":
            hp[f.name] = getattr(exp, f.name)
    return json.loads(json.dumps(hp, default=str))


TRACK_WITH_STRUCTURE = "with input structure"
TRACK_WITHOUT_STRUCTURE = "without input structure"


def structure_settings(config) -> dict[str, Any]:
    """The resolved structure settings of a ``StructureTransformerConfig`` as the record keeps them, with the
    track they put the run on: a model that reads no relation (``encoder_structure`` and
    ``cross_attention_structure`` none), no structure tokens, no word classes and no functions reads no parse, so
    it is on the track without input structure (``pointer_offsets`` read only the output's positions and the source
    order, ``pointer_coverage`` and ``pointer_head_counts`` only the output's positions, ``decoder_position_shift``,
    ``decoder_relative_positions`` and ``decoder_attention_window`` nothing of the input, ``output_copy`` the
    source's tokens, as every model does, and ``output_copy_lexicon`` the training pairs)."""
    pointer = config.cross_attention_structure
    reads = (config.encoder_structure != "none" or config.structure_tokens or pointer != "none"
             or config.encoder_word_classes or config.encoder_functions)
    return {
        "track": TRACK_WITH_STRUCTURE if reads else TRACK_WITHOUT_STRUCTURE,
        "encoder_structure": config.encoder_structure,
        "structure_heads": config.heads_with_structure() if config.encoder_structure != "none" else 0,
        "of_heads": config.encoder_attention_heads,
        "structure_layers": config.layers_with_structure(),
        "hard_relations": config.hard_relation_names() if config.encoder_structure in ("hard", "both") else [],
        "structure_tokens": bool(config.structure_tokens),
        "tree": "constituents (structure tokens)" if config.structure_tokens else "head words",
        "encoder_word_classes": bool(config.encoder_word_classes),
        "encoder_functions": bool(config.encoder_functions),
        "cross_attention_structure": pointer,
        "pointer_offsets": config.pointer_offsets,
        "pointer_offsets_scope": config.pointer_offsets_scope,
        "pointer_offsets_by": config.pointer_offsets_by,
        "pointer_keys": bool(config.pointer_keys),
        "pointer_values": bool(config.pointer_values),
        "pointer_sides": bool(config.pointer_sides),
        "pointer_coverage": bool(config.pointer_coverage),
        "pointer_argument_mask": bool(config.pointer_argument_mask),
        "pointer_arity_mask": bool(config.pointer_arity_mask),
        "pointer_head_counts": bool(config.pointer_head_counts),
        "decoder_position_shift": config.decoder_position_shift,
        "decoder_relative_positions": config.decoder_relative_positions,
        "decoder_attention_window": config.decoder_attention_window,
        "output_copy": bool(config.output_copy),
        "output_copy_lexicon": bool(config.output_copy_lexicon),
        "output_copy_positions": bool(config.output_copy_positions),
        "pointer_named_words": bool(config.pointer_named_words),
    }


def structure_track(results: dict[str, Any]) -> str:
    """The track of a run record (``results.json`` as a dict): "with input structure" when the model read our
    parser's trees of its inputs, "without input structure" otherwise (every baseline, and records written
    before the track existed)."""
    return (results.get("input_structure") or {}).get("track", TRACK_WITHOUT_STRUCTURE)


def whole_run_loss(history: list[dict]) -> float | None:
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


def training_record(history: list[dict], train_out, time: dict, epochs: float, epochs_done: float,
                    train_rows: int, resumed_from: str | None) -> TrainingRecord:
    """The ``train`` part of the record from the Trainer's log history and ``train()`` output."""
    return TrainingRecord(
        loss=whole_run_loss(history), loss_this_process=train_out.training_loss,
        global_step=train_out.global_step, runtime_s=train_out.metrics.get("train_runtime"), time=time,
        epochs=epochs, epochs_done=epochs_done, train_rows=train_rows, resumed_from=resumed_from,
        loss_history=[{"step": h["step"], "loss": h["loss"]} for h in history if "loss" in h],
        source_gap_history=[{"step": h["step"], "source_gap": h["source_gap"]} for h in history if "source_gap" in h],
        curves=[h for h in history if any(k.startswith("eval_") for k in h)],
    )


def environment() -> dict[str, Any]:
    """What a reproduction needs to know: versions, git commit, date, hardware and the threads torch used."""
    import datetime
    import platform

    import torch

    from .hardware import cpu_has_native_bf16

    commit, dirty = _git_state(Path(__file__).resolve().parents[2])
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": _versions(),
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


def _versions() -> dict[str, str | None]:
    from importlib import metadata

    versions = {}
    for package in ("hf-recogs", "torch", "transformers", "datasets", "accelerate", "evaluate", "tokenizers",
                    "huggingface_hub"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def _git_state(root: Path) -> tuple[str | None, bool]:
    """(commit, whether tracked files differ from it) of the source tree the package runs from."""
    import subprocess

    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5).stdout.strip() or None
        dirty = bool(commit) and bool(subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"], capture_output=True,
            text=True, timeout=5).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return None, False
    return commit, dirty
