"""Structure annotations for CFQ (question → SPARQL): the query tree, the question tree, and cross-links.

The query tree is dependency-like, as in the structure-annotation method (Kim et al. 2021): the first header
token (``SELECT``) is the root and the other header tokens (``DISTINCT``, ``?x0``, ``count``, ``*``, ``WHERE``)
are its children; ``WHERE`` has one child per clause; a triple ``s p o`` is the node ``p`` over ``s`` and
``o``; a filter ``FILTER ( a != b )`` is the node ``!=`` over ``a`` and ``b``. Braces, dots, parentheses and
the ``FILTER`` keyword (its clause is the ``!=`` node) are outside the tree. Every occurrence of a variable or
entity is a node of its own; repeated occurrences are not joined.

The paper's question tree comes from the question's grammar-rule derivation, which only rows read from the
official CFQ release carry (their ``rule_tree`` column, ``hf_recogs.benchmarks.cfq.grammar_tree``).
:func:`question_tree` builds it as the structure-annotation method does: one *structure token* per
constituent, labelled by its rule's left-hand side and appended after the words in pre-order; each word hangs
from the constituent whose rule produced it; an enumeration (``ENUMERATION``, ``COMPLETED_AND``) keeps only its
first and last part, the parts of a nested enumeration moving up, so ``,`` and ``and`` fall outside the tree; a
constituent with one child is that child (unary chains collapse). A rule word that preprocessing split
(``'s`` → ``' s``) attaches by its first piece; the rest stays outside, as in the method.

Rows without a derivation (``cfq_mcd1``: the LEAR copy keeps none) get :func:`question_structure`, the tree
of our own parser of CFQ's question grammar (``hf_recogs.structure.cfq_question``), which reads the question
alone and agrees with the gold queries on 99.98 % of MCD1's rows (``bench/cfq_question_agreement.py``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .tree import OUTSIDE, ROOT, Structure, StructureError

OUTSIDE_TOKENS = frozenset(("{", "}", ".", "(", ")", "FILTER"))
_SYNTAX = OUTSIDE_TOKENS | {"!=", "SELECT", "WHERE"}
ENTITY = re.compile(r"M[0-9]+")


def _tokens(text: str) -> list[str]:
    if not isinstance(text, str) or not text.strip():
        raise StructureError(f"expected a non-empty query string, got {text!r}")
    return text.split()


def _clauses(tokens: list[str], start: int) -> list[tuple[int, int]]:
    """(first, end) index ranges of the dot-separated clauses from ``start`` to the final ``}``."""
    if tokens[-1] != "}" or len(tokens) - 1 < start:
        raise StructureError("the query does not end with '}' after its '{'")
    last = len(tokens) - 1
    out, first = [], start
    for i in range(start, last + 1):
        if tokens[i] in ("{", "}") and i != last:
            raise StructureError(f"unexpected {tokens[i]!r} at token {i}")
        if tokens[i] == "." or i == last:
            if i == first:
                raise StructureError(f"empty clause before token {i} ({tokens[i]!r})")
            out.append((first, i))
            first = i + 1
    return out


def _clause_heads(tokens: list[str], first: int, end: int, where: int, heads: list) -> None:
    part = tokens[first:end]
    if len(part) == 3 and not _SYNTAX & set(part):  # s p o
        heads[first + 1] = where
        heads[first] = heads[first + 2] = first + 1
        return
    if (len(part) == 6 and part[0] == "FILTER" and part[1] == "(" and part[3] == "!=" and part[5] == ")"
            and not _SYNTAX & {part[2], part[4]}):
        heads[first + 3] = where
        heads[first + 2] = heads[first + 4] = first + 3
        return
    raise StructureError(f"clause {' '.join(part)!r} is neither 's p o' nor 'FILTER ( a != b )'")


def query_structure(query: str) -> Structure:
    """The tree of a CFQ SPARQL query (module docstring). Raises :class:`StructureError` (one line, saying
    where) for a query that does not parse, e.g. a malformed model output."""
    tokens = _tokens(query)
    if tokens[0] != "SELECT":
        raise StructureError(f"a query starts with SELECT, this one with {tokens[0]!r}")
    if "WHERE" not in tokens:
        raise StructureError("the query has no WHERE")
    where = tokens.index("WHERE")
    if where + 1 >= len(tokens) or tokens[where + 1] != "{":
        raise StructureError("WHERE is not followed by '{'")
    header = tokens[1:where]
    if not [t for t in header if t not in ("(", ")")] or (_SYNTAX - {"(", ")"}) & set(header):
        raise StructureError(f"bad header {' '.join(tokens[:where + 1])!r}")
    heads: list[int | None] = [OUTSIDE] * len(tokens)
    heads[0] = ROOT
    for i in range(1, where + 1):
        if tokens[i] not in ("(", ")"):
            heads[i] = 0
    for first, end in _clauses(tokens, where + 2):
        _clause_heads(tokens, first, end, where, heads)
    return Structure(tuple(tokens), tuple(heads), len(tokens))


def question_structure(question: str) -> Structure:
    """The tree of a CFQ question from the question alone, by our parser of CFQ's question grammar (module
    docstring); :class:`StructureError` (one line) for a question outside that grammar."""
    from .cfq_question import question_structure as parsed

    _tokens(question)
    return parsed(question)


ENTITY_WORD = "[ENTITY]"  # the rule word that an anonymised entity M0 … M9 fills
ENUMERATIONS = ("ENUMERATION", "COMPLETED_AND")


@dataclass
class _Constituent:
    label: str
    children: list  # word indices (int) and constituents, in order


def _rule_parts(node: Any) -> tuple[str, str, list]:
    """(left-hand side, right-hand side, children) of a rule-tree node ``["LHS=RHS", child, …]``."""
    if not isinstance(node, list) or not node or not isinstance(node[0], str) or "=" not in node[0]:
        raise StructureError(f"a rule-tree node is [\"LHS=RHS\", child, ...], not {str(node)[:60]!r}")
    lhs, _, rhs = node[0].partition("=")
    return lhs, rhs, node[1:]


def _names_at(rhs: str, pos: int, symbol: str) -> bool:
    """Whether the right-hand side names ``symbol`` at ``pos`` (symbols are joined by ``_``)."""
    end = pos + len(symbol)
    return rhs.startswith(symbol, pos) and (end == len(rhs) or rhs[end] == "_")


def _shaped(label: str, items: list) -> int | _Constituent:
    """A constituent after the method's two simplifications: enumerations keep their first and last part
    (the parts of a nested enumeration move up), and a constituent with one child is that child."""
    if label in ENUMERATIONS and len(items) >= 2:
        first, last = items[0], items[-1]
        nested = isinstance(first, _Constituent) and first.label == "ENUMERATION"
        items = [*(first.children if nested else [first]), last]
    if len(items) == 1:
        return items[0]
    return _Constituent(label, items)


class _Derivation:
    """A rule tree read against the question's tokens, left to right."""

    def __init__(self, tokens: list[str]):
        self.tokens = tokens
        self.next = 0

    def _take(self, expected: str, rule: str) -> int:
        if self.next >= len(self.tokens):
            raise StructureError(f"rule {rule!r} wants {expected!r} after the question's last token")
        token = self.tokens[self.next]
        fits = ENTITY.fullmatch(token) if expected == ENTITY_WORD else token.lower() == expected.lower()
        if not fits:
            raise StructureError(f"rule {rule!r} wants {expected!r} at token {self.next}, the question has {token!r}")
        self.next += 1
        return self.next - 1

    def words(self, symbol: str, rule: str) -> list[int]:
        """The tokens of a terminal symbol; each word attaches by its first token (module docstring)."""
        from ..benchmarks.cfq import preprocess_question

        attached = []
        for word in symbol.split():
            pieces = [word] if word == ENTITY_WORD else preprocess_question(word).split()
            taken = [self._take(piece, rule) for piece in pieces]
            attached.append(taken[0])
        return attached

    def constituent(self, node: Any) -> int | _Constituent:
        lhs, rhs, children = _rule_parts(node)
        rule, items, pos = node[0], [], 0
        pending = list(children)
        while pos < len(rhs):
            child_lhs = _rule_parts(pending[0])[0] if pending else None
            if child_lhs is not None and _names_at(rhs, pos, child_lhs):
                items.append(self.constituent(pending.pop(0)))
                pos += len(child_lhs) + 1
            else:
                end = rhs.find("_", pos)
                end = len(rhs) if end < 0 else end
                items.extend(self.words(rhs[pos:end], rule))
                pos = end + 1
        if pending:
            raise StructureError(f"rule {rule!r} does not name its child {pending[0][0]!r}")
        return _shaped(lhs, items)


def _as_structure(tokens: list[str], root: int | _Constituent) -> Structure:
    labels: list[str] = []
    heads: list[int | None] = [OUTSIDE] * len(tokens)

    def place(item: int | _Constituent, parent: int) -> None:
        if isinstance(item, int):
            heads[item] = parent
            return
        index = len(tokens) + len(labels)
        labels.append(item.label)
        heads.append(parent)
        for child in item.children:
            place(child, index)

    place(root, ROOT)
    return Structure(tuple(tokens) + tuple(labels), tuple(heads), len(tokens))


def question_tree(question: str, rule_tree: str | list) -> Structure:
    """The question tree of a CFQ question from its grammar-rule derivation (module docstring): the question's
    tokens, then one structure token per constituent labelled by its rule's left-hand side, in pre-order.
    ``rule_tree`` is a release row's ``rule_tree`` (JSON nested lists ``["LHS=RHS", child, …]``) or the lists
    themselves. Raises :class:`StructureError` (one line) when the derivation does not spell the question."""
    tokens = _tokens(question)
    if isinstance(rule_tree, str):
        try:
            rule_tree = json.loads(rule_tree)
        except json.JSONDecodeError as err:
            raise StructureError(f"the rule tree is not JSON ({err})") from None
    derivation = _Derivation(tokens)
    root = derivation.constituent(rule_tree)
    if derivation.next != len(tokens):
        raise StructureError(f"the derivation spells {derivation.next} of the question's {len(tokens)} tokens")
    return _as_structure(tokens, root)


def cross_links(question: str, query: str, entities_only: bool = True) -> list[tuple[int, int]]:
    """(question token, query token) pairs that are the same string, in index order. By default only the
    anonymised entities ``M0`` … ``M9`` link: the only other shared string in CFQ is ``a``, the question's
    article and the query's ``rdf:type`` predicate, which mean different things (``entities_only=False``
    links every shared string)."""
    q_tokens, s_tokens = _tokens(question), _tokens(query)
    where: dict[str, list[int]] = {}
    for j, tok in enumerate(s_tokens):
        where.setdefault(tok, []).append(j)
    return [(i, j) for i, tok in enumerate(q_tokens)
            if not entities_only or ENTITY.fullmatch(tok)
            for j in where.get(tok, ())]
