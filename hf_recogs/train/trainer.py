"""``BaselineTrainer``, the ``Seq2SeqTrainer`` of our runs, and the callbacks it trains with.

What it adds to ``Seq2SeqTrainer``: weight decay on every parameter (the ReCOGS reference), token-weighted
losses, batches grouped by source + target length, and evaluations that log learning curves on fixed samples
(never used to select a model on gen or test) and the shuffled-source gap. See docs/TRAINING.md.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from pathlib import Path

import torch
from transformers import Seq2SeqTrainer, TrainerCallback
from transformers.trainer_pt_utils import LengthGroupedSampler

from ..scoring import group_display, score_pairs, score_rows, summarize
from .decode import classify, decode

logger = logging.getLogger("hf_recogs.train")

SOURCE_CHECK_STEPS = (50, 100, 200, 400, 800, 1600)
SOURCE_GAP_MIN = 0.01  # nats per target token; a model that reads its source is far above this within ~100 steps
TRAINING_TIME_FILE = "training_time.json"


class BaselineTrainer(Seq2SeqTrainer):
    def __init__(self, *args, decay_all=False, curve_sets=None, metric="sem", category_groups=None,
                 source_monitor=None, curve_max_length=512, curve_length_cap=None, curve_constrained=False,
                 curve_any_order=False, curve_log=None, cpu_bf16=False, tokens_per_batch=None, source_layout=None,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.source_layout = source_layout  # structure_transformer: curve decoding lays its sources out too
        self.tokens_per_batch = tokens_per_batch  # set: loss_weighting token
        self.cpu_bf16 = cpu_bf16  # our own decoding loops autocast like the Trainer's steps
        self.decay_all, self.curve_sets, self.metric = decay_all, curve_sets or {}, metric
        self.category_groups = category_groups
        self.source_monitor, self.curve_max_length, self.curve_log = source_monitor, curve_max_length, curve_log
        self.curve_length_cap = curve_length_cap
        self.curve_constrained, self.curve_any_order = curve_constrained, curve_any_order

    def get_decay_parameter_names(self, model):
        if self.decay_all:  # the ReCOGS reference decays biases and LayerNorm weights too
            return [name for name, p in model.named_parameters() if p.requires_grad]
        return super().get_decay_parameter_names(model)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self.tokens_per_batch is None or not model.training:
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        # The models return the mean over the batch's target tokens; rescale it to their sum over the training
        # set's mean per batch, so that a long batch counts for its tokens.
        n_tokens = (inputs["labels"] != -100).sum()
        loss, outputs = super().compute_loss(model, inputs, True, num_items_in_batch)
        loss = loss * (n_tokens / self.tokens_per_batch)
        return (loss, outputs) if return_outputs else loss

    def _get_train_sampler(self, train_dataset=None):
        # The Trainer groups by source length only (it drops a `length` column before sampling); decoder cost
        # follows the target, so group by source + target tokens.
        dataset = train_dataset if train_dataset is not None else self.train_dataset
        if self.args.train_sampling_strategy != "group_by_length" or "length" not in dataset.column_names:
            return super()._get_train_sampler(train_dataset)
        return LengthGroupedSampler(self.args.train_batch_size * self.args.gradient_accumulation_steps,
                                    dataset=dataset, lengths=dataset["length"])

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval", **gen_kwargs):
        """Loss and source gap on the fixed validation sample, and greedy-decoded scores on the fixed curve
        samples; logged (and written to ``curves.jsonl``), never used to pick a checkpoint on gen/test."""
        metrics: dict[str, float] = {}
        if self.is_world_process_zero():
            model = self.accelerator.unwrap_model(self.model)
            if self.source_monitor is not None:
                loss, gap = source_gap(model, self.source_monitor.batches, self.cpu_bf16)
                metrics[f"{metric_key_prefix}_loss"] = loss
                metrics[f"{metric_key_prefix}_source_gap"] = gap
            for split, rows in self.curve_sets.items():
                metrics.update(self._curve_scores(model, split, rows, metric_key_prefix))
            metrics["epoch"] = self.state.epoch
            if self.curve_log is not None:
                with open(self.curve_log, "a", encoding="utf-8") as f:
                    f.write(json.dumps({"step": self.state.global_step, **metrics}) + "\n")
        self.log(metrics)
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        return metrics

    def _curve_scores(self, model, split: str, rows, prefix: str) -> dict[str, float]:
        """The primary score of one curve sample, overall and for the config's brief groups (decoded by the
        main process alone: the others wait at the next step)."""
        layout = self.source_layout
        predictions = decode(model, self.processing_class, list(rows["input"]), self.curve_max_length,
                             self.args.per_device_eval_batch_size, self.cpu_bf16, shared=False,
                             encode=layout.batch if layout is not None else None,
                             length_cap=self.curve_length_cap, constrained=self.curve_constrained,
                             any_order=self.curve_any_order)
        records = score_rows(predictions, rows["output"], rows["category"], self.metric, inputs=rows["input"])
        summary = summarize(records, self.metric, self.category_groups)
        key = summary["primary"]
        scores = {f"{prefix}_{split}_{key}": summary[key]}
        for group in group_display(summary)["brief"]:
            if group in summary["groups"]:
                scores[f"{prefix}_{split}_{group}_{key}"] = summary["groups"][group][key]
        return scores


class ClassifierTrainer(BaselineTrainer):
    """The trainer of the (input, candidate) classifiers: the same options and curves, scored by ROC AUC of
    the classifier's probabilities on the fixed curve samples."""

    def _curve_scores(self, model, split: str, rows, prefix: str) -> dict[str, float]:
        listed = rows.to_list()
        probabilities = classify(model, self.data_collator, listed, self.args.per_device_eval_batch_size,
                                 self.cpu_bf16, shared=False)
        summary = summarize(score_pairs(probabilities, listed), "classification", self.category_groups)
        return {f"{prefix}_{split}_roc_auc": summary["roc_auc"], f"{prefix}_{split}_accuracy": summary["accuracy"]}


def source_gap(model, batches, bf16: bool = False) -> tuple[float, float]:
    """(loss with the true sources, loss with every row given another row's source) on fixed ``batches``.

    The difference is how much the model's predictions depend on its input. A model that has learnt the
    targets' language but ignores the source (the collapse ``transformer`` shows with the reference init, see
    ``hf_recogs.models.transformer``) has a large drop in loss and a gap of ~0.
    """
    was_training = model.training
    model.eval()
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    true_losses, shuffled_losses = [], []
    device = next(model.parameters()).device
    with torch.no_grad(), autocast:
        for batch in batches:
            batch = {k: v.to(device) for k, v in batch.items()}
            true_losses.append(float(model(**batch).loss))
            # every row gets the previous row's source (its mask and, for structure_transformer, its tree too);
            # labels stay
            sources = ("input_ids", "attention_mask", "relation_ids", "function_ids")
            rolled = dict(batch, **{k: batch[k].roll(1, 0) for k in sources if k in batch})
            shuffled_losses.append(float(model(**rolled).loss))
    model.train(was_training)
    true_loss = sum(true_losses) / len(true_losses)
    return true_loss, sum(shuffled_losses) / len(shuffled_losses) - true_loss


class SourceUseMonitor(TrainerCallback):
    """Logs ``source_gap`` early in training and warns when the model ignores its source."""

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


class TrainingClock(TrainerCallback):
    """The training time of a run across its resumes.

    Each process that trains is one *part* (steps from → to, wall seconds, torch threads, processes, and the CPU
    seconds of the main process, all its threads). Every checkpoint carries the parts so far in
    ``training_time.json``, so a run resumed from it reports the time of the whole run. A checkpoint written
    before this file existed gives a part with ``wall_s: null`` (unknown). Wall × threads is what the run held;
    the CPU seconds are what it used (the main process's only: all of it when the run is one process), and unlike
    the wall clock they do not grow while another job holds the core or the process is stopped.
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
        self.cpu_started = self.cpu_ended = None
        self.first_step = 0

    def parts(self, state, world_size: int) -> list[dict]:
        if self.started is None:
            return list(self.earlier)
        wall = (self.ended or time.perf_counter()) - self.started
        cpu = (self.cpu_ended or time.process_time()) - self.cpu_started
        now = {"from_step": self.first_step, "to_step": state.global_step, "wall_s": round(wall, 1),
               "threads": torch.get_num_threads(), "processes": world_size, "process_cpu_s": round(cpu, 1)}
        return [*self.earlier, now] if now["to_step"] > now["from_step"] else list(self.earlier)

    def on_train_begin(self, args, state, control, **kwargs):
        self.started, self.cpu_started = time.perf_counter(), time.process_time()
        self.first_step = state.global_step

    def on_train_end(self, args, state, control, **kwargs):
        self.ended, self.cpu_ended = time.perf_counter(), time.process_time()

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if folder.is_dir():
                parts = self.parts(state, args.world_size)
                (folder / TRAINING_TIME_FILE).write_text(json.dumps({"parts": parts}, indent=1), encoding="utf-8")


def training_time(parts: list[dict]) -> dict:
    """Totals of a run's parts: wall seconds, thread-seconds (wall × torch threads × processes) and CPU seconds,
    each ``None`` when a part does not know it (a part recorded before the CPU seconds were has only the first
    two). A part of several processes knows only its main process's CPU seconds, not the run's: the total is
    ``None`` then too, while the part keeps its own figure."""
    known = all(p["wall_s"] is not None for p in parts)
    cpu_known = all(p.get("process_cpu_s") is not None and p["processes"] == 1 for p in parts)
    return {
        "wall_s": round(sum(p["wall_s"] for p in parts), 1) if known else None,
        "cpu_thread_s": (round(sum(p["wall_s"] * p["threads"] * p["processes"] for p in parts), 1)
                         if known else None),
        "process_cpu_s": round(sum(p["process_cpu_s"] for p in parts), 1) if cpu_known else None,
        "parts": parts,
    }
