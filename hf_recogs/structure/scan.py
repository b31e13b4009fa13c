"""Structure annotations for SCAN commands: the constituency tree of our SCAN grammar.

The grammar is the one ``hf_recogs.benchmarks.scan`` generates SCAN from (docs/DATASETS.md §4.2):
C → S | S and S | S after S; S → V | V twice | V thrice; V → a verb, or a verb or ``turn`` followed by a
direction, ``opposite`` + direction or ``around`` + direction. A command is first checked with that module's
``interpret`` (so exactly its commands get a tree); its constituents become structure tokens labelled ``C``,
``S``, ``V``. The conjunctions and ``twice``/``thrice``/``opposite``/``around`` are nodes (they carry meaning
in SCAN, unlike CFQ's enumeration commas). Single-child constituents collapse
(``hf_recogs.structure.constituency``): ``jump`` alone is one word node, ``jump twice`` is ``S`` over ``jump``
and ``twice``, ``walk left after run`` is ``C`` over ``V(walk left)``, ``after``, ``run``.
"""

from __future__ import annotations

from ..benchmarks.scan import interpret
from .constituency import Constituent, from_constituents
from .tree import Structure, StructureError

CONJUNCTIONS = ("and", "after")
REPEATS = ("twice", "thrice")


def _sentence(words: list[str], lo: int, hi: int) -> Constituent:
    """S over words[lo:hi]: a verb phrase, optionally followed by twice/thrice."""
    if words[hi - 1] in REPEATS:
        return ("S", [("V", list(range(lo, hi - 1))), hi - 1])
    return ("V", list(range(lo, hi)))


def command_tree(command: str) -> Constituent:
    """The constituents of a SCAN command before collapsing, as ``(label, children)`` with word positions."""
    if not isinstance(command, str):
        raise StructureError(f"expected a SCAN command string, got {type(command).__name__}")
    try:
        interpret(command)
    except (ValueError, KeyError) as err:
        raise StructureError(f"not a SCAN command: {command!r} ({err})") from None
    words = command.split(" ")
    for conj in CONJUNCTIONS:
        if conj in words:
            i = words.index(conj)
            return ("C", [_sentence(words, 0, i), i, _sentence(words, i + 1, len(words))])
    return _sentence(words, 0, len(words))


def command_structure(command: str) -> Structure:
    """The tree of a SCAN command; :class:`StructureError` for a string that is not one."""
    return from_constituents(command.split(" "), command_tree(command))
