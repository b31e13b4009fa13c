"""Configuration of the LSTM classifier of (input, candidate) pairs: the baseline of Kim, Ravikumar, Ainslie &
Ontañón (2021), "Improving Compositional Generalization in Classification Tasks via Structure Annotations".

Self-contained on purpose, like the LSTM seq2seq model's: this file and ``modeling_lstm_classifier.py`` are copied
next to a saved checkpoint (``auto_map``), so ``AutoModelForSequenceClassification.from_pretrained(...,
trust_remote_code=True)`` works without hf_recogs. It may import only transformers/torch and its sibling.
"""

from huggingface_hub.dataclasses import strict
from transformers import PreTrainedConfig


@strict
class LstmClassifierConfig(PreTrainedConfig):
    r"""
    An LSTM that reads ``[CLS] input [SEP] candidate`` left to right; its last layer's state at the last real
    token goes through two dense layers to one logit: does the candidate mean what the input says?

    Defaults are the paper's baseline: embeddings 512, 2 LSTM layers of 512, two dense layers (512 → 512 → 1).
    The model reads tokens and segments only; the structure annotations a data collator may also pass
    (``relation_ids``) are ignored.

    Args:
        embedding_size: width of the token (and segment) embeddings.
        hidden_size: width of each LSTM layer and of the first dense layer.
        num_layers: stacked LSTM layers.
        dropout: applied to the embeddings, between LSTM layers and before each dense layer.
        type_vocab_size: segments (0: ``[CLS]`` and the input, 1: ``[SEP]`` and the candidate); 0 reads no segments.
        max_position_embeddings: the longest pair the data collator lays out (tokens beyond are cut, the
            candidate's end first), as for the structure-masked encoder; the LSTM itself reads any length.
        structure_tokens: whether the collator appends the input's constituent tokens after its words (a
            linearised tree the LSTM reads like words); off in the paper's baseline.
    """

    model_type = "hf_recogs_lstm_classifier"

    vocab_size: int = 1000
    embedding_size: int = 512
    hidden_size: int = 512
    num_layers: int = 2
    dropout: float | int = 0.1
    type_vocab_size: int = 2
    max_position_embeddings: int = 256
    structure_tokens: bool = False
    initializer_range: float = 0.1
    pad_token_id: int | None = 0
    num_labels: int = 1

    def validate_architecture(self):
        """Checks run by ``@strict`` after construction."""
        for name in ("embedding_size", "hidden_size", "num_layers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.type_vocab_size < 0:
            raise ValueError(f"type_vocab_size must be 0 or more, got {self.type_vocab_size}")


__all__ = ["LstmClassifierConfig"]
