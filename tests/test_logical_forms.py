"""Parser and SEM: the conformance cases of docs/SEM.md §5 (written from the definition, not our output),
property tests against a brute-force checker, fuzzing, the adversarial family, and mirror data."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter

import pytest
from conftest import needs_mirror
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.sem_bench import pp_chain  # (the adversarial family of docs/SEM.md §6)
from hf_recogs import logical_forms as L
from hf_recogs.logical_forms import (
    Constant,
    LogicalFormError,
    ParseFailure,
    Variable,
    diagnose,
    exact_match,
    parse,
    parse_or_raise,
    sem_match,
    tokenize,
)

# --------------------------------------------------------------------------------------------------
# Conformance (docs/SEM.md §5). Gold for the ReCOGS cases.

G = (
    "Liam ( 0 ) ; box ( 4 ) ; girl ( 9 ) ; hope ( 1 ) AND agent ( 1 , 0 ) AND ccomp ( 1 , 6 ) "
    "AND burn ( 6 ) AND theme ( 6 , 4 ) AND agent ( 6 , 9 )"
)

# (case id, prediction, expected verdict against G)
RECOGS_CASES = [
    ("1 identical", G, True),
    (
        "2 spaces removed",
        "Liam(0);box(4);girl(9);hope(1) AND agent(1,0) AND ccomp(1,6) AND burn(6) AND theme(6,4) AND agent(6,9)",
        True,
    ),
    (
        "2 every space removed",
        "Liam(0);box(4);girl(9);hope(1)ANDagent(1,0)ANDccomp(1,6)ANDburn(6)ANDtheme(6,4)ANDagent(6,9)",
        True,
    ),
    (
        "3 doubled/leading/trailing spaces, tabs",
        "  Liam  ( 0 )  ;\tbox ( 4 ) ;  girl\t( 9 ) ; hope ( 1 )  AND agent ( 1 ,  0 ) AND\tccomp ( 1 , 6 ) "
        "AND burn ( 6 ) AND theme ( 6 , 4 ) AND agent ( 6 , 9 )\t ",
        True,
    ),
    (
        "4 permuted inside the body",
        "Liam ( 0 ) ; box ( 4 ) ; girl ( 9 ) ; agent ( 6 , 9 ) AND theme ( 6 , 4 ) AND hope ( 1 ) "
        "AND burn ( 6 ) AND ccomp ( 1 , 6 ) AND agent ( 1 , 0 )",
        True,
    ),
    (
        "4 permuted inside the prefix",
        "girl ( 9 ) ; Liam ( 0 ) ; box ( 4 ) ; hope ( 1 ) AND agent ( 1 , 0 ) AND ccomp ( 1 , 6 ) "
        "AND burn ( 6 ) AND theme ( 6 , 4 ) AND agent ( 6 , 9 )",
        True,
    ),
    (
        "4 permuted across prefix and body",
        "burn ( 6 ) ; agent ( 6 , 9 ) ; Liam ( 0 ) AND hope ( 1 ) AND girl ( 9 ) AND agent ( 1 , 0 ) "
        "AND box ( 4 ) AND theme ( 6 , 4 ) AND ccomp ( 1 , 6 )",
        True,
    ),
    (
        "5 separators swapped",
        "Liam ( 0 ) AND box ( 4 ) AND girl ( 9 ) AND hope ( 1 ) ; agent ( 1 , 0 ) ; ccomp ( 1 , 6 ) "
        "; burn ( 6 ) ; theme ( 6 , 4 ) ; agent ( 6 , 9 )",
        True,
    ),
    (
        "6 v2 dev line",
        "Liam ( 22 ) ; box ( 18 ) ; girl ( 45 ) ; hope ( 27 ) AND agent ( 27 , 22 ) AND ccomp ( 27 , 37 ) "
        "AND burn ( 37 ) AND theme ( 37 , 18 ) AND agent ( 37 , 45 )",
        True,
    ),
    (
        "7 two variables swapped consistently",
        "Liam ( 0 ) ; box ( 9 ) ; girl ( 4 ) ; hope ( 1 ) AND agent ( 1 , 0 ) AND ccomp ( 1 , 6 ) "
        "AND burn ( 6 ) AND theme ( 6 , 9 ) AND agent ( 6 , 4 )",
        True,
    ),
    (
        "8 out-of-vocabulary numbers and leading zeros",
        "Liam ( 99 ) ; box ( 100 ) ; girl ( 009 ) ; hope ( 01 ) AND agent ( 01 , 99 ) AND ccomp ( 01 , 6 ) "
        "AND burn ( 6 ) AND theme ( 6 , 100 ) AND agent ( 6 , 009 )",
        True,
    ),
    (
        "9 box and girl merged",
        "Liam ( 0 ) ; box ( 4 ) ; girl ( 4 ) ; hope ( 1 ) AND agent ( 1 , 0 ) AND ccomp ( 1 , 6 ) "
        "AND burn ( 6 ) AND theme ( 6 , 4 ) AND agent ( 6 , 4 )",
        False,
    ),
    (
        "10 box split in two",
        "Liam ( 0 ) ; box ( 5 ) ; girl ( 9 ) ; hope ( 1 ) AND agent ( 1 , 0 ) AND ccomp ( 1 , 6 ) "
        "AND burn ( 6 ) AND theme ( 6 , 4 ) AND agent ( 6 , 9 )",
        False,
    ),
    ("11 wrong noun", G.replace("box ( 4 )", "cake ( 4 )"), False),
    ("11 wrong verb", G.replace("burn ( 6 )", "freeze ( 6 )"), False),
    ("11 wrong proper name", G.replace("Liam ( 0 )", "Noah ( 0 )"), False),
    ("12 wrong role", G.replace("theme ( 6 , 4 )", "agent ( 6 , 4 )"), False),
    ("13 swapped arguments", G.replace("theme ( 6 , 4 )", "theme ( 4 , 6 )"), False),
    ("14 definite added", G.replace("box ( 4 )", "* box ( 4 )"), False),
    ("15 missing conjunct", G.replace(" AND burn ( 6 )", ""), False),
    ("15 extra conjunct", G + " AND recipient ( 1 , 9 )", False),
    ("16 duplicated conjunct", G + " AND agent ( 6 , 9 )", False),
    (
        "17 gold plus a renamed full copy",
        G
        + " AND Liam ( 10 ) ; box ( 14 ) ; girl ( 19 ) ; hope ( 11 ) AND agent ( 11 , 10 ) AND ccomp ( 11 , 16 ) "
        "AND burn ( 16 ) AND theme ( 16 , 14 ) AND agent ( 16 , 19 )",
        False,
    ),
]

COGS = "* sailor ( x _ 1 ) ; dust . agent ( x _ 2 , x _ 1 ) AND dust . theme ( x _ 2 , x _ 4 ) AND boy ( x _ 4 )"
COGS_EMMA = "cake ( x _ 3 ) AND eat . agent ( x _ 1 , Emma ) AND eat . theme ( x _ 1 , x _ 3 )"
TOUCH = "LAMBDA a . LAMBDA b . LAMBDA e . touch . agent ( e , b ) AND touch . theme ( e , a )"
TR_GOLD = "hope . agent 1 Liam AND hope . ccomp 1 6 AND box 4 AND burn . theme 6 4 AND burn . agent 6 9 AND girl 9"
SLOG = "paint . agent ( x _ 3 , Emma ) AND paint . theme ( x _ 3 , ? )"

# (case id, prediction, reference, expected)
FORMAT_CASES = [
    ("19 COGS identical", COGS, COGS, True),
    (
        "19 COGS permuted",
        "boy ( x _ 4 ) AND dust . theme ( x _ 2 , x _ 4 ) ; * sailor ( x _ 1 ) AND dust . agent ( x _ 2 , x _ 1 )",
        COGS,
        True,
    ),
    (
        "19 COGS renamed",
        "* sailor ( x _ 7 ) ; dust . agent ( x _ 3 , x _ 7 ) AND dust . theme ( x _ 3 , x _ 1 ) AND boy ( x _ 1 )",
        COGS,
        True,
    ),
    ("19 COGS small", "* cat ( x _ 1 ) ; sleep . agent ( x _ 2 , x _ 1 )",
     "* cat ( x _ 1 ) ; sleep . agent ( x _ 2 , x _ 1 )", True),
    ("20 name replaced by a variable", COGS_EMMA.replace("Emma", "x _ 0"), COGS_EMMA, False),
    ("21 x_1 without spaces", "cake ( x_3 ) AND eat . agent ( x_1 , Emma ) AND eat . theme ( x_1 , x_3 )",
     COGS_EMMA, True),
    ("22 COGS vs its ReCOGS translation", "* sailor ( 1 ) ; boy ( 4 ) ; dust ( 2 ) AND agent ( 2 , 1 ) AND theme ( 2 , 4 )",
     COGS, False),
    ("23 lambda identical", TOUCH, TOUCH, True),
    ("23 lambda binders renamed",
     "LAMBDA p . LAMBDA q . LAMBDA r . touch . agent ( r , q ) AND touch . theme ( r , p )", TOUCH, True),
    ("23 lambda matrix swapped",
     "LAMBDA a . LAMBDA b . LAMBDA e . touch . theme ( e , a ) AND touch . agent ( e , b )", TOUCH, True),
    ("23 lambda binder order swapped",
     "LAMBDA b . LAMBDA a . LAMBDA e . touch . agent ( e , b ) AND touch . theme ( e , a )", TOUCH, False),
    ("23 ReCOGS lambda matrix swapped",
     "LAMBDA a . LAMBDA b . LAMBDA e . theme ( e , a ) AND touch ( e ) AND agent ( e , b )",
     "LAMBDA a . LAMBDA b . LAMBDA e . touch ( e ) AND agent ( e , b ) AND theme ( e , a )", True),
    ("23 bare name primitive", "Paula", "Paula", True),
    ("23 bare name primitive differs", "Emma", "Paula", False),
    ("24 token removal renamed",
     "hope . agent 7 Liam AND hope . ccomp 7 2 AND box 5 AND burn . theme 2 5 AND burn . agent 2 3 AND girl 3",
     TR_GOLD, True),
    ("24 token removal x_() renamed and reordered",
     "girl 3 AND hope . agent 7 , Liam AND hope . ccomp 7 , 2 AND box 5 AND burn . agent 2 , 3 AND burn . theme 2 , 5",
     "hope . agent 1 , Liam AND hope . ccomp 1 , 6 AND box 4 AND burn . theme 6 , 4 AND burn . agent 6 , 9 AND girl 9",
     True),
    ("24 token removal wrong", TR_GOLD.replace("burn . theme 6 4", "burn . theme 4 6"), TR_GOLD, False),
    ("25 SLOG renamed", "paint . agent ( x _ 8 , Emma ) AND paint . theme ( x _ 8 , ? )", SLOG, True),
    ("25 SLOG ? replaced by a name", SLOG.replace("?", "Noah"), SLOG, False),
]

MALFORMED = [
    ("26 empty", "", "empty"),
    ("26 blank", "   \t ", "empty"),
    ("26 star", "*", "bad_label"),
    ("26 truncated", "Liam ( 0 ) ; box (", "unbalanced_parens"),
    ("27 lower-case and", G.replace(" AND ", " and "), "stray_token"),
    ("28 three arguments", "cat ( 1 ) AND agent ( 2 , 1 , 3 )", "arity"),
    ("28 no argument", "cat ( ) AND agent ( 2 , 1 )", "arity"),
    ("28 unbalanced", "cat ( 1 ) AND agent ( 2 , 1", "unbalanced_parens"),
    ("28 unbalanced closing", "cat ( 1 ) ) AND agent ( 2 , 1 )", "unbalanced_parens"),
    ("28 stray token between conjuncts", "cat ( 1 ) dog AND agent ( 2 , 1 )", "stray_token"),
    ("28 empty conjunct", "cat ( 1 ) AND AND agent ( 2 , 1 )", "empty_conjunct"),
    ("28 trailing separator", "cat ( 1 ) ;", "empty_conjunct"),
    ("28 unknown argument", "cat ( dog )", "bad_argument"),
    ("28 bare integer in a COGS LF", "cat ( x _ 1 ) AND dog ( 2 )", "bad_argument"),
    ("28 broken lambda", "LAMBDA . cat ( a )", "bad_lambda"),
    ("28 lambda without body", "LAMBDA a .", "bad_lambda"),
    ("28 random words", "the cat sat on the mat", "arity"),
    ("28 random words with a number", "cat 1 sat", "bad_argument"),
]


@pytest.mark.parametrize("case,pred,expected", RECOGS_CASES, ids=[c[0] for c in RECOGS_CASES])
def test_recogs_conformance(case, pred, expected):
    assert sem_match(pred, G) is expected
    assert sem_match(G, pred) is expected  # case 18: symmetry
    assert diagnose(pred, G).match is expected
    assert L.sem_verdict(pred, G) is expected and L.sem_verdict(G, pred) is expected  # decided, never None


def test_case_17_fails_both_ways_for_a_counting_reason():
    pred = RECOGS_CASES[-1][1]
    assert diagnose(pred, G).reason == "conjunct_count"
    assert diagnose(G, pred).reason == "conjunct_count"


@pytest.mark.parametrize("case,pred,ref,expected", FORMAT_CASES, ids=[c[0] for c in FORMAT_CASES])
def test_format_conformance(case, pred, ref, expected):
    assert sem_match(pred, ref) is expected
    assert sem_match(ref, pred) is expected
    assert L.sem_verdict(pred, ref) is expected and L.sem_verdict(ref, pred) is expected  # decided


@pytest.mark.parametrize("case,bad,reason", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed(case, bad, reason):
    result = parse(bad)
    assert isinstance(result, ParseFailure) and not result
    assert result.reason == reason, str(result)
    assert sem_match(bad, G) is False and sem_match(G, bad) is False
    assert sem_match(bad, bad) is False  # two malformed strings never match (docs/SEM.md §2.4, §3.7)
    assert diagnose(bad, G).reason == "parse_error_prediction"
    assert diagnose(G, bad).reason == "parse_error_reference"
    with pytest.raises(LogicalFormError) as err:
        parse_or_raise(bad)
    assert err.value.reason == reason


@pytest.mark.parametrize("value", [None, 3, b"cat ( 1 )", ["cat ( 1 )"]])
def test_case_29_non_strings(value):
    assert sem_match(value, G) is False and sem_match(G, value) is False
    assert exact_match(value, G) is False
    assert diagnose(value, G).reason == "not_a_string"
    assert parse(value).reason == "not_a_string"


def test_unknown_fmt_is_a_caller_error():
    with pytest.raises(ValueError, match="fmt must be one of"):
        sem_match(G, G, fmt="nope")


def test_explicit_formats():
    assert sem_match(COGS, COGS, fmt="cogs")
    assert not sem_match(G, G, fmt="cogs")  # bare integers are malformed in COGS format
    assert sem_match(G, RECOGS_CASES[8][1], fmt="recogs")
    assert not sem_match(COGS, COGS, fmt="recogs")
    assert sem_match(TR_GOLD, TR_GOLD, fmt="token_removal")
    assert not sem_match(G, G, fmt="token_removal")
    assert parse(TR_GOLD).fmt == "token_removal" and parse(COGS).fmt == "cogs" and parse(G).fmt == "recogs"


def test_parse_structure():
    lf = parse("* cake ( x _ 1 ) ; eat . agent ( x_2 , Emma ) AND cake . nmod . on ( x _ 1 , x _ 3 )")
    assert [a.label for a in lf.atoms] == ["*cake", "eat.agent", "cake.nmod.on"]
    assert lf.atoms[1].args == (Variable("x_2"), Constant("Emma"))
    assert lf.variables == (Variable("x_1"), Variable("x_2"), Variable("x_3"))
    lam = parse("LAMBDA a . LAMBDA e . inflate . theme ( e , a )")
    assert lam.binders == ("a", "e") and lam.atoms[0].args == (Variable("e", 1), Variable("a", 0))
    assert lam.variables == ()
    assert parse("Paula").term == "Paula"
    assert tokenize("agent(1,0)") == tokenize("agent ( 1 , 0 )")
    assert tokenize("x_1") == ["x", "_", "1"]


def test_exact_match_is_whitespace_normalised_string_equality():
    assert exact_match("cat ( 1 )", "  cat   (\t1 ) ")
    assert not exact_match("cat(1)", "cat ( 1 )")
    assert not exact_match(RECOGS_CASES[8][1], G)


def test_diagnose_explains():
    d = diagnose(G.replace("theme ( 6 , 4 )", "theme ( 4 , 6 )"), G)
    assert not d.match and d.reason == "no_consistent_mapping"
    assert d.missing == ("theme(6, 4)",) and len(d.extra) == 1
    d = diagnose(G.replace("theme ( 6 , 4 )", "agent ( 6 , 4 )"), G)
    assert d.reason == "atom_shapes" and d.missing == ("theme(6, 4)",) and d.extra == ("agent(6, 4)",)
    assert diagnose(G, G).reason == "exact_string"
    d = diagnose(RECOGS_CASES[8][1], G)
    assert d.match and d.reason == "match" and d.mapping["22"] == "0" and d.mapping["37"] == "6"
    assert diagnose(COGS, "* sailor ( 1 ) ; dust . agent ( 2 , 1 ) AND dust . theme ( 2 , 4 ) AND boy ( 4 )").reason == (
        "format_mismatch"
    )
    assert diagnose("LAMBDA a . ball ( a )", "LAMBDA a . LAMBDA e . ball ( a )").reason == "lambda_prefix"
    assert diagnose(G.replace("girl ( 9 )", "girl ( 4 )").replace("agent ( 6 , 9 )", "agent ( 6 , 4 )"), G).reason == (
        "variable_count"
    )


def test_symmetric_structures_need_search():
    """Two identical disjoint sub-LFs: colour refinement cannot split them, the search must."""
    gold = "cat ( 1 ) AND run ( 2 ) AND agent ( 2 , 1 ) AND cat ( 3 ) AND run ( 4 ) AND agent ( 4 , 3 )"
    pred = "run ( 8 ) AND agent ( 8 , 5 ) AND cat ( 7 ) AND cat ( 5 ) AND agent ( 6 , 7 ) AND run ( 6 )"
    assert sem_match(pred, gold) and diagnose(pred, gold).reason == "match"
    # same colours everywhere, but one agent edge crosses the copies: no bijection
    crossed = "cat ( 1 ) AND run ( 2 ) AND agent ( 2 , 3 ) AND cat ( 3 ) AND run ( 4 ) AND agent ( 4 , 1 )"
    assert sem_match(crossed, gold)  # still isomorphic (relabel 1<->3)
    two_cycles = "a ( 1 , 2 ) AND a ( 2 , 3 ) AND a ( 3 , 1 ) AND a ( 4 , 5 ) AND a ( 5 , 6 ) AND a ( 6 , 4 )"
    six_cycle = "a ( 1 , 2 ) AND a ( 2 , 3 ) AND a ( 3 , 4 ) AND a ( 4 , 5 ) AND a ( 5 , 6 ) AND a ( 6 , 1 )"
    assert not sem_match(two_cycles, six_cycle)  # 1-WL cannot tell these apart; individualisation can
    assert sem_match(six_cycle.replace("( 6 , 1 )", "( 6 , 1 )"), six_cycle)
    many = " AND ".join(f"cat ( {i} )" for i in range(300))
    assert sem_match(" AND ".join(f"cat ( {i} )" for i in range(1000, 1300)), many)


# --------------------------------------------------------------------------------------------------
# Brute force on small forms, and property tests


def _atoms(lf: str):
    """(label, args) atoms of a well-formed LF; variables are strings of digits."""
    form = parse(lf)
    return [(a.label, tuple(x.name if isinstance(x, Variable) else "C:" + x.name for x in a.args)) for a in form.atoms]


def brute_force(pred: str, gold: str) -> bool:
    """Tries every bijection: the definition of SEM, usable for up to ~7 variables."""
    if not parse(pred) or not parse(gold):
        return False
    pa, ga = _atoms(pred), _atoms(gold)
    pv = sorted({x for _, args in pa for x in args if not x.startswith("C:")})
    gv = sorted({x for _, args in ga for x in args if not x.startswith("C:")})
    if len(pv) != len(gv):
        return False
    target = Counter(ga)
    for perm in itertools.permutations(gv):
        m = dict(zip(pv, perm))
        if Counter((lab, tuple(m.get(x, x) for x in args)) for lab, args in pa) == target:
            return True
    return False


LABELS_1 = ["cat", "*cat", "dog", "Emma"]
LABELS_2 = ["agent", "theme", "nmod.in"]


@st.composite
def small_forms(draw, max_vars=5):
    """A random ReCOGS-style LF over few variables and labels, duplicates and self-loops allowed."""
    n = draw(st.integers(1, max_vars))
    atoms = []
    for _ in range(draw(st.integers(1, 9))):
        if draw(st.booleans()):
            atoms.append((draw(st.sampled_from(LABELS_1)), (draw(st.integers(0, n - 1)),)))
        else:
            args = (draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1)))
            atoms.append((draw(st.sampled_from(LABELS_2)), args))
    return atoms


def render(atoms, names=None, seps=None) -> str:
    out = []
    for i, (label, args) in enumerate(atoms):
        star = "* " if label.startswith("*") else ""
        lab = label.lstrip("*").replace(".", " . ")
        shown = " , ".join(str(names[a] if names else a) for a in args)
        out.append(f"{star}{lab} ( {shown} )")
        if i < len(atoms) - 1:
            out.append(seps[i] if seps else "AND")
    return " ".join(out)


@st.composite
def renamed_pairs(draw):
    atoms = draw(small_forms())
    used = sorted({a for _, args in atoms for a in args})
    new = draw(st.lists(st.integers(0, 99), min_size=len(used), max_size=len(used), unique=True))
    names = dict(zip(used, new))
    order = draw(st.permutations(range(len(atoms))))
    seps = draw(st.lists(st.sampled_from([";", "AND"]), min_size=len(atoms), max_size=len(atoms)))
    return render(atoms), render([atoms[i] for i in order], names, seps)


@st.composite
def mutated_pairs(draw):
    """A form and a small mutation of it (merge two variables, swap arguments, relabel, drop, duplicate,
    rename): a mix of SEM-equal and SEM-different pairs close to each other."""
    atoms = draw(small_forms())
    other = list(atoms)
    kind = draw(st.sampled_from(["merge", "swap", "relabel", "drop", "dup", "rename", "none"]))
    i = draw(st.integers(0, len(atoms) - 1))
    label, args = other[i]
    if kind == "merge":
        a, b = draw(st.integers(0, 5)), draw(st.integers(0, 5))
        other = [(lab, tuple(a if x == b else x for x in xs)) for lab, xs in other]
    elif kind == "swap" and len(args) == 2:
        other[i] = (label, args[::-1])
    elif kind == "relabel":
        other[i] = (draw(st.sampled_from(LABELS_1 if len(args) == 1 else LABELS_2)), args)
    elif kind == "drop" and len(other) > 1:
        other.pop(i)
    elif kind == "dup":
        other.append(other[i])
    elif kind == "rename":
        perm = draw(st.permutations(range(6)))
        other = [(lab, tuple(perm[x] for x in xs)) for lab, xs in other]
    order = draw(st.permutations(range(len(other))))
    return render(atoms), render([other[j] for j in order])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(renamed_pairs())
def test_renaming_and_reordering_invariance(pair):
    gold, pred = pair
    assert sem_match(pred, gold) and sem_match(gold, pred)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_pairs())
def test_agrees_with_brute_force_and_is_symmetric(pair):
    gold, pred = pair
    expected = brute_force(pred, gold)
    assert sem_match(pred, gold) is expected
    assert sem_match(gold, pred) is expected
    assert diagnose(pred, gold).match is expected
    assert L._python_sem_match(pred, gold, "auto") is expected  # sem_match may have used the native path


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_forms(max_vars=4), small_forms(max_vars=4))
def test_independent_pairs_agree_with_brute_force(a, b):
    pred, gold = render(a), render(b)
    assert sem_match(pred, gold) is brute_force(pred, gold) is sem_match(gold, pred)
    assert L._python_sem_match(pred, gold, "auto") is sem_match(pred, gold)


@st.composite
def symmetric_pairs(draw):
    """Forms over one unary and one binary label, so that colour refinement often cannot split variables
    and the individualise-and-refine search (with backtracking) decides; the pair is a form and a mutation."""
    n = draw(st.integers(2, 6))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1, max_size=9))
    marks = draw(st.lists(st.integers(0, n - 1), max_size=3))
    atoms = [("r", e) for e in edges] + [("a", (m,)) for m in marks]
    other = list(atoms)
    i = draw(st.integers(0, len(edges) - 1))
    choice = draw(st.sampled_from(["rewire", "reverse", "rename"]))
    if choice == "rewire":
        other[i] = ("r", (other[i][1][0], draw(st.integers(0, n - 1))))
    elif choice == "reverse":
        other[i] = ("r", other[i][1][::-1])
    perm = draw(st.permutations(range(n)))
    other = [(lab, tuple(perm[x] for x in xs)) for lab, xs in other]
    order = draw(st.permutations(range(len(other))))
    return render(atoms), render([other[j] for j in order])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(symmetric_pairs())
def test_search_agrees_with_brute_force_on_symmetric_forms(pair):
    gold, pred = pair
    expected = brute_force(pred, gold)
    assert sem_match(pred, gold) is expected
    assert sem_match(gold, pred) is expected
    assert L._python_sem_match(gold, pred, "auto") is expected
    assert L.sem_verdict(pred, gold) is expected  # the default budget decides every small form


def cycles(lengths, rng) -> str:
    """Disjoint directed cycles: colour refinement gives every variable the same colour, so only the search
    can decide; two such LFs are SEM-equal iff their sorted cycle lengths are equal."""
    names = rng.sample(range(1000), sum(lengths))
    atoms, start = [], 0
    for k in lengths:
        ring = names[start : start + k]
        atoms += [f"r ( {ring[i]} , {ring[(i + 1) % k]} )" for i in range(k)]
        start += k
    rng.shuffle(atoms)
    return " AND ".join(atoms)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.lists(st.integers(1, 5), min_size=1, max_size=4),
       st.randoms(use_true_random=False))
def test_search_on_unions_of_cycles(a, b, rng):
    if sum(a) != sum(b):
        b = a  # same size, so that only the search can tell them apart
    expected = sorted(a) == sorted(b)
    assert sem_match(cycles(a, rng), cycles(b, rng)) is expected
    assert sem_match(cycles(b, rng), cycles(a, rng)) is expected


def test_search_on_larger_cycle_unions():
    rng = random.Random(5)
    assert sem_match(cycles([3] * 10, rng), cycles([3] * 10, rng))
    assert not sem_match(cycles([3] * 10, rng), cycles([3] * 8 + [2, 4], rng))
    assert not sem_match(cycles([5, 5, 5, 5], rng), cycles([4, 6, 5, 5], rng))
    assert sem_match(cycles([2, 3, 4, 5, 6], rng), cycles([6, 5, 4, 3, 2], rng))


def test_search_on_gadgets_hanging_off_one_node():
    """Identical pieces attached to one hub stay 1-WL-indistinguishable; one piece pair rewired into a 6-cycle
    must be rejected without exploring the symmetric choices (each pair is timed in the bench)."""

    def gadgets(k, merged, rng):
        atoms, names = [], iter(rng.sample(range(1, 10_000), 3 * k))
        pieces = [[next(names) for _ in range(3)] for _ in range(k)]
        for a, b, c in pieces[2 * merged :]:
            atoms += [f"r ( {a} , {b} )", f"r ( {b} , {c} )", f"r ( {c} , {a} )", f"h ( 0 , {a} )"]
        for i in range(merged):
            (a1, b1, c1), (a2, b2, c2) = pieces[2 * i], pieces[2 * i + 1]
            atoms += [f"r ( {a1} , {b1} )", f"r ( {b1} , {c1} )", f"r ( {c1} , {a2} )", f"r ( {a2} , {b2} )",
                      f"r ( {b2} , {c2} )", f"r ( {c2} , {a1} )", f"h ( 0 , {a1} )", f"h ( 0 , {a2} )"]
        rng.shuffle(atoms)
        return "hub ( 0 ) AND " + " AND ".join(atoms)

    rng = random.Random(7)
    for k in (4, 10, 20):
        gold = gadgets(k, 0, rng)
        assert sem_match(gadgets(k, 0, rng), gold)
        assert sem_match(gadgets(k, 1, rng), gadgets(k, 1, rng))
        assert not sem_match(gadgets(k, 1, rng), gold)
        assert not sem_match(gold, gadgets(k, 2, rng))


# --------------------------------------------------------------------------------------------------
# Fuzzing: nothing raises; the fast parser builds exactly what the general one builds

FUZZ_TOKENS = ["(", ")", ",", ".", ";", "*", "_", "x", "AND", "and", "LAMBDA", "a", "e", "?", "Emma", "cat",
               "agent", "nmod", "in", "0", "1", "12", "007", " ", "  ", "\t", "x_1", "λ", "ß", "²", "$0", ""]


@settings(max_examples=1500, deadline=None)
@given(st.one_of(st.text(max_size=60), st.lists(st.sampled_from(FUZZ_TOKENS), max_size=25).map(" ".join),
                 st.lists(st.sampled_from(FUZZ_TOKENS), max_size=25).map("".join)))
def test_fuzz_never_raises(text):
    result = parse(text)
    assert isinstance(result, (ParseFailure, L.LogicalForm))
    if isinstance(result, ParseFailure):
        assert result.reason != "internal_error", result
    assert isinstance(sem_match(text, G), bool)
    assert isinstance(sem_match(G, text), bool)
    assert isinstance(sem_match(text, text), bool)
    assert isinstance(diagnose(text, text).reason, str)
    assert sem_match(text, text) is bool(result)  # reflexive exactly on well-formed input


def _slow_equals_fast(text: str, fmt: str = "auto") -> None:
    tokens = tokenize(text)
    raw = L._compile_fast(None, text, fmt)  # accepted only when the input is already normalised
    if raw is not None:
        assert text == " ".join(tokens)
        _same_form(raw, L._compile(tokens, fmt))
    fast = L._compile_fast(tokens, " ".join(tokens), fmt)
    if fast is not None:
        _same_form(fast, L._compile(tokens, fmt))


def _same_form(fast, slow) -> None:
    assert (fast.var_names, fast.labels, fast.atoms, fast.style, fast.fmt) == (
        slow.var_names, slow.labels, slow.atoms, slow.style, slow.fmt)
    assert (fast.initial_colours, fast.edges) == (slow.initial_colours, slow.edges)  # fused in the fast parser


@settings(max_examples=1500, deadline=None)
@given(st.one_of(st.lists(st.sampled_from(FUZZ_TOKENS[:25]), max_size=30).map(" ".join),
                 st.lists(st.sampled_from(FUZZ_TOKENS), max_size=30).map("".join)))
def test_fast_parser_is_a_faithful_shortcut_fuzz(text):
    _slow_equals_fast(text)
    _slow_equals_fast(text, "cogs")
    _slow_equals_fast(text, "recogs")


def test_fast_parser_on_near_normalised_inputs():
    for text in [G.replace(" ( ", "("), COGS.replace("x _ 1", "x_1"), COGS.replace("* sailor", "*sailor"),
                 "cake . nmod.in ( 1 , 2 )", "cake.nmod . in ( 1 , 2 )", "cat ( 1 )AND dog ( 2 )", " cat ( 1 )",
                 "cat ( 1 ) ", "cat  ( 1 )", "x _ 1 ( 2 )", "cat ( x _1 )", "cat ( x_ 1 )"]:
        _slow_equals_fast(text)


@pytest.mark.parametrize("text", ["AND . x ( 1 )", "LAMBDA . x ( 1 )", "cat . AND ( 1 )", "* AND ( 1 )",
                                  "cat ( AND )", "cat ( 1 , LAMBDA )"])
def test_fast_parser_never_takes_a_reserved_word_as_a_word(text):
    """AND and LAMBDA are not labels or names, whatever token follows them (the compact key joins
    ``AND . x`` into ``AND.x``, which an earlier fast regex took for a label)."""
    _slow_equals_fast(text)
    assert L.sem_match(text, text) is False


def test_fast_parser_is_a_faithful_shortcut_examples():
    for case in RECOGS_CASES + [(None, p, None) for _, p, _, _ in FORMAT_CASES]:
        _slow_equals_fast(case[1])
    assert L._compile_fast(tokenize(G), " ".join(tokenize(G)), "auto") is not None


# --------------------------------------------------------------------------------------------------
# The adversarial family of docs/SEM.md §6 (no timing assertions: the machine is shared; bench/sem_bench.py
# times it)


def rename_shuffle(lf: str, rng: random.Random) -> str:
    nums = sorted(set(re.findall(r"\b\d+\b", lf)), key=int)
    new = dict(zip(nums, map(str, rng.sample(range(10_000), len(nums)))))
    conj = re.sub(r"\b\d+\b", lambda m: new[m.group()], lf).replace(" ; ", " AND ").split(" AND ")
    rng.shuffle(conj)
    return " AND ".join(conj)


def test_adversarial_family():
    rng = random.Random(0)
    for n in range(2, 51):
        gold = pp_chain(n)
        assert sem_match(rename_shuffle(gold, rng), gold)
        if n >= 3:
            bad = pp_chain(n, "cycle")
            assert parse(bad) and len(parse(bad).atoms) == len(parse(gold).atoms)
            assert not sem_match(bad, gold) and not sem_match(gold, bad)
            assert not sem_match(rename_shuffle(bad, rng), gold)


# --------------------------------------------------------------------------------------------------
# Mirror data (docs/SEM.md §5 case 31, and the v2 ↔ ReCOGS_pos dev claim of docs/DATASETS.md §3.9)


@needs_mirror
def test_recogs_pos_gen_gold_vs_renamed():
    from hf_recogs.sources import pinned, read_tsv

    rows = read_tsv(pinned("recogs", "recogs_positional_index/gen.tsv"))
    assert len(rows) == 21000
    rng = random.Random(31)
    sample = rng.sample(rows, 3000) + [r for r in rows if r[2] == "cp_recursion"][:200]
    for row in sample:
        gold = row[1]
        assert sem_match(gold, gold)
        assert sem_match(rename_shuffle(gold, rng), gold), row


@needs_mirror
def test_v2_dev_is_a_renaming_of_recogs_pos_dev():
    from hf_recogs.sources import pinned, read_tsv

    pos = read_tsv(pinned("recogs", "recogs_positional_index/dev.tsv"))
    v2 = read_tsv(pinned("recogs", "recogs_v2/dev.tsv"))
    assert len(pos) == len(v2) == 3000
    for a, b in zip(pos, v2):
        assert a[0] == b[0]
        assert sem_match(b[1], a[1]) and sem_match(a[1], b[1]), (a, b)


@needs_mirror
def test_real_formats_parse_and_match_themselves():
    """Every LF of COGS gen, the token-removal gen files and ReCOGS train parses (primitives included)."""
    from hf_recogs.sources import pinned, read_tsv

    files = [("cogs", "data/gen.tsv"), ("recogs", "cogs_token_removal/gen_remove_x_(,).tsv"),
             ("recogs", "cogs_token_removal/gen_remove_x_().tsv"), ("recogs", "recogs_positional_index/train.tsv"),
             ("cogs", "data/train.tsv")]
    for source, path in files:
        rows = read_tsv(pinned(source, path))
        for row in rows[:: max(1, len(rows) // 2000)] + [r for r in rows if r[2] == "primitive"]:
            assert parse(row[1]), (path, row, parse(row[1]))
            _slow_equals_fast(row[1])


def test_empty_definite_prefix_of_cogs_concat_gold_is_accepted():
    # ReCOGS cogs_concat train writes 127 gold LFs with no definites as " ; <body>" (docs/DATASETS.md §3.4).
    gold = " ; tolerate . agent ( x _ 1 , Emma ) AND cat ( x _ 4 )"
    assert sem_match(gold, gold)
    assert sem_match(gold, "cat ( x _ 9 ) AND tolerate . agent ( x _ 2 , Emma )")
    assert not sem_match(gold, " ; tolerate . agent ( x _ 1 , Emma ) AND dog ( x _ 4 )")
    assert not sem_match(";", ";") and not sem_match("; ;", "; ;")


def test_one_spacing_rule_for_and_after_a_parenthesis():
    """AND glued to the next word after ')' is the separator with or without spaces before it (it used to be
    accepted only fully compacted); elsewhere a word starting with AND stays a word."""
    gold = "sleep ( 3 ) AND agent ( 3 , 1 )"
    for text in ("sleep(3)ANDagent(3,1)", "sleep ( 3 ) ANDagent ( 3 , 1 )", "sleep ( 3 )\tANDagent ( 3 , 1 )"):
        assert L.normalize(text) == gold and L.sem_match(text, gold)
    assert not L.sem_match("ANDagent ( 3 , 1 )", "agent ( 3 , 1 )")
    assert L.tokenize("cake . ANDrew ( 1 )")[2] == "ANDrew"
