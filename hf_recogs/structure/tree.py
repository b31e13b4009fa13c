"""The one shape every structure annotation takes: the tokens of one side and a tree over them.

A :class:`Structure` holds the side's surface tokens (the whitespace tokens of its text, in order), then any
*structure tokens* (one per constituent, labelled by its category, e.g. ``NP``), and the head of every token:
the index of its parent, ``ROOT`` (-1) for the one root, or ``OUTSIDE`` (None) for a token that is not a node
of the tree (punctuation, ``AND``, braces). Cross-links between an input and a candidate output are pairs of
token indices (input, output).
"""

from __future__ import annotations

from dataclasses import dataclass

ROOT = -1
OUTSIDE = None


class StructureError(ValueError):
    """A text that the annotator cannot give a tree (the message says why, in one line)."""


@dataclass(frozen=True)
class Structure:
    tokens: tuple[str, ...]
    heads: tuple[int | None, ...]
    n_words: int  # tokens[:n_words] are the text's own tokens, tokens[n_words:] structure tokens

    def __post_init__(self):
        if len(self.tokens) != len(self.heads):
            raise ValueError(f"{len(self.tokens)} tokens but {len(self.heads)} heads")
        if not 0 <= self.n_words <= len(self.tokens):
            raise ValueError(f"n_words={self.n_words} outside 0..{len(self.tokens)}")
        self.check()

    @property
    def root(self) -> int | None:
        roots = [i for i, h in enumerate(self.heads) if h == ROOT]
        return roots[0] if roots else None

    def edges(self) -> list[tuple[int, int]]:
        """(parent, child) for every tree edge."""
        return [(h, i) for i, h in enumerate(self.heads) if h is not None and h != ROOT]

    def children(self, node: int) -> list[int]:
        return [i for i, h in enumerate(self.heads) if h == node]

    def check(self) -> None:
        """One root, every head a node of the tree, no cycle; raises ValueError otherwise."""
        nodes = [i for i, h in enumerate(self.heads) if h is not None]
        if not nodes:
            return
        roots = [i for i in nodes if self.heads[i] == ROOT]
        if len(roots) != 1:
            raise ValueError(f"a tree has one root, this one has {len(roots)}")
        for i in nodes:
            seen, node = set(), i
            while self.heads[node] != ROOT:
                parent = self.heads[node]
                if not 0 <= parent < len(self.tokens) or self.heads[parent] is None:
                    raise ValueError(f"token {i} ({self.tokens[i]!r}) hangs from {parent}, which is not a node")
                if node in seen:
                    raise ValueError(f"token {i} ({self.tokens[i]!r}) is on a cycle")
                seen.add(node)
                node = parent

    def draw(self) -> str:
        """The tree as indented text, one node a line (for docs and error messages)."""
        lines: list[str] = []

        def walk(node: int, depth: int) -> None:
            lines.append("  " * depth + self.tokens[node])
            for child in self.children(node):
                walk(child, depth + 1)

        if self.root is not None:
            walk(self.root, 0)
        outside = [t for t, h in zip(self.tokens, self.heads, strict=True) if h is None]
        if outside:
            lines.append("(outside the tree: " + " ".join(outside) + ")")
        return "\n".join(lines)


def tree_free(text: str) -> Structure:
    """A side's tokens with no tree: a candidate that does not parse, or a question without a grammar."""
    tokens = tuple(text.split())
    return Structure(tokens, (None,) * len(tokens), len(tokens))
