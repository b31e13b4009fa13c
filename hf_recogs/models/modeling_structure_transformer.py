"""``structure_transformer``, read top to bottom: Bart (our ``transformer``) whose encoder self-attention gets an
additive term from the input sentence's tree, then the encoder, the model and the generating model that pass it
``relation_ids``.

Input besides ``input_ids`` / ``attention_mask``: ``relation_ids`` (batch, src_len, src_len), the label (index
into ``TREE_RELATIONS``) of every encoder token pair, written by the data collator from our parse of the input
sentence (never from the gold output). Only the encoder reads it: the decoder, its cross-attention and the
output layer are Bart's. ``generate()`` hands ``relation_ids`` to the encoder once, with the other encoder
inputs; the decoding steps after that read the encoder's outputs and ignore ``relation_ids``.

Why an additive attention term: it is the one place where a tree can enter a Transformer without new layers.
A hard mask on some heads forces those heads to gather from the token's tree neighbours only (the paper's best
classifiers), while the free heads keep Bart's full attention; a learned bias per relation label lets every pair
attend but tells the head how the two tokens are related. Both are a (batch, heads, len, len) float mask, which
Bart's eager and SDPA attention already add to the attention logits, so the attention code itself is Bart's.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from transformers import BartForConditionalGeneration, BartModel
from transformers import initialization as init
from transformers.masking_utils import create_bidirectional_mask
from transformers.modeling_outputs import BaseModelOutput
from transformers.models.bart.modeling_bart import (
    BartDecoder,
    BartEncoder,
    BartPreTrainedModel,
    BartScaledWordEmbedding,
)
from transformers.utils.output_capturing import capture_outputs

from .configuration_structure_transformer import TREE_RELATIONS, StructureTransformerConfig


class StructureRelationBias(nn.Module):
    """The soft term: one learned scalar per (structured layer, structured head, relation label), zero at
    initialisation so that a fresh ``soft`` model attends exactly like Bart."""

    def __init__(self, layers: int, heads: int, relations: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(layers, heads, relations))

    def forward(self, slot: int, relation_ids: torch.Tensor) -> torch.Tensor:
        # (heads, relations) indexed by (batch, len, len) labels -> (batch, heads, len, len)
        return self.weight[slot][:, relation_ids].permute(1, 0, 2, 3)


class StructureTransformerEncoder(BartEncoder):
    """Bart's encoder; the layers of ``config.layers_with_structure()`` get a per-head attention mask built from
    ``relation_ids``, the others Bart's padding mask."""

    def __init__(self, config: StructureTransformerConfig):
        super().__init__(config)
        self.structured_layers = config.layers_with_structure()
        self.structured_heads = config.heads_with_structure()
        kind = config.encoder_structure
        self.hard = kind in ("hard", "both")
        self.relation_bias = (StructureRelationBias(len(self.structured_layers), self.structured_heads,
                                                    config.num_relations)
                              if kind in ("soft", "both") and self.structured_layers else None)
        # the labels a hard-masked head attends to (a plain list: a buffer would have to be re-created on
        # loading, as checkpoints do not carry it)
        self.hard_labels = [TREE_RELATIONS.index(r) for r in config.hard_relation_names()]

    def structure_masks(self, attention_mask, relation_ids, dtype) -> dict[int, torch.Tensor]:
        """Layer index -> the additive mask (batch, heads, len, len) of that structured layer: 0 (or the soft
        term) where a pair may attend, the dtype's minimum where it may not (padding keys in every head;
        pairs outside ``hard_relations`` in the hard-masked heads)."""
        batch, length = relation_ids.shape[0], relation_ids.shape[-1]
        if attention_mask is None:
            attention_mask = relation_ids.new_ones(batch, length)
        keys = attention_mask[:, None, :].bool().expand(batch, length, length)
        relation_ids = relation_ids.long()
        structured = keys
        if self.hard:
            # a token always sees itself (no empty row, padding rows included: they are never read)
            eye = torch.eye(length, dtype=torch.bool, device=keys.device)
            allowed_labels = torch.zeros(self.config.num_relations, dtype=torch.bool, device=keys.device)
            allowed_labels[self.hard_labels] = True
            structured = (keys & allowed_labels[relation_ids]) | eye
        free_heads = self.config.encoder_attention_heads - self.structured_heads
        allowed = torch.cat([structured[:, None].expand(-1, self.structured_heads, -1, -1),
                             keys[:, None].expand(-1, free_heads, -1, -1)], dim=1)
        minimum = torch.finfo(dtype).min
        masks = {}
        for slot, layer in enumerate(self.structured_layers):
            bias = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
            if self.relation_bias is not None:
                soft = self.relation_bias(slot, relation_ids).to(dtype)
                bias = torch.cat([soft, bias[:, self.structured_heads:]], dim=1)
            masks[layer] = bias.masked_fill(~allowed, minimum)
        return masks

    @capture_outputs
    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, relation_ids=None, **kwargs):
        """Bart's encoder forward, with the structured layers' masks from ``relation_ids``."""
        if (input_ids is None) ^ (inputs_embeds is not None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)
        if self.structured_layers and relation_ids is None:
            raise ValueError(f"encoder_structure={self.config.encoder_structure!r} needs relation_ids (batch, "
                             "src_len, src_len): build them with hf_recogs.train.data.SourceLayout")
        embed_pos = self.embed_positions(inputs_embeds[:, :, -1]).to(inputs_embeds.device)
        hidden_states = self.layernorm_embedding(inputs_embeds + embed_pos)
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)

        # Bart's own mask for the free layers (exactly Bart when no layer is structured)
        plain_mask = create_bidirectional_mask(config=self.config, inputs_embeds=inputs_embeds,
                                               attention_mask=attention_mask)
        masks = (self.structure_masks(attention_mask, relation_ids, inputs_embeds.dtype)
                 if self.structured_layers else {})
        for idx, encoder_layer in enumerate(self.layers):
            if self.training and self.layerdrop > 0.0 and torch.rand([]) < self.layerdrop:
                continue  # LayerDrop, as Bart
            hidden_states = encoder_layer(hidden_states, masks.get(idx, plain_mask), **kwargs)
        return BaseModelOutput(last_hidden_state=hidden_states)


class StructureTransformerModel(BartModel):
    """``BartModel`` with the structure-reading encoder (built in Bart's order, so that a seed gives the same
    weights as our ``transformer``)."""

    def __init__(self, config: StructureTransformerConfig):
        BartPreTrainedModel.__init__(self, config)
        embed_scale = math.sqrt(config.d_model) if config.scale_embedding else 1.0
        self.shared = BartScaledWordEmbedding(config.vocab_size, config.d_model, config.pad_token_id,
                                              embed_scale=embed_scale)
        self.encoder = StructureTransformerEncoder(config)
        self.decoder = BartDecoder(config)
        self.post_init()


class StructureTransformerForConditionalGeneration(BartForConditionalGeneration):
    """Bart's generating model; ``forward`` runs the encoder with ``relation_ids`` (unless ``encoder_outputs``
    are given, as in every decoding step of ``generate``), then Bart's decoder and output layer."""

    config_class = StructureTransformerConfig

    def __init__(self, config: StructureTransformerConfig):
        BartPreTrainedModel.__init__(self, config)
        self.model = StructureTransformerModel(config)
        self.final_logits_bias = nn.Buffer(torch.zeros((1, self.model.shared.num_embeddings)))
        self.lm_head = nn.Linear(config.d_model, self.model.shared.num_embeddings, bias=False)
        self.post_init()

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, StructureRelationBias):
            init.zeros_(module.weight)

    def forward(self, input_ids=None, attention_mask=None, relation_ids=None, encoder_outputs=None, **kwargs):
        if encoder_outputs is None and (input_ids is not None or kwargs.get("inputs_embeds") is not None):
            # Only the encoder's own arguments go to the encoder (Bart would also hand it the decoder's).
            encoder_outputs = self.model.encoder(
                input_ids=input_ids, attention_mask=attention_mask, relation_ids=relation_ids,
                inputs_embeds=kwargs.pop("inputs_embeds", None),
                **{k: kwargs[k] for k in ("output_attentions", "output_hidden_states") if k in kwargs})
        return super().forward(input_ids=input_ids, attention_mask=attention_mask, encoder_outputs=encoder_outputs,
                               **kwargs)


__all__ = ["StructureTransformerEncoder", "StructureTransformerForConditionalGeneration",
           "StructureTransformerModel"]
