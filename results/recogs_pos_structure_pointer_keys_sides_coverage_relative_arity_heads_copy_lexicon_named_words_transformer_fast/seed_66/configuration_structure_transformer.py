"""Configuration of ``structure_transformer``: our Bart ``transformer`` whose encoder self-attention reads the
input sentence's parse tree (the structure-annotation idea of Kim, Ravikumar, Ainslie & Ontañón 2021, applied to
the encoder of a seq2seq model instead of a classifier).

Self-contained on purpose, like the LSTM's: this file and ``modeling_structure_transformer.py`` are copied next
to a saved checkpoint (``auto_map``), so ``AutoModelForSeq2SeqLM.from_pretrained(..., trust_remote_code=True)``
works without hf_recogs. It may import only transformers/torch and its siblings.
"""

from huggingface_hub.dataclasses import strict
from transformers import BartConfig

ENCODER_STRUCTURE = ("none", "hard", "soft", "both")

# The relation of an encoder token pair (query row i, key column j) in the input's tree, one label per pair;
# the data collator writes them as ``relation_ids``. The first four names mean what they mean in the
# classifier's RELATIONS (configuration_structure_encoder.py); the classifier's CLS / block / cross-link labels
# have no use here (one side, no CLS), and the last three are new. A pair where either token is outside the
# tree (the final ".", ``</s>``, padding, every token of a sentence that did not parse) is "none" unless i == j.
TREE_RELATIONS = (
    "none",
    "self",
    "parent_to_child",         # i is the head of j
    "child_to_parent",         # j is the head of i
    "ancestor_to_descendant",  # i dominates j, two or more edges up
    "descendant_to_ancestor",
    "sibling",                 # i and j have the same head
)
# The pairs a hard-masked head lets attend by default: the token itself and its tree neighbours.
DEFAULT_HARD_RELATIONS = ("self", "parent_to_child", "child_to_parent")

# ``encoder_word_classes``: the class our parser's lexicon gives each encoder token (hf_recogs.structure.cogs's
# ``word_class``); "other" for whatever is not a word of the input grammar.
WORD_CLASSES = ("other", "function", "name", "noun", "verb")

# ``encoder_functions``: the syntactic function our parser's tree gives each encoder word (hf_recogs.structure.cogs's
# ``word_functions``, as Penn Treebank function tags: configurational, never the output's roles); "other" for every
# other token.
WORD_FUNCTIONS = ("other", "verb", "subject", "fronted", "object", "first_object", "phrase_object")

CROSS_ATTENTION_STRUCTURE = ("none", "pointer")
# Where in the output the offset term applies: everywhere, or only until the output's first ``AND`` (the
# noun list of ReCOGS_pos, which follows the source's word order; in COGS also the first predicate).
POINTER_OFFSETS_SCOPE = ("all", "noun_list")
# What the offset term counts from the pointed word: source words, or only the words in the same tree relation to
# it on the same side (the nearest dependent on the left is -1 however long the phrases between).
POINTER_OFFSETS_BY = ("position", "relation", "both")
# The labels of the cross-attention pointer bias: for decoder token t and source token j, the tree relation of
# j to the source word that the output last named by its position (ReCOGS_pos `( 7 )`, COGS `x _ 7`), or
# "no_pointer" while the output has named none (or named a position outside the source).
POINTER_RELATIONS = (*TREE_RELATIONS, "no_pointer")
# With ``pointer_sides``, a relation that can hold on either side of the pointed word keeps its label on the left
# and takes "<relation>:right" on the right (the subject and the object of a verb are both its dependents).
SIDED_RELATIONS = ("parent_to_child", "child_to_parent", "ancestor_to_descendant", "descendant_to_ancestor",
                   "sibling")
POINTER_RELATIONS_WITH_SIDES = (*POINTER_RELATIONS, *(f"{name}:right" for name in SIDED_RELATIONS))


@strict
class StructureTransformerConfig(BartConfig):
    r"""
    ``BartConfig`` plus how the encoder's self-attention reads the input tree. With ``encoder_structure="none"``
    (and no structure tokens) the model is exactly Bart: same modules, same initialisation, same outputs.

    Args:
        encoder_structure: ``"none"``: plain Bart attention; ``"hard"``: in the structured heads a token attends
            only to the pairs of ``hard_relations`` (every other key gets the dtype's minimum; a token always
            attends to itself, so no row is empty); ``"soft"``: every pair attends, and a learned scalar per
            (layer, structured head, relation label) is added to the attention logit (a T5-style bias over tree
            relations instead of token distances; zero at initialisation); ``"both"``: the mask and the bias.
        structure_heads: how many heads of a structured layer read the structure (the first ones); the others
            stay free. ``None``: half the encoder heads (at least one).
        structure_layers: which encoder layers (0-based) read the structure; ``None``: all of them.
        hard_relations: the labels of ``TREE_RELATIONS`` a hard-masked head attends to; ``None``:
            ``DEFAULT_HARD_RELATIONS`` (self and the tree edges both ways).
        structure_tokens: whether the encoder input carries the parse's constituent tokens (``S``, ``NP``, ...)
            after ``</s>``, with the constituency tree over words and constituents; without them (default) the
            tree is over the words only (the parse projected onto head words). Read by the data collator and
            recorded for the model card; the model itself reads whatever tokens and relations it is given.
        num_relations: the number of relation labels (``len(TREE_RELATIONS)``).
        encoder_word_classes: each encoder token's embedding also gets a learned vector of its word class
            (``WORD_CLASSES``: function word, name, noun, verb, other), the class our parser's lexicon gives the
            word (zero at initialisation). A word seen only alone in training (a COGS primitive: *Paula*) has an
            embedding trained in one context; its class vector is trained by every word of the class, so the
            encoder reads the new word as the names it should behave like. ``False`` (default): off.
        encoder_functions: each encoder token's embedding also gets a learned vector of its syntactic function in
            the input's parse (``WORD_FUNCTIONS``: the noun of a subject, of a fronted object, of an object, of the
            first of two objects, of a prepositional phrase; a verb; anything else), which the data collator
            passes as ``function_ids`` (zero at initialisation). Functions, not roles: a subject is the agent
            of one verb and the theme of another. Why: in ReCOGS_pos train a noun before the verb that carries
            a prepositional phrase is always a fronted object, so a model reading word order and the tree's
            shape learns "theme"; the function tells the subject of *The cat on the mat slept* from the fronted
            object of *The cat on the mat Emma saw*. ``False`` (default): off.
        word_class_ids: with ``encoder_word_classes``: the class (index into ``WORD_CLASSES``) of every token id
            of the vocabulary (``build_model`` fills it from the tokenizer and the parser's lexicon).
        cross_attention_structure: ``"none"``: Bart's cross-attention; ``"pointer"``: every decoder layer adds a
            learned scalar per (head, label of ``POINTER_RELATIONS``) to its cross-attention logits, where the
            label of decoder token t and source token j is the tree relation of j to the source word the output
            named last, up to t, by its position (zero at initialisation: a fresh model attends as Bart). After
            ``agent ( 2 ,`` the decoder can thus look for the next index among the dependents of word 2. It
            needs outputs that name source positions by number, as ReCOGS_pos and COGS do.
        pointer_offsets: K > 0: every decoder layer also adds a learned scalar per (head, offset of source
            token j from the word the output named last, clipped to -K..K; one more for "nothing named yet") to
            its cross-attention logits (zero at initialisation). It reads no tree: only the output's own position
            tokens and the source order, so that "the word three to the right of the last one named" means the
            same at any sentence length. 0 (default): off.
        pointer_offsets_scope: with ``pointer_offsets``: ``"all"`` (default): the offset term applies at every
            decoder token; ``"noun_list"``: only until the output has written ``AND`` (the noun list of
            ReCOGS_pos, ``* cake ( 3 ) ; Emma ( 7 ) ; eat ( 2 )``, which names the nouns in source order; in COGS
            the noun list and the first predicate). From the first ``AND`` on every source word gets the offset
            label of "nothing named", the same for all, so the term no longer moves the attention: the roles
            are read from the tree alone, where a window of offsets invites "the noun just before the verb".
        pointer_offsets_by: with ``pointer_offsets``: ``"position"`` (default): the offset of source token j is
            how many words it stands from the pointed word; ``"relation"`` (needs ``cross_attention_structure=
            "pointer"``): its rank, counted outward from the pointed word on its side, among the source tokens
            in the same tree relation to that word (its dependents, its siblings, ... as in ``TREE_RELATIONS``),
            signed by the side and clipped to -K..K. In *The dog in a bakery sneezed* the subject is the verb's
            first dependent on the left, -1, as in *The dog sneezed*, where its position says -4; the phrase's
            nouns are the verb's descendants, ranked among those. Offsets by position that work in training
            ("the agent is the noun just before the verb") move when a phrase is inserted; ranks do not.
            ``"both"`` (needs the same): two offset terms side by side, each with its own scalars (and keys),
            the offsets by position and the ranks, so that a head can use whichever the decoder token needs.
        pointer_scope_token_id: with ``pointer_offsets_scope="noun_list"``: the id of the output token ``AND``
            (``build_model`` reads it from the tokenizer).
        pointer_keys: with a pointer term on: also a term that depends on the decoder token, as in Shaw et al.'s
            (2018) relative attention: a learned vector per (decoder layer, label) is added to the key of every
            source token with that label, so that head h adds ``q_h · a_label`` (scaled as its logits) to the
            logit; zero at initialisation. A scalar per label tells every decoder token alike where to look; this
            lets the token ask for what it is about to write (the pointed word itself before its lemma, one of
            its dependents before an argument). Labels: the tree relations and/or the offsets, whichever terms are
            on. ``False`` (default): the scalars only.
        pointer_values: with ``"pointer"``: the tree labels also reach what the cross-attention reads, not only
            where it looks: every decoder layer adds to each head's output a learned vector per tree label (with
            ``pointer_sides`` the sided ones) in proportion to the attention the head gives the source tokens of
            that label (Shaw et al.'s (2018) relation values; zero at initialisation). The attention picks a word
            by its relation to the pointed one, but passes on only that word's encoding; with values the decoder
            also learns *which* relation it found (the verb's dependent on its left, its subject, whatever that
            noun's own encoding says), before it writes the role. ``False`` (default): off.
        pointer_sides: with ``"pointer"``: the tree labels also say on which side of the pointed word a source
            token stands (``POINTER_RELATIONS_WITH_SIDES``): a verb's subject is a dependent on its left, its
            object one on its right, at any distance, where offsets only see a window. ``False`` (default): one
            label per relation.
        pointer_token_ids: with ``"pointer"`` or ``pointer_offsets``: the id of the output token that names
            source position k is ``pointer_token_ids[k]`` (-1 where the vocabulary has no such token).
            ``build_model`` reads them from the tokenizer (the tokens ``0``, ``1``, ...).
        pointer_coverage: with a pointer term on: every decoder layer also adds a learned scalar per (head, how many
            times the output has named source word j so far: 0, 1, 2 or more) to its cross-attention logits (and
            with ``pointer_keys`` a key part per count), zero at initialisation: coverage (Tu et al. 2016) read
            from the output's own position tokens. In ReCOGS_pos every noun is named in the noun list and again
            as an argument, every verb at least once: an output is done when every content word has had its
            turns. It reads no tree. ``False`` (default): off.
        pointer_argument_mask: with ``"pointer"``: while the output writes the second argument of a conjunct
            (from its ``,`` until a position is named or ``)`` closes it: ``agent ( 6 , 1 )``, COGS ``agent ( x _
            6 , x _ 1 )``), every cross-attention head sees only the source words that are children or siblings
            of the word named last (the conjunct's first argument): where ReCOGS_pos and COGS put every second
            argument, and never a word further down the tree, such as the noun inside a subject's prepositional
            phrase. A row with no such word (no tree, a word without dependents) is left as it is. A hard mask
            with no parameters. ``False`` (default): off.
        pointer_argument_tokens: with ``pointer_argument_mask``: the ids of the output tokens ``,`` and ``)``
            (``build_model`` reads them from the tokenizer).
        pointer_arity_mask: with a pointer term on: at the step that decides a conjunct's number of arguments
            (its first argument has just been named: ``nmod . in ( 6`` is followed by ``,`` or ``)``), every
            cross-attention head sees only the word that argument names. How many arguments a conjunct takes is
            a property of its predicate, already written (a noun or a verb's lemma one, a role or ``nmod`` two);
            a decision that also reads the rest of the source can learn to depend on it, such as whether the next
            noun has a phrase of its own, which no training row's second ``nmod`` shows. A hard mask with no
            parameters, reading only the output's own tokens. ``False`` (default): off.
        pointer_arity_tokens: with ``pointer_arity_mask`` or ``pointer_head_counts``: the ids of the output tokens
            ``(`` and ``,`` (``build_model`` reads them from the tokenizer).
        pointer_head_counts: with a pointer term on: every decoder layer adds to each cross-attention head's output
            a learned vector per (how many conjuncts so far have the source word as their first argument: 0, 1, 2
            or more), in proportion to the attention the head gives that word (zero at initialisation). In
            ReCOGS_pos a word's first conjunct is its own (``cake ( 3 )``, a verb's lemma ``like ( 7 )``: one
            argument) and every later one a relation it heads (``agent ( 7 , 6 )``, ``nmod . in ( 3 , 6 )``: two).
            Counting every time a word is named (``pointer_coverage``) does not say this: a clause's verb is named
            by ``ccomp ( 4 , 7 )`` before its lemma. With ``pointer_arity_mask`` the step that decides the
            number of arguments attends to the named word alone, and reads its count here. It reads no tree: only
            the output's own tokens. ``False`` (default): off.
        decoder_position_shift: K > 0: in training, the decoder's learned positions of each target start at a
            random offset 0..K instead of 0 (SHAPE, Kiyono et al. 2021), so that every row of the position table
            is trained and only the distances between positions carry information; decoding starts at 0, as
            without it. It reads no tree (like ``pointer_offsets``), and needs K below
            ``max_position_embeddings``; a target near the table's end gets a smaller offset. 0 (default): off.
        decoder_relative_positions: R > 0: the decoder reads no learned absolute positions; instead every
            decoder layer adds a learned scalar per (head, distance from the query token back to the key token:
            0, 1, ..., R - 1, and one for R or more) to its self-attention logits (zero at initialisation;
            Shaw et al. 2018, as a bias). "The token two back" then means the same at output token 250 as at
            25, where a row of the learned table that few training targets reach means little. It reads no
            tree, and excludes ``decoder_position_shift``. 0 (default): Bart's learned positions.
        decoder_attention_window: W > 0, with ``decoder_relative_positions``: each decoder token's self-attention
            sees only itself and the W - 1 tokens before it (a sliding window; two layers reach 2W - 2 back). A
            conjunct then reads the few conjuncts before it and not how the form began: in ReCOGS_pos a form that
            begins with a subject's phrase (``nmod . in ( 1 , 4 ) AND sneeze ( 5 ) AND agent ( 5 , 1 )``), which
            no training form does, looks like a training form a few tokens later. What a longer reach gave, which
            words the output has named and how often, the pointer terms read from the whole output
            (``pointer_coverage``, ``pointer_head_counts``). It reads no tree. 0 (default): no window.
        output_copy: the output layer can also copy a source token (a pointer-generator, See et al. 2017): a
            learned attention over the encoder's outputs, from the decoder's last state, gives each source token
            a share, and a learned gate per decoder token mixes that copy distribution (each token id gets the
            shares of the source tokens with that id) with the vocabulary's softmax; the model's logits are the
            logarithm of the mixture. The logical forms write a noun or a name as the word itself
            (``Paula ( 3 )``): a word seen only alone in training, whose embedding learnt little, can still be
            written by where the decoder looks. It reads no tree. ``False`` (default): Bart's output layer.
        output_copy_lexicon: with ``output_copy``: a copy of a source token writes the output token aligned with
            it in the training pairs (``copy_lexicon_ids``) rather than the token itself: ``blessed`` writes
            ``bless``, ``liked`` ``like``. A verb seen in a single training sentence (COGS's *bless*) then needs
            only the decoder's look at it, not a mapping learnt from one example; Akyürek & Andreas (2021) give a
            sequence model a learnt lexicon for the same reason. It reads no tree, only the training pairs.
            ``False`` (default): a copy writes the source token.
        output_copy_positions: with ``output_copy``: the output's position tokens (``pointer_token_ids``: ``3`` in
            ``cake ( 3 )``, in ``x _ 3``) are written by pointing alone: the vocabulary's softmax gives them
            nothing, and a second learned attention from the decoder's last state over the source's words (its
            own query, key and gate) gives word k's share to the token naming position k. An index is then the
            word the decoder looks at (a pointer network's output, Vinyals et al. 2015), never a number token
            whose embedding training tied to the contexts it was seen in: after ``lend``, which names the source's
            *lended* (``pointer_named_words``), ``( 5 )`` is where the decoder looks, where a softmax over number
            tokens can write another number. Every index of ReCOGS_pos's and COGS's splits names a word of its
            input (counted: none names a position past the sentence). It reads no tree. ``False`` (default): off.
        copy_lexicon_ids: with ``output_copy_lexicon``: for every token id, the id a copy of it writes
            (``build_model`` aligns them on the training pairs it is given: ``copy_lexicon_ids``).
        pointer_named_words: with a pointer term and ``output_copy_lexicon``: an output token that writes a
            word (a noun, a name, a verb's lemma: ``pointer_word_ids``) names a source position too, the source
            token that the lexicon writes as that word, so that after ``scream`` the pointer terms read from
            ``screamed`` before its position is written (``scream ( 8 )``). Its k-th time in the output names
            the k-th such source token (the logical forms write a sentence's words in its order); a word with no
            such source token names nothing. On ReCOGS_pos train and gen this names the gold position of every
            one-argument conjunct whose word the lexicon finds in the source (all but 108 of train's 119,010
            and 165 of gen's 103,333: words the lexicon does not align, which name nothing).
            Without it only position tokens name a word, and the position after a lemma is chosen by the
            terms of the word named before it. It reads no tree, only the output's own tokens, the source
            tokens and the lexicon. ``False`` (default): off.
        pointer_word_ids: with ``pointer_named_words``: the ids of the output tokens that write a word: those
            the training targets write as a one-argument predicate (``cake ( 3 )``, COGS ``cake ( x _ 3 )``;
            ``build_model`` reads them from its training pairs).
    """

    model_type = "hf_recogs_structure_transformer"

    encoder_structure: str = "hard"
    structure_heads: int | None = None
    structure_layers: list[int] | None = None
    hard_relations: list[str] | None = None
    structure_tokens: bool = False
    num_relations: int = len(TREE_RELATIONS)
    encoder_word_classes: bool = False
    word_class_ids: list[int] | None = None
    encoder_functions: bool = False
    cross_attention_structure: str = "none"
    pointer_offsets: int = 0
    pointer_offsets_scope: str = "all"
    pointer_offsets_by: str = "position"
    pointer_scope_token_id: int | None = None
    pointer_keys: bool = False
    pointer_values: bool = False
    pointer_sides: bool = False
    pointer_token_ids: list[int] | None = None
    pointer_coverage: bool = False
    pointer_argument_mask: bool = False
    pointer_argument_tokens: list[int] | None = None
    pointer_arity_mask: bool = False
    pointer_arity_tokens: list[int] | None = None
    pointer_head_counts: bool = False
    decoder_position_shift: int = 0
    decoder_relative_positions: int = 0
    decoder_attention_window: int = 0
    output_copy: bool = False
    output_copy_lexicon: bool = False
    output_copy_positions: bool = False
    copy_lexicon_ids: list[int] | None = None
    pointer_named_words: bool = False
    pointer_word_ids: list[int] | None = None

    def validate_architecture(self):
        """Checks run by ``@strict`` after construction."""
        if self.encoder_structure not in ENCODER_STRUCTURE:
            raise ValueError(f"encoder_structure must be one of {', '.join(ENCODER_STRUCTURE)}, "
                             f"got {self.encoder_structure!r}")
        if self.num_relations != len(TREE_RELATIONS):
            raise ValueError(f"num_relations must be {len(TREE_RELATIONS)} (the labels of TREE_RELATIONS)")
        heads = self.encoder_attention_heads
        if self.structure_heads is not None and not 1 <= self.structure_heads <= heads:
            raise ValueError(f"structure_heads must be between 1 and encoder_attention_heads={heads}, "
                             f"got {self.structure_heads}")
        bad = [i for i in self.structure_layers or [] if not 0 <= i < self.encoder_layers]
        if bad:
            raise ValueError(f"structure_layers {bad} outside 0..{self.encoder_layers - 1} (encoder_layers="
                             f"{self.encoder_layers})")
        if self.cross_attention_structure not in CROSS_ATTENTION_STRUCTURE:
            raise ValueError(f"cross_attention_structure must be one of {', '.join(CROSS_ATTENTION_STRUCTURE)}, "
                             f"got {self.cross_attention_structure!r}")
        if not isinstance(self.pointer_offsets, int) or self.pointer_offsets < 0:
            raise ValueError(f"pointer_offsets must be a whole number >= 0 (0: off), got {self.pointer_offsets!r}")
        if self.pointer_offsets_scope not in POINTER_OFFSETS_SCOPE:
            raise ValueError(f"pointer_offsets_scope must be one of {', '.join(POINTER_OFFSETS_SCOPE)}, "
                             f"got {self.pointer_offsets_scope!r}")
        if self.pointer_offsets_scope != "all" and not self.pointer_offsets:
            raise ValueError("pointer_offsets_scope limits the offset term: it needs pointer_offsets > 0")
        if self.pointer_offsets_by not in POINTER_OFFSETS_BY:
            raise ValueError(f"pointer_offsets_by must be one of {', '.join(POINTER_OFFSETS_BY)}, "
                             f"got {self.pointer_offsets_by!r}")
        if self.pointer_offsets_by != "position" and not (self.pointer_offsets and
                                                           self.cross_attention_structure == "pointer"):
            raise ValueError(f"pointer_offsets_by={self.pointer_offsets_by!r} ranks source words by their tree "
                             "relation to the pointed word: it needs pointer_offsets > 0 and "
                             "cross_attention_structure='pointer'")
        if self.pointer_keys and not self.reads_pointer():
            raise ValueError("pointer_keys needs a pointer term: cross_attention_structure='pointer' and/or "
                             "pointer_offsets > 0")
        if self.pointer_arity_mask and not self.reads_pointer():
            raise ValueError("pointer_arity_mask keeps the word the output named last: it needs a pointer term, "
                             "cross_attention_structure='pointer' and/or pointer_offsets > 0")
        if self.pointer_head_counts and not self.reads_pointer():
            raise ValueError("pointer_head_counts counts the conjuncts each named word heads: it needs a pointer "
                             "term, cross_attention_structure='pointer' and/or pointer_offsets > 0")
        if self.pointer_coverage and not self.reads_pointer():
            raise ValueError("pointer_coverage counts the positions the output names: it needs a pointer term, "
                             "cross_attention_structure='pointer' and/or pointer_offsets > 0")
        for option, what in (("pointer_sides", "splits the tree labels of the pointer term"),
                             ("pointer_values", "adds the tree labels of the pointer term to the values"),
                             ("pointer_argument_mask", "reads the tree around the word named last")):
            if getattr(self, option) and self.cross_attention_structure != "pointer":
                raise ValueError(f"{option} {what}: it needs cross_attention_structure='pointer'")
        shift = self.decoder_position_shift
        if not isinstance(shift, int) or not 0 <= shift < self.max_position_embeddings:
            raise ValueError(f"decoder_position_shift must be a whole number from 0 (off) to "
                             f"max_position_embeddings - 1 = {self.max_position_embeddings - 1}, got {shift!r}")
        relative = self.decoder_relative_positions
        if not isinstance(relative, int) or relative < 0:
            raise ValueError(f"decoder_relative_positions must be a whole number >= 0 (0: off), got {relative!r}")
        if relative and shift:
            raise ValueError("decoder_relative_positions drops the decoder's learned positions that "
                             "decoder_position_shift shifts: set one of the two")
        window = self.decoder_attention_window
        if not isinstance(window, int) or window < 0:
            raise ValueError(f"decoder_attention_window must be a whole number >= 0 (0: off), got {window!r}")
        if window and not relative:
            raise ValueError("decoder_attention_window masks the decoder's relative self-attention: it needs "
                             "decoder_relative_positions > 0")
        classes = self.word_class_ids
        if classes is not None and (len(classes) != self.vocab_size or
                                    not all(0 <= c < len(WORD_CLASSES) for c in classes)):
            raise ValueError(f"word_class_ids must give every one of the {self.vocab_size} token ids a class "
                             f"0..{len(WORD_CLASSES) - 1} (WORD_CLASSES); build the model with "
                             "hf_recogs.models.build_model, which reads them from the tokenizer")
        if self.output_copy_lexicon and not self.output_copy:
            raise ValueError("output_copy_lexicon sets what a copy writes: it needs output_copy=true")
        if self.output_copy_positions and not self.output_copy:
            raise ValueError("output_copy_positions writes positions by the copy's pointing: it needs "
                             "output_copy=true")
        if self.pointer_named_words and not (self.reads_pointer() and self.output_copy_lexicon):
            raise ValueError("pointer_named_words lets a written word name its source token through the copy's "
                             "lexicon: it needs a pointer term (cross_attention_structure='pointer' and/or "
                             "pointer_offsets > 0) and output_copy_lexicon=true")
        words = self.pointer_word_ids
        if words is not None and not all(0 <= w < self.vocab_size for w in words):
            raise ValueError(f"pointer_word_ids must be token ids below vocab_size={self.vocab_size}; build the "
                             "model with hf_recogs.models.build_model and its training_pairs, which reads them")
        written = self.copy_lexicon_ids
        if written is not None and (len(written) != self.vocab_size or
                                    not all(0 <= w < self.vocab_size for w in written)):
            raise ValueError(f"copy_lexicon_ids must give every one of the {self.vocab_size} token ids a token id "
                             "to write; build the model with hf_recogs.models.build_model and its "
                             "training_pairs, which it aligns")
        unknown = [r for r in self.hard_relations or [] if r not in TREE_RELATIONS]
        if unknown:
            raise ValueError(f"hard_relations {unknown} not among {', '.join(TREE_RELATIONS)}")

    # The resolved settings (``None`` fields mean "the default"), for the model and for the run record.
    def heads_with_structure(self) -> int:
        if self.structure_heads is not None:
            return self.structure_heads
        return max(1, self.encoder_attention_heads // 2)

    def layers_with_structure(self) -> list[int]:
        if self.encoder_structure == "none":
            return []
        return sorted(set(range(self.encoder_layers) if self.structure_layers is None else self.structure_layers))

    def reads_pointer(self) -> bool:
        """Whether the decoder's cross-attention reads the position the output named last (tree or offsets)."""
        return self.cross_attention_structure == "pointer" or self.pointer_offsets > 0

    def pointer_tree_labels(self) -> tuple[str, ...]:
        """The labels of the tree pointer term (``cross_attention_structure="pointer"``)."""
        return POINTER_RELATIONS_WITH_SIDES if self.pointer_sides else POINTER_RELATIONS

    def hard_relation_names(self) -> list[str]:
        names = DEFAULT_HARD_RELATIONS if self.hard_relations is None else self.hard_relations
        return sorted({"self", *names}, key=TREE_RELATIONS.index)


__all__ = ["CROSS_ATTENTION_STRUCTURE", "DEFAULT_HARD_RELATIONS", "ENCODER_STRUCTURE", "POINTER_OFFSETS_BY",
           "POINTER_OFFSETS_SCOPE", "POINTER_RELATIONS", "POINTER_RELATIONS_WITH_SIDES", "SIDED_RELATIONS",
           "TREE_RELATIONS", "WORD_CLASSES", "WORD_FUNCTIONS", "StructureTransformerConfig"]
