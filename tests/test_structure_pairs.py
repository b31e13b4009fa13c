"""encode_pair: the classifier's layout of an (input, candidate) pair and the relation label of every token
pair, checked on a pair small enough to write every label by hand."""

from __future__ import annotations

import numpy as np

from hf_recogs.structure import Structure
from hf_recogs.structure.pairs import encode_pair, tree_free

# input: "cat ran" with a structure token S over both words; candidate: "ran ( cat )" with ran over cat and the
# brackets outside; one cross-link cat ↔ cat
SOURCE = Structure(("cat", "ran", "S"), (2, 2, -1), 2)
CANDIDATE = Structure(("ran", "(", "cat", ")"), (-1, None, 0, None), 4)
LINKS = [(0, 2)]


def test_layout_segments_and_every_relation_label():
    pair = encode_pair(SOURCE, CANDIDATE, LINKS)
    assert pair.tokens == ("<s>", "cat", "ran", "S", "</s>", "ran", "(", "cat", ")")
    assert pair.token_type_ids == (0, 0, 0, 0, 1, 1, 1, 1, 1)
    # 0 none, 1 self, 2 from CLS, 3 to CLS, 4 parent→child, 5 child→parent, 6 input block, 7 candidate block,
    # 8 input→candidate link, 9 candidate→input link (row = the attending token, column = the attended one)
    expected = np.array([
        #  CLS cat ran  S  SEP ran  (  cat  )
        [1, 2, 2, 2, 2, 2, 2, 2, 2],   # CLS
        [3, 1, 6, 5, 0, 0, 0, 8, 0],   # cat (input): its parent S, its link to the candidate's cat
        [3, 6, 1, 5, 0, 0, 0, 0, 0],   # ran (input)
        [3, 4, 4, 1, 0, 0, 0, 0, 0],   # S
        [3, 0, 0, 0, 1, 0, 0, 0, 0],   # SEP: no tree, no block
        [3, 0, 0, 0, 0, 1, 7, 4, 7],   # ran (candidate) over cat
        [3, 0, 0, 0, 0, 7, 1, 7, 7],   # (
        [3, 9, 0, 0, 0, 5, 7, 1, 7],   # cat (candidate): the tree edge wins over the block, the link is kept
        [3, 0, 0, 0, 0, 7, 7, 7, 1],   # )
    ])
    assert (pair.relation_ids == expected).all()


def test_without_structure_tokens_the_constituents_and_their_edges_go():
    pair = encode_pair(SOURCE, CANDIDATE, LINKS, structure_tokens=False)
    assert pair.tokens == ("<s>", "cat", "ran", "</s>", "ran", "(", "cat", ")")
    assert pair.relation_ids[1, 2] == 6 and pair.relation_ids[1, 6] == 8  # block and link stay


def test_a_long_pair_is_cut_with_its_edges_and_a_tree_free_candidate_has_blocks_only():
    pair = encode_pair(SOURCE, CANDIDATE, LINKS, max_length=7)
    assert pair.tokens == ("<s>", "cat", "ran", "S", "</s>", "ran", "(") and pair.relation_ids.shape == (7, 7)
    assert len(pair.token_type_ids) == 7
    plain = encode_pair(SOURCE, tree_free("ran ( cat )"))
    candidate = plain.relation_ids[5:, 5:]
    assert set(np.unique(candidate)) == {1, 7}
