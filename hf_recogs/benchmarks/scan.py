"""SCAN (Lake & Baroni 2018) and its published splits, as ``scan_*`` dataset configs.

What is generated and what is read (docs/DATASETS.md §4):

* The whole command space comes from our grammar and interpretation (``commands()``, ``interpret()``,
  docs/DATASETS.md §4.2): 20,910 commands with their action sequences. ``tasks.txt`` is read only for its
  line order, and every load checks that its lines are exactly the generated ones (same set, same actions).
* Rule-defined splits are generated from the grammar and the split rule: ``length``, ``addprim_jump``,
  ``addprim_turn_left``, the four ``template_*`` and the four ``filler_num*`` configs. Template and filler
  files list their lines in ``tasks.txt`` order, so ours are byte-identical to upstream. Upstream shuffled the
  length and add-primitive files (random order, not reproducible); ours list the lines in ``tasks.txt`` order
  (add-primitive train: the primitive-free commands, then the bare primitive repeated, as upstream repeats it);
  their multisets of lines equal the upstream files.
* ``scan_simple_size`` (the ``simple_split/size_variations`` files) is a rule applied to the simple split:
  train = the first ⌊p·20,910/100⌋ lines of the simple train file, test = the rest of it followed by the
  simple test file (byte-identical to upstream).
* Splits sampled at random upstream are read from the official files: ``simple``, ``fewshot`` (num, rep),
  ``addprim_complex_jump`` (num, rep) and ``mcd1``–``mcd3`` (from the unmerged pull request,
  docs/DATASETS.md §1.1).

Rows: ``input`` = the command, ``output`` = the actions (space separated), ``category``:

* length: ``actions_<n>`` with n the number of output actions (train 1–22, test 24–48), for accuracy by
  target length;
* add-primitive (both, and ``addprim_complex_jump``): ``primitive`` (the bare primitive line), ``composed``
  (any other command that contains the primitive: every test row, and the N extra train commands of
  ``addprim_complex_jump``), ``other``;
* the "around right" family (``template_jump_around_right``, ``filler_num*``, ``fewshot``): ``template`` for a
  command containing ``jump around right``, ``filler`` for one containing another ``<verb> around right`` (the
  rows the filler and few-shot trains add), ``other``; the other three templates (every verb held out):
  ``template`` for a command containing ``<verb> <template>``, ``other``;
* ``simple``, ``simple_size`` and ``mcd<i>``: the constant ``simple`` / ``mcd<i>`` (no subdivision).

``train`` is the official train file (for the rule-defined splits, our regeneration of it) and ``test`` the
official test file: SCAN has no validation split, and every SCAN paper trains on the whole train file.

Validation (ours, opt-in): with the parameter ``validation_fraction`` = f > 0 (e.g.
``load_dataset("hf_recogs", "scan_length", validation_fraction=0.1)``), a train row moves to a ``validation``
split iff ``int(sha256(b"hf_recogs/scan/validation:" + command).hexdigest()[:16], 16) / 16**16 < f``, its line
occurs exactly once in the upstream train file, and its category is not ``primitive``, ``composed`` or
``filler`` (examples that a split adds on purpose always stay in train, and repeated lines are never split
between train and validation). The rule depends only on the command: it is deterministic and order-free,
holds the same commands out in every config, and a smaller fraction holds out a subset of a larger one.
``train`` then keeps the remaining rows in upstream order.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache, partial

from ..dataset_config import DatasetConfig, Param, Row
from ..sources import SourceError, UpstreamFile, pinned, read_lines

FAMILY = "scan"
LICENSE = "BSD-3-Clause"

# ---------------------------------------------------------------------------------------------------------
# Grammar and interpretation (docs/DATASETS.md §4.2)

VERBS = ("walk", "look", "run", "jump")  # U
DIRECTIONS = ("left", "right")
ACTION = {"walk": "I_WALK", "look": "I_LOOK", "run": "I_RUN", "jump": "I_JUMP"}
TURN = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
INPUT_VOCAB = frozenset(
    ("after", "and", "around", "jump", "left", "look", "opposite", "right", "run", "thrice", "turn", "twice", "walk")
)
OUTPUT_VOCAB = frozenset(("I_WALK", "I_LOOK", "I_RUN", "I_JUMP", "I_TURN_LEFT", "I_TURN_RIGHT"))


def verb_phrases() -> list[str]:
    """V: the 34 verb phrases (4 bare verbs; 5 verbs × 2 directions × {plain, opposite, around})."""
    out = list(VERBS)
    for x in VERBS + ("turn",):
        for d in DIRECTIONS:
            out += [f"{x} {d}", f"{x} opposite {d}", f"{x} around {d}"]
    return out


def sentences() -> list[str]:
    """S: V, V twice, V thrice (102)."""
    return [f"{v}{suffix}" for v in verb_phrases() for suffix in ("", " twice", " thrice")]


def commands() -> list[str]:
    """C: S, S and S, S after S (20,910), in a fixed grammar order."""
    s = sentences()
    return s + [f"{a} {conj} {b}" for conj in ("and", "after") for a, b in itertools.product(s, s)]


def _interpret_v(words: list[str]) -> list[str]:
    if not words:
        raise ValueError("missing verb phrase")
    head = words[0]
    if head not in VERBS and head != "turn":
        raise ValueError(f"not a SCAN verb: {head!r}")
    act = [] if head == "turn" else [ACTION[head]]
    if len(words) == 1:
        if head == "turn":
            raise ValueError("'turn' needs a direction")
        return act
    direction = words[-1]
    if direction not in TURN:
        raise ValueError(f"not a SCAN direction: {direction!r}")
    turn = [TURN[direction]]
    if len(words) == 2:
        return turn + act
    if len(words) == 3 and words[1] == "opposite":
        return turn + turn + act
    if len(words) == 3 and words[1] == "around":
        return (turn + act) * 4
    raise ValueError(f"not a SCAN verb phrase: {' '.join(words)!r}")


def _interpret_s(words: list[str]) -> list[str]:
    if words and words[-1] in ("twice", "thrice"):
        return _interpret_v(words[:-1]) * (2 if words[-1] == "twice" else 3)
    return _interpret_v(words)


def interpret(command: str) -> str:
    """The action sequence of a SCAN command (space separated); ValueError for a non-command."""
    words = command.split(" ")
    for conj in ("and", "after"):
        if conj in words:
            i = words.index(conj)
            first, second = _interpret_s(words[:i]), _interpret_s(words[i + 1:])
            return " ".join(first + second if conj == "and" else second + first)
    if not command:
        raise ValueError("empty command")
    return " ".join(_interpret_s(words))


def format_line(command: str, actions: str) -> str:
    return f"IN: {command} OUT: {actions}"


def parse_line(line: str) -> tuple[str, str]:
    if not line.startswith("IN: ") or " OUT: " not in line:
        raise ValueError(f"not a SCAN line: {line[:80]!r}")
    command, actions = line[4:].split(" OUT: ", 1)
    return command, actions


def contains(command: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``command`` as contiguous whole words."""
    return f" {phrase} " in f" {command} "


# ---------------------------------------------------------------------------------------------------------
# Upstream files

def _file(path: str) -> UpstreamFile:
    return pinned("scan", path)


def _mcd_file(path: str) -> UpstreamFile:
    return pinned("scan_mcd", path)


TASKS = "tasks.txt"


@lru_cache(maxsize=1)
def _universe() -> tuple[tuple[str, str], ...]:
    """All (command, actions) pairs generated by the grammar, in ``tasks.txt`` order (checked equal)."""
    generated = {c: interpret(c) for c in commands()}
    lines = read_lines(_file(TASKS))
    order = []
    for line in lines:
        command, actions = parse_line(line)
        if generated.get(command) != actions:
            raise SourceError(f"hf_recogs: SCAN tasks.txt line {len(order) + 1} is not generated by the grammar")
        order.append(command)
    if len(order) != len(generated) or len(set(order)) != len(order):
        raise SourceError("hf_recogs: SCAN tasks.txt does not list each generated command exactly once")
    return tuple((c, generated[c]) for c in order)


@lru_cache(maxsize=32)
def _read(file: UpstreamFile) -> tuple[tuple[str, str], ...]:
    return tuple(parse_line(line) for line in read_lines(file))


# ---------------------------------------------------------------------------------------------------------
# Split rules. Each returns (train, test) as tuples of (command, actions) in upstream form (train before the
# validation hold-out), plus the files read.

Pairs = tuple[tuple[str, str], ...]


def _length_split() -> tuple[Pairs, Pairs]:
    u = _universe()
    train = tuple(p for p in u if len(p[1].split(" ")) <= 22)
    test = tuple(p for p in u if len(p[1].split(" ")) > 22)
    return train, test


ADDPRIM = {"jump": "jump", "turn_left": "turn left"}


def _addprim_split(which: str) -> tuple[Pairs, Pairs]:
    primitive = ADDPRIM[which]
    u = _universe()
    rest = tuple(p for p in u if not contains(p[0], primitive))
    test = tuple(p for p in u if contains(p[0], primitive) and p[0] != primitive)
    prim_line = (primitive, interpret(primitive))
    # The primitive makes up exactly 10 % of the train file: len(rest) / 9 repetitions
    # (docs/DATASETS.md §4.3).
    return rest + (prim_line,) * (len(rest) // 9), test


TEMPLATES = {
    "around_right": ("around right", VERBS),
    "jump_around_right": ("around right", ("jump",)),
    "opposite_right": ("opposite right", VERBS),
    "right": ("right", VERBS),
}


def _template_split(name: str) -> tuple[Pairs, Pairs]:
    phrase, held = TEMPLATES[name]
    u = _universe()
    kept = [p for p in u if not contains(p[0], f"turn {phrase}")]
    is_test = [any(contains(p[0], f"{v} {phrase}") for v in held) for p in kept]
    return (
        tuple(p for p, t in zip(kept, is_test) if not t),
        tuple(p for p, t in zip(kept, is_test) if t),
    )


FILLER_VERBS = {0: (), 1: ("look",), 2: ("look", "walk"), 3: ("look", "walk", "run")}


def _filler_split(n: int) -> tuple[Pairs, Pairs]:
    allowed = FILLER_VERBS[n]
    u = _universe()

    def in_train(command: str) -> bool:
        return not any(contains(command, f"{v} around right") for v in ("turn",) + VERBS if v not in allowed)

    _, test = _template_split("jump_around_right")
    return tuple(p for p in u if in_train(p[0])), test


def _simple_split() -> tuple[Pairs, Pairs]:
    return (
        _read(_file("simple_split/tasks_train_simple.txt")),
        _read(_file("simple_split/tasks_test_simple.txt")),
    )


SIZE_PERCENTS = (1, 2, 4, 8, 16, 32, 64)


def _simple_size_split(p: int) -> tuple[Pairs, Pairs]:
    train, test = _simple_split()
    k = p * len(_universe()) // 100
    return train[:k], train[k:] + test


FEWSHOT_NUMS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
COMPLEX_NUMS = (1, 2, 4, 8, 16, 32)
REPS = (1, 2, 3, 4, 5)


def _mcd_path(split: str, i: int) -> str:
    return f"mcd_split/tasks_{split}_mcd{i}.txt"


def _mcd_split(i: int) -> tuple[Pairs, Pairs]:
    return _read(_mcd_file(_mcd_path("train", i))), _read(_mcd_file(_mcd_path("test", i)))


def _mcd_sources(i: int, split: str, **params) -> list[UpstreamFile]:
    return [_mcd_file(_mcd_path("test" if split == "test" else "train", i))]


def _fewshot_path(split: str, num: int, rep: int) -> str:
    return f"few_shot_split/tasks_{split}_fewshot_num{num}_rep{rep}.txt"


def _complex_path(split: str, num: int, rep: int) -> str:
    return f"add_prim_split/with_additional_examples/tasks_{split}_addprim_complex_jump_num{num}_rep{rep}.txt"


# ---------------------------------------------------------------------------------------------------------
# Categories


def _around_right_category(command: str) -> str:
    if contains(command, "jump around right"):
        return "template"
    if any(contains(command, f"{v} around right") for v in VERBS):
        return "filler"
    return "other"


def _template_category(name: str):
    if name == "jump_around_right":
        return _around_right_category
    phrase, held = TEMPLATES[name]

    def category(command: str) -> str:
        return "template" if any(contains(command, f"{v} {phrase}") for v in held) else "other"

    return category


def _addprim_category(primitive: str):
    def category(command: str) -> str:
        if command == primitive:
            return "primitive"
        return "composed" if contains(command, primitive) else "other"

    return category


def _length_category(command: str, actions: str) -> str:
    return f"actions_{len(actions.split(' '))}"


# ---------------------------------------------------------------------------------------------------------
# Validation hold-out (ours)

VALIDATION_SALT = b"hf_recogs/scan/validation:"
KEEP_IN_TRAIN = frozenset(("primitive", "composed", "filler"))
VALIDATION_FRACTION = Param(
    "validation_fraction",
    0.0,
    "share of train held out as a validation split made by hf_recogs (default 0: the official train file)",
    bounds=(0.0, 0.5),
)


def validation_position(command: str) -> float:
    """The command's place in [0, 1) under the hold-out rule: held out iff below ``validation_fraction``."""
    digest = hashlib.sha256(VALIDATION_SALT + command.encode("utf-8")).hexdigest()
    return int(digest[:16], 16) / 16**16


def _splits(validation_fraction: float, **params) -> tuple[str, ...]:
    return ("train", "validation", "test") if validation_fraction > 0 else ("train", "test")


# ---------------------------------------------------------------------------------------------------------
# Config declarations


_DECLARED: list[DatasetConfig] = []


def _add(config: DatasetConfig) -> DatasetConfig:
    _DECLARED.append(config)
    return config


def _declare(name, description, citations, split_fn, category_fn, sources_fn, params=(), notes=""):
    """Declare one SCAN config. ``split_fn(**params)`` gives the upstream (train, test) command/action pairs in
    file order, ``category_fn(command, actions)`` each row's category, ``sources_fn(split, **params)`` the
    upstream files a split reads. Every SCAN config also takes ``validation_fraction`` (our hold-out)."""

    def generate(split: str, validation_fraction: float, **params) -> Iterator[Row]:
        train, test = _upstream_pairs(split_fn, tuple(sorted(params.items())))
        if split == "test":
            for command, actions in test:
                yield {"input": command, "output": actions, "category": category_fn(command, actions)}
            return
        counts = Counter(train)
        for pair in train:
            command, actions = pair
            category = category_fn(command, actions)
            held = (
                counts[pair] == 1
                and category not in KEEP_IN_TRAIN
                and validation_position(command) < validation_fraction
            )
            if held == (split == "validation"):
                yield {"input": command, "output": actions, "category": category}

    def sources(split: str, validation_fraction: float = 0.0, **params) -> list[UpstreamFile]:
        return sources_fn(split, **params)

    _add(
        DatasetConfig(
            name=name,
            description=description,
            family=FAMILY,
            license=LICENSE,
            citations=citations,
            splits=("train", "validation", "test"),
            split_rule=_splits,
            split_hint="SCAN has no validation split; load with validation_fraction=0.1 to hold one out of train",
            generate=generate,
            sources=sources,
            params=(*params, VALIDATION_FRACTION),
            metric="exact",
            notes="; ".join(x for x in (notes, _VALIDATION_NOTE) if x),
        )
    )


@lru_cache(maxsize=32)
def _upstream_pairs(split_fn, params: tuple) -> tuple[Pairs, Pairs]:
    return split_fn(**dict(params))


def _cmd_category(fn):
    return lambda command, actions: fn(command)


def _const_category(value):
    return lambda command, actions: value


def _tasks_sources(split, **params):
    return [_file(TASKS)]


def _simple_sources(split, **params):
    return [_file("simple_split/tasks_train_simple.txt"), _file("simple_split/tasks_test_simple.txt")]


_VALIDATION_NOTE = (
    "train is the official train file; SCAN has no validation split. validation_fraction=f > 0 (ours) holds "
    "out the train rows whose command hashes (sha256) below f, except rows a split adds on purpose "
    "(primitive/composed/filler) and repeated lines"
)

_declare(
    "scan_simple",
    "SCAN simple split: random 80/20 split of all 20,910 commands (read from upstream).",
    ("scan",),
    _simple_split,
    _const_category("simple"),
    _simple_sources,
)
_declare(
    "scan_simple_size",
    "SCAN simple split, size variations: train = first p% of all commands in simple-train order "
    "(p ∈ 1,2,4,…,64), test = the rest of the simple split.",
    ("scan",),
    _simple_size_split,
    _const_category("simple"),
    _simple_sources,
    params=(Param("p", 1, "percentage of the 20,910 commands in train", SIZE_PERCENTS),),
)
_declare(
    "scan_length",
    "SCAN length split: train = commands with ≤ 22 actions, test = ≥ 24 actions (generated by rule); "
    "category actions_<n>.",
    ("scan",),
    _length_split,
    _length_category,
    _tasks_sources,
    notes="Upstream files are in random order; rows here follow tasks.txt order (same multiset of lines).",
)
for _which, _prim in ADDPRIM.items():
    _declare(
        f"scan_addprim_{_which}",
        f"SCAN add-primitive split ({_prim!r}): train = commands without {_prim!r} plus the bare primitive "
        "repeated (10% of train), test = the other commands with it (generated by rule).",
        ("scan",),
        partial(_addprim_split, _which),
        _cmd_category(_addprim_category(_prim)),
        _tasks_sources,
        notes="Upstream files are in random order; rows here follow tasks.txt order, then the repeated "
        "primitive (same multiset of lines, duplicates kept).",
    )
for _name, (_phrase, _held) in TEMPLATES.items():
    _declare(
        f"scan_template_{_name}",
        f"SCAN template split {_name} (Loula et al. 2018): test = commands with "
        f"{'jump' if len(_held) == 1 else '<verb>'} {_phrase}, commands with 'turn {_phrase}' dropped "
        "(generated by rule, byte-identical to upstream).",
        ("scan", "scan_template"),
        partial(_template_split, _name),
        _cmd_category(_template_category(_name)),
        _tasks_sources,
    )
for _n in FILLER_VERBS:
    _declare(
        f"scan_filler_num{_n}",
        f"SCAN filler split num{_n}: template jump_around_right test; train adds the '<verb> around right' "
        f"commands with {_n} filler verb(s) (generated by rule, byte-identical to upstream).",
        ("scan", "scan_template"),
        partial(_filler_split, _n),
        _cmd_category(_around_right_category),
        _tasks_sources,
    )
_declare(
    "scan_fewshot",
    "SCAN few-shot split: filler num0 train plus a random sample of num 'look around right' commands "
    "(read from upstream; num ∈ 1,2,…,1024, rep ∈ 1..5), test = jump_around_right test.",
    ("scan", "scan_template"),
    lambda num, rep: (
        _read(_file(_fewshot_path("train", num, rep))),
        _read(_file(_fewshot_path("test", num, rep))),
    ),
    _cmd_category(_around_right_category),
    lambda split, num, rep: [_file(_fewshot_path("test" if split == "test" else "train", num, rep))],
    params=(
        Param("num", 1, "number of sampled 'look around right' commands", FEWSHOT_NUMS),
        Param("rep", 1, "which of the 5 upstream random samples", REPS),
    ),
    notes="Upstream quirk kept: num32 rep3 adds 31 commands, the num64 samples add 61, 61, 63, 62, 60.",
)
_declare(
    "scan_addprim_complex_jump",
    "SCAN add-primitive 'jump' with additional examples: jump-free commands plus the primitive and num random "
    "composed jump commands, repeated (read from upstream; num ∈ 1,2,…,32, rep ∈ 1..5).",
    ("scan",),
    lambda num, rep: (
        _read(_file(_complex_path("train", num, rep))),
        _read(_file(_complex_path("test", num, rep))),
    ),
    _cmd_category(_addprim_category("jump")),
    lambda split, num, rep: [_file(_complex_path("test" if split == "test" else "train", num, rep))],
    params=(
        Param("num", 1, "number of composed jump commands added to train", COMPLEX_NUMS),
        Param("rep", 1, "which of the 5 upstream random samples", REPS),
    ),
)
for _i in (1, 2, 3):
    _declare(
        f"scan_mcd{_i}",
        f"SCAN maximum-compound-divergence split mcd{_i} (Keysers et al. 2020; read from the files of an "
        "unmerged upstream pull request).",
        ("scan", "scan_mcd"),
        partial(_mcd_split, _i),
        _const_category(f"mcd{_i}"),
        partial(_mcd_sources, _i),
    )


def upstream_lines(config: str, split: str, **params) -> list[str]:
    """Our reproduction of the upstream ``train`` or ``test`` file of ``config`` (lines without ``\\n``): the
    rows of our split of that name without a validation hold-out."""
    cfg = next((c for c in CONFIGS if c.name == config), None)
    if cfg is None:
        raise ValueError(f"{config!r} is not a SCAN config")
    if split not in ("train", "test"):
        raise ValueError(f"upstream SCAN files have splits train and test, not {split!r}")
    if "validation_fraction" in params:
        raise ValueError("upstream SCAN files have no validation hold-out: drop validation_fraction")
    return [format_line(row["input"], row["output"]) for row in cfg.rows(split, **params, validation_fraction=0.0)]

CONFIGS: tuple[DatasetConfig, ...] = tuple(_DECLARED)  # collected by hf_recogs.registry
