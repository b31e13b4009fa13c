"""SyGNS (Yanaka, Mineshima & Inui 2021), regenerated: a seeded sampler and the paper's settings.

Upstream ships a generator and a 50-sentence sample, no dataset, and its generator is unseeded, so the
paper's data cannot be had (docs/DATASETS.md §5.1). The ``sygns_*`` configs are a **documented
re-generation by hf_recogs**: our own grammar and semantics (``sygns_semantics``, which reproduces all six
meaning columns of the upstream sample byte for byte), sampled with ``random.Random`` from a fixed seed.
They are SyGNS-derived data under **CC BY-SA 4.0** (share-alike, like upstream), not the paper's data.

Rows: ``input`` (the sentence), ``output`` (the form the ``output`` parameter selects: ``fol``, ``drs`` or
``vf``), ``category``, and every form as an extra column: ``fol``, ``drs``, ``vf``, ``folpol``, ``vfpol``,
``tags`` (strings exactly as upstream's ``results.tsv`` prints them) and ``depth`` (int32, the recursion
budget the sentence was generated with, as upstream's ``depth`` column).

Sampling (per depth D, docs/DATASETS.md §5.2):

* upstream's scheme grammar: a quantified NP is subject or object, never both; proper-name-only sentences
  at depth 0 only; ``NP(D ≥ 1) → det noun S̄(D−1)``; intransitive relatives end the recursion; the surface
  bugs ``PN did not tvFin PN`` and ``that ivFin conn ivInf`` are kept unless ``semantics="corrected"``.
  Every upstream scheme (all five scheme files) is in our grammar and the schemes we draw at depths 0-2 are
  upstream's (tests/test_sygns.py);
* sentences are drawn uniformly from the instantiated sentences of depth D, like upstream's
  ``random.sample`` over its instantiation pool: a sentence is built top-down with every production
  weighted by the number of word fillings below it, words are drawn uniformly, and a draw is rejected when a
  category that must hold distinct words repeats one. The words of one category are distinct within a
  sentence when the category has at least as many words as slots (``cat`` and ``cats`` are different
  categories; two connective slots are ``and``/``or`` in some order, as upstream's permutations give);
  determiners at depths 3–4 are drawn independently (upstream reuses a repeated determiner list there once a
  scheme needs more than three of one number, so repeats occur, e.g. sample row 39);
* upstream keeps each relative-clause expansion of the depth-3/4 scheme enumeration with probability 1/K
  (K = 2, 3; the expected scheme counts 3,820 / 3,212 match the sample's 3,921 / 3,183 files); our weights
  multiply each relative clause by 1/K at those depths, i.e. we sample from upstream's expected distribution
  instead of one random scheme subset.

Deviations from upstream: (1) seeded and deterministic; (2) no per-scheme rounding (upstream keeps
⌈|perms|·r⌉ fillings per scheme, which over-weights tiny schemes negligibly); (3) sentences are unique within
a setting (earlier depths and train first), so a depth-2 sentence whose recursion ended after one ``that``
never repeats a depth-1 one; (4) adjectives and adverbs are the five of each that upstream's semantic grammar
interprets (``vocab="sample"``, the default: the upstream sample has 30 such words and none of the other
five of vocab.yaml, and with it 23.3 % of depth-0 sentences fall in the systematicity train pool, as the
paper's 12,000 of 50,000; with all ten it would be 19.8 %); ``vocab="yaml"`` uses all ten of each.

Settings (sizes at ``scale=1``; validation is the first 10 % of the shuffled training pool):

* ``sygns_systematicity_{one,two,every,one_two_every}`` (paper §4, Tables 4–5; upstream ``--setting comp``):
  depth 0. A sentence goes to train iff it contains a primitive quantifier or has none of adjective, adverb,
  conjunction, disjunction (tags); else to test (negation is free; a proper-name sentence with a modifier is
  a test sentence, category ``PN:…``, as upstream's rule has it). Drawing continues until 12,000 train-pool
  and 38,000 test sentences are in (the paper's sizes; 50,000 draws split about that way by themselves):
  train 10,800, validation 1,200, test 38,000.
* ``sygns_quantifier_negation`` (paper appendix; the rule is ours): depth 0; train iff the sentence contains
  the ``primitive`` quantifier (parameter, default ``one``) or has no negation; test = the other quantifiers
  (and proper names) under negation; modifiers are free. Same sizes as systematicity.
* ``sygns_productivity`` (paper Table 9; upstream ``--setting depth``): 20,000 sentences per depth 0–4;
  train pool = depths 0 and 1, shuffled: train 36,000, validation 4,000; test = depths 2, 3, 4 (60,000, in
  that order). Category ``depth<D>``.
* ``sygns_embedding_quantifiers`` (paper appendix Table 10; the design is ours): train pool = 10,000 depth-0
  sentences (any quantifier) plus 2,000 per depth 1–4 in which every embedded NP (inside a relative clause)
  has the ``primitive`` determiner, the main-clause NP being free: train 16,200, validation 1,800. Test =
  5,000 per depth 1–4 with at least one embedded NP whose determiner is not the primitive. Category
  ``depth<D>``.

Categories of the depth-0 settings: ``<Q>:<M>``, Q the quantifier type of the quantified NP (``EXI`` =
a/one, ``NUM`` = two/three, ``UNI`` = every/all, ``PN`` = proper names only), M the ``+``-joined modifiers
present in the order ``ADJ``, ``ADV``, ``CON`` (and/or), ``NEG``, or ``NONE``: e.g. ``NUM:ADJ+NEG``,
``UNI:CON``, ``EXI:NONE``. Every row carries its category; the paper groups test rows by Q (Table 4) and by
modifier ± NEG (Table 5).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import lru_cache

from ..dataset_config import CategoryGroups, DatasetConfig, Param, Row
from . import sygns_semantics as sem
from .sygns_semantics import NP, RC, VP, Sentence

FAMILY = "sygns"
LICENSE = "CC-BY-SA-4.0"
CITATIONS = ("sygns",)
DEFAULT_SEED = 42
OUTPUTS = ("fol", "drs", "vf")

# each relative-clause expansion survives with probability 1/K at depth D (docs/DATASETS.md §5.2)
KEEP_K = {0: 1, 1: 1, 2: 1, 3: 2, 4: 3}

_DISTINCT_LIMIT = {
    "nounSing": 10, "nounPlur": 10, "pn": 10, "detSing": 3, "detPlur": 3, "adj": None, "adv": None,
    "ivFin": 10, "ivInf": 10, "tvFin": 10, "tvInf": 10, "conn": 2,
}


class _Reject(Exception):
    pass


class Sampler:
    """Draws SyGNS sentences of one depth uniformly from the instantiated sentences (module docstring).

    ``embedded_dets`` restricts the determiners of NPs inside relative clauses (embedding setting); determiner
    distinctness is then not enforced. ``corrected=True`` generates the corrected surface forms.
    """

    def __init__(
        self,
        depth: int,
        rng: random.Random,
        vocab: str = "sample",
        embedded_dets: tuple[str, ...] | None = None,
        corrected: bool = False,
    ) -> None:
        self.depth = depth
        self.rng = rng
        self.corrected = corrected
        self.adj = sem.ADJECTIVES if vocab == "sample" else sem.ADJECTIVES_YAML
        self.adv = sem.ADVERBS if vocab == "sample" else sem.ADVERBS_YAML
        self.limit = dict(_DISTINCT_LIMIT, adj=len(self.adj), adv=len(self.adv))
        if depth >= 3 or embedded_dets is not None:
            self.limit["detSing"] = self.limit["detPlur"] = 0
        all_dets = {"sing": sem.DET_SING, "plur": sem.DET_PLUR}
        if embedded_dets is None:
            emb = all_dets
        else:
            emb = {
                "sing": tuple(d for d in sem.DET_SING if d in embedded_dets),
                "plur": tuple(d for d in sem.DET_PLUR if d in embedded_dets),
            }
        self.dets = {"main": all_dets, "emb": emb}
        self.nouns = {"sing": sem.NOUN_SING, "plur": sem.NOUN_PLUR}
        self.inv_k = 1.0 / KEEP_K[depth]
        n_iv, n_tv, n_adv = len(sem.IV_FIN), len(sem.TV_FIN), len(self.adv)
        self.w_vp = float(n_iv * (1 + n_adv + 2 * n_iv))  # verb [adv | conn verb]
        self.w_pn, self.w_tv = float(len(sem.PROPER_NAMES)), float(n_tv)
        self._w_np: dict = {}
        self._w_rc: dict = {}

    # --- weights: number of fillings below a node (relative clauses times 1/K) ---

    def w_np(self, d: int, role: str) -> float:
        key = (d, role)
        if key not in self._w_np:
            below = (1.0 + len(self.adj)) if d == 0 else self.w_rc(d - 1)
            self._w_np[key] = sum(
                len(self.dets[role][num]) * len(self.nouns[num]) * below for num in ("sing", "plur")
            )
        return self._w_np[key]

    def w_rc(self, d: int) -> float:
        if d not in self._w_rc:
            np_w = self.w_np(d, "emb")
            self._w_rc[d] = self.inv_k * (4 * self.w_tv * np_w + 2 * self.w_vp)
        return self._w_rc[d]

    # --- drawing ---

    def _word(self, cat: str, words: tuple[str, ...]) -> str:
        w = words[int(self.rng.random() * len(words))] if len(words) > 1 else words[0]
        if self.limit[cat]:
            # a category never has more slots than its limit (at most 5 NPs, 2 connectives), so a repeat
            # rejects the draw at once
            used = self.bag.get(cat)
            if used is None:
                self.bag[cat] = {w}
            elif w in used:
                raise _Reject
            else:
                used.add(w)
        return w

    def _choose(self, weights: list[float]) -> int:
        r = self.rng.random() * sum(weights)
        for i, w in enumerate(weights):
            r -= w
            if r < 0:
                return i
        return len(weights) - 1

    def _vp(self, fin: bool, second_fin: bool | None = None) -> VP:
        verbs, cat = (sem.IV_FIN, "ivFin") if fin else (sem.IV_INF, "ivInf")
        verb = self._word(cat, verbs)
        n_iv = len(sem.IV_FIN)
        k = self._choose([1.0, float(len(self.adv)), 2.0 * n_iv])
        if k == 0:
            return VP(verb)
        if k == 1:
            return VP(verb, ("adv", self._word("adv", self.adv)))
        conn = self._word("conn", sem.CONNECTIVES)
        fin2 = fin if second_fin is None else second_fin
        verb2 = self._word("ivFin", sem.IV_FIN) if fin2 else self._word("ivInf", sem.IV_INF)
        return VP(verb, ("conn", conn, verb2))

    def _np(self, d: int, role: str) -> NP:
        dets = self.dets[role]
        num = ("sing", "plur")[self._choose([float(len(dets["sing"])), float(len(dets["plur"]))])]
        det = self._word("detSing" if num == "sing" else "detPlur", dets[num])
        noun_cat = "nounSing" if num == "sing" else "nounPlur"
        if d == 0:
            if self._choose([1.0, float(len(self.adj))]) == 1:
                adj = self._word("adj", self.adj)
                return NP(det, self._word(noun_cat, self.nouns[num]), adj)
            return NP(det, self._word(noun_cat, self.nouns[num]))
        noun = self._word(noun_cat, self.nouns[num])
        return NP(det, noun, None, self._rc(d - 1))

    def _rc(self, d: int) -> RC:
        np_w = self.w_np(d, "emb")
        k = self._choose([self.w_tv * np_w] * 4 + [self.w_vp, self.w_vp])
        if k == 0:  # that tvFin NP
            verb = self._word("tvFin", sem.TV_FIN)
            return RC("sbj", False, verb, self._np(d, "emb"))
        if k == 1:  # that did not tvInf NP
            verb = self._word("tvInf", sem.TV_INF)
            return RC("sbj", True, verb, self._np(d, "emb"))
        if k == 2:  # that NP tvFin
            np = self._np(d, "emb")
            return RC("obj", False, self._word("tvFin", sem.TV_FIN), np)
        if k == 3:  # that NP did not tvInf
            np = self._np(d, "emb")
            return RC("obj", True, self._word("tvInf", sem.TV_INF), np)
        if k == 4:  # that ivFin [adv | conn ivInf (upstream bug) | conn ivFin (corrected)]
            return RC("iv", False, vp=self._vp(True, second_fin=self.corrected))
        return RC("iv", True, vp=self._vp(False))

    def _pn(self) -> NP:
        return NP(None, self._word("pn", sem.PROPER_NAMES))

    def _sentence(self) -> Sentence:
        d = self.depth
        np_w = self.w_np(d, "main")
        pn, tv, vp = self.w_pn, self.w_tv, self.w_vp
        weights = [np_w * vp, np_w * vp, pn * tv * np_w, pn * tv * np_w, np_w * tv * pn, np_w * tv * pn]
        if d == 0:
            weights += [pn * vp, pn * vp, pn * tv * pn, pn * tv * pn]
        k = self._choose(weights)
        if k in (0, 1, 6, 7):
            subj = self._np(d, "main") if k < 2 else self._pn()
            neg = k in (1, 7)
            return Sentence(subj, neg, vp=self._vp(not neg))
        neg = k in (3, 5, 9)
        if k in (2, 3, 8, 9):
            subj = self._pn()
            if k == 9 and not self.corrected:  # upstream bug: "PN did not tvFin PN"
                verb = self._word("tvFin", sem.TV_FIN)
            else:
                verb = self._word("tvInf", sem.TV_INF) if neg else self._word("tvFin", sem.TV_FIN)
            obj = self._pn() if k >= 8 else self._np(d, "main")
            return Sentence(subj, neg, verb=verb, obj=obj)
        subj = self._np(d, "main")
        verb = self._word("tvInf", sem.TV_INF) if neg else self._word("tvFin", sem.TV_FIN)
        return Sentence(subj, neg, verb=verb, obj=self._pn())

    def draw(self) -> Sentence:
        while True:
            self.bag: dict[str, set[str]] = {}
            try:
                return self._sentence()
            except _Reject:
                continue


# ---------------------------------------------------------------------------------------------------------
# Tree queries used by split rules and categories


def determiners(tree: Sentence) -> list[str]:
    out: list[str] = []

    def walk(np: NP | None) -> None:
        if np is None:
            return
        if np.det is not None:
            out.append(np.det)
        if np.rc is not None and np.rc.np is not None:
            walk(np.rc.np)

    walk(tree.subj)
    walk(tree.obj)
    return out


def embedded_determiners(tree: Sentence) -> list[str]:
    """Determiners of NPs inside relative clauses (not the main-clause subject or object)."""
    out: list[str] = []

    def walk(np: NP | None, embedded: bool) -> None:
        if np is None:
            return
        if embedded and np.det is not None:
            out.append(np.det)
        if np.rc is not None and np.rc.np is not None:
            walk(np.rc.np, True)

    walk(tree.subj, False)
    walk(tree.obj, False)
    return out


def quantifier_category(tree: Sentence) -> str:
    """``<Q>:<M>`` (see the module docstring); Q from the first quantified NP (depth 0 has at most one)."""
    dets = determiners(tree)
    q = sem.QUANT_TYPE[dets[0]] if dets else "PN"
    flags = sem.tag_flags(tree)
    mods = [name for name, on in (
        ("ADJ", flags["adjective"]),
        ("ADV", flags["adverb"]),
        ("CON", flags["conjunction"] or flags["disjunction"]),
        ("NEG", flags["negation"]),
    ) if on]
    return q + ":" + ("+".join(mods) if mods else "NONE")


# The paper reports test rows by quantifier type (Table 4): the Q of ``<Q>:<M>``; proper-name rows (PN) and the
# ``depth<D>`` categories are in no group.
QUANTIFIER_TYPES = tuple(dict.fromkeys(sem.QUANT_TYPE.values()))


def quantifier_group(category: str) -> tuple[str, ...]:
    q = category.partition(":")[0]
    return (q,) if q in QUANTIFIER_TYPES else ()


CATEGORY_GROUPS = CategoryGroups(
    QUANTIFIER_TYPES, quantifier_group,
    explanation="`EXI` / `NUM` / `UNI` group the rows by the type of their first quantifier (existential, "
                "numeral, universal), as the SyGNS paper reports them; proper-name rows are in no group.",
)


def has_modifier(tree: Sentence) -> bool:
    f = sem.tag_flags(tree)
    return f["adjective"] or f["adverb"] or f["conjunction"] or f["disjunction"]


# ---------------------------------------------------------------------------------------------------------
# Settings: lists of (tree, depth, category) per split, cached per parameter set

SYSTEMATICITY = {
    "one": ("one",),
    "two": ("two",),
    "every": ("every",),
    "one_two_every": ("one", "two", "every"),
}
SYS_TRAIN, SYS_TEST = 12_000, 38_000
PROD_PER_DEPTH = 20_000
EMB_DEPTH0, EMB_TRAIN_PER_DEPTH, EMB_TEST_PER_DEPTH = 10_000, 2_000, 5_000
VALIDATION_FRACTION = 0.1

Item = tuple[Sentence, int, str]


MAX_IDLE_DRAWS = 200_000  # draws without a new sentence before we call the population exhausted


def _n(size: int, scale: float) -> int:
    return max(1, int(round(size * scale)))


def _exhausted(setting: str, scale: float) -> ValueError:
    return ValueError(
        f"SyGNS {setting}: {MAX_IDLE_DRAWS:,} draws in a row gave no new sentence; scale={scale} asks for "
        "more distinct sentences than the fragment offers, use a smaller scale"
    )


def _rng(setting: str, seed: int) -> random.Random:
    return random.Random(f"hf_recogs/sygns/{setting}/{seed}")


def _split_validation(pool: list[Item], rng: random.Random) -> tuple[list[Item], list[Item]]:
    pool = list(pool)
    rng.shuffle(pool)
    n_val = int(round(len(pool) * VALIDATION_FRACTION))
    return pool[n_val:], pool[:n_val]


def _two_way(setting: str, seed: int, scale: float, vocab: str, corrected: bool, to_train) -> dict:
    """Depth-0 sampling into a train pool and a test set by the rule ``to_train(tree)``, to fixed sizes."""
    rng = _rng(setting, seed)
    sampler = Sampler(0, rng, vocab, corrected=corrected)
    n_train, n_test = _n(SYS_TRAIN, scale), _n(SYS_TEST, scale)
    seen: set[str] = set()
    train: list[Item] = []
    test: list[Item] = []
    idle = 0
    while len(train) < n_train or len(test) < n_test:
        tree = sampler.draw()
        text = tree.text()
        idle += 1
        if idle > MAX_IDLE_DRAWS:
            raise _exhausted(setting, scale)
        if text in seen:
            continue
        side = train if to_train(tree) else test
        if len(side) >= (n_train if side is train else n_test):
            continue
        idle = 0
        seen.add(text)
        side.append((tree, 0, quantifier_category(tree)))
    tr, val = _split_validation(train, rng)
    return {"train": tr, "validation": val, "test": test}


@lru_cache(maxsize=2)
def _setting(setting: str, primitive: str, seed: int, scale: float, vocab: str, corrected: bool) -> dict:
    if setting == "systematicity":
        prims = SYSTEMATICITY[primitive]

        def to_train(tree: Sentence) -> bool:
            return any(d in prims for d in determiners(tree)) or not has_modifier(tree)

        return _two_way(f"{setting}_{primitive}", seed, scale, vocab, corrected, to_train)

    if setting == "quantifier_negation":

        def to_train(tree: Sentence) -> bool:
            return primitive in determiners(tree) or not tree_has_negation(tree)

        return _two_way(f"{setting}_{primitive}", seed, scale, vocab, corrected, to_train)

    rng = _rng(f"{setting}_{primitive}", seed)
    seen: set[str] = set()

    def fill(out: list[Item], sampler: Sampler, depth: int, n: int, keep=None) -> None:
        idle = 0
        while len(out) < n:
            tree = sampler.draw()
            text = tree.text()
            idle += 1
            if idle > MAX_IDLE_DRAWS:
                raise _exhausted(setting, scale)
            if text in seen or (keep is not None and not keep(tree)):
                continue
            idle = 0
            seen.add(text)
            out.append((tree, depth, f"depth{depth}"))

    if setting == "productivity":
        per_depth = {}
        for depth in range(5):
            items: list[Item] = []
            fill(items, Sampler(depth, rng, vocab, corrected=corrected), depth, _n(PROD_PER_DEPTH, scale))
            per_depth[depth] = items
        tr, val = _split_validation(per_depth[0] + per_depth[1], rng)
        return {"train": tr, "validation": val, "test": per_depth[2] + per_depth[3] + per_depth[4]}

    if setting == "embedding_quantifiers":
        pool: list[Item] = []
        fill(pool, Sampler(0, rng, vocab, corrected=corrected), 0, _n(EMB_DEPTH0, scale))
        for depth in range(1, 5):
            part: list[Item] = []
            sampler = Sampler(depth, rng, vocab, embedded_dets=(primitive,), corrected=corrected)
            fill(part, sampler, depth, _n(EMB_TRAIN_PER_DEPTH, scale))
            pool += part
        test: list[Item] = []
        for depth in range(1, 5):
            part = []
            fill(
                part,
                Sampler(depth, rng, vocab, corrected=corrected),
                depth,
                _n(EMB_TEST_PER_DEPTH, scale),
                keep=lambda t: any(d != primitive for d in embedded_determiners(t)),
            )
            test += part
        tr, val = _split_validation(pool, rng)
        return {"train": tr, "validation": val, "test": test}

    raise ValueError(f"unknown SyGNS setting {setting!r}")


def tree_has_negation(tree: Sentence) -> bool:
    return sem.tag_flags(tree)["negation"]


def rows(
    setting: str,
    split: str,
    *,
    primitive: str = "one",
    seed: int = DEFAULT_SEED,
    output: str = "fol",
    scale: float = 1.0,
    vocab: str = "sample",
    semantics: str = "upstream",
) -> Iterator[Row]:
    """The rows of one split of a setting (see the module docstring)."""
    if output not in OUTPUTS:
        raise ValueError(f"SyGNS output must be one of {', '.join(OUTPUTS)}, not {output!r}")
    corrected = semantics == "corrected"
    items = _setting(setting, primitive, int(seed), float(scale), vocab, corrected)[split]
    for tree, depth, category in items:
        m = sem.meanings(tree, quirks=not corrected)
        yield {
            "input": tree.text(),
            "output": m[output],
            "category": category,
            "fol": m["fol"],
            "drs": m["drs"],
            "vf": m["vf"],
            "folpol": m["folpol"],
            "vfpol": m["vfpol"],
            "tags": m["tags"],
            "depth": depth,
        }


# ---------------------------------------------------------------------------------------------------------
# Configs

EXTRA_FEATURES = {
    "fol": "string",
    "drs": "string",
    "vf": "string",
    "folpol": "string",
    "vfpol": "string",
    "tags": "string",
    "depth": "int32",
}

_COMMON_PARAMS = (
    Param("seed", DEFAULT_SEED, "random seed of the regeneration (upstream is unseeded)"),
    Param("output", "fol", "meaning representation in the output column", OUTPUTS),
    Param("scale", 1.0, "multiplies every split size (e.g. 0.01 for a quick test)"),
    Param(
        "vocab",
        "sample",
        "adjectives/adverbs: the 5+5 upstream's grammar interprets (sample) or all 10+10 of vocab.yaml",
        ("sample", "yaml"),
    ),
    Param(
        "semantics",
        "upstream",
        "upstream quirks (reversed subject-gap arguments, reused DRS labels, surface bugs) or corrected",
        ("upstream", "corrected"),
    ),
)

_DATA_NOTE = (
    "SyGNS-derived data (Yanaka et al. 2021), CC BY-SA 4.0, regenerated by hf_recogs with its own seeded "
    "generator; not the paper's data, which was never released and cannot be regenerated."
)


_DECLARED: list[DatasetConfig] = []


def _add(config: DatasetConfig) -> DatasetConfig:
    _DECLARED.append(config)
    return config


def _declare(name: str, setting: str, description: str, primitive: str | None, notes: str) -> None:
    params = _COMMON_PARAMS
    if primitive is None:
        params = (Param("primitive", "one", "the primitive quantifier", ("one", "two", "every")),) + params

        def generate(split: str, primitive: str, **params) -> Iterator[Row]:
            return rows(setting, split, primitive=primitive, **params)
    else:

        def generate(split: str, **params) -> Iterator[Row]:
            return rows(setting, split, primitive=primitive, **params)

    _add(
        DatasetConfig(
            name=name,
            description=f"{description} {_DATA_NOTE}",
            family=FAMILY,
            license=LICENSE,
            citations=CITATIONS,
            splits=("train", "validation", "test"),
            generate=generate,
            params=params,
            extra_features=dict(EXTRA_FEATURES),
            notes=notes,
            metric="sygns",
            category_groups=CATEGORY_GROUPS,
        )
    )


for _prim in SYSTEMATICITY:
    _declare(
        f"sygns_systematicity_{_prim}",
        "systematicity",
        f"SyGNS systematicity, primitive quantifier(s) {_prim.replace('_', ', ')}: depth-0 sentences; "
        "train = sentences with a primitive quantifier or without adjective/adverb/and/or, test = the others "
        "(10,800 train / 1,200 validation / 38,000 test).",
        _prim,
        "Category <Q>:<modifiers> (Q = EXI/NUM/UNI/PN).",
    )
_declare(
    "sygns_quantifier_negation",
    "quantifier_negation",
    "SyGNS quantifiers x negation (paper appendix; split rule ours): depth 0; train = sentences with the "
    "primitive quantifier or without negation, test = other quantifiers under negation "
    "(10,800 / 1,200 / 38,000).",
    None,
    "Category <Q>:<modifiers>.",
)
_declare(
    "sygns_productivity",
    "productivity",
    "SyGNS productivity: 20,000 sentences per embedding depth; train depths 0-1 (36,000 train / 4,000 "
    "validation), test depths 2, 3, 4 (60,000), category depth<D>.",
    "one",
    "Category depth<D>.",
)
_declare(
    "sygns_embedding_quantifiers",
    "embedding_quantifiers",
    "SyGNS embedded-quantifier systematicity (paper appendix; design ours): train = 10,000 depth-0 sentences "
    "plus 2,000 per depth 1-4 whose embedded NPs all use the primitive quantifier (16,200 train / 1,800 "
    "validation); test = 5,000 per depth 1-4 with a non-primitive embedded quantifier, category depth<D>.",
    None,
    "Category depth<D>.",
)

CONFIGS: tuple[DatasetConfig, ...] = tuple(_DECLARED)  # collected by hf_recogs.registry
