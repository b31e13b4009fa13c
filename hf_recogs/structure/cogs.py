"""Structure annotations for COGS and the ReCOGS family: input trees, output trees and cross-links.

Input side. :func:`parse_sentence` parses an English sentence of the COGS grammar *from the sentence alone*
(it never reads a logical form), so new sentences can be annotated. The only knowledge it takes from data is
a :class:`CogsLexicon` learnt from the training split: which word forms are verbs, their lemma, and which
frames each verb was seen in (transitive, dative, CP-taking, infinitival, unaccusative...). A verb's frames
only order and restrict the search; when no parse fits the known frames, the sentence's shape decides
(a second, relaxed pass), so verbs met in a new frame (the COGS generalisation cases) still parse.

Constituents, one structure token each, in pre-order after the sentence's own tokens:

- ``S`` a clause (subject ``NP`` + ``VP``), or a topicalised clause (fronted ``NP`` + ``S`` with a gap;
  ReCOGS's preposing augmentation);
- ``TEXT`` the root when a row is several clauses glued together (ReCOGS's concatenated training rows);
- ``NP`` determiner + noun, or a proper name, each with its chain of ``PP`` modifiers;
- ``PP`` a preposition (``in``/``on``/``beside``, dative ``to``, passive ``by``) with its ``NP``;
- ``VP`` the verb (and ``was`` in a passive) with its objects; an infinitive is a ``VP`` holding ``to`` and
  the infinitive verb, inside the matrix ``VP``;
- ``CP`` ``that`` with its clause.

Words attach to their constituent; the final ``.`` and the filler ``um`` are OUTSIDE the tree.
The predicate-argument reading (:attr:`CogsParse.relations`) lists ``(role, head, dependent)`` triples over
word positions with the roles of the ReCOGS logical forms: ``agent``, ``theme``, ``recipient``, ``xcomp``,
``ccomp`` (head = verb) and ``nmod.in``/``nmod.on``/``nmod.beside`` (head = modified noun).

Output side. :func:`lf_structure` gives an LF of the COGS family (COGS, ReCOGS, ReCOGS_pos) a tree through
the project's one LF grammar (:func:`hf_recogs.logical_forms.parse`). :func:`cross_links` pairs input and
output tokens. :func:`annotate` does all three.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache

from .. import logical_forms as lfs
from .tree import OUTSIDE, ROOT, Structure, StructureError

__all__ = [
    "CogsAnnotation",
    "CogsLexicon",
    "CogsParse",
    "annotate",
    "cross_links",
    "default_lexicon",
    "gold_relations",
    "learn_lexicon",
    "lf_structure",
    "parse_sentence",
    "word_functions",
]

_DETS = frozenset({"a", "the", "A", "The"})
_NMOD_PREPS = frozenset({"in", "on", "beside"})
_FILLERS = frozenset({"um"})
_FUNCTION = _DETS | _NMOD_PREPS | _FILLERS | {"that", "to", "was", "by", "."}
_CORE_ROLES = frozenset({"agent", "theme", "recipient", "xcomp", "ccomp"})

# --------------------------------------------------------------------------------------------------
# 1. The lexicon, learnt from training data


@dataclass(frozen=True, eq=False)  # hashed by identity: a cache key
class CogsLexicon:
    """What the parser knows of verbs: ``lemmas`` maps a verb form to its LF lemma (``gave`` → ``give``);
    ``frames`` maps a lemma to the frames it was seen in (``intr_agent``, ``intr_theme``, ``trans``,
    ``dat``, ``cp``, ``inf``, ``infc`` = was an infinitive complement)."""

    lemmas: dict[str, str]
    frames: dict[str, frozenset[str]]

    def is_verb(self, form: str) -> bool:
        return form in self.lemmas

    def lemma(self, form: str) -> str:
        """The LF lemma of a verb form; an unseen form is guessed by English spelling rules."""
        known = self.lemmas.get(form)
        return known if known is not None else _guess_lemma(form)

    def unaccusative(self, form: str) -> bool:
        """Whether an intransitive subject of this verb is its theme (``The glass shattered``)."""
        frames = self.frames.get(self.lemma(form), frozenset())
        return "intr_theme" in frames and "intr_agent" not in frames

    def allowed(self, form: str) -> frozenset[str]:
        """Frames the strict pass lets this form take. A plain verb seen intransitive, transitive or as an
        infinitive may take all three and the passive: COGS tests exactly those alternations."""
        frames = self.frames.get(self.lemmas.get(form, ""), frozenset())
        out = set(frames & {"dat", "cp", "inf"})
        if frames & {"intr_agent", "intr_theme", "trans", "infc"}:
            out |= {"intr", "trans", "infc", "passive"}
        if "dat" in frames:
            out.add("passive")
        return frozenset(out)


def _guess_lemma(form: str) -> str:
    """Regular English past forms (``liked`` → ``like``); anything else is taken as its own lemma."""
    if form.endswith("ied"):
        return form[:-3] + "y"
    if form.endswith("ed") and len(form) > 4:
        stem = form[:-2]
        if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "ls":
            return stem[:-1]
        return stem + "e" if stem[-1] in "vcgz" or stem.endswith(("at", "ut")) else stem
    return form


def word_class(form: str, lexicon: CogsLexicon) -> str:
    """The class of one COGS word as the parser reads it (the names of ``WORD_CLASSES`` in
    ``configuration_structure_transformer.py``): ``"function"`` for determiners, prepositions, ``that``, ``to``,
    ``was``, ``by``, fillers and the final period; ``"verb"`` for a form the lexicon knows; ``"name"`` for a
    capitalised word; ``"noun"`` for any other lower-case word; ``"other"`` for anything else (numbers, symbols,
    special tokens). A COGS word has one class wherever it stands, so a word seen only alone in training (a
    primitive) gets the class of the words it behaves like in gen."""
    if form in _FUNCTION:
        return "function"
    if lexicon.is_verb(form):
        return "verb"
    if form.isalpha() and form[:1].isupper():
        return "name"
    if form.isalpha() and form.islower():
        return "noun"
    return "other"


def word_functions(structure: Structure) -> tuple[str, ...]:
    """The syntactic function of every word of a parse from :func:`parse_sentence` (the names of
    ``WORD_FUNCTIONS`` in ``configuration_structure_transformer.py``), read from the constituency tree alone, as
    Penn Treebank function tags are: an ``NP``'s last own word (its noun or name) is ``"subject"`` when the NP
    stands before a ``VP`` in its ``S``, ``"fronted"`` before an ``S`` (a topicalised object), ``"object"`` as
    the last ``NP`` of a ``VP`` and ``"first_object"`` as the first of two, ``"phrase_object"`` inside a ``PP``;
    a ``VP``'s last own word is its ``"verb"``; every other word is ``"other"``. These are functions, not roles:
    the subject of *rolled* is its theme, of *ate* its agent, and a passive's subject is no agent; the words
    decide that, the labels do not."""
    n = structure.n_words
    out = ["other"] * n
    children: dict[int, list[int]] = defaultdict(list)
    for node, head in enumerate(structure.heads):
        if head is not None and head != ROOT:
            children[head].append(node)
    category = structure.tokens
    for node in range(n, len(category)):
        own = [k for k in children[node] if k < n]
        if not own or category[node] not in ("NP", "VP"):
            continue
        if category[node] == "VP":
            out[own[-1]] = "verb"
            continue
        parent = structure.heads[node]
        siblings = children.get(parent, []) if parent is not None and parent != ROOT else []
        kind = category[parent] if siblings else None
        later = [category[k] for k in siblings if k > node]
        if kind == "S":
            function = "subject" if "VP" in later else "fronted" if "S" in later else "other"
        elif kind == "VP":
            function = "first_object" if "NP" in later else "object"
        elif kind == "PP":
            function = "phrase_object"
        else:
            function = "other"
        out[own[-1]] = function
    return tuple(out)


def gold_relations(sentence: str, lf: str) -> set[tuple[str, int, int]]:
    """``(role, head, dependent)`` of a ReCOGS_pos LF, whose indices are word positions. This reads the
    answer: use it to learn a lexicon or to score the parser, never to parse."""
    form = lfs.parse(lf, "recogs")
    if not form or form.binders:
        return set()
    out = set()
    for atom in form.atoms:
        if len(atom.args) == 2:
            out.add((atom.label, int(atom.args[0].name), int(atom.args[1].name)))
    return out


def learn_lexicon(rows) -> CogsLexicon:
    """Learn verb forms, lemmas and frames from ``(sentence, ReCOGS_pos LF)`` pairs of a training split."""
    lemmas: dict[str, Counter] = defaultdict(Counter)
    frames: dict[str, set] = defaultdict(set)
    for sentence, lf in rows:
        form = lfs.parse(lf, "recogs")
        if not form:
            continue
        if form.binders:  # a primitive: LAMBDA ... V ( e ) AND role ( e , a ) ...
            _learn_primitive(sentence, form, lemmas, frames)
            continue
        words = sentence.split()
        unary = {int(a.args[0].name): a.label for a in form.atoms if len(a.args) == 1}
        roles: dict[int, dict[str, int]] = defaultdict(dict)
        for atom in form.atoms:
            if atom.label in _CORE_ROLES:
                roles[int(atom.args[0].name)][atom.label] = int(atom.args[1].name)
        for event, rs in roles.items():
            lemma = unary[event]
            lemmas[words[event]][lemma] += 1
            frames[lemma].add(_frame_of(words, event, rs))
            if "xcomp" in rs:
                frames[unary[rs["xcomp"]]].add("infc")
    return CogsLexicon({f: c.most_common(1)[0][0] for f, c in lemmas.items()},
                       {lemma: frozenset(fs) for lemma, fs in frames.items()})


def _learn_primitive(sentence: str, form, lemmas, frames) -> None:
    """``LAMBDA a . LAMBDA e . V ( e ) AND theme ( e , a )`` tells that V is an unaccusative verb, etc."""
    labels = [a.label for a in form.atoms]
    if len(labels) < 2:
        return  # a noun primitive
    lemmas[sentence][labels[0]] += 1
    if len(form.binders) == 3:
        frames[labels[0]].add("trans")
    else:
        frames[labels[0]].add("intr_theme" if "theme" in labels else "intr_agent")


def _frame_of(words: list[str], event: int, roles: dict[str, int]) -> str:
    if "ccomp" in roles:
        return "cp"
    if "xcomp" in roles:
        return "inf"
    if "recipient" in roles:
        return "dat"
    passive = any(w == "was" for w in _previous_words(words, event, 1))
    if "theme" in roles and ("agent" in roles or passive):
        return "trans"
    return "intr_theme" if "theme" in roles else "intr_agent"


def _previous_words(words: list[str], i: int, n: int) -> list[str]:
    """The n words before position i, fillers skipped."""
    out = []
    while i > 0 and len(out) < n:
        i -= 1
        if words[i] not in _FILLERS:
            out.append(words[i])
    return out


@lru_cache(maxsize=1)
def default_lexicon() -> CogsLexicon:
    """The lexicon of ReCOGS_pos train (the COGS train sentences plus ReCOGS's augmentations), learnt once
    per process. Needs the dataset (mirror or cache)."""
    from ..loading import load_dataset

    train = load_dataset("recogs_pos", split="train")
    return learn_lexicon(zip(train["input"], train["output"], strict=True))


# --------------------------------------------------------------------------------------------------
# 2. The sentence parser


class _Node:
    """A constituent while parsing. ``head``: the noun/name (NP) or verb (VP) position; ``roles``:
    ``(role, target)`` for a VP's complements (target an NP, S, VP or _GAP); ``subj_role``: the role a VP
    gives its subject. Nodes are never changed once built, so backtracking can share them."""

    __slots__ = ("cat", "head", "kids", "roles", "subj_role", "words")

    def __init__(self, cat, words, kids=(), head=None, roles=(), subj_role="agent"):
        self.cat, self.words, self.kids, self.head = cat, words, kids, head
        self.roles, self.subj_role = roles, subj_role


_GAP = _Node("GAP", ())  # the fronted NP's place in a topicalised clause


class _Parser:
    """Backtracking recursive descent over the COGS grammar. Every ``_…`` generator yields the parses of a
    constituent starting at ``k`` (an index into ``self.pos``, the positions of the words that are neither
    fillers nor the final period) as ``(node, next k, gap still open)``, preferred parse first."""

    def __init__(self, words: list[str], lexicon: CogsLexicon, strict: bool):
        self.words, self.lex, self.strict = words, lexicon, strict
        pos = [i for i, w in enumerate(words) if w not in _FILLERS]
        if pos and words[pos[-1]] == "." and len(pos) > 1:
            pos.pop()
        self.pos, self.m = pos, len(pos)

    def w(self, k: int) -> str | None:
        return self.words[self.pos[k]] if k < self.m else None

    def verb_ok(self, k: int, frame: str) -> bool:
        form = self.w(k)
        if form is None or form in _FUNCTION:
            return False
        if self.strict:
            return frame in self.lex.allowed(form)
        return form.islower() or form in self.lex.lemmas

    def np(self, k: int) -> tuple[_Node, int] | None:
        """The one parse of an NP: PPs always modify the noun just before them (right branching)."""
        t = self.w(k)
        if t in _DETS and self.w(k + 1) is not None and self.w(k + 1) not in _FUNCTION:
            words, end = (self.pos[k], self.pos[k + 1]), k + 2
        elif t is not None and t[:1].isupper() and t not in _DETS and t.isalpha():
            words, end = (self.pos[k],), k + 1
        else:
            return None
        prep = self.w(end)
        if prep not in _NMOD_PREPS:
            return _Node("NP", words, (), words[-1]), end
        inner = self.np(end + 1)
        if inner is None:
            return None
        pp = _Node("PP", (self.pos[end],), (inner[0],), inner[0].head)
        return _Node("NP", words, (pp,), words[-1]), inner[1]

    def obj(self, k: int, gap: bool):
        """An object slot: a real NP first, else the gap of a topicalised clause."""
        found = self.np(k)
        if found is not None:
            yield found[0], found[1], gap
        if gap:
            yield _GAP, k, False

    def pp_obj(self, k: int, prep: str, gap: bool):
        """``to``/``by`` + object, as a PP node (without NP child when the object is the gap)."""
        if self.w(k) != prep:
            return
        for node, end, g in self.obj(k + 1, gap):
            kids = () if node is _GAP else (node,)
            yield _Node("PP", (self.pos[k],), kids, node.head), node, end, g

    def clause(self, k: int, gap: bool):
        found = self.np(k)
        if found is None:
            return
        subj, k1 = found
        for vp, end, g in self.vp(k1, gap):
            yield _Node("S", (), (subj, vp), vp.head), end, g

    def top(self, k: int):
        """A clause of the text: plain, or with a fronted object NP (ReCOGS preposing) and a gap."""
        for node, end, _gap in self.clause(k, False):
            yield node, end
        found = self.np(k)
        if found is None or (self.strict and not found[0].kids):
            return
        for node, end, g in self.clause(found[1], True):
            if not g:
                yield _Node("S", (), (found[0], node), node.head, roles=(("topic", found[0]),)), end

    def text(self, k: int):
        for node, end in self.top(k):
            if end == self.m:
                yield [node]
            else:
                for rest in self.text(end):
                    yield [node, *rest]

    def vp(self, k: int, gap: bool):
        if self.w(k) == "was":
            yield from self.passive(k, gap)
        else:
            yield from self.active(k, gap)

    def active(self, k: int, gap: bool):
        """Active frames, longest first: CP, infinitive, the two datives, transitive, intransitive."""
        v = self.pos[k] if k < self.m else None
        if self.w(k + 1) == "that" and self.verb_ok(k, "cp"):
            for s, end, g in self.clause(k + 2, gap):
                cp = _Node("CP", (self.pos[k + 1],), (s,), s.head)
                yield _Node("VP", (v,), (cp,), v, (("ccomp", s),)), end, g
        if self.w(k + 1) == "to" and self.verb_ok(k, "inf") and self.verb_ok(k + 2, "infc"):
            inner = _Node("VP", (self.pos[k + 1], self.pos[k + 2]), (), self.pos[k + 2])
            yield _Node("VP", (v,), (inner,), v, (("xcomp", inner),)), k + 3, gap
        if self.verb_ok(k, "dat"):
            for first, k1, g1 in self.obj(k + 1, gap):
                for second, k2, g2 in self.obj(k1, g1):
                    kids = tuple(n for n in (first, second) if n is not _GAP)
                    yield _Node("VP", (v,), kids, v, (("recipient", first), ("theme", second))), k2, g2
                for pp, inner, k2, g2 in self.pp_obj(k1, "to", g1):
                    kids = (pp,) if first is _GAP else (first, pp)
                    yield _Node("VP", (v,), kids, v, (("theme", first), ("recipient", inner))), k2, g2
        if self.verb_ok(k, "trans"):
            for obj, k1, g1 in self.obj(k + 1, gap):
                kids = () if obj is _GAP else (obj,)
                yield _Node("VP", (v,), kids, v, (("theme", obj),)), k1, g1
        if self.verb_ok(k, "intr"):
            role = "theme" if self.lex.unaccusative(self.w(k)) else "agent"
            yield _Node("VP", (v,), (), v, (), role), k + 1, gap

    def passive(self, k: int, gap: bool):
        """``was V`` with, for a dative verb, ``to NP`` (theme subject) or ``NP`` (recipient subject);
        then an optional ``by NP`` agent."""
        if not self.verb_ok(k + 1, "passive"):
            return
        v, words = self.pos[k + 1], (self.pos[k], self.pos[k + 1])
        for kids, roles, subj_role, k1, g1 in self.passive_objects(k + 2, gap):
            if self.w(k1) == "by":
                for pp, inner, k2, g2 in self.pp_obj(k1, "by", g1):
                    yield _Node("VP", words, (*kids, pp), v, (*roles, ("agent", inner)), subj_role), k2, g2
            else:
                yield _Node("VP", words, kids, v, roles, subj_role), k1, g1

    def passive_objects(self, k: int, gap: bool):
        if self.strict and "dat" not in self.lex.frames.get(self.lex.lemma(self.w(k - 1)), ()):
            yield (), (), "theme", k, gap
            return
        for pp, inner, k1, g1 in self.pp_obj(k, "to", gap):
            yield (pp,), (("recipient", inner),), "theme", k1, g1
        for obj, k1, g1 in self.obj(k, gap):
            yield (() if obj is _GAP else (obj,)), (("theme", obj),), "recipient", k1, g1
        yield (), (), "theme", k, gap


# --------------------------------------------------------------------------------------------------
# 3. From a parse to a Structure and a predicate-argument reading


@dataclass(frozen=True)
class CogsParse:
    """A parsed sentence: its constituency ``structure``; ``relations``, sorted ``(role, head, dependent)``
    word-position triples (roles as in ReCOGS LFs); ``events``, ``(verb position, lemma)``; ``entities``,
    the positions of nouns and proper names."""

    structure: Structure
    relations: tuple[tuple[str, int, int], ...]
    events: tuple[tuple[int, str], ...]
    entities: tuple[int, ...]

    def arguments(self) -> dict[int, list[tuple[int, str]]]:
        """For every dependent word: the ``(head, role)`` pairs it fills (a controlled subject fills two)."""
        out: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for role, head, dep in self.relations:
            out[dep].append((head, role))
        return dict(out)


def parse_sentence(sentence: str, lexicon: CogsLexicon | None = None) -> CogsParse:
    """Parse a COGS-grammar sentence (never its LF). Raises StructureError for text outside the grammar.
    ``lexicon`` defaults to :func:`default_lexicon` (learnt from ReCOGS_pos train)."""
    return _parse_cached(sentence, lexicon or default_lexicon())


@lru_cache(maxsize=1 << 16)
def _parse_cached(sentence: str, lexicon: CogsLexicon) -> CogsParse:
    words = sentence.split()
    if not words:
        raise StructureError("empty sentence: pass the sentence's text")
    if len(words) == 1 and words[0] not in _FUNCTION:  # a COGS primitive: one bare word
        cat = "VP" if lexicon.is_verb(words[0]) else "NP"
        return CogsParse(Structure((*words, cat), (1, ROOT), 1), (), (), ())
    for strict in (True, False):
        clauses = next(_Parser(words, lexicon, strict).text(0), None)
        if clauses is not None:
            break
    else:
        raise StructureError(f"not a COGS-grammar sentence: {sentence!r}; pass COGS/ReCOGS inputs, "
                             "space-separated like the datasets ('Emma slept .')")
    root = clauses[0] if len(clauses) == 1 else _Node("TEXT", (), tuple(clauses))
    relations: list[tuple[str, int, int]] = []
    events: list[tuple[int, str]] = []
    entities: list[int] = []
    for clause in clauses:
        _read_top(clause, relations, events, entities, words, lexicon)
    return CogsParse(_to_structure(words, root), tuple(sorted(relations)), tuple(sorted(events)),
                     tuple(sorted(entities)))


def _read_top(clause: _Node, rel: list, events: list, entities: list, words, lexicon) -> None:
    """Relations of one text clause; a topicalised clause resolves its gap to the fronted NP."""
    reader = _Reader(rel, events, entities, words, lexicon)
    if clause.roles and clause.roles[0][0] == "topic":
        topic, inner = clause.kids
        reader.np(topic)
        reader.topic = topic.head
        reader.clause(inner)
    else:
        reader.clause(clause)


class _Reader:
    """Walks a parse and collects the predicate-argument triples."""

    def __init__(self, rel, events, entities, words, lexicon):
        self.rel, self.events, self.entities = rel, events, entities
        self.words, self.lex, self.topic = words, lexicon, None

    def np(self, np: _Node) -> None:
        self.entities.append(np.head)
        for pp in np.kids:
            inner = pp.kids[0]
            self.rel.append(("nmod." + self.words[pp.words[0]], np.head, inner.head))
            self.np(inner)

    def clause(self, s: _Node) -> None:
        subj, vp = s.kids
        self.np(subj)
        self.vp(vp, subj.head)

    def vp(self, vp: _Node, subj: int) -> None:
        self.events.append((vp.head, self.lex.lemma(self.words[vp.head])))
        self.rel.append((vp.subj_role, vp.head, subj))
        for role, target in vp.roles:
            if target is _GAP:
                self.rel.append((role, vp.head, self.topic))
                continue
            self.rel.append((role, vp.head, target.head))
            if target.cat == "NP":
                self.np(target)
            elif target.cat == "S":
                self.clause(target)
            else:  # an infinitive: its subject is the matrix subject (control)
                self.vp(target, subj)


def _to_structure(words: list[str], root: _Node) -> Structure:
    """Structure tokens in pre-order after the words; words hang from their constituent."""
    n = len(words)
    heads: list[int | None] = [OUTSIDE] * n
    labels: list[str] = []
    stack = [(root, ROOT)]
    while stack:
        node, parent = stack.pop()
        me = n + len(labels)
        labels.append(node.cat)
        heads.append(parent)
        for i in node.words:
            heads[i] = me
        stack.extend((kid, me) for kid in reversed(node.kids))
    return Structure((*words, *labels), tuple(heads), n)


# --------------------------------------------------------------------------------------------------
# 4. Output trees: logical forms of the COGS family


_ROLE_WORDS = frozenset({"agent", "theme", "recipient", "xcomp", "ccomp", "nmod"})


def lf_structure(lf: str, fmt: str = "auto") -> Structure | None:
    """The tree of an LF: one predicate node per conjunct (the label's last word: ``theme`` in
    ``help . theme``, ``in`` in ``nmod . in``, ``rose`` in ``* rose``; its other label words and ``*`` hang
    from it) over its arguments (the index token of ``x _ N``, a bare index, a proper name or a lambda
    letter), all under one structure token ``LF``. Lambda binders hang from ``LF``. ``.``, ``(``, ``)``,
    ``,``, ``x``, ``_``, ``AND``, ``;`` and ``LAMBDA`` are OUTSIDE. Tokens are
    :func:`hf_recogs.logical_forms.normalize`'s (the whitespace tokens of every dataset LF).

    A candidate that does not parse gets no tree: the result is None (a collator can then mask it)."""
    layout = _lf_layout(lf, fmt)
    return None if layout is None else layout[0]


@lru_cache(maxsize=1 << 16)
def _lf_layout(lf: str, fmt: str) -> tuple[Structure, tuple[tuple[int, str, int | None], ...]] | None:
    """The tree and the linkable tokens ``(output index, word, index value or None)``, or None."""
    form = lfs.parse(lf, fmt)
    if not form:
        return None
    tokens = lfs.tokenize(lf)
    n = len(tokens)
    heads: list[int | None] = [OUTSIDE] * n
    links: list[tuple[int, str, int | None]] = []
    i = 0
    while i < n and tokens[i] == "LAMBDA":
        heads[i + 1] = n
        i += 3
    if form.term is not None:
        heads[i] = n
        links.append((i, tokens[i], None))
        return Structure((*tokens, "LF"), (*heads, ROOT), n), tuple(links)
    if i < n and tokens[i] == ";":  # ReCOGS's empty definite prefix (" ; body")
        i += 1
    for atom in form.atoms:
        i = _layout_atom(atom, tokens, i, n, heads, links)
        if i < n and tokens[i] in (";", "AND"):
            i += 1
    if i != n:
        raise StructureError(f"LF tokens and parse disagree at token {i} of {lf!r}; report this as a bug")
    return Structure((*tokens, "LF"), (*heads, ROOT), n), tuple(links)


def _layout_atom(atom, tokens: list[str], i: int, n: int, heads: list, links: list) -> int:
    """Place one conjunct's tokens, starting at ``i``; returns where the next separator is."""
    label = atom.label
    star = label.startswith("*")
    parts = label.lstrip("*").split(".")
    first = i + star
    pred = first + 2 * (len(parts) - 1)
    heads[pred] = n
    for j in range(i, pred):
        if tokens[j] != ".":
            heads[j] = pred
    for j in range(first, pred + 1, 2):
        if tokens[j] not in _ROLE_WORDS:
            links.append((j, tokens[j], None))
    i = pred + 1
    paren = i < n and tokens[i] == "("
    i += paren
    for k, arg in enumerate(atom.args):
        if k and tokens[i] == ",":
            i += 1
        if tokens[i] == "x" and isinstance(arg, lfs.Variable) and arg.name.startswith("x_"):
            i += 2  # ``x _`` stay outside; the index token is the node
        heads[i] = pred
        tok = tokens[i]
        if tok.isdigit() and isinstance(arg, lfs.Variable):
            links.append((i, tok, int(tok)))
        elif isinstance(arg, lfs.Constant):
            links.append((i, tok, None))
        i += 1
    return i + paren


# --------------------------------------------------------------------------------------------------
# 5. Cross-links and the whole annotation


def cross_links(sentence: str, lf: str, *, fmt: str = "auto", indices_are_positions: bool = True,
                lexicon: CogsLexicon | None = None) -> list[tuple[int, int]]:
    """``(input token, output token)`` pairs: an LF index (ReCOGS_pos ``3``, COGS ``x _ 3``'s ``3``) ↔ the
    word at that position; nouns, proper names and ``nmod`` prepositions ↔ the same word (``tv`` ↔ ``TV``);
    a verb lemma ↔ the sentence's forms of it (``give`` ↔ ``gave``, through the lexicon's lemma table).
    Pass ``indices_are_positions=False`` for ReCOGS with random indices (v1/v2). An LF that does not parse
    has no tree and no links ([])."""
    layout = _lf_layout(lf, fmt)
    if layout is None:
        return []
    by_word = _sentence_keys(sentence, lexicon or default_lexicon())
    n_words = len(sentence.split())
    out = []
    for j, tok, index in layout[1]:
        if index is not None:
            if indices_are_positions and index < n_words:
                out.append((index, j))
        else:
            out.extend((i, j) for i in by_word.get(tok, ()))
    return sorted(out)


@lru_cache(maxsize=1 << 16)
def _sentence_keys(sentence: str, lexicon: CogsLexicon) -> dict[str, tuple[int, ...]]:
    """Every content word's LF spellings (itself, lower-cased, its verb lemma) → its positions."""
    keys: dict[str, list[int]] = defaultdict(list)
    for i, w in enumerate(sentence.split()):
        if w in _FUNCTION and w not in _NMOD_PREPS:
            continue
        spellings = {w, w.lower()}
        if w.islower():
            spellings.add(lexicon.lemma(w))
        for s in spellings:
            keys[s].append(i)
    return {k: tuple(v) for k, v in keys.items()}


@dataclass(frozen=True)
class CogsAnnotation:
    """One (input, candidate output) pair, annotated: the input tree, the output tree (None when the
    candidate does not parse) and the cross-links."""

    input: Structure
    output: Structure | None
    links: list[tuple[int, int]]


def annotate(sentence: str, lf: str, *, fmt: str = "auto", indices_are_positions: bool = True,
             lexicon: CogsLexicon | None = None) -> CogsAnnotation:
    """Input tree + output tree + cross-links. Raises StructureError if the sentence is outside the grammar."""
    lexicon = lexicon or default_lexicon()
    return CogsAnnotation(parse_sentence(sentence, lexicon).structure, lf_structure(lf, fmt),
                      cross_links(sentence, lf, fmt=fmt, indices_are_positions=indices_are_positions,
                                  lexicon=lexicon))
