"""Logical forms of the COGS family: tokenise, parse, and compare them by Semantic Exact Match (SEM).

Why a parser and not regexes: the upstream ReCOGS checker counts predicates with regexes, which makes it
blind to COGS-format variables (``x _ 1``), to proper-name constants and to argument positions, and it
enumerates candidate maps blindly (docs/SEM.md §2). Here an LF is parsed into atoms once, and SEM is decided
as labelled-hypergraph isomorphism with colour refinement, so the verdict is exact *and* fast.

Public API (all total on strings: malformed input never raises, it is a :class:`ParseFailure`):

- :func:`tokenize`, :func:`normalize` — spacing-insensitive tokens (``agent(1,0)`` ≡ ``agent ( 1 , 0 )``,
  ``x_1`` ≡ ``x _ 1``);
- :func:`parse` — a :class:`LogicalForm` or a :class:`ParseFailure` (with a ``reason`` code);
  :func:`parse_or_raise` raises :class:`LogicalFormError` instead;
- :func:`sem_match` — SEM verdict (docs/SEM.md §1): true iff a bijection of variables makes the two
  multisets of atoms equal; False also for a pair left *undecided* (below);
- :func:`sem_verdict` — the same, tri-state: True, False, or None when the search for a bijection ran out of
  its budget of work units (``budget``; docs/SEM.md §4.8). Only artificial inputs built to defeat colour
  refinement (CFI graphs, Latin-square graphs) get there; no COGS/ReCOGS/SLOG pair comes near the default;
- :func:`diagnose` — the verdict plus a reason code and missing/extra atoms, for error analysis;
- :func:`exact_match` — whitespace-normalised string equality (COGS's official metric);
- :func:`depth_first_order`, :func:`nmod_last_order` — a ReCOGS form with its conjuncts reordered, the same
  meaning for SEM (training targets, ``target_order``).

Formats (``fmt`` argument):

- ``"auto"`` (default): decided per string. Variables are ``x _ N`` if the LF contains a ``_`` token
  (COGS, SLOG), else bare integers (ReCOGS, token-removal variants). Atoms are written ``label ( a , b )``
  if the LF contains a parenthesis, else in token-removal style ``label a b`` / ``label a , b``.
- ``"cogs"``: ``x _ N`` variables, parenthesised atoms; a bare integer argument is malformed.
- ``"recogs"``: integer variables, parenthesised atoms (also fits COGS ``remove_x_``); ``x _ N`` is malformed.
- ``"token_removal"``: integer variables, atoms without parentheses (``hope . agent 1 Liam``, ``rose 1``).

In every format: conjuncts are separated by ``;`` or ``AND`` (upper case only); a label is a dotted chain with
an optional leading ``*`` that is part of it (``*cake``, ``cake.nmod.in``); constants are capitalised names
and SLOG's ``?``; lambda primitives ``LAMBDA a . LAMBDA e . …`` bind their letters, which are compared by
binder position (first binder ↔ first binder), and the matrix as a multiset; a lone proper name (``Paula``)
is a primitive that equals only itself. Two LFs whose free variables are of different kinds (``x _ N`` vs
integers) never match: mixed formats are not converted (docs/SEM.md §3.6).

Non-string inputs: :func:`sem_match` and :func:`exact_match` return False, :func:`diagnose` reports
``"not_a_string"`` (a model output of None is a wrong answer, not a crash); the ``sem_match`` evaluate
metric rejects them with a ValueError at its boundary instead, where they signal a caller bug.

The module reads top to bottom in seven sections: 1. public data types; 2. tokens; 3. parsing (one grammar,
``_compile``, and a regex accelerator for its common case, checked against it by the tests); 4. colour
refinement, hashed (one form, cacheable) and exact (a pair in lockstep); 5. matching (cheap counts, then the
colourings, then a budgeted search, and the optional C accelerator ``_sem_native.c``, also checked against
this code); 6. diagnosis; 7. rewriting (one meaning, another conjunct order).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = [
    "DEFAULT_SEARCH_BUDGET",
    "FORMATS",
    "Atom",
    "Constant",
    "Diagnosis",
    "LogicalForm",
    "LogicalFormError",
    "ParseFailure",
    "Variable",
    "clear_cache",
    "depth_first_order",
    "diagnose",
    "exact_match",
    "nmod_last_order",
    "normalize",
    "parse",
    "parse_or_raise",
    "sem_match",
    "sem_verdict",
    "tokenize",
]

FORMATS = ("auto", "cogs", "recogs", "token_removal")

# ``AND`` glued to a closing parenthesis is a separator, so that even ``cat(1)ANDrun(2)`` (every space
# deleted, which the reference checker also accepts) tokenises like ``cat ( 1 ) AND run ( 2 )``.
# One rule: "AND" right after ")" is the separator whether or not a space comes between ("sleep(3)ANDagent",
# "sleep ( 3 ) ANDagent" and "sleep ( 3 ) AND agent" are the same tokens); anywhere else AND must stand alone.
_TOKEN_RE = re.compile(r"[(),.;*_]|(?<=\))\s*AND|[^\s(),.;*_]+")
_PUNCT = frozenset("(),.;*_")
_RESERVED = frozenset({"AND", "LAMBDA"})
_SEPARATORS = frozenset({";", "AND"})
_CACHE_SIZE = 1 << 15
# Work units (variables and atoms visited by the search) one pair may spend before it is undecided; docs/SEM.md
# §4.8. Measured: 2.4-3.1 million units/s on one core of the shared 2-core machine, so 3.5-4 s; refinement,
# which is not charged, decides every COGS/ReCOGS/SLOG pair measured, so they spend no units at all.
DEFAULT_SEARCH_BUDGET = 10_000_000


# --------------------------------------------------------------------------------------------------
# 1. Public data types


@dataclass(frozen=True)
class Variable:
    """A variable. ``name`` is as written (``"x_1"``, ``"17"``; ``"01"`` ≠ ``"1"``, harmless under renaming).
    ``bound`` is the binder position for a lambda-bound letter, which SEM matches by position only."""

    name: str
    bound: int | None = None


@dataclass(frozen=True)
class Constant:
    """A constant argument: a capitalised proper name (COGS ``Emma``) or SLOG's ``?``."""

    name: str


@dataclass(frozen=True)
class Atom:
    """One conjunct: ``label`` (``"*cake"``, ``"eat.agent"``, ``"nmod.in"``) applied to one or two arguments."""

    label: str
    args: tuple[Variable | Constant, ...]

    def __str__(self) -> str:
        return f"{self.label}({', '.join(a.name for a in self.args)})"


@dataclass(frozen=True)
class LogicalForm:
    """A parsed LF. ``fmt`` is the format it was read as (``cogs``/``recogs``/``token_removal``);
    ``binders`` the lambda prefix letters in order; ``term`` a lone proper-name primitive (then no atoms)."""

    atoms: tuple[Atom, ...]
    fmt: str
    binders: tuple[str, ...] = ()
    term: str | None = None

    @property
    def variables(self) -> tuple[Variable, ...]:
        """Free variables in order of first appearance."""
        seen: dict[Variable, None] = {}
        for atom in self.atoms:
            for arg in atom.args:
                if isinstance(arg, Variable) and arg.bound is None:
                    seen.setdefault(arg)
        return tuple(seen)

    def __bool__(self) -> bool:
        return True


@dataclass(frozen=True)
class ParseFailure:
    """Why a string is not a well-formed LF. Falsy, so ``if parse(s):`` reads naturally.

    ``reason`` is one of: ``not_a_string``, ``empty``, ``empty_conjunct``, ``bad_lambda``, ``bad_label``,
    ``missing_parenthesis``, ``unbalanced_parens``, ``stray_token``, ``arity``, ``bad_argument``,
    ``internal_error`` (a parser bug; never expected)."""

    reason: str
    detail: str = ""
    conjunct: int | None = None

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        where = f" (conjunct {self.conjunct})" if self.conjunct is not None else ""
        return f"{self.reason}{where}: {self.detail}" if self.detail else f"{self.reason}{where}"


class LogicalFormError(ValueError):
    """Raised by :func:`parse_or_raise`; carries the :class:`ParseFailure` and its reason code."""

    def __init__(self, failure: ParseFailure):
        super().__init__(f"malformed logical form: {failure}")
        self.failure = failure
        self.reason = failure.reason


@dataclass
class Diagnosis:
    """The SEM verdict with the reason, for error analysis.

    ``reason`` is one of ``match``, ``exact_string`` (identical token strings; a match), ``not_a_string``,
    ``parse_error_reference``, ``parse_error_prediction``, ``format_mismatch`` (variables of different kinds),
    ``lambda_prefix`` (different number of binders, or a different bare primitive), ``conjunct_count``,
    ``variable_count``, ``atom_shapes`` (labels/constants differ with variables blanked), or
    ``no_consistent_mapping`` (same shapes, but no bijection of variables works), or ``undecided`` (the
    search for a bijection ran out of its budget; ``match`` is then False, as in :func:`sem_match`).
    ``missing``/``extra`` list atoms of the reference absent from the prediction and vice versa, with the
    prediction's variables renamed by a best-effort map (unmapped ones keep their name with a ``'``).
    """

    match: bool
    reason: str
    detail: str = ""
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    mapping: dict[str, str] | None = field(default=None)


# --------------------------------------------------------------------------------------------------
# 2. Tokens


def tokenize(text: str) -> list[str]:
    """Split on whitespace and split off ``( ) , . ; * _`` (and ``AND`` right after ``)``, spaces between or
    not) so that spacing never matters."""
    return [tok.lstrip() for tok in _TOKEN_RE.findall(text)]


def normalize(text: str) -> str:
    """The token string joined by single spaces: ``agent(1,0)`` → ``agent ( 1 , 0 )``."""
    return " ".join(tokenize(text))


def exact_match(prediction, reference) -> bool:
    """String EM: equality after collapsing whitespace (COGS's and SCAN's official metric). Not
    tokenisation-insensitive on purpose (``x_1`` ≠ ``x _ 1``), as the official metric is not."""
    if not isinstance(prediction, str) or not isinstance(reference, str):
        return False
    return prediction.split() == reference.split()


# --------------------------------------------------------------------------------------------------
# 3. Parsing: one grammar (_compile), one accelerator for its common case (_compile_fast)


class _Form:
    """An LF as SEM sees it. Variables are ids 0..n-1 in order of first appearance; constants, and lambda
    binders written ``$i`` (by position), are strings.

    Set by the parser, never changed afterwards (all tuples):

    - ``key``: the normalised token string; ``requested_fmt``: the ``fmt`` it was parsed with; ``fmt``: the
      format it was read as; ``style``: ``"x"`` (``x _ N`` variables), ``"int"``, or ``""`` for a lone term;
    - ``binders``, ``term``, ``var_names``; ``failure``: a :class:`ParseFailure`, or None if it parsed;
    - ``atoms``: ``(shape, var ids)`` per conjunct, where ``shape`` is the label with the constants filled in and
      the variable slots blanked (``eat.agent(_,Emma)``); SEM compares shapes plus the variable structure;
    - ``edges``: ``(a, b, key of slot 0, key of slot 1)`` per atom over two variables, with key = hash(shape)
      for slot 0 (or a lone variable) and its bitwise complement for slot 1; ``initial_colours``: per variable,
      the sum of the keys of its slots (a multiset hash). Both parsers compute these while parsing.

    Computed on first use and kept: :attr:`colours` with :attr:`canon`, and :attr:`shape_counts`.
    :attr:`labels` is read back from the atoms when asked for (only :func:`parse` and :func:`diagnose` do)."""

    __slots__ = ("key", "requested_fmt", "fmt", "style", "binders", "term", "var_names", "atoms",  # noqa: RUF023
                 "edges", "initial_colours", "failure", "_stable", "_shape_counts")  # docstring order

    def __init__(self, key: str, requested_fmt: str):
        self.key = key
        self.requested_fmt = requested_fmt
        self.fmt = ""
        self.style = ""
        self.binders: tuple[str, ...] = ()
        self.term: str | None = None
        self.var_names: tuple[str, ...] = ()
        self.atoms: tuple[tuple[str, tuple[int, ...]], ...] = ()
        self.edges: tuple[tuple[int, int, int, int], ...] = ()
        self.initial_colours: tuple[int, ...] = ()
        self.failure: ParseFailure | None = None
        self._stable: tuple[tuple[int, ...], Counter] | None = None
        self._shape_counts: Counter | None = None

    @property
    def labels(self) -> tuple[tuple[str, tuple], ...]:
        """(label, args) per atom, variables as ids, constants and ``$i`` binders as strings. A shape keeps
        everything but the variables, which fill its ``_`` slots in order (no label or constant has a ``_``)."""
        out = []
        for shape, vs in self.atoms:
            label, inside = shape[:-1].split("(", 1)
            if inside == "_" or inside == "_,_":  # the common case: variables only
                out.append((label, vs))
            else:
                ids = iter(vs)
                out.append((label, tuple([next(ids) if a == "_" else a for a in inside.split(",")])))
        return tuple(out)

    @property
    def colours(self) -> tuple[int, ...]:
        """The stable hashed colouring of this form alone (section 4)."""
        if self._stable is None:
            colours = tuple(_hashed_refinement(self.edges, self.initial_colours)[-1])
            self._stable = colours, _canon(self.atoms, colours)
        return self._stable[0]

    @property
    def canon(self) -> Counter:
        """The atom multiset with every variable replaced by its stable colour."""
        if self._stable is None:
            self.colours  # noqa: B018 - computes both
        return self._stable[1]

    @property
    def shape_counts(self) -> Counter:
        if self._shape_counts is None:
            self._shape_counts = Counter(shape for shape, _ in self.atoms)
        return self._shape_counts


class _Fail(Exception):
    def __init__(self, reason: str, detail: str = "", conjunct: int | None = None):
        self.failure = ParseFailure(reason, detail, conjunct)


def _is_word(tok: str) -> bool:
    return tok not in _PUNCT and tok not in _RESERVED and tok != "?" and not tok.isdigit()


def _is_constant(tok: str) -> bool:
    return tok == "?" or (tok[:1].isupper() and tok.isalpha() and tok not in _RESERVED)


def _is_binder(tok: str) -> bool:
    return tok.isalpha() and tok.islower()


def _compile(tokens: list[str], fmt: str) -> _Form:
    """The grammar of every notation: the reference reader, which also explains failures (raises _Fail)."""
    form = _Form(" ".join(tokens), fmt)
    if not tokens:
        raise _Fail("empty", "no tokens")
    binders, body = _read_lambda_prefix(tokens)
    if not binders and len(body) > 1 and body[0] == ";":
        # An empty definite prefix: ReCOGS cogs_concat train writes 127 gold LFs as " ; body".
        body = body[1:]
    form.binders = tuple(binders)
    if not body:
        raise _Fail("bad_lambda", "lambda prefix without a body")
    if not binders and len(body) == 1 and body[0] != "?" and _is_constant(body[0]):
        form.term, form.fmt = body[0], ("recogs" if fmt == "auto" else fmt)
        return form
    paren = "(" in body or ")" in body
    if fmt == "auto":
        form.style = "x" if "_" in body else "int"
        form.fmt = "cogs" if form.style == "x" else ("recogs" if paren else "token_removal")
    else:
        form.style = "x" if fmt == "cogs" else "int"
        form.fmt = fmt
        if paren != (fmt != "token_removal"):
            raise _Fail("missing_parenthesis" if not paren else "stray_token",
                        f"fmt={fmt!r} {'needs' if not paren else 'forbids'} parenthesised atoms")
    names: dict[str, int] = {}
    atoms = []
    conjunct: list[str] = []
    for tok in body + [";"]:
        if tok not in _SEPARATORS:
            conjunct.append(tok)
            continue
        if not conjunct:
            raise _Fail("empty_conjunct", "two separators in a row, or one at an end", len(atoms))
        label, args = _read_conjunct(conjunct, paren, form.style, binders, names, len(atoms))
        shape = label + "(" + ",".join(["_" if a.__class__ is int else a for a in args]) + ")"
        atoms.append((shape, tuple([a for a in args if a.__class__ is int])))
        conjunct = []
    form.var_names, form.atoms = tuple(names), tuple(atoms)
    form.edges, form.initial_colours = _incidence(form.atoms, len(names))
    return form


def _read_lambda_prefix(tokens: list[str]) -> tuple[dict[str, int], list[str]]:
    """``LAMBDA a . LAMBDA e . body``: the binders (letter → position) and the body's tokens."""
    binders: dict[str, int] = {}
    i = 0
    while i < len(tokens) and tokens[i] == "LAMBDA":
        if i + 2 >= len(tokens) or not _is_binder(tokens[i + 1]) or tokens[i + 2] != ".":
            raise _Fail("bad_lambda", "expected 'LAMBDA <letter> .'")
        if tokens[i + 1] in binders:
            raise _Fail("bad_lambda", f"binder {tokens[i + 1]!r} bound twice")
        binders[tokens[i + 1]] = len(binders)
        i += 3
    return binders, tokens[i:]


def _read_conjunct(c: list[str], paren: bool, style: str, binders: dict[str, int], names: dict[str, int],
                   ci: int) -> tuple[str, tuple]:
    """One conjunct's tokens: its label and arguments (var ids, constant strings, ``$i`` binders).
    ``names`` maps variable names to ids and grows with new ones; ``ci`` is the conjunct's index."""
    label, j = _read_label(c, ci)
    if paren:
        if j >= len(c) or c[j] != "(":
            raise _Fail("missing_parenthesis", f"expected '(' after {label!r}", ci)
        if c.count("(") != c.count(")"):
            raise _Fail("unbalanced_parens", f"in {' '.join(c)!r}", ci)
        if c[-1] != ")" or c.count("(") != 1:
            raise _Fail("stray_token", f"in {' '.join(c)!r}", ci)
        inner = c[j + 1 : -1]
        if not inner:
            raise _Fail("arity", f"{label!r} has no arguments", ci)
        parts: list[list[str]] = [[]]
        for t in inner:
            if t == ",":
                parts.append([])
            else:
                parts[-1].append(t)
    else:  # token removal: ``label a b`` or ``label a , b``, where a variable may be ``x _ N``
        rest = c[j:]
        if "," in rest:
            k = rest.index(",")
            parts = [rest[:k], rest[k + 1 :]]
            if "," in parts[1]:
                raise _Fail("arity", f"{label!r} has 3 or more arguments", ci)
        else:
            parts, k = [], 0
            while k < len(rest):
                width = 3 if rest[k] == "x" and k + 1 < len(rest) and rest[k + 1] == "_" else 1
                parts.append(rest[k : k + width])
                k += width
    if len(parts) > 2 or not parts:
        raise _Fail("arity", f"{label!r} has {len(parts)} arguments (1 or 2 expected)", ci)
    return label, tuple([_read_argument(p, style, binders, names, ci) for p in parts])


def _read_label(c: list[str], ci: int) -> tuple[str, int]:
    """A dotted chain with an optional leading ``*`` (``* cake``, ``cake . nmod . in``) and where it ends."""
    star = c[0] == "*"
    j = 1 if star else 0
    if j >= len(c) or not _is_word(c[j]):
        raise _Fail("bad_label", f"conjunct {' '.join(c)!r} does not start with a label", ci)
    parts = [c[j]]
    j += 1
    while j + 1 < len(c) and c[j] == "." and _is_word(c[j + 1]):
        parts.append(c[j + 1])
        j += 2
    return ("*" if star else "") + ".".join(parts), j


def _read_argument(part: list[str], style: str, binders: dict[str, int], names: dict[str, int], ci: int):
    """One argument's tokens: a var id (int), a constant string, or ``$i`` for the i-th lambda binder."""
    if len(part) == 1:
        tok = part[0]
        if tok in binders:
            return f"${binders[tok]}"
        if tok.isdigit() and tok.isascii():
            if style != "int":
                raise _Fail("bad_argument", f"bare integer {tok!r} in a COGS-format LF", ci)
            return names.setdefault(tok, len(names))
        if _is_constant(tok):
            return tok
        raise _Fail("bad_argument", f"{tok!r} is neither a variable nor a constant", ci)
    if len(part) == 3 and part[0] == "x" and part[1] == "_" and part[2].isdigit() and part[2].isascii():
        if style != "x":
            raise _Fail("bad_argument", f"COGS variable x _ {part[2]} in an integer-variable LF", ci)
        return names.setdefault("x_" + part[2], len(names))
    raise _Fail("bad_argument" if part else "arity", f"cannot read argument {' '.join(part)!r}", ci)


def _incidence(atoms, n: int) -> tuple[tuple, tuple[int, ...]]:
    """``edges`` and ``initial_colours`` of a form (see :class:`_Form`)."""
    initial = [0] * n
    edges = []
    for shape, vs in atoms:
        if len(vs) == 2:
            a, b = vs
            key = hash(shape)
            initial[a] += key
            initial[b] += ~key
            edges.append((a, b, key, ~key))
        elif vs:
            initial[vs[0]] += hash(shape)
    return tuple(edges), tuple(initial)


# The accelerator, for the common well-formed parenthesised LF. The normalised string is first compacted
# (``cake . nmod . in`` → ``cake.nmod.in``, ``* cake`` → ``*cake``, ``x _ 3`` → ``x_3``), then one regex
# validates all of it and another extracts (label, arg, arg) triples, in C. It accepts a subset of what
# _compile accepts (ASCII words only) and builds the identical form (the tests compare both on mirror data and
# fuzzed strings); anything else goes through _compile.
_NOT_RESERVED = r"(?!(?:AND|LAMBDA)(?![A-Za-z0-9]))"  # AND/LAMBDA are never a word, whatever follows them
_WORD = _NOT_RESERVED + r"[A-Za-z][A-Za-z0-9]*"
_CONSTANT = r"\?|" + _NOT_RESERVED + r"[A-Z][A-Za-z]*"
_VARIABLE_START = frozenset("x0123456789")  # the regex admits only variables (x_N, digits) and constants


def _conjunct_regex(var: str, capture: bool) -> str:
    g = "(" if capture else "(?:"
    arg = f"(?:{var}|{_CONSTANT})"
    return rf"{g}\*?{_WORD}(?:\.{_WORD})*) \( {g}{arg}) (?:, {g}{arg}) )?\)"


_FAST_REGEXES = {  # style -> (the whole LF, one conjunct with its label and arguments captured)
    style: (
        re.compile(rf"{_conjunct_regex(var, False)}(?: (?:;|AND) {_conjunct_regex(var, False)})*"),
        re.compile(_conjunct_regex(var, True)),
    )
    for style, var in (("x", r"x_[0-9]+"), ("int", r"[0-9]+"))
}


def _compile_fast(tokens: list[str] | None, key: str, fmt: str) -> _Form | None:
    """The form _compile would build, or None when the input is outside the accelerated subset.

    ``tokens`` None: ``key`` is the raw input, accepted only if it is already in normalised spacing (the
    regex demands single spaces between tokens), which saves tokenising the usual model output."""
    if fmt == "token_removal" or key.startswith("LAMBDA"):
        return None
    if fmt == "auto":
        style = "x" if "_" in key else "int"
    else:
        style = "x" if fmt == "cogs" else "int"
    compact = key.replace(" . ", ".").replace("* ", "*")
    if style == "x":
        compact = compact.replace("x _ ", "x_")
        if tokens is None and "x_" in key:  # spacing is not normalised: x_1 must become x _ 1 in the key
            return None
    whole, conjunct = _FAST_REGEXES[style]
    if whole.fullmatch(compact) is None:
        return None
    found = conjunct.findall(compact)
    if len(found) != compact.count(" ; ") + compact.count(" AND ") + 1:  # pragma: no cover - guard
        return None
    if tokens is None and (key.count(".") != key.count(" . ") or key.count("*") != key.count("* ")):
        return None  # ``cake.nmod`` or ``*cake`` written compactly: not the normalised key; tokenise
    form = _Form(key, fmt)
    form.style = style
    form.fmt = "cogs" if style == "x" else "recogs"
    names: dict[str, int] = {}
    atoms = []
    # _incidence fused into the loop: one pass instead of two on the common path
    initial: list[int] = []
    edges = []
    for label, a1, a2 in found:
        v1 = a1[0] in _VARIABLE_START
        if v1:
            n = len(names)
            a1 = names.setdefault(a1, n)
            if a1 == n:
                initial.append(0)
        if not a2:
            if v1:
                shape = label + "(_)"
                atoms.append((shape, (a1,)))
                initial[a1] += hash(shape)
            else:
                atoms.append((f"{label}({a1})", ()))
            continue
        v2 = a2[0] in _VARIABLE_START
        if v2:
            n = len(names)
            a2 = names.setdefault(a2, n)
            if a2 == n:
                initial.append(0)
        if v1 and v2:
            shape = label + "(_,_)"
            atoms.append((shape, (a1, a2)))
            key = hash(shape)
            initial[a1] += key
            initial[a2] += ~key
            edges.append((a1, a2, key, ~key))
        else:
            shape = label + "(" + ("_" if v1 else a1) + "," + ("_" if v2 else a2) + ")"
            if v1:
                atoms.append((shape, (a1,)))
                initial[a1] += hash(shape)
            elif v2:
                atoms.append((shape, (a2,)))
                initial[a2] += hash(shape)
            else:
                atoms.append((shape, ()))
    form.var_names, form.atoms = tuple(names), tuple(atoms)
    form.edges, form.initial_colours = tuple(edges), tuple(initial)
    return form


def _analyse(text: str, fmt: str) -> _Form:
    """Tokenise and compile; never raises for a string (failures are recorded on the form)."""
    key = text
    try:
        form = _compile_fast(None, text, fmt)
        if form is None:
            tokens = tokenize(text)
            key = " ".join(tokens)
            form = _compile_fast(tokens, key, fmt) or _compile(tokens, fmt)
        return form
    except _Fail as fail:
        form = _Form(key, fmt)
        form.failure = fail.failure
        return form
    except Exception as err:  # noqa: BLE001 - a parser bug must not crash an evaluation
        form = _Form(" ".join(tokenize(text)), fmt)
        form.failure = ParseFailure("internal_error", repr(err))
        return form


@lru_cache(maxsize=_CACHE_SIZE)
def _analyse_reference(text: str, fmt: str) -> _Form:
    """References are scored again and again (every epoch, every model): keep their parse and colouring."""
    form = _analyse(text, fmt)
    if form.failure is None and form.var_names:
        form.colours  # noqa: B018 - fill the lazily computed colouring now, while it is being cached
    return form


def clear_cache() -> None:
    """Forget cached reference forms and remembered search results. The cache is a bounded LRU of 32,768
    entries (≈4 KB each, measured on ReCOGS gen: ≤ ≈140 MB when full); it is sized to hold the largest
    evaluation split (21,000) whole, since a cyclic scan of a split larger than an LRU would miss every time."""
    _analyse_reference.cache_clear()
    _SEARCHED.clear()


def _check_fmt(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}, not {fmt!r}")


def parse(text, fmt: str = "auto") -> LogicalForm | ParseFailure:
    """Parse an LF. Malformed input (and non-strings) give a falsy :class:`ParseFailure`, never an exception
    (except ``ValueError`` for an unknown ``fmt``, a caller bug)."""
    _check_fmt(fmt)
    if not isinstance(text, str):
        return ParseFailure("not_a_string", f"got {type(text).__name__}")
    form = _analyse(text, fmt)
    if form.failure is not None:
        return form.failure
    if form.term is not None:
        return LogicalForm((), form.fmt, form.binders, form.term)
    bound = {f"${i}": Variable(b, i) for i, b in enumerate(form.binders)}
    variables = [Variable(name) for name in form.var_names]
    atoms = tuple(
        Atom(label, tuple([variables[a] if a.__class__ is int else bound.get(a) or Constant(a) for a in args]))
        for label, args in form.labels
    )
    return LogicalForm(atoms, form.fmt, form.binders, None)


def parse_or_raise(text, fmt: str = "auto") -> LogicalForm:
    """Like :func:`parse`, but raise :class:`LogicalFormError` (a ValueError with ``.reason``) on failure."""
    result = parse(text, fmt)
    if isinstance(result, ParseFailure):
        raise LogicalFormError(result)
    return result


# --------------------------------------------------------------------------------------------------
# 4. Colour refinement (1-WL), in two kinds
#
# Hashed, one form at a time: a colour is a hash of the refinement signature (multisets hashed as sums), so
# colours are comparable across forms without a shared dictionary that would grow without bound, and a
# reference's colouring can be cached. Any isomorphism-invariant colouring keeps SEM exact: True is only ever
# returned when the atoms match under a colour-induced bijection, and isomorphic forms get identical colours,
# so a hash collision could only cost pruning power, never change a verdict.
#
# Exact, both sides of a pair in lockstep: signatures are numbered through a dictionary the two sides share,
# so the colours are small ints, the same under any PYTHONHASHSEED. Sums of hashes are near-linear, and parity
# structures (CFI graphs) make such sums coincide: the merge only costs pruning, but it would make the work the
# search spends, hence an undecided verdict, depend on the hash seed. The search (section 5) uses this kind.


def _hashed_round(edges, colours) -> list[int]:
    """New colour = hash(old colour, multiset of (edge key, neighbour colour))."""
    acc = [0] * len(colours)
    for a, b, k0, k1 in edges:
        acc[a] += hash((k0, colours[b]))
        acc[b] += hash((k1, colours[a]))
    return [hash(pair) for pair in zip(colours, acc)]


def _hashed_refinement(edges, colours) -> list:
    """Every round from ``colours`` on while the number of classes grows; the last one is stable."""
    rounds = [colours]
    n = len(colours)
    k = len(set(colours))
    while k < n:
        new = _hashed_round(edges, colours)
        k_new = len(set(new))
        if k_new <= k:
            break
        colours, k = new, k_new
        rounds.append(colours)
    return rounds


def _canon(atoms, colours) -> Counter:
    """The atom multiset with every variable replaced by its colour."""
    return Counter([
        (shape, colours[vs[0]]) if len(vs) == 1 else (shape, colours[vs[0]], colours[vs[1]]) if vs else shape
        for shape, vs in atoms
    ])


# Counter.__eq__ is a Python-level loop; two Counters built from lists never hold zero counts, so plain
# dict equality (in C) is the same test, several times faster.
_equal_counts = dict.__eq__


def _exact_initial_colours(p: _Form, g: _Form) -> tuple[list[int], list[int]]:
    """Per variable, its sorted (shape, slot) list, numbered in a dictionary both sides share."""
    ids: dict = {}
    out = []
    for form in (p, g):
        incident: list[list] = [[] for _ in form.var_names]
        for shape, vs in form.atoms:
            for slot, v in enumerate(vs):
                incident[v].append((shape, slot))
        out.append([ids.setdefault(tuple(sorted(s)), len(ids)) for s in incident])
    return out[0], out[1]


def _adjacency(atoms, n: int, slots: dict) -> list[list[tuple[int, int]]]:
    """Per variable, (slot id, neighbour) over its two-variable atoms; ``slots`` numbers (shape, slot) pairs
    and is shared by both sides of a pair."""
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for shape, vs in atoms:
        if len(vs) == 2:
            a, b = vs
            adj[a].append((slots.setdefault((shape, 0), len(slots)), b))
            adj[b].append((slots.setdefault((shape, 1), len(slots)), a))
    return adj


def _exact_round(adj, colours: list[int], ids: dict, width: int) -> list[int]:
    """New colour = the number of (old colour, sorted neighbour colours, each combined with the slot id below
    ``width``) in ``ids``, which both sides of a pair share."""
    return [ids.setdefault((c, tuple(sorted([colours[u] * width + k for k, u in around]))), len(ids))
            for c, around in zip(colours, adj)]


def _exact_refinement(adj_p, cp, adj_g, cg, width: int, budget: _Budget):
    """Refine both sides in lockstep until the number of classes stops growing: the two stable colourings, or
    None as soon as their colour histograms differ. ``width``: the number of slot ids (_adjacency)."""
    n = len(cp)
    k = len(set(cp))
    cost = 2 * n + sum(map(len, adj_p))  # both sides: n variables and m atoms each (two entries per atom)
    while k < n:
        budget.spend(cost)
        ids: dict = {}
        new_p = _exact_round(adj_p, cp, ids, width)
        new_g = _exact_round(adj_g, cg, ids, width)
        histogram = Counter(new_p)
        if not _equal_counts(histogram, Counter(new_g)):
            return None
        if len(histogram) <= k:
            break
        cp, cg, k = new_p, new_g, len(histogram)
    return cp, cg


# --------------------------------------------------------------------------------------------------
# 5. Matching: the SEM verdict


class _OutOfBudget(Exception):
    """The search spent its budget of work units: the verdict is undecided."""


class _Budget:
    """Work units left to one pair's search. Units, not seconds, so that a verdict (undecided included) is the
    same on every machine and under any load."""

    __slots__ = ("left",)

    def __init__(self, units: int | None):
        self.left = float("inf") if units is None else units

    def spend(self, units: int) -> None:
        self.left -= units
        if self.left < 0:
            raise _OutOfBudget


def _check_budget(budget) -> None:
    if budget is not None and (budget.__class__ is bool or not isinstance(budget, int) or budget < 0):
        raise ValueError(f"budget must be a non-negative int (search work units) or None for no limit, not {budget!r}")


def _decide(p: _Form, g: _Form, budget: int | None, exact_reason: bool = False) -> str:
    """Reason code of the verdict for two forms that both parsed (``undecided`` if the search ran out of
    ``budget``): cheap counts first, then the colourings, and a search only when they leave a choice. With
    ``exact_reason`` False (sem_match) the shape check is skipped when both colourings are discrete, as the
    atom comparison subsumes it."""
    if p.key == g.key:
        return "exact_string"
    if p.term != g.term or len(p.binders) != len(g.binders):
        return "lambda_prefix"
    if p.var_names and g.var_names and p.style != g.style:
        return "format_mismatch"
    if len(p.atoms) != len(g.atoms):
        return "conjunct_count"
    if len(p.var_names) != len(g.var_names):
        return "variable_count"
    if not g.var_names:
        return "match" if _equal_counts(p.shape_counts, g.shape_counts) else "atom_shapes"
    if not exact_reason:
        n = len(g.var_names)
        if len(set(p.colours)) == n == len(set(g.colours)):
            return "match" if _equal_counts(p.canon, g.canon) else "no_consistent_mapping"
    if not _equal_counts(p.shape_counts, g.shape_counts):
        return "atom_shapes"
    found = _search(p, g, budget)
    if found is _UNDECIDED:
        return "undecided"
    return "match" if found is not None else "no_consistent_mapping"


_UNDECIDED = "undecided"
_SEARCHED: dict[tuple, list[int] | str | None] = {}  # (pred, gold, budget) -> map, None or _UNDECIDED
_SEARCHED_SIZE = 1024


def _search(p: _Form, g: _Form, budget: int | None) -> list[int] | str | None:
    """The map pred var → gold var that proves SEM, None if there is none, or ``_UNDECIDED`` if the search ran
    out of ``budget`` work units first.

    docs/SEM.md §4.2, steps 5–6. Results are remembered (bounded, FIFO): only pairs that colour refinement
    leaves ambiguous get here, and those may be expensive, while the evaluate metric asks sem_match and then
    sem_verdict about the same pair."""
    key = (p.key, p.requested_fmt, g.key, g.requested_fmt, budget)
    if key in _SEARCHED:
        return _SEARCHED[key]
    try:
        found = _search_uncached(p, g, _Budget(budget))
    except _OutOfBudget:
        found = _UNDECIDED
    if len(_SEARCHED) >= _SEARCHED_SIZE:
        del _SEARCHED[next(iter(_SEARCHED))]
    _SEARCHED[key] = found
    return found


def _search_uncached(p: _Form, g: _Form, budget: _Budget) -> list[int] | None:
    """Reject on the cached hashed colourings, else refine both sides again exactly, from scratch, and
    search. The hashed colour of a variable is a function of its exact one at the same round, so forms that
    exact refinement cannot tell apart pass the first test under any PYTHONHASHSEED; the search then starts
    from the same exact colouring everywhere. That refinement is polynomial and not charged: the budget is
    for the search, so a pair that refinement decides is decided whatever the budget."""
    if not _equal_counts(Counter(p.colours), Counter(g.colours)) or not _equal_counts(p.canon, g.canon):
        return None
    cp, cg = _exact_initial_colours(p, g)
    slots: dict = {}
    adj_p, adj_g = _adjacency(p.atoms, len(cp), slots), _adjacency(g.atoms, len(cg), slots)
    exact = _exact_refinement(adj_p, cp, adj_g, cg, max(len(slots), 1), _Budget(None))
    if exact is None or not _equal_counts(Counter(exact[0]), Counter(exact[1])):
        return None
    cp, cg = exact
    if len(set(cp)) == len(cp):  # discrete: the map is forced (checked below)
        mapping = _forced_map(cp, cg)
    elif not _equal_counts(_canon(p.atoms, cp), _canon(g.atoms, cg)):
        return None
    else:
        mapping = _solve(list(p.atoms), list(cp), list(g.atoms), list(cg), budget)
    if mapping is None:
        return None
    # belt and braces (this path is rare): the map must carry pred's atom multiset onto gold's exactly
    renamed = Counter([(shape, tuple([mapping[v] for v in vs])) for shape, vs in p.atoms])
    return mapping if _equal_counts(renamed, Counter(g.atoms)) else None


def _solve(atoms_p, cp, atoms_g, cg, budget: _Budget) -> list[int] | None:
    """Colour-respecting isomorphism of two coloured structures whose colourings are stable, with equal
    colour histograms and equal atom multisets under the colouring; None if there is none.

    Discrete colourings force the map. Otherwise the variables whose colour is unique (fixed: they can only
    map to their one counterpart) are removed and the rest split into connected components; atoms linking a
    component to a fixed variable become unary atoms whose label records the fixed end. Components are
    grouped by their atom multiset, and each pred component is paired with a still-free gold component of its
    group that it is isomorphic to (isomorphism is transitive, so greedy pairing is exact). Only a connected
    remainder without fixed variables is branched on: individualise one variable of the smallest class
    against each candidate, refine both sides, prune on a histogram or atom-multiset mismatch, recurse.
    Decomposing after every individualisation is what keeps symmetric inputs (many identical pieces, or
    identical gadgets hanging off one node) polynomial, where plain individualise-and-refine backtracks
    exponentially. It still does on inputs that defeat refinement at every depth (CFI and Latin-square
    graphs): every call and refinement round spends from ``budget``, which raises _OutOfBudget when empty."""
    n = len(cp)
    budget.spend(2 * n + len(atoms_p) + len(atoms_g))
    histogram = Counter(cp)
    if not _equal_counts(histogram, Counter(cg)):
        return None
    if len(histogram) == n:
        return _forced_map(cp, cg)
    fixed = {c for c, k in histogram.items() if k == 1}
    comps_p = _split(atoms_p, cp, fixed)
    if fixed or len(comps_p) > 1:
        groups: dict[frozenset, list] = {}
        for comp in _split(atoms_g, cg, fixed):
            groups.setdefault(comp[0], []).append(comp)
        where = {c: v for v, c in enumerate(cg) if c in fixed}
        mapping = [where[c] if c in fixed else -1 for c in cp]
        for key, vars_p, sub_p, col_p in comps_p:
            free = groups.get(key)
            if not free:
                return None
            for i, (_, vars_g, sub_g, col_g) in enumerate(free):
                local = _solve(sub_p, col_p, sub_g, col_g, budget)
                if local is not None:
                    for a, b in enumerate(local):
                        mapping[vars_p[a]] = vars_g[b]
                    free.pop(i)
                    break
            else:
                return None
        return mapping
    slots: dict = {}
    adj_p, adj_g = _adjacency(atoms_p, n, slots), _adjacency(atoms_g, n, slots)
    width = max(len(slots), 1)
    # the smallest class, ties broken by the first pred variable in it: not by the colour, a string hash that
    # changes with PYTHONHASHSEED, so that the work spent, hence an undecided verdict, is reproducible
    first: dict[int, int] = {}
    for v, c in enumerate(cp):
        first.setdefault(c, v)
    pv = min((v for c, v in first.items() if histogram[c] > 1), key=lambda v: (histogram[cp[v]], v))
    colour = cp[pv]
    individual = hash(("individualised", colour))
    while individual in histogram:
        individual += 1
    for gv in [v for v, c in enumerate(cg) if c == colour]:
        cp2 = list(cp)
        cp2[pv] = individual
        cg2 = list(cg)
        cg2[gv] = individual
        refined = _exact_refinement(adj_p, cp2, adj_g, cg2, width, budget)
        if refined is None:
            continue
        cp3, cg3 = refined
        budget.spend(len(atoms_p) + len(atoms_g))
        if not _equal_counts(_canon(atoms_p, cp3), _canon(atoms_g, cg3)):
            continue
        found = _solve(atoms_p, cp3, atoms_g, cg3, budget)
        if found is not None:
            return found
    return None


def _split(atoms, colours, fixed) -> list[tuple[frozenset, list[int], list, list[int]]]:
    """Connected components of the non-fixed variables, as (key, var ids, atoms over local ids, colours)."""
    n = len(colours)
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for _, vs in atoms:
        if len(vs) == 2 and colours[vs[0]] not in fixed and colours[vs[1]] not in fixed:
            ra, rb = find(vs[0]), find(vs[1])
            if ra != rb:
                parent[ra] = rb
    comps: dict[int, tuple[list[int], list]] = {}
    for v in range(n):
        if colours[v] not in fixed:
            comps.setdefault(find(v), ([], []))[0].append(v)
    for shape, vs in atoms:
        free = [v for v in vs if colours[v] not in fixed]
        if not free:
            continue
        if len(free) < len(vs):  # an end is fixed: record it (slot, colour) in the label
            shape = (shape, tuple([None if colours[v] not in fixed else colours[v] for v in vs]))
            vs = tuple(free)
        comps[find(vs[0])][1].append((shape, vs))
    out = []
    for vars_, sub in comps.values():
        local = {v: i for i, v in enumerate(vars_)}
        latoms = [(shape, tuple([local[v] for v in vs])) for shape, vs in sub]
        lcol = [colours[v] for v in vars_]
        out.append((frozenset(_canon(latoms, lcol).items()), vars_, latoms, lcol))
    return out


def _forced_map(cp, cg) -> list[int]:
    where = {c: v for v, c in enumerate(cg)}
    return [where[c] for c in cp]


# The optional C fast path (hf_recogs/_sem_native.c): it decides two well-formed LFs in normalised spacing
# whose stable colouring is discrete (all of ReCOGS gen) about 20x faster than the code above, and answers
# -1 ("cannot tell") for anything else. HF_RECOGS_PURE_PYTHON=1 turns it off (for comparison and debugging).
try:
    from hf_recogs._sem_native import verdict as _native_verdict
except ImportError:  # installed without a C compiler: the pure-Python path decides everything
    _native_verdict = None
if os.environ.get("HF_RECOGS_PURE_PYTHON", "") not in ("", "0"):
    _native_verdict = None
_NATIVE_STYLE = {"auto": -1, "recogs": 0, "cogs": 1}
BACKEND = "native+python" if _native_verdict is not None else "python"


def sem_match(prediction, reference, fmt: str = "auto", *, budget: int | None = DEFAULT_SEARCH_BUDGET) -> bool:
    """Semantic Exact Match (docs/SEM.md §1): True iff some bijection between the two LFs' variables makes
    their multisets of atoms equal (labels, constants and argument positions unchanged).

    Symmetric and deterministic; False for malformed input or non-strings, never an exception. A pair left
    undecided by :func:`sem_verdict` (its search ran out of ``budget``) is False too: a match is claimed only
    when one is proven. Callers that must tell "no" from "not known" (the evaluate metric counts the
    undecided apart) use :func:`sem_verdict`."""
    return sem_verdict(prediction, reference, fmt, budget=budget) is True


def sem_verdict(prediction, reference, fmt: str = "auto", *,
                budget: int | None = DEFAULT_SEARCH_BUDGET) -> bool | None:
    """:func:`sem_match` as True, False, or None (*undecided*) when the search for a bijection spent
    ``budget`` work units (variables and atoms visited; None: no limit) without a verdict (docs/SEM.md §4.8).

    Work units, not seconds: the verdict is the same on every machine. Only pairs that colour refinement
    leaves ambiguous are searched at all; no COGS/ReCOGS/SLOG pair measured is (they are decided even with a
    budget of 0). The common case is decided by the native fast path when it is built; otherwise the reference's
    parse and colouring are cached (bounded LRU), since references are scored repeatedly."""
    if not isinstance(prediction, str) or not isinstance(reference, str):
        return False
    _check_fmt(fmt)
    if budget is not DEFAULT_SEARCH_BUDGET:  # the usual call skips the check: a native verdict takes ≈3 µs
        _check_budget(budget)
    if _native_verdict is not None and fmt != "token_removal":
        verdict = _native_verdict(prediction, reference, _NATIVE_STYLE[fmt])
        if verdict >= 0:
            return verdict == 1
    return _python_sem_verdict(prediction, reference, fmt, budget)


def _python_sem_match(prediction: str, reference: str, fmt: str,
                      budget: int | None = DEFAULT_SEARCH_BUDGET) -> bool:
    """The pure-Python decision as a bool (undecided is False), for the tests and the bench."""
    return _python_sem_verdict(prediction, reference, fmt, budget) is True


def _python_sem_verdict(prediction: str, reference: str, fmt: str, budget: int | None) -> bool | None:
    """The pure-Python decision (every input; the native path defers to it when it cannot tell)."""
    g = _analyse_reference(reference, fmt)
    if g.failure is not None:
        return False
    if prediction == reference:
        return True
    p = _analyse(prediction, fmt)
    if p.failure is not None:
        return False
    reason = _decide(p, g, budget)
    return None if reason == "undecided" else reason in ("match", "exact_string")


# --------------------------------------------------------------------------------------------------
# 6. Diagnosis: what is wrong with a prediction


def diagnose(prediction, reference, fmt: str = "auto", *, budget: int | None = DEFAULT_SEARCH_BUDGET) -> Diagnosis:
    """:func:`sem_match` with the reason, and for a mismatch the atoms missing from / extra in the
    prediction under a best-effort variable map (so an error analysis can say *what* is wrong). A pair whose
    search ran out of ``budget`` has reason ``undecided`` (and ``match`` False, as in sem_match)."""
    if not isinstance(prediction, str) or not isinstance(reference, str):
        bad = "prediction" if not isinstance(prediction, str) else "reference"
        return Diagnosis(False, "not_a_string", f"{bad} is {type(prediction if bad == 'prediction' else reference).__name__}")
    _check_fmt(fmt)
    _check_budget(budget)
    g = _analyse_reference(reference, fmt)
    if g.failure is not None:
        return Diagnosis(False, "parse_error_reference", str(g.failure))
    p = _analyse(prediction, fmt)
    if p.failure is not None:
        return Diagnosis(False, "parse_error_prediction", str(p.failure))
    reason = _decide(p, g, budget, exact_reason=True)
    match = reason in ("match", "exact_string")
    if match:
        mapping = None
        if p.var_names and reason == "match":
            forced = _search(p, g, budget)
            mapping = {p.var_names[i]: g.var_names[j] for i, j in enumerate(forced)} if forced else None
        elif p.var_names:
            mapping = {name: name for name in p.var_names}
        return Diagnosis(True, reason, mapping=mapping)
    detail = {
        "format_mismatch": f"prediction read as {p.fmt}, reference as {g.fmt}",
        "lambda_prefix": f"binders {len(p.binders)} vs {len(g.binders)}, term {p.term!r} vs {g.term!r}",
        "conjunct_count": f"{len(p.atoms)} conjuncts vs {len(g.atoms)}",
        "variable_count": f"{len(p.var_names)} variables vs {len(g.var_names)}",
        "undecided": f"the search spent its budget of {budget} work units; pass a larger budget to decide",
    }.get(reason, "")
    mapping = _best_effort_map(p, g)
    missing, extra = _atom_diff(p, g, mapping)
    named = {p.var_names[i]: g.var_names[j] for i, j in mapping.items()}
    return Diagnosis(False, reason, detail, missing, extra, named)


def _best_effort_map(p: _Form, g: _Form) -> dict[int, int]:
    """Pair variables whose colour is unique on both sides, from the most refined round back to the initial
    colours (where only the incident labels count), so one local error does not unmap everything."""
    mapping: dict[int, int] = {}
    if not p.var_names or not g.var_names:
        return mapping
    # last resort: the unary labels alone (``box(4')`` still pairs with ``box(4)`` when its roles are wrong)
    rounds_p = [_unary_colours(p), *_hashed_refinement(p.edges, p.initial_colours)]
    rounds_g = [_unary_colours(g), *_hashed_refinement(g.edges, g.initial_colours)]
    for r in range(min(len(rounds_p), len(rounds_g)) - 1, -1, -1):
        taken = set(mapping.values())
        cp = Counter(c for v, c in enumerate(rounds_p[r]) if v not in mapping)
        cg = Counter(c for v, c in enumerate(rounds_g[r]) if v not in taken)
        where = {c: v for v, c in enumerate(rounds_g[r]) if v not in taken and cg[c] == 1}
        for v, c in enumerate(rounds_p[r]):
            if v not in mapping and cp[c] == 1 and c in where:
                mapping[v] = where[c]
    return mapping


def _unary_colours(form: _Form) -> list[int]:
    unary: list[list[str]] = [[] for _ in form.var_names]
    for shape, vs in form.atoms:
        if len(vs) == 1:
            unary[vs[0]].append(shape)
    return [hash(tuple(sorted(u))) for u in unary]


def _atom_diff(p: _Form, g: _Form, mapping: dict[int, int]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    def render(form: _Form, rename) -> Counter:
        out = Counter()
        for label, args in form.labels:
            shown = []
            for a in args:
                if a.__class__ is int:
                    shown.append(rename(a))
                elif a.startswith("$"):
                    shown.append(form.binders[int(a[1:])])
                else:
                    shown.append(a)
            out[f"{label}({', '.join(shown)})"] += 1
        return out

    gold = render(g, lambda v: g.var_names[v])
    pred = render(p, lambda v: g.var_names[mapping[v]] if v in mapping else p.var_names[v] + "'")
    missing = tuple(sorted((gold - pred).elements()))
    extra = tuple(sorted((pred - gold).elements()))
    return missing, extra


# --------------------------------------------------------------------------------------------------
# 7. Rewriting: one meaning, another conjunct order


def depth_first_order(text: str) -> str:
    """A ReCOGS logical form with its ``AND`` conjuncts in depth-first order (the noun list up to the last ``;``
    stays as it is). ReCOGS writes the conjuncts by the position of their first argument, so a subject's
    ``nmod . in ( 1 , 4 )`` comes before its verb, while an object's comes after every role of the verb. In
    depth-first order each conjunct whose second argument is a variable is followed at once by that variable's
    own conjuncts (its ``nmod``, or the verb and roles of its clause), recursively; so a prepositional phrase
    follows the role of the noun it modifies, wherever that noun stands. SEM ignores conjunct order: the result
    matches ``text``. Raises :class:`LogicalFormError` on a form that is not ReCOGS."""
    split = _split_conjuncts(text)
    if split is None:
        return " ".join(tokenize(text))
    atoms, noun_list, conjuncts = split
    block = range(len(conjuncts))

    def first(i: int) -> str:
        return atoms[i].args[0].name

    def second(i: int) -> str | None:
        args = atoms[i].args
        return args[1].name if len(args) > 1 and isinstance(args[1], Variable) else None

    own: dict[str, list[int]] = {}
    for i in block:
        own.setdefault(first(i), []).append(i)
    introduced = {second(i) for i in block}
    order: list[int] = []
    visited: set[str] = set()

    def visit(variable: str) -> None:
        if variable in visited:
            return
        visited.add(variable)
        for i in own.get(variable, ()):
            order.append(i)
            if second(i) is not None:
                visit(second(i))

    for i in block:  # the roots (events no conjunct introduces) first, in text order; then anything left
        if first(i) not in introduced:
            visit(first(i))
    for i in block:
        visit(first(i))
    return _join(noun_list, [conjuncts[i] for i in order])


def nmod_last_order(text: str) -> str:
    """A ReCOGS logical form with every ``nmod`` conjunct moved after all the other ``AND`` conjuncts, each group
    in its own order (the noun list up to the last ``;`` stays as it is). ReCOGS writes the conjuncts by the
    position of their first argument, so a subject's ``nmod . in ( 1 , 4 )`` comes before its verb; an object's,
    the only phrase most training forms have, after every role of its verb. With every phrase last, a phrase
    follows the roles wherever its noun stands, whichever role that noun has. SEM ignores conjunct order: the
    result matches ``text``. Raises :class:`LogicalFormError` on a form that is not ReCOGS."""
    split = _split_conjuncts(text)
    if split is None:
        return " ".join(tokenize(text))
    _, noun_list, conjuncts = split
    phrases = [c for c in conjuncts if c[0] == "nmod"]
    return _join(noun_list, [c for c in conjuncts if c[0] != "nmod"] + phrases)


def _split_conjuncts(text: str) -> tuple[tuple[Atom, ...], list[str], list[list[str]]] | None:
    """A ReCOGS form cut into the tokens of its noun list (each entry with its ``;``), and the ``AND`` conjuncts
    after it, parsed and as tokens; ``None`` for a form with nothing to order (a lone name, a lambda). Raises
    :class:`LogicalFormError` on a form that is not ReCOGS."""
    form = parse_or_raise(text, "recogs")
    conjuncts: list[list[str]] = [[]]
    separators: list[str] = []
    for token in tokenize(text):
        if token in _SEPARATORS:
            separators.append(token)
            conjuncts.append([])
        else:
            conjuncts[-1].append(token)
    if form.term is not None or len(conjuncts) != len(form.atoms):
        return None
    start = max((i + 1 for i, s in enumerate(separators) if s == ";"), default=0)
    noun_list = [w for i in range(start) for w in (*conjuncts[i], separators[i])]
    return form.atoms[start:], noun_list, conjuncts[start:]


def _join(noun_list: list[str], conjuncts: list[list[str]]) -> str:
    return " ".join(noun_list + " AND ".join(" ".join(c) for c in conjuncts).split())


def arguments_first(text: str) -> str:
    """A logical form with each conjunct's arguments written before its predicate: ``agent ( 1 , 0 )`` becomes
    ``( 1 , 0 ) agent``, ``* cake ( 3 )`` becomes ``( 3 ) * cake``; the separators (``;``, ``AND``) and their order
    stay. A decoder trained on it points at a conjunct's words before it names the relation between them;
    :func:`predicates_first` gives the form back. Raises :class:`LogicalFormError` on a form that does not parse."""
    parse_or_raise(text)
    return " ".join(token for part in _conjunct_parts(text) for token in _arguments_to_front(part))


def predicates_first(text: str) -> str:
    """The inverse of :func:`arguments_first`, for decoded outputs: every conjunct written ``( arguments )
    predicate`` goes back to ``predicate ( arguments )``; a part in any other shape (a malformed prediction) stays
    as it is, for the metric to judge."""
    return " ".join(token for part in _conjunct_parts(text) for token in _predicate_to_front(part))


def _conjunct_parts(text: str) -> list[list[str]]:
    """The tokens of ``text`` cut into conjuncts and separators, in order (a separator is a part of its own)."""
    parts: list[list[str]] = [[]]
    for token in tokenize(text):
        if token in _SEPARATORS:
            parts += [[token], []]
        else:
            parts[-1].append(token)
    return [part for part in parts if part]


def _arguments_to_front(part: list[str]) -> list[str]:
    if "(" not in part or part[-1] != ")":  # a separator, or a lone name
        return part
    opening = part.index("(")
    return part[opening:] + part[:opening]


def _predicate_to_front(part: list[str]) -> list[str]:
    if part[0] != "(" or ")" not in part:
        return part
    closing = part.index(")")
    if closing == len(part) - 1:  # no predicate after the arguments
        return part
    return part[closing + 1:] + part[:closing + 1]
