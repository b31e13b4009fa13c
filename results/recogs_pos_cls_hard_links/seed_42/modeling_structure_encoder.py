"""The structure-masked encoder classifier, read top to bottom: embeddings, self-attention with a hard mask
and/or relation-label logit terms, the layer (pre- or post-LN), the encoder, the classifier on ``[CLS]``.

Inputs besides ``input_ids`` / ``attention_mask`` / ``token_type_ids``: ``relation_ids`` (batch, length, length),
the relation label (index into ``RELATIONS``) of every token pair, written by the data collator from the two
sides' trees and cross-links. The model needs nothing else to know the structure.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F
from transformers import PreTrainedModel
from transformers import initialization as init
from transformers.modeling_outputs import SequenceClassifierOutput

from .configuration_structure_encoder import HARD_RELATIONS, LINK_RELATIONS, RELATIONS, StructureEncoderConfig

_HARD = [RELATIONS.index(r) for r in HARD_RELATIONS]
_LINKS = [RELATIONS.index(r) for r in LINK_RELATIONS]
_NONE = RELATIONS.index("none")


def sinusoidal_positions(length: int, dim: int) -> torch.Tensor:
    """The fixed sine/cosine position table of Vaswani et al. (2017), ``(length, dim)``."""
    position = torch.arange(length, dtype=torch.float32)[:, None]
    rate = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate[: dim // 2])
    return table


class StructureEncoderEmbeddings(nn.Module):
    def __init__(self, config: StructureEncoderConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        if config.position_embedding == "learned":
            self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        else:
            self.register_buffer("sinusoidal", sinusoidal_positions(config.max_position_embeddings,
                                                                    config.hidden_size), persistent=False)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        # Fixed sinusoids have amplitude 1: words at the 0.02 init would be drowned by them (the post-LN baseline
        # then stays at the label prior, even on random negatives). So, as in Vaswani et al., word vectors start
        # at std hidden^-0.5 (``_init_weights``) and are scaled by sqrt(hidden): unit size, like the positions.
        self.word_scale = math.sqrt(config.hidden_size) if config.position_embedding == "sinusoidal" else 1.0

    def forward(self, input_ids, token_type_ids):
        length = input_ids.shape[1]
        positions = (self.position_embeddings.weight[:length] if hasattr(self, "position_embeddings")
                     else self.sinusoidal[:length])
        embedded = (self.word_embeddings(input_ids) * self.word_scale + self.token_type_embeddings(token_type_ids)
                    + positions)
        return self.dropout(embedded)


def structure_bias(config: StructureEncoderConfig, attention_mask, relation_ids, dtype) -> torch.Tensor:
    """The additive attention mask ``(batch, 1, length, length)``: 0 where a pair may attend, the dtype's
    minimum where it may not (padding keys; with a hard mask, every pair outside the structure). A token
    always attends to itself, so no row is left empty."""
    batch, length = attention_mask.shape
    allowed = attention_mask[:, None, :].bool().expand(batch, length, length)
    if config.attention in ("hard", "both"):
        structural = _HARD + (_LINKS if config.cross_links else [])
        allowed = allowed & torch.isin(relation_ids, torch.tensor(structural, device=relation_ids.device))
    allowed = allowed | torch.eye(length, dtype=torch.bool, device=allowed.device)
    return torch.zeros(allowed.shape, dtype=dtype, device=allowed.device).masked_fill(
        ~allowed, torch.finfo(dtype).min)[:, None]


class StructureSelfAttention(nn.Module):
    def __init__(self, config: StructureEncoderConfig):
        super().__init__()
        self.heads = config.num_attention_heads
        self.head_size = config.hidden_size // config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.output = nn.Linear(config.hidden_size, config.hidden_size)
        # soft: one learned key vector per relation label (per head), added to the key of that pair
        self.relation_keys = (nn.Embedding(config.num_relations, config.hidden_size)
                              if config.attention in ("soft", "both") else None)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)

    def _split(self, x):
        batch, length, _ = x.shape
        return x.view(batch, length, self.heads, self.head_size).transpose(1, 2)

    def forward(self, hidden, bias, relation_ids, output_attentions=False):
        q, k, v = self._split(self.query(hidden)), self._split(self.key(hidden)), self._split(self.value(hidden))
        if self.training and self.relation_keys is None and not output_attentions:
            # Training steps take the same attention through PyTorch's fused kernel, which never stores the
            # (heads, length, length) probabilities (bench/mask_bench.py times both implementations). On a CPU it
            # runs in fp32: with 16 heads of 8 dimensions its bf16 path is slower there. Evaluation keeps the
            # explicit computation below, so a published model gives the probabilities its run recorded, to the
            # bit under bf16 autocast, whichever version trained it.
            if q.device.type == "cpu":
                q, k, v, bias = q.float(), k.float(), v.float(), bias.float()
            with torch.autocast(q.device.type, enabled=False):
                context = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype), dropout_p=self.dropout.p)
            return self.output(context.transpose(1, 2).flatten(2)), None
        scores = q @ k.transpose(-1, -2)
        if self.relation_keys is not None:
            # q_i · r_{label(i, j)} for every label at once, then each pair picks its own: (b, h, i, labels)
            per_label = q @ self._split(self.relation_keys.weight[None]).squeeze(0).transpose(-1, -2)
            index = relation_ids[:, None].expand(-1, self.heads, -1, -1)
            scores = scores + per_label.gather(-1, index)
        probs = F.softmax(scores / math.sqrt(self.head_size) + bias, dim=-1)
        context = (self.dropout(probs) @ v).transpose(1, 2).flatten(2)
        return self.output(context), (probs if output_attentions else None)


class StructureEncoderLayer(nn.Module):
    def __init__(self, config: StructureEncoderConfig):
        super().__init__()
        self.pre_layer_norm = config.pre_layer_norm
        self.attention = StructureSelfAttention(config)
        self.attention_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.feed_forward = nn.Sequential(
            nn.Linear(config.hidden_size, config.intermediate_size),
            nn.GELU() if config.hidden_act == "gelu" else nn.ReLU(),
            nn.Linear(config.intermediate_size, config.hidden_size),
        )
        self.feed_forward_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden, bias, relation_ids, output_attentions=False):
        if self.pre_layer_norm:
            attended, probs = self.attention(self.attention_norm(hidden), bias, relation_ids, output_attentions)
            hidden = hidden + self.dropout(attended)
            hidden = hidden + self.dropout(self.feed_forward(self.feed_forward_norm(hidden)))
        else:
            attended, probs = self.attention(hidden, bias, relation_ids, output_attentions)
            hidden = self.attention_norm(hidden + self.dropout(attended))
            hidden = self.feed_forward_norm(hidden + self.dropout(self.feed_forward(hidden)))
        return hidden, probs


class StructureEncoderPreTrainedModel(PreTrainedModel):
    config_class = StructureEncoderConfig
    base_model_prefix = "encoder"
    main_input_name = "input_ids"

    def _init_weights(self, module):
        std = self.config.initializer_range
        if isinstance(module, StructureEncoderEmbeddings) and module.word_scale != 1.0:
            init.normal_(module.word_embeddings.weight, mean=0.0, std=1.0 / module.word_scale)
        elif isinstance(module, (nn.Linear, nn.Embedding)):
            init.normal_(module.weight, mean=0.0, std=std)
            if isinstance(module, nn.Linear) and module.bias is not None:
                init.zeros_(module.bias)
        elif isinstance(module, nn.LayerNorm):
            init.ones_(module.weight)
            init.zeros_(module.bias)


class StructureEncoderForSequenceClassification(StructureEncoderPreTrainedModel):
    """One logit on ``[CLS]`` (position 0); the loss is sigmoid cross-entropy against float labels 0 / 1."""

    reads_relations = True  # the data collator builds ``relation_ids`` for every pair

    def __init__(self, config: StructureEncoderConfig):
        super().__init__(config)
        self.embeddings = StructureEncoderEmbeddings(config)
        self.layers = nn.ModuleList(StructureEncoderLayer(config) for _ in range(config.num_hidden_layers))
        self.final_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps) if config.pre_layer_norm \
            else nn.Identity()
        self.classifier = nn.Linear(config.hidden_size, 1)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, relation_ids=None, labels=None,
                output_attentions=False, return_dict=True, **kwargs):
        attention_mask = torch.ones_like(input_ids) if attention_mask is None else attention_mask
        token_type_ids = torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids
        if relation_ids is None:
            if self.config.attention != "none":
                raise ValueError(f"attention={self.config.attention!r} needs relation_ids (batch, length, length)")
            relation_ids = input_ids.new_full((1, 1, 1), _NONE)
        elif not self.config.cross_links:  # linked pairs count as unrelated
            relation_ids = relation_ids.masked_fill(torch.isin(relation_ids, torch.tensor(
                _LINKS, device=relation_ids.device)), _NONE)
        hidden = self.embeddings(input_ids, token_type_ids)
        bias = structure_bias(self.config, attention_mask, relation_ids.long(), hidden.dtype)
        attentions = []
        for layer in self.layers:
            hidden, probs = layer(hidden, bias, relation_ids.long(), output_attentions)
            attentions.append(probs)
        logits = self.classifier(self.final_norm(hidden)[:, 0])
        loss = None
        if labels is not None:
            loss = F.binary_cross_entropy_with_logits(logits.squeeze(-1), labels.to(logits.dtype))
        return SequenceClassifierOutput(loss=loss, logits=logits,
                                        attentions=tuple(attentions) if output_attentions else None)


__all__ = ["StructureEncoderForSequenceClassification", "StructureEncoderPreTrainedModel"]
