"""The rows a run trains and scores on: the config's splits (or the user's JSON-lines files), subsets, tokens."""

from __future__ import annotations

import random

from .arguments import ConfigError, ExperimentArguments

KEPT_COLUMNS = ("input", "output", "category")


def resolve_metric(exp: ExperimentArguments) -> str:
    """How the run scores its outputs: the option, or (``auto``) what the config's catalogue entry declares;
    ``sem`` for ``data_files``, which have no catalogue entry."""
    if exp.metric != "auto":
        return exp.metric
    if exp.dataset is None:
        return "sem"
    from ..registry import get_config

    return get_config(exp.dataset).metric


def category_groups(exp: ExperimentArguments):
    """The config's category groups (COGS lexical / structural, ...); None for ``data_files``."""
    if exp.dataset is None:
        return None
    from ..registry import get_config

    return get_config(exp.dataset).category_groups


def load_raw_data(exp: ExperimentArguments):
    """The dataset as a ``DatasetDict`` with the columns input / output / category (others dropped)."""
    import datasets

    if exp.data_files:
        return datasets.DatasetDict({split: _read_jsonl(split, path) for split, path in exp.data_files.items()})
    from .. import load_dataset

    dd = load_dataset(exp.dataset, **exp.dataset_params)
    return datasets.DatasetDict(
        {s: d.remove_columns([c for c in d.column_names if c not in KEPT_COLUMNS]) for s, d in dd.items()}
    )


def _read_jsonl(split: str, path: str):
    """One ``data_files`` file through datasets' json builder; ``category`` defaults to the split's name."""
    import datasets

    try:
        ds = datasets.load_dataset("json", data_files=str(path), split="train", keep_in_memory=True)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{path}: not a JSON-lines file of objects ({first}); write one "
                          '{"input": ..., "output": ...} per line') from None
    missing = [c for c in ("input", "output") if c not in ds.column_names]
    if missing:
        raise ConfigError(f"{path}: every line needs 'input' and 'output' fields ({', '.join(missing)} missing)")
    if "category" not in ds.column_names:
        ds = ds.add_column("category", [split] * len(ds))
    for column in KEPT_COLUMNS:
        values = ds[column]
        bad = next((i for i, v in enumerate(values) if v is None), None)
        if bad is not None:
            raise ConfigError(f"{path}: line {bad + 1} needs 'input' and 'output' fields")
    ds = ds.select_columns(list(KEPT_COLUMNS))
    return ds.cast_column("category", datasets.Value("string"))


def subset(ds, n: int | None):
    """A fixed random subset (seed 0) of ``n`` rows, in the split's order; all rows when ``n`` is None."""
    if n is None or n >= len(ds):
        return ds
    picked = sorted(random.Random(0).sample(range(len(ds)), n))
    return ds.select(picked)


def stratified_sample(ds, n: int, seed: int = 0) -> list[int]:
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


def build_vocabulary(exp: ExperimentArguments, raw):
    """The word-level tokenizer over the words of ``tokenizer_splits`` (both sides)."""
    from ..tokenization import build_tokenizer

    splits = [s for s in exp.tokenizer_splits if s in raw]
    return build_tokenizer(
        (x for s in splits for x in raw[s]["input"]),
        (y for s in splits for y in raw[s]["output"]),
        min_frequency=exp.tokenizer_min_frequency,
    )


def tokenize_dataset(ds, tokenizer, max_positions: int):
    """input_ids / labels cut at ``max_positions``, and ``length`` (source + target tokens) for grouping."""
    def encode(batch):
        enc = tokenizer(batch["input"], truncation=True, max_length=max_positions)
        enc["labels"] = tokenizer(batch["output"], truncation=True, max_length=max_positions)["input_ids"]
        enc["length"] = [len(a) + len(b) for a, b in zip(enc["input_ids"], enc["labels"], strict=True)]
        return enc

    return ds.map(encode, batched=True, remove_columns=ds.column_names, keep_in_memory=True, desc=None)


def training_rows(exp: ExperimentArguments, raw, seed: int):
    """The training split as the run reads it: ``max_train_samples`` rows, shuffled once per seed for
    ``data_order: fixed`` (the ReCOGS reference's order, the same every epoch)."""
    rows = subset(raw["train"], exp.max_train_samples)
    return rows.shuffle(seed=seed, keep_in_memory=True) if exp.data_order == "fixed" else rows


def tokens_per_batch(train_ds, batch_size: int) -> float:
    """Mean target tokens (the labels the loss counts) of a training batch: the divisor of loss_weighting token."""
    per_row = sum(len(labels) for labels in train_ds["labels"]) / len(train_ds)
    return per_row * batch_size


def source_check_batches(raw, tokenizer, max_positions: int, collator, rows: int = 128, batch_size: int = 64):
    """Fixed batches for the source gap: a random sample (seed 0) of validation (or train) rows."""
    split = raw["validation"] if "validation" in raw else raw["train"]
    sample = tokenize_dataset(subset(split, rows), tokenizer, max_positions).remove_columns(["length"])
    features = [sample[i] for i in range(len(sample))]
    return [collator(features[i : i + batch_size]) for i in range(0, len(features), batch_size)]


def curve_samples(exp: ExperimentArguments, raw) -> dict:
    """The fixed, category-stratified rows of each curve split that every evaluation decodes."""
    return {split: raw[split].select(stratified_sample(raw[split], exp.curve_samples))
            for split in exp.curve_splits if split in raw}

