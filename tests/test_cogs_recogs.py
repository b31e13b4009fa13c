"""COGS and the ReCOGS family: derivations (hand-written rows, then byte identity with the official files)
and the dataset configs of ``hf_recogs.benchmarks.cogs``.

Mirror tests compare our regenerated files with the verified upstream bytes (``sources.fetch_bytes`` checks
each file against the pinned checksum before returning it); they skip cleanly without the mirror.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter

import pytest
from conftest import needs_mirror

from hf_recogs import sources
from hf_recogs.benchmarks import cogs as cogs_mod
from hf_recogs.benchmarks import recogs_derive as d
from hf_recogs.registry import configs_of, get_config

# ---------------------------------------------------------------------------------------------------------
# Hand-written rows (the examples of docs/DATASETS.md §2.2 and §3.7)

HOPE_S = "Liam hoped that a box was burned by a girl ."
HOPE_LF = (
    "hope . agent ( x _ 1 , Liam ) AND hope . ccomp ( x _ 1 , x _ 6 ) AND box ( x _ 4 ) AND "
    "burn . theme ( x _ 6 , x _ 4 ) AND burn . agent ( x _ 6 , x _ 9 ) AND girl ( x _ 9 )"
)
HOPE_POS = (
    "Liam ( 0 ) ; box ( 4 ) ; girl ( 9 ) ; hope ( 1 ) AND agent ( 1 , 0 ) AND ccomp ( 1 , 6 ) AND "
    "burn ( 6 ) AND theme ( 6 , 4 ) AND agent ( 6 , 9 )"
)
RING_S = "Emma ate the ring beside a bed ."
RING_LF = (
    "* ring ( x _ 3 ) ; eat . agent ( x _ 1 , Emma ) AND eat . theme ( x _ 1 , x _ 3 ) AND "
    "ring . nmod . beside ( x _ 3 , x _ 6 ) AND bed ( x _ 6 )"
)
GIRL_S = "The girl needed to cook ."
GIRL_LF = (
    "* girl ( x _ 1 ) ; need . agent ( x _ 2 , x _ 1 ) AND need . xcomp ( x _ 2 , x _ 4 ) AND "
    "cook . agent ( x _ 4 , x _ 1 )"
)
ROSE = (
    "A rose was helped by a dog .",
    "rose ( x _ 1 ) AND help . theme ( x _ 3 , x _ 1 ) AND help . agent ( x _ 3 , x _ 6 ) AND dog ( x _ 6 )",
    "in_distribution",
)
OFFER_S = "The girl offered the weapon beside a machine to a chicken ."
OFFER_LF = (
    "* girl ( x _ 1 ) ; * weapon ( x _ 4 ) ; offer . agent ( x _ 2 , x _ 1 ) AND offer . theme ( x _ 2 , x _ 4 ) "
    "AND offer . recipient ( x _ 2 , x _ 10 ) AND weapon . nmod . beside ( x _ 4 , x _ 7 ) AND machine ( x _ 7 ) "
    "AND chicken ( x _ 10 )"
)
TOUCH = (
    "touch",
    "LAMBDA a . LAMBDA b . LAMBDA e . touch . agent ( e , b ) AND touch . theme ( e , a )",
    "primitive",
)
INFLATE = ("inflate", "LAMBDA a . LAMBDA e . inflate . theme ( e , a )", "primitive")
SHARK = ("shark", "LAMBDA a . shark ( a )", "primitive")
PAULA = ("Paula", "Paula", "primitive")

MALFORMED = [
    "cat ( x _ 1",  # unclosed
    "cat ( x _ 1 ) AND run . agent ( x _ 2 x _ 1 )",  # missing comma
    "cat ( x _ 1 ) AND run . agent ( x _ 2 , emma )",  # lower-case constant
    "a . b . c . d ( x _ 1 , x _ 2 )",  # too many labels
    "* run . agent ( x _ 2 , x _ 1 )",  # definite role term
    "cat ( Emma )",  # entity of a constant
]


class ScriptedRandom:
    """A stand-in RNG that replays given draws and fails on any draw it was not given."""

    def __init__(self, randoms=(), choices=()):
        self.randoms, self.choices = list(randoms), list(choices)

    def random(self):
        if not self.randoms:
            raise AssertionError("unexpected random() draw")
        return self.randoms.pop(0)

    def choice(self, seq):
        if not self.choices:
            raise AssertionError("unexpected choice() draw")
        value = self.choices.pop(0)
        assert value in seq
        return value


# ---------------------------------------------------------------------------------------------------------
# Reading, writing, parsing


def test_tsv_round_trip_and_errors():
    rows = [ROSE, PAULA]
    data = d.write_tsv(rows)
    assert data == ("\t".join(ROSE) + "\n" + "Paula\tPaula\tprimitive\n").encode()
    assert d.parse_tsv(data) == rows
    assert d.write_tsv([]) == b""
    with pytest.raises(d.DerivationError, match="fields"):
        d.parse_tsv(b"a\tb\n")
    with pytest.raises(d.DerivationError, match="newline"):
        d.parse_tsv(b"a\tb\tc")
    with pytest.raises(d.DerivationError, match="TAB"):
        d.write_tsv([("a\tb", "c", "d")])


def test_parse_conjuncts_and_canonicalise():
    conj = d.parse_conjuncts(RING_LF)
    assert [c.text() for c in conj] == RING_LF.replace(" ; ", " AND ").split(" AND ")
    assert conj[0].definite and conj[0].is_entity and conj[3].is_nmod
    assert conj[1].args == ("x _ 1", "Emma")
    for lf in (RING_LF, HOPE_LF, GIRL_LF, OFFER_LF, ROSE[1], TOUCH[1], "Paula"):
        assert d.canonicalise(lf) == lf
    # definites move to the front, sorted and deduplicated; the body keeps its order
    assert d.canonicalise("* b ( x _ 4 ) AND a ( x _ 2 ) ; * b ( x _ 4 ) ; * c ( x _ 1 )") == (
        "* c ( x _ 1 ) ; * b ( x _ 4 ) ; a ( x _ 2 )"
    )


@pytest.mark.parametrize("lf", MALFORMED)
def test_malformed_conjunct_is_a_clear_error(lf):
    with pytest.raises(d.DerivationError, match="malformed COGS"):
        d.parse_conjuncts(lf)
    with pytest.raises(d.DerivationError):
        d.recogs_translate("A cat ran .", lf)
    with pytest.raises(d.DerivationError):
        d.variable_free(lf)


# ---------------------------------------------------------------------------------------------------------
# Derivations on hand-written rows


def test_token_removal_examples():
    assert (
        d.remove_tokens(ROSE[1], "x_")
        == "rose ( 1 ) AND help . theme ( 3 , 1 ) AND help . agent ( 3 , 6 ) AND dog ( 6 )"
    )
    assert (
        d.remove_tokens(ROSE[1], "x_()") == "rose 1 AND help . theme 3 , 1 AND help . agent 3 , 6 AND dog 6"
    )
    assert d.remove_tokens(ROSE[1], "x_(,)") == "rose 1 AND help . theme 3 1 AND help . agent 3 6 AND dog 6"
    assert d.token_removal([TOUCH], "x_(,)") == [
        ("touch", "LAMBDA a . LAMBDA b . LAMBDA e . touch . agent e b AND touch . theme e a", "primitive")
    ]
    assert d.token_removal([PAULA], "x_") == [PAULA]
    with pytest.raises(ValueError, match="removal set"):
        d.token_removal([ROSE], "x")


def test_introsort_argsort_small_is_insertion_sort():
    rng = random.Random(0)
    for n in range(17):  # <= 16 elements: pure insertion sort (stable)
        keys = [rng.randrange(4) for _ in range(n)]
        assert d.introsort_argsort(keys) == sorted(range(n), key=keys.__getitem__)


def test_introsort_argsort_sorts_and_is_not_stable():
    rng = random.Random(1)
    for n in (17, 50, 1000):
        keys = [rng.randrange(10) for _ in range(n)]
        order = d.introsort_argsort(keys)
        assert sorted(order) == list(range(n))
        assert [keys[i] for i in order] == sorted(keys)
    keys = [rng.randrange(5) for _ in range(200)]
    assert d.introsort_argsort(keys) != sorted(range(200), key=keys.__getitem__)  # tie order differs
    # the heapsort fallback (never reached on the real data) also sorts
    for limit in (0, 1):
        order = d.introsort_argsort(keys, depth_limit=limit)
        assert sorted(order) == list(range(200)) and [keys[i] for i in order] == sorted(keys)


def test_triples_and_sentence_concatenation():
    assert d.select_triples(list(range(10)), 2) == [(9, 8, 7), (3, 2, 1)]
    assert d.select_triples(list(range(9)), 2) == [(8, 7, 6), (2, 1, 0)]
    with pytest.raises(ValueError, match="triples"):
        d.select_triples(list(range(8)), 2)
    s, o2, o3 = d.concat_sentences("The cat wanted to smirk .", "A dog ran .", "Emma smiled .")
    assert (s, o2, o3) == ("The cat wanted to smirk a dog ran Emma smiled .", 5, 8)
    with pytest.raises(d.DerivationError, match="'.'"):
        d.concat_sentences("touch", "A dog ran .", "Emma smiled .")


def test_cogs_concat_tiny():
    rows = [
        ("The cat ran .", "* cat ( x _ 1 ) ; run . agent ( x _ 2 , x _ 1 )", "in_distribution"),
        ("Emma smiled .", "smile . agent ( x _ 1 , Emma )", "in_distribution"),
        ("A dog slept .", "dog ( x _ 1 ) AND sleep . agent ( x _ 2 , x _ 1 )", "in_distribution"),
        PAULA,
        ("Liam slept .", "sleep . agent ( x _ 1 , Liam )", "in_distribution"),
    ]
    out = d.cogs_concat_train(rows, 1)
    assert out[:5] == rows and len(out) == 6
    # pool without the primitive, sorted by length: "The cat ran ." (13) and "A dog slept ." (13) tie
    order = d.length_order([r for r in rows if r[2] != "primitive"])
    pool = [r for r in rows if r[2] != "primitive"]
    s1, s2, s3 = (pool[i] for i in (order[3], order[2], order[1]))
    sentence = d.concat_sentences(s1[0], s2[0], s3[0])[0]
    assert out[5][0] == sentence and out[5][2] == "concat"
    # no definite in the three LFs -> the upstream leading " ; " quirk
    plain = [("Emma smiled .", "smile . agent ( x _ 1 , Emma )", "t")] * 3
    assert d.cogs_concat_train(plain, 1)[-1] == (
        "Emma smiled Emma smiled Emma smiled .",
        " ; smile . agent ( x _ 1 , Emma ) AND smile . agent ( x _ 3 , Emma ) AND smile . agent ( x _ 5 , Emma )",
        "concat",
    )


def test_preposing_tiny():
    rng = ScriptedRandom(randoms=[0.01])
    out = d.preposing_pass([PAULA, TOUCH, ROSE, (RING_S, RING_LF, "in_distribution")], rng)
    assert out[:3] == [PAULA, TOUCH, ROSE]  # no draw for primitives and nmod-free LFs
    assert out[3] == (
        "The ring beside a bed Emma ate .",
        (
            "* ring ( x _ 1 ) ; ring . nmod . beside ( x _ 1 , x _ 4 ) AND bed ( x _ 4 ) AND "
            "eat . theme ( x _ 6 , x _ 1 ) AND eat . agent ( x _ 6 , Emma )"
        ),
        "preposing_1",
    )
    # u >= p: unchanged
    assert d.preposing_pass([(RING_S, RING_LF, "c")], ScriptedRandom(randoms=[0.05])) == [
        (RING_S, RING_LF, "c")
    ]
    # a sentence-initial "A" is lower-cased when the span moves in front of it
    s = "A cat saw the ring beside a bed ."
    lf = (
        "* ring ( x _ 4 ) ; cat ( x _ 1 ) AND see . agent ( x _ 2 , x _ 1 ) AND see . theme ( x _ 2 , x _ 4 ) AND "
        "ring . nmod . beside ( x _ 4 , x _ 7 ) AND bed ( x _ 7 )"
    )
    (new,) = d.preposing_pass([(s, lf, "c")], ScriptedRandom(randoms=[0.0]))
    assert new[0] == "The ring beside a bed a cat saw ."
    assert new[1] == (
        "* ring ( x _ 1 ) ; ring . nmod . beside ( x _ 1 , x _ 4 ) AND bed ( x _ 4 ) AND cat ( x _ 6 ) AND "
        "see . theme ( x _ 7 , x _ 1 ) AND see . agent ( x _ 7 , x _ 6 )"  # re-sorted by the new positions
    )


def test_sprinkle_tiny():
    row = ("The cat ran .", "* cat ( x _ 1 ) ; run . agent ( x _ 2 , x _ 1 )", "in_distribution")
    rng = ScriptedRandom(randoms=[0.01, 0.9], choices=[2])
    assert d.sprinkle_pass([row], rng) == [
        ("The cat um um ran .", "* cat ( x _ 1 ) ; run . agent ( x _ 4 , x _ 1 )", "sprinkle")
    ]
    # v <= 0.5: no filler; ReCOGS_pos keeps the old type with "+sprinkle"
    rng = ScriptedRandom(randoms=[0.01, 0.5])
    assert d.sprinkle_pass([row], rng, category=None) == [(row[0], row[1], "in_distribution+sprinkle")]
    # one-word rows draw u only; u >= p leaves the row alone
    assert d.sprinkle_pass([PAULA, row], ScriptedRandom(randoms=[0.01, 0.07])) == [
        ("Paula", "Paula", "sprinkle"),
        row,
    ]


def test_preposing_sprinkles_share_one_stream():
    rows = [(RING_S, RING_LF, "in_distribution"), ROSE] * 40
    a = d.cogs_preposing_sprinkles_train(rows, seed=3)
    rng = random.Random(3)
    assert a == d.sprinkle_pass(d.preposing_pass(rows, rng), rng)
    assert a != d.sprinkle_pass(d.cogs_preposing_train(rows, seed=3), random.Random(3))


def test_recogs_translation_examples():
    assert d.recogs_translate(HOPE_S, HOPE_LF) == HOPE_POS
    pos = d.recogs_translate(OFFER_S, OFFER_LF)
    assert pos == (
        "* girl ( 1 ) ; * weapon ( 4 ) ; machine ( 7 ) ; chicken ( 10 ) ; offer ( 2 ) AND agent ( 2 , 1 ) AND "
        "theme ( 2 , 4 ) AND recipient ( 2 , 10 ) AND nmod . beside ( 4 , 7 )"
    )
    assert d.recogs_translate(OFFER_S, OFFER_LF, nmod_first=True) == (
        "* girl ( 1 ) ; * weapon ( 4 ) ; machine ( 7 ) ; chicken ( 10 ) ; nmod . beside ( 4 , 7 ) AND offer ( 2 ) "
        "AND agent ( 2 , 1 ) AND theme ( 2 , 4 ) AND recipient ( 2 , 10 )"
    )
    assert d.recogs_translate(*PAULA[:2]) == "LAMBDA a . Paula ( a )"
    assert d.recogs_translate(*SHARK[:2]) == SHARK[1]
    assert d.recogs_translate(*TOUCH[:2]) == (
        "LAMBDA a . LAMBDA b . LAMBDA e . touch ( e ) AND agent ( e , b ) AND theme ( e , a )"
    )
    assert d.recogs_translate(*INFLATE[:2]) == "LAMBDA a . LAMBDA e . inflate ( e ) AND theme ( e , a )"
    with pytest.raises(d.DerivationError, match="occurs 2 times"):
        d.recogs_translate("Emma saw Emma .", "see . agent ( x _ 1 , Emma ) AND see . theme ( x _ 1 , Emma )")
    assert d.recogs_eval([(HOPE_S, HOPE_LF, "c")]) == [(HOPE_S, HOPE_POS, "c")]


def test_recogs_concat_lf():
    a = "* cat ( 1 ) ; run ( 2 ) AND agent ( 2 , 1 ) AND nmod . in ( 1 , 3 )"
    b = "Emma ( 0 ) ; smile ( 1 ) AND agent ( 1 , 0 )"
    assert d.recogs_concat_lf([a, b], [0, 3]) == (
        "* cat ( 1 ) ; Emma ( 3 ) ; run ( 2 ) AND agent ( 2 , 1 ) AND nmod . in ( 1 , 3 ) AND smile ( 4 ) AND agent ( 4 , 3 )"
    )
    assert (
        d.recogs_concat_lf([b, a], [0, 2], nmod_first=True).split(" ; ")[-1].startswith("nmod . in ( 3 , 5 )")
    )


def test_recogs_pos_train_tiny():
    rows = [(RING_S, RING_LF, "in_distribution"), (HOPE_S, HOPE_LF, "in_distribution"), ROSE, PAULA] * 3
    out = d.recogs_pos_train(rows, k=1)
    assert len(out) == len(set(out))
    assert out[-1][2] == "concat"
    assert all(r[1].split(" ")[0] not in ("x", "_") for r in out)


def test_rename_indices():
    renamed = d.rename_indices(HOPE_POS, random.Random(5))
    assert renamed == d.rename_indices(HOPE_POS, random.Random(5))
    old, new = HOPE_POS.split(" "), renamed.split(" ")
    pairs = {(a, b) for a, b in zip(old, new) if a.isdigit()}
    assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs}) == 5  # a bijection
    assert all(int(b) in d.RECOGS_INDEX_POOL for _, b in pairs)
    assert [a for a in old if not a.isdigit()] == [b for b in new if not b.isdigit()]
    with pytest.raises(d.DerivationError, match="pool"):
        d.rename_indices(HOPE_POS, random.Random(0), pool=(1, 2, 3))


def test_regenerated_recogs_tiny():
    train = [(RING_S, RING_LF, "in_distribution"), (HOPE_S, HOPE_LF, "in_distribution"), ROSE, PAULA] * 2
    a = d.regenerated_recogs(train, "train", seed=1, copies=2, concat=1)
    assert a == d.regenerated_recogs(train, "train", seed=1, copies=2, concat=1)
    assert a != d.regenerated_recogs(train, "train", seed=2, copies=2, concat=1)
    assert len(a) == len(set(a))
    assert Counter(c for *_, c in a)["length_ood"] == 2
    dev = d.regenerated_recogs([(HOPE_S, HOPE_LF, "in_distribution")], "validation", seed=1)
    assert dev[0][1] == d.rename_indices(HOPE_POS, d._split_rng(1, "validation"))
    v1 = d.regenerated_recogs([(OFFER_S, OFFER_LF, "c")], "test", flavour="v1")
    assert v1[0][1].split(" ; ")[-1].startswith("nmod . beside")
    with pytest.raises(ValueError, match="flavour"):
        d.regenerated_recogs(train, "train", flavour="v3")


def test_variable_free_examples():
    assert d.variable_free(HOPE_LF) == "hope ( agent = Liam , ccomp = burn ( theme = box , agent = girl ) )"
    assert d.variable_free(RING_LF) == "eat ( agent = Emma , theme = * ring ( nmod . beside = bed ) )"
    assert d.variable_free(GIRL_LF) == "need ( agent = * girl , xcomp = cook ( agent = * girl ) )"
    for prim in (PAULA, TOUCH, SHARK):
        assert d.variable_free(prim[1]) == prim[1]
    with pytest.raises(d.DerivationError, match="root"):
        d.variable_free("cat ( x _ 1 ) AND dog ( x _ 2 )")


# ---------------------------------------------------------------------------------------------------------
# Configs (no mirror needed)

EXPECTED_CONFIGS = {
    "cogs", "cogs_gen2020", "cogs_train100",
    "cogs_token_removal_x", "cogs_token_removal_x_paren", "cogs_token_removal_x_paren_comma",
    *(f"cogs_concat_{k}" for k in (256, 512, 1024, 2048, 3072)),
    "cogs_preposing", "cogs_preposing_sprinkles", "cogs_participle_verb", "cogs_participle_verb_easy",
    "cogs_variable_free", "recogs_pos", "recogs_v1", "recogs_v2", "recogs", "recogs_regen",
}  # fmt: skip


def test_configs_registered():
    assert set(configs_of("cogs", "recogs")) == EXPECTED_CONFIGS
    for name in EXPECTED_CONFIGS:
        cfg = get_config(name)
        assert cfg.license == "MIT"
        assert "cogs" in cfg.citations
        assert ("recogs" in cfg.citations) == (name not in ("cogs", "cogs_gen2020", "cogs_train100"))
        assert ("variable_free" in cfg.citations) == (name == "cogs_variable_free")
        assert cfg.splits == ("train", "validation", "test", "gen")
        assert cfg.notes and cfg.description
        for split in cfg.splits:
            files = cfg.sources(split, **cfg.resolve_params({}))
            assert files and all(isinstance(f, sources.UpstreamFile) for f in files)


def test_config_sources():
    src = lambda name, split, **p: [f.path for f in get_config(name).sources(split, **p)]
    assert src("cogs", "validation") == ["data/dev.tsv"]
    assert get_config("cogs_gen2020").sources("gen")[0].commit.startswith("6f66383")
    assert src("cogs_train100", "train") == ["data/train_100.tsv"]
    assert src("cogs_token_removal_x_paren_comma", "gen") == ["cogs_token_removal/gen_remove_x_(,).tsv"]
    assert src("cogs_token_removal_x", "train") == ["cogs_token_removal/train_remove_x_.tsv"]
    assert src("cogs_concat_512", "train") == ["cogs_concat/train_k_512.tsv"]
    assert src("cogs_concat_512", "test") == ["data/test.tsv"]
    assert src("recogs_v2", "train") == ["recogs_v2/train.tsv"]
    assert src("recogs", "gen") == ["recogs_v2/gen.tsv"]
    assert src("recogs_v1", "validation") == ["recogs_v1/dev.tsv"]
    assert src("recogs_pos", "gen") == ["recogs_positional_index/gen.tsv"]
    assert src("recogs_regen", "train", seed=1, copies=1, concat=0, flavour="v1") == ["data/train.tsv"]
    assert src("cogs_participle_verb_easy", "train") == ["cogs_participle_verb_easy/train.tsv"]
    with pytest.raises(ValueError, match="flavour"):
        list(get_config("recogs_regen").rows("test", flavour="v9"))


def test_variant_copies_are_the_cogs_files():
    """The variants' dev/test/gen files that we read from COGS have the same git blob as the COGS file."""
    for split, up in (("validation", "dev"), ("test", "test"), ("gen", "gen")):
        blob = cogs_mod.cogs_file(split).git_blob
        folders = [f"cogs_concat/{up}_k_{k}.tsv" for k in cogs_mod.CONCAT_KS] + [
            f"{f}/{up}.tsv"
            for f in (
                "cogs_preposing",
                "cogs_preposing+sprinkles",
                "cogs_participle_verb",
                "cogs_participle_verb_easy",
            )
        ]
        for path in folders:
            assert cogs_mod.recogs_file(path).git_blob == blob, path


def test_missing_split_fails_clearly(no_mirror):
    with pytest.raises(sources.SourceUnavailable, match="train_100.tsv"):
        list(get_config("cogs_train100").rows("train"))


# ---------------------------------------------------------------------------------------------------------
# Byte identity with the official files (mirror)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _official(path: str) -> bytes:
    return sources.fetch_bytes(cogs_mod.recogs_file(path))  # verified against the pinned checksum


@pytest.fixture(scope="module")
def cogs_splits():
    from conftest import HAVE_MIRROR

    if not HAVE_MIRROR:
        pytest.skip("offline mirror not found")
    return {s: list(cogs_mod.cogs_rows(s)) for s in ("train", "validation", "test", "gen")}


@needs_mirror
def test_cogs_write_tsv_round_trip(cogs_splits):
    for split, rows in cogs_splits.items():
        assert d.write_tsv(rows) == sources.fetch_bytes(cogs_mod.cogs_file(split))


@needs_mirror
@pytest.mark.parametrize("removal", list(d.REMOVAL_SETS))
def test_token_removal_files(cogs_splits, removal):
    for split, up in cogs_mod.UPSTREAM_SPLIT.items():
        ours = d.write_tsv(d.token_removal(cogs_splits[split], removal))
        assert _sha(ours) == _sha(_official(f"cogs_token_removal/{up}_remove_{removal}.tsv")), (
            split,
            removal,
        )


@needs_mirror
@pytest.mark.parametrize("k", cogs_mod.CONCAT_KS)
def test_cogs_concat_train_files(cogs_splits, k):
    ours = d.write_tsv(d.cogs_concat_train(cogs_splits["train"], k))
    assert _sha(ours) == _sha(_official(f"cogs_concat/train_k_{k}.tsv"))


@needs_mirror
def test_concat_needs_numpy_tie_order(cogs_splits):
    """With a stable sort instead of numpy's introsort the appended rows differ (docs/DATASETS.md §3.2)."""
    pool = [r for r in cogs_splits["train"] if r[2] != "primitive"]
    stable = sorted(range(len(pool)), key=lambda i: len(pool[i][0]))
    assert stable != d.length_order(pool)


@needs_mirror
def test_preposing_files(cogs_splits):
    train = cogs_splits["train"]
    prep = d.cogs_preposing_train(train)
    assert _sha(d.write_tsv(prep)) == _sha(_official("cogs_preposing/train.tsv"))
    assert Counter(c for *_, c in prep)["preposing_1"] == 211
    spr = d.cogs_preposing_sprinkles_train(train)
    assert _sha(d.write_tsv(spr)) == _sha(_official("cogs_preposing+sprinkles/train.tsv"))
    assert Counter(c for *_, c in spr)["sprinkle"] == 1283


@needs_mirror
def test_recogs_pos_files(cogs_splits):
    for split, up in cogs_mod.UPSTREAM_SPLIT.items():
        rows = (
            d.recogs_pos_train(cogs_splits[split]) if split == "train" else d.recogs_eval(cogs_splits[split])
        )
        assert _sha(d.write_tsv(rows)) == _sha(_official(f"recogs_positional_index/{up}.tsv")), split


@needs_mirror
def test_variable_free_files(cogs_splits):
    for split, up in cogs_mod.UPSTREAM_SPLIT.items():
        ours = d.write_tsv(d.variable_free_rows(cogs_splits[split]))
        assert _sha(ours) == _sha(_official(f"variable_free/{up}.tsv")), split


def _renaming_of(a: str, b: str) -> bool:
    """Token-by-token equal except for the digit tokens, which correspond one to one."""
    ta, tb = a.split(" "), b.split(" ")
    if len(ta) != len(tb):
        return False
    f, g = {}, {}
    for x, y in zip(ta, tb):
        if x.isdigit() != y.isdigit() or (not x.isdigit() and x != y):
            return False
        if x.isdigit() and (f.setdefault(x, y) != y or g.setdefault(y, x) != x):
            return False
    return True


@needs_mirror
@pytest.mark.parametrize("flavour", ["v1", "v2"])
@pytest.mark.parametrize("split", ["validation", "test"])
def test_regenerated_recogs_matches_released(flavour, split):
    cfg = get_config("recogs_regen")
    ours = [(r["input"], r["output"], r["category"]) for r in cfg.rows(split, flavour=flavour)]
    released = list(
        cogs_mod.read_rows(cogs_mod.recogs_file(f"recogs_{flavour}/{cogs_mod.UPSTREAM_SPLIT[split]}.tsv"))
    )
    assert len(ours) == len(released) == 3000
    assert [(s, c) for s, _, c in ours] == [(s, c) for s, _, c in released]
    assert all(_renaming_of(a[1], b[1]) for a, b in zip(ours, released))
    assert (
        sum(a[1] == b[1] for a, b in zip(ours, released)) < 100
    )  # not the same names, only the same structure


@needs_mirror
@pytest.mark.parametrize("flavour", ["v1", "v2"])
@pytest.mark.parametrize("split", ["validation", "test"])
def test_regenerated_recogs_sem_equal_to_released(flavour, split):
    lf_mod = pytest.importorskip("hf_recogs.logical_forms", reason="hf_recogs.logical_forms not written yet")
    sem_match = lf_mod.sem_match
    cfg = get_config("recogs_regen")
    ours = [r["output"] for r in cfg.rows(split, flavour=flavour)]
    released = cogs_mod.read_rows(
        cogs_mod.recogs_file(f"recogs_{flavour}/{cogs_mod.UPSTREAM_SPLIT[split]}.tsv")
    )
    assert sum(bool(sem_match(pred, gold)) for (_, gold, _), pred in zip(released, ours)) == 3000
    # control: the same LFs paired with their neighbours do not match
    assert sum(bool(sem_match(pred, gold)) for (_, gold, _), pred in zip(released[1:200], ours[:199])) < 5


@needs_mirror
def test_regenerated_recogs_train():
    cfg = get_config("recogs_regen")
    rows = [(r["input"], r["output"], r["category"]) for r in cfg.rows("train")]
    assert len(rows) == len(set(rows)) == 135_546  # paper: 135,547 (the collisions are random)
    types = Counter(c for *_, c in rows)
    assert types["length_ood"] == 5 * 3072 and types["in_distribution+sprinkle"] == 5 * 1255
    pos_train = d.parse_tsv(_official("recogs_positional_index/train.tsv"))
    assert {s for s, _, c in rows if c != "length_ood"} == {s for s, _, c in pos_train if c != "concat"}
    assert all(
        int(t) in d.RECOGS_INDEX_POOL for _, lf, _ in rows[:3000] for t in lf.split(" ") if t.isdigit()
    )


# ---------------------------------------------------------------------------------------------------------
# Configs on the mirror

ROW_COUNTS = {"train": 24155, "validation": 3000, "test": 3000, "gen": 21000}


@needs_mirror
def test_configs_load_their_available_splits():
    absent = {
        ("cogs_train100", "train"), ("cogs_participle_verb", "train"), ("cogs_participle_verb_easy", "train"),
        *((n, s) for n in ("recogs_v1", "recogs_v2", "recogs") for s in ("train", "gen")),
    }  # fmt: skip
    for name in sorted(EXPECTED_CONFIGS - {"recogs_regen"}):
        cfg = get_config(name)
        for split in cfg.splits:
            if (name, split) in absent:
                with pytest.raises(sources.SourceUnavailable):
                    next(iter(cfg.rows(split)))
                continue
            rows = list(cfg.rows(split))
            expected = ROW_COUNTS[split]
            if split == "train" and name.startswith("cogs_concat_"):
                expected += int(name.rsplit("_", 1)[1])
            elif split == "train" and name == "recogs_pos":
                expected += 3072
            assert len(rows) == expected, (name, split)
            assert set(rows[0]) == {"input", "output", "category"}
    assert next(iter(get_config("cogs").rows("train"))) == dict(zip(("input", "output", "category"), ROSE))


@needs_mirror
def test_cogs_gen2020_differs_in_51_lines():
    new, old = cogs_mod.cogs_rows("gen"), cogs_mod.cogs_rows("gen", "2020")
    diff = [(a, b) for a, b in zip(new, old) if a != b]
    assert len(diff) == 51
    assert {a[2] for a, _ in diff} == {"obj_pp_to_subj_pp"}
    for a, b in diff:  # one token differs: current "theme" where the 2020 release had "agent"
        changed = [(x, y) for x, y in zip(a[1].split(" "), b[1].split(" ")) if x != y]
        assert a[0] == b[0] and len(a[1].split(" ")) == len(b[1].split(" "))
        assert changed == [("theme", "agent")], (a, b)
