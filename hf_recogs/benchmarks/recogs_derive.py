"""Pure derivations of the ReCOGS family from COGS rows (docs/DATASETS.md §3).

Every function here works on plain rows ``(sentence, lf, category)`` (three strings, the upstream TSV
columns) and touches no file, network or global state; the randomised ones take a ``random.Random``.
Given the pinned COGS files they rebuild, byte for byte, the upstream files of ``cogs_token_removal``,
``cogs_concat``, ``cogs_preposing``, ``cogs_preposing+sprinkles``, ``recogs_positional_index`` and
``variable_free`` (see ``bench/check_derivations.py`` and ``tests/test_cogs_recogs.py``). The released
ReCOGS (``recogs_v1``/``recogs_v2``) cannot be rebuilt byte for byte (their random index names depend on
Python's per-process string hashing); :func:`regenerated_recogs` builds a documented deterministic
equivalent that differs from them only in the names of the indices.

Conventions (docs/DATASETS.md §1.3): a sentence is words separated by single spaces, the final ``.`` is a
word; word positions are 0-based; an LF is tokens separated by single spaces.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..logical_forms import Atom, Variable, parse

Row = tuple[str, str, str]

__all__ = [
    "RECOGS_INDEX_POOL",
    "REMOVAL_SETS",
    "Conjunct",
    "DerivationError",
    "canonicalise",
    "cogs_concat_train",
    "cogs_preposing_sprinkles_train",
    "cogs_preposing_train",
    "concat_sentences",
    "dedup_rows",
    "introsort_argsort",
    "length_order",
    "parse_conjuncts",
    "parse_tsv",
    "preposing_pass",
    "recogs_concat_lf",
    "recogs_eval",
    "recogs_pos_train",
    "recogs_translate",
    "regenerated_recogs",
    "remove_tokens",
    "rename_indices",
    "select_triples",
    "sprinkle_pass",
    "token_removal",
    "variable_free",
    "variable_free_rows",
    "write_tsv",
]


class DerivationError(ValueError):
    """A row that a derivation cannot take: a malformed TSV, or an LF without the documented COGS shape.

    Whether an LF is well formed at all is decided by the one LF grammar,
    :func:`hf_recogs.logical_forms.parse`; this module adds only the COGS-specific shape of its conjuncts.
    """


# --------------------------------------------------------------------------------------------------
# Reading and writing (docs/DATASETS.md §3.2)


def parse_tsv(data: bytes | str) -> list[Row]:
    """Rows of an upstream TSV: split on TAB, every row ended by ``\\n``, exactly three fields."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if text and not text.endswith("\n"):
        raise DerivationError("TSV text must end with a newline after its last row")
    rows = []
    for number, line in enumerate(text.split("\n")[:-1], start=1):
        fields = line.split("\t")
        if len(fields) != 3:
            raise DerivationError(f"TSV line {number} has {len(fields)} fields, expected 3: {line[:80]!r}")
        rows.append((fields[0], fields[1], fields[2]))
    return rows


def write_tsv(rows: Iterable[Sequence[str]]) -> bytes:
    """Upstream bytes: fields joined by TAB, ``\\n`` after every row, UTF-8, nothing quoted."""
    out = []
    for row in rows:
        for field in row:
            if "\t" in field or "\n" in field:
                raise DerivationError(
                    f"field {field[:60]!r} contains a TAB or newline; it cannot be written"
                )
        out.append("\t".join(row) + "\n")
    return "".join(out).encode("utf-8")


def dedup_rows(rows: Iterable[Row]) -> list[Row]:
    """Drop exact duplicate rows, keeping the first occurrence (pandas ``drop_duplicates``)."""
    seen: set[Row] = set()
    out = []
    for row in rows:
        if row not in seen:
            seen.add(row)
            out.append(row)
    return out


# --------------------------------------------------------------------------------------------------
# COGS conjuncts (docs/DATASETS.md §2.2, §3.2)

_VAR = re.compile(r"^x _ (\d+)$")


@dataclass(frozen=True)
class Conjunct:
    """One COGS conjunct: ``[* ]noun ( x _ i )``, ``pred . role ( A , B )`` or ``noun . nmod . prep ( A , B )``."""

    labels: tuple[str, ...]  # e.g. ("eat", "agent") or ("ring", "nmod", "beside"); the noun of an entity
    args: tuple[str, ...]  # "x _ 3" or a proper name
    definite: bool = False

    @property
    def is_entity(self) -> bool:
        return len(self.args) == 1

    @property
    def is_nmod(self) -> bool:
        return len(self.labels) == 3

    def text(self) -> str:
        head = " . ".join(self.labels)
        if self.definite:
            head = "* " + head
        return f"{head} ( {' , '.join(self.args)} )"


def _var_index(arg: str) -> int | None:
    m = _VAR.match(arg)
    return int(m.group(1)) if m else None


def _conjunct(atom: Atom, lf: str) -> Conjunct:
    """The COGS reading of one parsed atom; the shapes COGS never writes are errors."""
    definite = atom.label.startswith("*")
    labels = tuple(atom.label.lstrip("*").split("."))
    args = tuple(f"x _ {a.name[2:]}" if isinstance(a, Variable) else a.name for a in atom.args)

    def bad(why: str) -> DerivationError:
        return DerivationError(f"malformed COGS conjunct {Conjunct(labels, args, definite).text()!r} ({why}) "
                               f"in LF {lf!r}")

    is_var = [isinstance(a, Variable) for a in atom.args]
    if len(args) == 1:
        if len(labels) != 1 or not is_var[0]:
            raise bad("an entity term is 'noun ( x _ N )'")
        return Conjunct(labels, args, definite)
    if definite:
        raise bad("only entity terms can be definite")
    if not (len(labels) == 2 or (len(labels) == 3 and labels[1] == "nmod")):
        raise bad("a two-place term is 'pred . role' or 'noun . nmod . prep'")
    if not is_var[0]:
        raise bad("the first argument of a two-place term must be a variable")
    if len(labels) == 3 and not is_var[1]:
        raise bad("nmod arguments must be variables")
    if args[1] == "?":
        raise bad("'?' is SLOG's, not a COGS argument")
    return Conjunct(labels, args, definite)


def parse_conjuncts(lf: str) -> list[Conjunct]:
    """The conjuncts of a non-primitive COGS LF in LF order, read by the LF grammar of
    :mod:`hf_recogs.logical_forms` (``fmt="cogs"``)."""
    if _is_primitive(lf):
        raise DerivationError(f"primitive LF {lf!r} has no conjuncts to parse")
    form = parse(lf, fmt="cogs")
    if not form:
        raise DerivationError(f"malformed COGS LF {lf!r}: {form}")
    return [_conjunct(atom, lf) for atom in form.atoms]


def _is_primitive(lf: str) -> bool:
    tokens = lf.split(" ")
    return len(tokens) == 1 or "LAMBDA" in tokens


def _layout(defs: Sequence[Conjunct], body: Sequence[Conjunct]) -> str:
    body_text = " AND ".join(c.text() for c in body)
    if not defs:
        return body_text
    return " ; ".join(c.text() for c in defs) + " ; " + body_text


def _split_defs_body(lf: str) -> tuple[list[Conjunct], list[Conjunct]]:
    conjuncts = parse_conjuncts(lf)
    defs = sorted({c for c in conjuncts if c.definite}, key=lambda c: _var_index(c.args[0]))
    body = [c for c in conjuncts if not c.definite]
    return defs, body


def canonicalise(lf: str) -> str:
    """DEFS := definite terms, deduplicated, sorted by index; BODY := the rest in order.

    See docs/DATASETS.md §3.2.

    The identity on every COGS LF; primitives are returned unchanged.
    """
    if _is_primitive(lf):
        return lf
    return _layout(*_split_defs_body(lf))


def _body_key(conjunct: Conjunct, words: Sequence[str]) -> tuple[int, int]:
    first = _var_index(conjunct.args[0])
    if len(conjunct.args) == 1:
        return (first, -1)
    second = _var_index(conjunct.args[1])
    if second is None:  # a proper name: its word position
        try:
            second = list(words).index(conjunct.args[1])
        except ValueError:
            raise DerivationError(
                f"proper name {conjunct.args[1]!r} of {conjunct.text()!r} is not a word of {' '.join(words)!r}"
            ) from None
    return (first, second)


def _map_numbers(lf: str, mapping) -> str:
    return " ".join(str(mapping(int(t))) if t.isdigit() else t for t in lf.split(" "))


# --------------------------------------------------------------------------------------------------
# cogs_token_removal (docs/DATASETS.md §3.3)

REMOVAL_SETS: dict[str, frozenset[str]] = {
    "x_": frozenset({"x", "_"}),
    "x_()": frozenset({"x", "_", "(", ")"}),
    "x_(,)": frozenset({"x", "_", "(", ",", ")"}),
}


def remove_tokens(lf: str, removal: str | Iterable[str]) -> str:
    """Delete every token of ``lf`` in the removal set (a key of ``REMOVAL_SETS`` or the tokens)."""
    tokens = REMOVAL_SETS[removal] if isinstance(removal, str) else frozenset(removal)
    return " ".join(t for t in lf.split(" ") if t not in tokens)


def token_removal(rows: Iterable[Row], removal: str) -> list[Row]:
    if removal not in REMOVAL_SETS:
        raise ValueError(f"unknown removal set {removal!r}; known: {', '.join(REMOVAL_SETS)}")
    return [(s, remove_tokens(lf, removal), c) for s, lf, c in rows]


# --------------------------------------------------------------------------------------------------
# numpy's classic introsort argsort (pandas sort_values(kind="quicksort")), docs/DATASETS.md §3.2

_SMALL_QUICKSORT = 15


def _aheapsort(keys: Sequence, t: list[int], lo: int, n: int) -> None:
    """numpy ``aheapsort`` on ``t[lo:lo+n]`` (1-based heap indexing as in numpy)."""

    def a(i: int) -> int:
        return t[lo + i - 1]

    def seta(i: int, value: int) -> None:
        t[lo + i - 1] = value

    def sift_down(i: int, tmp: int, size: int) -> None:
        j = i << 1
        while j <= size:
            if j < size and keys[a(j)] < keys[a(j + 1)]:
                j += 1
            if keys[tmp] < keys[a(j)]:
                seta(i, a(j))
                i = j
                j += j
            else:
                break
        seta(i, tmp)

    for node in range(n >> 1, 0, -1):
        sift_down(node, a(node), n)
    while n > 1:
        tmp = a(n)
        seta(n, a(1))
        n -= 1
        sift_down(1, tmp, n)


def introsort_argsort(keys: Sequence, depth_limit: int | None = None) -> list[int]:
    """``numpy.argsort(keys, kind="quicksort")`` as numpy computed it before its SIMD sorts.

    Median-of-three quicksort, explicit stack (larger side pushed), insertion sort for ranges of at most
    16 elements, heapsort when the depth limit ``2 * floor(log2 n)`` is exhausted. Not stable: the tie
    order is part of the upstream files. ``depth_limit`` exists for tests only.
    """
    n = len(keys)
    t = list(range(n))
    if n < 2:
        return t
    v = keys
    cdepth = (n.bit_length() - 1) * 2 if depth_limit is None else depth_limit
    stack: list[tuple[int, int, int]] = []
    pl, pr = 0, n - 1
    while True:
        if cdepth < 0:  # numpy checks the depth only here, i.e. for ranges popped from the stack
            _aheapsort(v, t, pl, pr - pl + 1)
        else:
            while pr - pl > _SMALL_QUICKSORT:
                pm = pl + ((pr - pl) >> 1)
                if v[t[pm]] < v[t[pl]]:
                    t[pm], t[pl] = t[pl], t[pm]
                if v[t[pr]] < v[t[pm]]:
                    t[pr], t[pm] = t[pm], t[pr]
                if v[t[pm]] < v[t[pl]]:
                    t[pm], t[pl] = t[pl], t[pm]
                vp = v[t[pm]]
                pi = pl
                pj = pr - 1
                t[pm], t[pj] = t[pj], t[pm]
                while True:
                    pi += 1
                    while v[t[pi]] < vp:
                        pi += 1
                    pj -= 1
                    while vp < v[t[pj]]:
                        pj -= 1
                    if pi >= pj:
                        break
                    t[pi], t[pj] = t[pj], t[pi]
                pk = pr - 1
                t[pi], t[pk] = t[pk], t[pi]
                cdepth -= 1
                if pi - pl < pr - pi:  # push the larger side, go on with the smaller
                    stack.append((pi + 1, pr, cdepth))
                    pr = pi - 1
                else:
                    stack.append((pl, pi - 1, cdepth))
                    pl = pi + 1
            for pi in range(pl + 1, pr + 1):  # insertion sort, strict comparison
                vi = t[pi]
                vp = v[vi]
                pj = pi
                while pj > pl and vp < v[t[pj - 1]]:
                    t[pj] = t[pj - 1]
                    pj -= 1
                t[pj] = vi
        if not stack:
            break
        pl, pr, cdepth = stack.pop()
    return t


def length_order(rows: Sequence[Row]) -> list[int]:
    """Row positions ordered by the character length of the sentence, numpy-quicksort tie order."""
    return introsort_argsort([len(row[0]) for row in rows])


def select_triples(order: Sequence[int], k: int) -> list[tuple[int, int, int]]:
    """Triple ``i`` = sorted positions ``n-1-6i`` (S1), ``n-2-6i``, ``n-3-6i``; three skipped each time.

    See docs/DATASETS.md §3.2."""
    n = len(order)
    if k < 0 or (k > 0 and n - 3 - 6 * (k - 1) < 0):
        raise ValueError(f"cannot select {k} triples from {n} rows (needs 6k-3 <= n)")
    return [(order[n - 1 - 6 * i], order[n - 2 - 6 * i], order[n - 3 - 6 * i]) for i in range(k)]


def _words_without_stop(sentence: str) -> list[str]:
    words = sentence.split(" ")
    if len(words) < 2 or words[-1] != ".":
        raise DerivationError(
            f"sentence {sentence!r} does not end with the word '.'; it cannot be concatenated"
        )
    return words[:-1]


def _lower_det(words: list[str]) -> list[str]:
    if words and words[0] in ("The", "A"):
        return [words[0][0].lower() + words[0][1:]] + words[1:]
    return words


def concat_sentences(s1: str, s2: str, s3: str) -> tuple[str, int, int]:
    """``(sentence, offset2, offset3)``: S1, S2, S3 without their ``.`` (S3 keeps it), no conjunction.

    A following sentence that starts with ``The``/``A`` gets its first character lower-cased.
    """
    w1 = _words_without_stop(s1)
    w2 = _lower_det(_words_without_stop(s2))
    w3 = _lower_det(_words_without_stop(s3))
    off2 = len(w1)
    off3 = off2 + len(w2)
    return " ".join(w1 + w2 + w3 + ["."]), off2, off3


def _shift(lf: str, offset: int) -> str:
    return _map_numbers(lf, lambda i: i + offset) if offset else lf


def cogs_concat_train(train: Sequence[Row], k: int) -> list[Row]:
    """``cogs_concat/train_k_{k}.tsv``: the full train followed by ``k`` concatenated rows.

    See docs/DATASETS.md §3.4.

    Pool = train without ``primitive`` rows; LF = definite pieces of LF1..LF3 first, then their bodies, with
    no re-sorting (the upstream leading-space quirk for LFs without definites is kept).
    """
    pool = [row for row in train if row[2] != "primitive"]
    out = list(train)
    for a, b, c in select_triples(length_order(pool), k):
        (s1, lf1, _), (s2, lf2, _), (s3, lf3, _) = pool[a], pool[b], pool[c]
        sentence, off2, off3 = concat_sentences(s1, s2, s3)
        defs, bodies = [], []
        for lf in (lf1, _shift(lf2, off2), _shift(lf3, off3)):
            for piece in lf.split(" ; "):
                (defs if "*" in piece else bodies).append(piece)
        out.append((sentence, " ; ".join(defs) + " ; " + " AND ".join(bodies), "concat"))
    return out


# --------------------------------------------------------------------------------------------------
# Preposing and sprinkles (docs/DATASETS.md §3.5, §3.6)

PREPOSING_P = 0.05
SPRINKLE_P = 0.05


def _prepose_row(sentence: str, lf: str) -> tuple[str, str, int]:
    """Move the first nmod's NP chain to the front of the sentence; renumber and re-sort the LF."""
    defs, body = _split_defs_body(lf)
    conjuncts = defs + body
    nmods = [c for c in conjuncts if c.is_nmod]
    m = sum(1 for t in lf.split(" ") if t == "nmod")
    words = sentence.split(" ")
    prep = nmods[0].labels[2]
    try:
        q = words.index(prep)
    except ValueError:
        raise DerivationError(f"preposition {prep!r} of LF {lf!r} is not a word of {sentence!r}") from None
    # det noun prep det noun (m = 1), one more "prep det noun" per further nmod (train has m <= 2)
    start, end = q - 2, q + 3 * m
    if start < 0 or end > len(words) - 1:
        raise DerivationError(f"cannot prepose words [{start}, {end}) of {sentence!r}")
    span, before, after = words[start:end], words[:start], words[end:]
    span = [span[0].capitalize()] + span[1:]
    if before and before[0] in ("The", "A"):
        before = [before[0].lower()] + before[1:]
    new_words = span + before + after
    old_positions = list(range(start, end)) + list(range(start)) + list(range(end, len(words)))
    new_pos = {old: new for new, old in enumerate(old_positions)}
    renumbered = _map_numbers(_layout(defs, body), new_pos.__getitem__)
    defs2, body2 = _split_defs_body(renumbered)
    body2 = sorted(body2, key=lambda c: _body_key(c, new_words))
    return " ".join(new_words), _layout(defs2, body2), m


def preposing_pass(rows: Iterable[Row], rng: random.Random, p: float = PREPOSING_P) -> list[Row]:
    """One preposing pass over ``rows`` in order, drawing from ``rng`` only for LFs with an ``nmod``.

    See docs/DATASETS.md §3.5."""
    out = []
    for sentence, lf, category in rows:
        if _is_primitive(lf):
            out.append((sentence, lf, category))
            continue
        lf = canonicalise(lf)
        if "nmod" not in lf.split(" "):
            out.append((sentence, lf, category))
            continue
        if rng.random() >= p:
            out.append((sentence, lf, category))
            continue
        new_sentence, new_lf, m = _prepose_row(sentence, lf)
        out.append((new_sentence, new_lf, f"preposing_{m}"))
    return out


def sprinkle_pass(
    rows: Iterable[Row], rng: random.Random, p: float = SPRINKLE_P, category: str | None = "sprinkle"
) -> list[Row]:
    """One sprinkle pass: with probability ``p`` per row insert 1–3 ``um`` after eligible words.

    See docs/DATASETS.md §3.6.

    ``category``: the new type of a sprinkled row; ``None`` appends ``+sprinkle`` to the old type (ReCOGS_pos).
    """
    out = []
    for sentence, lf, old_category in rows:
        if rng.random() >= p:
            out.append((sentence, lf, old_category))
            continue
        words = sentence.split(" ")
        n = len(words)
        new_words: list[str] = []
        new_pos: dict[int, int] = {}
        for i, word in enumerate(words):
            new_words.append(word)
            new_pos[i] = len(new_words) - 1
            if 1 <= i <= n - 3 and rng.random() > 0.5:
                new_words.extend(["um"] * rng.choice([1, 2, 3]))
        new_lf = _map_numbers(lf, new_pos.__getitem__)
        new_category = f"{old_category}+sprinkle" if category is None else category
        out.append((" ".join(new_words), new_lf, new_category))
    return out


def cogs_preposing_train(train: Sequence[Row], seed: int = 42) -> list[Row]:
    """``cogs_preposing/train.tsv``: one preposing pass with ``Random(seed)``."""
    return preposing_pass(train, random.Random(seed))


def cogs_preposing_sprinkles_train(train: Sequence[Row], seed: int = 42) -> list[Row]:
    """``cogs_preposing+sprinkles/train.tsv``: preposing pass then sprinkle pass on one ``Random(seed)``."""
    rng = random.Random(seed)
    return sprinkle_pass(preposing_pass(train, rng), rng)


# --------------------------------------------------------------------------------------------------
# ReCOGS structural translation (docs/DATASETS.md §3.7)


def _translate_primitive(sentence: str, lf: str) -> str:
    tokens = lf.split(" ")
    if len(tokens) == 1:
        return f"LAMBDA a . {lf} ( a )"
    if len(tokens) == 7:  # noun primitive LAMBDA a . V ( a )
        return lf
    i = 0
    while tokens[i : i + 1] == ["LAMBDA"]:
        if tokens[i + 2] != ".":
            raise DerivationError(f"malformed LAMBDA binder in {lf!r}")
        i += 3
    binder, rest = tokens[:i], " ".join(tokens[i:])
    roles = []
    lemma = None
    for piece in rest.split(" AND "):
        words = piece.split(" ")
        if len(words) < 3 or words[1] != ".":
            raise DerivationError(f"malformed primitive conjunct {piece!r} in {lf!r}")
        if lemma is None:
            lemma = words[0]
        elif words[0] != lemma:
            raise DerivationError(f"primitive {lf!r} mixes predicates {lemma!r} and {words[0]!r}")
        roles.append(" ".join(words[2:]))
    return " ".join(binder) + f" {lemma} ( e ) AND " + " AND ".join(roles)


def recogs_translate(sentence: str, lf: str, nmod_first: bool = False) -> str:
    """A COGS LF in ReCOGS form with positional indices (ReCOGS_pos); docs/DATASETS.md §3.7.

    ``nmod_first=False`` places each ``nmod`` conjunct where it occurs (ReCOGS_pos, v2: word order);
    ``True`` puts all of them first in the body (v1 and the 2023-07-04 ReCOGS_pos).
    """
    if _is_primitive(lf):
        return _translate_primitive(sentence, lf)
    words = sentence.split(" ")
    prefix: dict[int, str] = {}
    body: list[str] = []
    nmods: list[str] = []

    def add_prefix(index: int, term: str) -> None:
        if prefix.get(index, term) != term:
            raise DerivationError(
                f"two entity terms for index {index} in LF {lf!r}: {prefix[index]!r}, {term!r}"
            )
        prefix[index] = term

    for c in parse_conjuncts(lf):
        if c.is_entity:
            add_prefix(_var_index(c.args[0]), c.text())
        elif c.is_nmod:
            (nmods if nmod_first else body).append(f"nmod . {c.labels[2]} ( {c.args[0]} , {c.args[1]} )")
        else:
            verb, role = c.labels
            event, arg = c.args
            if _var_index(arg) is None:
                count = words.count(arg)
                if count != 1:
                    raise DerivationError(
                        f"proper name {arg!r} occurs {count} times in {sentence!r}; ReCOGS needs exactly one"
                    )
                p = words.index(arg)
                add_prefix(p, f"{arg} ( x _ {p} )")
                arg = f"x _ {p}"
            predicate = f"{verb} ( {event} )"
            if predicate not in body:
                body.append(predicate)
            body.append(f"{role} ( {event} , {arg} )")
    body = nmods + body
    text = " AND ".join(body)
    if prefix:
        text = " ; ".join(prefix[i] for i in sorted(prefix)) + " ; " + text
    return " ".join(t for t in text.split(" ") if t not in ("x", "_"))


def recogs_eval(rows: Iterable[Row], nmod_first: bool = False) -> list[Row]:
    """ReCOGS_pos dev/test/gen: :func:`recogs_translate` on each row (no randomness)."""
    return [(s, recogs_translate(s, lf, nmod_first), c) for s, lf, c in rows]


def _prefix_body(lf: str) -> tuple[list[str], str]:
    pieces = lf.split(" ; ")
    return pieces[:-1], pieces[-1]


def recogs_concat_lf(lfs: Sequence[str], offsets: Sequence[int], nmod_first: bool = False) -> str:
    """Concatenate ReCOGS LFs: shift numbers by the word offsets, all prefixes, then all bodies in order."""
    prefix: list[str] = []
    body: list[str] = []
    for lf, offset in zip(lfs, offsets):
        p, b = _prefix_body(_shift(lf, offset))
        prefix.extend(p)
        body.extend(b.split(" AND "))
    if nmod_first:
        body = [c for c in body if c.startswith("nmod . ")] + [c for c in body if not c.startswith("nmod . ")]
    return " ; ".join(prefix + [" AND ".join(body)])


def _recogs_augmented_train(train: Sequence[Row], seed: int = 42) -> list[Row]:
    """Preposing + sprinkle passes on one ``Random(seed)``, sprinkled type ``<type>+sprinkle``.

    See docs/DATASETS.md §3.8, train step 1."""
    rng = random.Random(seed)
    return sprinkle_pass(preposing_pass(train, rng), rng, category=None)


def recogs_pos_train(train: Sequence[Row], k: int = 3072, seed: int = 42) -> list[Row]:
    """``recogs_positional_index/train.tsv``: augment, translate, append ``k`` concatenations, dedup.

    See docs/DATASETS.md §3.8."""
    rows = recogs_eval(_recogs_augmented_train(train, seed))
    extra = []
    for a, b, c in select_triples(length_order(rows), k):
        (s1, lf1, _), (s2, lf2, _), (s3, lf3, _) = rows[a], rows[b], rows[c]
        sentence, off2, off3 = concat_sentences(s1, s2, s3)
        extra.append((sentence, recogs_concat_lf((lf1, lf2, lf3), (0, off2, off3)), "concat"))
    return dedup_rows(rows + extra)


# --------------------------------------------------------------------------------------------------
# Random index names as in the released ReCOGS (docs/DATASETS.md §3.9), made deterministic

# The numeric tokens of the reference target vocabulary (all 57 occur in v1/v2 dev/test).
RECOGS_INDEX_POOL: tuple[int, ...] = tuple(range(55)) + (56, 59)

RECOGS_FLAVOURS = ("v2", "v1")


def _numbers(lf: str) -> list[int]:
    return sorted({int(t) for t in lf.split(" ") if t.isdigit()})


def _draw_names(keys: list, rng: random.Random, pool: Sequence[int], lf: str) -> dict:
    if len(keys) > len(pool):
        raise DerivationError(
            f"LF needs {len(keys)} distinct indices, the pool has only {len(pool)}: {lf[:120]!r}"
        )
    keys = list(keys)
    rng.shuffle(keys)
    return dict(zip(keys, rng.sample(list(pool), len(keys))))


def rename_indices(lf: str, rng: random.Random, pool: Sequence[int] = RECOGS_INDEX_POOL) -> str:
    """Rename the indices of a ReCOGS LF by a random bijection into ``pool``.

    Deterministic given ``rng``'s state: the distinct indices are taken in numeric order, shuffled with
    ``rng.shuffle`` and zipped with ``rng.sample(pool, k)`` (upstream took them from Python sets, whose
    order depends on string hashing; that is why the released files cannot be rebuilt byte for byte).
    """
    mapping = _draw_names(_numbers(lf), rng, pool, lf)
    return _map_numbers(lf, mapping.__getitem__) if mapping else lf


def _renamed_concat(lfs: Sequence[str], rng: random.Random, nmod_first: bool, pool: Sequence[int]) -> str:
    """Three ReCOGS LFs concatenated with fresh, distinct names for every (source, index) pair."""
    pairs = [(j, i) for j, lf in enumerate(lfs) for i in _numbers(lf)]
    mapping = _draw_names(pairs, rng, pool, " || ".join(lfs))
    renamed = [_map_numbers(lf, lambda i, j=j: mapping[(j, i)]) for j, lf in enumerate(lfs)]
    return recogs_concat_lf(renamed, (0, 0, 0), nmod_first)


def _split_rng(seed: int, split: str) -> random.Random:
    # A str seed is hashed with SHA-512 by random.seed (not with the per-process string hash): the
    # stream is the same in every process and Python >= 3.2.
    return random.Random(f"hf_recogs.recogs_regen:{seed}:{split}")


def regenerated_recogs(
    rows: Sequence[Row],
    split: str,
    seed: int = 42,
    copies: int = 5,
    concat: int = 3072,
    flavour: str = "v2",
    pool: Sequence[int] = RECOGS_INDEX_POOL,
) -> list[Row]:
    """A deterministic ReCOGS built by the recipe of the released data (docs/DATASETS.md §3.9).

    ``rows``: the COGS rows of ``split`` (``train`` takes COGS train). Same sentences, types and LF
    structure as the released ReCOGS; only the index names differ (they are drawn from a seeded RNG, one
    stream per split: ``Random("hf_recogs.recogs_regen:<seed>:<split>")``).

    - ``flavour="v2"`` (released ReCOGS, Jul 2023): train rows preposed + sprinkled exactly as upstream
      (fixed ``Random(42)``, independent of ``seed``; types ``<type>+sprinkle``), nmod in word order.
    - ``flavour="v1"`` (Mar 2023): plain COGS train rows, nmod conjuncts first.
    - train = for each of ``copies`` copies: every row renamed, then ``concat`` concatenations
      (type ``length_ood``; length sort and triple selection of docs/DATASETS.md §3.2; the three sources get
      distinct names; prefixes then bodies, for v1 all nmod conjuncts of the three bodies first); then exact
      duplicate rows are dropped (keeping the first). With the defaults: 135,563 − collisions rows
      (upstream 135,547).
    - other splits: one renamed copy of the translated rows.
    """
    if flavour not in RECOGS_FLAVOURS:
        raise ValueError(f"unknown ReCOGS flavour {flavour!r}; known: {', '.join(RECOGS_FLAVOURS)}")
    if copies < 1 or concat < 0:
        raise ValueError(f"copies must be >= 1 and concat >= 0 (got copies={copies}, concat={concat})")
    nmod_first = flavour == "v1"
    rng = _split_rng(seed, split)
    if split != "train":
        return [(s, rename_indices(lf, rng, pool), c) for s, lf, c in recogs_eval(rows, nmod_first)]
    base = rows if nmod_first else _recogs_augmented_train(rows)
    translated = recogs_eval(base, nmod_first)
    triples = select_triples(length_order(translated), concat)
    sentences = [
        concat_sentences(translated[a][0], translated[b][0], translated[c][0])[0] for a, b, c in triples
    ]
    out: list[Row] = []
    for _ in range(copies):
        out.extend((s, rename_indices(lf, rng, pool), c) for s, lf, c in translated)
        for sentence, (a, b, c) in zip(sentences, triples):
            lfs = (translated[a][1], translated[b][1], translated[c][1])
            out.append((sentence, _renamed_concat(lfs, rng, nmod_first, pool), "length_ood"))
    return dedup_rows(out)


# --------------------------------------------------------------------------------------------------
# Variable-free format (docs/DATASETS.md §3.10)


def variable_free(lf: str) -> str:
    """The Qiu et al. (2022) variable-free rendering of a COGS LF (primitives unchanged).

    Not meaning-preserving: a shared argument is printed once per use (coreference is lost).
    """
    tokens = lf.split(" ")
    if "LAMBDA" in tokens or "(" not in tokens:
        return lf
    conjuncts = parse_conjuncts(lf)
    labels: dict[str, str] = {}
    children: dict[str, list[tuple[str, str]]] = {}
    seconds: set[str] = set()
    variables: list[str] = []
    for c in conjuncts:
        for arg in c.args:
            if _var_index(arg) is not None and arg not in variables:
                variables.append(arg)
        first = c.args[0]
        if first not in labels:
            labels[first] = ("* " if c.definite else "") + c.labels[0]
        if len(c.args) == 2:
            children.setdefault(first, []).append((" . ".join(c.labels[1:]), c.args[1]))
            seconds.add(c.args[1])
    roots = [v for v in variables if v not in seconds]
    if len(roots) != 1:
        raise DerivationError(
            f"LF {lf!r} has {len(roots)} root variables ({roots}); variable-free needs one"
        )

    def show(node: str, path: tuple[str, ...]) -> str:
        if _var_index(node) is None:
            return node
        if node in path:
            raise DerivationError(f"LF {lf!r} has a cycle through {node!r}")
        if node not in labels:
            raise DerivationError(f"variable {node!r} of LF {lf!r} has no predicate of its own")
        kids = children.get(node)
        if not kids:
            return labels[node]
        inner = " , ".join(f"{edge} = {show(child, path + (node,))}" for edge, child in kids)
        return f"{labels[node]} ( {inner} )"

    return show(roots[0], ())


def variable_free_rows(rows: Iterable[Row]) -> list[Row]:
    return [(s, variable_free(lf), c) for s, lf, c in rows]
