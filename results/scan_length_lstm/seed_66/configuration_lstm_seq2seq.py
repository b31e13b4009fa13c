"""Configuration of the ReCOGS reference LSTM (Wu, Manning & Potts 2023; set-up in docs/TRAINING.md of the
hf_recogs repository, "Paper set-ups").

Self-contained on purpose: this file (with ``modeling_lstm_seq2seq.py``) is copied next to a saved checkpoint
(``auto_map``), so that ``AutoModelForSeq2SeqLM.from_pretrained(..., trust_remote_code=True)`` works for
people who do not have hf_recogs installed. It may import only transformers/torch and its sibling module.
"""

from huggingface_hub.dataclasses import strict
from transformers import PreTrainedConfig


@strict
class LstmSeq2SeqConfig(PreTrainedConfig):
    r"""
    Encoder–decoder LSTM with global dot-product attention (Luong et al. 2015, "dot" score, no input feeding).

    Defaults are the ReCOGS reference LSTM: 2-layer unidirectional encoder and decoder, embedding size =
    hidden size = 512, dropout 0.3 on embeddings and encoder outputs, attention combination
    ``tanh(W [h_t; c_t])`` with ``W: 1024 → 512``, output projection tied to the decoder embedding.

    Args:
        vocab_size: size of the (shared) vocabulary; encoder and decoder still have their own embedding tables,
            as in the reference (which had separate source and target vocabularies).
        hidden_size: embedding size = LSTM hidden size (they must be equal for the tied output projection).
        encoder_layers / decoder_layers: stacked LSTM layers (no dropout between layers, like the reference).
        dropout: dropout on the source/target embeddings and on the encoder outputs.
        attention: use the global dot-product attention (default); ``False`` gives a plain encoder–decoder LSTM
            whose decoder state goes straight to the output projection (the best SCAN model of Lake & Baroni).
        tie_word_embeddings: tie the output projection to the decoder input embedding.
        cell: "lstm" (default) or "gru": the recurrent layers of encoder and decoder.
        teacher_forcing_ratio: the share of training updates that feed the decoder the gold previous token
            (teacher forcing); the others feed it its own greedy prediction, step by step. 1.0 (default) is
            always teacher forcing, as the ReCOGS reference; Lake & Baroni (2018) trained SCAN with 0.5.
    """

    model_type = "lstm_seq2seq"
    keys_to_ignore_at_inference = ["past_key_values", "cache"]
    attribute_map = {"d_model": "hidden_size", "num_hidden_layers": "encoder_layers"}

    vocab_size: int = 800
    hidden_size: int = 512
    encoder_layers: int = 2
    decoder_layers: int = 2
    dropout: float | int = 0.3
    attention: bool = True
    use_cache: bool = True
    pad_token_id: int | None = 0
    bos_token_id: int | None = 1
    eos_token_id: int | list[int] | None = 2
    decoder_start_token_id: int | None = 1
    is_encoder_decoder: bool = True
    tie_word_embeddings: bool = True
    teacher_forcing_ratio: float | int = 1.0
    cell: str = "lstm"

    def validate_architecture(self):
        """Checks run by ``@strict`` after construction."""
        if self.hidden_size < 1 or self.encoder_layers < 1 or self.decoder_layers < 1:
            raise ValueError("hidden_size, encoder_layers and decoder_layers must be >= 1")
        if self.encoder_layers != self.decoder_layers:
            raise ValueError(
                "encoder_layers must equal decoder_layers: the encoder's final (h, c) per layer initialises "
                f"the decoder (got {self.encoder_layers} and {self.decoder_layers})"
            )
        if not 0.0 <= float(self.dropout) < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.cell not in ("lstm", "gru"):
            raise ValueError(f"cell must be 'lstm' or 'gru', got {self.cell!r}")
        if not 0.0 <= float(self.teacher_forcing_ratio) <= 1.0:
            raise ValueError(f"teacher_forcing_ratio must be in [0, 1], got {self.teacher_forcing_ratio}")


__all__ = ["LstmSeq2SeqConfig"]
