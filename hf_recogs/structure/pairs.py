"""One (input, candidate) pair as the structure-masked classifier reads it: the tokens
``[CLS] input-words input-structure-tokens [SEP] candidate-tokens``, their segments, and the relation label of
every token pair (``RELATIONS`` of the model's configuration), from the two sides' trees and cross-links.

A pair's relation, the first that holds: self; from / to ``[CLS]`` (its row and column: ``[CLS]`` joins the
two roots into one tree); a tree edge, parent → child or child → parent, within a side; a cross-link, input
→ candidate or candidate → input; both tokens in the input block, or both in the candidate block; none.
``[SEP]`` belongs to no tree and no block. Without structure tokens (an ablation), the input's constituent
tokens and every edge that touches one are left out.
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
