"""From-scratch seq2seq baselines of the ReCOGS paper, as transformers models.

``build_model(arch, tokenizer, max_positions=512, **overrides)`` builds one of ``ARCHITECTURES``:

- ``"reference_transformer"``: the ReCOGS reference Transformer exactly (BERT2BERT ``EncoderDecoderModel``, init
  0.02, separate encoder embedding): the paper configs use it;
- ``"transformer"``: reference-size Transformer on ``BartForConditionalGeneration`` (learned absolute positions,
  one shared embedding table, init std d_model^-0.5 so that it uses its source from the first steps; see
  ``transformer.py`` for why the reference 0.02 collapses on this stack, ``init_std=0.02`` to restore it);
- ``"lstm"``: the reference LSTM with attention (custom ``lstm_seq2seq`` model; registered with the Auto classes
  when this package is imported, and saved with its code + ``auto_map`` for ``trust_remote_code=True``);
- ``"relative_transformer"``: the same Transformer size on ``T5ForConditionalGeneration`` (relative positions);
- ``"structure_transformer"`` (``STRUCTURE_ARCHITECTURES``, the structure track): ``transformer`` whose encoder
  self-attention reads the input sentence's parse tree (``relation_ids``; ``configuration_structure_transformer.py``
  / ``modeling_structure_transformer.py``), registered with ``AutoModelForSeq2SeqLM`` the same two ways as the
  LSTM. Kept out of ``ARCHITECTURES`` (the four baselines, which read nothing but tokens); ``SEQ2SEQ_ARCHITECTURES``
  holds all five.

Special token ids (``<pad>`` 0, ``<s>`` 1 = decoder start, ``</s>`` 2) are taken from the tokenizer and set on the
config and on the generation config; ``generation_config.max_length = max_positions``, greedy decoding.

Classification of (input, candidate) pairs with structure annotations: ``StructureEncoderForSequenceClassification``
(``configuration_structure_encoder.py`` / ``modeling_structure_encoder.py``), registered with
``AutoModelForSequenceClassification`` the same two ways as the LSTM.
"""

from __future__ import annotations

import dataclasses
import warnings

from transformers import (
    AutoConfig,
    AutoModelForSeq2SeqLM,
    AutoModelForSequenceClassification,
    BartConfig,
    GenerationConfig,
    PreTrainedModel,
)

from .configuration_lstm_classifier import LstmClassifierConfig
from .configuration_lstm_seq2seq import LstmSeq2SeqConfig
from .configuration_structure_encoder import StructureEncoderConfig
from .configuration_structure_transformer import StructureTransformerConfig
from .modeling_lstm_classifier import LstmClassifierForSequenceClassification
from .modeling_lstm_seq2seq import LstmSeq2SeqForConditionalGeneration
from .modeling_structure_encoder import StructureEncoderForSequenceClassification
from .modeling_structure_transformer import StructureTransformerForConditionalGeneration
from .transformer import MODEL_CLASSES, bart_config, t5_config

ARCHITECTURES = ("transformer", "reference_transformer", "lstm", "relative_transformer")  # seq2seq baselines
STRUCTURE_ARCHITECTURES = ("structure_transformer",)  # seq2seq models that also read the input's parse
SEQ2SEQ_ARCHITECTURES = ARCHITECTURES + STRUCTURE_ARCHITECTURES
CLASSIFIERS = ("structure_encoder", "lstm_classifier")  # (input, candidate) classifiers

# EncoderDecoderModel (the reference Transformer) warns on every first forward with labels that transformers
# 4.12 changed how its loss is computed: true, and irrelevant for a model trained from scratch today.
warnings.filterwarnings("ignore", message="Version v4.12.0 introduces a better way", category=FutureWarning)



def _register(config_class, model_class, auto_class) -> None:
    """Make a custom model loadable two ways: by the Auto classes once hf_recogs is imported, and from a saved
    checkpoint alone (``auto_map`` + its code files, ``trust_remote_code=True``)."""
    AutoConfig.register(config_class.model_type, config_class, exist_ok=True)
    auto_class.register(config_class, model_class, exist_ok=True)
    config_class.register_for_auto_class()
    model_class.register_for_auto_class(auto_class.__name__)


_register(LstmSeq2SeqConfig, LstmSeq2SeqForConditionalGeneration, AutoModelForSeq2SeqLM)
_register(StructureTransformerConfig, StructureTransformerForConditionalGeneration, AutoModelForSeq2SeqLM)
_register(StructureEncoderConfig, StructureEncoderForSequenceClassification, AutoModelForSequenceClassification)
_register(LstmClassifierConfig, LstmClassifierForSequenceClassification, AutoModelForSequenceClassification)


def _lstm_config(vocab_size: int, special_ids: dict, max_positions: int, **overrides) -> LstmSeq2SeqConfig:
    return LstmSeq2SeqConfig(vocab_size=vocab_size, **{**special_ids, **overrides})


def _structure_transformer_config(vocab_size: int, special_ids: dict, max_positions: int,
                                  **overrides) -> StructureTransformerConfig:
    """``bart_config``'s sizes and init (so that structure off is our ``transformer``), plus the structure
    options of ``StructureTransformerConfig``."""
    own = {f.name for f in dataclasses.fields(StructureTransformerConfig)} - {f.name for f in dataclasses.fields(
        BartConfig)}
    structure = {k: overrides.pop(k) for k in sorted(own) if k in overrides}
    bart = bart_config(vocab_size, special_ids, max_positions, **overrides)
    kept = {k: v for k, v in bart.to_dict().items() if k not in ("model_type", "transformers_version",
                                                                  "architectures", "_name_or_path")}
    return StructureTransformerConfig(**kept, **structure, attn_implementation=bart._attn_implementation)


def _structure_encoder_config(vocab_size: int, special_ids: dict, max_positions: int,
                              **overrides) -> StructureEncoderConfig:
    return StructureEncoderConfig(vocab_size=vocab_size, pad_token_id=special_ids["pad_token_id"],
                                  max_position_embeddings=max_positions, **overrides)


def _lstm_classifier_config(vocab_size: int, special_ids: dict, max_positions: int,
                           **overrides) -> LstmClassifierConfig:
    return LstmClassifierConfig(vocab_size=vocab_size, pad_token_id=special_ids["pad_token_id"],
                                max_position_embeddings=max_positions, **overrides)


_BUILDERS = {
    "transformer": MODEL_CLASSES["transformer"],
    "reference_transformer": MODEL_CLASSES["reference_transformer"],
    "lstm": (LstmSeq2SeqConfig, LstmSeq2SeqForConditionalGeneration, _lstm_config),
    "relative_transformer": MODEL_CLASSES["relative_transformer"],
    "structure_transformer": (StructureTransformerConfig, StructureTransformerForConditionalGeneration,
                              _structure_transformer_config),
    "structure_encoder": (StructureEncoderConfig, StructureEncoderForSequenceClassification,
                          _structure_encoder_config),
    "lstm_classifier": (LstmClassifierConfig, LstmClassifierForSequenceClassification, _lstm_classifier_config),
}

# Config fields that are bookkeeping, not model settings: not accepted as overrides.
_NOT_OVERRIDABLE = {"architectures", "transformers_version", "id2label", "label2id", "problem_type"}


def valid_overrides(arch: str) -> list[str]:
    """The keyword arguments ``build_model(arch, ...)`` accepts as overrides (config fields and their aliases)."""
    config_class = _builders(arch)[0]
    names = {f.name for f in dataclasses.fields(config_class)} | set(config_class.attribute_map)
    names |= {"attn_implementation"}
    if arch == "reference_transformer":  # both sides are built here: not the caller's to set
        names -= {"is_decoder", "add_cross_attention", "pad_token_id"}
    return sorted(names - _NOT_OVERRIDABLE - {"vocab_size"})


def _builders(arch: str):
    try:
        return _BUILDERS[arch]
    except KeyError:
        raise ValueError(f"unknown architecture {arch!r}; valid: "
                         f"{', '.join(SEQ2SEQ_ARCHITECTURES + CLASSIFIERS)}") from None


def special_token_ids(tokenizer) -> dict:
    """pad/bos/eos/decoder_start ids from a tokenizer built by ``hf_recogs.tokenization.build_tokenizer``."""
    ids = {
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    missing = [name for name, value in ids.items() if value is None]
    if missing:
        raise ValueError(f"tokenizer has no {', '.join(missing)}; build it with hf_recogs.tokenization")
    ids["decoder_start_token_id"] = ids["bos_token_id"]
    return ids


def build_config(arch: str, vocab_size: int, max_positions: int = 512, special_ids: dict | None = None,
                 **overrides):
    """The config ``build_model`` would use (checks the overrides without building any weights)."""
    _, _, make_config = _builders(arch)
    if max_positions < 1:
        raise ValueError(f"max_positions must be >= 1, got {max_positions}")
    unknown = sorted(set(overrides) - set(valid_overrides(arch)))
    if unknown:
        raise ValueError(
            f"unknown override(s) for {arch!r}: {', '.join(unknown)}; valid: {', '.join(valid_overrides(arch))}"
        )
    special = special_ids or {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "decoder_start_token_id": 1}
    config = make_config(vocab_size, special, max_positions, **overrides)
    _check_heads(config)
    return config


def _check_heads(config) -> None:
    """Attention needs the model width to split evenly into heads (Bart/BERT check only when building weights)."""
    parts = [config] + [getattr(config, side) for side in ("encoder", "decoder") if hasattr(config, side)]
    for part in parts:
        width = getattr(part, "d_model", None)
        width = getattr(part, "hidden_size", None) if width is None else width
        if isinstance(width, int) and width < 1:
            raise ValueError(f"the model width must be at least 1, got {width}")
        for heads_name in ("encoder_attention_heads", "decoder_attention_heads", "num_attention_heads"):
            heads = getattr(part, heads_name, None)
            if width and isinstance(heads, int) and heads > 0 and width % heads:
                raise ValueError(f"the model width {width} is not divisible by {heads_name}={heads}; "
                                 "choose a width that is a multiple of the heads")


def build_model(arch: str, tokenizer, max_positions: int = 512, training_pairs=None,
                **overrides) -> PreTrainedModel:
    """A freshly initialised model of ``arch`` for ``tokenizer``'s vocabulary (seed torch before calling).

    ``max_positions``: learned positions of ``transformer`` and the generation ``max_length`` of all three
    (COGS gen targets reach 480 tokens + ``</s>``, SLOG 601: pass more for SLOG).
    ``training_pairs``: (sources, targets) of the training set, which an ``output_copy_lexicon`` model's
    lexicon is aligned on (``copy_lexicon_ids``); other models ignore them.
    ``overrides``: config fields, e.g. ``d_model=32, encoder_layers=1`` (transformer), ``d_model=32,
    num_layers=1`` (relative_transformer), ``hidden_size=32`` (lstm); see ``valid_overrides(arch)``.
    """
    _, model_class, _ = _builders(arch)
    special = special_token_ids(tokenizer)
    config = build_config(arch, len(tokenizer), max_positions, special, **overrides)
    if isinstance(config, StructureTransformerConfig) and (config.reads_pointer() or config.output_copy_positions) \
            and config.pointer_token_ids is None:
        config.pointer_token_ids = position_token_ids(tokenizer, max_positions)
    if isinstance(config, StructureTransformerConfig) and config.pointer_argument_mask and \
            config.pointer_argument_tokens is None:
        config.pointer_argument_tokens = argument_token_ids(tokenizer)
    if isinstance(config, StructureTransformerConfig) and (config.pointer_arity_mask or config.pointer_head_counts) \
            and config.pointer_arity_tokens is None:
        config.pointer_arity_tokens = arity_token_ids(
            tokenizer, "pointer_arity_mask" if config.pointer_arity_mask else "pointer_head_counts")
    if isinstance(config, StructureTransformerConfig) and config.pointer_offsets_scope != "all" and \
            config.pointer_scope_token_id is None:
        config.pointer_scope_token_id = scope_token_id(tokenizer)
    if isinstance(config, StructureTransformerConfig) and config.encoder_word_classes and \
            config.word_class_ids is None:
        config.word_class_ids = word_class_ids(tokenizer)
    if isinstance(config, StructureTransformerConfig) and config.output_copy_lexicon and \
            config.copy_lexicon_ids is None:
        if training_pairs is None:
            raise ValueError("output_copy_lexicon aligns its lexicon on the training pairs: pass "
                             "build_model(..., training_pairs=(sources, targets))")
        config.copy_lexicon_ids = copy_lexicon_ids(tokenizer, *training_pairs)
    if isinstance(config, StructureTransformerConfig) and config.pointer_named_words and \
            config.pointer_word_ids is None:
        if training_pairs is None:
            raise ValueError("pointer_named_words reads the words of the training targets: pass "
                             "build_model(..., training_pairs=(sources, targets))")
        config.pointer_word_ids = word_token_ids(tokenizer, training_pairs[1])
    model = model_class(config)
    if arch in CLASSIFIERS:  # one logit, nothing to generate
        return model
    model.generation_config = GenerationConfig(
        decoder_start_token_id=special["decoder_start_token_id"],
        bos_token_id=special["bos_token_id"],
        eos_token_id=special["eos_token_id"],
        pad_token_id=special["pad_token_id"],
        max_length=max_positions,
        num_beams=1,
        do_sample=False,
    )
    return model


def position_token_ids(tokenizer, max_positions: int) -> list[int]:
    """The ids of the output tokens ``0``, ``1``, ... that name source positions (ReCOGS_pos ``( 7 )``, COGS
    ``x _ 7``), up to the largest the vocabulary holds below ``max_positions``; -1 for a number it lacks."""
    vocab = tokenizer.get_vocab()
    ids = [vocab.get(str(position), -1) for position in range(max_positions)]
    while ids and ids[-1] < 0:
        ids.pop()
    if not ids:
        raise ValueError("a pointer model needs outputs that name source positions by number (tokens 0, 1, ...); "
                         "this vocabulary has none")
    return ids


def _output_token_ids(tokenizer, tokens: tuple[str, ...], option: str, outputs: str) -> list[int]:
    """The ids of ``tokens`` in the vocabulary; one line naming ``option`` and the ``outputs`` it needs if any is
    missing."""
    vocab = tokenizer.get_vocab()
    missing = [t for t in tokens if t not in vocab]
    if missing:
        raise ValueError(f"{option} needs outputs of {outputs}; this vocabulary has no "
                         f"{' or '.join(repr(t) for t in missing)}")
    return [vocab[t] for t in tokens]


def argument_token_ids(tokenizer) -> list[int]:
    """The ids of the output tokens ``,`` (opens a conjunct's second argument) and ``)`` (closes it)."""
    return _output_token_ids(tokenizer, (",", ")"), "pointer_argument_mask", "binary conjuncts `role ( i , j )`")


def arity_token_ids(tokenizer, option: str = "pointer_arity_mask") -> list[int]:
    """The ids of the output tokens ``(`` (opens a conjunct's arguments) and ``,`` (opens its second), which
    ``option`` needs."""
    return _output_token_ids(tokenizer, ("(", ","), option,
                             "conjuncts `pred ( i )` / `role ( i , j )`")


def word_class_ids(tokenizer, lexicon=None) -> list[int]:
    """The class (index into ``WORD_CLASSES``) of every token id, as our COGS parser's ``lexicon`` (default: the one
    it learns from ReCOGS_pos train) reads the token as a word; special tokens are "other"."""
    from ..structure import cogs_default_lexicon, cogs_word_class
    from .configuration_structure_transformer import WORD_CLASSES

    lexicon = lexicon or cogs_default_lexicon()
    special = set(tokenizer.all_special_tokens)
    classes = [0] * len(tokenizer)
    for token, token_id in tokenizer.get_vocab().items():
        if token not in special:
            classes[token_id] = WORD_CLASSES.index(cogs_word_class(token, lexicon))
    return classes


def aligned_words(sources, targets, threshold: float = 0.5) -> dict[str, str]:
    """Each source word's output word in the training pairs ``sources`` / ``targets`` (texts of space-separated
    tokens): the output word w with the highest Dice coefficient 2 c(x, w) / (c(x) + c(w)) over rows (c counts
    the rows holding a word, c(x, w) those holding both), when it reaches ``threshold``; a tie goes to the word
    itself. Words are tokens with a letter, so that positions and brackets align with nothing. On ReCOGS_pos
    train, ``blessed`` (one row) gets ``bless``, ``ate`` ``eat``, a noun or a name itself; a function word gets
    the output word its construction brings, when one comes often enough (``that``: ``ccomp``)."""
    import numpy as np
    from scipy.sparse import csr_matrix

    def incidence(texts, index: dict[str, int]):
        rows, cols = [], []
        for row, text in enumerate(texts):
            for word in {t for t in text.split() if any(c.isalpha() for c in t)}:
                rows.append(row)
                cols.append(index.setdefault(word, len(index)))
        return csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(row + 1, len(index)))

    source_index, target_index = {}, {}
    x, y = incidence(sources, source_index), incidence(targets, target_index)
    both = (x.T @ y).toarray()
    dice = 2 * both / (np.asarray(x.sum(0)).ravel()[:, None] + np.asarray(y.sum(0)).ravel()[None, :])
    target_words = list(target_index)
    aligned = {}
    for word, i in source_index.items():
        best = int(dice[i].argmax())
        if word in target_index and dice[i, target_index[word]] == dice[i, best]:
            best = target_index[word]
        if dice[i, best] >= threshold:
            aligned[word] = target_words[best]
    return aligned


def copy_lexicon_ids(tokenizer, sources, targets) -> list[int]:
    """For every token id, the id an ``output_copy_lexicon`` copy of it writes: its ``aligned_words`` word on
    the training pairs ``sources`` / ``targets`` when the vocabulary has it, else the token itself."""
    vocab = tokenizer.get_vocab()
    written = list(range(len(tokenizer)))
    for source, target in aligned_words(sources, targets).items():
        if source in vocab and target in vocab:
            written[vocab[source]] = vocab[target]
    return written


def one_argument_words(targets) -> set[str]:
    """The tokens that ``targets`` (logical forms, space-separated tokens) write as a one-argument predicate: a
    token with a letter followed by ``(`` and an argument list without ``,`` (``cake ( 3 )``, ``Paula ( 0 )``,
    COGS ``cake ( x _ 3 )``), not a role or ``nmod . in ( 3 , 6 )``."""
    words = set()
    for target in targets:
        tokens = target.split()
        for i, token in enumerate(tokens[:-1]):
            if tokens[i + 1] == "(" and any(c.isalpha() for c in token):
                end = tokens.index(")", i + 1) if ")" in tokens[i + 1:] else len(tokens)
                if "," not in tokens[i + 2:end]:
                    words.add(token)
    return words


def word_token_ids(tokenizer, targets) -> list[int]:
    """The ids of the output tokens that write a word (``one_argument_words`` of the training ``targets``)."""
    vocab = tokenizer.get_vocab()
    return sorted(vocab[w] for w in one_argument_words(targets) if w in vocab)


def scope_token_id(tokenizer) -> int:
    """The id of the output token ``AND``, which ends the part of the output ``pointer_offsets_scope`` limits."""
    vocab = tokenizer.get_vocab()
    if "AND" not in vocab:
        raise ValueError("pointer_offsets_scope='noun_list' ends the offset term at the output's first AND; this "
                         "vocabulary has no 'AND' (use pointer_offsets_scope='all')")
    return vocab["AND"]


def count_parameters(model) -> int:
    """Distinct trainable parameters (tied weights counted once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


__all__ = [
    "ARCHITECTURES",
    "CLASSIFIERS",
    "SEQ2SEQ_ARCHITECTURES",
    "STRUCTURE_ARCHITECTURES",
    "LstmClassifierConfig",
    "LstmClassifierForSequenceClassification",
    "LstmSeq2SeqConfig",
    "LstmSeq2SeqForConditionalGeneration",
    "StructureEncoderConfig",
    "StructureEncoderForSequenceClassification",
    "StructureTransformerConfig",
    "StructureTransformerForConditionalGeneration",
    "aligned_words",
    "bart_config",
    "build_config",
    "build_model",
    "copy_lexicon_ids",
    "count_parameters",
    "one_argument_words",
    "special_token_ids",
    "t5_config",
    "valid_overrides",
    "word_token_ids",
]
