"""Constituency trees of our own grammars (SCAN commands, SyGNS sentences) as :class:`Structure` values.

A grammar's parser writes a constituent as ``(label, children)``, a child being another constituent or a word
position. :func:`from_constituents` turns that into the structure-token layout of the annotation method: one
structure token per constituent, labelled by its category, appended after the words in pre-order; every word
hangs from the constituent that holds it directly. A constituent with a single child is replaced by that child
(unary chains collapse, and a one-word constituent is the word itself), so every structure token joins at least
two nodes and attention needs no idle hops.
"""

from __future__ import annotations

from .tree import OUTSIDE, ROOT, Structure, StructureError

Constituent = int | tuple[str, list]  # a word position, or (label, children)


def collapse(node: Constituent) -> Constituent:
    """The node with every single-child constituent replaced by its child."""
    if isinstance(node, int):
        return node
    label, children = node
    kept = [collapse(child) for child in children]
    if not kept:
        raise StructureError(f"constituent {label} has no children")
    return kept[0] if len(kept) == 1 else (label, kept)


def from_constituents(words: list[str] | tuple[str, ...], tree: Constituent) -> Structure:
    """The :class:`Structure` of ``words`` under ``tree`` (words the tree does not hold stay OUTSIDE)."""
    n = len(words)
    tree = collapse(tree)
    labels: list[str] = []
    heads: dict[int, int] = {}  # token index -> head index (ROOT for the root)

    def place(node: Constituent, head: int) -> None:
        if isinstance(node, int):
            if not 0 <= node < n or node in heads:
                raise StructureError(f"word position {node} is outside 0..{n - 1} or used twice")
            heads[node] = head
            return
        label, children = node
        index = n + len(labels)
        labels.append(label)
        heads[index] = head
        for child in children:
            place(child, index)

    place(tree, ROOT)
    tokens = tuple(words) + tuple(labels)
    return Structure(tokens, tuple(heads.get(i, OUTSIDE) for i in range(len(tokens))), n)
