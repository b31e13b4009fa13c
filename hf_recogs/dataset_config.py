"""What a dataset config is: :class:`DatasetConfig` (splits, rows, upstream files, parameters, licence, metric,
category groups) and its parts. The benchmark modules declare their configs with these types; the catalogue
(``hf_recogs.registry``) collects them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .sources import UpstreamFile

# Every split name a config may have, in display order. ``train_holdout`` is a seeded 5 % cut of a derived
# config's train split (the classification configs' i.i.d. check); upstream benchmarks have the other four.
SPLITS = ("train", "train_holdout", "validation", "test", "gen")
# How a config's outputs are scored: "sem" Semantic Exact Match of logical forms with variables, "sygns" exact
# match then the SyGNS paper's entailment / polarity / clause levels, "exact" whole-output string match,
# "classification" (input, candidate, label) rows scored as binary classification (not by seq2seq scoring).
METRICS = ("sem", "sygns", "exact", "classification")

Row = dict[str, Any]


@dataclass(frozen=True)
class Param:
    """A config parameter, e.g. the seed of a regenerated variant or the ``num``/``rep`` of a SCAN family."""

    name: str
    default: Any
    help: str
    choices: tuple | None = None
    bounds: tuple[float, float] | None = None  # inclusive range of a numeric parameter

    def check(self, config: str, value: Any) -> Any:
        kind = type(self.default)
        if kind is int and isinstance(value, bool) or not isinstance(value, kind):
            try:
                value = kind(value)
            except (TypeError, ValueError):
                raise ValueError(
                    f"config {config!r}: parameter {self.name}={value!r} must be {kind.__name__} ({self.help})"
                ) from None
        if self.choices is not None and value not in self.choices:
            raise ValueError(
                f"config {config!r}: parameter {self.name}={value!r} is not one of "
                f"{', '.join(map(str, self.choices))} ({self.help})"
            )
        if self.bounds is not None and not self.bounds[0] <= value <= self.bounds[1]:
            low, high = self.bounds
            raise ValueError(
                f"config {config!r}: parameter {self.name}={value!r} must be between {low} and {high} ({self.help})"
            )
        return value


@dataclass(frozen=True)
class CategoryGroups:
    """How a benchmark's categories are reported together (COGS lexical / structural, SyGNS quantifier types):
    ``names`` are the groups in display order, ``of(category)`` the groups a category belongs to (empty when
    it belongs to none). ``explanation`` defines the groups in one markdown sentence (model cards, aggregates);
    ``highlighted`` is the group whose bars plots draw red (where models fail: COGS's structural cases);
    ``brief`` the groups of one-line summaries and curve plots (default: all of ``names``). ``depth(category,
    input)``, when given, is how deeply a row of a recursion category nests (None for other categories): summaries
    then also score those categories per depth (``per_depth``)."""

    names: tuple[str, ...]
    of: Callable[[str], tuple[str, ...]]
    explanation: str = ""
    highlighted: str | None = None
    brief: tuple[str, ...] | None = None
    depth: Callable[[str, str], int | None] | None = None

    def __post_init__(self):
        unknown = {self.highlighted, *(self.brief or ())} - {None, *self.names}
        if unknown:
            raise ValueError(f"CategoryGroups: {sorted(unknown)} are not among the groups {self.names}")

    def display(self) -> dict:
        """What reports need besides each category's groups; ``scoring.summarize`` stores it in a summary."""
        return {"explanation": self.explanation, "highlighted": self.highlighted,
                "brief": list(self.brief if self.brief is not None else self.names)}


@dataclass(frozen=True)
class DatasetConfig:
    """One loadable config.

    ``generate(split, **params)`` yields rows in upstream order; ``sources(split, **params)`` lists the
    upstream files that split reads (empty for pure generation). ``splits`` lists every split the config can
    have; ``split_rule(**params)``, when given, says which of them a parameter choice has (SCAN's validation
    split exists only with ``validation_fraction`` > 0): use ``splits_for``. ``extra_features`` maps extra column names
    to a ``datasets`` dtype string. ``hub_splits`` lists the splits that may be published in plain text
    (SLOG's gen split may not). ``metric`` (one of ``METRICS``) is how the outputs are scored: training, the
    CLI and the reports read it from here. ``category_groups`` (a ``CategoryGroups``, None when the benchmark
    has none) says which categories are scored together as groups: training, the CLI and the metrics pass it
    to ``scoring.summarize``. ``columns`` are the string columns every row has, before ``extra_features``
    (a classification config has ``candidate`` in place of ``output``). ``row_kinds`` names kinds of training
    rows (name -> predicate over a row) that training may oversample (``oversample: {kind: times}``): a fact of
    the benchmark, such as COGS's deeply nested sentences, declared where the benchmark is.
    """

    name: str
    description: str
    family: str
    license: str
    citations: tuple[str, ...]
    splits: tuple[str, ...]
    generate: Callable[..., Iterable[Row]]
    sources: Callable[..., list[UpstreamFile]] = lambda split, **params: []
    params: tuple[Param, ...] = ()
    extra_features: dict[str, str] = field(default_factory=dict)
    hub_splits: tuple[str, ...] | None = None
    notes: str = ""
    split_rule: Callable[..., tuple[str, ...]] | None = None
    split_hint: str = ""  # how to get a split that the default parameters leave out
    metric: str = "exact"
    category_groups: CategoryGroups | None = None
    columns: tuple[str, ...] = ("input", "output", "category")
    # classification configs: the structure annotator that the structure-masked classifier reads, named as
    # "module:function" ((input, candidate) -> (input tree, candidate tree, cross-links)) and imported only when
    # used: it decides no row, so it stays out of the config's cache key; None: no trees
    structure: str | None = None
    row_kinds: dict[str, Callable[[Row], bool]] = field(default_factory=dict)

    def __post_init__(self):
        if self.structure is not None and self.structure.count(":") != 1:
            raise ValueError(f"config {self.name!r}: structure {self.structure!r} must name 'module:function'")
        if self.metric not in METRICS:
            raise ValueError(f"config {self.name!r}: metric {self.metric!r} is not one of {', '.join(METRICS)}")
        bad = [s for s in self.splits if s not in SPLITS]
        if bad:
            raise ValueError(f"config {self.name!r}: split names {bad} are not among {SPLITS}")
        missing = [c for c in ("input", "category") if c not in self.columns]
        if missing:
            raise ValueError(f"config {self.name!r}: columns must include {', '.join(missing)}")

    @property
    def share_alike(self) -> bool:
        """Whether the licence requires derived data to keep it (CC BY-SA): such configs are published apart."""
        key = self.license.lower().replace(" ", "-")
        return "-sa" in key or "sharealike" in key.replace("-", "")

    def resolve_params(self, given: dict[str, Any]) -> dict[str, Any]:
        known = {p.name: p for p in self.params}
        unknown = sorted(set(given) - set(known))
        if unknown:
            accepted = ", ".join(known) if known else "none"
            raise ValueError(
                f"config {self.name!r} has no parameter {', '.join(unknown)}; it accepts: {accepted}"
            )
        return {name: p.check(self.name, given.get(name, p.default)) for name, p in known.items()}

    def splits_for(self, params: dict[str, Any] | None = None) -> tuple[str, ...]:
        """The splits of this config under ``params`` (unresolved are fine; default: the default parameters)."""
        if self.split_rule is None:
            return self.splits
        return self.split_rule(**self.resolve_params(params or {}))

    def check_split(self, split: str, params: dict[str, Any] | None = None) -> None:
        splits = self.splits_for(params)
        if split not in splits:
            hint = f" ({self.split_hint})" if split in self.splits and self.split_hint else ""
            if split == "dev" and "validation" in splits:
                hint = " (upstream's dev split is named validation here)"
            raise ValueError(f"config {self.name!r} has no split {split!r}; splits: {', '.join(splits)}{hint}")

    def rows(self, split: str, **params: Any) -> Iterator[Row]:
        resolved = self.resolve_params(params)
        self.check_split(split, resolved)
        yield from self.generate(split, **resolved)

    @property
    def publishable_splits(self) -> tuple[str, ...]:
        """The splits of the default parameters that may be published in plain text."""
        return tuple(s for s in self.splits_for() if self.hub_splits is None or s in self.hub_splits)
