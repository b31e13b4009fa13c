"""The rows a run trains and scores on: the config's splits (or the user's JSON-lines files), subsets, tokens."""

from __future__ import annotations

import random

from .arguments import ConfigError, ExperimentArguments

KEPT_COLUMNS = ("input", "output", "category")
# an (input, candidate) classification config: the candidate's label and where a negative came from
PAIR_COLUMNS = ("input", "candidate", "label", "category", "negative_source")


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
    kept = PAIR_COLUMNS if is_classification(exp) else KEPT_COLUMNS
    return datasets.DatasetDict(
        {s: d.remove_columns([c for c in d.column_names if c not in kept]) for s, d in dd.items()}
    )


def is_classification(exp: ExperimentArguments) -> bool:
    """An (input, candidate) classification run: the config's metric says so (or ``metric: classification``
    with ``data_files`` of input / candidate / label rows)."""
    return resolve_metric(exp) == "classification"


def _read_jsonl(split: str, path: str):
    """One ``data_files`` file through datasets' json builder; ``category`` defaults to the split's name."""
    import datasets

    try:
        ds = datasets.load_dataset("json", data_files=str(path), split="train", keep_in_memory=True)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{path}: not a JSON-lines file of objects ({first}); write one "
                          '{"input": ..., "output": ...} per line') from None
    pairs = "candidate" in ds.column_names
    needed = ("input", "candidate", "label") if pairs else ("input", "output")
    missing = [c for c in needed if c not in ds.column_names]
    if missing:
        raise ConfigError(f"{path}: every line needs {' and '.join(map(repr, needed))} fields "
                          f"({', '.join(missing)} missing)")
    if "category" not in ds.column_names:
        ds = ds.add_column("category", [split] * len(ds))
    if pairs and "negative_source" not in ds.column_names:
        ds = ds.add_column("negative_source", [""] * len(ds))
    for column in needed:
        bad = next((i for i, v in enumerate(ds[column]) if v is None), None)
        if bad is not None:
            raise ConfigError(f"{path}: line {bad + 1} needs {' and '.join(map(repr, needed))} fields")
    ds = ds.select_columns(list(PAIR_COLUMNS if pairs else KEPT_COLUMNS))
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
    """The word-level tokenizer over the words of ``tokenizer_splits`` (both sides; for (input, candidate)
    pairs also the labels of the structure tokens that the annotations add)."""
    from ..tokenization import build_tokenizer

    splits = [s for s in exp.tokenizer_splits if s in raw]
    second = "candidate" if is_classification(exp) else "output"
    extra = structure_labels(pair_annotator(exp), raw["train"]) if second == "candidate" else []
    return build_tokenizer(
        (x for s in splits for x in raw[s]["input"]),
        (y for s in splits for y in [*raw[s][second], *([" ".join(extra)] if s == "train" else [])]),
        min_frequency=exp.tokenizer_min_frequency,
    )


def pair_annotator(exp: ExperimentArguments):
    """The run's structure annotator: its config's (``annotator_of``)."""
    return annotator_of(exp.dataset)


def annotator_of(dataset: str | None):
    """The structure annotator a config declares, (input, candidate) -> (input tree, candidate tree, links);
    without one (``data_files``, or a config that declares none) every pair gets its tokens and no trees."""
    from ..registry import all_configs
    from ..structure.tree import tree_free

    config = all_configs().get(dataset) if dataset else None
    if config is None or config.structure is None:
        return lambda source, candidate: (tree_free(source), tree_free(candidate), [])
    import importlib

    module, _, function = config.structure.partition(":")
    return getattr(importlib.import_module(module), function)


def structure_labels(annotate, rows) -> list[str]:
    """The structure tokens' labels of the training inputs (every distinct input; a candidate's own labels
    from the first rows), so that the vocabulary holds them."""
    labels: set[str] = set()
    seen: set[str] = set()
    for i, (source, candidate) in enumerate(zip(rows["input"], rows["candidate"], strict=True)):
        if source in seen and i >= 1000:
            continue
        seen.add(source)
        source_tree, candidate_tree, _ = annotate(source, candidate)
        for tree in (source_tree, candidate_tree):
            labels.update(tree.tokens[tree.n_words:])
    return sorted(labels)


class PairCollator:
    """Batches of (input, candidate) rows for the structure-masked classifier: each pair annotated and laid out
    by ``hf_recogs.structure.pairs.encode_pair``, padded to the batch's longest (relations of padding: none)."""

    def __init__(self, tokenizer, annotate, structure_tokens: bool = True, max_length: int = 256):
        self.tokenizer, self.annotate = tokenizer, annotate
        self.structure_tokens, self.max_length = structure_tokens, max_length

    def encode(self, source: str, candidate: str):
        from ..structure.pairs import encode_pair

        source_tree, candidate_tree, links = self.annotate(source, candidate)
        return encode_pair(source_tree, candidate_tree, links, structure_tokens=self.structure_tokens,
                           cls=self.tokenizer.bos_token, sep=self.tokenizer.eos_token, max_length=self.max_length)

    def __call__(self, features: list[dict]) -> dict:
        import torch

        pairs = [self.encode(f["input"], f["candidate"]) for f in features]
        length = max(len(p) for p in pairs)
        batch = {"input_ids": torch.full((len(pairs), length), self.tokenizer.pad_token_id),
                 "attention_mask": torch.zeros((len(pairs), length), dtype=torch.long),
                 "token_type_ids": torch.zeros((len(pairs), length), dtype=torch.long),
                 "relation_ids": torch.zeros((len(pairs), length, length), dtype=torch.long)}
        for row, pair in enumerate(pairs):
            n = len(pair)
            batch["input_ids"][row, :n] = torch.tensor(self.tokenizer.convert_tokens_to_ids(list(pair.tokens)))
            batch["attention_mask"][row, :n] = 1
            batch["token_type_ids"][row, :n] = torch.tensor(pair.token_type_ids)
            batch["relation_ids"][row, :n, :n] = torch.from_numpy(pair.relation_ids.astype("int64"))
        if "label" in features[0]:
            batch["labels"] = torch.tensor([float(f["label"]) for f in features])
        return batch


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

