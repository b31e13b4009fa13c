"""``train.py``: train every seed of a config, decode and score its splits, write the run record and report.

The stages, in the order ``main`` calls them::

    parse_args → load_raw_data → build_vocabulary → for each seed: train_seed (build_model → BaselineTrainer.train
    → save) → evaluate_splits (decode → score_rows → summarize) → RunRecord.write → write_run_report
    → write_aggregate over the seeds → push (optional)

A classification config (its metric is ``classification``: (input, candidate, label) rows) takes the same
stages with a classifier: the rows stay text, ``PairCollator`` annotates and lays out each pair,
``ClassifierTrainer`` trains, and ``evaluate_splits`` classifies (``classify → score_pairs``) instead of decoding.
``do_train=false`` runs only the evaluation stages on a saved model (``evaluate_saved_model``).
"""

from __future__ import annotations

import copy
import errno
import json
import logging
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .arguments import ConfigError, ExperimentArguments, parse_args
from .data import (
    StructureSeq2SeqCollator,
    build_vocabulary,
    category_groups,
    curve_samples,
    is_classification,
    load_raw_data,
    resolve_metric,
    source_check_batches,
    source_layout,
    subset,
    tokenize_dataset,
    tokens_per_batch,
    training_rows,
    with_pair_lengths,
)
from .hardware import configure_cpu_threads, cuda_available, use_cpu_bf16
from .record import RunRecord, environment, recorded_hyperparameters, training_record

logger = logging.getLogger("hf_recogs.train")


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
    from ..sources import SourceError

    try:
        check_writable(Path(targs.output_dir))
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


def run(exp: ExperimentArguments, targs, command: str = "") -> int:
    import datasets

    datasets.disable_progress_bars()
    out_dir = Path(targs.output_dir)
    seeds = list(exp.seeds) or [targs.seed]
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"seeds must be distinct, got {seeds}")
    with targs.main_process_first(local=False, desc="load dataset"):
        raw = load_raw_data(exp)
    missing = [s for s in exp.eval_splits if s not in raw]
    if missing:
        logger.warning("dataset has no %s split(s); they are not evaluated", ", ".join(missing))
    if exp.constrained_decoding:
        check_form_rules(exp, raw)
    if not targs.do_train:
        return evaluate_saved_model(exp, targs, raw, command)
    tokenizer = build_vocabulary(exp, raw)
    records = []
    for seed in seeds:
        seed_dir = out_dir / f"seed_{seed}"
        if (seed_dir / "results.json").is_file() and not exp.overwrite_output_dir:
            logger.info("seed %d: %s exists, skipping (set overwrite_output_dir: true to retrain)", seed,
                        seed_dir / "results.json")
            records.append(json.loads((seed_dir / "results.json").read_text()))
            continue
        resume = prepare_seed_dir(exp, targs, seed_dir, len(seeds))
        records.append(train_seed(exp, targs, seed, seed_dir, raw, tokenizer, resume, command))
    if int(os.environ.get("RANK", "0")) != 0:
        return 0
    if len(records) > 1:
        from ..report import write_aggregate

        write_aggregate(out_dir, records)
    if targs.push_to_hub and not push_seeds(exp, targs, out_dir, records):
        return 1
    _say_where(out_dir, records)
    return 0


def check_form_rules(exp: ExperimentArguments, raw) -> None:
    """``constrained_decoding``: its rules must hold on every training target, or they do not fit the dataset."""
    from ..form_rules import RuleError, check_targets

    if is_classification(exp):
        raise ConfigError("constrained_decoding constrains the logical forms a seq2seq model writes; a "
                          "classification config scores candidates: leave constrained_decoding out")
    if "train" not in raw:
        raise ConfigError("constrained_decoding checks its rules on the training targets and this dataset has no "
                          "train split: leave constrained_decoding out")
    try:
        checked = check_targets(raw["train"]["input"], raw["train"]["output"], exp.constrained_any_order)
    except RuleError as exc:
        raise ConfigError(f"constrained_decoding: {exc}; the rules are those of ReCOGS_pos forms: leave "
                          "constrained_decoding out for this dataset") from None
    logger.info("constrained decoding: the form rules hold on all %d training targets", checked)


def train_seed(exp, targs, seed: int, seed_dir: Path, raw, tokenizer, resume: str | None, command: str) -> dict:
    """Train one seed in ``seed_dir``, save its model, then evaluate it; returns the record (on every process)."""
    from transformers import DataCollatorForSeq2Seq, set_seed

    from ..models import build_model
    from .trainer import SourceUseMonitor, TrainingClock

    args = seed_training_arguments(exp, targs, seed, seed_dir, training=True)
    cpu_bf16 = use_cpu_bf16(exp.cpu_bf16, args.use_cpu)
    _autocast_in_training_steps(args, cpu_bf16)
    set_seed(seed)
    pairs = None if is_classification(exp) else (raw["train"]["input"], raw["train"]["output"])
    model = build_model(exp.arch, tokenizer, max_positions=exp.max_positions, training_pairs=pairs,
                        **exp.model_overrides)
    if exp.target_order == "arguments_first":  # saved with the model: its outputs go back before scoring
        model.config.hf_recogs_target_order = exp.target_order
    train_raw = training_rows(exp, raw, seed)
    monitor = None
    layout = source_layout(exp, tokenizer, model.config)  # structure_transformer: inputs with their trees
    if is_classification(exp):  # rows stay text: the collator annotates and lays out each pair
        train_ds, collator = train_raw, pair_collator(exp, tokenizer, model)
        if exp.data_order == "grouped":
            train_ds = with_pair_lengths(train_raw)
    else:
        train_ds = tokenize_dataset(train_raw, tokenizer, exp.max_positions, layout)
        collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100, padding=True)
        if layout is not None:
            collator = StructureSeq2SeqCollator(collator)
            logger.info("seed %d: input structure from %s; %d of %d training inputs did not parse (no tree)",
                        seed, layout.parser_name, layout.count_unparsed(train_raw["input"]), len(train_raw))
        if exp.source_check:
            monitor = SourceUseMonitor(source_check_batches(raw, tokenizer, exp.max_positions, collator,
                                                            layout=layout, target_order=exp.target_order), cpu_bf16)
    clock = TrainingClock(resume)
    seed_dir.mkdir(parents=True, exist_ok=True)
    trainer = build_trainer(exp, args, model, tokenizer, collator, train_ds, raw, cpu_bf16, seed_dir,
                            callbacks=[c for c in (monitor, clock, _early_stopping(exp)) if c], monitor=monitor,
                            layout=layout)
    if resume:
        logger.info("seed %d: resuming from %s", seed, resume)
    if resume and ends_training(resume, args.max_steps):
        train_out = restore_finished_training(trainer, resume)
    else:
        train_out = trainer.train(resume_from_checkpoint=resume)
    trainer.save_model(str(seed_dir))
    if trainer.is_world_process_zero() and not is_classification(exp):
        model.generation_config.save_pretrained(str(seed_dir))
    train = training_record(trainer.state.log_history, train_out, _training_time(clock, trainer.state, args),
                            args.num_train_epochs, trainer.state.epoch, len(train_raw), resume)
    splits = evaluate_splits(exp, args, model, tokenizer, raw, seed_dir, cpu_bf16, collator, layout)
    record = RunRecord(
        dataset=exp.dataset or "data_files", dataset_params=exp.dataset_params, arch=exp.arch,
        metric=resolve_metric(exp), seed=seed, num_parameters=sum(p.numel() for p in model.parameters()),
        vocab_size=len(tokenizer), bf16=bool(args.bf16), mixed_precision=trainer.accelerator.mixed_precision,
        train=train, hyperparameters=recorded_hyperparameters(exp, args), splits=splits, command=command,
        environment=environment(), input_structure=_input_structure(exp, layout, model, train_raw, raw),
    )
    return finish_seed(trainer.accelerator, seed_dir, record, training=True)


def check_model_kind(exp: ExperimentArguments, config) -> None:
    """A saved classifier under a seq2seq config, or a seq2seq model under a classification config, is refused
    with one line. Otherwise a classifier under a seq2seq config fails in the Auto class with a message that
    names no fix, and a Bart checkpoint under a classification config loads as a classifier with a fresh, random
    head and then fails in the pair collator with a traceback. Models whose config names no architecture (some Hub
    ids) pass."""
    names = getattr(config, "architectures", None) or []
    if not names:
        return
    saved_classifier = any(name.endswith("ForSequenceClassification") for name in names)
    if saved_classifier == is_classification(exp):
        return
    dataset = exp.dataset or "data_files"
    if saved_classifier:
        raise ConfigError(f"model_name_or_path={exp.model_name_or_path!r} is an (input, candidate) classifier and "
                          f"{dataset!r} is a seq2seq dataset; evaluate it with the config of a *_cls dataset "
                          "(e.g. configs/recogs_pos_cls_structure.yaml)")
    raise ConfigError(f"model_name_or_path={exp.model_name_or_path!r} is a seq2seq model ({names[0]}) and "
                      f"{dataset!r} is a classification dataset; evaluate it with the config of a seq2seq dataset "
                      "(e.g. configs/recogs_pos_transformer_fast.yaml)")


def _unloadable(exp: ExperimentArguments, exc: Exception) -> ConfigError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ConfigError(f"model_name_or_path={exp.model_name_or_path!r} could not be loaded ({first}); "
                       "give a folder written by train.py or a Hub model id")


def evaluate_saved_model(exp: ExperimentArguments, targs, raw, command: str) -> int:
    """``do_train=false``: decode and score ``model_name_or_path`` on ``eval_splits`` into
    ``<output_dir>/evaluation/``."""
    from accelerate import Accelerator
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoModelForSequenceClassification, AutoTokenizer

    from .. import models  # noqa: F401  (registers our models with the Auto classes)
    from ..scoring import one_line

    auto_class = AutoModelForSequenceClassification if is_classification(exp) else AutoModelForSeq2SeqLM
    try:
        tokenizer = AutoTokenizer.from_pretrained(exp.model_name_or_path)
        config = AutoConfig.from_pretrained(exp.model_name_or_path)
    except (OSError, ValueError) as exc:
        raise _unloadable(exp, exc) from None
    check_model_kind(exp, config)
    try:
        model = auto_class.from_pretrained(exp.model_name_or_path, config=config)
    except (OSError, ValueError) as exc:
        raise _unloadable(exp, exc) from None
    out_dir = Path(targs.output_dir) / "evaluation"
    trained = trained_record(exp.model_name_or_path)
    seed = trained.seed if trained is not None else None
    args = seed_training_arguments(exp, targs, targs.seed, out_dir, training=False)
    accelerator = Accelerator(cpu=args.use_cpu)
    model = model.to(accelerator.device)
    cpu_bf16 = evaluation_precision(exp.cpu_bf16, args.use_cpu, trained)
    if accelerator.is_main_process:
        logger.info("evaluating %s (seed %s) in %s%s", exp.model_name_or_path, "unknown" if seed is None else seed,
                    "bf16" if cpu_bf16 else "fp32",
                    " as it was trained" if trained is not None and exp.cpu_bf16 == "auto" else "")
    out_dir.mkdir(parents=True, exist_ok=True)
    collator = pair_collator(exp, tokenizer, model) if is_classification(exp) else None
    layout = source_layout(exp, tokenizer, model.config)  # a structure_transformer checkpoint reads trees
    splits = evaluate_splits(exp, args, model, tokenizer, raw, out_dir, cpu_bf16, collator, layout)
    record = RunRecord(
        dataset=exp.dataset or "data_files", dataset_params=exp.dataset_params, arch=exp.arch,
        metric=resolve_metric(exp), seed=seed, num_parameters=sum(p.numel() for p in model.parameters()),
        vocab_size=len(tokenizer), bf16=cpu_bf16, mixed_precision="bf16" if cpu_bf16 else "no",
        evaluated_model=exp.model_name_or_path, hyperparameters=recorded_hyperparameters(exp, args),
        model_record=None if trained is None else {k: v for k, v in trained.to_json().items() if k != "splits"},
        splits=splits, command=command, environment=environment(),
        input_structure=_input_structure(exp, layout, model, None, raw),
    )
    result = finish_seed(accelerator, out_dir, record, training=False)
    if accelerator.is_main_process:
        logger.info("evaluation: %s", one_line(result))
        logger.info("wrote the predictions, results.json and per_category.png to %s", out_dir)
    return 0


def trained_record(model_name_or_path: str) -> RunRecord | None:
    """The run record next to a model folder written by train.py (None for a Hub id or a bare model)."""
    path = Path(model_name_or_path) / "results.json"
    try:
        return RunRecord.read(path) if path.is_file() else None
    except (OSError, ValueError):
        logger.warning("%s is not a readable run record; the model's seed and precision are unknown", path)
        return None


def evaluation_precision(setting: str, use_cpu: bool, trained: RunRecord | None) -> bool:
    """Whether decoding autocasts to bf16 on the CPU: ``cpu_bf16: auto`` decodes a model in the precision its
    run record says it trained in (so a re-evaluation reproduces the published predictions on any CPU; bf16
    is emulated where the CPU lacks it), and follows the CPU for a model without a record; true / false are
    kept as given."""
    if setting != "auto" or trained is None or (cuda_available() and not use_cpu):
        return use_cpu_bf16(setting, use_cpu)
    return trained.precision == "bf16"


def seed_training_arguments(exp: ExperimentArguments, targs, seed: int, seed_dir: Path, training: bool):
    """The ``Seq2SeqTrainingArguments`` of one seed: the run's, with this seed, its folder and our choices."""
    import torch

    from ..models import STRUCTURE_ARCHITECTURES

    args = copy.deepcopy(targs)
    args.seed, args.output_dir = seed, str(seed_dir)
    args.predict_with_generate = True
    args.push_to_hub = False  # we push ourselves with our own model card (push_seeds)
    if args.data_seed is None:
        args.data_seed = seed
    if args.ddp_find_unused_parameters is None:
        # The reference BERT encoder carries a pooler whose output no loss uses.
        args.ddp_find_unused_parameters = exp.arch == "reference_transformer"
    if args.use_cpu or not torch.cuda.is_available():
        args.dataloader_pin_memory = False
    if exp.data_order == "fixed":
        args.train_sampling_strategy = "sequential"
    elif exp.data_order == "grouped":
        args.train_sampling_strategy = "group_by_length"
    if is_classification(exp):
        args.remove_unused_columns = False  # the collator reads the text columns
    if exp.arch in STRUCTURE_ARCHITECTURES:
        args.remove_unused_columns = False  # the collator reads the source_heads column
    if not training:
        # Evaluation only: the config's training-time evaluations and checkpoint choice do not apply.
        from transformers import IntervalStrategy

        args.eval_strategy, args.load_best_model_at_end = IntervalStrategy.NO, False
    return args


def _autocast_in_training_steps(args, cpu_bf16: bool) -> None:
    if cpu_bf16:
        # The Trainer's Accelerator reads ``mixed_precision``, which TrainingArguments derives from ``bf16`` in
        # __post_init__: setting ``bf16`` alone after construction would record bf16 and train in fp32.
        args.bf16, args.mixed_precision = True, "bf16"


def build_trainer(exp, args, model, tokenizer, collator, train_ds, raw, cpu_bf16: bool, seed_dir: Path,
                  callbacks, monitor, layout=None):
    from .trainer import BaselineTrainer, ClassifierTrainer

    evaluates = args.eval_strategy != "no"
    trainer_class = ClassifierTrainer if is_classification(exp) else BaselineTrainer
    return trainer_class(
        model=model, args=args, train_dataset=train_ds, data_collator=collator, processing_class=tokenizer,
        # our evaluate() reads the fixed samples, not eval_dataset; the Trainer only checks that one is given
        eval_dataset=train_ds if evaluates else None, callbacks=callbacks,
        decay_all=exp.decay_all_parameters, curve_sets=curve_samples(exp, raw) if evaluates else {},
        metric=resolve_metric(exp), category_groups=category_groups(exp), source_monitor=monitor,
        curve_max_length=args.generation_max_length or exp.max_positions, curve_length_cap=decode_length_cap(exp),
        curve_constrained=exp.constrained_decoding, curve_any_order=exp.constrained_any_order,
        curve_log=seed_dir / "curves.jsonl",
        cpu_bf16=cpu_bf16, source_layout=layout,
        tokens_per_batch=tokens_per_batch(train_ds, args.per_device_train_batch_size)
        if exp.loss_weighting == "token" and not is_classification(exp) else None,
    )


def evaluate_splits(exp, args, model, tokenizer, raw, seed_dir: Path, cpu_bf16: bool, collator=None,
                    layout=None) -> dict:
    """Predict and score every split of ``eval_splits`` (decode a seq2seq model, its inputs laid out by the
    structure ``layout`` when it has one; classify pairs through the pair ``collator``); writes
    ``predictions_<split>.jsonl``; returns the split summaries (the same on every process)."""
    from accelerate import PartialState

    from ..form_rules import RULES_VERSION
    from ..scoring import summarize, write_predictions

    metric, groups = resolve_metric(exp), category_groups(exp)
    main_process = PartialState().is_main_process
    splits: dict = {}
    for split in exp.eval_splits:
        if split not in raw:
            logger.warning("dataset has no %s split; skipped", split)
            continue
        rows = subset(raw[split], exp.max_eval_samples)
        logger.info("predicting %s (%d rows)", split, len(rows))
        started = time.perf_counter()
        cap, dead_ends = None, 0
        if metric == "classification":
            records = _classified(model, collator, rows, args, cpu_bf16, split)
        else:
            records, cap, dead_ends = _decoded(exp, args, model, tokenizer, rows, cpu_bf16, split, layout)
        if main_process:
            write_predictions(seed_dir / f"predictions_{split}.jsonl", records)
        splits[split] = summarize(records, metric, groups)
        if cap is not None:
            splits[split]["decode_cap"] = cap
        if metric != "classification" and exp.constrained_decoding:
            splits[split]["constrained_decoding"] = {"rows_at_dead_end": dead_ends, "rules_version": RULES_VERSION}
        splits[split]["loss"] = None  # prediction computes no loss
        splits[split]["runtime_s"] = round(time.perf_counter() - started, 2)
    return splits


def _decoded(exp, args, model, tokenizer, rows, cpu_bf16: bool, split: str,
             layout=None) -> tuple[list[dict], dict | None, int]:
    """(the scored rows, what the length cap did: None without ``decode_cap_per_source_word``, the rows that
    constrained decoding left at a dead end)."""
    from ..scoring import score_rows
    from .decode import decode, length_caps

    max_length, sources = args.generation_max_length or exp.max_positions, list(rows["input"])
    cap = decode_length_cap(exp)
    predictions = decode(model, tokenizer, sources, max_length, args.per_device_eval_batch_size, cpu_bf16,
                         exp.max_positions, args.generation_num_beams or 1, desc=f"decoding {split}",
                         encode=layout.batch if layout is not None else None, length_cap=cap,
                         constrained=exp.constrained_decoding, any_order=exp.constrained_any_order)
    records = score_rows(predictions, rows["output"], rows["category"], resolve_metric(exp), inputs=rows["input"])
    dead_ends = len(predictions.dead_ends)
    if cap is None:
        return records, None, dead_ends
    caps = length_caps(sources, *cap, max_length)
    # the decoder's start token, then the gold's tokens as training wrote them
    gold_lengths = [1 + len(ids) for ids in tokenizer(list(rows["output"]))["input_ids"]]
    gold_over = sum(length > cap for length, cap in zip(gold_lengths, caps, strict=True))
    if gold_over:
        logger.warning("%s: %d gold forms are longer than their row's decoding cap; a cut row among them may have "
                       "been scored wrong for the cut alone: raise decode_cap_per_source_word or decode_cap_margin",
                       split, gold_over)
    return records, {"per_source_word": exp.decode_cap_per_source_word, "margin": exp.decode_cap_margin,
                     "rows_cut": len(predictions.cut), "gold_over_cap": gold_over}, dead_ends


def decode_length_cap(exp) -> tuple[float, int] | None:
    """``decode``'s ``length_cap`` from the run's options (None: off)."""
    return (exp.decode_cap_per_source_word, exp.decode_cap_margin) if exp.decode_cap_per_source_word else None


def _classified(model, collator, rows, args, cpu_bf16: bool, split: str) -> list[dict]:
    from ..scoring import score_pairs
    from .decode import classify

    listed = rows.to_list()
    probabilities = classify(model, collator, listed, args.per_device_eval_batch_size, cpu_bf16,
                             desc=f"classifying {split}")
    return score_pairs(probabilities, listed)


def _input_structure(exp, layout, model, train_raw, raw) -> dict | None:
    """What the run record says of the input structure a structure_transformer read (None: no structure):
    the track, the parser, the model's structure settings and the inputs that did not parse, per split."""
    if layout is None:
        return None
    from .record import structure_settings

    unparsed = {} if train_raw is None else {"train": layout.count_unparsed(train_raw["input"])}
    for split in exp.eval_splits:
        if split in raw:
            unparsed[split] = layout.count_unparsed(subset(raw[split], exp.max_eval_samples)["input"])
    return {**structure_settings(model.config), "parser": layout.parser_name, "unparsed_inputs": unparsed}


def pair_collator(exp, tokenizer, model):
    """The collator of a classification run: pairs annotated by the config's annotator, with structure tokens
    as the model was built to read them."""
    from .data import PairCollator, pair_annotator

    return PairCollator(tokenizer, pair_annotator(exp), structure_tokens=model.config.structure_tokens,
                        max_length=model.config.max_position_embeddings,
                        relations=getattr(model, "reads_relations", True))


def ends_training(checkpoint: str, max_steps: int) -> bool:
    """Whether a checkpoint is the last step of a ``max_steps`` run (killed before it wrote its results):
    transformers would take one more optimizer step when resuming a run that ended mid-epoch."""
    state = json.loads((Path(checkpoint) / "trainer_state.json").read_text(encoding="utf-8"))
    return max_steps > 0 and state.get("global_step", 0) >= max_steps


def restore_finished_training(trainer, checkpoint: str):
    """The model and Trainer state of a finished run's last checkpoint, without training; a ``TrainOutput``
    like ``train()``'s (its loss of this process is unknown: the checkpoint was written before it was)."""
    from transformers import TrainerState
    from transformers.trainer_utils import TrainOutput

    trainer._load_from_checkpoint(checkpoint)
    trainer.state = TrainerState.load_from_json(str(Path(checkpoint) / "trainer_state.json"))
    logger.info("%s is the last step of training: evaluating it without training further", checkpoint)
    return TrainOutput(trainer.state.global_step, None, {})


def finish_seed(accelerator, seed_dir: Path, record: RunRecord, training: bool) -> dict:
    """Write the record and its report (main process); every process returns the record as a dict."""
    result = record.to_json()
    if accelerator.is_main_process:
        from ..report import write_run_report

        record.write(seed_dir / "results.json")
        write_run_report(seed_dir, result, training=training)
    accelerator.wait_for_everyone()
    return result


def _training_time(clock, state, args) -> dict:
    from .trainer import training_time

    return training_time(clock.parts(state, args.world_size))


def _early_stopping(exp: ExperimentArguments):
    if not exp.early_stopping_patience:
        return None
    from transformers import EarlyStoppingCallback

    return EarlyStoppingCallback(early_stopping_patience=exp.early_stopping_patience)


def push_seeds(exp, targs, out_dir: Path, records: list[dict]) -> bool:
    """Upload each seed folder with its model card (``hub_model_id``; several seeds: ``<id>-seed<n>``)."""
    from ..publish.model_push import HubPushError, push

    repo = targs.hub_model_id or out_dir.name
    for res in records:
        target = repo if len(records) == 1 else f"{repo}-seed{res['seed']}"
        try:
            url = push(out_dir / f"seed_{res['seed']}", target, token=targs.hub_token, endpoint=exp.hub_endpoint,
                       private=bool(targs.hub_private_repo))
        except HubPushError as exc:
            print(f"train.py: error: {exc}", file=sys.stderr)
            return False
        logger.info("pushed seed %s to %s", res["seed"], url)
    return True


def _say_where(out_dir: Path, records: list[dict]) -> None:
    from ..scoring import one_line

    for res in records:
        logger.info("seed %s: %s", res["seed"], one_line(res))
    folders = ", ".join(str(out_dir / f"seed_{res['seed']}") for res in records)
    aggregate = f" (aggregate.md in {out_dir})" if len(records) > 1 else ""
    logger.info("wrote the models, predictions, results.json and model cards to %s%s", folders, aggregate)


# ---------------------------------------------------------------------------------------------------------
# Output folders: checkpoints to resume, runs never mixed, nothing written lost


def check_writable(out_dir: Path) -> None:
    """Fail before any work when ``output_dir`` cannot hold files."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe = out_dir / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f"output_dir={str(out_dir)!r} is not writable ({exc.strerror or exc}); choose another "
                          "output_dir") from None


def prepare_seed_dir(exp: ExperimentArguments, targs, seed_dir: Path, n_seeds: int) -> str | None:
    """The checkpoint this seed resumes from (None: from scratch), after moving an old run aside if asked."""
    resume = resume_target(targs.resume_from_checkpoint, seed_dir, n_seeds)
    if exp.overwrite_output_dir and resume is None:
        move_aside(seed_dir)
    elif resume is None and last_checkpoint(seed_dir):
        # Training from scratch here would mix two runs' curves and let checkpoint rotation delete the old ones.
        raise ConfigError(f"{seed_dir} holds checkpoints of an unfinished run: add resume_from_checkpoint=true "
                          "to continue it, or overwrite_output_dir=true to start over (the old folder is kept "
                          "aside)")
    return resume


def last_checkpoint(folder: Path) -> str | None:
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


def resume_target(value: str | None, seed_dir: Path, n_seeds: int) -> str | None:
    if value is None or str(value).lower() in ("", "false", "no", "none"):
        return None
    if str(value).lower() in ("true", "yes", "last", "auto"):
        return last_checkpoint(seed_dir)  # None (start fresh) when this seed has no checkpoint yet
    if n_seeds > 1:
        raise ConfigError("resume_from_checkpoint with several seeds must be `true` (each seed resumes its last)")
    if not Path(value).is_dir():
        raise ConfigError(f"resume_from_checkpoint: {value!r} is not a checkpoint folder")
    return value


def move_aside(seed_dir: Path) -> None:
    """Before a seed is retrained from scratch, its old folder becomes ``<seed_dir>.previous-<time>``: nothing
    written is lost, and a run killed half way cannot leave old results next to new checkpoints (where a later
    resume would report the old results as its own)."""
    from accelerate import PartialState

    state = PartialState()
    if state.is_main_process and seed_dir.is_dir() and any(seed_dir.iterdir()):
        target = seed_dir.with_name(f"{seed_dir.name}.previous-{time.strftime('%Y%m%d-%H%M%S')}")
        seed_dir.rename(target)
        logger.warning("overwrite_output_dir: moved the previous %s to %s", seed_dir, target)
    state.wait_for_everyone()
