"""SyGNS: the 50-row upstream sample (all meaning columns, byte for byte), the grammar against upstream's
scheme files, and the regenerated ``sygns_*`` configs (determinism, sizes, split rules, categories, metadata).

Expected values come from the upstream files (read and checksum-verified through ``hf_recogs.sources``) and
from docs/DATASETS.md §5, not from our code. Config tests run at ``scale=0.01`` except one full-size run.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from functools import lru_cache

import pytest

from hf_recogs.benchmarks import sygns
from hf_recogs.benchmarks import sygns_semantics as sem
from hf_recogs.registry import configs_of, get_config
from hf_recogs.sources import pinned, read_lines, read_tsv

# Upstream's POS templates (scripts/tmp/depth*.scheme.txt): a sentence's scheme replaces each word by its
# vocabulary category; only these tests need them.
_VOCABULARY = {
    "nounSing": sem.NOUN_SING, "nounPlur": sem.NOUN_PLUR, "pn": sem.PROPER_NAMES,
    "detSing": sem.DET_SING, "detPlur": sem.DET_PLUR, "adj": sem.ADJECTIVES_YAML, "adv": sem.ADVERBS_YAML,
    "ivFin": sem.IV_FIN, "ivInf": sem.IV_INF, "tvFin": sem.TV_FIN, "tvInf": sem.TV_INF, "conn": sem.CONNECTIVES,
}
_CATEGORY_OF = {word: category for category, words in _VOCABULARY.items() for word in words}


def scheme_of(sentence: str) -> str:
    return " ".join(_CATEGORY_OF.get(w, w) for w in sentence.split(" "))


def instantiate_scheme(scheme: str, rng: random.Random) -> str:
    """A sentence of ``scheme`` with words drawn at random, distinct within a category where possible;
    adjectives and adverbs from the sample's vocabulary (upstream's YAML lists a few more)."""
    pools = {**_VOCABULARY, "adj": sem.ADJECTIVES, "adv": sem.ADVERBS}
    tokens = scheme.split()
    fill = {}
    for category, k in Counter(t for t in tokens if t in pools).items():
        words = pools[category]
        fill[category] = rng.sample(words, k) if k <= len(words) else [rng.choice(words) for _ in range(k)]
    return " ".join(fill[t].pop() if t in pools else t for t in tokens)


HEADER = ["id", "depth", "sentence", "fol", "folpol", "vf", "vfpol", "tags", "drs"]
SMALL = 0.01
CONFIG_NAMES = (
    "sygns_systematicity_one",
    "sygns_systematicity_two",
    "sygns_systematicity_every",
    "sygns_systematicity_one_two_every",
    "sygns_quantifier_negation",
    "sygns_productivity",
    "sygns_embedding_quantifiers",
)


@lru_cache(maxsize=1)
def _sample_rows() -> list[dict[str, str]]:
    table = read_tsv(pinned("sygns", "scripts/tmp_results/results.tsv"))
    assert table[0] == HEADER
    return [dict(zip(HEADER, row)) for row in table[1:]]


@lru_cache(maxsize=16)
def _split(name: str, split: str, **params) -> list[dict]:
    return list(get_config(name).rows(split, **params))


def _splits(name: str, **params) -> dict[str, list[dict]]:
    return {s: _split(name, s, **params) for s in ("train", "validation", "test")}


# ----------------------------------------------------------------------------------------------------------
# Ground truth: the upstream sample


@pytest.mark.mirror
@pytest.mark.parametrize("column", sem.COLUMNS)
def test_sample_column_exact(mirror, column):
    rows = _sample_rows()
    assert len(rows) == 50
    mismatches = [
        (r["id"], r[column], sem.analyze(r["sentence"])[column])
        for r in rows
        if sem.analyze(r["sentence"])[column] != r[column]
    ]
    assert mismatches == [], f"{len(mismatches)}/50 rows differ in {column}: {mismatches[:3]}"


@pytest.mark.mirror
def test_sample_parses_round_trip(mirror):
    for r in _sample_rows():
        tree = sem.parse(r["sentence"])
        assert tree.text() == r["sentence"]
    depths = Counter(r["depth"] for r in _sample_rows())
    assert depths == {str(d): 10 for d in range(5)}


@pytest.mark.mirror
def test_sample_depth_files_are_the_sentences(mirror):
    sentences = [r["sentence"] for r in _sample_rows()]
    listed = []
    for d in range(5):
        listed += read_lines(pinned("sygns", f"scripts/tmp_results/depth{d}.txt"))
    assert listed == sentences


@pytest.mark.mirror
def test_upstream_schemes_are_our_grammar(mirror):
    """Every upstream scheme (all 11,232 lines, depths 0-4) instantiates to a sentence we parse and interpret;
    the schemes our sampler draws at depths 0-2 are upstream schemes, and depth 0 reaches all 48."""
    rng = random.Random(0)
    upstream = {}
    for d in range(5):
        lines = read_lines(pinned("sygns", f"scripts/tmp/depth{d}.scheme.txt"))
        assert all(line.endswith(" ") for line in lines)
        upstream[d] = {line.rstrip(" ") for line in lines}
        for scheme in upstream[d]:
            sentence = instantiate_scheme(scheme, rng)
            tree = sem.parse(sentence)
            assert tree.text() == sentence
            assert scheme_of(sentence) == scheme
            sem.meanings(tree)
    assert [len(upstream[d]) for d in range(5)] == [48, 440, 3640, 3921, 3183]
    for d, draws in ((0, 20_000), (1, 3_000), (2, 3_000)):
        sampler = sygns.Sampler(d, random.Random(d))
        drawn = {scheme_of(sampler.draw().text()) for _ in range(draws)}
        assert drawn <= upstream[d], sorted(drawn - upstream[d])[:3]
        if d == 0:
            assert drawn == upstream[0]


@pytest.mark.mirror
def test_depth0_draws_are_uniform_over_sentences(mirror):
    """Upstream samples uniformly from all instantiated sentences: a scheme's share is its number of fillings
    (distinct words per category) over the 323,400 depth-0 sentences. Chi-square over the 48 schemes."""
    import math

    sizes = {"nounSing": 10, "nounPlur": 10, "pn": 10, "detSing": 3, "detPlur": 3, "adj": 5, "adv": 5,
             "ivFin": 10, "ivInf": 10, "tvFin": 10, "tvInf": 10, "conn": 2}

    def fillings(scheme: str) -> int:
        n = 1
        for cat, k in Counter(t for t in scheme.split() if t in sizes).items():
            n *= math.perm(sizes[cat], k)
        return n

    schemes = [line.rstrip(" ") for line in read_lines(pinned("sygns", "scripts/tmp/depth0.scheme.txt"))]
    total = sum(fillings(s) for s in schemes)
    assert total == 323_400
    draws = 20_000
    sampler = sygns.Sampler(0, random.Random(2021))
    seen = Counter(scheme_of(sampler.draw().text()) for _ in range(draws))
    chi2 = sum((seen[s] - draws * fillings(s) / total) ** 2 / (draws * fillings(s) / total) for s in schemes)
    assert chi2 < 47 + 5 * math.sqrt(2 * 47), chi2


def test_expected_scheme_counts_match_keep_probability():
    """Upstream keeps each relative clause of the depth-3/4 scheme enumeration with probability 1/K (K = 2,3);
    the expected number of kept schemes (counted with one word per category) is close to the 3,921 / 3,183
    lines of the sample's scheme files."""
    expected = {}
    for depth, k in ((3, 2), (4, 3)):
        np0 = 2 * (1 + 1)  # sing/plur x optional adjective
        rc = None
        np = np0
        for _ in range(depth):
            rc = (4 * np + 2 * 3) / k  # four transitive kinds + two intransitive kinds x three verb modifiers
            np = 2 * rc
        expected[depth] = 10 * np  # six frames: 2 intransitive x 3 modifiers + 4 transitive
    assert abs(expected[3] - 3921) / 3921 < 0.05
    assert abs(expected[4] - 3183) / 3183 < 0.05
    assert sygns.KEEP_K == {0: 1, 1: 1, 2: 1, 3: 2, 4: 3}


def test_parse_rejects_and_ambiguity():
    with pytest.raises(sem.ParseError):
        sem.parse("ann chased")
    with pytest.raises(sem.ParseError):
        sem.parse("two dog ran")  # number agreement
    with pytest.raises(sem.ParseError):
        sem.parse("every dog chased all cats")  # quantified subject and object
    sem.parse("ann did not chased bob")  # upstream surface bug, in the fragment
    sem.parse("every dog that ran or walk slept")  # upstream surface bug, in the fragment


# ----------------------------------------------------------------------------------------------------------
# Semantics by hand (no mirror needed)


def test_known_rows_by_hand():
    got = sem.analyze("two horses that three lions followed loved daniel")
    assert got["fol"] == (
        "exists x1.(two(x1) & horse(x1) & exists x2.(three(x2) & lion(x2) & follow(x2,x1)) & "
        "exists x3.(daniel(x3) & love(x1,x3)))"
    )
    assert got["vf"] == "TWO AND HORSE THREE LION INV FOLLOW EXIST DANIEL LOVE"
    assert got["vfpol"] == "[[horse,pos],[lion,pos],[follow,pos],[daniel,pos],[love,pos]]"
    got = sem.analyze("all small cats did not dance")
    assert got["drs"] == (
        "b1 IMP b2 b3 [SEP] b2 REF x1 [SEP] b2 cat x1 [SEP] b2 small x1 [SEP] b3 NOT b4 [SEP] b4 dance x1"
    )
    assert got["folpol"] == "[('cat', 0), ('small', 0), ('dance', 0)]"


def test_corrected_semantics():
    s = "all tigers that did not chase three birds walked or escaped"
    upstream = sem.analyze(s)
    fixed = sem.analyze(s, quirks=False)
    assert "chase(x2,x1)" in upstream["fol"]
    assert fixed["fol"] == (
        "all x1.((tiger(x1) & -exists x2.(three(x2) & bird(x2) & chase(x1,x2))) -> (walk(x1) | escape(x1)))"
    )
    assert fixed["drs"] == (
        "b1 IMP b2 b4 [SEP] b2 REF x1 [SEP] b2 tiger x1 [SEP] b2 NOT b3 [SEP] b3 REF x2 [SEP] b3 three x2 "
        "[SEP] b3 bird x2 [SEP] b3 chase x1 x2 [SEP] b4 DIS b5 b6 [SEP] b5 walk x1 [SEP] b6 escape x1"
    )
    assert fixed["vf"] == upstream["vf"] and fixed["tags"] == upstream["tags"]
    two_negations = sem.analyze("two dogs that did not run did not rush and escape", quirks=False)["drs"]
    assert "b1 NOT b2" in two_negations and "b1 NOT b3" in two_negations


@pytest.mark.parametrize(
    "sentence, category",
    [
        ("two small monkeys ran", "NUM:ADJ"),
        ("ann did not run slowly", "PN:ADV+NEG"),
        ("every fox did not run and dance", "UNI:CON+NEG"),
        ("a dog ran", "EXI:NONE"),
        ("ann chased greg", "PN:NONE"),
        ("bob did not kiss all wild cats", "UNI:ADJ+NEG"),
        ("one large dog swam or ran", "EXI:ADJ+CON"),
    ],
)
def test_quantifier_category(sentence, category):
    assert sygns.quantifier_category(sem.parse(sentence)) == category


# ----------------------------------------------------------------------------------------------------------
# Configs


def test_configs_registered_with_metadata():
    for name in CONFIG_NAMES:
        cfg = get_config(name)
        assert cfg.license == "CC-BY-SA-4.0"
        assert cfg.citations == ("sygns",)
        assert cfg.family == "sygns"
        assert cfg.splits == ("train", "validation", "test")
        assert "CC BY-SA 4.0" in cfg.description and "regenerated by hf_recogs" in cfg.description
        assert "not the paper's data" in cfg.description
        assert cfg.extra_features == {
            "fol": "string", "drs": "string", "vf": "string", "folpol": "string", "vfpol": "string",
            "tags": "string", "depth": "int32",
        }
        params = {p.name: p for p in cfg.params}
        assert params["seed"].default == sygns.DEFAULT_SEED
        assert params["output"].choices == ("fol", "drs", "vf")
    assert set(configs_of("sygns")) == set(CONFIG_NAMES)


def test_output_parameter_selects_the_form():
    for form in ("fol", "drs", "vf"):
        rows = _split("sygns_systematicity_one", "validation", scale=SMALL, output=form)
        assert rows and all(r["output"] == r[form] for r in rows)
    with pytest.raises(ValueError):
        get_config("sygns_productivity").resolve_params({"output": "lambda"})


def test_rows_carry_consistent_meanings():
    """Every generated row re-parses to exactly the meaning columns it carries."""
    for name in ("sygns_productivity", "sygns_systematicity_one"):
        for split, rows in _splits(name, scale=SMALL).items():
            for r in rows:
                assert set(r) == {"input", "output", "category", "fol", "drs", "vf", "folpol", "vfpol",
                                  "tags", "depth"}
                assert isinstance(r["depth"], int)
                assert sem.analyze(r["input"]) == {c: r[c] for c in sem.COLUMNS}


def test_deterministic_for_a_seed():
    first = list(get_config("sygns_productivity").rows("test", scale=SMALL, seed=7))
    sygns._setting.cache_clear()
    again = list(get_config("sygns_productivity").rows("test", scale=SMALL, seed=7))
    assert first == again
    other = list(get_config("sygns_productivity").rows("test", scale=SMALL, seed=8))
    assert [r["input"] for r in other] != [r["input"] for r in first]


@pytest.mark.parametrize("name", CONFIG_NAMES)
def test_small_sizes_and_no_duplicates(name):
    splits = _splits(name, scale=SMALL)
    sizes = {s: len(r) for s, r in splits.items()}
    if name == "sygns_productivity":
        pool, test = 2 * 200, 3 * 200
    elif name == "sygns_embedding_quantifiers":
        pool, test = 100 + 4 * 20, 4 * 50
    else:
        pool, test = 120, 380
    assert sizes == {"train": pool - round(pool / 10), "validation": round(pool / 10), "test": test}
    inputs = [r["input"] for rows in splits.values() for r in rows]
    assert len(inputs) == len(set(inputs))


def test_full_size_systematicity_one():
    splits = _splits("sygns_systematicity_one")
    assert {s: len(r) for s, r in splits.items()} == {"train": 10_800, "validation": 1_200, "test": 38_000}
    _check_systematicity(splits, ("one",))


def _check_systematicity(splits: dict, prims: tuple[str, ...]) -> None:
    modifier_tags = ("adjective:yes", "adverb:yes", "conjunction:yes", "disjunction:yes")
    for split, rows in splits.items():
        for r in rows:
            assert r["depth"] == 0 and "that" not in r["input"].split()
            has_prim = any(w in prims for w in r["input"].split())
            modified = any(t in r["tags"] for t in modifier_tags)
            assert (split == "test") == (not has_prim and modified), (split, r["input"])
            assert re.fullmatch(r"(EXI|NUM|UNI|PN):(NONE|(ADJ\+?)?(ADV\+?)?(CON\+?)?(NEG)?)", r["category"])
            dets = [w for w in r["input"].split() if w in sem.QUANT_TYPE]
            assert r["category"].split(":")[0] == (sem.QUANT_TYPE[dets[0]] if dets else "PN")
            assert ("NEG" in r["category"]) == ("negation:yes" in r["tags"])


@pytest.mark.parametrize("prim", sorted(sygns.SYSTEMATICITY))
def test_systematicity_split_rule(prim):
    splits = _splits(f"sygns_systematicity_{prim}", scale=SMALL)
    _check_systematicity(splits, sygns.SYSTEMATICITY[prim])
    test_quantifiers = {r["category"].split(":")[0] for r in splits["test"]}
    assert test_quantifiers <= {"EXI", "NUM", "UNI", "PN"}


def test_quantifier_negation_split_rule():
    splits = _splits("sygns_quantifier_negation", scale=SMALL, primitive="two")
    for split, rows in splits.items():
        for r in rows:
            in_test = "two" not in r["input"].split() and "negation:yes" in r["tags"]
            assert (split == "test") == in_test


def test_productivity_depths_and_categories():
    splits = _splits("sygns_productivity", scale=SMALL)
    for split in ("train", "validation"):
        assert {r["depth"] for r in splits[split]} == {0, 1}
    assert Counter(r["depth"] for r in splits["train"] + splits["validation"]) == {0: 200, 1: 200}
    test = splits["test"]
    assert [r["depth"] for r in test] == [2] * 200 + [3] * 200 + [4] * 200
    for split, rows in splits.items():
        for r in rows:
            assert r["category"] == f"depth{r['depth']}"
            assert r["input"].split().count("that") <= r["depth"]
            if r["depth"] == 0:
                assert "that" not in r["input"].split()


def test_embedding_quantifiers_rule():
    splits = _splits("sygns_embedding_quantifiers", scale=SMALL, primitive="every")
    pool = splits["train"] + splits["validation"]
    assert Counter(r["depth"] for r in pool) == {0: 100, 1: 20, 2: 20, 3: 20, 4: 20}
    for r in pool:
        assert set(sygns.embedded_determiners(sem.parse(r["input"]))) <= {"every"}
    assert Counter(r["depth"] for r in splits["test"]) == {1: 50, 2: 50, 3: 50, 4: 50}
    for r in splits["test"]:
        assert any(d != "every" for d in sygns.embedded_determiners(sem.parse(r["input"])))
        assert r["category"] == f"depth{r['depth']}"


def test_vocab_and_corrected_variants():
    rows = _split("sygns_systematicity_one", "test", scale=SMALL, vocab="yaml")
    words = {w for r in rows for w in r["input"].split()}
    extra = {"young", "old", "cute", "dirty", "lazy", "gracefully", "happily", "sadly", "angrily", "calmly"}
    assert words & extra
    default_rows = _split("sygns_systematicity_one", "test", scale=SMALL)
    default_words = {w for r in default_rows for w in r["input"].split()}
    assert not default_words & set(sem.ADJECTIVES_YAML[5:] + sem.ADVERBS_YAML[5:])
    fixed = _split("sygns_productivity", "train", scale=SMALL, semantics="corrected")
    for r in fixed:
        toks = r["input"].split()
        for i in range(len(toks) - 2):
            assert not (toks[i : i + 2] == ["did", "not"] and toks[i + 2] in sem.TV_FIN)
        tree = sem.parse(r["input"])
        assert sem.meanings(tree, quirks=False) == {c: r[c] for c in sem.COLUMNS}


def test_default_seed_data_is_pinned():
    """Regression pin: the published rows of the default seed. If this fails, the regenerated data changed;
    that must be deliberate (and announced), never a side effect."""
    import hashlib

    pins = {"sygns_systematicity_one": "461543571b8a3d77", "sygns_productivity": "f5b218a2bc5496b5"}
    for name, pin in pins.items():
        rows = _split(name, "validation", scale=SMALL)
        text = "\n".join(r["input"] + "\t" + r["output"] for r in rows)
        assert hashlib.sha256(text.encode()).hexdigest()[:16] == pin, name


def test_exhausted_population_fails_clearly(monkeypatch):
    """Asking for more distinct sentences than exist raises instead of looping (simulated: one sentence)."""
    tree = sem.parse("ann ran")
    monkeypatch.setattr(sygns, "MAX_IDLE_DRAWS", 1_000)
    monkeypatch.setattr(sygns.Sampler, "draw", lambda self: tree)
    with pytest.raises(ValueError, match="smaller scale"):
        sygns._setting.__wrapped__("systematicity", "one", 1, 0.01, "sample", False)
    with pytest.raises(ValueError, match="smaller scale"):
        sygns._setting.__wrapped__("productivity", "one", 1, 0.01, "sample", False)
