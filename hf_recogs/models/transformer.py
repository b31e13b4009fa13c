"""Transformer baselines on stock transformers architectures (checkpoints load without custom code).

``reference_transformer``: the ReCOGS reference model exactly as its code builds it (Wu, Manning &
Potts 2023, `frankaging/ReCOGS` ``run_cogs.py``): a BERT encoder and a BERT decoder with cross-attention in an
``EncoderDecoderModel``, 2+2 layers, d_model 300, 4 heads, FFN 512, GELU, dropout 0.1, learned absolute
positions, token types and an (unused) pooler, init std 0.02 everywhere, the decoder's output layer tied to the
decoder's input embedding and **the encoder's embedding separate**. The paper configs use it. Differences: one
vocabulary for both sides (the reference had separate source/target vocabularies: the tables here have rows
that one side never uses), and labels are ``… </s>`` with ``<s>`` as decoder start (the reference also made the
model emit ``[BOS]`` first).

``transformer``: the same size on ``BartForConditionalGeneration`` (post-LN, learned positions, SDPA
attention), our fast model. Bart keeps **one** embedding table for the encoder input, the decoder input and the
output layer, and projects the decoder's last state straight onto that table (BERT first applies a dense +
GELU + LayerNorm transform). With the reference init (std 0.02) this stack ignores its source within ~25 Adam
steps at lr 1e-3: the decoder learns a language model of the logical forms and its predictions stop depending
on the sentence. Measured with ``bench/fidelity_check.py --diagnose`` (docs/TRAINING.md has the table): giving
Bart an output layer of its own removes the collapse; giving the encoder a table of its own, or dropping the
embedding LayerNorm, does not; the reference (tied output layer, but behind its transform) does not collapse. So
the part that collapses is the decoder's input table doubling as its output layer with nothing in between. Our
reading: at 0.02 the cross-attention path starts ~8x weaker than at d_model^-0.5 (two 0.02 projections in
series), while the tied table gives the decoder a direct previous-word → next-word route through the residual
stream that fits the targets' language in a few dozen steps and leaves no gradient for the source. Our default
init for ``transformer`` is therefore ``init_std = d_model ** -0.5`` (0.058): the source is used from the first
evaluation; ``init_std=0.02`` restores the reference init exactly, collapse included.

``relative_transformer``: the same size on ``T5ForConditionalGeneration`` (relative position bias; pre-LN RMSNorm
without biases, GELU feed-forward). T5 initialises its shared embedding with std 1.0 (no collapse). 64 buckets
with ``max_distance`` 640: in the bidirectional encoder, 16 exact offsets per direction and log-spaced buckets
up to 640; in the causal decoder, 32 exact and log-spaced up to 640, so distinct buckets cover the longest
targets we train or decode (SLOG ≈ 600 tokens).
"""

from __future__ import annotations

from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    BertConfig,
    EncoderDecoderConfig,
    EncoderDecoderModel,
    T5Config,
    T5ForConditionalGeneration,
)

# Reference sizes: the ReCOGS reference Transformer (docs/TRAINING.md, "Paper set-ups").
D_MODEL = 300
HEADS = 4
FFN = 512
LAYERS = 2
DROPOUT = 0.1
REFERENCE_INIT_STD = 0.02  # BERT's initializer_range, what the reference model used


def bart_config(vocab_size: int, special_ids: dict, max_positions: int, **overrides) -> BartConfig:
    kwargs = dict(
        vocab_size=vocab_size,
        d_model=D_MODEL,
        encoder_layers=LAYERS,
        decoder_layers=LAYERS,
        encoder_attention_heads=HEADS,
        decoder_attention_heads=HEADS,
        encoder_ffn_dim=FFN,
        decoder_ffn_dim=FFN,
        activation_function="gelu",
        dropout=DROPOUT,
        attention_dropout=DROPOUT,
        activation_dropout=0.0,
        init_std=max(1, overrides.get("d_model", D_MODEL)) ** -0.5,  # not 0.02: see the module docstring
        max_position_embeddings=max_positions,
        scale_embedding=False,
        forced_eos_token_id=None,
        tie_word_embeddings=True,
        use_cache=True,
        **special_ids,
    )
    kwargs.update(overrides)
    kwargs.setdefault("attn_implementation", "sdpa")
    return BartConfig(**kwargs)


def t5_config(vocab_size: int, special_ids: dict, max_positions: int, **overrides) -> T5Config:
    special = dict(special_ids)
    kwargs = dict(
        vocab_size=vocab_size,
        d_model=D_MODEL,
        d_kv=D_MODEL // HEADS,
        d_ff=FFN,
        num_layers=LAYERS,
        num_decoder_layers=LAYERS,
        num_heads=HEADS,
        dropout_rate=DROPOUT,
        feed_forward_proj="gelu",
        relative_attention_num_buckets=64,
        relative_attention_max_distance=640,
        tie_word_embeddings=True,
        use_cache=True,
        **special,
    )
    kwargs.update(overrides)
    kwargs.setdefault("attn_implementation", "sdpa")
    return T5Config(**kwargs)


def bert2bert_config(vocab_size: int, special_ids: dict, max_positions: int, **overrides) -> EncoderDecoderConfig:
    """The reference BERT2BERT shape; ``overrides`` are ``BertConfig`` fields applied to both sides."""
    common = dict(
        vocab_size=vocab_size,
        hidden_size=D_MODEL,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=FFN,
        hidden_act="gelu",
        hidden_dropout_prob=DROPOUT,
        attention_probs_dropout_prob=DROPOUT,
        max_position_embeddings=max_positions,
        type_vocab_size=2,
        initializer_range=REFERENCE_INIT_STD,
        pad_token_id=special_ids["pad_token_id"],
        attn_implementation="sdpa",
    )
    common.update(overrides)
    encoder = BertConfig(**common)
    decoder = BertConfig(**common, is_decoder=True, add_cross_attention=True)
    config = EncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)
    for name, value in special_ids.items():
        setattr(config, name, value)
    config.tie_encoder_decoder = False
    config.vocab_size = vocab_size  # for readers of config.vocab_size; the model uses decoder.vocab_size
    return config


MODEL_CLASSES = {
    "reference_transformer": (BertConfig, EncoderDecoderModel, bert2bert_config),
    "transformer": (BartConfig, BartForConditionalGeneration, bart_config),
    "relative_transformer": (T5Config, T5ForConditionalGeneration, t5_config),
}
