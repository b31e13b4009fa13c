"""The options of ``train.py`` and their language: a YAML file, then ``key=value`` or ``--key value`` overrides.

Options are the fields of two dataclasses read by ``transformers.HfArgumentParser``: :class:`ExperimentArguments`
(data, model, metric, seeds) and ``Seq2SeqTrainingArguments`` (optimisation, batch sizes, checkpoints, Hub).
A ``key=value`` value is parsed as YAML (``seeds=[1,2]``), with YAML 1.2 booleans only. Unknown keys, malformed
values and broken YAML stop with a one-line :class:`ConfigError` that names the fix.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import functools
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..registry import METRICS as DATASET_METRICS
from ..registry import SPLITS
from .hardware import cuda_available

EVAL_SPLITS = tuple(s for s in SPLITS if s != "train")
METRICS = ("auto", *DATASET_METRICS)  # auto: the one the dataset's catalogue entry declares
DATA_ORDERS = ("reshuffle", "fixed", "grouped")
LOSS_WEIGHTINGS = ("batch", "token")
TARGET_ORDERS = ("dataset", "depth_first", "nmod_last", "arguments_first")
# Options that say where and how one machine ran a run, not what was trained: the model card's reproduce
# command leaves them out, and the seeds of one published run may differ in them. The decoding batch is sized
# to the machine's memory and changes no result; TF32 matmuls exist only on recent NVIDIA GPUs (transformers
# refuses tf32=true elsewhere), so the card states them instead.
MACHINE_LOCAL_OPTIONS = frozenset({"output_dir", "cpu_threads", "resume_from_checkpoint", "overwrite_output_dir",
                                   "per_device_eval_batch_size", "disable_tqdm", "tf32", "world_size"})


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
    arch: str = field(default="transformer", metadata={
        "help": "transformer | reference_transformer | lstm | relative_transformer (seq2seq); "
                "structure_transformer (seq2seq whose encoder reads the input's parse: COGS-grammar configs); "
                "structure_encoder | lstm_classifier (classifiers of (input, candidate) configs)"})
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
            "in that order every epoch (ReCOGS reference); grouped: batches of similar length (source + target "
            "tokens; input + candidate words for classification), reshuffled every epoch (less padding: 3-4x "
            "the seq2seq training throughput on CPU, bench/train_bench.py)"
        },
    )
    oversample: dict[str, int] | str | None = field(
        default=None,
        metadata={
            "help": "repeat the training rows of a kind the dataset declares (DatasetConfig.row_kinds; COGS "
            "family: nested_2, concat) this many times in every epoch, e.g. '{nested_2: 4}'"
        },
    )
    target_order: str = field(
        default="dataset",
        metadata={
            "help": "dataset: train on the outputs as the dataset writes them; depth_first: train on ReCOGS forms "
            "whose AND conjuncts are in depth-first order (each noun's nmod right after the role that names it; "
            "hf_recogs.logical_forms.depth_first_order), the same meanings for SEM; the training split only, "
            "scoring always against the dataset's outputs; nmod_last: the same, with every nmod conjunct after "
            "the others (hf_recogs.logical_forms.nmod_last_order); arguments_first: train on forms whose "
            "conjuncts are written '( 1 , 0 ) agent' (hf_recogs.logical_forms.arguments_first), the model saved "
            "with that order so that its decoded outputs go back to the dataset's before they are scored or "
            "written"
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
    decode_cap_per_source_word: float = field(
        default=0.0,
        metadata={
            "help": "greedy decoding stops a row at this many output tokens per source word plus decode_cap_margin "
            "(and at generation_max_length), so that a row that never ends no longer keeps its whole batch "
            "decoding to generation_max_length; results.json counts the rows cut and the gold forms longer than "
            "their cap (0: no verdict can change). ReCOGS_pos and COGS: 8 (every gold form fits). 0: off"
        },
    )
    decode_cap_margin: int = field(
        default=32, metadata={"help": "with decode_cap_per_source_word: the tokens every row gets on top"}
    )
    constrained_decoding: bool = field(
        default=False,
        metadata={
            "help": "greedy decoding writes only forms that keep the rules of ReCOGS_pos logical forms (arity, "
            "positions, order, heads, dependents, ending; hf_recogs/form_rules.py), checked first on every "
            "training target; results.json counts the rows left with no allowed word. ReCOGS_pos only"
        },
    )
    constrained_any_order: bool = field(
        default=False,
        metadata={
            "help": "with constrained_decoding: every rule but the order of the conjuncts, which SEM does not "
            "score (a model that writes a phrase's nmod after the verb's roles keeps that right form)"
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
        from ..models import CLASSIFIERS, SEQ2SEQ_ARCHITECTURES

        if self.arch not in SEQ2SEQ_ARCHITECTURES + CLASSIFIERS:
            raise ConfigError(f"arch={self.arch!r} is not one of {', '.join(SEQ2SEQ_ARCHITECTURES + CLASSIFIERS)}")
        if self.metric not in METRICS:
            raise ConfigError(f"metric={self.metric!r} is not one of {', '.join(METRICS)}")
        if self.cpu_bf16 not in ("auto", "true", "false"):
            raise ConfigError(f"cpu_bf16={self.cpu_bf16!r} is not one of auto, true, false")
        bad = [sp for sp in self.curve_splits if sp not in SPLITS]
        if bad:
            raise ConfigError(f"curve_splits: {', '.join(map(repr, bad))} not among {', '.join(SPLITS)}")
        if self.curve_samples < 1:
            raise ConfigError(f"curve_samples must be a positive integer, got {self.curve_samples}")
        if self.decode_cap_per_source_word < 0 or self.decode_cap_margin < 1:
            raise ConfigError("decode_cap_per_source_word must be 0 (off) or positive and decode_cap_margin at "
                              f"least 1, got {self.decode_cap_per_source_word} and {self.decode_cap_margin}")
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
        for name in _MAPPING_FIELDS:
            setattr(self, name, _as_mapping(name, getattr(self, name)))
        if (self.dataset is None) == (not self.data_files):
            raise ConfigError("give exactly one of `dataset` (an hf_recogs config name) or `data_files`")
        if self.data_files:
            self._check_data_files()
        else:
            self._check_dataset()
        self._check_task()
        self._check_input_structure()
        self._check_oversample()
        self._check_target_order()
        for name in ("max_train_samples", "max_eval_samples", "cpu_threads"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be a positive integer or null, got {value}")
        if self.max_positions < 8:
            raise ConfigError(f"max_positions must be at least 8, got {self.max_positions}")

    def _check_task(self) -> None:
        """A classification config trains a classifier, a seq2seq config a seq2seq model."""
        from ..models import CLASSIFIERS
        from .data import resolve_metric

        metric = resolve_metric(self)
        if (metric == "classification") != (self.arch in CLASSIFIERS):
            if metric == "classification":
                raise ConfigError(f"arch={self.arch!r} is a seq2seq model; (input, candidate) classification "
                                  f"trains {' or '.join(CLASSIFIERS)}")
            raise ConfigError(f"arch={self.arch!r} is a classifier; it trains on a classification config "
                              "(e.g. recogs_pos_cls) or data_files with metric: classification")

    def _check_input_structure(self) -> None:
        """structure_transformer reads our parse of COGS-grammar inputs: refuse other benchmarks now."""
        from ..models import STRUCTURE_ARCHITECTURES

        if self.arch in STRUCTURE_ARCHITECTURES:
            from .data import check_structure_family

            check_structure_family(self.dataset, self.arch)

    def _check_oversample(self) -> None:
        """``oversample``: kinds the dataset declares (``DatasetConfig.row_kinds``), each a whole number of times."""
        if not self.oversample:
            return
        kinds = {}
        if self.dataset:
            from ..registry import get_config

            kinds = get_config(self.dataset).row_kinds
        for kind, times in self.oversample.items():
            if kind not in kinds:
                declared = ", ".join(kinds) or "none"
                raise ConfigError(f"oversample: {self.dataset or 'data_files'} declares no row kind {kind!r} "
                                  f"(declared: {declared})")
            if type(times) is not int or times < 1:
                raise ConfigError(f"oversample: {kind} must repeat a whole number of times (1 or more), got {times!r}")

    def _check_target_order(self) -> None:
        """``depth_first``, ``nmod_last`` and ``arguments_first`` rewrite the outputs in ways only SEM reads
        through (the latter after its inverse): refuse them where the metric is another."""
        if self.target_order not in TARGET_ORDERS:
            raise ConfigError(f"target_order={self.target_order!r} is not one of {', '.join(TARGET_ORDERS)}")
        from .data import resolve_metric

        metric = resolve_metric(self)
        if self.target_order != "dataset" and metric != "sem":
            raise ConfigError(f"target_order={self.target_order} rewrites ReCOGS forms for SEM; "
                              f"{self.dataset or 'this run'} is scored by {metric}: leave target_order out")

    def _check_data_files(self) -> None:
        bad = [s for s in self.data_files if s not in SPLITS]
        if bad:
            raise ConfigError(f"data_files: split names {bad} are not among {', '.join(SPLITS)}")
        if "train" not in self.data_files:
            raise ConfigError("data_files needs a 'train' file")
        for split, path in self.data_files.items():
            if not Path(path).is_file():
                raise ConfigError(f"data_files: {split} file {path!r} not found")

    def _check_dataset(self) -> None:
        from ..registry import get_config

        try:
            spec = get_config(self.dataset)  # its message suggests the closest name
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        try:
            spec.resolve_params(self.dataset_params)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None



_MAPPING_FIELDS = ("dataset_params", "data_files", "model_overrides", "oversample")


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
        else:  # one word: a value such as -1e-3 is not taken for an option
            argv.append(f"--{key}={value}")
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
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeyLoader)  # a safe loader
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
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _make_parser()
    if any(a in ("-h", "--help") for a in argv):
        parser.print_help()
        raise SystemExit(0)
    config_path, values, passthrough = _read_options(argv)
    _fill_run_defaults(values, passthrough, config_path)
    exp, targs = _build(parser, values, passthrough)
    _check_combinations(exp, targs)
    exp.config_path = str(config_path) if config_path is not None else None  # for the model card
    return exp, targs


def _read_options(argv: list[str]) -> tuple[Path | None, dict[str, Any], list[str]]:
    """(the YAML file, its options updated by the ``key=value`` overrides, the ``--key value`` words left for
    argparse); unknown keys are refused here, with a suggestion."""
    import yaml

    known = _option_fields()
    config_path: Path | None = None
    if argv and argv[0].endswith((".yaml", ".yml")) and not argv[0].startswith("-"):
        config_path = Path(argv.pop(0))
    values: dict[str, Any] = {}
    if config_path is not None:
        values = _read_yaml(config_path)
        for key in values:
            if key not in known:
                raise ConfigError(f"{config_path}: unknown option {key!r}{_suggest(key, known)}; "
                                  "see `python train.py --help` for the valid options")
    passthrough: list[str] = []
    for item in argv:
        if "=" in item and not item.startswith("-"):
            key, _, raw = item.partition("=")
            key = key.strip()
            if key not in known:
                raise ConfigError(f"unknown option {key!r} on the command line{_suggest(key, known)}; "
                                  "see `python train.py --help`")
            if not raw.strip():
                raise ConfigError(f"{key}= has no value; give one (e.g. {key}=<value>) or leave it out for the "
                                  "default")
            try:
                values[key] = yaml.load(raw, Loader=_options_loader())  # a safe loader
            except yaml.YAMLError:
                values[key] = raw
        elif item.endswith((".yaml", ".yml")) and not item.startswith("-") and not passthrough:
            raise ConfigError(f"the config file must come first and only once: {item!r}")
        else:
            passthrough.append(item)
    for key, value in values.items():  # the YAML 1.1 words, for options that only take a boolean
        if isinstance(value, str) and value.lower() in YAML11_BOOLEANS and _takes_only_bool(known[key]):
            values[key] = YAML11_BOOLEANS[value.lower()]
        if isinstance(value, (list, tuple)) and not _takes_list(known[key]):
            hint = " (a mapping such as {key: value})" if key in _MAPPING_FIELDS else ""
            raise ConfigError(f"{key} takes a single value{hint}, not the list {value!r}")
    return config_path, values, passthrough


def _fill_run_defaults(values: dict[str, Any], passthrough: list[str], config_path: Path | None) -> None:
    """Our defaults where they differ from the Trainer's, unless the user gave the option."""
    if config_path is not None and isinstance(values.get("data_files"), dict):  # relative to the YAML file
        values["data_files"] = {
            split: str(p if Path(p).is_absolute() or not (config_path.parent / p).exists() else config_path.parent / p)
            for split, p in values["data_files"].items()
        }
    if "use_cpu" not in values and "--use_cpu" not in passthrough and not cuda_available():
        # CPU-only machine: use_cpu makes accelerate's state MULTI_CPU (gloo) under a multi-process launcher;
        # without it each process would silently train alone on all the data.
        values["use_cpu"] = True
    if "do_train" not in values and not any(a.startswith("--do_train") for a in passthrough):
        values["do_train"] = True  # TrainingArguments defaults to False, which the Trainer ignores; we honour it
    if "output_dir" not in values and config_path is not None:
        values["output_dir"] = str(Path("outputs") / config_path.stem)


def _build(parser, values: dict[str, Any], passthrough: list[str]):
    """The two dataclasses from the options; their own checks' errors become one line."""
    known = _option_fields()
    try:
        exp, targs, remaining = parser.parse_args_into_dataclasses(
            args=_to_argv(values) + passthrough, return_remaining_strings=True, look_for_args_file=False
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
    return exp, targs


def _check_combinations(exp: ExperimentArguments, targs) -> None:
    """Checks across the two dataclasses."""
    if targs.max_steps <= 0 and targs.num_train_epochs <= 0 and targs.do_train:
        raise ConfigError(f"num_train_epochs={targs.num_train_epochs} trains nothing; give a positive "
                          "num_train_epochs or max_steps")
    for name in ("per_device_train_batch_size", "per_device_eval_batch_size"):
        if getattr(targs, name) < 1:
            raise ConfigError(f"{name}={getattr(targs, name)} must be at least 1")
    _check_optimiser(targs)
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
    if exp.decode_cap_per_source_word and (targs.generation_num_beams or 1) > 1:
        raise ConfigError("decode_cap_per_source_word cuts rows of greedy decoding: set generation_num_beams=1 or "
                          "decode_cap_per_source_word=0")
    if exp.constrained_decoding and (targs.generation_num_beams or 1) > 1:
        raise ConfigError("constrained_decoding constrains greedy decoding: set generation_num_beams=1 or "
                          "constrained_decoding=false")
    if exp.constrained_any_order and not exp.constrained_decoding:
        raise ConfigError("constrained_any_order loosens the rules of constrained_decoding: add "
                          "constrained_decoding=true or leave constrained_any_order out")
    best = (targs.metric_for_best_model or "") if targs.load_best_model_at_end else ""
    if re.search(r"(^|_)(gen|test)(_|$)", best):
        raise ConfigError(f"metric_for_best_model={best!r} would select the model on gen/test; select on "
                          "validation (e.g. eval_validation_sem_match) or take the last checkpoint")


def _check_optimiser(targs) -> None:
    """The values AdamW would refuse after the model is built, refused here in one line instead."""
    for name in ("learning_rate", "adam_epsilon", "weight_decay"):
        if getattr(targs, name) < 0:
            raise ConfigError(f"{name}={getattr(targs, name)} must not be negative")
    for name in ("adam_beta1", "adam_beta2"):
        if not 0 <= getattr(targs, name) < 1:
            raise ConfigError(f"{name}={getattr(targs, name)} must be at least 0 and below 1")


def _check_model_overrides(exp: ExperimentArguments) -> None:
    """Build the model's config now, so that e.g. d_model not divisible by the heads is a one-line error before
    any data is loaded."""
    from huggingface_hub.errors import StrictDataclassError

    from ..models import build_config

    try:
        build_config(exp.arch, vocab_size=16, max_positions=exp.max_positions, **exp.model_overrides)
    except (ValueError, TypeError, StrictDataclassError) as exc:
        # a config's own checks (``validate_architecture``) arrive wrapped: their cause is the message
        exc = exc.__cause__ if isinstance(exc, StrictDataclassError) and exc.__cause__ is not None else exc
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"model_overrides for {exp.arch}: {first}") from None


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
