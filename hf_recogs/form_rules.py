"""The rules every ReCOGS_pos logical form keeps, and a greedy decoder that keeps them too.

A ReCOGS_pos form names each noun of its sentence first (``* cake ( 3 ) ;``), then the events and their
relations (``eat ( 2 ) AND agent ( 2 , 1 ) AND theme ( 2 , 3 )``), where every number is a word's position in
the sentence. Beyond its grammar, the notation keeps rules that a trained model often breaks on the structural
generalization categories (a role with one argument, a second agent for one verb, a noun inside a phrase made
the verb's subject). Every rule below holds on every ReCOGS_pos target of every split; a run checks them on its
own training targets before it uses them (:func:`check_targets`), and refuses a dataset they do not fit.

The rules (one-place items are entities before the first ``AND`` and events after it):

1. **Shape**: ``[*] label ( i ) ;`` entities, then body items ``label ( i )`` or ``role ( i , j )`` joined by
   ``AND``; ``*`` only on entities; the roles ``agent theme recipient ccomp xcomp nmod . <preposition>`` take
   two arguments, every other label one. Which words are labels and prepositions is left to the model.
2. **Positions**: every number is the position of a word of the source sentence, never of its final period;
   no position is named by two one-place items; entities come in increasing position.
3. **Order**: body items increase strictly by (first argument, second argument), an event before its roles.
   ``any_order=True`` leaves this rule out: SEM scores a form's conjuncts in any order, and a model may write a
   right form in an order the notation does not (a prepositional phrase after the verb's other roles).
4. **Heads**: a role's first argument is an event already written (``nmod``: an entity), at most one of each
   role per event and one ``nmod`` per entity; no two items have the same two arguments (a noun is one role of
   an event, not two: the order rule says it too).
5. **Dependents**: the second argument of ``agent``, ``theme`` and ``recipient`` is an entity that is not the
   noun of a phrase; of ``nmod`` an entity after its head that no other item has as dependent; of ``ccomp`` and
   ``xcomp`` a later position that must become an event.
6. **Ending**: the form ends after a whole item, when every event has a role, every entity is some item's
   second argument, and every clause's second argument is an event.

Training's lambda primitives (``LAMBDA a . ball ( a )``) and bare names (``Emma``) are left free: a form that
starts with ``LAMBDA`` is not constrained, and a first capitalised label may end the form.

:class:`ConstrainedDecoding` applies the rules to greedy decoding as a ``transformers`` logits processor: at
each step a row may write only the words that keep its output a prefix of a form that keeps every rule, so the
argmax is the model's best such word. A row left with no such word (a dead end) may only end.

:data:`RULES_VERSION` names the rule set a run decoded under (its ``results.json`` records it): version 1 let a
position name the sentence's final period, which no form of any split does; version 2 does not.
"""

from __future__ import annotations

from collections.abc import Iterable

ROLES = frozenset({"agent", "theme", "recipient"})
CLAUSES = frozenset({"ccomp", "xcomp"})
TWO_PLACE = ROLES | CLAUSES | {"nmod"}
RULES_VERSION = 2
# What each earlier version let through that the current one does not (cards and the results page name it).
OLDER_VERSIONS = {1: "version 1 of the rules, under which a position could also name the sentence's final period"}
_SYMBOLS = frozenset({"(", ")", ",", ";", ".", "*", "AND", "LAMBDA"})


class RuleError(ValueError):
    """A form (a training target, when a run checks the rules) breaks the rules."""


def check_targets(sources: Iterable[str], targets: Iterable[str], any_order: bool = False) -> int:
    """Check that every target keeps every rule for its source; the number of targets checked. Raises
    :class:`RuleError` naming the first target that does not."""
    count = 0
    for row, (source, target) in enumerate(zip(sources, targets, strict=True)):
        broken = first_break(source, target, any_order)
        if broken is not None:
            raise RuleError(f"training target {row} ({target!r}) breaks the form rules at word {broken}")
        count += 1
    return count


def first_break(source: str, form: str, any_order: bool = False) -> int | None:
    """The index of the first word of ``form`` (``len`` for its end) that the rules do not allow after the
    words before it, for the sentence ``source``; None when the whole form keeps the rules (all but the order
    rule with ``any_order``)."""
    prefix = Prefix(nameable_positions(source), any_order)
    words = form.split()
    for k, word in enumerate(words):
        if not prefix.allows(word):
            return k
        prefix.read(word)
    return None if prefix.allows(END) else len(words)


def nameable_positions(source: str) -> int:
    """How many positions of ``source`` a form may name: its words, less a final period."""
    words = source.split()
    return len(words) - 1 if words and words[-1] == "." else len(words)


def is_label(word: str) -> bool:
    """A word that may name an entity, an event or a preposition: any word but the notation's symbols,
    numbers and role names (the rules leave the lexicon to the model)."""
    return word not in _SYMBOLS and word not in TWO_PLACE and word != END and not word.isdigit()


END = "</s>"  # the end of a form, as ``Prefix`` reads it
LABEL = "<label>"  # in an allowed set: any word that ``is_label``


class Prefix:
    """What the words of a form written so far allow next: :meth:`allowed` (a set of words, ``END`` for the
    end) or :meth:`allows` (one word); :meth:`read` takes the next word. ``positions``: how many positions the
    form may name (:func:`nameable_positions`); ``any_order``: without the order rule."""

    __slots__ = ("any_order", "args", "at", "clause_deps", "entities", "events", "first", "free", "in_body",
                 "keys", "label", "last_key", "n", "named", "nmod_deps", "nmod_heads", "role_deps", "roleless_event",
                 "roles", "star")

    def __init__(self, positions: int, any_order: bool = False):
        self.n = positions
        self.any_order = any_order
        self.free = False  # a lambda primitive: not constrained
        self.at = "item"  # where in an item the next word goes
        self.label, self.star, self.args = "", False, []
        self.first, self.in_body = True, False
        self.entities: list[int] = []
        self.named: set[int] = set()  # positions named by one-place items
        self.events: set[int] = set()
        self.roles: set[tuple[str, int]] = set()
        self.nmod_heads: set[int] = set()
        self.nmod_deps: set[int] = set()
        self.role_deps: set[int] = set()
        self.clause_deps: set[int] = set()  # a clause's second argument not yet written as an event
        self.last_key: tuple[int, int] | None = None
        self.keys: set[tuple[int, int]] = set()  # the two arguments of every two-place item written
        self.roleless_event: int | None = None  # the last event, while it has no role

    def copy(self) -> Prefix:
        other = Prefix.__new__(Prefix)
        for name in self.__slots__:
            value = getattr(self, name)
            setattr(other, name, value.copy() if isinstance(value, (list, set)) else value)
        return other

    # reading ---------------------------------------------------------------------------------------------

    def read(self, word: str) -> None:
        if self.free or self.at == "done":
            return
        if word == END:
            self.at = "done"
        elif self.at == "item":
            if self.first and word == "LAMBDA":
                self.free = True
            elif word == "*":
                self.star, self.at = True, "label"
            else:
                self._read_label(word)
            self.first = False
        elif self.at == "label":
            self._read_label(word)
        elif self.at == "dot":
            self.at = "preposition"
        elif self.at == "preposition":
            self.label, self.at = "nmod." + word, "open"
        elif self.at == "open":
            self.at = "first"
        elif self.at == "first":
            self.args, self.at = [int(word)], "comma_or_close"
        elif self.at == "comma_or_close":
            self.at = "second" if word == "," else "separator"
        elif self.at == "second":
            self.args.append(int(word))
            self.at = "close"
        elif self.at == "close":
            self.at = "separator"
        elif self.at == "separator":
            self._end_item(word)
            self.at = "item"

    def _read_label(self, word: str) -> None:
        self.label = word
        self.at = "dot" if word == "nmod" else "open"

    def _two_place(self) -> bool:
        return self.label in ROLES or self.label in CLAUSES or self.label.startswith("nmod")

    def _end_item(self, separator: str) -> None:
        args = self.args
        if separator == ";":
            self.entities.append(args[0])
            self.named.add(args[0])
        else:
            self.in_body = True
            if len(args) == 1:
                self.events.add(args[0])
                self.named.add(args[0])
                self.clause_deps.discard(args[0])
                self.roleless_event = args[0]
                self.last_key = (args[0], -1)
            else:
                head, dep = args
                if self.label.startswith("nmod"):
                    self.nmod_heads.add(head)
                    self.nmod_deps.add(dep)
                else:
                    self.roles.add((self.label, head))
                    if self.roleless_event == head:
                        self.roleless_event = None
                    (self.clause_deps if self.label in CLAUSES else self.role_deps).add(dep)
                self.last_key = (head, dep)
                self.keys.add((head, dep))
        self.label, self.star, self.args = "", False, []

    # what may come next ------------------------------------------------------------------------------------

    def allows(self, word: str) -> bool:
        allowed = self.allowed()
        return allowed is None or word in allowed or (LABEL in allowed and is_label(word))

    def allowed(self) -> set[str] | None:
        """The words that may come next (None: any word, in a lambda primitive; ``LABEL``: any label word)."""
        if self.free:
            return None
        at = self.at
        if at == "done":
            return {END}
        if at == "item":
            return self._item_starts()
        if at == "label":
            return {LABEL} if self._any_first("", star=True) else set()
        if at == "dot":
            return {"."}
        if at == "preposition":
            return {LABEL}
        if at == "open":
            if self._first_name_alone():
                return {"(", END}
            return {"("}
        if at == "first":
            return {str(i) for i in self._firsts(self.label, self.star)}
        if at == "comma_or_close":
            return {","} if self._two_place() else {")"}
        if at == "second":
            return {str(i) for i in self._seconds(self.label, self.args[0])}
        if at == "close":
            return {")"}
        return self._separators()

    def _first_name_alone(self) -> bool:
        # training's bare-name primitive ("Emma"): a first capitalised label may be the whole form
        return not self.entities and not self.in_body and not self.star and self.label[:1].isupper()

    def _key_ok(self, key: tuple[int, int]) -> bool:
        if self.any_order:
            return key not in self.keys
        if self.last_key is not None and key <= self.last_key:
            return False
        # moving past an event that still has no role would leave it without one
        return self.roleless_event is None or key[0] == self.roleless_event

    def _item_starts(self) -> set[str]:
        out: set[str] = {"LAMBDA"} if self.first else set()
        if self._any_first("", star=False):
            out.add(LABEL)
        if not self.in_body and self._any_first("", star=True):
            out.add("*")
        if self.entities or self.in_body:  # a two-place item is a body item: the entities are over
            for role in ROLES | CLAUSES:
                if self._any_first(role, star=False):
                    out.add(role)
            if self._any_first("nmod", star=False):
                out.add("nmod")
        return out

    def _any_first(self, label: str, star: bool) -> bool:
        return next(iter(self._firsts(label, star)), None) is not None

    def _firsts(self, label: str, star: bool):
        """The first arguments an item with ``label`` (``""``: a one-place label) may take, lazily."""
        if label in ROLES or label in CLAUSES:
            return (h for h in sorted(self.events) if (label, h) not in self.roles and self._any_second(label, h))
        if label.startswith("nmod"):
            return (h for h in self.entities if h not in self.nmod_heads and self._any_second(label, h))
        return (i for i in range(self.n) if i not in self.named and self._one_place_fits(i, star))

    def _one_place_fits(self, i: int, star: bool) -> bool:
        as_entity = not self.in_body and (not self.entities or i > self.entities[-1])
        as_event = not star and self._key_ok((i, -1))
        return as_entity or as_event

    def _any_second(self, label: str, head: int) -> bool:
        return next(iter(self._seconds(label, head)), None) is not None

    def _seconds(self, label: str, head: int):
        if label.startswith("nmod"):
            deps = (d for d in self.entities if d > head and d not in self.role_deps and d not in self.nmod_deps)
        elif label in ROLES:
            deps = (d for d in self.entities if d != head and d not in self.nmod_deps)
        else:
            deps = (d for d in range(head + 1, self.n) if d not in self.named)
        return (d for d in deps if self._key_ok((head, d)))

    def _separators(self) -> set[str]:
        args, out = self.args, set()
        if len(args) == 1 and not self.in_body and (not self.entities or args[0] > self.entities[-1]):
            out.add(";")
        if len(args) == 2 or (not self.star and self._key_ok((args[0], -1))):
            after = self.copy()
            after._end_item("AND")
            if after._item_starts():
                out.add("AND")
            if after._complete():
                out.add(END)
        return out

    def _complete(self) -> bool:
        # in the notation's order only the last event may still lack a role; in any order, any event may
        with_role = {head for _, head in self.roles}
        return (bool(self.events) and not self.clause_deps and self.events <= with_role
                and all(e in self.nmod_deps or e in self.role_deps for e in self.entities))


class ConstrainedDecoding:
    """A ``transformers`` logits processor for greedy decoding under the rules: one :class:`Prefix` per row of
    the batch, for its ``sources`` in the batch's order (``any_order``: without the order rule);
    ``dead_end_rows`` holds the rows that were left with no allowed word (each then ended)."""

    def __init__(self, tokenizer, sources: list[str], any_order: bool = False):
        vocab = tokenizer.get_vocab()
        special = set(tokenizer.all_special_tokens)
        self.eos, self.pad = tokenizer.eos_token_id, tokenizer.pad_token_id
        self.word_of = {i: w for w, i in vocab.items()}
        self.word_of[self.eos] = END
        self.id_of = {w: i for i, w in self.word_of.items()}
        self.label_ids = sorted(i for w, i in vocab.items() if w not in special and is_label(w))
        self.prefixes = [Prefix(nameable_positions(source), any_order) for source in sources]
        self.read_up_to = 1  # after the decoder's start token
        self.dead_end_rows: set[int] = set()

    def __call__(self, input_ids, scores):
        length = input_ids.shape[1]
        while self.read_up_to < length:
            for prefix, token in zip(self.prefixes, input_ids[:, self.read_up_to].tolist(), strict=True):
                # generate pads a row that a stopping criterion ended (decode's length cap): it is over
                prefix.read(END if token == self.pad else self.word_of.get(token, ""))
            self.read_up_to += 1
        best = scores.argmax(dim=-1).tolist()
        for row, prefix in enumerate(self.prefixes):
            if prefix.free or prefix.at == "done":
                continue
            allowed, best_word = prefix.allowed(), self.word_of.get(best[row], "")
            if best_word in allowed or (LABEL in allowed and is_label(best_word)):
                continue  # the model's own choice keeps the rules: greedy takes it unchanged
            ids = [self.id_of[w] for w in allowed if w in self.id_of]
            if LABEL in allowed:
                ids += self.label_ids
            if not ids:
                self.dead_end_rows.add(row)
                ids = [self.eos]
            keep = scores[row, ids]
            scores[row] = float("-inf")
            scores[row, ids] = keep
        return scores
