"""Transformer baselines on stock transformers architectures (checkpoints load without custom code).

``transformer``: the ReCOGS reference Transformer size (RESULTS §5.1: 2+2 layers, d_model 300, 4 heads of 75,
FFN 512, GELU, dropout 0.1 on hidden states and attention, learned absolute positions, init std 0.02, post-LN)
on ``BartForConditionalGeneration``. Differences to the reference BERT2BERT ``EncoderDecoderModel``, all minor:
- one shared vocabulary and one embedding table for encoder, decoder and output projection (the reference
  had separate source/target vocabularies; it tied only the decoder output to the decoder input embedding);
- no token-type embeddings and no pooler (both unused by the reference); Bart adds a LayerNorm on the
  embeddings like BERT does; positions are offset by 2 inside Bart (``max_positions`` usable positions);
- ``scale_embedding=False`` (BERT does not scale either); no forced BOS/EOS tokens at generation time.

``relative_transformer``: the same size on ``T5ForConditionalGeneration`` (relative position bias; pre-LN RMSNorm
without biases, GELU feed-forward). 64 buckets with ``max_distance`` 640: in the bidirectional encoder, 16 exact
offsets per direction and log-spaced buckets up to 640; in the causal decoder, 32 exact and log-spaced up to 640,
so distinct buckets cover the longest targets we train or decode (SLOG ≈ 600 tokens).
"""

from __future__ import annotations

from transformers import BartConfig, BartForConditionalGeneration, T5Config, T5ForConditionalGeneration

# Reference sizes (RESULTS §5.1).
D_MODEL = 300
HEADS = 4
FFN = 512
LAYERS = 2
DROPOUT = 0.1


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
        init_std=0.02,
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


MODEL_CLASSES = {
    "transformer": (BartConfig, BartForConditionalGeneration, bart_config),
    "relative_transformer": (T5Config, T5ForConditionalGeneration, t5_config),
}
