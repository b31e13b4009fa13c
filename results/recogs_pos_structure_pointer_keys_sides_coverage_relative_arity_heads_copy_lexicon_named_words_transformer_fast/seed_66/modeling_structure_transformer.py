"""``structure_transformer``, read top to bottom: Bart (our ``transformer``) whose encoder self-attention gets an
additive term from the input sentence's tree, then the encoder, the model and the generating model that pass it
``relation_ids``.

Input besides ``input_ids`` / ``attention_mask``: ``relation_ids`` (batch, src_len, src_len), the label (index
into ``TREE_RELATIONS``) of every encoder token pair, written by the data collator from our parse of the input
sentence (never from the gold output). The encoder reads it; the decoder, its cross-attention and the output
layer are Bart's, unless the model points: with ``cross_attention_structure="pointer"`` each decoder token's
cross-attention also gets a learned term per tree relation between every source token and the source word the
output named last by its position (with ``pointer_sides`` also by its side of that word), with
``pointer_offsets`` one per offset of the source token from that word (with ``pointer_offsets_scope="noun_list"``
only until the output's first ``AND``: ``before_first``; with ``pointer_offsets_by="relation"`` the offset is a
rank among the source words in the same tree relation to that word, with ``"both"`` a second term holds the ranks)
(``pointer_positions``: from the decoder's own prefix, so training and decoding see the same thing), and with
``pointer_keys`` those terms also depend on the decoder token (a learned key part per label, Shaw et al. 2018),
and with ``pointer_values`` each head's output also says how much of its attention went to each tree label (a
learned value part per label, the same paper).
With ``pointer_coverage`` they also get a learned term per source word by how many times the output has named it
so far (``coverage_counts``), and with ``pointer_head_counts`` each head's output a learned vector per source word
by how many conjuncts have had it as their first argument (``head_counts``). With ``pointer_argument_mask`` every
cross-attention head that writes a conjunct's second argument sees only the children and siblings of its first
(``argument_slots``); with ``pointer_arity_mask`` the step after a conjunct's first argument sees only the word it
names (``arity_slots``). With
``decoder_position_shift`` the decoder's positions start at a random offset in training
(``random_position_shifts``); with ``decoder_relative_positions`` it has none, and its self-attention reads the
distance between tokens instead (``relative_distances``). With ``encoder_word_classes`` every encoder token's
embedding also gets a learned vector of its word class in our parser's lexicon (``WordClassEmbedding``); with
``encoder_functions``, of its syntactic function in the input's parse (``FunctionEmbedding``, from the
``function_ids`` input, which ``generate()`` hands to the encoder with ``relation_ids``). With
``output_copy`` the output layer can also copy a source token (``OutputCopy``, a pointer-generator; with
``output_copy_lexicon`` a copy writes the output token aligned with the source token); the encoder's output
then carries the source ids (``StructureEncoderOutput``), so that every decoding step has them.
``generate()`` hands ``relation_ids`` to the encoder once, with the other encoder inputs; the decoding steps after
that read the encoder's outputs, and only a tree-pointer model reads ``relation_ids`` again.

Why an additive attention term: it is the one place where a tree can enter a Transformer without new layers.
A hard mask on some heads forces those heads to gather from the token's tree neighbours only (the paper's best
classifiers), while the free heads keep Bart's full attention; a learned bias per relation label lets every pair
attend but tells the head how the two tokens are related. Both are a (batch, heads, len, len) float mask, which
Bart's eager and SDPA attention already add to the attention logits, so the attention code itself is Bart's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from transformers import BartForConditionalGeneration, BartModel
from transformers import initialization as init
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.masking_utils import create_bidirectional_mask, create_causal_mask
from transformers.modeling_outputs import BaseModelOutput, BaseModelOutputWithPastAndCrossAttentions, Seq2SeqLMOutput
from transformers.models.bart.modeling_bart import (
    BartDecoder,
    BartDecoderLayer,
    BartEncoder,
    BartPreTrainedModel,
    BartScaledWordEmbedding,
    shift_tokens_right,
)
from transformers.utils.output_capturing import capture_outputs

from .configuration_structure_transformer import (
    POINTER_RELATIONS,
    POINTER_RELATIONS_WITH_SIDES,
    SIDED_RELATIONS,
    TREE_RELATIONS,
    WORD_CLASSES,
    WORD_FUNCTIONS,
    StructureTransformerConfig,
)

NO_POINTER = POINTER_RELATIONS.index("no_pointer")
# ``pointer_coverage``: a source word named 0, 1, or 2 or more times so far
COVERAGE_LABELS = 3
# where a conjunct's second argument stands in the tree of its first (``pointer_argument_mask``)
ARGUMENT_RELATIONS = [TREE_RELATIONS.index("parent_to_child"), TREE_RELATIONS.index("sibling")]
# label -> its label right of the pointed word (``pointer_sides``); the labels without a side map to themselves
RIGHT_OF_POINTER = torch.tensor([POINTER_RELATIONS_WITH_SIDES.index(f"{name}:right") if name in SIDED_RELATIONS
                                 else i for i, name in enumerate(POINTER_RELATIONS)])


class StructureRelationBias(nn.Module):
    """The soft term: one learned scalar per (structured layer, structured head, relation label), zero at
    initialisation so that a fresh ``soft`` model attends exactly like Bart."""

    def __init__(self, layers: int, heads: int, relations: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(layers, heads, relations))

    def forward(self, slot: int, relation_ids: torch.Tensor) -> torch.Tensor:
        # (heads, relations) indexed by (batch, len, len) labels -> (batch, heads, len, len)
        return self.weight[slot][:, relation_ids].permute(1, 0, 2, 3)


class PointerKeys(nn.Module):
    """The query-dependent pointer term (``pointer_keys``): one learned vector per (decoder layer, label), added
    to the key of every source token with that label (Shaw et al. 2018), so that a head adds ``q · a_label``;
    zero at initialisation."""

    def __init__(self, layers: int, labels: int, d_model: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(layers, labels, d_model))

    def forward(self, layer: int, query: torch.Tensor, labels: torch.Tensor, scaling: float) -> torch.Tensor:
        # query (batch, heads, tgt, head_dim) · per-label key parts -> (batch, heads, tgt, labels), then each
        # source token takes its label's column -> (batch, heads, tgt, src)
        batch, heads, tgt, head_dim = query.shape
        key_parts = self.weight[layer].view(-1, heads, head_dim).to(query.dtype)  # (labels, heads, head_dim)
        per_label = torch.einsum("bhtd,lhd->bhtl", query, key_parts)
        index = labels[:, None].expand(batch, heads, tgt, labels.shape[-1])
        return per_label.gather(-1, index) * scaling


class WordClassEmbedding(nn.Module):
    """``encoder_word_classes``: one learned vector per word class (``WORD_CLASSES``), added to the embedding of
    every encoder token of that class (``class_of_token``: token id -> class, from the config, and saved with the
    weights: loading does not rebuild the buffers of a module whose weights it loaded); zero at initialisation."""

    def __init__(self, class_of_token: list[int], d_model: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(len(WORD_CLASSES), d_model))
        self.class_of_token = nn.Buffer(torch.tensor(class_of_token, dtype=torch.long))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.weight[self.class_of_token[input_ids]]


class FunctionEmbedding(nn.Module):
    """``encoder_functions``: one learned vector per syntactic function (``WORD_FUNCTIONS``), added to the embedding
    of every encoder token that has it in the input's parse (``function_ids``, batch × src_len); zero at
    initialisation, so a fresh model reads its inputs as without it."""

    def __init__(self, d_model: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(len(WORD_FUNCTIONS), d_model))

    def forward(self, function_ids: torch.Tensor) -> torch.Tensor:
        return self.weight[function_ids.long()]


class PointerValues(nn.Module):
    """The tree labels on the values of the cross-attention (``pointer_values``): one learned vector per (decoder
    layer, head, label), which a head adds to its output in proportion to the attention it gives the source
    tokens of that label (Shaw et al. 2018's relation values, taken to the model's width, where the output
    projection of a per-head vector would put them); zero at initialisation."""

    def __init__(self, layers: int, heads: int, labels: int, d_model: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(layers, heads, labels, d_model))

    def forward(self, layer: int, weights: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        # weights (batch, heads, tgt, src): each head's attention, summed per label of the source tokens
        # (labels (batch, tgt, src)) -> (batch, heads, tgt, labels), then the labels' vectors -> (batch, tgt, d_model)
        batch, heads, tgt, src = weights.shape
        index = labels[:, None].expand(batch, heads, tgt, src)
        per_label = weights.new_zeros(batch, heads, tgt, self.weight.shape[2]).scatter_add_(-1, index, weights)
        return torch.einsum("bhtl,hld->btd", per_label, self.weight[layer].to(weights.dtype))


class OutputCopy(nn.Module):
    """The copy part of a pointer-generator output layer (See et al. 2017; ``output_copy``): from the decoder's
    last state, one attention over the encoder's outputs (its own query and key projections) and a gate. The
    probability of token w is ``(1 - gate) * softmax(vocabulary logits)[w] + gate * (the attention on the
    source tokens whose id is w)``; the output is its logarithm, so that greedy search, beam search and the
    cross-entropy read it as logits. With a lexicon (``output_copy_lexicon``; ``written_token``: token id -> the id
    a copy of it writes, from the config, saved with the weights) a source token's share goes to the token it
    writes instead of to itself.

    With ``positions`` (``output_copy_positions``) the output's position tokens are written by pointing alone:
    the vocabulary's softmax gives them nothing, and a second attention (``positions``: its own query, key and
    gate ``h``) over the source's words gives word k's share to the token that names position k. The probability
    is then ``gate * copy + (1 - gate) * ((1 - h) * vocabulary + h * pointed)``."""

    def __init__(self, d_model: int, written_token: list[int] | None = None,
                 positions: PositionCopy | None = None):
        super().__init__()
        self.query = nn.Linear(d_model, d_model, bias=False)
        self.key = nn.Linear(d_model, d_model, bias=False)
        self.gate = nn.Linear(d_model, 1)
        self.written_token = None if written_token is None else nn.Buffer(
            torch.tensor(written_token, dtype=torch.long))
        self.positions = positions

    def forward(self, hidden, vocabulary_logits, encoder_hidden, source_ids, source_mask=None) -> torch.Tensor:
        # hidden (batch, tgt, d), encoder_hidden (batch, src, d), source_ids / source_mask (batch, src)
        scores = torch.matmul(self.query(hidden), self.key(encoder_hidden).transpose(1, 2)) * hidden.shape[-1] ** -0.5
        if source_mask is not None:
            scores = scores.masked_fill(~source_mask[:, None, :].bool(), torch.finfo(scores.dtype).min)
        attention = scores.float().softmax(-1)
        written = source_ids if self.written_token is None else self.written_token[source_ids]
        copied = attention.new_zeros(*attention.shape[:2], vocabulary_logits.shape[-1]).scatter_add_(
            -1, written[:, None, :].expand_as(attention), attention)
        gate = torch.sigmoid(self.gate(hidden).float())
        if self.positions is None:
            mixed = (1 - gate) * vocabulary_logits.float().softmax(-1) + gate * copied
        else:
            pointed, pointing = self.positions(hidden, encoder_hidden, source_ids, vocabulary_logits.shape[-1],
                                               source_mask)
            vocabulary = self.positions.without_position_tokens(vocabulary_logits.float()).softmax(-1)
            mixed = (1 - gate) * ((1 - pointing) * vocabulary + pointing * pointed) + gate * copied
        # a token with no share anywhere would be log(0): the smallest normal float keeps it finite
        return mixed.clamp_min(torch.finfo(mixed.dtype).tiny).log()


class PositionCopy(nn.Module):
    """``output_copy_positions``: an attention from the decoder's last state over the source's words (its own
    query and key projections, as ``OutputCopy``'s) whose share of word k goes to the output token that names
    position k (``token_of_position``, from the config's ``pointer_token_ids``), and the gate that gives it its
    part of the probability. Source tokens from the first ``eos`` on (the structure tokens) and positions without
    a token are not words it can name."""

    def __init__(self, d_model: int, token_of_position: list[int], eos_token_id: int):
        super().__init__()
        self.query = nn.Linear(d_model, d_model, bias=False)
        self.key = nn.Linear(d_model, d_model, bias=False)
        self.gate = nn.Linear(d_model, 1)
        self.eos_token_id = eos_token_id
        self.token_of_position = nn.Buffer(torch.tensor(token_of_position, dtype=torch.long), persistent=False)

    def without_position_tokens(self, logits: torch.Tensor) -> torch.Tensor:
        tokens = self.token_of_position[self.token_of_position >= 0]
        return logits.index_fill(-1, tokens, torch.finfo(logits.dtype).min)

    def forward(self, hidden, encoder_hidden, source_ids, vocab_size: int, source_mask=None) -> tuple:
        """((batch, tgt, vocab) each position token's share of the attention, (batch, tgt, 1) the gate)."""
        src_len = source_ids.shape[1]
        tokens = self.token_of_position.new_full((src_len,), -1)
        known = min(src_len, len(self.token_of_position))
        tokens[:known] = self.token_of_position[:known]
        nameable = ((source_ids == self.eos_token_id).cumsum(1) == 0) & (tokens >= 0)
        if source_mask is not None:
            nameable &= source_mask.bool()
        scores = torch.matmul(self.query(hidden), self.key(encoder_hidden).transpose(1, 2)) * hidden.shape[-1] ** -0.5
        scores = scores.float().masked_fill(~nameable[:, None, :], torch.finfo(torch.float32).min)
        attention = scores.softmax(-1) * nameable[:, None, :]  # a row without a word to name points nowhere
        pointed = attention.new_zeros(*attention.shape[:2], vocab_size).scatter_add_(
            -1, tokens.clamp(min=0).expand_as(attention), attention)
        return pointed, torch.sigmoid(self.gate(hidden).float())


class StructureTransformerDecoderLayer(BartDecoderLayer):
    """Bart's decoder layer, whose cross-attention mask can also take a term computed from the layer's own
    cross-attention queries (``query_term``: queries (batch, heads, tgt, head_dim) -> additive term), and whose
    cross-attention output can take a term computed from its attention weights (``value_term``: weights (batch,
    heads, tgt, src) -> (batch, tgt, d_model)); a ``pointer_keys``, ``pointer_values`` or
    ``pointer_head_counts`` model's layers only.
    Otherwise Bart's forward, step for step."""

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None,
                cache=None, use_cache=True, query_term=None, value_term=None, **kwargs):
        residual = hidden_states
        hidden_states, _ = self.self_attn(hidden_states, cache=cache, attention_mask=attention_mask, **kwargs)
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
        hidden_states = self.self_attn_layer_norm(residual + hidden_states)

        if encoder_hidden_states is not None:
            residual = hidden_states
            attn = self.encoder_attn
            if query_term is not None or value_term is not None:
                # the attention computes these queries again; a (tgt, d_model) projection is cheap
                query = attn.q_proj(hidden_states).view(*hidden_states.shape[:-1], -1, attn.head_dim).transpose(1, 2)
            if query_term is not None:
                encoder_attention_mask = encoder_attention_mask + query_term(query, attn.scaling)
            hidden_states, _ = self.encoder_attn(hidden_states, key_value_states=encoder_hidden_states,
                                                 attention_mask=encoder_attention_mask, cache=cache, **kwargs)
            if value_term is not None:
                # the attention's weights, computed again (SDPA does not return them); sources are short. While
                # decoding, the keys are those the attention keeps in the cache, not projected again at each step
                if isinstance(cache, EncoderDecoderCache) and cache.is_updated.get(attn.layer_idx):
                    key = cache.cross_attention_cache.layers[attn.layer_idx].keys
                else:
                    key = attn.k_proj(encoder_hidden_states)
                    key = key.view(*key.shape[:-1], -1, attn.head_dim).transpose(1, 2)
                logits = torch.matmul(query, key.transpose(-1, -2)) * attn.scaling + encoder_attention_mask
                weights = nn.functional.dropout(logits.softmax(-1), p=attn.dropout, training=self.training)
                hidden_states = hidden_states + value_term(weights).to(hidden_states.dtype)
            hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
            hidden_states = self.encoder_attn_layer_norm(residual + hidden_states)

        residual = hidden_states
        hidden_states = self.activation_fn(self.fc1(hidden_states))
        hidden_states = nn.functional.dropout(hidden_states, p=self.activation_dropout, training=self.training)
        hidden_states = self.fc2(hidden_states)
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
        return self.final_layer_norm(residual + hidden_states)


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
        self.word_classes = None
        if config.encoder_word_classes:
            if config.word_class_ids is None:
                raise ValueError("encoder_word_classes needs word_class_ids (the class of every token id): build "
                                 "the model with hf_recogs.models.build_model, which reads them from the tokenizer "
                                 "and the parser's lexicon")
            self.word_classes = WordClassEmbedding(config.word_class_ids, config.d_model)
        self.functions = FunctionEmbedding(config.d_model) if config.encoder_functions else None

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
    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, relation_ids=None, function_ids=None,
                **kwargs):
        """Bart's encoder forward, with the structured layers' masks from ``relation_ids`` (and, with
        ``encoder_functions``, each token's function vector from ``function_ids``)."""
        if (input_ids is None) ^ (inputs_embeds is not None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)
            if self.word_classes is not None:
                inputs_embeds = inputs_embeds + self.word_classes(input_ids).to(inputs_embeds.dtype)
        if self.functions is not None:
            if function_ids is None or function_ids.shape != inputs_embeds.shape[:2]:
                raise ValueError("encoder_functions needs function_ids (batch, src_len), the syntactic function of "
                                 "every input token: build them with hf_recogs.train.data.SourceLayout")
            inputs_embeds = inputs_embeds + self.functions(function_ids).to(inputs_embeds.dtype)
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
        return StructureEncoderOutput(last_hidden_state=hidden_states, input_ids=input_ids)


@dataclass
class StructureEncoderOutput(BaseModelOutput):
    """Bart's encoder output and the source ids it read (``None`` when it read embeddings): what an
    ``output_copy`` model copies from, at every decoding step of ``generate`` (which keeps the encoder's output,
    not its input)."""

    input_ids: torch.LongTensor | None = None


def pointer_positions(decoder_input_ids: torch.Tensor, position_of_token: torch.Tensor,
                      named_words: torch.Tensor | None = None) -> torch.Tensor:
    """(batch, tgt_len): for each decoder input token, the source position named by the last position token
    (``position_of_token[id]`` >= 0) among the tokens up to and including it; -1 before the first one. With
    ``named_words`` (batch, tgt_len; ``word_positions``) a token that names a word names its position too."""
    named = position_of_token[decoder_input_ids]
    if named_words is not None:
        named = torch.where(named >= 0, named, named_words)
    steps = torch.arange(named.shape[1], device=named.device).expand_as(named)
    last = torch.where(named >= 0, steps, -1).cummax(dim=1).values
    return torch.where(last >= 0, named.gather(1, last.clamp(min=0)), -1)


def word_positions(decoder_input_ids: torch.Tensor, source_ids: torch.Tensor, written_token: torch.Tensor,
                   writes_word: torch.Tensor, source_mask: torch.Tensor | None = None) -> torch.Tensor:
    """(batch, tgt_len): the source position each decoder input token names as a word, -1 for none
    (``pointer_named_words``). A token names a word if ``writes_word[id]``; the k-th time it occurs in the output
    it names the k-th source token whose lexicon word (``written_token[source id]``) it is, and nothing if the
    source has fewer.

    Each token is keyed by (id, how many times the same id came before it in its row) and looked up among the
    source's keys by binary search: O(L log L) per row. ``generate`` calls this on the whole prefix at every
    step, where comparing every pair of tokens cost 0.3 s at 512 tokens for a batch of 128 (a whole greedy decode
    is hardly faster for it: the decoder's growing key/value cache costs as much; bench/pointer_decode_bench.py)."""
    written = written_token[source_ids]
    if source_mask is not None:
        written = written.masked_fill(~source_mask.bool(), -1)
    stride = max(decoder_input_ids.shape[1], written.shape[1]) + 1  # above any rank: keys never collide
    source_keys = torch.where(written >= 0, written * stride + earlier_equal(written), -1)
    output_keys = decoder_input_ids * stride + earlier_equal(decoder_input_ids)
    sorted_keys, source_at = source_keys.sort(dim=1)
    found = torch.searchsorted(sorted_keys, output_keys).clamp(max=sorted_keys.shape[1] - 1)
    hit = (sorted_keys.gather(1, found) == output_keys) & writes_word[decoder_input_ids]
    return torch.where(hit, source_at.gather(1, found), -1)


def earlier_equal(ids: torch.Tensor) -> torch.Tensor:
    """(batch, len): how many earlier tokens of its row equal each token (a stable sort groups equal ids in their
    order; a token's rank is its distance from its group's first)."""
    sorted_ids, order = ids.sort(dim=1, stable=True)
    steps = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
    first = torch.ones_like(sorted_ids, dtype=torch.bool)
    first[:, 1:] = sorted_ids[:, 1:] != sorted_ids[:, :-1]
    group_start = torch.where(first, steps, 0).cummax(dim=1).values
    return torch.empty_like(ids).scatter_(1, order, steps - group_start)


def coverage_counts(decoder_input_ids: torch.Tensor, position_of_token: torch.Tensor, positions: int,
                    last: int | None = None, most: int = COVERAGE_LABELS - 1) -> torch.Tensor:
    """(batch, tgt_len, positions): for each decoder input token, how many times the tokens up to and including it
    have named each source position, capped at ``most``; with ``last``, for the last ``last`` tokens only (a
    decoding step: the earlier ones are summed, not expanded)."""
    return _counts(position_of_token[decoder_input_ids], positions, last, most)


def _counts(named: torch.Tensor, positions: int, last: int | None, most: int) -> torch.Tensor:
    """(batch, tgt_len, positions) running counts of the positions in ``named`` (batch, tgt_len; -1: none)."""
    start = 0 if last is None else named.shape[1] - last
    before, window = named[:, :start], named[:, start:]
    counts = torch.zeros(named.shape[0], positions, dtype=torch.long, device=named.device)
    counts.scatter_add_(1, before.clamp(min=0), (before >= 0).long())
    steps = nn.functional.one_hot(window.clamp(min=0), positions) * (window >= 0)[..., None]
    return (counts[:, None] + steps.cumsum(dim=1)).clamp(max=most)


def random_position_shifts(batch_size: int, seq_length: int, max_shift: int, table_size: int,
                           device=None) -> torch.Tensor:
    """(batch, 1): for each target, the offset its decoder positions start at in training (SHAPE): uniform over
    0..``max_shift``, and at most ``table_size - seq_length`` so that every position has a row of the table."""
    highest = max(0, min(max_shift, table_size - seq_length))
    return torch.randint(0, highest + 1, (batch_size, 1), device=device)


def before_first(decoder_input_ids: torch.Tensor, token_id: int) -> torch.Tensor:
    """(batch, tgt_len) bool: whether no token up to and including each decoder input token is ``token_id``:
    the steps that write the output's first part, up to ``token_id`` itself (the step whose input is
    ``token_id`` writes what follows it)."""
    return (decoder_input_ids == token_id).long().cumsum(dim=1) == 0


def relative_distances(query_length: int, key_length: int, most: int, device=None) -> torch.Tensor:
    """(query_length, key_length): how far each key token stands back from each query token, capped at ``most``;
    -1 for a key after the query (the causal mask hides it). The queries are the last ``query_length`` of the
    ``key_length`` tokens (a decoding step with a cache: one query, every key so far)."""
    queries = torch.arange(key_length - query_length, key_length, device=device)
    back = queries[:, None] - torch.arange(key_length, device=device)[None, :]
    return torch.where(back >= 0, back.clamp(max=most), -1)


def argument_slots(decoder_input_ids: torch.Tensor, position_of_token: torch.Tensor,
                   argument_tokens: list[int]) -> torch.Tensor:
    """(batch, tgt_len) bool: whether each decoder input token is inside a conjunct's second argument, i.e. the
    last of the tokens ``,`` (opens), ``)`` or a position token (close) up to and including it is ``,``. The
    next token is then (part of) the argument: ``0`` after ``agent ( 1 ,``; ``x``, ``_``, ``1`` in COGS."""
    comma, close = argument_tokens
    opens = decoder_input_ids == comma
    closes = (decoder_input_ids == close) | (position_of_token[decoder_input_ids] >= 0)
    steps = torch.arange(decoder_input_ids.shape[1], device=decoder_input_ids.device).expand_as(decoder_input_ids)
    last_open = torch.where(opens, steps, -1).cummax(dim=1).values
    return last_open > torch.where(closes, steps, -1).cummax(dim=1).values


def arity_slots(decoder_input_ids: torch.Tensor, position_of_token: torch.Tensor,
                arity_tokens: list[int]) -> torch.Tensor:
    """(batch, tgt_len) bool: whether each decoder input token names a conjunct's first argument, i.e. it is the
    first position token after the last ``(``, with no ``,`` between. The next token decides the conjunct's
    number of arguments: ``,`` or ``)`` after ``agent ( 1``; the same after ``x _ 1`` in COGS."""
    paren, comma = arity_tokens
    named = position_of_token[decoder_input_ids] >= 0
    steps = torch.arange(decoder_input_ids.shape[1], device=decoder_input_ids.device).expand_as(decoder_input_ids)
    last_paren = torch.where(decoder_input_ids == paren, steps, -1).cummax(dim=1).values
    last_comma = torch.where(decoder_input_ids == comma, steps, -1).cummax(dim=1).values
    named_so_far = named.long().cumsum(dim=1)
    named_at_paren = named_so_far.gather(1, last_paren.clamp(min=0))  # a "(" names nothing itself
    return named & (last_paren >= 0) & (last_comma < last_paren) & (named_so_far - named_at_paren == 1)


def head_counts(decoder_input_ids: torch.Tensor, position_of_token: torch.Tensor, arity_tokens: list[int],
                positions: int, last: int | None = None, most: int = COVERAGE_LABELS - 1) -> torch.Tensor:
    """(batch, tgt_len, positions): for each decoder input token, how many conjuncts up to and including it have
    named each source position as their first argument (``arity_slots``), capped at ``most``; ``last`` as in
    ``coverage_counts``."""
    named = position_of_token[decoder_input_ids]
    first = arity_slots(decoder_input_ids, position_of_token, arity_tokens)
    return _counts(torch.where(first, named, -1), positions, last, most)


class StructureTransformerDecoder(BartDecoder):
    """Bart's decoder; a pointer model's cross-attention masks carry learned terms per head for each source token:
    its tree relation to the word the output named last (``cross_attention_structure="pointer"``, labels of
    ``POINTER_RELATIONS``, or with ``pointer_sides`` of ``POINTER_RELATIONS_WITH_SIDES``) and/or its offset from
    that word (``pointer_offsets``)."""

    def __init__(self, config: StructureTransformerConfig):
        super().__init__(config)
        layers, heads = config.decoder_layers, config.decoder_attention_heads
        self.pointer_sides = config.pointer_sides
        tree_labels = len(config.pointer_tree_labels())
        self.pointer_bias = (StructureRelationBias(layers, heads, tree_labels)
                             if config.cross_attention_structure == "pointer" else None)
        self.max_offset = config.pointer_offsets
        self.offsets_scoped = config.pointer_offsets_scope != "all"
        self.offsets_by = config.pointer_offsets_by
        self.position_shift = config.decoder_position_shift
        self.max_distance = config.decoder_relative_positions
        self.attention_window = config.decoder_attention_window
        # distances 0..R-1, then one label for "R or more"
        self.distance_bias = (StructureRelationBias(layers, heads, self.max_distance + 1) if self.max_distance
                              else None)
        self.argument_mask = config.pointer_argument_mask
        self.arity_mask = config.pointer_arity_mask
        # offsets -K..K, then one label for "nothing named"
        offset_labels = 2 * self.max_offset + 2
        self.offset_bias = StructureRelationBias(layers, heads, offset_labels) if self.max_offset else None
        # pointer_offsets_by="both": the offsets by position above and, beside them, the ranks by relation
        self.rank_bias = (StructureRelationBias(layers, heads, offset_labels) if self.offsets_by == "both"
                          else None)
        self.coverage_bias = (StructureRelationBias(layers, heads, COVERAGE_LABELS) if config.pointer_coverage
                              else None)
        self.tree_keys = self.offset_keys = self.rank_keys = self.coverage_keys = None
        self.tree_values = (PointerValues(layers, heads, tree_labels, config.d_model) if config.pointer_values
                            else None)
        self.head_values = (PointerValues(layers, heads, COVERAGE_LABELS, config.d_model)
                            if config.pointer_head_counts else None)
        if config.pointer_keys or config.pointer_values or config.pointer_head_counts:
            self.layers = nn.ModuleList([StructureTransformerDecoderLayer(config, layer_idx=i) for i in range(layers)])
        if config.pointer_keys:
            if self.pointer_bias is not None:
                self.tree_keys = PointerKeys(layers, tree_labels, config.d_model)
            if self.offset_bias is not None:
                self.offset_keys = PointerKeys(layers, offset_labels, config.d_model)
            if self.rank_bias is not None:
                self.rank_keys = PointerKeys(layers, offset_labels, config.d_model)
            if self.coverage_bias is not None:
                self.coverage_keys = PointerKeys(layers, COVERAGE_LABELS, config.d_model)

    @staticmethod
    def pointed(pointer, encoder_attention_mask, src_len: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(whether each decoder token points at a real source token, the pointer clamped into the source)."""
        inside = (pointer >= 0) & (pointer < src_len)
        at = pointer.clamp(0, src_len - 1)
        if encoder_attention_mask is not None:
            inside &= encoder_attention_mask.bool().gather(1, at)
        return inside, at

    @classmethod
    def relations_to_pointed(cls, pointer, source_relation_ids, encoder_attention_mask) -> tuple:
        """(whether each decoder token points inside the source, the pointer clamped into it, (batch, tgt_len,
        src_len) the tree relation of each source token seen from the pointed word: ``parent_to_child`` where it
        is that word's child)."""
        src_len = source_relation_ids.shape[-1]
        inside, at = cls.pointed(pointer, encoder_attention_mask, src_len)
        return inside, at, source_relation_ids.long().gather(1, at[..., None].expand(-1, -1, src_len))

    @classmethod
    def pointer_labels(cls, pointer, source_relation_ids, encoder_attention_mask, sides: bool = False) -> torch.Tensor:
        """(batch, tgt_len, src_len) labels: the relation of each source token to the pointed source word,
        ``no_pointer`` where nothing (or padding, or a position past the source) is pointed at; with ``sides``,
        the labels of ``POINTER_RELATIONS_WITH_SIDES`` (a sided relation right of the pointed word gets its
        ``:right`` label)."""
        src_len = source_relation_ids.shape[-1]
        inside, at, rows = cls.relations_to_pointed(pointer, source_relation_ids, encoder_attention_mask)
        if sides:
            right = torch.arange(src_len, device=rows.device) > at[..., None]
            rows = torch.where(right, RIGHT_OF_POINTER.to(rows.device)[rows], rows)
        return torch.where(inside[..., None], rows, NO_POINTER)

    @classmethod
    def offset_labels(cls, pointer, encoder_attention_mask, src_len: int, max_offset: int) -> torch.Tensor:
        """(batch, tgt_len, src_len) labels: each source token's offset from the pointed word, clipped to
        ±``max_offset`` and shifted to 0..2·max_offset; 2·max_offset + 1 where nothing is pointed at."""
        inside, at = cls.pointed(pointer, encoder_attention_mask, src_len)
        offsets = torch.arange(src_len, device=pointer.device) - at[..., None]
        labels = offsets.clamp(-max_offset, max_offset) + max_offset
        return torch.where(inside[..., None], labels, 2 * max_offset + 1)

    @classmethod
    def ranked_offset_labels(cls, pointer, source_relation_ids, encoder_attention_mask,
                             max_offset: int) -> torch.Tensor:
        """(batch, tgt_len, src_len) labels as ``offset_labels``, but the offset counts only the source tokens in
        the same tree relation to the pointed word (``pointer_offsets_by="relation"``): each token's rank among
        those on its side, counted outward (the nearest is ±1; the pointed word itself 0)."""
        src_len = source_relation_ids.shape[-1]
        inside, at, rows = cls.relations_to_pointed(pointer, source_relation_ids, encoder_attention_mask)
        same = nn.functional.one_hot(rows, len(TREE_RELATIONS)).int()  # (batch, tgt_len, src_len, relations)
        if encoder_attention_mask is not None:
            same = same * encoder_attention_mask.int()[:, None, :, None]
        upto = same.cumsum(dim=2)  # per relation: how many tokens from the first to each one
        upto_pointed = upto.gather(2, at[..., None, None].expand(-1, -1, 1, upto.shape[-1]))
        # right of the pointed word: those in (pointed, j]; left: those in [j, pointed), the pointed word being
        # the only "self"
        positions = torch.arange(src_len, device=rows.device)
        right = positions > at[..., None]
        rank = torch.where(right[..., None], upto - upto_pointed, upto_pointed - upto + same)
        rank = rank.gather(-1, rows[..., None]).squeeze(-1)
        offsets = torch.where(right, rank, -rank).masked_fill(positions == at[..., None], 0)
        offsets = offsets.clamp(-max_offset, max_offset) + max_offset
        return torch.where(inside[..., None], offsets, 2 * max_offset + 1)

    @classmethod
    def argument_blocked(cls, pointer, slots, source_relation_ids, encoder_attention_mask) -> torch.Tensor:
        """(batch, tgt_len, src_len) bool: the source tokens that ``pointer_argument_mask`` hides from a decoder
        token: inside a second argument (``slots``), every token that is not a child or sibling of the pointed
        word; nothing where that word has no child or sibling in the source."""
        inside, _, rows = cls.relations_to_pointed(pointer, source_relation_ids, encoder_attention_mask)
        allowed = torch.isin(rows, torch.tensor(ARGUMENT_RELATIONS, device=rows.device))
        if encoder_attention_mask is not None:
            allowed &= encoder_attention_mask.bool()[:, None, :]
        applies = slots & inside & allowed.any(dim=-1)
        return applies[..., None] & ~allowed

    @classmethod
    def arity_blocked(cls, pointer, slots, encoder_attention_mask, src_len: int) -> torch.Tensor:
        """(batch, tgt_len, src_len) bool: the source tokens that ``pointer_arity_mask`` hides from a decoder
        token: at an arity step (``slots``), every token but the pointed word; nothing where the pointer is
        outside the source."""
        inside, at = cls.pointed(pointer, encoder_attention_mask, src_len)
        others = torch.arange(src_len, device=pointer.device) != at[..., None]
        return (slots & inside)[..., None] & others

    @staticmethod
    def fit_to_source(counts, src_len: int) -> torch.Tensor:
        """Per-position counts (batch, tgt_len, positions the output can name) cut or padded to the source's
        length: positions past those the output can name were never named."""
        return nn.functional.pad(counts, (0, max(0, src_len - counts.shape[-1])))[..., :src_len]

    def pointer_label_sets(self, pointer, source_relation_ids, encoder_attention_mask, src_len: int,
                           offset_scope=None) -> tuple:
        """(tree labels, offset labels, rank labels) of every (decoder token, source token) pair; None for a term
        that is off. The offset labels count positions, or with ``pointer_offsets_by="relation"`` ranks; the rank
        labels are the second offset term of ``pointer_offsets_by="both"``. Outside ``offset_scope`` (batch,
        tgt_len) every source token gets the offset (and rank) label of "nothing named"."""
        tree = (self.pointer_labels(pointer, source_relation_ids, encoder_attention_mask, self.pointer_sides)
                if self.pointer_bias is not None else None)
        if self.offset_bias is None:
            return tree, None, None
        by_position = (self.offset_labels(pointer, encoder_attention_mask, src_len, self.max_offset)
                       if self.offsets_by != "relation" else None)
        by_relation = (self.ranked_offset_labels(pointer, source_relation_ids, encoder_attention_mask, self.max_offset)
                       if self.offsets_by != "position" else None)
        offsets, ranks = (by_relation, None) if self.offsets_by == "relation" else (by_position, by_relation)
        if offset_scope is not None:
            nothing_named = 2 * self.max_offset + 1
            offsets, ranks = (None if labels is None else torch.where(offset_scope[..., None], labels, nothing_named)
                              for labels in (offsets, ranks))
        return tree, offsets, ranks

    def relative_self_masks(self, attention_mask, query_length: int, dtype) -> list:
        """Per layer, the additive self-attention mask (batch, heads, query_length, key_length) of a
        ``decoder_relative_positions`` model: the learned term of each (query, key) distance, and the dtype's
        minimum on keys after the query, on padding (``attention_mask`` (batch, key_length), 0 for padding) and,
        with ``decoder_attention_window`` W, on keys W or more tokens back."""
        key_length = attention_mask.shape[1]
        back = relative_distances(query_length, key_length, key_length, attention_mask.device)  # not capped
        blocked = back < 0
        if self.attention_window:
            blocked = blocked | (back >= self.attention_window)
        blocked = blocked[None, None] | ~attention_mask.bool()[:, None, None, :]
        distances = back.clamp(min=0, max=self.max_distance)
        return [self.distance_bias(layer, distances[None]).to(dtype).masked_fill(
            blocked, torch.finfo(dtype).min) for layer in range(len(self.layers))]

    def cross_attention_masks(self, labels, encoder_attention_mask, dtype, blocked=None) -> list:
        """Per layer, the additive cross-attention mask (batch, heads, tgt_len, src_len): the pointer terms of
        ``labels`` (tree, offset, rank and coverage labels, None for a term that is off), and the dtype's minimum on
        padding keys and on the ``blocked`` (batch, tgt_len, src_len) pairs."""
        masks = []
        biases = (self.pointer_bias, self.offset_bias, self.rank_bias, self.coverage_bias)
        for layer in range(len(self.layers)):
            terms = [bias(layer, names) for bias, names in zip(biases, labels, strict=True) if bias is not None]
            term = sum(terms[1:], terms[0]).to(dtype)
            if encoder_attention_mask is not None:
                term = term.masked_fill(~encoder_attention_mask.bool()[:, None, None, :], torch.finfo(dtype).min)
            if blocked is not None:
                term = term.masked_fill(blocked[:, None], torch.finfo(dtype).min)
            masks.append(term)
        return masks

    def query_terms(self, labels) -> list:
        """Per layer, the ``pointer_keys`` term of the terms of ``labels`` as a function of that layer's
        cross-attention queries (None without ``pointer_keys``)."""
        all_keys = (self.tree_keys, self.offset_keys, self.rank_keys, self.coverage_keys)
        if all(keys is None for keys in all_keys):
            return [None] * len(self.layers)

        def term_of(layer):
            def term(query, scaling):
                parts = [keys(layer, query, names, scaling) for keys, names in zip(all_keys, labels, strict=True)
                         if keys is not None]
                return sum(parts[1:], parts[0])
            return term
        return [term_of(layer) for layer in range(len(self.layers))]

    def value_terms(self, tree, heads) -> list:
        """Per layer, the value terms as a function of that layer's cross-attention weights: ``pointer_values`` of
        the tree labels ``tree`` and ``pointer_head_counts`` of the counts ``heads`` (None without either)."""
        terms = [(values, labels) for values, labels in ((self.tree_values, tree), (self.head_values, heads))
                 if values is not None]
        if not terms:
            return [None] * len(self.layers)

        def term_of(layer):
            def term(weights):
                parts = [values(layer, weights, labels) for values, labels in terms]
                return sum(parts[1:], parts[0])
            return term
        return [term_of(layer) for layer in range(len(self.layers))]

    @capture_outputs
    def forward(self, input_ids=None, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None,
                cache=None, inputs_embeds=None, use_cache=None, source_relation_ids=None, decoder_pointer=None,
                decoder_argument_slots=None, decoder_arity_slots=None, decoder_coverage=None,
                decoder_head_counts=None, decoder_offset_scope=None, **kwargs):
        """Bart's decoder forward; a pointer model's cross-attention masks come from ``decoder_pointer`` (with
        ``pointer_argument_mask`` also ``decoder_argument_slots``, with ``pointer_arity_mask``
        ``decoder_arity_slots``, with ``pointer_coverage`` ``decoder_coverage``, with ``pointer_head_counts``
        ``decoder_head_counts``, with a scoped offset term ``decoder_offset_scope``) and the encoder's
        ``source_relation_ids``."""
        if (input_ids is None) ^ (inputs_embeds is not None):
            raise ValueError("You must specify exactly one of decoder_input_ids or decoder_inputs_embeds")
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)
        use_cache = self.config.use_cache if use_cache is None else use_cache
        if use_cache and cache is None:
            cache = EncoderDecoderCache(DynamicCache(config=self.config), DynamicCache(config=self.config))
        batch_size, seq_length = inputs_embeds.size()[:-1]
        cache_length = cache.get_seq_length() if cache is not None else 0
        position_ids = torch.arange(seq_length, device=inputs_embeds.device) + cache_length
        if attention_mask is None:
            attention_mask = torch.ones(batch_size, cache_length + seq_length, device=inputs_embeds.device)
        self_attn_cache = cache.self_attention_cache if isinstance(cache, EncoderDecoderCache) else cache
        if self.distance_bias is not None:
            self_masks = self.relative_self_masks(attention_mask, seq_length, inputs_embeds.dtype)
        else:
            causal_mask = create_causal_mask(config=self.config, inputs_embeds=inputs_embeds,
                                             attention_mask=attention_mask, cache=self_attn_cache)
            self_masks = [causal_mask] * len(self.layers)
        if self.pointer_bias is None and self.offset_bias is None:
            cross_masks = [create_bidirectional_mask(config=self.config, inputs_embeds=inputs_embeds,
                                                     attention_mask=encoder_attention_mask,
                                                     encoder_hidden_states=encoder_hidden_states)] * len(self.layers)
            query_terms = value_terms = [None] * len(self.layers)
        else:
            if decoder_pointer is None or (self.pointer_bias is not None and source_relation_ids is None):
                raise ValueError("a pointer model needs the decoder tokens' pointer (and, with "
                                 "cross_attention_structure='pointer', the encoder's relation_ids): call it with "
                                 "decoder_input_ids or labels, or generate()")
            if self.offsets_scoped and decoder_offset_scope is None:
                raise ValueError("a model with pointer_offsets_scope needs decoder_offset_scope: call it with "
                                 "decoder_input_ids or labels, or generate()")
            src_len = encoder_hidden_states.shape[1]
            tree, offsets, ranks = self.pointer_label_sets(decoder_pointer, source_relation_ids, encoder_attention_mask,
                                                    src_len, decoder_offset_scope if self.offsets_scoped else None)
            coverage = None
            if self.coverage_bias is not None:
                if decoder_coverage is None:
                    raise ValueError("a pointer_coverage model needs decoder_coverage: call it with "
                                     "decoder_input_ids or labels, or generate()")
                coverage = self.fit_to_source(decoder_coverage, src_len)
            heads = None
            if self.head_values is not None:
                if decoder_head_counts is None:
                    raise ValueError("a pointer_head_counts model needs decoder_head_counts: call it with "
                                     "decoder_input_ids or labels, or generate()")
                heads = self.fit_to_source(decoder_head_counts, src_len)
            blocked = None
            if self.argument_mask:
                if decoder_argument_slots is None:
                    raise ValueError("a pointer_argument_mask model needs decoder_argument_slots: call it with "
                                     "decoder_input_ids or labels, or generate()")
                blocked = self.argument_blocked(decoder_pointer, decoder_argument_slots, source_relation_ids,
                                                encoder_attention_mask)
            if self.arity_mask:
                if decoder_arity_slots is None:
                    raise ValueError("a pointer_arity_mask model needs decoder_arity_slots: call it with "
                                     "decoder_input_ids or labels, or generate()")
                arity = self.arity_blocked(decoder_pointer, decoder_arity_slots, encoder_attention_mask, src_len)
                blocked = arity if blocked is None else blocked | arity
            labels = (tree, offsets, ranks, coverage)
            cross_masks = self.cross_attention_masks(labels, encoder_attention_mask, inputs_embeds.dtype, blocked)
            query_terms = self.query_terms(labels)
            value_terms = self.value_terms(tree, heads)
        if self.training and self.position_shift and cache_length == 0:
            # (batch, tgt_len) ids: Bart's embedding reads 1-D ids only, so index its table (and offset) directly
            shifted = position_ids + random_position_shifts(batch_size, seq_length, self.position_shift,
                                                            self.config.max_position_embeddings, position_ids.device)
            positions = nn.functional.embedding(shifted + self.embed_positions.offset, self.embed_positions.weight)
            hidden_states = self.layernorm_embedding(inputs_embeds + positions.to(inputs_embeds.device))
        elif self.distance_bias is not None:  # distances in the self-attention instead of positions
            hidden_states = self.layernorm_embedding(inputs_embeds)
        else:
            positions = self.embed_positions(input_ids, cache_length, position_ids=position_ids)
            hidden_states = self.layernorm_embedding(inputs_embeds + positions.to(inputs_embeds.device))
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
        for idx, decoder_layer in enumerate(self.layers):
            if self.training and self.layerdrop > 0.0 and torch.rand([]) < self.layerdrop:
                continue  # LayerDrop, as Bart
            extra = {name: term for name, term in (("query_term", query_terms[idx]), ("value_term", value_terms[idx]))
                     if term is not None}
            hidden_states = decoder_layer(hidden_states, self_masks[idx], encoder_hidden_states,
                                          encoder_attention_mask=cross_masks[idx], cache=cache, use_cache=use_cache,
                                          **extra, **kwargs)
        return BaseModelOutputWithPastAndCrossAttentions(last_hidden_state=hidden_states, cache=cache)


class StructureTransformerModel(BartModel):
    """``BartModel`` with the structure-reading encoder (built in Bart's order, so that a seed gives the same
    weights as our ``transformer``)."""

    def __init__(self, config: StructureTransformerConfig):
        BartPreTrainedModel.__init__(self, config)
        embed_scale = math.sqrt(config.d_model) if config.scale_embedding else 1.0
        self.shared = BartScaledWordEmbedding(config.vocab_size, config.d_model, config.pad_token_id,
                                              embed_scale=embed_scale)
        self.encoder = StructureTransformerEncoder(config)
        self.decoder = StructureTransformerDecoder(config)
        self.post_init()


class StructureTransformerForConditionalGeneration(BartForConditionalGeneration):
    """Bart's generating model; ``forward`` runs the encoder with ``relation_ids`` (unless ``encoder_outputs``
    are given, as in every decoding step of ``generate``), then the decoder (with a pointer model: the pointer
    of each decoder token, and ``relation_ids`` for its cross-attention) and Bart's output layer."""

    config_class = StructureTransformerConfig

    def __init__(self, config: StructureTransformerConfig):
        BartPreTrainedModel.__init__(self, config)
        self.model = StructureTransformerModel(config)
        self.final_logits_bias = nn.Buffer(torch.zeros((1, self.model.shared.num_embeddings)))
        self.lm_head = nn.Linear(config.d_model, self.model.shared.num_embeddings, bias=False)
        # registered after every Bart module, so that a seed gives the other weights the values it gives without it
        if config.output_copy_lexicon and config.copy_lexicon_ids is None:
            raise ValueError("output_copy_lexicon needs copy_lexicon_ids (the token each source token's copy "
                             "writes): build the model with hf_recogs.models.build_model and training_pairs, "
                             "which it aligns")
        self.copy = None
        if config.output_copy_positions and not config.pointer_token_ids:
            raise ValueError("output_copy_positions needs pointer_token_ids (the output token naming each source "
                             "position): build the model with hf_recogs.models.build_model, which reads them from "
                             "the tokenizer")
        if config.output_copy:
            positions = (PositionCopy(config.d_model, config.pointer_token_ids, config.eos_token_id)
                         if config.output_copy_positions else None)
            self.copy = OutputCopy(config.d_model, config.copy_lexicon_ids if config.output_copy_lexicon else None,
                                   positions)
        # token id -> the source position it names (-1: none); a pointer model's only, rebuilt from the config
        # (``_init_weights``) rather than saved
        table = None
        if config.reads_pointer():
            if not config.pointer_token_ids:
                raise ValueError("a pointer model (cross_attention_structure='pointer', pointer_offsets) needs "
                                 "pointer_token_ids (the output token "
                                 "naming each source position): build the model with hf_recogs.models.build_model, "
                                 "which reads them from the tokenizer")
            table = nn.Buffer(self.position_table(), persistent=False)
            if config.pointer_offsets_scope != "all" and config.pointer_scope_token_id is None:
                raise ValueError("pointer_offsets_scope needs pointer_scope_token_id (the id of the output token "
                                 "AND): build the model with hf_recogs.models.build_model, which reads it from the "
                                 "tokenizer")
            for option, tokens, names in (("pointer_argument_mask", "pointer_argument_tokens", "',' and ')'"),
                                          ("pointer_arity_mask", "pointer_arity_tokens", "'(' and ','"),
                                          ("pointer_head_counts", "pointer_arity_tokens", "'(' and ','")):
                if getattr(config, option) and getattr(config, tokens) is None:
                    raise ValueError(f"{option} needs {tokens} (the ids of the output tokens {names}): build the "
                                     "model with hf_recogs.models.build_model, which reads them from the tokenizer")
        self.position_of_token = table
        if config.pointer_named_words and config.pointer_word_ids is None:
            raise ValueError("pointer_named_words needs pointer_word_ids (the output tokens that write a word): "
                             "build the model with hf_recogs.models.build_model and its training_pairs, which "
                             "reads them")
        # token id -> whether it writes a word (``pointer_named_words``); rebuilt from the config, like the table
        self.writes_word = (nn.Buffer(self.word_table(), persistent=False) if config.pointer_named_words
                            else None)
        self.post_init()

    def position_table(self) -> torch.Tensor:
        table = torch.full((self.config.vocab_size,), -1, dtype=torch.long)
        for position, token_id in enumerate(self.config.pointer_token_ids):
            if token_id >= 0:
                table[token_id] = position
        return table

    def word_table(self) -> torch.Tensor:
        table = torch.zeros(self.config.vocab_size, dtype=torch.bool)
        table[torch.tensor(self.config.pointer_word_ids or [], dtype=torch.long)] = True
        return table

    def named_words(self, decoder_input_ids, source_ids, source_mask):
        """``word_positions`` of a ``pointer_named_words`` model (None for other models)."""
        if self.writes_word is None:
            return None
        if source_ids is None:
            raise ValueError("pointer_named_words finds written words among the source ids: run the model with "
                             "input_ids (or generate()), or pass encoder_outputs from its own encoder")
        return word_positions(decoder_input_ids, source_ids, self.copy.written_token, self.writes_word, source_mask)

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, (StructureRelationBias, PointerKeys, PointerValues, WordClassEmbedding,
                               FunctionEmbedding)):
            init.zeros_(module.weight)
        if isinstance(module, WordClassEmbedding):
            init.copy_(module.class_of_token, torch.tensor(self.config.word_class_ids, dtype=torch.long))
        if isinstance(module, OutputCopy) and module.written_token is not None:
            init.copy_(module.written_token, torch.tensor(self.config.copy_lexicon_ids, dtype=torch.long))
        if isinstance(module, PositionCopy):
            init.copy_(module.token_of_position, torch.tensor(self.config.pointer_token_ids, dtype=torch.long))
        if module is self and self.position_of_token is not None:  # loading leaves buffers unset
            init.copy_(self.position_of_token, self.position_table())
        if module is self and getattr(self, "writes_word", None) is not None:
            init.copy_(self.writes_word, self.word_table())

    def forward(self, input_ids=None, attention_mask=None, relation_ids=None, encoder_outputs=None,
                decoder_pointer=None, function_ids=None, **kwargs):
        if encoder_outputs is None and (input_ids is not None or kwargs.get("inputs_embeds") is not None):
            # Only the encoder's own arguments go to the encoder (Bart would also hand it the decoder's).
            encoder_outputs = self.model.encoder(
                input_ids=input_ids, attention_mask=attention_mask, relation_ids=relation_ids,
                function_ids=function_ids, inputs_embeds=kwargs.pop("inputs_embeds", None),
                **{k: kwargs[k] for k in ("output_attentions", "output_hidden_states") if k in kwargs})
        if self.position_of_token is not None:
            if kwargs.get("decoder_input_ids") is None and kwargs.get("labels") is not None:
                kwargs["decoder_input_ids"] = shift_tokens_right(kwargs["labels"], self.config.pad_token_id,
                                                                 self.config.decoder_start_token_id)
            if decoder_pointer is None and kwargs.get("decoder_input_ids") is not None:
                if kwargs.get("cache") is not None and kwargs["cache"].get_seq_length() > 0:
                    raise ValueError("a decoding step with a cache needs decoder_pointer (generate() passes it)")
                source_ids = input_ids if input_ids is not None else getattr(encoder_outputs, "input_ids", None)
                decoder_pointer = pointer_positions(
                    kwargs["decoder_input_ids"], self.position_of_token,
                    self.named_words(kwargs["decoder_input_ids"], source_ids, attention_mask))
                if self.config.pointer_argument_mask:
                    kwargs["decoder_argument_slots"] = argument_slots(
                        kwargs["decoder_input_ids"], self.position_of_token, self.config.pointer_argument_tokens)
                if self.config.pointer_arity_mask:
                    kwargs["decoder_arity_slots"] = arity_slots(
                        kwargs["decoder_input_ids"], self.position_of_token, self.config.pointer_arity_tokens)
                if self.config.pointer_coverage:
                    kwargs["decoder_coverage"] = coverage_counts(kwargs["decoder_input_ids"], self.position_of_token,
                                                                 len(self.config.pointer_token_ids))
                if self.config.pointer_head_counts:
                    kwargs["decoder_head_counts"] = head_counts(
                        kwargs["decoder_input_ids"], self.position_of_token, self.config.pointer_arity_tokens,
                        len(self.config.pointer_token_ids))
                if self.config.pointer_offsets_scope != "all":
                    kwargs["decoder_offset_scope"] = before_first(kwargs["decoder_input_ids"],
                                                                  self.config.pointer_scope_token_id)
            kwargs.update(source_relation_ids=relation_ids, decoder_pointer=decoder_pointer)
        if self.copy is None:
            return super().forward(input_ids=input_ids, attention_mask=attention_mask,
                                   encoder_outputs=encoder_outputs, **kwargs)
        return self.forward_with_copy(attention_mask, encoder_outputs, **kwargs)

    def forward_with_copy(self, attention_mask, encoder_outputs, labels=None, **kwargs) -> Seq2SeqLMOutput:
        """Bart's forward with the pointer-generator output layer (``output_copy``): the decoder, Bart's
        vocabulary logits, the copy mixture (log-probabilities, returned as ``logits``) and its cross-entropy."""
        source_ids = getattr(encoder_outputs, "input_ids", None)
        if source_ids is None:
            raise ValueError("an output_copy model copies from the source ids: run it with input_ids (or "
                             "generate()), or pass encoder_outputs from its own encoder, which carry them")
        if labels is not None:
            kwargs["use_cache"] = False
            if kwargs.get("decoder_input_ids") is None and kwargs.get("decoder_inputs_embeds") is None:
                kwargs["decoder_input_ids"] = shift_tokens_right(labels, self.config.pad_token_id,
                                                                 self.config.decoder_start_token_id)
        outputs = self.model(attention_mask=attention_mask, encoder_outputs=encoder_outputs, **kwargs)
        hidden = outputs.last_hidden_state
        vocabulary_logits = self.lm_head(hidden) + self.final_logits_bias.to(hidden.device)
        log_probs = self.copy(hidden, vocabulary_logits, outputs.encoder_last_hidden_state, source_ids,
                              attention_mask)
        loss = None
        if labels is not None:
            loss = nn.functional.nll_loss(log_probs.flatten(0, 1), labels.to(log_probs.device).flatten())
        return Seq2SeqLMOutput(loss=loss, logits=log_probs, cache=outputs.cache,
                               decoder_hidden_states=outputs.decoder_hidden_states,
                               decoder_attentions=outputs.decoder_attentions,
                               cross_attentions=outputs.cross_attentions,
                               encoder_last_hidden_state=outputs.encoder_last_hidden_state,
                               encoder_hidden_states=outputs.encoder_hidden_states,
                               encoder_attentions=outputs.encoder_attentions)

    def prepare_inputs_for_generation(self, input_ids, *args, **kwargs):
        """Bart's step inputs; a pointer model also gets the pointer of the step's tokens, from the whole
        decoded prefix (``input_ids`` here: every decoder token so far)."""
        inputs = super().prepare_inputs_for_generation(input_ids, *args, **kwargs)
        if self.position_of_token is not None:
            step = inputs["decoder_input_ids"].shape[1]
            source_ids = getattr(inputs.get("encoder_outputs"), "input_ids", None)
            named_words = self.named_words(input_ids, source_ids, inputs.get("attention_mask"))
            inputs["decoder_pointer"] = pointer_positions(input_ids, self.position_of_token, named_words)[:, -step:]
            if self.config.pointer_argument_mask:
                inputs["decoder_argument_slots"] = argument_slots(
                    input_ids, self.position_of_token, self.config.pointer_argument_tokens)[:, -step:]
            if self.config.pointer_arity_mask:
                inputs["decoder_arity_slots"] = arity_slots(
                    input_ids, self.position_of_token, self.config.pointer_arity_tokens)[:, -step:]
            if self.config.pointer_coverage:
                inputs["decoder_coverage"] = coverage_counts(input_ids, self.position_of_token,
                                                             len(self.config.pointer_token_ids), last=step)
            if self.config.pointer_head_counts:
                inputs["decoder_head_counts"] = head_counts(input_ids, self.position_of_token,
                                                            self.config.pointer_arity_tokens,
                                                            len(self.config.pointer_token_ids), last=step)
            if self.config.pointer_offsets_scope != "all":
                inputs["decoder_offset_scope"] = before_first(input_ids, self.config.pointer_scope_token_id)[:, -step:]
        return inputs


__all__ = ["FunctionEmbedding", "OutputCopy", "PointerKeys", "PointerValues", "StructureEncoderOutput",
           "StructureTransformerDecoder", "StructureTransformerDecoderLayer", "StructureTransformerEncoder",
           "StructureTransformerForConditionalGeneration", "StructureTransformerModel", "WordClassEmbedding"]
