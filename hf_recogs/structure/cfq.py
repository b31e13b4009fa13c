"""Structure annotations for CFQ (question → SPARQL): the query tree, the question's tokens, and cross-links.

The query tree is dependency-like, as in the structure-annotation method (Kim et al. 2021): the first header
token (``SELECT``) is the root and the other header tokens (``DISTINCT``, ``?x0``, ``count``, ``*``, ``WHERE``)
are its children; ``WHERE`` has one child per clause; a triple ``s p o`` is the node ``p`` over ``s`` and
``o``; a filter ``FILTER ( a != b )`` is the node ``!=`` over ``a`` and ``b``. Braces, dots, parentheses and
the ``FILTER`` keyword (its clause is the ``!=`` node) are outside the tree. Every occurrence of a variable or
entity is a node of its own; repeated occurrences are not joined.

The question side has no tree: CFQ's MCD1 copy carries no rule derivations and we have no CFQ question grammar,
so :func:`question_structure` gives the question's tokens with every token outside the tree. A classifier
that reads it uses the variants of the method that need no question tree (query tree, cross-links, question
block).
"""

from __future__ import annotations

import re

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
    """The question's tokens and no tree (every head OUTSIDE): MCD1 has no question derivations (module
    docstring)."""
    tokens = tuple(_tokens(question))
    return Structure(tokens, (OUTSIDE,) * len(tokens), len(tokens))


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
