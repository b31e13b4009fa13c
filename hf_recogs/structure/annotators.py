"""The pair annotators the classification configs declare (``DatasetConfig.structure``): (input, candidate)
→ (input tree, candidate tree, cross-links), never failing on a row. A side the annotator cannot parse (a wrong
candidate, a sentence outside the grammar) keeps its tokens with no tree, as the classifier must still read it.
"""

from __future__ import annotations

from .tree import Structure, StructureError, tree_free


def _or_tokens(parse, text: str) -> Structure:
    try:
        tree = parse(text)
    except StructureError:
        return tree_free(text)
    return tree if tree is not None else tree_free(text)


def recogs_pos_pair(sentence: str, lf: str) -> tuple[Structure, Structure, list]:
    """Our COGS sentence parse, the LF's tree and the links (ReCOGS_pos indices are positions)."""
    from .cogs import cross_links, default_lexicon, lf_structure, parse_sentence

    lexicon = default_lexicon()
    source = _or_tokens(lambda text: parse_sentence(text, lexicon).structure, sentence)
    return source, _or_tokens(lf_structure, lf), cross_links(sentence, lf, lexicon=lexicon)


def cfq_pair(question: str, query: str) -> tuple[Structure, Structure, list]:
    """Our parse of the question (MCD1 carries no rule trees), the query's tree and the entity links."""
    from .cfq import cross_links, query_structure, question_structure

    return _or_tokens(question_structure, question), _or_tokens(query_structure, query), cross_links(question, query)


def sygns_pair(sentence: str, formula: str) -> tuple[Structure, Structure, list]:
    """Our SyGNS grammar's parse of the sentence, the FOL formula's tree over its whitespace tokens and the
    links of content words by lemma."""
    from .sygns import cross_links, fol_structure, sentence_structure

    return _or_tokens(sentence_structure, sentence), _or_tokens(fol_structure, formula), cross_links(sentence, formula)
