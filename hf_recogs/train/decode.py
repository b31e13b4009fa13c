"""Predictions for a split: decoding (seq2seq) or classifying (input, candidate) pairs; one path for one process
and for DDP, under the training's autocast, with a progress bar.

Rows are sorted by source length (less padding), split into batches, and the batches dealt round robin to the
processes; each process generates its batches and the predictions are gathered and put back in the split's
order. Every process therefore computes exactly what a single process would for the same batch.
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


def decode(model, tokenizer, sources: list[str], max_length: int, batch_size: int = 64, bf16: bool = False,
           source_max_length: int | None = None, num_beams: int = 1, desc: str | None = None,
           shared: bool = True) -> list[str]:
    """Predictions for ``sources``, in their order: greedy (``num_beams`` 1) or beam search.

    Outputs stop at ``max_length`` tokens; sources are cut at ``source_max_length`` (default ``max_length``), as
    training cuts them. ``desc`` names the progress bar (none without it). Under ``torch.distributed`` every
    process must call this with the same ``sources`` and each gets all the predictions; ``shared=False``: this
    process decodes every row alone (the others are not calling)."""
    import torch
    from accelerate import PartialState
    from tqdm.auto import tqdm

    state = PartialState()
    order = sorted(range(len(sources)), key=lambda i: len(sources[i].split()))
    batches = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
    world, rank = (state.num_processes, state.process_index) if shared else (1, 0)
    mine = batches[rank::world]
    device = next(model.parameters()).device
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    was_training = model.training
    model.eval()
    done: list[tuple[int, str]] = []
    bar = tqdm(total=len(sources), desc=desc, unit="row", disable=desc is None or (shared and not state.is_main_process))
    with torch.no_grad(), autocast, bar:
        for idx in mine:
            enc = tokenizer([sources[i] for i in idx], return_tensors="pt", padding=True, truncation=True,
                            max_length=source_max_length or max_length).to(device)
            ids = model.generate(**enc, max_length=max_length, num_beams=num_beams, do_sample=False)
            done += list(zip(idx, decode_ids(tokenizer, ids.cpu()), strict=True))
            bar.update(min(len(idx) * world, bar.total - bar.n))
    model.train(was_training)
    if world > 1:
        from accelerate.utils import gather_object

        done = gather_object(done)
    out: list[str | None] = [None] * len(sources)
    for i, text in done:
        out[i] = text
    return out


def classify(model, collator, rows: list[dict], batch_size: int = 64, bf16: bool = False,
             desc: str | None = None, shared: bool = True) -> list[float]:
    """The probability that each (input, candidate) row is right, in the rows' order: the same sharing of
    batches over processes as ``decode``."""
    import torch
    from accelerate import PartialState
    from tqdm.auto import tqdm

    state = PartialState()
    world, rank = (state.num_processes, state.process_index) if shared else (1, 0)
    batches = [list(range(start, min(start + batch_size, len(rows)))) for start in range(0, len(rows), batch_size)]
    device = next(model.parameters()).device
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    was_training = model.training
    model.eval()
    done: list[tuple[int, float]] = []
    bar = tqdm(total=len(rows), desc=desc, unit="row", disable=desc is None or (shared and not state.is_main_process))
    with torch.no_grad(), autocast, bar:
        for idx in batches[rank::world]:
            batch = collator([{k: v for k, v in rows[i].items() if k != "label"} for i in idx])
            logits = model(**{k: v.to(device) for k, v in batch.items()}).logits.float().squeeze(-1)
            done += list(zip(idx, torch.sigmoid(logits).cpu().tolist(), strict=True))
            bar.update(min(len(idx) * world, bar.total - bar.n))
    model.train(was_training)
    if world > 1:
        from accelerate.utils import gather_object

        done = gather_object(done)
    out = [0.0] * len(rows)
    for i, probability in done:
        out[i] = probability
    return out
