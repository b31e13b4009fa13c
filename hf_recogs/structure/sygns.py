"""Structure annotations for SyGNS: sentence trees, variable-free outputs as trees, lemma cross-links.

Sentences: parsed from the sentence alone by the recogniser of our SyGNS fragment
(``hf_recogs.benchmarks.sygns_semantics.parse``, docs/DATASETS.md §5.2), never from a gold formula. The tree's
constituents become structure tokens: ``S`` (subject NP, ``did``/``not``, the predicate), ``NP`` (determiner,
adjective, noun, relative clause), ``RC`` (``that``, ``did``/``not``, the verb phrase or the inner NP and verb
of an object gap), ``VP`` (verb with an adverb, a connective and a second verb, or a transitive verb and its
object). ``did not`` hangs from its clause (``S`` or ``RC``). Single-child constituents collapse
(``hf_recogs.structure.constituency``), so a proper name or a bare verb is a word node.

Outputs: the variable-free form (``vf``) is prefix notation with fixed arities (``hf_recogs.sygns_eval``'s
``VF_ARITY``), so :func:`vf_structure` makes every token a node over its arguments. A FOL formula
(:func:`fol_structure`) is first a tree over its FOL tokens — each quantifier over its variable and its body,
``-`` over its operand, a connective (its first ``&`` / ``|`` / ``->`` / ``<->``) over its parts, a predicate
over its arguments; brackets, dots, commas and repeated connectives outside — then projected onto the
whitespace tokens the models read (``x1.(cat(x1)`` holds a variable, a bracket and an atom): a whitespace token
is the shallowest node it holds, under the whitespace token of that node's nearest ancestor held elsewhere.

Cross-links (:func:`cross_links`) join a content word of the sentence (noun, name, adjective, adverb, verb)
to each output token that names its lemma: ``cats`` ↔ ``CAT`` (VF), ``cat`` (DRS), ``x1.(cat(x1)`` (FOL).
"""

from __future__ import annotations

import re

from ..benchmarks import sygns_semantics as sem
from ..sygns_eval import VF_ARITY, Malformed, fol_token_spans, parse_fol
from .constituency import Constituent, from_constituents
from .tree import ROOT, Structure, StructureError

NEGATION = ("did", "not")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Cursor:
    """Hands out word positions in the order ``Sentence.words()`` writes the words, checking each word."""

    def __init__(self, words: list[str]) -> None:
        self.words, self.i = words, 0

    def take(self, *expected: str) -> list[int]:
        out = []
        for word in expected:
            if self.i >= len(self.words) or self.words[self.i] != word:
                raise StructureError(f"the parse does not match the sentence at word {self.i} ({word!r})")
            out.append(self.i)
            self.i += 1
        return out


def _vp(vp: sem.VP, at: _Cursor) -> Constituent:
    return ("VP", at.take(*vp.words()))


def _np(np: sem.NP, at: _Cursor) -> Constituent:
    if np.det is None:
        return at.take(np.noun)[0]
    children: list[Constituent] = at.take(np.det)
    if np.adj is not None:
        children += at.take(np.adj)
    children += at.take(np.noun)
    if np.rc is not None:
        children.append(_rc(np.rc, at))
    return ("NP", children)


def _rc(rc: sem.RC, at: _Cursor) -> Constituent:
    children: list[Constituent] = at.take("that")
    neg = list(NEGATION) if rc.neg else []
    if rc.kind == "obj":
        children.append(_np(rc.np, at))
        return ("RC", children + at.take(*neg, rc.verb))
    children += at.take(*neg)
    if rc.kind == "sbj":
        verb = at.take(rc.verb)
        return ("RC", children + [("VP", verb + [_np(rc.np, at)])])
    return ("RC", children + [_vp(rc.vp, at)])


def sentence_tree(sentence: str) -> Constituent:
    """The constituents of a SyGNS sentence before collapsing; :class:`StructureError` when the fragment's
    recogniser finds no parse or several."""
    if not isinstance(sentence, str):
        raise StructureError(f"expected a SyGNS sentence string, got {type(sentence).__name__}")
    try:
        tree = sem.parse(sentence)
    except sem.ParseError as err:
        raise StructureError(str(err)) from None
    at = _Cursor(sentence.split(" "))
    children: list[Constituent] = [_np(tree.subj, at)]
    children += at.take(*NEGATION) if tree.neg else []
    if tree.vp is not None:
        children.append(_vp(tree.vp, at))
    else:
        verb = at.take(tree.verb)
        children.append(("VP", verb + [_np(tree.obj, at)]))
    if at.i != len(at.words):
        raise StructureError(f"the parse leaves words {at.i}.. of the sentence out")
    return ("S", children)


def sentence_structure(sentence: str) -> Structure:
    """The tree of a SyGNS sentence (module docstring)."""
    return from_constituents(sentence.split(" ") if isinstance(sentence, str) else [], sentence_tree(sentence))


def vf_structure(vf: str) -> Structure:
    """The variable-free form as a tree: each operator over its arguments, words as leaves.
    :class:`StructureError` for a string that is not a complete VF term (wrong arity, trailing tokens)."""
    if not isinstance(vf, str) or not vf.strip():
        raise StructureError(f"expected a variable-free form, got {vf!r}")
    tokens = vf.split()
    heads: list[int] = []
    pending: list[list[int]] = []  # [node, arguments still missing] of the open operators
    for i, tok in enumerate(tokens):
        if not pending and i:
            raise StructureError(f"tokens after a complete term, from {i} ({tok!r})")
        heads.append(pending[-1][0] if pending else ROOT)
        if pending:
            pending[-1][1] -= 1
            if pending[-1][1] == 0:
                pending.pop()
        arity = VF_ARITY.get(tok, 0)
        if arity:
            pending.append([i, arity])
    if pending:
        raise StructureError(f"{tokens[pending[-1][0]]!r} at {pending[-1][0]} lacks an argument")
    return Structure(tuple(tokens), tuple(heads), len(tokens))


class _FolNodes:
    """The FOL tokens a formula prints as (the data's printing convention, ``sygns_eval.format_fol``), each with
    the tree node it is (an index into ``parent``) or None (outside the tree)."""

    def __init__(self, phi):
        self.tokens: list[tuple[str, int | None]] = []
        self.parent: list[int] = []
        self.write(phi, ROOT)

    def new_node(self, parent: int) -> int:
        self.parent.append(parent)
        return len(self.parent) - 1

    def emit(self, token: str, node: int | None) -> None:
        self.tokens.append((token, node))

    def write(self, phi, parent: int) -> None:
        tag = phi[0]
        if tag == "atom":
            atom = self.new_node(parent)
            self.emit(phi[1], atom)
            for i, (_, name) in enumerate(phi[2]):
                self.emit("(" if i == 0 else ",", None)
                self.emit(name, self.new_node(atom))
            if phi[2]:
                self.emit(")", None)
        elif tag == "not":
            negation = self.new_node(parent)
            self.emit("-", negation)
            self.write(phi[1], negation)
        elif tag in ("exists", "all"):
            quantifier = self.new_node(parent)
            self.emit(tag, quantifier)
            self.emit(phi[1], self.new_node(quantifier))
            self.emit(".", None)
            self.write(phi[2], quantifier)
        else:  # a connective: its first operator token is its node, the others are outside
            parts = phi[1] if tag in ("and", "or") else phi[1:]
            operator = {"and": "&", "or": "|", "imp": "->", "iff": "<->"}[tag]
            connective = self.new_node(parent)
            self.emit("(", None)
            for i, part in enumerate(parts):
                if i:
                    self.emit(operator, connective if i == 1 else None)
                self.write(part, connective)
            self.emit(")", None)


def fol_structure(formula: str) -> Structure:
    """The FOL formula as a tree over its whitespace tokens (module docstring). :class:`StructureError` for a
    string that is not a formula, or one printed otherwise than the data prints formulas."""
    if not isinstance(formula, str) or not formula.strip():
        raise StructureError(f"expected a FOL formula, got {formula!r}")
    try:
        nodes = _FolNodes(parse_fol(formula))
        spans = fol_token_spans(formula)
    except Malformed as err:
        raise StructureError(f"not a FOL formula: {err}") from None
    if [t for t, _ in nodes.tokens] != [t for t, _ in spans]:
        raise StructureError("the formula is not printed in the data's convention (sygns_eval.format_fol)")
    words, starts, at = formula.split(), [], 0
    for word in words:  # the character each whitespace token starts at
        at = formula.index(word, at)
        starts.append(at)
        at += len(word)
    depth = _depths(nodes.parent)
    node_word: dict[int, int] = {}
    owner: dict[int, int] = {}  # whitespace token -> the shallowest node it holds
    for (_, node), (_, start) in zip(nodes.tokens, spans, strict=True):
        if node is not None:
            word = _word_at(starts, start)
            node_word[node] = word
            if word not in owner or depth[node] < depth[owner[word]]:
                owner[word] = node
    heads: list[int | None] = [None] * len(words)
    for word, node in owner.items():
        ancestor = nodes.parent[node]
        while ancestor != ROOT and node_word[ancestor] == word:
            ancestor = nodes.parent[ancestor]
        heads[word] = ROOT if ancestor == ROOT else node_word[ancestor]
    return Structure(tuple(words), tuple(heads), len(words))


def _word_at(starts: list[int], char: int) -> int:
    """The whitespace token that holds character ``char``."""
    word = 0
    while word + 1 < len(starts) and starts[word + 1] <= char:
        word += 1
    return word


def _depths(parent: list[int]) -> list[int]:
    """Each node's distance from the root (parents come before their children)."""
    depth: list[int] = []
    for p in parent:
        depth.append(0 if p == ROOT else depth[p] + 1)
    return depth


def _names(token: str) -> set[str]:
    return {name.lower() for name in _NAME.findall(token)}


def cross_links(sentence: str, output: str) -> list[tuple[int, int]]:
    """(sentence token, output token) pairs where the output token names the sentence word's lemma (module
    docstring); function words and determiners do not link."""
    names = [_names(tok) for tok in output.split()]
    links = []
    for i, word in enumerate(sentence.split()):
        lemma = sem.LEMMA.get(word)
        if lemma is not None:
            links += [(i, j) for j, found in enumerate(names) if lemma in found]
    return links
