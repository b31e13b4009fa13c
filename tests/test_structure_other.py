"""Structure annotations of CFQ queries (questions: test_structure_cfq_question.py), SCAN commands and SyGNS sentences / variable-free forms: trees written
out by hand, tree shape on whole splits, and cross-links on the right tokens."""

from __future__ import annotations

import itertools

import pytest

from hf_recogs.benchmarks import scan, sygns
from hf_recogs.registry import get_config
from hf_recogs.structure import (
    OUTSIDE,
    ROOT,
    Structure,
    StructureError,
    cfq_cross_links,
    cfq_query_structure,
    scan_command_structure,
    sygns_cross_links,
    sygns_fol_structure,
    sygns_sentence_structure,
    sygns_vf_structure,
)


def nested(s: Structure, node: int | None = None):
    """The tree as ``token`` (a leaf) or ``(token, [children])``, children in the order of their first word."""
    node = s.root if node is None else node

    def first_word(n: int) -> int:
        return n if n < s.n_words else min(first_word(c) for c in s.children(n))

    kids = sorted(s.children(node), key=first_word)
    return s.tokens[node] if not kids else (s.tokens[node], [nested(s, k) for k in kids])


def assert_constituency_shape(s: Structure) -> None:
    """Every word in the tree, every structure token over at least two nodes, structure tokens in pre-order."""
    assert all(h is not OUTSIDE for h in s.heads)
    assert [i for i, h in enumerate(s.heads) if h == ROOT] == [s.root]
    for i in range(s.n_words, len(s.tokens)):
        assert len(s.children(i)) >= 2
        assert s.heads[i] == ROOT or s.heads[i] < i  # a constituent comes after its parent (pre-order)


# ---- CFQ ------------------------------------------------------------------------------------------------

COUNT_QUERY = "SELECT count ( * ) WHERE { ?x0 a people.person . FILTER ( M2 != ?x0 ) . M2 people.person.spouse_s ?x0 }"
DISTINCT_QUERY = "SELECT DISTINCT ?x0 WHERE { ?x0 film.writer.film M1 . ?x0 film.director.film M1 }"


def test_cfq_query_trees_by_hand():
    assert nested(cfq_query_structure(COUNT_QUERY)) == (
        "SELECT", ["count", "*", ("WHERE", [
            ("a", ["?x0", "people.person"]),
            ("!=", ["M2", "?x0"]),
            ("people.person.spouse_s", ["M2", "?x0"]),
        ])])
    s = cfq_query_structure(DISTINCT_QUERY)
    assert nested(s) == ("SELECT", ["DISTINCT", "?x0", ("WHERE", [
        ("film.writer.film", ["?x0", "M1"]), ("film.director.film", ["?x0", "M1"])])])
    # repeated variables are separate nodes; braces and dots stay outside
    assert [i for i, t in enumerate(s.tokens) if t == "?x0"] == [2, 5, 9]
    assert {s.tokens[i] for i, h in enumerate(s.heads) if h is OUTSIDE} == {"{", ".", "}"}
    outside = cfq_query_structure(COUNT_QUERY)
    assert {outside.tokens[i] for i, h in enumerate(outside.heads) if h is OUTSIDE} == {"(", ")", "{", ".", "}",
                                                                                       "FILTER"}


@pytest.mark.parametrize("query", [
    "SELECT DISTINCT ?x0 WHERE { ?x0 a }",  # a clause of two tokens
    "SELECT DISTINCT ?x0 WHERE { ?x0 a film.actor",  # no closing brace
    "SELECT DISTINCT ?x0 WHERE { ?x0 a film.actor . }",  # empty last clause
    "SELECT DISTINCT ?x0 WHERE { FILTER ( M0 = M1 ) }",
    "SELECT DISTINCT ?x0 { ?x0 a film.actor }",
    "DISTINCT ?x0 WHERE { ?x0 a film.actor }",
    "SELECT DISTINCT ?x0 WHERE { ?x0 a film.actor } . M0 a film.actor }",
    "",
])
def test_cfq_malformed_queries_get_no_tree(query):
    with pytest.raises(StructureError):
        cfq_query_structure(query)


def test_cfq_cross_links_land_on_the_entities():
    question = "Did M1 star a child of M0"
    query = "SELECT count ( * ) WHERE { ?x0 parent M0 . M1 starring ?x0 . ?x0 a person }"
    # query tokens: 0 SELECT … 5 WHERE 6 { 7 ?x0 8 parent 9 M0 10 . 11 M1 12 starring 13 ?x0 14 . 15 ?x0 16 a
    assert cfq_cross_links(question, query) == [(1, 11), (6, 9)]
    assert cfq_cross_links(question, query, entities_only=False) == [(1, 11), (3, 16), (6, 9)]
    q, s = question.split(), query.split()
    assert all(q[i] == s[j] for i, j in cfq_cross_links(question, query))


@pytest.mark.mirror
def test_every_cfq_mcd1_query_gets_a_tree(mirror):
    cfg = get_config("cfq_mcd1")
    for row in itertools.chain(cfg.rows("train"), cfg.rows("validation"), cfg.rows("test")):
        s = cfq_query_structure(row["output"])
        kept = {s.tokens[i] for i, h in enumerate(s.heads) if h is not OUTSIDE}
        assert s.tokens[s.root] == "SELECT" and not kept & {"{", "}", ".", "(", ")", "FILTER"}
        assert len(s.children(s.tokens.index("WHERE"))) == row["output"].count(" . ") + 1
        for i, j in cfq_cross_links(row["input"], row["output"]):
            assert row["input"].split()[i] == s.tokens[j] and s.heads[j] is not OUTSIDE


# ---- SCAN -----------------------------------------------------------------------------------------------

def test_scan_trees_by_hand():
    assert nested(scan_command_structure("jump")) == "jump"
    assert nested(scan_command_structure("jump twice")) == ("S", ["jump", "twice"])
    assert nested(scan_command_structure("walk left twice and jump")) == (
        "C", [("S", [("V", ["walk", "left"]), "twice"]), "and", "jump"])
    s = scan_command_structure("turn opposite right thrice after look around left")
    assert nested(s) == ("C", [("S", [("V", ["turn", "opposite", "right"]), "thrice"]), "after",
                               ("V", ["look", "around", "left"])])
    assert s.tokens[s.n_words:] == ("C", "S", "V", "V")  # pre-order
    assert_constituency_shape(s)


@pytest.mark.parametrize("command", ["", "walk and", "twice", "turn", "jump left right", "walk twice twice",
                                     "walk and run after look", "I_WALK"])
def test_non_scan_commands_get_no_tree(command):
    with pytest.raises(StructureError, match="not a SCAN command"):
        scan_command_structure(command)


def test_every_generated_scan_command_parses():
    for command in scan.commands():
        s = scan_command_structure(command)
        assert s.tokens[:s.n_words] == tuple(command.split(" "))
        assert_constituency_shape(s)


@pytest.mark.mirror
def test_every_scan_simple_command_parses(mirror):
    cfg = get_config("scan_simple")
    for split in ("train", "test"):
        for row in cfg.rows(split):
            assert_constituency_shape(scan_command_structure(row["input"]))


# ---- SyGNS ----------------------------------------------------------------------------------------------

def test_sygns_sentence_trees_by_hand():
    s = sygns_sentence_structure("three birds that cleaned two horses that a polite bear followed did not kick bob")
    assert nested(s) == ("S", [
        ("NP", ["three", "birds", ("RC", ["that", ("VP", ["cleaned", ("NP", ["two", "horses", ("RC", [
            "that", ("NP", ["a", "polite", "bear"]), "followed"])])])])]),
        "did", "not", ("VP", ["kick", "bob"])])
    assert_constituency_shape(s)
    assert nested(sygns_sentence_structure("bob did not walk slowly")) == (
        "S", ["bob", "did", "not", ("VP", ["walk", "slowly"])])
    assert nested(sygns_sentence_structure("every cat that did not run ran or walked")) == (
        "S", [("NP", ["every", "cat", ("RC", ["that", "did", "not", "run"])]), ("VP", ["ran", "or", "walked"])])
    assert nested(sygns_sentence_structure("ann kissed every dog")) == (
        "S", ["ann", ("VP", ["kissed", ("NP", ["every", "dog"])])])


@pytest.mark.parametrize("sentence", ["", "ann kissed", "cat ran", "every cats ran", "ann ran ."])
def test_non_sygns_sentences_get_no_tree(sentence):
    with pytest.raises(StructureError):
        sygns_sentence_structure(sentence)


def test_sygns_vf_tree_by_hand():
    assert nested(sygns_vf_structure("EXIST JOHN TWO AND FOX POLITE ACCEPT")) == (
        "EXIST", ["JOHN", ("TWO", [("AND", ["FOX", "POLITE"]), "ACCEPT"])])
    assert nested(sygns_vf_structure("NOT INV LICK")) == ("NOT", [("INV", ["LICK"])])
    for bad in ("EXIST JOHN", "AND CAT SMALL RUN", "", "NOT"):
        with pytest.raises(StructureError):
            sygns_vf_structure(bad)


def test_sygns_fol_tree_by_hand():
    # all over its variable's token and "->"; "->" over its right operand; each token is its shallowest node
    s = sygns_fol_structure("all x1.(dog(x1) -> -swim(x1))")
    assert s.tokens == ("all", "x1.(dog(x1)", "->", "-swim(x1))") and s.heads == (ROOT, 0, 0, 2)
    fol = "exists x1.(cat(x1) & small(x1) & -exists x2.(elliot(x2) & touch(x1,x2)))"
    #      0      1           2 3         4 5       6              7 8
    s = sygns_fol_structure(fol)
    # the first "&" is the conjunction's node, the second outside; "-exists" is the negation (under "&") and
    # holds the inner quantifier, whose variable's token and conjunction hang from it
    assert s.heads == (ROOT, 0, 0, 2, OUTSIDE, 2, 5, 5, 7)
    assert nested(s) == ("exists", ["x1.(cat(x1)", ("&", ["small(x1)", ("-exists", [
        "x2.(elliot(x2)", ("&", ["touch(x1,x2)))"])])])])


def test_sygns_fol_trees_need_a_formula_in_the_datas_printing():
    for bad in ("", "exists x1.(cat(x1)", "cat(x1) &", 7):
        with pytest.raises(StructureError, match="FOL formula") as err:
            sygns_fol_structure(bad)
        assert "\n" not in str(err.value)
    # the same formula printed otherwise (a nested conjunction the data would print flat): no tree
    with pytest.raises(StructureError, match="printed in the data's convention"):
        sygns_fol_structure("exists x1.(cat(x1) & (small(x1) & big(x1)))")


def test_the_sygns_pair_annotator_gives_the_candidate_its_fol_tree():
    from hf_recogs.structure.annotators import sygns_pair

    _, candidate, _ = sygns_pair("one dog swam and cried", "exists x1.(dog(x1) & swim(x1) & cry(x1))")
    assert candidate.heads == (ROOT, 0, 0, 2, OUTSIDE, 2)
    _, wrong, _ = sygns_pair("one dog swam", "exists x1.(dog(x1) &")
    assert wrong.heads == (OUTSIDE,) * 3  # a candidate that does not parse keeps its tokens, no tree


def test_sygns_cross_links_by_lemma():
    sentence = "john accepted two polite foxes"
    fol = "exists x1.(john(x1) & exists x2.(two(x2) & fox(x2) & polite(x2) & accept(x1,x2)))"
    #      0      1            2 3      4           5 6       7 8          9 10
    assert sygns_cross_links(sentence, fol) == [(0, 1), (1, 10), (3, 8), (4, 6)]  # "two" is no content word
    vf = "EXIST JOHN TWO AND FOX POLITE ACCEPT"
    assert sygns_cross_links(sentence, vf) == [(0, 1), (1, 6), (3, 5), (4, 4)]
    drs = "b1 REF x1 [SEP] b1 john x1 [SEP] b1 accept x1 x2"
    assert sygns_cross_links(sentence, drs) == [(0, 5), (1, 9)]


def test_generated_sygns_rows_parse_from_the_sentence_alone():
    rows = itertools.chain(
        itertools.islice(sygns.rows("productivity", "test", scale=0.002), 0, None, 3),
        itertools.islice(sygns.rows("systematicity", "test", scale=0.002), 0, None, 3),
    )
    seen = 0
    for row in rows:
        s = sygns_sentence_structure(row["input"])
        assert s.tokens[:s.n_words] == tuple(row["input"].split(" "))
        assert_constituency_shape(s)
        vf = sygns_vf_structure(row["vf"])
        assert vf.root == 0 and OUTSIDE not in vf.heads
        for i, j in sygns_cross_links(row["input"], row["vf"]):
            assert vf.tokens[j].lower() == sygns.sem.LEMMA[s.tokens[i]]
        seen += 1
    assert seen > 50
