"""One (input, candidate) pair as the structure-masked classifier reads it: the tokens
``[CLS] input-words input-structure-tokens [SEP] candidate-tokens``, their segments, and the relation label of
every token pair (``RELATIONS`` of the model's configuration), from the two sides' trees and cross-links.

A pair's relation, the first that holds: self; from / to ``[CLS]`` (its row and column: ``[CLS]`` joins the
two roots into one tree); a tree edge, parent → child or child → parent, within a side; a cross-link, input
→ candidate or candidate → input; both tokens in the input block, or both in the candidate block; none.
``[SEP]`` belongs to no tree and no block. Without structure tokens (an ablation), the input's constituent
tokens and every edge that touches one are left out.

The second half lays out one side alone for the seq2seq ``structure_transformer``: the input's words, ``</s>``
and (optionally) its structure tokens, the tree over them (by default the parse projected onto head words), and
the ``TREE_RELATIONS`` label of every encoder token pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..models.configuration_structure_encoder import RELATIONS
from .tree import ROOT, Structure, tree_free  # noqa: F401  (tree_free: re-exported for the collator's users)

R = {name: i for i, name in enumerate(RELATIONS)}


@dataclass(frozen=True)
class EncodedPair:
    tokens: tuple[str, ...]
    token_type_ids: tuple[int, ...]
    relation_ids: np.ndarray  # (length, length), int8 labels

    def __len__(self) -> int:
        return len(self.tokens)


def encode_pair(source: Structure, candidate: Structure, links=(), *, structure_tokens: bool = True,
                cls: str = "<s>", sep: str = "</s>", max_length: int = 256) -> EncodedPair:
    """The layout, segments and relation labels of one pair; tokens beyond ``max_length`` are cut (the
    candidate's end first) with their edges and links."""
    keep_source = [i for i in range(len(source.tokens)) if structure_tokens or i < source.n_words]
    position = {("s", i): 1 + k for k, i in enumerate(keep_source)}
    sep_at = 1 + len(keep_source)
    position |= {("c", j): sep_at + 1 + j for j in range(len(candidate.tokens))}
    length = min(sep_at + 1 + len(candidate.tokens), max_length)
    tokens = [cls, *(source.tokens[i] for i in keep_source), sep, *candidate.tokens][:length]
    segments = ([0] * sep_at + [1] * (1 + len(candidate.tokens)))[:length]
    rel = np.full((length, length), R["none"], dtype=np.int8)
    candidate_start = sep_at + 1
    rel[1:sep_at, 1:sep_at] = R["input_block"]
    rel[candidate_start:, candidate_start:] = R["candidate_block"]
    for i, j in links:
        a, b = position.get(("s", i)), position.get(("c", j))
        if a is not None and b is not None and a < length and b < length:
            rel[a, b], rel[b, a] = R["input_to_candidate_link"], R["candidate_to_input_link"]
    for side, structure in (("s", source), ("c", candidate)):
        for child, head in enumerate(structure.heads):
            if head is None or head == ROOT:
                continue
            a, b = position.get((side, head)), position.get((side, child))
            if a is not None and b is not None and a < length and b < length:
                rel[a, b], rel[b, a] = R["parent_to_child"], R["child_to_parent"]
    rel[0, :], rel[:, 0] = R["from_cls"], R["to_cls"]
    np.fill_diagonal(rel, R["self"])
    return EncodedPair(tuple(tokens), tuple(segments), rel)


# --------------------------------------------------------------------------------------------------
# One side for a seq2seq encoder (structure_transformer): the input's tree laid over the encoder tokens, and
# the relation label (TREE_RELATIONS) of every token pair.

OUTSIDE_HEAD = -2  # a token outside the tree, in a list of head positions (-1 is ROOT): Arrow-friendly ints


def head_word_tree(structure: Structure, markers: frozenset[str] | set[str]) -> Structure:
    """``structure``'s constituency tree projected onto its words (no structure tokens left).

    A constituent's head word is its last own word that is not a marker (a determiner, preposition,
    complementiser, auxiliary: ``markers``); without one, the head word of its last child constituent. A word
    hangs from the head word of the lowest constituent above it that is headed by another word; the head word of
    the root is the root. So content words link directly (``smiled`` → ``cat`` in *A cat in the room smiled*,
    ``cat`` → ``room``), markers hang from the content word they mark (``in`` → ``room``), and words outside the
    tree stay outside."""
    n = structure.n_words
    words = structure.tokens[:n]
    if structure.root is None:
        return Structure(words, (None,) * n, n)
    children: dict[int, list[int]] = {}
    for i, h in enumerate(structure.heads):
        if h is not None and h != ROOT:
            children.setdefault(h, []).append(i)
    heads_of: dict[int, int | None] = {}

    def head_of(node: int) -> int | None:
        if node < n:
            return node
        if node not in heads_of:
            kids = children.get(node, [])
            own = [k for k in kids if k < n]
            content = [k for k in own if words[k] not in markers]
            constituents = [k for k in kids if k >= n]
            if content:
                heads_of[node] = content[-1]
            elif constituents:
                heads_of[node] = head_of(constituents[-1])
            else:
                heads_of[node] = own[-1] if own else None
        return heads_of[node]

    projected: list[int | None] = []
    for w in range(n):
        if structure.heads[w] is None:
            projected.append(None)
            continue
        node, head = w, ROOT
        while structure.heads[node] != ROOT:
            node = structure.heads[node]
            candidate = head_of(node)
            if candidate is not None and candidate != w:
                head = candidate
                break
        projected.append(head)
    return Structure(words, tuple(projected), n)


def encoder_tree(structure: Structure, eos: str, max_length: int, structure_tokens: bool = False,
                 markers: frozenset[str] | set[str] = frozenset()) -> tuple[list[str], list[int]]:
    """The encoder tokens of one input and the head position of each (``ROOT`` -1, ``OUTSIDE_HEAD`` -2): the
    words, ``eos``, then (with ``structure_tokens``) the constituents, over the constituency tree; without
    them, over the words' ``head_word_tree``. Cut at ``max_length`` as the tokenizer cuts (the words first,
    keeping ``eos``); a token whose head was cut becomes a root."""
    tree = structure if structure_tokens else head_word_tree(structure, markers)
    n = tree.n_words
    words = list(range(min(n, max_length - 1)))
    extra = list(range(n, len(tree.tokens)))[:max(0, max_length - len(words) - 1)]
    order = [*words, None, *extra]  # None: the eos position
    position = {old: new for new, old in enumerate(order) if old is not None}
    tokens, heads = [], []
    for old in order:
        if old is None:
            tokens.append(eos)
            heads.append(OUTSIDE_HEAD)
            continue
        tokens.append(tree.tokens[old])
        h = tree.heads[old]
        heads.append(OUTSIDE_HEAD if h is None else ROOT if h == ROOT else position.get(h, ROOT))
    return tokens, heads


def tree_relations(heads) -> np.ndarray:
    """The ``TREE_RELATIONS`` label of every pair (row i, column j) of tokens with these head positions
    (``ROOT`` / negative / None: no head); ``(n, n)`` int8."""
    from ..models.configuration_structure_transformer import TREE_RELATIONS

    t = {name: i for i, name in enumerate(TREE_RELATIONS)}
    n = len(heads)
    parent = [h if h is not None and 0 <= h < n else -1 for h in heads]
    rel = np.full((n, n), t["none"], dtype=np.int8)
    by_parent: dict[int, list[int]] = {}
    for child, p in enumerate(parent):
        if p < 0:
            continue
        by_parent.setdefault(p, []).append(child)
        ancestor, steps = parent[p], 0
        while ancestor >= 0 and steps < n:  # steps: a guard against a cycle in hand-made heads
            rel[ancestor, child], rel[child, ancestor] = t["ancestor_to_descendant"], t["descendant_to_ancestor"]
            ancestor, steps = parent[ancestor], steps + 1
    for p, kids in by_parent.items():
        rel[np.ix_(kids, kids)] = t["sibling"]
        rel[p, kids], rel[kids, p] = t["parent_to_child"], t["child_to_parent"]
    np.fill_diagonal(rel, t["self"])
    return rel
