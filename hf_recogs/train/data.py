"""The rows a run trains and scores on: the config's splits (or the user's JSON-lines files), subsets, tokens."""

from __future__ import annotations

import functools
import logging
import random

from ..logical_forms import LogicalFormError, arguments_first, depth_first_order, nmod_last_order
from .arguments import ConfigError, ExperimentArguments

logger = logging.getLogger("hf_recogs.train")

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
    pairs, and for a structure_transformer with structure tokens, also the labels of the structure tokens that
    the annotations add)."""
    from ..tokenization import build_tokenizer

    splits = [s for s in exp.tokenizer_splits if s in raw]
    second = "candidate" if is_classification(exp) else "output"
    extra = structure_labels(pair_annotator(exp), raw["train"]) if second == "candidate" else []
    config = structure_config(exp)
    if config is not None and config.structure_tokens:  # the constituent labels the encoder inputs carry
        parse, _, _ = source_parser(exp)
        extra = sorted({label for text in set(raw["train"]["input"])
                        for label in _constituent_labels(parse, text)})
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
    """Batches of (input, candidate) rows for the classifiers: each pair annotated and laid out by
    ``hf_recogs.structure.pairs.encode_pair``, padded to the batch's longest (relations of padding: none);
    ``relations=False`` (a model that reads tokens and segments only) leaves ``relation_ids`` out."""

    def __init__(self, tokenizer, annotate, structure_tokens: bool = True, max_length: int = 256,
                 relations: bool = True):
        self.tokenizer, self.annotate = tokenizer, annotate
        self.structure_tokens, self.max_length, self.relations = structure_tokens, max_length, relations

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
                 "token_type_ids": torch.zeros((len(pairs), length), dtype=torch.long)}
        if self.relations:
            batch["relation_ids"] = torch.zeros((len(pairs), length, length), dtype=torch.long)
        for row, pair in enumerate(pairs):
            n = len(pair)
            batch["input_ids"][row, :n] = torch.tensor(self.tokenizer.convert_tokens_to_ids(list(pair.tokens)))
            batch["attention_mask"][row, :n] = 1
            batch["token_type_ids"][row, :n] = torch.tensor(pair.token_type_ids)
            if self.relations:
                batch["relation_ids"][row, :n, :n] = torch.from_numpy(pair.relation_ids.astype("int64"))
        if "label" in features[0]:
            batch["labels"] = torch.tensor([float(f["label"]) for f in features])
        return batch


def tokenize_dataset(ds, tokenizer, max_positions: int, layout: SourceLayout | None = None):
    """input_ids / labels cut at ``max_positions``, and ``length`` (source + target tokens) for grouping; with a
    structure ``layout`` (structure_transformer), the sources are laid out by it and carry ``source_heads`` (and
    ``source_functions`` for a model with ``encoder_functions``)."""
    def encode(batch):
        if layout is None:
            enc = tokenizer(batch["input"], truncation=True, max_length=max_positions)
        else:
            encoded = [layout.encode(text) for text in batch["input"]]
            enc = {"input_ids": [ids for ids, _ in encoded], "attention_mask": [[1] * len(ids) for ids, _ in encoded],
                   "source_heads": [heads for _, heads in encoded]}
            if layout.functions:
                enc["source_functions"] = [layout.function_ids(text) for text in batch["input"]]
        enc["labels"] = tokenizer(batch["output"], truncation=True, max_length=max_positions)["input_ids"]
        enc["length"] = [len(a) + len(b) for a, b in zip(enc["input_ids"], enc["labels"], strict=True)]
        return enc

    return ds.map(encode, batched=True, remove_columns=ds.column_names, keep_in_memory=True, desc=None)


def training_rows(exp: ExperimentArguments, raw, seed: int):
    """The training split as the run reads it: ``max_train_samples`` rows, each row of an ``oversample`` kind
    repeated (the most times any of its kinds asks), its outputs in ``target_order``, shuffled once per seed for
    ``data_order: fixed`` (the ReCOGS reference's order, the same every epoch)."""
    rows = subset(raw["train"], exp.max_train_samples)
    if exp.oversample:
        rows = oversampled(rows, exp)
    rows = in_target_order(rows, exp.target_order)
    return rows.shuffle(seed=seed, keep_in_memory=True) if exp.data_order == "fixed" else rows


def in_target_order(rows, target_order: str):
    """``rows`` with their outputs written in ``target_order`` (``depth_first``, ``nmod_last``,
    ``arguments_first``; as they are for ``dataset``). An output the order cannot rewrite stops the run before
    training, in one line."""
    rewrite = target_rewrite(target_order)
    if rewrite is None:
        return rows
    return rows.map(lambda batch: {"output": [rewrite(o) for o in batch["output"]]}, batched=True,
                    keep_in_memory=True, desc=None)


def target_rewrite(target_order: str):
    """The rewriting of one output for ``target_order``; None for ``dataset`` (outputs as they are)."""
    return {"depth_first": _reordered(depth_first_order, "depth_first"),
            "nmod_last": _reordered(nmod_last_order, "nmod_last"),
            "arguments_first": _arguments_first}.get(target_order)


def _reordered(reorder, name: str):
    """A training target's rewriting by ``reorder`` (a ReCOGS conjunct order); a form that is not ReCOGS (COGS's
    ``x _ N`` variables, SLOG) stops the run before training, in one line."""
    def rewrite(output: str) -> str:
        try:
            return reorder(output)
        except LogicalFormError as err:
            raise ConfigError(f"target_order={name} reorders ReCOGS forms, and a training output is not one "
                              f"({err.reason}: {output[:60]!r}); leave target_order out for this dataset") from None
    return rewrite


def _arguments_first(output: str) -> str:
    try:
        return arguments_first(output)
    except LogicalFormError as err:
        raise ConfigError(f"target_order=arguments_first rewrites logical forms, and a training output is not one "
                          f"({err.reason}: {output[:60]!r}); leave target_order out for this dataset") from None


def oversampled(rows, exp: ExperimentArguments):
    """``rows`` with every row of an ``oversample`` kind followed by its copies."""
    from ..registry import get_config

    kinds = get_config(exp.dataset).row_kinds
    order = []
    for i, row in enumerate(rows):
        times = max([exp.oversample[k] for k in exp.oversample if kinds[k](row)], default=1)
        order += [i] * times
    logger.info("oversample %s: %d training rows -> %d", exp.oversample, len(rows), len(order))
    return rows.select(order, keep_in_memory=True)


def pair_length(source: str, candidate: str) -> int:
    """A pair's length for batching: input + candidate words. The laid-out pair, structure tokens included,
    grows with it, so batches of pairs of similar length pad little."""
    return len(source.split()) + len(candidate.split())


def with_pair_lengths(rows):
    """Classification rows with a ``length`` column (:func:`pair_length`) for ``data_order: grouped``."""
    lengths = [pair_length(a, b) for a, b in zip(rows["input"], rows["candidate"], strict=True)]
    return rows.add_column("length", lengths)


def tokens_per_batch(train_ds, batch_size: int) -> float:
    """Mean target tokens (the labels the loss counts) of a training batch: the divisor of loss_weighting token."""
    per_row = sum(len(labels) for labels in train_ds["labels"]) / len(train_ds)
    return per_row * batch_size


def source_check_batches(raw, tokenizer, max_positions: int, collator, rows: int = 128, batch_size: int = 64,
                         layout: SourceLayout | None = None, target_order: str = "dataset"):
    """Fixed batches for the source gap: a random sample (seed 0) of validation (or train) rows, their outputs in
    the training's ``target_order``."""
    split = raw["validation"] if "validation" in raw else raw["train"]
    sample = in_target_order(subset(split, rows), target_order)
    sample = tokenize_dataset(sample, tokenizer, max_positions, layout).remove_columns(["length"])
    features = [sample[i] for i in range(len(sample))]
    return [collator(features[i : i + batch_size]) for i in range(0, len(features), batch_size)]


def curve_samples(exp: ExperimentArguments, raw) -> dict:
    """The fixed, category-stratified rows of each curve split that every evaluation decodes."""
    return {split: raw[split].select(stratified_sample(raw[split], exp.curve_samples))
            for split in exp.curve_splits if split in raw}



# ---------------------------------------------------------------------------------------------------------
# The structure track: structure_transformer's encoder reads the input sentence's parse (``relation_ids``)

# Families whose inputs are sentences of the COGS grammar, which our parser reads; ``data_files`` runs are
# parsed with it too (sentences outside the grammar simply get no tree).
COGS_FAMILIES = ("cogs", "recogs", "slog")
# Words that mark a constituent rather than head it (``head_word_tree``): determiners, prepositions, the
# complementiser, the infinitive marker and the passive auxiliary of the COGS grammar.
COGS_MARKERS = frozenset({"a", "the", "A", "The", "in", "on", "beside", "to", "by", "that", "was"})
COGS_PARSER = "hf_recogs.structure.cogs_parse_sentence"


def structure_config(exp: ExperimentArguments):
    """The model config of a structure_transformer run (None for every other architecture), without weights."""
    from ..models import STRUCTURE_ARCHITECTURES, build_config

    if exp.arch not in STRUCTURE_ARCHITECTURES:
        return None
    return build_config(exp.arch, vocab_size=16, max_positions=exp.max_positions, **exp.model_overrides)


def check_structure_family(dataset: str | None, arch: str) -> None:
    """A ConfigError unless ``dataset``'s inputs are COGS-grammar sentences (``data_files``: assumed to be)."""
    from ..registry import get_config

    family = get_config(dataset).family if dataset else None
    if family is not None and family not in COGS_FAMILIES:
        raise ConfigError(f"arch={arch!r} reads the parse of COGS-grammar inputs (families "
                          f"{', '.join(COGS_FAMILIES)}); {dataset!r} is a {family} config: train a baseline "
                          "(arch=transformer) on it")


def source_parser(exp: ExperimentArguments):
    """(text -> constituency ``Structure``, the marker words of its head-word projection, the parser's name) for
    the run's inputs; raises ``StructureError`` for a sentence it cannot parse. Only the COGS grammar for now."""
    check_structure_family(exp.dataset, "structure_transformer")
    return cogs_source_parser()


def cogs_source_parser():
    """``source_parser`` for COGS-grammar sentences: our parser, with the verb classes of ReCOGS_pos train."""
    from ..structure import cogs_default_lexicon, cogs_parse_sentence

    lexicon = cogs_default_lexicon()
    return (lambda text: cogs_parse_sentence(text, lexicon).structure), COGS_MARKERS, COGS_PARSER


def _constituent_labels(parse, text: str) -> tuple[str, ...]:
    from ..structure.tree import StructureError

    try:
        tree = parse(text)
    except StructureError:
        return ()
    return tree.tokens[tree.n_words:]


class SourceLayout:
    """How a structure_transformer reads one input: the encoder tokens (the tokenizer's ``words </s>``, then the
    constituent tokens when the model was built with ``structure_tokens``), the head position of each token in
    the input's tree (``hf_recogs.structure.pairs.encoder_tree``), and the ``relation_ids`` of a batch; with
    ``functions`` (a model built with ``encoder_functions``) also each token's syntactic function, ``function_ids``.

    The first ``len(words) + 1`` ids are exactly what the tokenizer gives (same words, same cut at
    ``max_length``, ``</s>`` last), so positions, truncation and decoding are the baseline's. ``</s>`` and
    the words outside the tree (``.``) relate to nothing but themselves. A sentence the parser cannot parse
    gets no tree at all (every token: itself only, in the structured heads; the free heads read it as Bart
    does); ``unparsed`` keeps those sentences, so runs can count them. Layouts are cached by sentence."""

    def __init__(self, tokenizer, parse, markers=frozenset(), structure_tokens: bool = False,
                 max_length: int = 512, parser_name: str = COGS_PARSER, functions: bool = False):
        self.tokenizer, self.parse, self.markers = tokenizer, parse, frozenset(markers)
        self.structure_tokens, self.max_length, self.parser_name = structure_tokens, max_length, parser_name
        self.functions = functions
        self.unparsed: set[str] = set()
        self._cache: dict[str, tuple[list[int], list[int]]] = {}
        self._function_cache: dict[str, list[int]] = {}

    def encode(self, text: str) -> tuple[list[int], list[int]]:
        """(input ids, head positions: -1 root, -2 outside the tree) of one input."""
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        from ..structure.pairs import encoder_tree
        from ..structure.tree import StructureError, tree_free

        try:
            tree = self.parse(text)
        except StructureError:
            self.unparsed.add(text)
            tree = tree_free(text)
        tokens, heads = encoder_tree(tree, self.tokenizer.eos_token, self.max_length, self.structure_tokens,
                                     self.markers)
        self._cache[text] = encoded = (self.tokenizer.convert_tokens_to_ids(tokens), heads)
        return encoded

    def function_ids(self, text: str) -> list[int]:
        """The syntactic function (index into ``WORD_FUNCTIONS``) of each of ``encode(text)``'s tokens: the
        words' from our parser's tree (``hf_recogs.structure.cogs_word_functions``), ``other`` for ``</s>``, the
        structure tokens and every word of a sentence without a parse."""
        cached = self._function_cache.get(text)
        if cached is not None:
            return cached
        from ..models.configuration_structure_transformer import WORD_FUNCTIONS
        from ..structure import cogs_word_functions
        from ..structure.tree import StructureError

        ids, _ = self.encode(text)
        try:
            names = cogs_word_functions(self.parse(text))
        except StructureError:
            names = ()
        codes = [WORD_FUNCTIONS.index(name) for name in names[:self.max_length - 1]]
        self._function_cache[text] = codes = codes + [0] * (len(ids) - len(codes))
        return codes

    @classmethod
    def for_model(cls, model, tokenizer) -> SourceLayout:
        """The layout a trained structure_transformer reads COGS-grammar sentences with, as its run did: our
        parser (its verb classes come from ReCOGS_pos train, so that dataset must be loadable: mirror, cache or
        network), the model's structure tokens, inputs cut at its longest position."""
        from ..models import StructureTransformerConfig

        # by model type, not class: a checkpoint loaded with trust_remote_code carries its own copy of the class
        if model.config.model_type != StructureTransformerConfig.model_type:
            raise ValueError(f"SourceLayout.for_model needs a structure_transformer, got a "
                             f"{model.config.model_type!r} model: decode it with its tokenizer alone")
        parse, markers, name = cogs_source_parser()
        return cls(tokenizer, parse, markers, model.config.structure_tokens,
                   max_length=model.config.max_position_embeddings, parser_name=name,
                   functions=model.config.encoder_functions)

    def count_unparsed(self, texts) -> int:
        """How many of ``texts`` (each laid out before) had no parse."""
        return sum(text in self.unparsed for text in texts)

    @staticmethod
    def relation_ids(heads_rows, length: int):
        """(batch, length, length) labels of ``TREE_RELATIONS``; the padding rows and columns are ``none``."""
        import torch

        out = torch.zeros((len(heads_rows), length, length), dtype=torch.long)
        for row, heads in enumerate(heads_rows):
            n = len(heads)
            out[row, :n, :n] = torch.from_numpy(_tree_relations(tuple(heads)).astype("int64"))
        return out

    def batch(self, texts: list[str]) -> dict:
        """The encoder inputs of ``texts`` (right-padded): input_ids, attention_mask, relation_ids (and
        function_ids with ``functions``)."""
        import torch

        encoded = [self.encode(text) for text in texts]
        length = max(len(ids) for ids, _ in encoded)
        input_ids = torch.full((len(texts), length), self.tokenizer.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(texts), length), dtype=torch.long)
        for row, (ids, _) in enumerate(encoded):
            input_ids[row, :len(ids)] = torch.tensor(ids)
            attention_mask[row, :len(ids)] = 1
        batch = {"input_ids": input_ids, "attention_mask": attention_mask,
                 "relation_ids": self.relation_ids([heads for _, heads in encoded], length)}
        if self.functions:
            batch["function_ids"] = padded_functions([self.function_ids(text) for text in texts], length)
        return batch


def padded_functions(rows: list[list[int]], length: int):
    """(batch, length) ``function_ids``, padding ``other``."""
    import torch

    out = torch.zeros((len(rows), length), dtype=torch.long)
    for row, codes in enumerate(rows):
        out[row, :len(codes)] = torch.tensor(codes, dtype=torch.long)
    return out


@functools.lru_cache(maxsize=1 << 16)
def _tree_relations(heads: tuple[int, ...]):
    """``tree_relations`` by tree shape: many sentences share one (``The cat smiled .`` / ``A dog ran .``)."""
    from ..structure.pairs import tree_relations

    return tree_relations(heads)


def source_layout(exp: ExperimentArguments, tokenizer, model_config) -> SourceLayout | None:
    """The layout a structure_transformer run reads its inputs with (None for a model without structure)."""
    from ..models import StructureTransformerConfig

    if not isinstance(model_config, StructureTransformerConfig):
        return None
    parse, markers, name = source_parser(exp)
    return SourceLayout(tokenizer, parse, markers, model_config.structure_tokens,
                        max_length=exp.max_positions, parser_name=name, functions=model_config.encoder_functions)


class StructureSeq2SeqCollator:
    """``DataCollatorForSeq2Seq`` plus ``relation_ids`` from each row's ``source_heads`` (rows tokenized with a
    ``SourceLayout``), and ``function_ids`` from ``source_functions`` where the rows have them; columns the model
    does not read (``length``) are dropped."""

    def __init__(self, seq2seq_collator):
        self.seq2seq_collator = seq2seq_collator

    def __call__(self, features: list[dict]) -> dict:
        heads = [f["source_heads"] for f in features]
        kept = [{k: v for k, v in f.items() if k in ("input_ids", "attention_mask", "labels")} for f in features]
        batch = self.seq2seq_collator(kept)
        batch["relation_ids"] = SourceLayout.relation_ids(heads, batch["input_ids"].shape[1])
        if "source_functions" in features[0]:
            batch["function_ids"] = padded_functions([f["source_functions"] for f in features],
                                                     batch["input_ids"].shape[1])
        return batch
