"""Where ReCOGS_pos or COGS predictions go wrong, from a predictions file alone (no model): for every wrong row, the
first token where the prediction leaves the gold logical form, by kind; for ``obj_pp_to_subj_pp``, the role the
prediction gives the subject.

A ReCOGS_pos logical form lists its nouns first (``* baby ( 1 ) ; tray ( 4 ) ;``), then its predicates joined by
``AND`` (``nmod . on ( 1 , 4 ) AND scream ( 8 ) AND agent ( 8 , 1 )``). COGS writes the same indices as ``x _ 1``,
lists only its definite nouns first, names the predicate before each role (``baby . nmod . on ( x _ 1 , x _ 4 )``,
``scream . agent ( x _ 8 , x _ 1 )``) and a proper noun by its name (``agent ( x _ 8 , Emma )``); the tables read
both. Both index a word by its position in the sentence, which the analysis of the subject's roles needs
(``indices_are_word_positions``; ReCOGS's random indices do not). The kinds of the first difference:

- ``ends too early`` / ``goes on after the gold end``: one of the two forms stops where the other goes on;
- in the noun list: ``a noun after the last one`` (the gold form starts its predicates, the prediction lists
  another noun), ``the noun list ends early`` (the other way round), ``the previous noun or index again``,
  ``noun list: other``;
- in the predicates: ``wrong preposition`` (of an ``nmod``), ``wrong index``, ``wrong number of arguments`` (``)``
  where the gold conjunct goes on with ``,`` after its first index, or the other way round: ``agent ( 22 )`` for
  ``agent ( 22 , 21 )``, ``like ( 9 , 8 )`` for ``like ( 9 )``), ``predicates: other``.

The tables also give, per row of the table, the median position (in tokens) of the first difference: a model
whose wrong rows all start to go wrong near one position, whatever the depth, runs out of trained positions
rather than of structure.

Greedy errors compound, so the first difference says where a wrong output starts to go wrong, not everything
that is wrong in it. For ``obj_pp_to_subj_pp`` it also counts the wrong rows that give the subject other roles
than the gold form, those that still write every ``nmod`` conjunct of the gold form, and which noun the
prediction gives the subject's (first) gold role: a word of the subject's phrase next to the verb is the cue a
model can take for the subject, since in training the subject is also the noun just before its verb. Over all
its rows, right and wrong, it counts the rows right per frame of the subject's verb (its roles, whether a phrase
follows it, or a second verb): a model can handle some frames and none of the others.

    hf-recogs errors results/recogs_pos_transformer_fast/seed_66/predictions_gen.jsonl.gz
    hf-recogs errors --config cogs results/cogs_transformer_fast/seed_42/predictions_gen.jsonl.gz
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

KINDS = ("ends too early", "goes on after the gold end", "a noun after the last one", "the noun list ends early",
         "the previous noun or index again", "noun list: other", "wrong preposition", "wrong index",
         "wrong number of arguments", "predicates: other")
# an index: ReCOGS_pos writes the word's position, COGS ``x _`` and the position
_ROLE = re.compile(r"\b(agent|theme|recipient) \( (?:x _ )?(\d+) , (?:x _ )?(\w+) \)")  # COGS: a name argument
_NMOD_HEAD = re.compile(r"nmod \. \w+ \( (?:x _ )?(\d+) ,")
_NMOD = re.compile(r"nmod \. \w+ \( (?:x _ )?\d+ , (?:x _ )?\d+ \)")
_ONE_ARGUMENT = re.compile(r"(\w+) \( (?:x _ )?(\d+) \)")
_CLAUSE = re.compile(r"\b(agent|theme|recipient|ccomp|xcomp) \( (?:x _ )?(\d+) ,")  # a verb's role or clause
ROLE_TAKERS = ("the subject", "the phrase's noun before the verb", "another noun of the phrase",
               "a noun after the verb", "another word", "no one")


def _noun_list_end(tokens: list[str]) -> int:
    """The index just after the noun list (after its last ``;``; 0 when the form lists no noun)."""
    return max((i + 1 for i, t in enumerate(tokens) if t == ";"), default=0)


def first_difference(gold: str, prediction: str) -> int:
    """The index of the first token where ``prediction`` leaves ``gold`` (the shorter one's length when one is
    the start of the other)."""
    g, p = gold.split(), prediction.split()
    return next((k for k, (a, b) in enumerate(zip(g, p, strict=False)) if a != b), min(len(g), len(p)))


def first_error(gold: str, prediction: str) -> str | None:
    """The kind of the first token where ``prediction`` leaves ``gold`` (module docstring); None when they are
    the same string."""
    g, p = gold.split(), prediction.split()
    i = first_difference(gold, prediction)
    if i == len(g) and i == len(p):
        return None
    if i == len(p):
        return "ends too early"
    if i == len(g):
        return "goes on after the gold end"
    gold_nouns_end, predicted_nouns_end = _noun_list_end(g), _noun_list_end(p)
    if i < gold_nouns_end or i < predicted_nouns_end:
        if i >= gold_nouns_end:
            return "a noun after the last one"
        if i >= predicted_nouns_end:
            return "the noun list ends early"
        previous = [t for t in g[max(0, i - 5):i] if t not in ("(", ")", ";", "*")]
        return "the previous noun or index again" if p[i] in previous else "noun list: other"
    if i >= 2 and g[i - 2:i] == ["nmod", "."]:
        return "wrong preposition"
    if g[i].isdigit():
        return "wrong index"
    if {g[i], p[i]} == {",", ")"} and g[i - 1].isdigit():
        return "wrong number of arguments"
    return "predicates: other"


def _subject(gold: str) -> int | None:
    """The index of the first noun that heads an ``nmod`` conjunct: in obj_pp_to_subj_pp, the subject."""
    heads = [int(n) for n in _NMOD_HEAD.findall(gold)]
    return min(heads) if heads else None


def subject_roles(gold: str, prediction: str) -> tuple[str, str]:
    """For a sentence whose subject carries the prepositional phrase (``obj_pp_to_subj_pp``): (the subject's
    roles in the gold form, its roles in the prediction), each the role conjuncts that take the subject, in
    order, joined by ``, `` (``agent, agent`` for the subject of a verb and of its infinitive; ``none``). The
    subject is the first noun with an ``nmod``."""
    subject = _subject(gold)
    if subject is None:
        return "none", "none"
    subject = str(subject)

    def roles(form: str) -> str:
        return ", ".join(r for r, _, arg in _ROLE.findall(form) if arg == subject) or "none"

    return roles(gold), roles(prediction)


def subject_role_taker(gold: str, prediction: str, source: str | None = None) -> str | None:
    """For ``obj_pp_to_subj_pp``: who gets the subject's first gold role in ``prediction`` (``ROLE_TAKERS``).
    With ``agent ( 8 , 1 )`` in the gold form, the prediction's ``agent ( 8 , j )`` names j: the subject (1), the
    last noun of the subject's phrase (the nouns between the subject and the verb), another noun of that phrase,
    a noun after the verb, another word, or no one (no ``agent ( 8 , …`` at all). A COGS prediction that names a
    proper noun is placed by that name's position in ``source`` (another word without it). None when the gold form
    gives the subject no role."""
    subject = _subject(gold)
    if subject is None:
        return None
    role = next(((r, int(verb)) for r, verb, arg in _ROLE.findall(gold) if arg == str(subject)), None)
    if role is None:
        return None
    name, verb = role
    named = next((arg for r, v, arg in _ROLE.findall(prediction) if r == name and int(v) == verb), None)
    if named is None:
        return "no one"
    words = source.split() if source is not None else []
    proper_noun = named[:1].isupper() and named in words
    taker = int(named) if named.isdigit() else words.index(named) if proper_noun else None
    # the phrase's nouns: every one-argument conjunct between the subject and its verb (the noun list of
    # ReCOGS_pos; COGS lists only its definite nouns there and writes the others among the predicates)
    phrase = sorted({int(n) for _, n in _ONE_ARGUMENT.findall(gold) if subject < int(n) < verb})
    if taker == subject:
        return "the subject"
    if phrase and taker == phrase[-1]:
        return "the phrase's noun before the verb"
    if taker in phrase:
        return "another noun of the phrase"
    return "a noun after the verb" if taker is not None and taker > verb else "another word"


def subject_frame(gold: str) -> str | None:
    """For ``obj_pp_to_subj_pp``: the frame of the verb whose role the subject takes in ``gold``, the names of
    that verb's role and clause conjuncts in alphabetical order (``agent + recipient + theme``), with ``, a phrase
    after the verb`` where an ``nmod`` conjunct follows the verb; ``two verbs or more`` for a form with another
    verb (``ccomp``, ``xcomp``). None when the gold form gives the subject no role."""
    subject = _subject(gold)
    verb = next((int(v) for _, v, arg in _ROLE.findall(gold) if arg == str(subject)), None)
    if subject is None or verb is None:
        return None
    clauses = [(name, int(v)) for name, v in _CLAUSE.findall(gold)]
    if len({v for _, v in clauses}) > 1:
        return "two verbs or more"
    frame = " + ".join(sorted({name for name, v in clauses if v == verb}))
    later_phrase = any(int(head) > verb for head in _NMOD_HEAD.findall(gold))
    return frame + (", a phrase after the verb" if later_phrase else "")


def indices_are_word_positions(rows: Iterable[dict[str, Any]], sample: int = 200) -> bool:
    """Whether the gold forms of ``rows`` index a word by its position in the input, as ReCOGS_pos and COGS do:
    in the first ``sample`` rows, every one-argument conjunct whose name is a word of the input (``baby ( 1 )``,
    ``* house ( x _ 7 )``; not a verb's lemma) names the word at that position."""
    checked = 0
    for r in rows:
        words = r["input"].split()
        for name, index in _ONE_ARGUMENT.findall(r["gold"]):
            if name in words and (int(index) >= len(words) or words[int(index)] != name):
                return False
        checked += 1
        if checked == sample:
            break
    return checked > 0


def error_tables(rows: Iterable[dict[str, Any]], depth_of=None) -> dict[str, Any]:
    """Counts over the wrong rows (``sem`` false; ``exact`` false for a config scored by exact match):
    first-error kinds per category (and, with ``depth_of(category, input)``, per category and depth) with the
    median token position of the first error, and the subject's gold → predicted roles in
    ``obj_pp_to_subj_pp`` and who takes its first gold role; and over all of that category's rows, right and
    wrong, how many of each verb frame (:func:`subject_frame`) are right."""
    kinds: dict[str, Counter] = defaultdict(Counter)
    positions: dict[str, list[int]] = defaultdict(list)
    wrong: Counter = Counter()
    roles: Counter = Counter()
    takers: Counter = Counter()
    phrase_right = 0
    frames: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # frame: [right rows, rows]
    for r in rows:
        right = bool(r["sem"] if r.get("sem") is not None else r.get("exact"))
        if r["category"] == "obj_pp_to_subj_pp" and (frame := subject_frame(r["gold"])) is not None:
            frames[frame][0] += right
            frames[frame][1] += 1
        if right:
            continue
        category = r["category"]
        depth = depth_of(category, r["input"]) if depth_of is not None else None
        key = f"{category}, depth {depth}" if depth is not None else category
        kind = first_error(r["gold"], r["prediction"])
        if kind is None:  # the same words: counted right by exact match, never wrong
            continue
        wrong[key] += 1
        kinds[key][kind] += 1
        positions[key].append(first_difference(r["gold"], r["prediction"]))
        if category == "obj_pp_to_subj_pp":
            roles[subject_roles(r["gold"], r["prediction"])] += 1
            taker = subject_role_taker(r["gold"], r["prediction"], r.get("input"))
            if taker is not None:
                takers[taker] += 1
            phrase_right += set(_NMOD.findall(r["gold"])) <= set(_NMOD.findall(r["prediction"]))
    return {"wrong": dict(wrong), "kinds": {k: dict(c) for k, c in kinds.items()},
            "first_wrong_token": {k: statistics.median(v) for k, v in positions.items()}, "subject_roles": dict(roles),
            "subject_phrase_right": phrase_right, "subject_role_takers": dict(takers),
            "subject_frames": {f: tuple(n) for f, n in frames.items()}}


def markdown(tables: dict[str, Any]) -> str:
    """The tables as Markdown: one row per category (or category and depth), one column per kind, and the median
    token position of the first error last."""
    keys = sorted(tables["wrong"], key=_natural)
    lines = ["| category | wrong rows | " + " | ".join(KINDS) + " | first error at token (median) |",
             "|---" * (len(KINDS) + 3) + "|"]
    for key in keys:
        counts = tables["kinds"].get(key, {})
        lines.append(f"| {key} | {tables['wrong'][key]} | " + " | ".join(str(counts.get(k, 0)) for k in KINDS)
                     + f" | {tables['first_wrong_token'][key]:g} |")
    if tables["subject_roles"]:
        wrong = sum(tables["subject_roles"].values())
        changed = sum(n for (gold, predicted), n in tables["subject_roles"].items() if gold != predicted)
        summary = (f"obj_pp_to_subj_pp, {wrong} wrong rows: {changed} give the subject other roles than the gold "
                   f"form; {tables['subject_phrase_right']} write every nmod conjunct of the gold form. The "
                   "subject's roles (gold → prediction):")
        lines += ["", summary, "", "| gold | prediction | rows |", "|---|---|---|"]
        for (gold, predicted), n in sorted(tables["subject_roles"].items(), key=lambda kv: -kv[1]):
            lines.append(f"| {gold} | {predicted} | {n} |")
        takers = tables["subject_role_takers"]
        lines += ["", "Who the prediction gives the subject's first gold role:", "",
                  "| " + " | ".join(ROLE_TAKERS) + " |", "|---" * len(ROLE_TAKERS) + "|",
                  "| " + " | ".join(str(takers.get(t, 0)) for t in ROLE_TAKERS) + " |"]
    if tables.get("subject_frames"):
        lines += ["", "obj_pp_to_subj_pp, every row by the frame of the subject's verb in the gold form:", "",
                  "| frame | rows | right |", "|---|---|---|"]
        for frame, (right, n) in sorted(tables["subject_frames"].items(), key=lambda kv: (-kv[1][1], kv[0])):
            lines.append(f"| {frame} | {n} | {right} |")
    return "\n".join(lines)


def _natural(key: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", key)]
