"""Configuration of the structure-masked encoder classifier (Kim, Ravikumar, Ainslie & Ontañón 2021,
"Improving Compositional Generalization in Classification Tasks via Structure Annotations").

Self-contained on purpose, like the LSTM's: this file and ``modeling_structure_encoder.py`` are copied next to a
saved checkpoint (``auto_map``), so ``AutoModelForSequenceClassification.from_pretrained(...,
trust_remote_code=True)`` works without hf_recogs. It may import only transformers/torch and its sibling.
"""

from huggingface_hub.dataclasses import strict
from transformers import PreTrainedConfig

ATTENTION_KINDS = ("none", "hard", "soft", "both")

# The relation of a token pair (query row i, key column j), one label per pair; the data collator writes them.
# Where several hold, the first in this order wins: self, CLS, tree edge, cross-link, block.
RELATIONS = ("none", "self", "from_cls", "to_cls", "parent_to_child", "child_to_parent", "input_block",
             "candidate_block", "input_to_candidate_link", "candidate_to_input_link")
# The pairs a hard mask lets attend: self, the CLS row and column, tree edges both ways (+ cross-links).
HARD_RELATIONS = ("self", "from_cls", "to_cls", "parent_to_child", "child_to_parent")
LINK_RELATIONS = ("input_to_candidate_link", "candidate_to_input_link")


@strict
class StructureEncoderConfig(PreTrainedConfig):
    r"""
    An encoder over ``[CLS] input structure-tokens [SEP] candidate`` with one logit on ``[CLS]``: does the
    candidate mean what the input says?

    Defaults are the paper's relative-attention encoder: pre-LN, 6 layers, hidden 128, 16 heads, FFN 512, GELU,
    attention dropout 0, learned absolute positions (256) and two segments. ``pre_layer_norm=False``,
    ``num_hidden_layers=2``, ``intermediate_size=2048``, ``position_embedding="sinusoidal"`` and
    ``attention="none"`` give the paper's Transformer baseline.

    Args:
        attention: how structure enters self-attention. ``"none"``: every token attends to every token;
            ``"hard"``: only the pairs of ``HARD_RELATIONS`` (and the cross-links with ``cross_links``) attend;
            ``"soft"``: every pair attends, with a learned term per relation label added to the attention logit
            (Shaw et al. 2018 style: ``q · r_label``); ``"both"``: the hard mask and the soft terms.
        cross_links: whether the input ↔ candidate links count (a hard-mask pair and their own soft labels);
            off, linked pairs are treated as unrelated.
        structure_tokens: whether the inputs carry constituent tokens after the words (recorded for the data
            collator and the model card; the model itself reads whatever tokens it is given).
        num_relations: the number of relation labels (``len(RELATIONS)``).
    """

    model_type = "hf_recogs_structure_encoder"

    vocab_size: int = 1000
    hidden_size: int = 128
    num_hidden_layers: int = 6
    num_attention_heads: int = 16
    intermediate_size: int = 512
    hidden_act: str = "gelu"
    hidden_dropout_prob: float | int = 0.1
    attention_probs_dropout_prob: float | int = 0.0
    max_position_embeddings: int = 256
    type_vocab_size: int = 2
    position_embedding: str = "learned"
    pre_layer_norm: bool = True
    layer_norm_eps: float = 1e-6
    initializer_range: float = 0.02
    attention: str = "both"
    cross_links: bool = True
    structure_tokens: bool = True
    num_relations: int = len(RELATIONS)
    pad_token_id: int | None = 0
    num_labels: int = 1

    def validate_architecture(self):
        """Checks run by ``@strict`` after construction."""
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not a multiple of num_attention_heads "
                             f"{self.num_attention_heads}")
        if self.attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {', '.join(ATTENTION_KINDS)}, got {self.attention!r}")
        if self.position_embedding not in ("learned", "sinusoidal"):
            raise ValueError(f"position_embedding must be 'learned' or 'sinusoidal', got {self.position_embedding!r}")
        if self.num_relations != len(RELATIONS):
            raise ValueError(f"num_relations must be {len(RELATIONS)} (the labels of RELATIONS)")
        if self.hidden_act not in ("gelu", "relu"):
            raise ValueError(f"hidden_act must be 'gelu' or 'relu', got {self.hidden_act!r}")


__all__ = ["ATTENTION_KINDS", "HARD_RELATIONS", "LINK_RELATIONS", "RELATIONS", "StructureEncoderConfig"]
