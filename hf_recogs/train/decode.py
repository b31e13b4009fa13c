"""Predictions for a split: decoding (seq2seq) or classifying (input, candidate) pairs; one path for one process
and for DDP, under the training's autocast, with a progress bar.

Rows are split into batches (sorted by length first: less padding), and the batches dealt round robin to the
processes; each process predicts its batches and the predictions are gathered and put back in the split's order.
Every process therefore computes exactly what a single process would for the same batch.
"""

from __future__ import annotations

import contextlib


def decode_ids(tokenizer, ids) -> list[str]:
    """Token ids (padding as -100 or pad) to whitespace-normalised text without special tokens."""
    import numpy as np

    ids = np.asarray(ids)
    ids = np.where(ids < 0, tokenizer.pad_token_id, ids)
    texts = tokenizer.batch_decode(ids.tolist(), skip_special_tokens=True, clean_up_tokenization_spaces=False)
    return [" ".join(t.split()) for t in texts]


class Predictions(list):
    """The predicted texts, in the sources' order; ``cut``: the indices of the rows that a length cap stopped
    before they ended (``decode``'s ``length_cap``; empty without one); ``dead_ends``: those that constrained
    decoding left with no allowed word, which then ended (``decode``'s ``constrained``; empty without it)."""

    cut: list[int]
    dead_ends: list[int]


def length_caps(sources: list[str], per_source_word: float, margin: int, max_length: int) -> list[int]:
    """Each row's length cap under ``length_cap=(per_source_word, margin)``: ``per_source_word`` tokens per
    whitespace word of its source plus ``margin``, counted as ``max_length`` counts (the decoder's start token
    included), and never above ``max_length``."""
    return [min(max_length, int(per_source_word * len(source.split())) + margin) for source in sources]


def decode(model, tokenizer, sources: list[str], max_length: int, batch_size: int = 64, bf16: bool = False,
           source_max_length: int | None = None, num_beams: int = 1, desc: str | None = None,
           shared: bool = True, encode=None, length_cap: tuple[float, int] | None = None,
           constrained: bool = False, any_order: bool = False) -> Predictions:
    """Predictions for ``sources``, in their order: greedy (``num_beams`` 1) or beam search.

    Outputs stop at ``max_length`` tokens; sources are cut at ``source_max_length`` (default ``max_length``), as
    training cuts them. ``desc`` names the progress bar (none without it). Under ``torch.distributed`` every
    process must call this with the same ``sources`` and each gets all the predictions; ``shared=False``: this
    process decodes every row alone (the others are not calling). ``encode``: sources -> the encoder's inputs
    (a structure_transformer's ``SourceLayout.batch``, which adds ``relation_ids``); default: the tokenizer.
    A model trained with ``target_order: arguments_first`` (``config.hf_recogs_target_order``) writes each
    conjunct's arguments first; its outputs are given back in the dataset's order.

    ``length_cap=(per_source_word, margin)`` (greedy only) stops each row at its own cap (``length_caps``) as
    ``max_length`` stops all of them: a batch ends when every row has ended or reached its cap, so a row that
    runs on no longer keeps a batch of short rows decoding to ``max_length``. The other rows' outputs do not
    change (greedy decoding computes each row alone); a cut row's output is the first tokens of the one it
    would have written, which did not end within its cap: wrong wherever the gold form fits in that cap.

    ``constrained`` (greedy only): every row keeps the rules of ReCOGS_pos forms (``hf_recogs.form_rules``)
    for its source (every rule but the order of the conjuncts with ``any_order``); the caller has checked them
    on the training targets."""
    import torch
    from transformers import LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

    from ..form_rules import ConstrainedDecoding

    if (length_cap is not None or constrained) and num_beams > 1:
        raise ValueError("length_cap and constrained are for greedy decoding; with num_beams > 1 leave them out")
    order = sorted(range(len(sources)), key=lambda i: len(sources[i].split()))
    device = next(model.parameters()).device

    class RowCaps(StoppingCriteria):
        def __init__(self, caps: torch.Tensor):
            self.caps = caps

        def __call__(self, input_ids, scores, **kwargs) -> torch.Tensor:
            return input_ids.shape[1] >= self.caps

    def predict(idx: list[int]) -> list[tuple[str, bool, bool]]:
        texts = [sources[i] for i in idx]
        if encode is None:
            enc = tokenizer(texts, return_tensors="pt", padding=True, truncation=True,
                            max_length=source_max_length or max_length)
        else:
            enc = encode(texts)
        enc = {k: v.to(device) for k, v in enc.items()}
        stopping, caps = None, None
        if length_cap is not None:
            caps = torch.tensor(length_caps(texts, *length_cap, max_length), device=device)
            stopping = StoppingCriteriaList([RowCaps(caps)])
        rules = ConstrainedDecoding(tokenizer, texts, any_order) if constrained else None
        ids = model.generate(**enc, max_length=max_length, num_beams=num_beams, do_sample=False,
                             stopping_criteria=stopping,
                             logits_processor=LogitsProcessorList([rules] if rules else []))
        if caps is None:
            cut = [False] * len(idx)
        else:  # reached its cap and never wrote the end token (a cap at max_length cuts nothing new)
            ends = torch.tensor(model.generation_config.eos_token_id, device=ids.device).flatten()
            ended = torch.isin(ids[:, 1:], ends).any(dim=1)  # after the start token, which may be the end token
            cut = ((caps < max_length) & (caps <= ids.shape[1]) & ~ended).tolist()
        dead = [rules is not None and row in rules.dead_end_rows for row in range(len(idx))]
        return list(zip(decode_ids(tokenizer, ids.cpu()), cut, dead, strict=True))

    decoded = _predict_in_batches(model, order, batch_size, predict, bf16, desc, shared)
    texts = [text for text, _, _ in decoded]
    if getattr(model.config, "hf_recogs_target_order", "dataset") == "arguments_first":
        from ..logical_forms import predicates_first

        texts = [predicates_first(p) for p in texts]
    predictions = Predictions(texts)
    predictions.cut = [i for i, (_, was_cut, _) in enumerate(decoded) if was_cut]
    predictions.dead_ends = [i for i, (_, _, dead) in enumerate(decoded) if dead]
    return predictions


def classify(model, collator, rows: list[dict], batch_size: int = 64, bf16: bool = False,
             desc: str | None = None, shared: bool = True) -> list[float]:
    """The probability that each (input, candidate) row is right, in the rows' order, shared over processes
    as ``decode`` shares its rows. Batches are cut from the rows sorted by pair length (the length grouped
    training batches by): a split's rows come in source order, and a batch padded to its longest pair wastes
    many of its cells (bench/cls_batching_bench.py measures both ways)."""
    import torch

    from .data import pair_length

    device = next(model.parameters()).device
    lengths = [pair_length(row["input"], row["candidate"]) for row in rows]
    order = sorted(range(len(rows)), key=lengths.__getitem__)

    def predict(idx: list[int]) -> list[float]:
        batch = collator([{k: v for k, v in rows[i].items() if k != "label"} for i in idx])
        logits = model(**{k: v.to(device) for k, v in batch.items()}).logits.float().squeeze(-1)
        return torch.sigmoid(logits).cpu().tolist()

    return _predict_in_batches(model, order, batch_size, predict, bf16, desc, shared)


def _predict_in_batches(model, order: list[int], batch_size: int, predict, bf16: bool, desc: str | None,
                        shared: bool) -> list:
    """``predict`` over consecutive batches of ``order`` (row indices), dealt round robin to the processes
    under eval mode, no_grad and the training's autocast; the gathered predictions, in row order."""
    import torch
    from accelerate import PartialState
    from tqdm.auto import tqdm

    state = PartialState()
    world, rank = (state.num_processes, state.process_index) if shared else (1, 0)
    batches = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    was_training = model.training
    model.eval()
    done: list[tuple[int, object]] = []
    bar = tqdm(total=len(order), desc=desc, unit="row", disable=desc is None or (shared and not state.is_main_process))
    with torch.no_grad(), autocast, bar:
        for idx in batches[rank::world]:
            done += list(zip(idx, predict(idx), strict=True))
            bar.update(min(len(idx) * world, bar.total - bar.n))
    model.train(was_training)
    if world > 1:
        from accelerate.utils import gather_object

        done = gather_object(done)
    out: list = [None] * len(order)
    for i, prediction in done:
        out[i] = prediction
    return out
