"""Structure annotations: trees over inputs and candidate outputs, and the cross-links between them (the
structure-annotation method of Kim, Ravikumar, Ainslie & Ontañón 2021 on our benchmarks).

Every annotator returns a :class:`Structure` (or raises :class:`StructureError` / returns None for a candidate
that does not parse, as its docstring says): COGS / ReCOGS sentences and logical forms (``cogs_*``), CFQ
questions (our parser of CFQ's question grammar, or a release row's rule tree) and SPARQL queries (``cfq_*``),
SCAN commands, SyGNS sentences, variable-free forms and FOL formulas. The links are pairs (input token index,
output token index)."""

from .cfq import cross_links as cfq_cross_links
from .cfq import query_structure as cfq_query_structure
from .cfq import question_structure as cfq_question_structure
from .cfq import question_tree as cfq_question_tree
from .cogs import CogsAnnotation, CogsLexicon, CogsParse
from .cogs import annotate as cogs_annotate
from .cogs import cross_links as cogs_cross_links
from .cogs import default_lexicon as cogs_default_lexicon
from .cogs import gold_relations as cogs_gold_relations
from .cogs import learn_lexicon as cogs_learn_lexicon
from .cogs import lf_structure as cogs_lf_structure
from .cogs import parse_sentence as cogs_parse_sentence
from .cogs import word_class as cogs_word_class
from .cogs import word_functions as cogs_word_functions
from .scan import command_structure as scan_command_structure
from .sygns import cross_links as sygns_cross_links
from .sygns import fol_structure as sygns_fol_structure
from .sygns import sentence_structure as sygns_sentence_structure
from .sygns import vf_structure as sygns_vf_structure
from .tree import OUTSIDE, ROOT, Structure, StructureError

__all__ = [
    "OUTSIDE", "ROOT", "Structure", "StructureError",
    "CogsAnnotation", "CogsLexicon", "CogsParse", "cogs_annotate", "cogs_cross_links", "cogs_default_lexicon",
    "cogs_gold_relations", "cogs_learn_lexicon", "cogs_lf_structure", "cogs_parse_sentence", "cogs_word_class",
    "cogs_word_functions",
    "cfq_cross_links", "cfq_query_structure", "cfq_question_structure", "cfq_question_tree",
    "scan_command_structure",
    "sygns_cross_links", "sygns_fol_structure", "sygns_sentence_structure", "sygns_vf_structure",
]
