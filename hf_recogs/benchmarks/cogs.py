"""COGS and the ReCOGS family as dataset configs (docs/DATASETS.md §2, §3).

Rows: ``input`` = sentence, ``output`` = logical form, ``category`` = the third upstream column (COGS
"category", ReCOGS "type"), in upstream file order. Splits: ``train``, ``validation`` (upstream ``dev``),
``test``, ``gen``.

Where a split's data comes from (also in each config's ``notes``):

* **official**: the pinned upstream file, verified by checksum (``hf_recogs.sources``). Every config whose
  files exist upstream reads them, including the derived variants that our code rebuilds byte for byte
  (``recogs_derive``; ``tests/test_cogs_recogs.py`` and ``bench/check_derivations.py`` prove the identity on
  the mirror): token removal (12 files), concat train (5), preposing and preposing+sprinkles train,
  ReCOGS_pos (4), variable_free (4).
* The dev/test/gen files of the COGS-format ReCOGS variants (``cogs_concat/dev_k_*.tsv``,
  ``cogs_preposing/gen.tsv``, ...) have the same git blob ids as COGS ``data/{dev,test,gen}.tsv``; those splits
  read the COGS file (same bytes, one download instead of twenty).
* **regenerated**: only ``recogs_regen``, built by our code from the COGS files (the released ReCOGS cannot be
  rebuilt byte for byte: its random index names depend on Python's per-process string hashing).
* **absent offline**: COGS ``train_100.tsv``, ReCOGS v1/v2 train and gen, participle train. Those splits list
  their upstream file in ``sources()``; the loader leaves them out with the reason (mirror/cache/download), and
  loads them when the file can be had (online they download and are verified by git blob id).

Licence: MIT for all (COGS © 2020 najoungkim; ReCOGS © 2023 Zhengxuan Wu, derived from COGS, so both
notices apply to the ReCOGS-family configs).

Category groups (every config here, ``CATEGORY_GROUPS``), following the COGS README / ReCOGS paper
(docs/DATASETS.md §2.3): the three structural gen categories are ``obj_pp_to_subj_pp``, ``cp_recursion`` and
``pp_recursion``; the other 18 are lexical. ``lexical_15`` is the ReCOGS reference code's ``lex_acc`` (lexical
minus the three proper-noun categories), reported for comparison with its logs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..dataset_config import CategoryGroups, DatasetConfig, Param, Row
from ..sources import UpstreamFile, fetch_bytes, pinned
from . import recogs_derive as derive

LICENSE = "MIT"
UPSTREAM_SPLIT = {"train": "train", "validation": "dev", "test": "test", "gen": "gen"}
SPLITS = tuple(UPSTREAM_SPLIT)  # the four upstream splits (dataset_config.SPLITS has derived ones too)
CONCAT_KS = (256, 512, 1024, 2048, 3072)
# our name suffix -> upstream removal-set key (file suffix, parentheses and comma included)
TOKEN_REMOVAL = {"x": "x_", "x_paren": "x_()", "x_paren_comma": "x_(,)"}

_LICENSE_NOTE = (
    "Licence MIT: COGS © 2020 najoungkim; ReCOGS © 2023 Zhengxuan Wu (derived from COGS; keep both notices)."
)
_COPY_NOTE = "validation/test/gen: COGS data/{dev,test,gen}.tsv (official; the variant's own copies have the same git blob)."


# ---------------------------------------------------------------------------------------------------------
# Categories (the module docstring says where the groups come from)

GEN_CATEGORIES = (
    "subj_to_obj_common", "subj_to_obj_proper", "obj_to_subj_common", "obj_to_subj_proper",
    "prim_to_subj_common", "prim_to_subj_proper", "prim_to_obj_common", "prim_to_obj_proper", "prim_to_inf_arg",
    "obj_pp_to_subj_pp", "cp_recursion", "pp_recursion", "active_to_passive", "passive_to_active",
    "obj_omitted_transitive_to_transitive", "unacc_to_transitive", "do_dative_to_pp_dative",
    "pp_dative_to_do_dative", "only_seen_as_transitive_subj_as_unacc_subj",
    "only_seen_as_unacc_subj_as_obj_omitted_transitive_subj", "only_seen_as_unacc_subj_as_unerg_subj",
)
STRUCTURAL = ("obj_pp_to_subj_pp", "cp_recursion", "pp_recursion")
PROPER_LEFT_OUT_OF_LEX_ACC = ("subj_to_obj_proper", "prim_to_obj_proper", "prim_to_subj_proper")


def groups_of(category: str) -> tuple[str, ...]:
    """The groups a COGS gen category belongs to (empty for other categories, e.g. ``in_distribution``)."""
    if category not in GEN_CATEGORIES:
        return ()
    if category in STRUCTURAL:
        return ("structural",)
    if category in PROPER_LEFT_OUT_OF_LEX_ACC:
        return ("lexical",)
    return ("lexical", "lexical_15")


PREPOSITIONS = ("in", "on", "beside")  # the only three in COGS's grammar


def recursion_depth(category: str, sentence: str) -> int | None:
    """How deeply a recursion row nests: the embedded clauses of a ``cp_recursion`` sentence (each opens with
    *that*, which COGS uses for nothing else) or the prepositional phrases of a ``pp_recursion`` one; None for
    every other category. Training sentences nest to depth 2; gen has 100 rows at each depth from 3 to 12."""
    words = sentence.split()
    if category == "cp_recursion":
        return words.count("that")
    if category == "pp_recursion":
        return sum(word in PREPOSITIONS for word in words)
    return None


def _nested(row: Row) -> int:
    words = row["input"].split()
    return max(words.count("that"), sum(word in PREPOSITIONS for word in words))


# Training rows that the structural generalisation categories resemble most (``oversample`` in training):
# sentences with two embedded clauses or two prepositional phrases (the deepest that train holds), and
# ReCOGS's concatenations of two sentences (its augmented train sets tag them ``concat``).
ROW_KINDS = {
    "nested_2": lambda row: _nested(row) >= 2,
    "concat": lambda row: row["category"] == "concat",
}


CATEGORY_GROUPS = CategoryGroups(
    ("lexical", "structural", "lexical_15"), groups_of,
    explanation="`lexical` / `structural` group the COGS generalisation categories as in the COGS README and the "
                "ReCOGS paper (structural = `obj_pp_to_subj_pp`, `cp_recursion`, `pp_recursion`; lexical = the "
                "other 18); `lexical_15` is lexical without the three proper-noun categories (the ReCOGS "
                "reference code's `lex_acc`).",
    highlighted="structural",
    brief=("lexical", "structural"),
    depth=recursion_depth,
)


# ---------------------------------------------------------------------------------------------------------
# Files


def cogs_file(split: str, gen_release: str = "current") -> UpstreamFile:
    """COGS ``data/<split>.tsv`` at the pinned commit (``gen_release="2020"``: the 2020 gen)."""
    if split == "gen" and gen_release == "2020":
        return pinned("cogs_2020", "data/gen.tsv")
    return pinned("cogs", f"data/{UPSTREAM_SPLIT.get(split, split)}.tsv")


def recogs_file(path: str) -> UpstreamFile:
    return pinned("recogs", path)


def read_rows(file: UpstreamFile) -> tuple[Row, ...]:
    """The verified rows ``(sentence, lf, category)`` of an upstream COGS-style TSV.

    Not cached here (``sources.fetch_bytes`` caches the bytes; parsing 21,000 rows takes ~0.05 s), so a
    changed mirror setting is always honoured.
    """
    try:
        return tuple(derive.parse_tsv(fetch_bytes(file)))
    except derive.DerivationError as err:
        raise derive.DerivationError(f"hf_recogs: {file}: {err}") from None


def cogs_rows(split: str, gen_release: str = "current") -> tuple[Row, ...]:
    return read_rows(cogs_file(split, gen_release))


def _as_dicts(rows) -> Iterator[dict]:
    for sentence, lf, category in rows:
        yield {"input": sentence, "output": lf, "category": category}


# ---------------------------------------------------------------------------------------------------------
# Split plans: each split is either an official file or a derivation from listed files


@dataclass(frozen=True)
class _Official:
    file: Callable[..., UpstreamFile]  # params -> file

    def sources(self, **params) -> list[UpstreamFile]:
        return [self.file(**params)]

    def rows(self, **params):
        return read_rows(self.file(**params))


@dataclass(frozen=True)
class _Derived:
    inputs: Callable[..., list[UpstreamFile]]  # params -> files read
    build: Callable[..., list[Row]]  # params -> rows

    def sources(self, **params) -> list[UpstreamFile]:
        return self.inputs(**params)

    def rows(self, **params):
        return self.build(**params)


def _official(file: UpstreamFile | Callable[..., UpstreamFile]) -> _Official:
    if isinstance(file, UpstreamFile):
        return _Official(lambda **params: file)
    return _Official(file)


def _cogs_split(split: str) -> _Official:
    return _official(cogs_file(split))


_DECLARED: list[DatasetConfig] = []


def _add(config: DatasetConfig) -> DatasetConfig:
    _DECLARED.append(config)
    return config


def _declare(
    name: str,
    description: str,
    family: str,
    citations: tuple[str, ...],
    plan: dict[str, _Official | _Derived],
    notes: str,
    params: tuple[Param, ...] = (),
    metric: str = "sem",
) -> DatasetConfig:
    splits = tuple(s for s in SPLITS if s in plan)

    def generate(split: str, **params):
        yield from _as_dicts(plan[split].rows(**params))

    def sources(split: str, **params) -> list[UpstreamFile]:
        if split not in plan:
            raise ValueError(f"config {name!r} has no split {split!r}; splits: {', '.join(splits)}")
        return plan[split].sources(**params)

    return _add(
        DatasetConfig(
            name=name,
            description=description,
            family=family,
            license=LICENSE,
            citations=citations,
            splits=splits,
            generate=generate,
            sources=sources,
            params=params,
            notes=notes,
            metric=metric,
            category_groups=CATEGORY_GROUPS,
            row_kinds=ROW_KINDS,
        )
    )


# ---------------------------------------------------------------------------------------------------------
# COGS

_declare(
    "cogs",
    "COGS (Kim & Linzen 2020): sentence -> logical form; gen = current release (2022-09-13 fix).",
    "cogs",
    ("cogs",),
    {split: _cogs_split(split) for split in SPLITS},
    "All splits official: najoungkim/COGS@165a7b6 data/{train,dev,test,gen}.tsv. gen is the current release; "
    "for the 2020 gen (51 obj_pp_to_subj_pp lines differ: agent -> theme) use config cogs_gen2020. "
    "Licence MIT, © 2020 najoungkim.",
)

_declare(
    "cogs_gen2020",
    "COGS with the original 2020 gen release (results comparable with papers from 2020-2022).",
    "cogs",
    ("cogs",),
    {
        **{s: _cogs_split(s) for s in ("train", "validation", "test")},
        "gen": _official(cogs_file("gen", "2020")),
    },
    "train/validation/test as config cogs; gen official from najoungkim/COGS@6f66383 data/gen.tsv (2020 "
    "release): 51 obj_pp_to_subj_pp lines have agent where the current gen has theme, so scores on that "
    "category differ. Licence MIT, © 2020 najoungkim.",
)

_declare(
    "cogs_train100",
    "COGS with train_100.tsv (more exposure examples per primitive; the paper's appendix experiment).",
    "cogs",
    ("cogs",),
    {
        "train": _official(pinned("cogs", "data/train_100.tsv")),
        **{s: _cogs_split(s) for s in ("validation", "test", "gen")},
    },
    "train official: najoungkim/COGS@165a7b6 data/train_100.tsv (not in the offline mirror: the split is left "
    "out offline and downloads, verified by git blob, online); validation/test/gen: COGS data files. "
    "Licence MIT, © 2020 najoungkim.",
)


# ---------------------------------------------------------------------------------------------------------
# COGS-format ReCOGS variants

_RECOGS_CITES = ("cogs", "recogs")

for _suffix, _removal in TOKEN_REMOVAL.items():
    _tokens = " ".join(sorted(derive.REMOVAL_SETS[_removal], key="x_(,)".index))
    _declare(
        f"cogs_token_removal_{_suffix}",
        f"COGS with the LF tokens {{{_tokens}}} deleted (ReCOGS cogs_token_removal, files *_remove_{_removal}.tsv).",
        "recogs",
        _RECOGS_CITES,
        {
            split: _official(recogs_file(f"cogs_token_removal/{UPSTREAM_SPLIT[split]}_remove_{_removal}.tsv"))
            for split in SPLITS
        },
        f"All splits official: frankaging/ReCOGS@1b6eca8 cogs_token_removal/{{train,dev,test,gen}}_remove_{_removal}.tsv "
        f"(the parentheses/comma are literally in the file names). Our derivation (delete every LF token in "
        f"{{{_tokens}}}) reproduces all four files byte for byte (tests). " + _LICENSE_NOTE,
    )

for _k in CONCAT_KS:
    _declare(
        f"cogs_concat_{_k}",
        f"COGS train plus {_k} three-sentence concatenations (ReCOGS cogs_concat, k={_k}); other splits = COGS.",
        "recogs",
        _RECOGS_CITES,
        {
            "train": _official(recogs_file(f"cogs_concat/train_k_{_k}.tsv")),
            **{s: _cogs_split(s) for s in ("validation", "test", "gen")},
        },
        f"train official: frankaging/ReCOGS@1b6eca8 cogs_concat/train_k_{_k}.tsv = the 24,155 COGS train rows "
        f"followed by {_k} rows of type 'concat'; our derivation reproduces it byte for byte (tests). Upstream "
        "quirk kept: a concatenated LF without definites starts with ' ; '. "
        + _COPY_NOTE
        + " "
        + _LICENSE_NOTE,
    )

_declare(
    "cogs_preposing",
    "COGS with 5% of PP-modified training sentences preposed (ReCOGS cogs_preposing); other splits = COGS.",
    "recogs",
    _RECOGS_CITES,
    {
        "train": _official(recogs_file("cogs_preposing/train.tsv")),
        **{s: _cogs_split(s) for s in ("validation", "test", "gen")},
    },
    "train official: frankaging/ReCOGS@1b6eca8 cogs_preposing/train.tsv (types preposing_1/preposing_2 for the "
    "232 preposed rows); our derivation (Random(42), p=0.05) reproduces it byte for byte (tests). "
    + _COPY_NOTE
    + " "
    + _LICENSE_NOTE,
)

_declare(
    "cogs_preposing_sprinkles",
    "COGS with preposing plus 'um' filler sprinkles in training (ReCOGS cogs_preposing+sprinkles).",
    "recogs",
    _RECOGS_CITES,
    {
        "train": _official(recogs_file("cogs_preposing+sprinkles/train.tsv")),
        **{s: _cogs_split(s) for s in ("validation", "test", "gen")},
    },
    "train official: frankaging/ReCOGS@1b6eca8 cogs_preposing+sprinkles/train.tsv (1,283 rows of type "
    "sprinkle); our derivation (one Random(42) stream: preposing pass then sprinkle pass) reproduces it byte "
    "for byte (tests). " + _COPY_NOTE + " " + _LICENSE_NOTE,
)

for _name, _folder, _rel in (
    ("cogs_participle_verb", "cogs_participle_verb", "acl"),
    ("cogs_participle_verb_easy", "cogs_participle_verb_easy", "nmod"),
):
    _declare(
        _name,
        f"COGS with participial-phrase augmentation in training, '{_rel}' relation (ReCOGS {_folder}).",
        "recogs",
        _RECOGS_CITES,
        {
            "train": _official(recogs_file(f"{_folder}/train.tsv")),
            **{s: _cogs_split(s) for s in ("validation", "test", "gen")},
        },
        f"train official: frankaging/ReCOGS@1b6eca8 {_folder}/train.tsv, which is not in the offline mirror "
        "(left out offline; downloads, verified by git blob, online). It cannot be regenerated: its randomness "
        "depends on Python set order (hf_recogs docs/DATASETS.md §3.11). "
        + _COPY_NOTE
        + " "
        + _LICENSE_NOTE,
    )

_declare(
    "cogs_variable_free",
    "COGS in the variable-free format of Qiu et al. (2022) (ReCOGS variable_free).",
    "recogs",
    ("cogs", "recogs", "variable_free"),
    {split: _official(recogs_file(f"variable_free/{UPSTREAM_SPLIT[split]}.tsv")) for split in SPLITS},
    "All splits official: frankaging/ReCOGS@1b6eca8 variable_free/{train,dev,test,gen}.tsv; our derivation "
    "reproduces all four byte for byte (tests). The format drops coreference (a shared argument is printed "
    "once per use), so it is not meaning-preserving. " + _LICENSE_NOTE,
    metric="exact",  # no variables to rename: SEM would read every form as malformed
)


# ---------------------------------------------------------------------------------------------------------
# ReCOGS

_declare(
    "recogs_pos",
    "ReCOGS_pos: ReCOGS logical forms with positional indices (index = word position); fully deterministic.",
    "recogs",
    _RECOGS_CITES,
    {
        split: _official(recogs_file(f"recogs_positional_index/{UPSTREAM_SPLIT[split]}.tsv"))
        for split in SPLITS
    },
    "All splits official: frankaging/ReCOGS@1b6eca8 recogs_positional_index/{train,dev,test,gen}.tsv (the "
    "2023-07-10 version: train = COGS train preposed + sprinkled (types <type>+sprinkle) and translated, plus "
    "3,072 'concat' rows). Our derivation reproduces all four files byte for byte (tests). " + _LICENSE_NOTE,
)

_V_NOTE = (
    "validation/test official: frankaging/ReCOGS@1b6eca8 recogs_{v}/{{dev,test}}.tsv. train and gen are the "
    "official recogs_{v}/{{train,gen}}.tsv, which are not in the offline mirror: those splits are left out "
    "offline (and download, verified by git blob, online). Their random index names cannot be regenerated "
    "byte for byte (they depend on Python's string-hash order); config recogs_regen builds a deterministic "
    "equivalent (same sentences and structure, other index names; equal under SEM). "
)

for _v, _desc in (
    ("v2", "ReCOGS v2 (released July 2023, the paper's ReCOGS): random indices, nmod in word order."),
    (
        "v1",
        "ReCOGS v1 (March 2023): random indices, nmod conjuncts first; training without preposing/sprinkles.",
    ),
):
    _declare(
        f"recogs_{_v}",
        _desc,
        "recogs",
        _RECOGS_CITES,
        {split: _official(recogs_file(f"recogs_{_v}/{UPSTREAM_SPLIT[split]}.tsv")) for split in SPLITS},
        _V_NOTE.format(v=_v) + _LICENSE_NOTE,
    )

_declare(
    "recogs",
    "ReCOGS (Wu et al. 2023) as released: the same data as recogs_v2.",
    "recogs",
    _RECOGS_CITES,
    {split: _official(recogs_file(f"recogs_v2/{UPSTREAM_SPLIT[split]}.tsv")) for split in SPLITS},
    "Alias of recogs_v2: the upstream README's 'ReCOGS' is recogs_v2 (released 2023-07-07, the version the "
    "TACL paper reports: 135,547 train rows); recogs_v1 is the March 2023 preprint version. "
    + _V_NOTE.format(v="v2")
    + _LICENSE_NOTE,
)


def _regen_build(split: str):
    def build(seed: int, copies: int, concat: int, flavour: str) -> list[Row]:
        return derive.regenerated_recogs(
            cogs_rows(split), split, seed=seed, copies=copies, concat=concat, flavour=flavour
        )

    return build


_REGEN_PARAMS = (
    Param("seed", 42, "seed of the index-renaming RNG (one stream per split)"),
    Param("copies", 5, "number of independently re-indexed copies of the train rows (paper: 5)"),
    Param("concat", 3072, "number of three-sentence 'length_ood' concatenations per copy (paper: 3,072)"),
    Param(
        "flavour",
        "v2",
        "v2 = released ReCOGS recipe (preposing+sprinkles, nmod in word order); v1 = March 2023",
        ("v2", "v1"),
    ),
)

_declare(
    "recogs_regen",
    "ReCOGS regenerated by hf_recogs from COGS with the paper's recipe and a seeded, deterministic index renaming.",
    "recogs",
    _RECOGS_CITES,
    {
        split: _Derived(lambda split=split, **params: [cogs_file(split)], _regen_build(split))
        for split in SPLITS
    },
    "All splits regenerated from COGS data/{train,dev,test,gen}.tsv by hf_recogs.benchmarks.recogs_derive."
    "regenerated_recogs: the ReCOGS translation (hf_recogs docs/DATASETS.md §3.7) with random index names "
    "from the 57-value pool "
    "0-54, 56, 59; train = `copies` renamed copies, each followed by `concat` length_ood concatenations, "
    "then exact duplicates dropped. Deterministic: sorted index lists, RNG Random('hf_recogs.recogs_regen:"
    "<seed>:<split>'). Not byte-identical to the released v1/v2 (theirs depend on string-hash order) but "
    "every validation/test LF equals the released one up to index renaming (tests, with SEM). Train "
    "preposing/sprinkles use upstream's fixed Random(42), so train sentences equal the released ones. "
    + _LICENSE_NOTE,
    params=_REGEN_PARAMS,
)

CONFIGS: tuple[DatasetConfig, ...] = tuple(_DECLARED)  # collected by hf_recogs.registry
