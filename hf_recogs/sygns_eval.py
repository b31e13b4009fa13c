"""SyGNS scored at the levels of its paper: entailment, polarity of content words, DRS clause matching.

Exact match alone says nothing about how wrong a wrong meaning is. Yanaka et al. (2021) also score every
prediction by (1) logical entailment between the gold and the predicted formula, in both directions, (2) the
polarity (upward / downward monotonicity) that each content word gets, and (3) COUNTER-style matching of DRS
clauses. This module computes all three deterministically, with no external prover or script:

* **FOL entailment** (``fol_entails``): the SyGNS formulas (NLTK syntax, as ``sygns_semantics.fol_string``
  prints them) are translated to SMT-LIB and decided by z3 (``z3-solver`` on PyPI) over an uninterpreted
  domain. The budget of a check is a z3 *resource* limit, not seconds, so a verdict never depends on the
  machine's load; a check that runs out of it answers ``None`` ("undecided"), counted apart and never taken
  as a proof. Formulas that are equal up to renaming of bound variables and the order of conjuncts and
  disjuncts are recognised without the solver.
* **Variable-free form** (VF): prefix notation with fixed arities (``EXIST ALL TWO THREE AND OR`` take two
  arguments, ``NOT INV`` one, words none), parsed here and translated to FOL, so VF predictions get
  entailment scores too. A VF term denotes a predicate whose number of places its context fixes: a sentence
  has none; ``Q(R, S)`` gives R one place and S one more than the ``Q`` term itself (the last is Q's
  variable); ``INV`` swaps the two places of a two-place predicate; ``AND``, ``OR``, ``NOT`` keep the
  places. Numerals are predicates of the variable, as in the FOL of the data (``TWO(R, S)`` is
  ``exists y.(two(y) & R(y) & S(y))``).
* **Polarity** (``polarities``): the monotonicity calculus on the formula itself. In FOL a word is downward
  when an odd number of negations and ``->`` antecedents are above it (``<->`` makes it neither). In VF,
  ``NOT`` and the first argument of ``ALL`` flip polarity, everything else keeps it. On every generated row
  this reproduces the ``folpol`` / ``vfpol`` columns (``polarity_column``).
* **DRS clause matching** (``drs_match``): the one-to-one mapping of box variables (``b1``) and discourse
  referents (``x1``) that matches the most clauses, found by an exact branch and bound (a greedy first
  solution guided by colour refinement, then a bound that counts, per clause shape, the clauses that could
  still match). COUNTER's hill-climbing can only find this optimum or a lower one.

``score_pair`` gives one prediction's verdicts (malformed predictions get a reason instead of an exception);
``aggregate`` turns verdicts into the scores of the ``sygns_match`` metric and of training reports.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

__all__ = [
    "FORMS",
    "Malformed",
    "parse_fol",
    "fol_token_spans",
    "parse_vf",
    "vf_to_fol",
    "format_fol",
    "fol_entails",
    "entailment",
    "polarities",
    "polarity_column",
    "parse_drs",
    "drs_match",
    "score_pair",
    "aggregate",
    "detect_form",
]

FORMS = ("fol", "drs", "vf")

# z3 resource units per entailment check (deterministic, unlike seconds). Every pair of generated gold
# formulas and their light corruptions that we measured needs far less (bench/sygns_eval_bench.py).
DEFAULT_RLIMIT = 5_000_000
# A wall-clock backstop only, far above what the resource limit allows on any machine we know.
DEFAULT_TIMEOUT_MS = 60_000


class Malformed(ValueError):
    """A string that is not a formula of the form asked for. ``reason`` is a short code."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


# Nesting levels (brackets, negations, quantifiers; VF operators) a formula may have. The deepest SyGNS
# formula has about 30; past the cap a prediction is malformed ("syntax": nested too deeply) whatever the
# caller's stack depth, and below it the readers, which recurse, always have room (_with_headroom).
MAX_NESTING = 500
# Python frames the recursive readers and writers need at most for MAX_NESTING levels (the FOL parser takes
# five per bracket), and a margin for z3's Python side.
_HEADROOM = 6 * MAX_NESTING + 300
_limit_lock = threading.Lock()
_limit_raised = {"calls": 0, "before": 0}


def _stack_depth() -> int:
    frame, depth = sys._getframe(1), 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def _with_headroom(fn):
    """Run ``fn`` with room for ``_HEADROOM`` more frames above the caller's, so that a verdict does not depend
    on how deep in a stack it is asked for. The recursion limit is only ever raised, under a lock, and put back
    by the last call that raised it."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        needed = _stack_depth() + _HEADROOM
        if sys.getrecursionlimit() >= needed:
            return fn(*args, **kwargs)
        with _limit_lock:
            if not _limit_raised["calls"]:
                _limit_raised["before"] = sys.getrecursionlimit()
            _limit_raised["calls"] += 1
            sys.setrecursionlimit(max(needed, sys.getrecursionlimit()))
        try:
            return fn(*args, **kwargs)
        finally:
            with _limit_lock:
                _limit_raised["calls"] -= 1
                if not _limit_raised["calls"]:
                    sys.setrecursionlimit(_limit_raised["before"])

    return wrapper


def _need_string(text: Any) -> str:
    if not isinstance(text, str):
        raise Malformed("not_a_string", f"got {type(text).__name__}")
    if not text.strip():
        raise Malformed("empty", "empty string")
    return text


def _check_brackets(text: str, open_: str = "(", close: str = ")") -> None:
    depth = 0
    for ch in text:
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth < 0:
                raise Malformed("unbalanced_brackets", f"a {close!r} closes nothing")
    if depth:
        raise Malformed("unbalanced_brackets", f"{depth} {open_!r} never closed")


# ---------------------------------------------------------------------------------------------------------
# FOL: syntax. Formulas are tuples:
#   ("atom", pred, args)   args: tuple of ("var", name) or ("const", name)
#   ("not", φ)  ("and", (φ, ...))  ("or", (φ, ...))  ("imp", φ, ψ)  ("iff", φ, ψ)
#   ("exists", var, φ)  ("all", var, φ)

_FOL_TOKEN = re.compile(r"\s*(?:(<->|->|[-&|().,])|([A-Za-z_][A-Za-z0-9_]*)|(\S))")
_QUANTIFIERS = {"exists": "exists", "all": "all"}


def fol_token_spans(text: str) -> list[tuple[str, int]]:
    """The FOL tokens of ``text`` with the character each starts at; :class:`Malformed` for a character that
    starts no token."""
    tokens = []
    pos = 0
    stripped = text.rstrip()
    while pos < len(stripped):
        m = _FOL_TOKEN.match(stripped, pos)
        if m.group(3) is not None:
            raise Malformed("unknown_token", f"{m.group(3)!r} at character {m.start(3)}")
        start = m.start(1) if m.group(1) is not None else m.start(2)
        tokens.append((m.group(1) or m.group(2), start))
        pos = m.end()
    return tokens


def _fol_tokens(text: str) -> list[str]:
    return [token for token, _ in fol_token_spans(text)]


class _FolParser:
    """Recursive descent with NLTK's precedence: ``-`` and quantifiers bind tightest (a quantifier's body is
    the single unit after the dot, which is why NLTK prints every binary body in parentheses), then ``&``,
    ``|``, ``->`` (right-associative), ``<->``."""

    def __init__(self, tokens: list[str]) -> None:
        self.toks = tokens
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise Malformed("truncated", "the formula ends early")
        self.i += 1
        return tok

    def expect(self, tok: str) -> None:
        got = self.take()
        if got != tok:
            raise Malformed("syntax", f"expected {tok!r}, got {got!r}")

    def formula(self, bound: dict[str, int]):
        left = self.imp(bound)
        while self.peek() == "<->":
            self.i += 1
            left = ("iff", left, self.imp(bound))
        return left

    def imp(self, bound):
        left = self.disj(bound)
        if self.peek() == "->":
            self.i += 1
            return ("imp", left, self.imp(bound))
        return left

    def disj(self, bound):
        parts = [self.conj(bound)]
        while self.peek() == "|":
            self.i += 1
            parts.append(self.conj(bound))
        return parts[0] if len(parts) == 1 else ("or", tuple(_flat("or", parts)))

    def conj(self, bound):
        parts = [self.unary(bound)]
        while self.peek() == "&":
            self.i += 1
            parts.append(self.unary(bound))
        return parts[0] if len(parts) == 1 else ("and", tuple(_flat("and", parts)))

    def unary(self, bound):
        tok = self.take()
        if tok == "-":
            return ("not", self.unary(bound))
        if tok == "(":
            inner = self.formula(bound)
            self.expect(")")
            return inner
        if tok in _QUANTIFIERS:
            names = []
            while _is_name(self.peek()) and self.peek() not in _QUANTIFIERS:
                names.append(self.take())
            if not names:
                raise Malformed("syntax", f"{tok!r} needs a variable")
            self.expect(".")
            inner = dict(bound)
            for name in names:
                inner[name] = inner.get(name, 0) + 1
            body = self.unary(inner)
            for name in reversed(names):
                body = (_QUANTIFIERS[tok], name, body)
            return body
        if _is_name(tok):
            args = []
            if self.peek() == "(":
                self.i += 1
                while True:
                    arg = self.take()
                    if not _is_name(arg) or arg in _QUANTIFIERS:
                        raise Malformed("syntax", f"bad argument {arg!r} of {tok!r}")
                    args.append(("var", arg) if arg in bound else ("const", arg))
                    sep = self.take()
                    if sep == ")":
                        break
                    if sep != ",":
                        raise Malformed("syntax", f"expected ',' or ')' in the arguments of {tok!r}, got {sep!r}")
            return ("atom", tok, tuple(args))
        raise Malformed("syntax", f"unexpected {tok!r}")


def _is_name(tok: str | None) -> bool:
    return tok is not None and (tok[0].isalpha() or tok[0] == "_")


def _flat(op: str, parts) -> list:
    out = []
    for p in parts:
        if p[0] == op:
            out.extend(p[1])
        else:
            out.append(p)
    return out


def _fol_nesting(tokens: list[str]) -> int:
    """How deep the parser will nest: open brackets plus the prefix operators (``-``, quantifiers) that scope
    over the current position."""
    deepest = prefix = around = 0  # around: the levels of the open brackets
    stack: list[int] = []  # per open bracket: the levels it adds
    binder = False
    for tok in tokens:
        if binder:  # the variables of a quantifier, up to its dot
            binder = tok != "."
            continue
        if tok == "-" or tok in _QUANTIFIERS:
            prefix += 1
            binder = tok in _QUANTIFIERS
        elif tok == "(":
            stack.append(prefix + 1)
            around += prefix + 1
            prefix = 0
        elif tok == ")":
            around -= stack.pop() if stack else 0
            prefix = 0
        elif tok in ("&", "|", "->", "<->"):
            prefix = 0
        deepest = max(deepest, around + prefix)
    return deepest


@lru_cache(maxsize=65_536)
def _parse_fol_cached(text: str):
    _check_brackets(text)
    tokens = _fol_tokens(text)
    if _fol_nesting(tokens) > MAX_NESTING:
        raise Malformed("syntax", f"nested more than {MAX_NESTING} levels deep")
    parser = _FolParser(tokens)
    try:
        phi = parser.formula({})
    except RecursionError:  # a backstop: MAX_NESTING and _with_headroom leave room for any formula read
        raise Malformed("syntax", "nested too deeply") from None
    if parser.i != len(tokens):
        raise Malformed("trailing_tokens", f"{tokens[parser.i]!r} after a complete formula")
    return phi


@_with_headroom
def parse_fol(text: Any):
    """The formula of a SyGNS FOL string; :class:`Malformed` (a ``ValueError``) with a reason code if it is
    not one (``not_a_string``, ``empty``, ``unbalanced_brackets``, ``unknown_token``, ``truncated``,
    ``syntax``, ``trailing_tokens``)."""
    return _parse_fol_cached(_need_string(text))


@_with_headroom
def format_fol(phi) -> str:
    """A formula in the printing convention of the data (NLTK's): binary formulas in parentheses, nested
    conjunctions (disjunctions) flat, quantifier bodies right after the dot."""
    out: list[str] = []
    _write(phi, out)
    return "".join(out)


_INFIX = {"and": " & ", "or": " | ", "imp": " -> ", "iff": " <-> "}


def _write(phi, out: list) -> None:
    tag = phi[0]
    if tag == "atom":
        out.append(phi[1])
        if phi[2]:
            out.append("(" + ",".join(a[1] for a in phi[2]) + ")")
    elif tag == "not":
        out.append("-")
        _write(phi[1], out)
    elif tag in ("exists", "all"):
        out.append(f"{tag} {phi[1]}.")
        _write(phi[2], out)
    else:
        parts = phi[1] if tag in ("and", "or") else phi[1:]
        out.append("(")
        for i, p in enumerate(parts):
            if i:
                out.append(_INFIX[tag])
            _write(p, out)
        out.append(")")


def _canonical(phi, depth: int = 0, env: dict | None = None) -> str:
    """A key equal for formulas that differ only in bound-variable names and the order of conjuncts and
    disjuncts (bound variables become their binder's distance, which reordering cannot change)."""
    env = env or {}
    tag = phi[0]
    if tag == "atom":
        args = ",".join(f"#{depth - env[a[1]]}" if a[0] == "var" else f"c:{a[1]}" for a in phi[2])
        return f"{phi[1]}/{len(phi[2])}({args})"
    if tag == "not":
        return "-" + _canonical(phi[1], depth, env)
    if tag in ("exists", "all"):
        inner = dict(env)
        inner[phi[1]] = depth + 1
        return f"{tag[0]}.{_canonical(phi[2], depth + 1, inner)}"
    if tag in ("and", "or"):
        return tag + "[" + ";".join(sorted(_canonical(p, depth, env) for p in phi[1])) + "]"
    return f"{tag}[{_canonical(phi[1], depth, env)};{_canonical(phi[2], depth, env)}]"


# ---------------------------------------------------------------------------------------------------------
# FOL: entailment with z3


def _smt(phi, names: dict, decls: dict, consts: set, scope: dict) -> str:
    tag = phi[0]
    if tag == "atom":
        key = (phi[1], len(phi[2]))
        sym = decls.get(key)
        if sym is None:
            sym = decls[key] = f"|p{len(decls)}|"
        if not phi[2]:
            return sym
        args = []
        for kind, name in phi[2]:
            if kind == "var":
                args.append(scope[name])
            else:
                consts.add(name)
                args.append(f"|c:{name}|")
        return f"({sym} {' '.join(args)})"
    if tag == "not":
        return f"(not {_smt(phi[1], names, decls, consts, scope)})"
    if tag in ("exists", "all"):
        var = f"v{len(names)}"
        names[var] = True
        inner = dict(scope)
        inner[phi[1]] = var
        binder = "exists" if tag == "exists" else "forall"
        return f"({binder} (({var} U)) {_smt(phi[2], names, decls, consts, inner)})"
    if tag in ("and", "or"):
        return f"({tag} {' '.join(_smt(p, names, decls, consts, scope) for p in phi[1])})"
    op = "=>" if tag == "imp" else "="
    return f"({op} {_smt(phi[1], names, decls, consts, scope)} {_smt(phi[2], names, decls, consts, scope)})"


def _decide(premise, hypothesis, rlimit: int, timeout_ms: int) -> bool | None:
    import z3

    names: dict = {}
    decls: dict = {}
    consts: set = set()
    p = _smt(premise, names, decls, consts, {})
    h = _smt(hypothesis, names, decls, consts, {})
    lines = ["(declare-sort U 0)"]
    for (_, arity), sym in decls.items():
        lines.append(f"(declare-fun {sym} ({' '.join(['U'] * arity)}) Bool)")
    lines += [f"(declare-const |c:{c}| U)" for c in sorted(consts)]
    lines.append(f"(assert {p})")
    lines.append(f"(assert (not {h}))")
    solver = z3.SimpleSolver()
    solver.set("rlimit", rlimit)
    solver.set("timeout", timeout_ms)
    solver.from_string("".join(lines))
    result = solver.check()
    if result == z3.unsat:
        return True
    if result == z3.sat:
        return False
    return None


def _as_formula(x, form: str):
    if isinstance(x, tuple):
        return x
    return parse_vf_fol(x) if form == "vf" else parse_fol(x)


@_with_headroom
def fol_entails(premise, hypothesis, *, rlimit: int = DEFAULT_RLIMIT, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                form: str = "fol") -> bool | None:
    """Whether ``premise`` entails ``hypothesis`` (SyGNS FOL strings, or parsed formulas): ``True``,
    ``False``, or ``None`` when z3 neither proves nor refutes it within ``rlimit`` resource units (undecided:
    count it apart, never as a proof). ``form="vf"`` reads both as variable-free terms. A malformed input
    raises :class:`Malformed`."""
    p, h = _as_formula(premise, form), _as_formula(hypothesis, form)
    if _canonical(p) == _canonical(h):
        return True
    return _decide_cached(p, h, rlimit, timeout_ms)


@lru_cache(maxsize=16_384)
def _decide_cached(p, h, rlimit: int, timeout_ms: int) -> bool | None:
    return _decide(p, h, rlimit, timeout_ms)


@_with_headroom
def entailment(gold, prediction, *, form: str = "fol", rlimit: int = DEFAULT_RLIMIT,
               timeout_ms: int = DEFAULT_TIMEOUT_MS) -> dict[str, bool | None]:
    """``{"g_to_p", "p_to_g", "equivalent"}`` for two formulas of ``form`` (``fol`` or ``vf``): gold entails
    prediction, prediction entails gold, both. ``None`` where undecided (``equivalent`` is ``None`` when a
    direction is undecided and the other is not ``False``)."""
    g, p = _as_formula(gold, form), _as_formula(prediction, form)
    if _canonical(g) == _canonical(p):
        return {"g_to_p": True, "p_to_g": True, "equivalent": True}
    g_to_p = _decide_cached(g, p, rlimit, timeout_ms)
    p_to_g = _decide_cached(p, g, rlimit, timeout_ms)
    if g_to_p is False or p_to_g is False:
        equivalent: bool | None = False
    elif g_to_p is None or p_to_g is None:
        equivalent = None
    else:
        equivalent = True
    return {"g_to_p": g_to_p, "p_to_g": p_to_g, "equivalent": equivalent}


# ---------------------------------------------------------------------------------------------------------
# Variable-free form

VF_ARITY = {"EXIST": 2, "ALL": 2, "TWO": 2, "THREE": 2, "AND": 2, "OR": 2, "NOT": 1, "INV": 1}
_VF_WORD = re.compile(r"[A-Z][A-Z_]*\Z")


@lru_cache(maxsize=65_536)
def _parse_vf_cached(text: str):
    tokens = text.split()
    pos = 0

    def term():
        nonlocal pos
        if pos >= len(tokens):
            raise Malformed("truncated", "an operator lacks an argument")
        tok = tokens[pos]
        pos += 1
        arity = VF_ARITY.get(tok)
        if arity is None:
            if not _VF_WORD.match(tok):
                raise Malformed("unknown_token", f"{tok!r} is neither an operator nor an upper-case word")
            return tok.lower()
        return (tok, *(term() for _ in range(arity)))

    # the deepest generated VF has about 40 tokens; the cap bounds the nesting (see MAX_NESTING)
    if len(tokens) > MAX_NESTING:
        raise Malformed("syntax", f"{len(tokens)} tokens is beyond any SyGNS form")
    out = term()
    if pos != len(tokens):
        raise Malformed("trailing_tokens", f"{tokens[pos]!r} after a complete term")
    return out


@_with_headroom
def parse_vf(text: Any):
    """The term of a variable-free form: a word (lower-cased ``str``) or ``(OP, arg, ...)``;
    :class:`Malformed` if it is not one."""
    return _parse_vf_cached(_need_string(text))


def _vf_formula(term, args: tuple, fresh: list):
    if isinstance(term, str):
        return ("atom", term, args)
    op = term[0]
    if op == "NOT":
        return ("not", _vf_formula(term[1], args, fresh))
    if op in ("AND", "OR"):
        parts = [_vf_formula(t, args, fresh) for t in term[1:]]
        tag = op.lower()
        return (tag, tuple(_flat(tag, parts)))
    if op == "INV":
        if len(args) != 2:
            raise Malformed("type_error", f"INV needs a two-place predicate, here it has {len(args)} places")
        return _vf_formula(term[1], (args[1], args[0]), fresh)
    # a quantifier: its variable is bound here and is the last place of the scope
    fresh[0] += 1
    name = f"x{fresh[0]}"
    var = ("var", name)
    restr = _vf_formula(term[1], (var,), fresh)
    scope = _vf_formula(term[2], (*args, var), fresh)
    if op == "ALL":
        return ("all", name, ("imp", restr, scope))
    parts = [restr, scope] if op == "EXIST" else [("atom", op.lower(), (var,)), restr, scope]
    return ("exists", name, ("and", tuple(_flat("and", parts))))


@lru_cache(maxsize=65_536)
def _vf_fol_cached(text: str):
    return _vf_formula(_parse_vf_cached(text), (), [0])


@_with_headroom
def parse_vf_fol(text: Any):
    """The FOL formula (tuple form) of a variable-free form."""
    return _vf_fol_cached(_need_string(text))


@_with_headroom
def vf_to_fol(text: Any) -> str:
    """A variable-free form as an FOL string (the data's printing convention), e.g.
    ``EXIST ANN RUN`` -> ``exists x1.(ann(x1) & run(x1))``."""
    return format_fol(parse_vf_fol(text))


# ---------------------------------------------------------------------------------------------------------
# Polarity (monotonicity) of content words

UP, DOWN, NONE = "up", "down", "none"


def _flip(p: str) -> str:
    return DOWN if p == UP else UP if p == DOWN else NONE


def _fol_polarity(phi, pol: str, out: list) -> None:
    tag = phi[0]
    if tag == "atom":
        out.append((phi[1], pol))
    elif tag == "not":
        _fol_polarity(phi[1], _flip(pol), out)
    elif tag in ("and", "or"):
        for p in phi[1]:
            _fol_polarity(p, pol, out)
    elif tag == "imp":
        _fol_polarity(phi[1], _flip(pol), out)
        _fol_polarity(phi[2], pol, out)
    elif tag == "iff":  # each side occurs both positively and negatively: neither monotone
        _fol_polarity(phi[1], NONE, out)
        _fol_polarity(phi[2], NONE, out)
    else:
        _fol_polarity(phi[2], pol, out)


def _vf_polarity(term, pol: str, out: list) -> None:
    if isinstance(term, str):
        out.append((term, pol))
        return
    op = term[0]
    if op == "NOT":
        _vf_polarity(term[1], _flip(pol), out)
    elif op == "ALL":  # downward in the restrictor, upward in the scope
        _vf_polarity(term[1], _flip(pol), out)
        _vf_polarity(term[2], pol, out)
    else:  # EXIST/TWO/THREE/AND/OR are upward in both arguments, INV keeps the polarity
        for t in term[1:]:
            _vf_polarity(t, pol, out)


@_with_headroom
def polarities(formula: Any, form: str = "fol") -> list[tuple[str, str]]:
    """Each content word of ``formula`` (left to right, repeats kept) with its polarity ``"up"`` or
    ``"down"`` (``"none"`` under ``<->``), by the monotonicity calculus on the formula itself. ``form`` is
    ``"fol"`` or ``"vf"``. In FOL, numerals and names are predicates and are listed; in VF numerals are
    operators and are not. Raises :class:`Malformed` on a malformed formula."""
    out: list[tuple[str, str]] = []
    if form == "fol":
        _fol_polarity(parse_fol(formula), UP, out)
    elif form == "vf":
        _vf_polarity(parse_vf(formula), UP, out)
    else:
        raise ValueError(f"polarities: form must be 'fol' or 'vf', not {form!r}")
    return out


@_with_headroom
def polarity_column(formula: Any, form: str = "fol") -> str:
    """The polarities written as the data's ``folpol`` (``form="fol"``) or ``vfpol`` (``form="vf"``)
    column."""
    pols = polarities(formula, form)
    if form == "fol":
        return repr([(w, 1 if p == UP else 0) for w, p in pols])
    return "[" + ",".join(f"[{w},{'pos' if p == UP else 'neg'}]" for w, p in pols) + "]"


def _polarity_counts(gold: list, pred: list) -> dict[str, int]:
    """True positives and sizes of the multisets of (word, polarity), for up and for down."""
    out = {}
    for pol in (UP, DOWN):
        g = Counter(w for w, p in gold if p == pol)
        q = Counter(w for w, p in pred if p == pol)
        out[f"{pol}_tp"] = sum((g & q).values())
        out[f"{pol}_gold"] = sum(g.values())
        out[f"{pol}_pred"] = sum(q.values())
    return out


# ---------------------------------------------------------------------------------------------------------
# DRS clausal form and clause matching

_BOX = re.compile(r"b\d+\Z")
_REF = re.compile(r"x\d+\Z")
_PRED = re.compile(r"[a-z][a-z_]*\Z")
_BOX_OPS = {"NOT": 1, "IMP": 2, "DIS": 2}


def parse_drs(text: Any) -> list[tuple[str, ...]]:
    """The clauses of a DRS (``b1 REF x1 [SEP] b1 cat x1 [SEP] ...``) as token tuples, checked: every clause
    starts with a box variable; ``REF`` takes one referent, ``NOT`` one box, ``IMP``/``DIS`` two boxes, a
    lower-case predicate one or two referents; every referent in a condition is introduced by some ``REF``
    and every box that an operator points to has clauses. :class:`Malformed` otherwise."""
    text = _need_string(text)
    clauses = []
    for k, piece in enumerate(text.split("[SEP]")):
        toks = tuple(piece.split())
        if not toks:
            raise Malformed("empty_clause", f"clause {k + 1} is empty")
        if len(toks) < 3:
            raise Malformed("truncated", f"clause {k + 1} {piece.strip()!r} is incomplete")
        if not _BOX.match(toks[0]):
            raise Malformed("bad_clause", f"clause {k + 1} does not start with a box variable: {piece.strip()!r}")
        op, args = toks[1], toks[2:]
        if op == "REF":
            ok = len(args) == 1 and _REF.match(args[0])
        elif op in _BOX_OPS:
            ok = len(args) == _BOX_OPS[op] and all(_BOX.match(a) for a in args)
        elif _PRED.match(op):
            ok = len(args) in (1, 2) and all(_REF.match(a) for a in args)
        elif op.isupper():
            raise Malformed("unknown_operator", f"{op!r} in clause {k + 1}")
        else:
            raise Malformed("bad_clause", f"{op!r} in clause {k + 1} is neither an operator nor a predicate")
        if not ok:
            raise Malformed("bad_clause", f"wrong arguments in clause {k + 1}: {piece.strip()!r}")
        clauses.append(toks)
    introduced = {c[2] for c in clauses if c[1] == "REF"}
    boxes = {c[0] for c in clauses}
    for c in clauses:
        if c[1] in _BOX_OPS:
            missing = [b for b in c[2:] if b not in boxes]
            if missing:
                raise Malformed("missing_box", f"box {missing[0]} has no clauses")
        elif c[1] != "REF":
            unbound = [x for x in c[2:] if x not in introduced]
            if unbound:
                raise Malformed("unbound_referent", f"{unbound[0]} has no REF clause")
    return clauses


class _Side:
    """A clause multiset: distinct clauses with counts, their shapes (variables blanked) and variables."""

    def __init__(self, clauses: Sequence[tuple[str, ...]]) -> None:
        counts = Counter(clauses)
        self.clauses = list(counts)
        self.count = [counts[c] for c in self.clauses]
        self.vars: list[str] = []
        index: dict[str, int] = {}
        self.shape: list[tuple] = []
        self.args: list[tuple[int, ...]] = []
        for c in self.clauses:
            shape, args = [], []
            for tok in c:
                if _BOX.match(tok) or _REF.match(tok):
                    shape.append("B" if tok[0] == "b" else "X")
                    if tok not in index:
                        index[tok] = len(self.vars)
                        self.vars.append(tok)
                    args.append(index[tok])
                else:
                    shape.append(tok)
            self.shape.append(tuple(shape))
            self.args.append(tuple(args))
        self.kind = [v[0] for v in self.vars]
        self.occurs: list[list[int]] = [[] for _ in self.vars]
        for ci, args in enumerate(self.args):
            for v in set(args):
                self.occurs[v].append(ci)

    def colours(self, rounds: int = 4) -> list:
        """Colour refinement of the variables (shape and position of their clauses, then neighbours' colours),
        comparable between two sides because colours are the signatures themselves, hashed."""
        col = [hash(k) for k in self.kind]
        for _ in range(rounds):
            new = []
            for v in range(len(self.vars)):
                sig = sorted(
                    (hash(self.shape[ci]), pos, tuple(col[a] for a in self.args[ci]), self.count[ci])
                    for ci in self.occurs[v]
                    for pos, a in enumerate(self.args[ci]) if a == v
                )
                new.append(hash((col[v], tuple(sig))))
            col = new
        return col


class _OutOfNodes(Exception):
    """The branch and bound spent its budget; ``args[0]`` is the best count found so far (a lower bound)."""


def _match_count(gold: _Side, pred: _Side, budget: int, node_budget: int | None = None) -> int:
    """The largest number of clauses matched by a one-to-one, kind-preserving map of gold variables to
    predicted variables: an exact branch and bound (:class:`_ClauseMatch`); :class:`_OutOfNodes` (carrying the
    best count found) once it has spent ``budget`` work units (or visited ``node_budget`` nodes, the old limit,
    kept for ``bench/``). A unit is one (clause, candidate) check, charged before the check is made, so a node
    of a large pair costs what it does: the budget bounds the time, not just the nodes."""
    return _ClauseMatch(gold, pred, budget, node_budget).best_count()


class _ClauseMatch:
    """One branch-and-bound search of :func:`_match_count`.

    Bound at a node: the clauses already decided, plus, per clause shape, the smaller of (gold clauses still
    open that some predicted clause of their shape can match under the partial map) and (predicted clauses
    of that shape not yet used). Variables are assigned most-constrained first; a variable's candidates are
    the predicted variables that keep most of its clauses matchable (colour refinement breaks ties), so the
    first complete map is a good greedy one and later branches are cut by the bound. Leaving a variable
    unmapped is the last option of every variable."""

    def __init__(self, gold: _Side, pred: _Side, budget: int, node_budget: int | None):
        self.gold, self.pred = gold, pred
        self.left, self.node_budget, self.nodes = budget, node_budget, 0
        self.pred_index = {(shape, args): ci for ci, (shape, args) in enumerate(zip(pred.shape, pred.args,
                                                                                       strict=True))}
        pred_by_shape: dict[tuple, list[int]] = defaultdict(list)
        for ci, shape in enumerate(pred.shape):
            pred_by_shape[shape].append(ci)
        self.cand_args = [[pred.args[pc] for pc in pred_by_shape.get(gold.shape[ci], ())]
                          for ci in range(len(gold.clauses))]
        self.live = [ci for ci in range(len(gold.clauses)) if self.cand_args[ci]]
        self.shape_left = {shape: sum(pred.count[pc] for pc in pcs) for shape, pcs in pred_by_shape.items()}
        self.base, self.open_clauses = self._variable_free_clauses()
        self.variables = sorted({a for ci in self.open_clauses for a in gold.args[ci]})
        self.clauses_of = {v: [ci for ci in gold.occurs[v] if self.cand_args[ci]] for v in self.variables}
        # what one candidates() call costs at most, in units: a matchable() check of clause ci tries
        # len(cand_args[ci]) candidates
        same_kind = {kind: sum(k == kind for k in pred.kind) for kind in set(gold.kind)}
        self.candidates_cost = {v: same_kind[gold.kind[v]] * (1 + sum(len(self.cand_args[ci])
                                                                        for ci in self.clauses_of[v]))
                                for v in self.variables}
        self.mapping = [-1] * len(gold.vars)  # -1: not assigned yet, -2: left unmapped
        self.taken = [False] * len(pred.vars)
        self.gcol, self.pcol = gold.colours(), pred.colours()
        self.best = self.base

    def _variable_free_clauses(self) -> tuple[int, list[int]]:
        """(the count of matched clauses without variables: matched or not whatever the map; the clauses with
        variables that some predicted clause of their shape may match)."""
        base, open_clauses = 0, []
        for ci in self.live:
            if self.gold.args[ci]:
                open_clauses.append(ci)
                continue
            pc = self.pred_index.get((self.gold.shape[ci], ()))
            if pc is not None:
                got = min(self.gold.count[ci], self.pred.count[pc])
                base += got
                self.shape_left[self.gold.shape[ci]] -= got
        return base, open_clauses

    def best_count(self) -> int:
        if not self.live:
            return 0
        self.ceiling = self.bound(self.base, self.open_clauses)
        self.search(self.base, self.open_clauses, self.variables)
        return self.best

    def spend(self, units: int) -> None:
        self.left -= units
        if self.left < 0:
            raise _OutOfNodes(self.best)

    def matchable(self, ci: int) -> bool:
        mapping, taken = self.mapping, self.taken
        for pargs in self.cand_args[ci]:
            for a, w in zip(self.gold.args[ci], pargs, strict=True):
                m = mapping[a]
                if m != w and (m != -1 or taken[w]):
                    break
            else:
                return True
        return False

    def gain(self, ci: int) -> int:
        pc = self.pred_index.get((self.gold.shape[ci], tuple(self.mapping[a] for a in self.gold.args[ci])))
        return 0 if pc is None else min(self.gold.count[ci], self.pred.count[pc])

    def bound(self, score: int, pending: list[int]) -> int:
        self.spend(len(pending) + sum(len(self.cand_args[ci]) for ci in pending))
        possible: dict[tuple, int] = defaultdict(int)
        for ci in pending:
            if self.matchable(ci):
                possible[self.gold.shape[ci]] += self.gold.count[ci]
        return score + sum(min(n, self.shape_left[shape]) for shape, n in possible.items())

    def candidates(self, v: int) -> list[int]:
        """Predicted variables that keep at least one clause of ``v`` matchable, best first."""
        self.spend(self.candidates_cost[v])
        scored = []
        for w in range(len(self.pred.vars)):
            if self.taken[w] or self.pred.kind[w] != self.gold.kind[v]:
                continue
            self.mapping[v] = w
            self.taken[w] = True
            keep = sum(self.gold.count[ci] for ci in self.clauses_of[v] if self.matchable(ci))
            self.taken[w] = False
            if keep:
                scored.append((-keep, self.pcol[w] != self.gcol[v], w))
        self.mapping[v] = -1
        scored.sort()
        return [w for _, _, w in scored]

    def search(self, score: int, pending: list[int], todo: list[int]) -> bool:
        """Depth-first; True once the ceiling is reached (nothing can beat it, the search stops)."""
        self.nodes += 1
        if self.node_budget is not None and self.nodes > self.node_budget:
            raise _OutOfNodes(self.best)
        if not todo:
            self.best = max(self.best, score)
            return self.best >= self.ceiling
        # most constrained variable first: fewest candidates, then most open clauses
        options = [(self.candidates(v), v) for v in todo]
        ws, v = min(options, key=lambda o: (len(o[0]), -len(self.clauses_of[o[1]]), o[1]))
        rest = [u for u in todo if u != v]
        return any(self.try_assignment(v, w, score, pending, rest) for w in [*ws, -2])

    def try_assignment(self, v: int, w: int, score: int, pending: list[int], rest: list[int]) -> bool:
        """Map ``v`` to ``w`` (-2: unmapped), search below, undo; True when the ceiling was reached."""
        gold, mapping = self.gold, self.mapping
        self.spend(len(pending))
        mapping[v] = w
        if w >= 0:
            self.taken[w] = True
        decided = [ci for ci in pending if all(mapping[a] != -1 for a in gold.args[ci])]
        still = [ci for ci in pending if any(mapping[a] == -1 for a in gold.args[ci])]
        gains = [(ci, self.gain(ci)) for ci in decided]
        for ci, g in gains:
            self.shape_left[gold.shape[ci]] -= g
        got = score + sum(g for _, g in gains)
        finished = self.bound(got, still) > self.best and self.search(got, still, rest)
        for ci, g in gains:
            self.shape_left[gold.shape[ci]] += g
        mapping[v] = -1
        if w >= 0:
            self.taken[w] = False
        return finished


def drs_match(gold: Any, prediction: Any) -> dict[str, Any]:
    """COUNTER-style clause matching at its exact optimum: ``{"matched", "gold", "pred", "malformed"}`` where
    ``matched`` is the largest number of clauses that one one-to-one renaming of the prediction's box
    variables and referents makes identical to gold clauses (each clause used once; duplicates count as
    often as they occur on both sides). A malformed prediction matches nothing (``malformed`` gives the
    reason, ``pred`` counts its ``[SEP]``-separated pieces); a malformed gold raises :class:`Malformed`."""
    g = parse_drs(gold)
    try:
        p = parse_drs(prediction)
    except Malformed as err:
        n = len([s for s in prediction.split("[SEP]") if s.strip()]) if isinstance(prediction, str) else 0
        return {"matched": 0, "gold": len(g), "pred": n, "malformed": err.reason}
    matched, proven = _drs_cached(tuple(g), tuple(p))
    out = {"matched": matched, "gold": len(g), "pred": len(p), "malformed": None}
    if not proven:  # undecided, only for garbage far beyond the data (see DRS_SEARCH_BUDGET): a lower bound
        out["unproven"] = True
    return out


# The work one pair may cost, in deterministic units (not seconds, so the verdict does not depend on the
# machine's load), as SEM's budget bounds its search. The branch and bound spends up to DRS_SEARCH_BUDGET
# (clause checks; the deepest productivity pairs need under 70,000); then the same problem goes to z3's MaxSAT
# engine if it has at most DRS_OPTIMIZE_MAX_TERMS variables, with DRS_OPTIMIZE_RLIMIT resource units. A pair
# that exhausts them is undecided (``unproven``; only random clause graphs far beyond any SyGNS DRS): it keeps
# the best count found, a lower bound. The worst case, about a second, is measured by bench/sygns_eval_bench.py.
DRS_SEARCH_BUDGET = 2_000_000
DRS_OPTIMIZE_MAX_TERMS = 5_000
DRS_OPTIMIZE_RLIMIT = 5_000_000


@lru_cache(maxsize=16_384)
def _drs_cached(gold: tuple, pred: tuple) -> tuple[int, bool]:
    """(matched clauses, proven optimal)."""
    if Counter(gold) == Counter(pred):
        return len(gold), True
    g, p = _Side(gold), _Side(pred)
    try:
        return _match_count(g, p, DRS_SEARCH_BUDGET), True
    except _OutOfNodes as out:
        return _optimize_match(g, p, out.args[0], DRS_OPTIMIZE_RLIMIT, DRS_OPTIMIZE_MAX_TERMS)


def _optimize_size(gold: _Side, pred: _Side) -> int:
    """How many variables the MaxSAT problem of a pair has (its build time grows with them)."""
    pred_shapes = Counter(pred.shape)
    kinds = Counter(pred.kind)
    return sum(pred_shapes[shape] for shape in gold.shape) + sum(kinds[k] for k in gold.kind)


def _optimize_match(gold: _Side, pred: _Side, lower: int, rlimit: int,
                    max_terms: int | None = None) -> tuple[int, bool]:
    """The same optimum as :func:`_match_count`, as a weighted MaxSAT problem for z3: ``m[v][w]`` (gold
    variable v maps to predicted w, at most one each way), ``y[c][p]`` (gold clause c matched to predicted p,
    which needs every argument pair mapped; at most one each way). Returns ``(best, proven)``; past ``rlimit``
    resource units the best of ``lower`` and z3's last model, unproven; ``(lower, False)`` without building it
    when it has more than ``max_terms`` variables."""
    if max_terms is not None and _optimize_size(gold, pred) > max_terms:
        return lower, False
    import z3

    ctx = z3.Context()
    opt = z3.Optimize(ctx=ctx)
    opt.set("rlimit", rlimit)
    m = {}
    for v in range(len(gold.vars)):
        for w in range(len(pred.vars)):
            if gold.kind[v] == pred.kind[w]:
                m[v, w] = z3.Bool(f"m{v}_{w}", ctx)
    for v in range(len(gold.vars)):
        row = [m[v, w] for w in range(len(pred.vars)) if (v, w) in m]
        if len(row) > 1:
            opt.add(z3.AtMost(*row, 1))
    for w in range(len(pred.vars)):
        col = [m[v, w] for v in range(len(gold.vars)) if (v, w) in m]
        if len(col) > 1:
            opt.add(z3.AtMost(*col, 1))
    pred_by_shape: dict[tuple, list[int]] = defaultdict(list)
    for pc, shape in enumerate(pred.shape):
        pred_by_shape[shape].append(pc)
    terms, per_pred = [], defaultdict(list)
    for c, shape in enumerate(gold.shape):
        ys = []
        for pc in pred_by_shape.get(shape, ()):
            y = z3.Bool(f"y{c}_{pc}", ctx)
            need = [m[a, b] for a, b in zip(gold.args[c], pred.args[pc], strict=True)]
            if need:
                opt.add(z3.Implies(y, z3.And(*need)))
            ys.append(y)
            per_pred[pc].append(y)
            terms.append(z3.If(y, z3.IntVal(min(gold.count[c], pred.count[pc]), ctx), z3.IntVal(0, ctx)))
        if len(ys) > 1:
            opt.add(z3.AtMost(*ys, 1))
    for ys in per_pred.values():
        if len(ys) > 1:
            opt.add(z3.AtMost(*ys, 1))
    if not terms:
        return 0, True
    total = z3.Sum(terms)
    opt.maximize(total)
    result = opt.check()
    if result == z3.sat:
        return max(lower, opt.model().eval(total).as_long()), True
    return lower, False


# ---------------------------------------------------------------------------------------------------------
# One pair, and aggregation


def detect_form(reference: str) -> str:
    """The form of a gold SyGNS meaning: ``drs`` (clauses of box variables), ``fol`` (has parentheses) or
    ``vf``."""
    first = reference.split(maxsplit=1)[:1]
    if first and _BOX.match(first[0]):
        return "drs"
    return "fol" if "(" in reference else "vf"


def _check_form(form: str) -> None:
    if form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)} (or 'auto'), not {form!r}")


@_with_headroom
def score_pair(prediction: Any, reference: str, form: str = "fol", *, rlimit: int = DEFAULT_RLIMIT,
               timeout_ms: int = DEFAULT_TIMEOUT_MS) -> dict[str, Any]:
    """The verdicts of one prediction (JSON-serialisable). FOL and VF: ``malformed`` (reason or None),
    ``g_to_p``, ``p_to_g`` (True / False / None = undecided) and polarity counts ``up_tp``, ``up_gold``,
    ``up_pred``, ``down_*``. DRS: ``malformed``, ``matched``, ``gold``, ``pred`` clause counts. A malformed
    *reference* raises ``ValueError`` (usually a wrong ``form``)."""
    if form == "auto":
        form = detect_form(reference)
    _check_form(form)
    if form == "drs":
        try:
            return drs_match(reference, prediction)
        except Malformed as err:
            raise ValueError(f"reference is not a SyGNS DRS ({err}); pass the form the references are in") from None
    try:
        gold_phi = _as_formula(reference, form)
        gold_pol = polarities(reference, form)
    except Malformed as err:
        raise ValueError(
            f"reference is not a SyGNS {form.upper()} ({err}); pass the form the references are in") from None
    out: dict[str, Any] = {"malformed": None, "g_to_p": False, "p_to_g": False}
    try:
        pred_phi = _as_formula(prediction, form)
        pred_pol = polarities(prediction, form)
    except Malformed as err:
        out["malformed"] = err.reason
        out.update(_polarity_counts(gold_pol, []))
        return out
    verdict = entailment(gold_phi, pred_phi, rlimit=rlimit, timeout_ms=timeout_ms)
    out["g_to_p"], out["p_to_g"] = verdict["g_to_p"], verdict["p_to_g"]
    out.update(_polarity_counts(gold_pol, pred_pol))
    return out


def _ratio(num: int, den: int, empty: float) -> float:
    return num / den if den else empty


def _prf(tp: int, gold: int, pred: int) -> tuple[float, float, float]:
    """Precision, recall, F1 of multiset counts. Nothing to find and nothing predicted is perfect (1.0); an
    empty side against a non-empty one scores 0."""
    precision = _ratio(tp, pred, 1.0 if gold == 0 else 0.0)
    recall = _ratio(tp, gold, 1.0 if pred == 0 else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


LEVELS = {
    "fol": ("entailment_g_to_p", "entailment_p_to_g", "equivalence", "undecided", "malformed",
            "polarity_up_precision", "polarity_up_recall", "polarity_up_f1",
            "polarity_down_precision", "polarity_down_recall", "polarity_down_f1"),
    "drs": ("counter_precision", "counter_recall", "counter_f1", "counter_mean_f1", "counter_unproven",
            "malformed"),
}
LEVELS["vf"] = LEVELS["fol"]


def aggregate(verdicts: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Scores in [0, 1] of a list of :func:`score_pair` verdicts of one form (empty dict for an empty list).

    FOL / VF: the fraction of pairs where gold entails prediction (``entailment_g_to_p``), the converse
    (``entailment_p_to_g``), both (``equivalence``); ``undecided`` the fraction with a direction undecided
    (counted as not entailed above); ``malformed``; polarity precision / recall / F1 for upward and for
    downward words, micro-averaged over the multisets of (word, polarity). DRS: clause precision / recall /
    F1 micro-averaged over clauses (``counter_*``), ``counter_mean_f1`` the mean of per-pair F1,
    ``counter_unproven`` the fraction of pairs whose optimum was not proven within the budget (garbage far
    from any SyGNS DRS; their count is the best found, a lower bound)."""
    n = len(verdicts)
    if not n:
        return {}
    malformed = sum(v["malformed"] is not None for v in verdicts) / n
    if "matched" in verdicts[0]:
        matched = sum(v["matched"] for v in verdicts)
        gold = sum(v["gold"] for v in verdicts)
        pred = sum(v["pred"] for v in verdicts)
        p, r, f = _prf(matched, gold, pred)
        mean_f1 = sum(_prf(v["matched"], v["gold"], v["pred"])[2] for v in verdicts) / n
        unproven = sum(bool(v.get("unproven")) for v in verdicts) / n
        return {"counter_precision": p, "counter_recall": r, "counter_f1": f, "counter_mean_f1": mean_f1,
                "counter_unproven": unproven, "malformed": malformed}
    out = {
        "entailment_g_to_p": sum(v["g_to_p"] is True for v in verdicts) / n,
        "entailment_p_to_g": sum(v["p_to_g"] is True for v in verdicts) / n,
        "equivalence": sum(v["g_to_p"] is True and v["p_to_g"] is True for v in verdicts) / n,
        "undecided": sum(v["g_to_p"] is None or v["p_to_g"] is None for v in verdicts) / n,
        "malformed": malformed,
    }
    for pol in (UP, DOWN):
        tp = sum(v[f"{pol}_tp"] for v in verdicts)
        gold = sum(v[f"{pol}_gold"] for v in verdicts)
        pred = sum(v[f"{pol}_pred"] for v in verdicts)
        p, r, f = _prf(tp, gold, pred)
        out[f"polarity_{pol}_precision"], out[f"polarity_{pol}_recall"], out[f"polarity_{pol}_f1"] = p, r, f
    return out


def score_all(predictions: Iterable[Any], references: Iterable[str], form: str = "fol",
              **kwargs: Any) -> list[dict[str, Any]]:
    """:func:`score_pair` for each pair."""
    return [score_pair(p, r, form, **kwargs) for p, r in zip(predictions, references, strict=True)]
