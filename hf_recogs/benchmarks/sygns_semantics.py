"""The SyGNS fragment: vocabulary, sentence trees, a recogniser, and the meaning columns of ``results.tsv``.

Our own implementation of the fragment summarised in docs/DATASETS.md §5.2 and §5.3 (no upstream code is
used). A sentence is a small tree (``Sentence`` / ``NP`` / ``RC`` / ``VP``); from the tree we build

* a first-order formula (``fol_formula``), printed in NLTK's syntax (``fol_string``): ``exists x1.φ``,
  ``all x1.φ``, ``&``, ``|``, ``->``, ``-``, atoms ``p(x1,x2)``, every binary formula in parentheses, a
  conjunction directly inside a conjunction (a disjunction inside a disjunction) flattened, variables
  ``x1, x2, …`` in binding order;
* ``folpol``: ``repr`` of the ``(predicate, polarity)`` list of the formula's atoms, left to right (negation
  and the antecedent of ``->`` flip the polarity);
* the variable-free form ``VF`` (prefix, upper case) and ``vfpol`` (``[[pred,pos|neg],…]``), built from the
  same tree, not from the formula;
* ``tags``: the nine ``key:yes|no`` phenomenon flags;
* ``drs``: the DRS clausal form built from the formula, clauses joined by `` [SEP] ``.

``analyze(sentence)`` parses a sentence string with ``parse`` and returns all of these; the 50 rows of the
upstream sample ``scripts/tmp_results/results.tsv`` are reproduced byte for byte (tests/test_sygns.py).

Upstream quirks kept by default (``quirks=True``; ``quirks=False`` gives the corrected variant where noted):

1. Subject-gap relative clauses reverse the verb's arguments: ``every cat that chased a dog`` gives
   ``chase(x2,x1)`` (the dog chases the cat). Object-gap relatives and main clauses are correct. The
   variable-free form is not affected (``NP(TV)`` is the right reading). ``quirks=False``: ``chase(x1,x2)``.
2. DRS box labels are positional and reused: a box ``bN`` labels its ``NOT`` box ``bN+1`` and the two boxes of
   ``IMP``/``DIS`` ``bN+1``, ``bN+2``, whatever labels are already used (``b1 NOT b2 … b1 NOT b2``; an
   ``IMP`` consequent can share its label with a box inside the antecedent).
   ``quirks=False``: every box gets a fresh label ``b1, b2, …`` in the order its first clause is emitted.
3. Surface bugs of the upstream grammar: ``PN did not tvFin PN`` (``ann did not chased bob``) and the
   intransitive relative ``that ivFin conn ivInf`` (``that ran or walk``). The parser accepts them and the
   correct forms alike; the generator writes ``did not tvInf`` and ``that ivFin conn ivFin`` when asked for
   the corrected variant (``sygns.Sampler(corrected=True)``, configs ``semantics="corrected"``).
4. Representation choices of the data, kept in both modes: the noun precedes the adjective
   (``cat(x1) & small(x1)``, ``AND CAT SMALL``); proper names are existentials with a predicate
   (``exists x1.(ann(x1) & …)``, ``EXIST ANN``); numerals are plain predicates (``two(x1)``), i.e. not
   cardinalities; adverbs are predicates of the subject variable; ``a``/``one`` are both ``exists``.

Tags (this reading reproduces the sample): ``sbj_quant`` the subject is a quantified NP; ``obj_quant`` the
main-clause object is a quantified NP; ``negation`` ``did not`` anywhere; ``adjective`` any adjective;
``peripheral`` any subject-gap relative with a transitive verb; ``center`` any object-gap relative;
``adverb``, ``conjunction`` (``and``), ``disjunction`` (``or``) anywhere. Intransitive relatives set neither
embedding tag.
"""

from __future__ import annotations

from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------------------
# Vocabulary (scripts/vocab.yaml; docs/DATASETS.md §5.2)

NOUN_SING = ("dog", "rabbit", "lion", "cat", "bear", "tiger", "fox", "monkey", "bird", "horse")
NOUN_PLUR = ("dogs", "rabbits", "lions", "cats", "bears", "foxes", "tigers", "monkeys", "birds", "horses")
PROPER_NAMES = ("ann", "bob", "chris", "daniel", "elliot", "fred", "greg", "henry", "tom", "john")
DET_SING = ("every", "a", "one")
DET_PLUR = ("all", "two", "three")
# vocab.yaml lists ten adjectives and ten adverbs; the upstream semantic grammar interprets only the first
# five of each, and the upstream sample uses only those five (30 occurrences, none of the other five).
# "sample" is the default vocabulary of our generator; "yaml" adds the other five (as if the grammar knew
# them).
ADJECTIVES = ("small", "large", "crazy", "polite", "wild")
ADJECTIVES_YAML = ADJECTIVES + ("young", "old", "cute", "dirty", "lazy")
ADVERBS = ("slowly", "quickly", "seriously", "suddenly", "lazily")
ADVERBS_YAML = ADVERBS + ("gracefully", "happily", "sadly", "angrily", "calmly")
IV_FIN = ("ran", "walked", "came", "swam", "danced", "rushed", "escaped", "cried", "slept", "moved")
IV_INF = ("run", "walk", "come", "swim", "dance", "rush", "escape", "cry", "sleep", "move")
TV_FIN = (
    "kissed", "cleaned", "touched", "loved", "accepted", "licked", "followed", "kicked", "chased", "liked"
)
TV_INF = ("kiss", "clean", "touch", "love", "accept", "lick", "follow", "kick", "chase", "like")
CONNECTIVES = ("and", "or")

SINGULAR_OF = {
    "dogs": "dog", "rabbits": "rabbit", "lions": "lion", "cats": "cat", "bears": "bear",
    "foxes": "fox", "tigers": "tiger", "monkeys": "monkey", "birds": "bird", "horses": "horse",
}
LEMMA: dict[str, str] = {}
LEMMA.update({w: w for w in NOUN_SING + PROPER_NAMES + ADJECTIVES_YAML + ADVERBS_YAML + IV_INF + TV_INF})
LEMMA.update(SINGULAR_OF)
LEMMA.update(zip(IV_FIN, IV_INF))
LEMMA.update(zip(TV_FIN, TV_INF))

QUANT_TYPE = {"a": "EXI", "one": "EXI", "two": "NUM", "three": "NUM", "every": "UNI", "all": "UNI"}
_VF_DET = {"every": "ALL", "all": "ALL", "a": "EXIST", "one": "EXIST", "two": "TWO", "three": "THREE"}

_SING_NOUNS = frozenset(NOUN_SING)
_PLUR_NOUNS = frozenset(NOUN_PLUR)
_NAMES = frozenset(PROPER_NAMES)
_ADJ = frozenset(ADJECTIVES_YAML)
_ADV = frozenset(ADVERBS_YAML)
_IV_FIN, _IV_INF = frozenset(IV_FIN), frozenset(IV_INF)
_TV_FIN, _TV_INF = frozenset(TV_FIN), frozenset(TV_INF)


# ---------------------------------------------------------------------------------------------------------
# Sentence trees


@dataclass(frozen=True, slots=True)
class VP:
    """An intransitive predicate: ``verb`` (surface form) with an optional modifier.

    ``mod`` is ``None``, ``("adv", adverb)`` or ``("conn", "and"|"or", second_verb_surface)``.
    """

    verb: str
    mod: tuple | None = None

    def words(self) -> list[str]:
        if self.mod is None:
            return [self.verb]
        return [self.verb, *self.mod[1:]]


@dataclass(frozen=True, slots=True)
class NP:
    """A proper name (``det is None``, ``noun`` = the name) or ``det [adj] noun [rc]``."""

    det: str | None
    noun: str
    adj: str | None = None
    rc: RC | None = None

    def words(self) -> list[str]:
        if self.det is None:
            return [self.noun]
        out = [self.det]
        if self.adj is not None:
            out.append(self.adj)
        out.append(self.noun)
        if self.rc is not None:
            out.extend(self.rc.words())
        return out


@dataclass(frozen=True, slots=True)
class RC:
    """A relative clause on the noun it follows.

    ``kind``: ``"sbj"`` (subject gap, ``that [did not] TV NP``), ``"obj"`` (object gap, ``that NP [did not]
    TV``) or ``"iv"`` (``that [did not] VP``). ``verb`` is the transitive verb (``sbj``/``obj``), ``np`` the
    NP inside, ``vp`` the intransitive predicate (``iv``).
    """

    kind: str
    neg: bool
    verb: str | None = None
    np: NP | None = None
    vp: VP | None = None

    def words(self) -> list[str]:
        neg = ["did", "not"] if self.neg else []
        if self.kind == "sbj":
            return ["that", *neg, self.verb, *self.np.words()]
        if self.kind == "obj":
            return ["that", *self.np.words(), *neg, self.verb]
        return ["that", *neg, *self.vp.words()]


@dataclass(frozen=True, slots=True)
class Sentence:
    """``subj [did not] vp`` (intransitive) or ``subj [did not] verb obj`` (transitive)."""

    subj: NP
    neg: bool
    vp: VP | None = None
    verb: str | None = None
    obj: NP | None = None

    def words(self) -> list[str]:
        out = self.subj.words()
        if self.neg:
            out += ["did", "not"]
        if self.vp is not None:
            out += self.vp.words()
        else:
            out.append(self.verb)
            out += self.obj.words()
        return out

    def text(self) -> str:
        return " ".join(self.words())


# ---------------------------------------------------------------------------------------------------------
# Recogniser: sentence string -> tree (backtracking over the small grammar; sample sentences have one parse)


class ParseError(ValueError):
    pass


def _parse_vp(toks: list[str], i: int, fin: bool):
    verbs = _IV_FIN if fin else _IV_INF
    if i >= len(toks) or toks[i] not in verbs:
        return
    verb = toks[i]
    yield VP(verb), i + 1
    if i + 1 < len(toks):
        nxt = toks[i + 1]
        if nxt in _ADV:
            yield VP(verb, ("adv", nxt)), i + 2
        elif nxt in CONNECTIVES and i + 2 < len(toks) and (toks[i + 2] in _IV_FIN or toks[i + 2] in _IV_INF):
            # the same form as the first verb; relative clauses also allow ``ivFin conn ivInf`` (upstream bug)
            yield VP(verb, ("conn", nxt, toks[i + 2])), i + 3


def _parse_np(toks: list[str], i: int):
    if i >= len(toks):
        return
    w = toks[i]
    if w in _NAMES:
        yield NP(None, w), i + 1
        return
    if w in DET_SING or w in DET_PLUR:
        nouns = _SING_NOUNS if w in DET_SING else _PLUR_NOUNS
        j, adj = i + 1, None
        if j < len(toks) and toks[j] in _ADJ:
            adj, j = toks[j], j + 1
        if j < len(toks) and toks[j] in nouns:
            yield NP(w, toks[j], adj), j + 1
            if adj is None and j + 1 < len(toks) and toks[j + 1] == "that":
                for rc, k in _parse_rc(toks, j + 1):
                    yield NP(w, toks[j], None, rc), k


def _parse_rc(toks: list[str], i: int):
    j = i + 1  # after "that"
    neg = toks[j : j + 2] == ["did", "not"]
    if neg:
        k = j + 2
        if k < len(toks) and toks[k] in _TV_INF:
            for np, m in _parse_np(toks, k + 1):
                if np.det is not None:
                    yield RC("sbj", True, toks[k], np), m
        for vp, m in _parse_vp(toks, k, fin=False):
            yield RC("iv", True, vp=vp), m
    if j < len(toks) and toks[j] in _TV_FIN:
        for np, m in _parse_np(toks, j + 1):
            if np.det is not None:
                yield RC("sbj", False, toks[j], np), m
    for vp, m in _parse_vp(toks, j, fin=True):
        yield RC("iv", False, vp=vp), m
    for np, m in _parse_np(toks, j):
        if np.det is None:
            continue
        if m < len(toks) and toks[m] in _TV_FIN:
            yield RC("obj", False, toks[m], np), m + 1
        if toks[m : m + 2] == ["did", "not"] and m + 2 < len(toks) and toks[m + 2] in _TV_INF:
            yield RC("obj", True, toks[m + 2], np), m + 3


def _parse_sentence(toks: list[str]):
    n = len(toks)
    for subj, i in _parse_np(toks, 0):
        neg = toks[i : i + 2] == ["did", "not"]
        k = i + 2 if neg else i
        for vp, m in _parse_vp(toks, k, fin=not neg):
            if m == n:
                yield Sentence(subj, neg, vp=vp)
        if k < n and (toks[k] in (_TV_INF if neg else _TV_FIN) or (neg and toks[k] in _TV_FIN)):
            # a quantified NP is subject or object, never both; "did not tvFin" only as "PN did not tvFin PN"
            bug = neg and toks[k] in _TV_FIN
            for obj, m in _parse_np(toks, k + 1):
                if m != n or (subj.det is not None and obj.det is not None):
                    continue
                if bug and (subj.det is not None or obj.det is not None):
                    continue
                yield Sentence(subj, neg, verb=toks[k], obj=obj)


def parse(sentence: str) -> Sentence:
    """The tree of ``sentence``; ``ParseError`` when it is not in the fragment or has several parses."""
    toks = sentence.split(" ")
    found = list(_parse_sentence(toks))
    if not found:
        raise ParseError(f"not a SyGNS sentence: {sentence!r}")
    distinct = list(dict.fromkeys(found))
    if len(distinct) > 1:
        raise ParseError(f"ambiguous SyGNS sentence ({len(distinct)} parses): {sentence!r}")
    return distinct[0]


# ---------------------------------------------------------------------------------------------------------
# First-order logic. Formulas are tuples:
#   ("A", pred, "pred(x1,x2)", "x1 x2")  atom (with its FOL text and its DRS argument text)
#   ("&", (φ, ψ, ...))  n-ary conjunction, kept flat     ("|", φ, ψ)  ("->", φ, ψ)  ("-", φ)
#   ("E", v, φ) ("U", v, φ)  exists / all
# Variables are ints allocated in binding order (the order in which the printed formula binds them). A
# conjunction is stored flat because NLTK prints a conjunction inside a conjunction without its parentheses
# and neither the polarity list nor the DRS depends on how a conjunction is bracketed.


class _Vars:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def new(self) -> int:
        self.n += 1
        return self.n


def _atom(pred: str, *args: int):
    names = ["x%d" % v for v in args]
    return ("A", pred, pred + "(" + ",".join(names) + ")", " ".join(names))


def _and(*parts):
    flat = []
    for p in parts:
        if p[0] == "&":
            flat.extend(p[1])
        else:
            flat.append(p)
    return ("&", tuple(flat))


def _np_fol(np: NP, scope, fresh: _Vars, quirks: bool):
    v = fresh.new()
    if np.det is None:
        return ("E", v, _and(_atom(np.noun, v), scope(v)))
    restr = _atom(LEMMA[np.noun], v)
    if np.adj is not None:
        restr = _and(restr, _atom(np.adj, v))
    elif np.rc is not None:
        restr = _and(restr, _rc_fol(np.rc, v, fresh, quirks))
    det = np.det
    if det in ("every", "all"):
        return ("U", v, ("->", restr, scope(v)))
    if det in ("two", "three"):
        return ("E", v, _and(_atom(det, v), restr, scope(v)))
    return ("E", v, _and(restr, scope(v)))


def _vp_fol(vp: VP, x: int):
    atom = _atom(LEMMA[vp.verb], x)
    if vp.mod is None:
        return atom
    if vp.mod[0] == "adv":
        return _and(atom, _atom(vp.mod[1], x))
    second = _atom(LEMMA[vp.mod[2]], x)
    return _and(atom, second) if vp.mod[1] == "and" else ("|", atom, second)


def _neg(flag: bool, phi):
    return ("-", phi) if flag else phi


def _rc_fol(rc: RC, x: int, fresh: _Vars, quirks: bool):
    if rc.kind == "iv":
        return _neg(rc.neg, _vp_fol(rc.vp, x))
    verb = LEMMA[rc.verb]
    if rc.kind == "sbj":
        if quirks:  # upstream: the object of the relative clause becomes the verb's first argument
            return _neg(rc.neg, _np_fol(rc.np, lambda y: _atom(verb, y, x), fresh, quirks))
        return _neg(rc.neg, _np_fol(rc.np, lambda y: _atom(verb, x, y), fresh, quirks))
    return _np_fol(rc.np, lambda y: _neg(rc.neg, _atom(verb, y, x)), fresh, quirks)


def fol_formula(tree: Sentence, quirks: bool = True):
    fresh = _Vars()
    if tree.vp is not None:
        return _np_fol(tree.subj, lambda x: _neg(tree.neg, _vp_fol(tree.vp, x)), fresh, quirks)
    verb = LEMMA[tree.verb]

    def scope(x):
        return _neg(tree.neg, _np_fol(tree.obj, lambda y: _atom(verb, x, y), fresh, quirks))

    return _np_fol(tree.subj, scope, fresh, quirks)


def _fol_write(phi, out: list) -> None:
    tag = phi[0]
    if tag == "A":
        out.append(phi[2])
    elif tag == "&":
        out.append("(")
        first = True
        for p in phi[1]:
            if not first:
                out.append(" & ")
            first = False
            _fol_write(p, out)
        out.append(")")
    elif tag == "-":
        out.append("-")
        _fol_write(phi[1], out)
    elif tag == "|" or tag == "->":
        # a disjunction inside a disjunction is flattened like a conjunction (never produced here)
        out.append("(")
        for i, p in enumerate(phi[1:]):
            if i:
                out.append(" | " if tag == "|" else " -> ")
            if tag == "|" and p[0] == "|":
                inner: list = []
                _fol_write(p, inner)
                out.append("".join(inner)[1:-1])
            else:
                _fol_write(p, out)
        out.append(")")
    else:
        # NLTK merges directly nested quantifiers of one kind ("exists x1 x2.φ"; never produced here)
        out.append("exists x%d" % phi[1] if tag == "E" else "all x%d" % phi[1])
        body = phi[2]
        while body[0] == tag:
            out.append(" x%d" % body[1])
            body = body[2]
        out.append(".")
        _fol_write(body, out)


def fol_string(phi) -> str:
    """NLTK's ``str`` of the formula (see the module docstring)."""
    out: list[str] = []
    _fol_write(phi, out)
    return "".join(out)


def fol_polarities(phi, pol: int = 1, out: list | None = None) -> list[tuple[str, int]]:
    if out is None:
        out = []
    tag = phi[0]
    if tag == "A":
        out.append((phi[1], pol))
    elif tag == "&":
        for p in phi[1]:
            fol_polarities(p, pol, out)
    elif tag == "-":
        fol_polarities(phi[1], 1 - pol, out)
    elif tag == "->":
        fol_polarities(phi[1], 1 - pol, out)
        fol_polarities(phi[2], pol, out)
    elif tag == "|":
        fol_polarities(phi[1], pol, out)
        fol_polarities(phi[2], pol, out)
    else:
        fol_polarities(phi[2], pol, out)
    return out


# ---------------------------------------------------------------------------------------------------------
# DRS clausal form (docs/DATASETS.md §5.3; the rules are in the module docstring)


class _Box:
    __slots__ = ("label", "refs", "conds")

    def __init__(self, label: int) -> None:
        self.label = label
        self.refs: list[int] = []
        self.conds: list = []


def _drs_fill(phi, box: _Box) -> None:
    tag = phi[0]
    if tag == "A":
        box.conds.append(phi)
    elif tag == "&":
        for p in phi[1]:
            _drs_fill(p, box)
    elif tag == "E":
        box.refs.append(phi[1])
        _drs_fill(phi[2], box)
    elif tag == "-":
        sub = _Box(box.label + 1)
        _drs_fill(phi[1], sub)
        box.conds.append(("NOT", sub))
    elif tag == "|":
        left, right = _Box(box.label + 1), _Box(box.label + 2)
        _drs_fill(phi[1], left)
        _drs_fill(phi[2], right)
        box.conds.append(("DIS", left, right))
    elif tag == "U":
        ante, cons = _Box(box.label + 1), _Box(box.label + 2)
        ante.refs.append(phi[1])
        body = phi[2]
        if body[0] == "->":
            _drs_fill(body[1], ante)
            _drs_fill(body[2], cons)
        else:
            _drs_fill(body, cons)
        box.conds.append(("IMP", ante, cons))
    else:  # a bare implication (never produced by the grammar)
        ante, cons = _Box(box.label + 1), _Box(box.label + 2)
        _drs_fill(phi[1], ante)
        _drs_fill(phi[2], cons)
        box.conds.append(("IMP", ante, cons))


def _relabel(box: _Box, counter: list) -> None:
    counter[0] += 1
    box.label = counter[0]
    for cond in box.conds:
        if cond[0] != "A":
            for sub in cond[1:]:
                _relabel(sub, counter)


def _drs_emit(box: _Box, out: list) -> None:
    b = "b%d" % box.label
    for v in box.refs:
        out.append("%s REF x%d" % (b, v))
    for cond in box.conds:
        kind = cond[0]
        if kind == "A":
            out.append(b + " " + cond[1] + " " + cond[3])
        elif kind == "NOT":
            out.append("%s NOT b%d" % (b, cond[1].label))
            _drs_emit(cond[1], out)
        else:
            out.append("%s %s b%d b%d" % (b, kind, cond[1].label, cond[2].label))
            _drs_emit(cond[1], out)
            _drs_emit(cond[2], out)


def drs_string(phi, quirks: bool = True) -> str:
    top = _Box(1)
    _drs_fill(phi, top)
    if not quirks:
        _relabel(top, [0])
    out: list[str] = []
    _drs_emit(top, out)
    return " [SEP] ".join(out)


# ---------------------------------------------------------------------------------------------------------
# Variable-free form. Terms: str (a 0-ary predicate, lower case) or (OP, arg, ...).


def _np_vf(np: NP, scope):
    if np.det is None:
        return ("EXIST", np.noun, scope)
    noun = LEMMA[np.noun]
    if np.adj is not None:
        restr = ("AND", noun, np.adj)
    elif np.rc is not None:
        restr = ("AND", noun, _rc_vf(np.rc))
    else:
        restr = noun
    return (_VF_DET[np.det], restr, scope)


def _vp_vf(vp: VP):
    verb = LEMMA[vp.verb]
    if vp.mod is None:
        return verb
    if vp.mod[0] == "adv":
        return ("AND", verb, vp.mod[1])
    return ("AND" if vp.mod[1] == "and" else "OR", verb, LEMMA[vp.mod[2]])


def _not(flag: bool, term):
    return ("NOT", term) if flag else term


def _rc_vf(rc: RC):
    if rc.kind == "iv":
        return _not(rc.neg, _vp_vf(rc.vp))
    verb = LEMMA[rc.verb]
    if rc.kind == "sbj":
        return _not(rc.neg, _np_vf(rc.np, verb))
    return _np_vf(rc.np, _not(rc.neg, ("INV", verb)))


def vf_term(tree: Sentence):
    if tree.vp is not None:
        return _np_vf(tree.subj, _not(tree.neg, _vp_vf(tree.vp)))
    return _np_vf(tree.subj, _not(tree.neg, _np_vf(tree.obj, LEMMA[tree.verb])))


def _vf_tokens(term, out: list) -> list:
    if isinstance(term, str):
        out.append(term.upper())
    else:
        out.append(term[0])
        for arg in term[1:]:
            _vf_tokens(arg, out)
    return out


def vf_string(term) -> str:
    return " ".join(_vf_tokens(term, []))


def _vf_pol(term, pos: bool, out: list) -> list:
    if isinstance(term, str):
        out.append("[%s,%s]" % (term, "pos" if pos else "neg"))
    elif term[0] == "NOT":
        _vf_pol(term[1], not pos, out)
    elif term[0] == "INV":
        _vf_pol(term[1], pos, out)
    elif term[0] == "ALL":
        _vf_pol(term[1], not pos, out)
        _vf_pol(term[2], pos, out)
    else:
        _vf_pol(term[1], pos, out)
        _vf_pol(term[2], pos, out)
    return out


def vf_polarities(term) -> str:
    return "[" + ",".join(_vf_pol(term, True, [])) + "]"


# ---------------------------------------------------------------------------------------------------------
# Phenomenon tags

TAG_KEYS = (
    "sbj_quant", "obj_quant", "negation", "adjective", "peripheral", "center", "adverb", "conjunction",
    "disjunction",
)


def _collect(np: NP, flags: dict) -> None:
    if np.adj is not None:
        flags["adjective"] = True
    rc = np.rc
    if rc is None:
        return
    if rc.neg:
        flags["negation"] = True
    if rc.kind == "iv":
        _collect_vp(rc.vp, flags)
    else:
        flags["peripheral" if rc.kind == "sbj" else "center"] = True
        _collect(rc.np, flags)


def _collect_vp(vp: VP, flags: dict) -> None:
    if vp.mod is None:
        return
    if vp.mod[0] == "adv":
        flags["adverb"] = True
    else:
        flags["conjunction" if vp.mod[1] == "and" else "disjunction"] = True


def tag_flags(tree: Sentence) -> dict[str, bool]:
    flags = dict.fromkeys(TAG_KEYS, False)
    flags["sbj_quant"] = tree.subj.det is not None
    flags["obj_quant"] = tree.obj is not None and tree.obj.det is not None
    flags["negation"] = tree.neg
    _collect(tree.subj, flags)
    if tree.obj is not None:
        _collect(tree.obj, flags)
    if tree.vp is not None:
        _collect_vp(tree.vp, flags)
    return flags


def tags_string(flags: dict[str, bool]) -> str:
    return ";".join("%s:%s" % (k, "yes" if flags[k] else "no") for k in TAG_KEYS)


# ---------------------------------------------------------------------------------------------------------
# Everything at once

COLUMNS = ("fol", "folpol", "vf", "vfpol", "tags", "drs")


def meanings(tree: Sentence, quirks: bool = True) -> dict[str, str]:
    """The six meaning columns of ``results.tsv`` for ``tree`` (strings exactly as upstream prints them)."""
    phi = fol_formula(tree, quirks)
    term = vf_term(tree)
    return {
        "fol": fol_string(phi),
        "folpol": repr(fol_polarities(phi)),
        "vf": vf_string(term),
        "vfpol": vf_polarities(term),
        "tags": tags_string(tag_flags(tree)),
        "drs": drs_string(phi, quirks),
    }


def analyze(sentence: str, quirks: bool = True) -> dict[str, str]:
    """Parse ``sentence`` and return its meaning columns (``fol folpol vf vfpol tags drs``)."""
    return meanings(parse(sentence), quirks)
