"""Word-level tokenizers for the from-scratch baselines.

All benchmarks in hf_recogs are whitespace-tokenised on both sides (the ReCOGS reference splits on single
spaces; COGS/ReCOGS/SLOG/SCAN/SyGNS never contain other whitespace inside a field). One vocabulary covers the
words of both sides, so the encoder and decoder can share an embedding table where the architecture wants
that (Bart, T5).

Layout of the vocabulary: ``<pad>`` 0, ``<s>`` 1, ``</s>`` 2, ``<unk>`` 3, then the words by decreasing
frequency (ties alphabetical), so the same data always gives the same ids. Encoding appends ``</s>``;
``<s>`` is the decoder start token and is never added by the tokenizer. Decoding with
``skip_special_tokens=True`` gives the words joined by single spaces (no clean-up of spaces before
punctuation: a logical form keeps ``x _ 1 ;`` exactly).

Difference to the ReCOGS reference (docs/TRAINING.md, "Paper set-ups"): the reference has separate
source/target vocabularies, wraps both sides as ``[BOS] … [EOS]`` and makes the model emit ``[BOS]`` first;
here labels are ``… </s>`` and the decoder starts from ``<s>``. Words unseen when the vocabulary was built
become ``<unk>``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)  # ids 0, 1, 2, 3
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)

__all__ = [
    "BOS",
    "BOS_ID",
    "EOS",
    "EOS_ID",
    "PAD",
    "PAD_ID",
    "SPECIAL_TOKENS",
    "UNK",
    "UNK_ID",
    "build_tokenizer",
    "build_vocab",
]


def build_vocab(texts: Iterable[str], min_frequency: int = 1) -> dict[str, int]:
    """Specials first (ids 0–3), then whitespace-split words with count ≥ ``min_frequency``,
    by decreasing count and then alphabetically."""
    if min_frequency < 1:
        raise ValueError(f"min_frequency must be >= 1, got {min_frequency}")
    counts: Counter[str] = Counter()
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}: {text!r}")
        counts.update(text.split())
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS)}
    for word, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if count >= min_frequency and word not in vocab:
            vocab[word] = len(vocab)
    return vocab


def build_tokenizer(
    sources: Iterable[str], targets: Iterable[str], min_frequency: int = 1
) -> PreTrainedTokenizerFast:
    """One word-level tokenizer over the whitespace-split words of ``sources`` and ``targets``.

    ``tokenizer(text)`` and ``tokenizer(text_target=lf)`` both give ``ids(words) + [</s>]``;
    ``decode(ids, skip_special_tokens=True)`` gives the words joined by single spaces.
    """
    sources = list(sources)
    targets = list(targets)
    vocab = build_vocab([*sources, *targets], min_frequency=min_frequency)

    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()

    # No decoder: tokenizers then joins the kept tokens with single spaces, which is what we want.
    tok.post_processor = processors.TemplateProcessing(
        single=f"$A:0 {EOS}:0",
        pair=f"$A:0 {EOS}:0 $B:1 {EOS}:1",
        special_tokens=[(EOS, EOS_ID)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token=PAD,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        clean_up_tokenization_spaces=False,
        padding_side="right",
        truncation_side="right",
        model_input_names=["input_ids", "attention_mask"],
    )
