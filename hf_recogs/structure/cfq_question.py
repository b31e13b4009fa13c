"""A parser of CFQ questions: the question tree from the question alone (no rule tree, no query).

CFQ's questions come from a small fixed grammar (96 words in MCD1). This module writes that grammar down as we
read it from the data and parses a question by backtracking, taking the first parse that spells the whole
question. Its constituents become structure tokens (``hf_recogs.structure.constituency``; single-child
constituents collapse):

- ``Q`` the question: ``Did`` + subject + verb phrases; ``Was``/``Were`` + subject + passive verb phrases, a
  second noun phrase (copula) or adjectives; ``Who``/``What`` + verb phrases; ``What``/``Which`` + a noun
  phrase's head + verb phrases; ``… did`` + clauses whose object is the gap (``What did M0 edit``);
- ``NP`` an entity ``M0``…``M9``; ``a`` + adjectives + nouns (+ ``of`` + noun phrases) (+ a relative clause);
  a possessive: a noun phrase + ``' s`` + adjectives + nouns;
- ``RC`` a relative clause: ``that`` + verb phrases (subject gap); ``that`` + clauses with an object gap
  (``that M1 was edited by and starred``); ``whose`` + nouns + verb phrases; a participle phrase
  (``a film directed by M1``: the ``RC`` has one child and collapses into its ``VP``);
- ``VP`` verbs + their shared object; ``was`` + participles + ``by`` + object; ``was`` + a noun phrase;
- ``CL`` a clause with an object gap (subject + verbs);
- ``V`` a verb group (``was edited by``, ``executive produced``), ``N`` a noun of several tokens
  (``art director``, ``country of nationality``);
- lists of two or more (``NP_AND``, ``N_AND``, ``V_AND``, ``VP_AND``, ``CL_AND``, ``A_AND``): the items are the
  children; the ``,`` and ``and`` between them stay outside the tree, as in CFQ's own question trees.

Function words (``a``, ``of``, ``' s``, ``that``, ``whose``, ``by``, ``was``, ``did``) are nodes of their
constituent. Where the surface is ambiguous the first parse wins, and the search tries longer lists first, an
``of`` object before the bare noun, a longer possessive chain first and a relative clause before none — so a
relative clause takes every verb phrase it can.

The check. :func:`attachments` reads a parse back as the predicate words (verbs, relational nouns) each entity
is an argument of; :func:`query_attachments` reads the same from a gold query (its relation families, e.g.
``direct`` for both ``film.film.directed_by`` and ``film.director.film``); :func:`learn_lexicon` learns which
family each word names from training rows. ``bench/cfq_question_agreement.py`` compares the two on every
MCD1 row; the parser itself never reads a query.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache, partial

from .constituency import from_constituents
from .tree import Structure, StructureError

ENTITY = re.compile(r"M[0-9]+")
ADJECTIVES = frozenset((
    "American", "British", "Canadian", "Chinese", "Dutch", "French", "German", "Italian", "Japanese",
    "Mexican", "Spanish", "Swedish", "female", "male"))
NOUNS = frozenset((
    "actor", "art director", "character", "child", "cinematographer", "company", "costume designer",
    "country of nationality", "director", "distributor", "editor", "employee", "employer", "executive producer",
    "film", "film director", "film distributor", "film editor", "film producer", "founder", "gender", "parent",
    "person", "prequel", "producer", "production company", "screenwriter", "sequel", "sibling", "spouse", "star",
    "writer"))
# lemma: (base, past, participle)
VERBS = {
    "acquire": ("acquire", "acquired", "acquired"), "direct": ("direct", "directed", "directed"),
    "distribute": ("distribute", "distributed", "distributed"), "edit": ("edit", "edited", "edited"),
    "employ": ("employ", "employed", "employed"),
    "executive produce": ("executive produce", "executive produced", "executive produced"),
    "found": ("found", "founded", "founded"), "influence": ("influence", "influenced", "influenced"),
    "marry": ("marry", "married", "married"), "play": ("play", "played", "played"),
    "produce": ("produce", "produced", "produced"), "star": ("star", "starred", "starred"),
    "write": ("write", "wrote", "written")}
BASE, PAST, PARTICIPLE = 0, 1, 2
_FORMS = {(form, tense): lemma for lemma, forms in VERBS.items() for tense, form in enumerate(forms)}
_LONGEST = max(len(unit.split()) for unit in NOUNS | {f for f, _ in _FORMS})


@dataclass
class Node:
    """A constituent: its label, its children (word positions and nodes, in order) and, for reading the
    predicate-argument structure back, what kind of node it is and its parts."""

    label: str
    children: list = field(default_factory=list)
    kind: str = ""
    parts: dict = field(default_factory=dict)


class _Parser:
    def __init__(self, words: list[str]):
        self.w = words
        self.n = len(words)

    # -- words -------------------------------------------------------------------------------------
    def _is(self, i: int, *options: str) -> bool:
        return i < self.n and self.w[i] in options

    def _units(self, i: int, table) -> list[tuple[str, int]]:
        """Units of ``table`` starting at i, longest first: (unit, end)."""
        out = []
        for k in range(min(_LONGEST, self.n - i), 0, -1):
            unit = " ".join(self.w[i:i + k])
            if table(unit):
                out.append((unit, i + k))
        return out

    def _unit_node(self, i: int, end: int, label: str, key: str):
        node = i if end - i == 1 else Node(label, list(range(i, end)))
        return node, key

    def nouns_at(self, i: int):
        for unit, end in self._units(i, lambda u: u in NOUNS):
            yield (*self._unit_node(i, end, "N", "N:" + unit), end)

    def verbs_at(self, i: int, tense: int):
        for unit, end in self._units(i, lambda u: (u, tense) in _FORMS):
            yield (*self._unit_node(i, end, "V", "V:" + _FORMS[unit, tense]), end)

    def adjective(self, i: int):
        if i < self.n and self.w[i] in ADJECTIVES:
            yield i, i + 1

    def adjectives(self, i: int) -> int:
        while i < self.n and self.w[i] in ADJECTIVES:
            i += 1
        return i

    # -- lists: item (',' item)* ','? 'and' item, or one item ------------------------------------------
    def listed(self, i: int, item, label: str):
        """Every list of items from i, the longest first: (list node, or the single item, end). ``item(j)``
        yields (node, end) for every item that starts at j."""
        results = []

        def extend(items: list, j: int):
            for node, end in item(j):
                chain = items + [node]
                if self._is(end, "and"):
                    for last, stop in item(end + 1):
                        results.append((Node(label, chain + [last], "list"), stop))
                if self._is(end, ",") and self._is(end + 1, "and"):
                    for last, stop in item(end + 2):
                        results.append((Node(label, chain + [last], "list"), stop))
                if self._is(end, ","):
                    extend(chain, end + 1)
                if not items:
                    results.append((node, end))

        extend([], i)
        results.sort(key=lambda r: -r[1])
        yield from results

    # -- noun phrases --------------------------------------------------------------------------------
    def nps(self, i: int):
        yield from self.listed(i, self.np, "NP_AND")

    def np(self, i: int):
        for base, j in self._np_base(i):
            yield from self._possessives(base, j)

    def _np_base(self, i: int, determiners=("a",)):
        if i < self.n and ENTITY.fullmatch(self.w[i]):
            yield i, i + 1
        elif self._is(i, *determiners):
            j = self.adjectives(i + 1)
            for nouns, k in self._noun_list(j):
                head = Node("NP", [i, *range(i + 1, j), nouns], "a", {"nouns": nouns})
                if self._is(k, "of"):
                    for obj, m in self.nps(k + 1):
                        yield from self._with_rc(Node("NP", head.children + [k, obj], "a",
                                                      {"nouns": nouns, "of": obj}), m)
                yield from self._with_rc(head, k)

    def _possessives(self, owner, j: int):
        """owner (' s adjectives nouns)* — the longest chain first."""
        if self._is(j, "'") and self._is(j + 1, "s"):
            k = self.adjectives(j + 2)
            for nouns, m in self._noun_list(k):
                node = Node("NP", [owner, j, j + 1, *range(j + 2, k), nouns], "poss", {"owner": owner, "nouns": nouns})
                yield from self._possessives(node, m)
                yield from self._with_rc(node, m, possessive=True)
        yield owner, j

    def _noun_list(self, i: int):
        yield from self.listed(i, self.nouns_only, "N_AND")

    def nouns_only(self, i: int):
        for node, key, end in self.nouns_at(i):
            yield _PredicateWord(node, key), end

    def _with_rc(self, head: Node, j: int, possessive: bool = False):
        for rc, k in self.rc(j):
            yield Node("NP", [head, rc] if possessive else head.children + [rc], "rc" if possessive else head.kind,
                       {**({"inner": head} if possessive else head.parts), "rc": rc}), k
        if not possessive:
            yield head, j

    # -- relative clauses ---------------------------------------------------------------------------
    def rc(self, i: int):
        if self._is(i, "that"):
            for vps, j in self.vps(i + 1, PAST):
                yield Node("RC", [i, vps], "subject_gap", {"vps": vps}), j
            for clauses, j in self.listed(i + 1, self.gap_clause, "CL_AND"):
                yield Node("RC", [i, clauses], "object_gap", {"clauses": clauses}), j
        elif self._is(i, "whose"):
            j = self.adjectives(i + 1)
            for nouns, k in self._noun_list(j):
                for vps, m in self.vps(k, PAST):
                    yield Node("RC", [i, *range(i + 1, j), nouns, vps], "whose", {"nouns": nouns, "vps": vps}), m
        else:  # a participle phrase: "a film directed by M1 and written by M2"
            for vps, j in self.passive_vps(i):
                yield Node("RC", [vps], "subject_gap", {"vps": vps}), j

    def gap_clause(self, i: int, tense: int = PAST):
        for subject, j in self.nps(i):
            for verbs, k in self.listed(j, lambda m: self.gap_verb(m, tense), "V_AND"):
                yield Node("CL", [subject, verbs], "clause", {"subject": subject, "verbs": verbs}), k
            if tense == PAST and self._is(j, "was", "were"):  # "M2 was produced and directed by"
                for verbs, k in self.listed(j + 1, self.participle_item, "V_AND"):
                    if self._is(k, "by") and not _ends_with_by(verbs):
                        yield Node("CL", [subject, j, verbs, k], "clause", {"subject": subject, "verbs": verbs}), k + 1

    def gap_verb(self, i: int, tense: int):
        """A verb whose object is the gap: a verb form, or (was) participle by."""
        for node, key, j in self.verbs_at(i, tense):
            yield _PredicateWord(node, key), j
        if tense == PAST and self._is(i, "was", "were"):
            for node, key, j in self.verbs_at(i + 1, PARTICIPLE):
                if self._is(j, "by"):
                    yield _PredicateWord(Node("V", [i, node, j], "passive_verb"), key), j + 1

    # -- verb phrases -------------------------------------------------------------------------------
    def vps(self, i: int, tense: int):
        yield from self.listed(i, lambda j: self.vp(j, tense), "VP_AND")

    def vp(self, i: int, tense: int):
        # verbs (shared object): "write , edit , and direct M1", "starred , was edited by , and was written by M1"
        for verbs, j in self.listed(i, lambda m: self.gap_verb(m, tense), "V_AND"):
            for obj, k in self.nps(j):
                yield Node("VP", [verbs, obj], "verbs", {"verbs": verbs, "object": obj}), k
        if tense == PAST and self._is(i, "was", "were"):
            for vps, k in self.passive_vps(i + 1):  # "was produced , edited , and written by M0 and M1"
                yield Node("VP", [i, vps], "passive", {"vps": vps}), k
            for obj, k in self.nps(i + 1):
                yield Node("VP", [i, obj], "copula", {"object": obj}), k

    def passive_vps(self, i: int):
        """After Was/Were: participle lists with by + object, coordinated."""
        yield from self.listed(i, self.passive_vp, "VP_AND")

    def passive_vp(self, i: int):
        for verbs, j in self.listed(i, self.participle_item, "V_AND"):
            if _ends_with_by(verbs):
                for obj, k in self.nps(j):
                    yield Node("VP", [verbs, obj], "verbs", {"verbs": verbs, "object": obj}), k
            elif self._is(j, "by"):
                for obj, k in self.nps(j + 1):
                    yield Node("VP", [verbs, j, obj], "verbs", {"verbs": verbs, "object": obj}), k

    def participle_item(self, i: int):
        for node, key, j in self.verbs_at(i, PARTICIPLE):
            if self._is(j, "by"):
                yield _PredicateWord(Node("V", [node, j], "passive_verb"), key), j + 1
            yield _PredicateWord(node, key), j

    # -- questions ----------------------------------------------------------------------------------
    def question(self):
        if self._is(0, "Did"):
            for subject, j in self.nps(1):
                for vps, k in self.vps(j, BASE):
                    yield Node("Q", [0, subject, vps], "did", {"subject": subject, "vps": vps}), k
        if self._is(0, "Was", "Were"):
            for subject, j in self.nps(1):
                for vps, k in self.passive_vps(j):
                    yield Node("Q", [0, subject, vps], "passive", {"subject": subject, "vps": vps}), k
                for other, k in self.nps(j):
                    yield Node("Q", [0, subject, other], "copula", {"subject": subject, "object": other}), k
                for adjectives, k in self.listed(j, self.adjective, "A_AND"):  # "Were M0 and M1 Spanish"
                    yield Node("Q", [0, subject, adjectives], "copula", {"subject": subject, "object": None}), k
        if self._is(0, "Who", "What", "Which"):
            starts = [] if self.w[0] == "Which" else [(0, 1)]
            if self.w[0] != "Who":  # "Which French film editor of M0 that M1 married ..."
                starts += list(self._np_base(0, determiners=("What", "Which")))
            for wh, j in starts:
                for vps, k in self.vps(j, PAST):
                    yield Node("Q", [wh, vps], "wh_subject", {"vps": vps}), k
                if self._is(j, "did"):
                    for clauses, k in self.listed(j + 1, partial(self.gap_clause, tense=BASE), "CL_AND"):
                        yield Node("Q", [wh, j, clauses], "wh_object", {"clauses": clauses}), k


def _ends_with_by(verbs) -> bool:
    last = verbs.children[-1] if isinstance(verbs, Node) and verbs.kind == "list" else verbs
    return isinstance(last, _PredicateWord) and isinstance(last.node, Node) and last.node.kind == "passive_verb"


@dataclass(frozen=True)
class _PredicateWord:
    """A predicate word (noun or verb, one or more tokens) with its lexicon key (``N:director``, ``V:direct``)."""

    node: object
    key: str


def _constituent(item):
    if isinstance(item, _PredicateWord):
        return _constituent(item.node)
    if isinstance(item, int):
        return item
    return (item.label, [_constituent(child) for child in item.children])


@lru_cache(maxsize=65536)
def _parse(question: str) -> Node:
    if not isinstance(question, str) or not question.strip():
        raise StructureError(f"expected a non-empty CFQ question, got {question!r}")
    words = question.split()
    for node, end in _Parser(words).question():
        if end == len(words):
            return node
    raise StructureError(f"not a question of the CFQ grammar: {question!r}")


def parse_question(question: str) -> Node:
    """The parse of a CFQ question (:class:`Node` tree); :class:`StructureError` (one line) when the question is
    outside the grammar."""
    return _parse(question)


def question_structure(question: str) -> Structure:
    """The question tree of a CFQ question, from the question alone (module docstring)."""
    return from_constituents(question.split(), _constituent(parse_question(question)))


# --------------------------------------------------------------------------------------------------
# Reading a parse back: which predicate words (verbs, relational nouns) each entity is an argument of.

def _items(node) -> list:
    return node.children if isinstance(node, Node) and node.kind == "list" else [node]


def _keys(node) -> set[str]:
    return {item.key for item in _items(node)}


class _Reader:
    def __init__(self, words: list[str]):
        self.words = words
        self.found: dict[int, set[str]] = {}

    def attach(self, entities, keys) -> None:
        for e in entities:
            self.found.setdefault(e, set()).update(keys)

    def np(self, node) -> tuple[list[int], set[str]]:
        """(entities the noun phrase denotes, predicate keys that relate its referent to others)."""
        if isinstance(node, int):
            return ([node] if ENTITY.fullmatch(self.words[node]) else []), set()
        if node.kind == "list":
            entities, props = [], set()
            for item in node.children:
                e, p = self.np(item)
                entities += e
                props |= p
            return entities, props
        props: set[str] = set()
        if node.kind == "poss":
            owners, _ = self.np(node.parts["owner"])
            props = _keys(node.parts["nouns"])
            self.attach(owners, props)
        elif node.kind == "rc":
            _, props = self.np(node.parts["inner"])
        elif node.parts.get("of") is not None:
            objects, _ = self.np(node.parts["of"])
            props = _keys(node.parts["nouns"])
            self.attach(objects, props)
        if node.parts.get("rc") is not None:
            props = props | self.rc(node.parts["rc"])
        return [], props

    def rc(self, node: Node) -> set[str]:
        """The keys the relative clause relates its head noun's referent by."""
        if node.kind == "subject_gap":
            return self.vps(node.parts["vps"], [], set())
        if node.kind == "object_gap":
            return self.clauses(node.parts["clauses"])
        nouns = _keys(node.parts["nouns"])
        self.vps(node.parts["vps"], [], nouns)
        return nouns

    def clauses(self, node) -> set[str]:
        keys: set[str] = set()
        for clause in _items(node):
            subjects, _ = self.np(clause.parts["subject"])
            verbs = _keys(clause.parts["verbs"])
            self.attach(subjects, verbs)
            keys |= verbs
        return keys

    def vps(self, node, subjects: list[int], subject_props: set[str]) -> set[str]:
        """Reads verb phrases whose subject denotes ``subjects``; returns the keys that relate the subject."""
        keys: set[str] = set()
        for vp in _items(node):
            if vp.kind == "passive":
                keys |= self.vps(vp.parts["vps"], subjects, subject_props)
                continue
            objects, object_props = self.np(vp.parts["object"])
            if vp.kind == "copula":
                self.attach(subjects, object_props)
                self.attach(objects, subject_props)
                keys |= object_props
            else:
                verbs = _keys(vp.parts["verbs"])
                self.attach(subjects + objects, verbs)
                keys |= verbs
        return keys

    def question(self, node: Node) -> None:
        if node.kind in ("did", "passive"):
            subjects, props = self.np(node.parts["subject"])
            self.vps(node.parts["vps"], subjects, props)
        elif node.kind == "copula":
            subjects, subject_props = self.np(node.parts["subject"])
            objects, object_props = self.np(node.parts["object"]) if node.parts["object"] is not None else ([], set())
            self.attach(subjects, object_props)
            self.attach(objects, subject_props)
        elif node.kind == "wh_subject":
            self._wh(node)
            self.vps(node.parts["vps"], [], set())
        else:
            self._wh(node)
            self.clauses(node.parts["clauses"])

    def _wh(self, node: Node) -> None:
        self.np(node.children[0])  # a wh noun's "of" objects and relative clause


def attachments(question: str) -> dict[str, frozenset[str]]:
    """For each entity of the question (``M0``…), the predicate words it is an argument of, as lexicon keys
    (``V:direct`` for directed/direct, ``N:spouse`` for a spouse of / 's spouse), read from the parse alone.
    An entity the question names twice gets the union."""
    words = question.split()
    reader = _Reader(words)
    reader.question(parse_question(question))
    out: dict[str, set[str]] = {}
    for i, word in enumerate(words):
        if ENTITY.fullmatch(word):
            out.setdefault(word, set()).update(reader.found.get(i, ()))
    return {entity: frozenset(keys) for entity, keys in out.items()}


# --------------------------------------------------------------------------------------------------
# The gold side of the check: the relation families each entity takes part in, from the query.

# (a piece of the predicate, its family), first match wins: a family joins a relation and its inverse
# (film.film.directed_by and film.director.film are both "direct").
RELATION_FAMILIES = (
    ("art_direct", "art_direct"), ("nationality", "nationality"), ("gender", "gender"), ("spouse", "marry"),
    ("executive_produc", "executive_produce"), ("films_executive", "executive_produce"),
    ("written_by", "write"), ("writer.film", "write"), ("directed_by", "direct"), ("director.film", "direct"),
    ("influenc", "influence"), ("edited_by", "edit"), ("editor.film", "edit"), ("produced_by", "produce"),
    ("producer.film", "produce"), ("employ", "employ"), ("founder", "found"), ("sibling", "sibling"),
    ("children", "parent"), ("parents", "parent"), ("performance.character", "play"),
    ("performance.film", "star"), ("performance.actor", "star"), ("cinematograph", "cinematography"),
    ("costume", "costume"), ("distribut", "distribute"), ("sequel", "sequel"), ("prequel", "sequel"),
    ("acqui", "acquire"))


def relation_family(predicate: str) -> str:
    for piece, family in RELATION_FAMILIES:
        if piece in predicate:
            return family
    raise StructureError(f"no relation family for the CFQ predicate {predicate!r}")


def query_attachments(query: str) -> dict[str, frozenset[str]]:
    """For each entity of a gold query, the relation families of the triples it is in. Types (``?x a
    film.film``), adjectives (an object ``m_…``: nationality, gender) and filters are left out: the question
    marks them with words that take no entity."""
    body = query[query.index("{") + 1:query.rindex("}")]
    out: dict[str, set[str]] = {}
    for clause in body.split(" . "):
        subject, predicate, obj = (clause.split() + ["", "", ""])[:3]
        if subject == "FILTER" or predicate == "a" or obj.startswith("m_"):
            continue
        for term in (subject, obj):
            if ENTITY.fullmatch(term):
                out.setdefault(term, set()).add(relation_family(predicate))
    return {entity: frozenset(families) for entity, families in out.items()}


def learn_lexicon(rows) -> dict[str, str]:
    """Which relation family each predicate word names (``V:marry`` → ``marry``), learnt from (question, query)
    training pairs: the family most often among the gold families of the entities the word governs."""
    counts: dict[str, Counter] = {}
    for question, query in rows:
        try:
            found = attachments(question)
        except StructureError:
            continue
        gold = query_attachments(query)
        for entity, keys in found.items():
            for key in keys:
                counts.setdefault(key, Counter()).update(gold.get(entity, ()))
    return {key: count.most_common(1)[0][0] for key, count in sorted(counts.items()) if count}


def families(found: dict[str, frozenset[str]], lexicon: dict[str, str]) -> dict[str, frozenset[str]]:
    """:func:`attachments` read through the lexicon: each entity's relation families (an unknown word stays
    itself, so it never matches)."""
    return {entity: frozenset(lexicon.get(key, key) for key in keys) for entity, keys in found.items()}


def same_families(predicted: dict[str, frozenset[str]], gold: dict[str, frozenset[str]]) -> bool:
    """Every entity of the query is in the question, and each entity has exactly its gold families."""
    return set(gold) <= set(predicted) and all(predicted[e] == gold.get(e, frozenset()) for e in predicted)


def agrees(question: str, query: str, lexicon: dict[str, str]) -> bool:
    """Whether the parse gives every entity exactly the relation families the query gives it."""
    return same_families(families(attachments(question), lexicon), query_attachments(query))
