"""SLOG (Li et al., EMNLP 2023): structural generalization on a COGS-style grammar, as two configs.

* ``slog``: COGS-format logical forms (``data/cogs_LF/``). Its train file (``data/cogs_LF/train.tsv``) is in no
  offline mirror and cannot be derived (docs/DATASETS.md §6.1): the split is listed in ``sources`` like every
  other one, so a loader that cannot fetch it leaves it out, and reading it raises a ``SourceUnavailable``
  that says so.
* ``slog_varfree``: variable-free logical forms (``data/varfree_LF/``), all splits available.

Splits: ``train`` (train.tsv), ``validation`` (upstream ``dev.tsv``), ``test`` (test.tsv), ``gen`` (the 17 × 1,000
generalization sets). Rows: ``input`` = sentence, ``output`` = logical form, ``category`` = upstream's third column.

The gen sets are kept upstream in a password-protected zip (``data/generalization_sets.zip``, password ``SLOG``)
so that they stay out of web-scraped training data. They are decrypted here, in memory, at load time only;
``hub_splits`` leaves ``gen`` out of every export. Never write gen lines anywhere in plain text.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache, partial

from ..dataset_config import DatasetConfig, Row
from ..sources import SourceError, SourceUnavailable, UpstreamFile, open_zip_member, pinned, read_text

FAMILY = "slog"
LICENSE = "MIT"
CITATIONS = ("slog",)
SPLITS = ("train", "validation", "test", "gen")  # SLOG's upstream splits
HUB_SPLITS = ("train", "validation", "test")  # gen stays inside its encrypted zip: never published

GEN_ZIP = "data/generalization_sets.zip"
GEN_PASSWORD = b"SLOG"  # published by upstream (README); protects against scraping, not a secret
FOLDER = {"slog": "data/cogs_LF", "slog_varfree": "data/varfree_LF"}
GEN_MEMBER = {
    "slog": "generalization_sets/gen_cogsLF.tsv",
    "slog_varfree": "generalization_sets/gen_varfreeLF.tsv",
}
SPLIT_FILE = {"train": "train.tsv", "validation": "dev.tsv", "test": "test.tsv"}

GEN_CATEGORIES = (
    "PP_3", "PP_5-12", "CP_3", "CP_5-12", "center_embed_3", "center_embed_5-12", "PP_modif_subj",
    "PP_modif_iobj", "RC_modif_subj", "RC_modif_iobj", "RC_iobj_extracted", "Q_subj_active", "Q_subj_passive",
    "Q_dobj_ditransV", "Q_iobj_ditransV", "Q_long_mv", "Q_modified_NPs",
)


def _file(config: str, split: str) -> UpstreamFile:
    if split == "gen":
        return pinned("slog", GEN_ZIP)
    return pinned("slog", f"{FOLDER[config]}/{SPLIT_FILE[split]}")


def _rows(text: str, where: str) -> Iterator[Row]:
    if text and not text.endswith("\n"):
        raise SourceError(f"hf_recogs: {where} does not end with a newline")
    for number, line in enumerate(text.split("\n")[:-1], 1):
        fields = line.split("\t")
        if len(fields) != 3:
            # the line itself is never shown: gen lines must not leak into logs
            raise SourceError(f"hf_recogs: {where} line {number} has {len(fields)} fields, expected 3")
        yield {"input": fields[0], "output": fields[1], "category": fields[2]}


@lru_cache(maxsize=2)
def _gen_text(config: str) -> str:
    """The decrypted gen member (kept in memory only; decryption takes about half a second)."""
    return open_zip_member(_file(config, "gen"), GEN_MEMBER[config], password=GEN_PASSWORD).decode("utf-8")


def _generate(config: str, split: str, **params) -> Iterator[Row]:
    file = _file(config, split)
    if split == "gen":
        yield from _rows(_gen_text(config), f"{file} member {GEN_MEMBER[config]}")
        return
    try:
        text = read_text(file)
    except SourceUnavailable as err:
        if config == "slog" and split == "train":
            raise SourceUnavailable(
                f"{err}. Note: SLOG's COGS-LF train file is missing from the offline mirror and cannot "
                "be derived from the other files (hf_recogs docs/DATASETS.md §6.1); its "
                "validation/test/gen splits load without it, and config 'slog_varfree' has a train split."
            ) from None
        raise
    yield from _rows(text, str(file))


def _sources(config: str, split: str, **params) -> list[UpstreamFile]:
    return [_file(config, split)]


_DECLARED: list[DatasetConfig] = []


def _add(config: DatasetConfig) -> DatasetConfig:
    _DECLARED.append(config)
    return config


def _declare(name: str, what: str, metric: str, notes: str = "") -> None:
    """Declare one SLOG config; ``what`` names its kind of logical form."""
    _add(
        DatasetConfig(
            name=name,
            description=(
                f"SLOG structural generalization benchmark, {what}: train / validation (upstream dev) / test, "
                "and gen (17 categories × 1,000) decrypted at load time from upstream's password-protected "
                "zip; gen is never exported."
            ),
            family=FAMILY,
            license=LICENSE,
            citations=CITATIONS,
            splits=SPLITS,
            generate=partial(_generate, name),
            sources=partial(_sources, name),
            hub_splits=HUB_SPLITS,
            metric=metric,
            notes=notes,
        )
    )


_declare("slog", "COGS-format logical forms", metric="sem",
          notes="train.tsv of the COGS-LF version is not in the offline mirror (only online download works)")
# variable-free forms have no variables to rename: SEM would read every one as malformed
_declare("slog_varfree", "variable-free logical forms", metric="exact")

CONFIGS: tuple[DatasetConfig, ...] = tuple(_DECLARED)  # collected by hf_recogs.registry
