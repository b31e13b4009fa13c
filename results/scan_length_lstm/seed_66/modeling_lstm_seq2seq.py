"""The ReCOGS reference LSTM (Wu, Manning & Potts 2023) as a transformers model with ``generate()`` support.

Self-contained (copied next to saved checkpoints for ``trust_remote_code=True``): imports only torch,
transformers and the sibling configuration module.

Architecture (as the reference ``model/encoder_decoder_lstm.py`` of frankaging/ReCOGS):
- encoder: embedding → dropout → L-layer unidirectional LSTM over the packed (unpadded) source → dropout;
- decoder: embedding → dropout → L-layer LSTM initialised with the encoder's final (h, c) of every layer;
  dot-product attention of the top decoder state over the encoder outputs (padding masked);
  ``h̃ = tanh(W [h_t; context])``; logits = ``h̃ E_dec^T + b`` (weight tied to the decoder embedding);
- ``config.attention=False`` drops the attention (logits from the top decoder state; SCAN's best model);
- ``config.cell="gru"`` uses GRU layers instead of LSTM layers (SyGNS's GRU baseline); the state then has no
  cell, and the ``c`` half of the cache below is zeros that nothing reads;
- no input feeding, so teacher-forced training runs the decoder LSTM over the whole target at once
  (the reference loops step by step; the result is the same function);
- ``config.teacher_forcing_ratio < 1``: in training, each update is teacher-forced with that probability (one
  draw per batch from torch's RNG, so seeded runs and resumed runs draw the same); otherwise the decoder runs
  free, fed its own greedy prediction at every step for the length of the gold target (Lake & Baroni 2018's
  SCAN set-up uses 0.5). Evaluation losses are always teacher-forced.
- weights initialised with PyTorch's defaults, as the reference (embeddings N(0, 1), LSTM and Linear uniform).

Incremental decoding (the cache): the decoder has no input feeding, so after step t everything step t+1 needs
besides its input token is the decoder recurrent state ``(h, c)`` of every layer (the attention reads the fixed
encoder outputs, which ``generate`` computes once and keeps). ``forward`` returns that state as an
``LstmSeq2SeqState``, a ``(hidden, cell)`` tuple, each ``(batch, layers, hidden)`` (batch first, so that
generation can expand and reorder it along dim 0), under the installed transformers version's cache name
(``cache`` in transformers 5.24, ``past_key_values`` in older versions; ``forward`` accepts both). ``generate``
feeds it back, and ``prepare_inputs_for_generation`` then passes only the newest token: a step costs the same
at any prefix length, in greedy decoding and in beam search alike. Beam search reorders the state after every
step through the model's ``_reorder_cache`` (transformers 5.24's ``_beam_search`` calls that hook when a model
defines it, and otherwise needs a ``transformers.Cache``), which keeps the surviving beams' rows in their new
order. ``generate(use_cache=False)`` keeps the old path, which re-runs the decoder over the whole prefix at
every step (quadratic in the output length); it gives the same tokens and, up to float rounding, the same
scores (tests/test_lstm_decoding.py checks both).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from transformers import GenerationMixin, PreTrainedModel
from transformers import initialization as init
from transformers.modeling_outputs import Seq2SeqLMOutput
from transformers.utils import ModelOutput

from .configuration_lstm_seq2seq import LstmSeq2SeqConfig

# The name under which this transformers version passes the decoder state between generation steps; under
# the other name generate() would drop the state and re-read the whole prefix at every step (same tokens,
# quadratic time).
CACHE_FIELD = "cache" if "cache" in Seq2SeqLMOutput.__dataclass_fields__ else "past_key_values"


class LstmSeq2SeqState(tuple):
    """The decoder's recurrent state between generation steps: ``(hidden, cell)``, each ``(batch, layers,
    hidden)``; for a GRU ``cell`` is zeros that nothing reads. A plain tuple for everything that unpacks it."""

    # What transformers' generation loop may ask of a cache: a recurrent state cannot be cut back to an earlier
    # length, and it is not a static (compilable) cache.
    is_croppable = False
    is_compileable = False

    def __new__(cls, states):
        states = tuple(states)
        if len(states) != 2:
            raise ValueError(f"an LSTM decoder state is (hidden, cell), got {len(states)} tensors")
        return super().__new__(cls, states)

    def reorder(self, index: torch.LongTensor) -> LstmSeq2SeqState:
        """The state of the rows ``index`` (beam search: the beams that survive a step), in that order."""
        return LstmSeq2SeqState(s.index_select(0, index.to(s.device)) for s in self)


@dataclass
class LstmSeq2SeqEncoderOutput(ModelOutput):
    """Encoder outputs; ``final_hidden``/``final_cell`` are ``(batch, layers, hidden)``."""

    last_hidden_state: torch.FloatTensor | None = None
    final_hidden: torch.FloatTensor | None = None
    final_cell: torch.FloatTensor | None = None


def shift_tokens_right(labels: torch.Tensor, pad_token_id: int, decoder_start_token_id: int) -> torch.Tensor:
    shifted = labels.new_zeros(labels.shape)
    shifted[:, 1:] = labels[:, :-1].clone()
    shifted[:, 0] = decoder_start_token_id
    shifted.masked_fill_(shifted == -100, pad_token_id)
    return shifted


def _recurrent_layers(config: LstmSeq2SeqConfig, layers: int) -> nn.Module:
    cls = nn.GRU if config.cell == "gru" else nn.LSTM
    return cls(config.hidden_size, config.hidden_size, layers, batch_first=True)


def _run(rnn: nn.Module, inputs, state=None):
    """Run an LSTM or GRU; the state is always ``(h, c)`` (a GRU gets ``h`` and returns zeros for ``c``)."""
    if isinstance(rnn, nn.GRU):
        outputs, h = rnn(inputs, None if state is None else state[0])
        return outputs, (h, torch.zeros_like(h))
    return rnn(inputs, state)


class LstmSeq2SeqEncoder(nn.Module):
    main_input_name = "input_ids"

    def __init__(self, config: LstmSeq2SeqConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.rnn = _recurrent_layers(config, config.encoder_layers)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, input_ids: torch.LongTensor, attention_mask: torch.Tensor | None = None, **kwargs):
        """``attention_mask`` must be right-padded (1s then 0s), as our tokenizer produces."""
        embedded = self.dropout(self.embed_tokens(input_ids))
        total_length = input_ids.shape[1]
        if attention_mask is not None and not bool(attention_mask.all()):
            lengths = attention_mask.sum(dim=1).clamp(min=1).to("cpu", torch.int64)
            packed = nn.utils.rnn.pack_padded_sequence(
                embedded, lengths, batch_first=True, enforce_sorted=False
            )
            packed_out, (h, c) = _run(self.rnn, packed)
            outputs, _ = nn.utils.rnn.pad_packed_sequence(
                packed_out, batch_first=True, total_length=total_length
            )
        else:
            outputs, (h, c) = _run(self.rnn, embedded)
        return LstmSeq2SeqEncoderOutput(
            last_hidden_state=self.dropout(outputs),
            final_hidden=h.transpose(0, 1),
            final_cell=c.transpose(0, 1),
        )


class LstmSeq2SeqDecoder(nn.Module):
    def __init__(self, config: LstmSeq2SeqConfig):
        super().__init__()
        hidden = config.hidden_size
        self.embed_tokens = nn.Embedding(config.vocab_size, hidden)
        self.rnn = _recurrent_layers(config, config.decoder_layers)
        self.attn_combine = nn.Linear(2 * hidden, hidden) if config.attention else None
        self.dropout = nn.Dropout(config.dropout)

    def forward(
        self,
        input_ids: torch.LongTensor,
        state: tuple[torch.Tensor, torch.Tensor],
        encoder_hidden_states: torch.Tensor,
        encoder_attention_mask: torch.Tensor | None = None,
    ):
        """``state``: (h, c), each (layers, batch, hidden). Returns attentional states (batch, T, hidden) and the
        new state."""
        embedded = self.dropout(self.embed_tokens(input_ids))
        outputs, state = _run(self.rnn, embedded, state)
        if self.attn_combine is None:  # no attention: the top LSTM state feeds the output projection
            return outputs, state
        scores = torch.bmm(outputs, encoder_hidden_states.transpose(1, 2))  # (B, T, S)
        if encoder_attention_mask is not None:
            scores = scores.masked_fill(
                encoder_attention_mask[:, None, :] == 0, torch.finfo(scores.dtype).min
            )
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, encoder_hidden_states)
        attentional = torch.tanh(self.attn_combine(torch.cat((outputs, context), dim=-1)))
        return attentional, state


class LstmSeq2SeqPreTrainedModel(PreTrainedModel):
    config_class = LstmSeq2SeqConfig
    config: LstmSeq2SeqConfig
    base_model_prefix = "model"
    main_input_name = "input_ids"
    supports_gradient_checkpointing = False
    _no_split_modules = ["LstmSeq2SeqEncoder", "LstmSeq2SeqDecoder"]

    @torch.no_grad()
    def _init_weights(self, module):
        # PyTorch's own defaults (what the reference model used), applied through transformers' init helpers so
        # that loading a checkpoint does not re-initialise loaded weights.
        if isinstance(module, nn.Embedding):
            init.normal_(module.weight, mean=0.0, std=1.0)
        elif isinstance(module, (nn.LSTM, nn.GRU)):
            bound = module.hidden_size**-0.5
            for param in module.parameters():
                init.uniform_(param, -bound, bound)
        elif isinstance(module, nn.Linear):
            fan_in = module.in_features
            bound = fan_in**-0.5 if fan_in > 0 else 0.0
            tied = self.config.tie_word_embeddings and module is getattr(self, "lm_head", None)
            if not tied:
                init.kaiming_uniform_(module.weight, a=5**0.5)
            if module.bias is not None:
                init.uniform_(module.bias, -bound, bound)


class LstmSeq2SeqForConditionalGeneration(LstmSeq2SeqPreTrainedModel, GenerationMixin):
    _tied_weights_keys = {"lm_head.weight": "decoder.embed_tokens.weight"}

    def __init__(self, config: LstmSeq2SeqConfig):
        super().__init__(config)
        self.encoder = LstmSeq2SeqEncoder(config)
        self.decoder = LstmSeq2SeqDecoder(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=True)
        self.post_init()

    # --- accessors used by transformers ---------------------------------------------------------------------
    def get_encoder(self):
        return self.encoder

    def get_decoder(self):
        return self.decoder

    def get_input_embeddings(self):
        return self.encoder.embed_tokens

    def set_input_embeddings(self, value):
        self.encoder.embed_tokens = value

    def get_output_embeddings(self):
        return self.lm_head

    def set_output_embeddings(self, value):
        self.lm_head = value

    @classmethod
    def _supports_default_dynamic_cache(cls) -> bool:
        # The cache is a recurrent state, not key/value pairs: never let generate() build a DynamicCache.
        return False

    def prepare_decoder_input_ids_from_labels(self, labels: torch.Tensor) -> torch.Tensor:
        return shift_tokens_right(labels, self.config.pad_token_id, self.config.decoder_start_token_id)

    # --- forward ----------------------------------------------------------------------------------------------
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        decoder_input_ids: torch.LongTensor | None = None,
        decoder_attention_mask: torch.Tensor | None = None,
        encoder_outputs: LstmSeq2SeqEncoderOutput | tuple | None = None,
        past_key_values: tuple[torch.Tensor, torch.Tensor] | None = None,
        labels: torch.LongTensor | None = None,
        cache: tuple[torch.Tensor, torch.Tensor] | None = None,
        use_cache: bool | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> Seq2SeqLMOutput | tuple:
        """``decoder_attention_mask`` is accepted for API compatibility and not needed: the decoder is causal and
        right padding cannot influence earlier positions; padded label positions (-100) are left out of the loss.
        ``cache`` (or ``past_key_values``): the state a previous call returned; ``decoder_input_ids`` then
        continue from it (in generation, only the newest token). Without it the decoder starts from the
        encoder's final state. With ``use_cache`` the output carries the state after the last position.
        """
        use_cache = self.config.use_cache if use_cache is None else use_cache
        return_dict = self.config.return_dict if return_dict is None else return_dict

        if encoder_outputs is None:
            if input_ids is None:
                raise ValueError("pass input_ids (or encoder_outputs)")
            encoder_outputs = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        elif isinstance(encoder_outputs, (tuple, list)):
            encoder_outputs = LstmSeq2SeqEncoderOutput(*encoder_outputs)

        if decoder_input_ids is None:
            if labels is None:
                raise ValueError("pass decoder_input_ids or labels")
            decoder_input_ids = self.prepare_decoder_input_ids_from_labels(labels)

        past = cache if cache is not None else past_key_values
        if past is None:
            state = (encoder_outputs.final_hidden, encoder_outputs.final_cell)
        else:
            state = tuple(past)
        state = tuple(s.transpose(0, 1).contiguous() for s in state)  # → (layers, batch, hidden)

        free_running = (
            self.training and labels is not None and self.config.teacher_forcing_ratio < 1
            and float(torch.rand(())) >= self.config.teacher_forcing_ratio
        )
        if free_running:
            logits, (h, c) = self._free_running(decoder_input_ids, state, encoder_outputs, attention_mask)
        else:
            attentional, (h, c) = self.decoder(
                decoder_input_ids, state, encoder_outputs.last_hidden_state, encoder_attention_mask=attention_mask
            )
            logits = self.lm_head(attentional)

        loss = None
        if labels is not None:
            loss = F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1), ignore_index=-100
            )

        new_past = LstmSeq2SeqState((h.transpose(0, 1), c.transpose(0, 1))) if use_cache else None
        if not return_dict:
            out = (logits, new_past, encoder_outputs.last_hidden_state)
            return ((loss,) + out) if loss is not None else out
        return Seq2SeqLMOutput(
            loss=loss,
            logits=logits,
            encoder_last_hidden_state=encoder_outputs.last_hidden_state,
            **{CACHE_FIELD: new_past},
        )

    def _free_running(self, decoder_input_ids, state, encoder_outputs, attention_mask):
        """Decode ``decoder_input_ids.shape[1]`` steps from the start token, each fed the previous greedy output
        (detached: no gradient through the argmax)."""
        token = decoder_input_ids[:, :1]
        steps = []
        for _ in range(decoder_input_ids.shape[1]):
            attentional, state = self.decoder(
                token, state, encoder_outputs.last_hidden_state, encoder_attention_mask=attention_mask
            )
            step_logits = self.lm_head(attentional)
            steps.append(step_logits)
            token = step_logits.argmax(dim=-1).detach()
        return torch.cat(steps, dim=1), state

    # --- generation -------------------------------------------------------------------------------------------
    def prepare_inputs_for_generation(
        self,
        input_ids: torch.LongTensor,
        past_key_values: tuple[torch.Tensor, torch.Tensor] | None = None,
        attention_mask: torch.Tensor | None = None,
        encoder_outputs: LstmSeq2SeqEncoderOutput | None = None,
        use_cache: bool | None = None,
        cache: tuple[torch.Tensor, torch.Tensor] | None = None,
        **kwargs,
    ) -> dict:
        # With a state, only the newest token is fed; without one, the decoder re-reads the whole prefix.
        past = cache if cache is not None else past_key_values
        if past is not None:
            input_ids = input_ids[:, -1:]
        return {
            "decoder_input_ids": input_ids,
            CACHE_FIELD: past,
            "attention_mask": attention_mask,
            "encoder_outputs": encoder_outputs,
            "use_cache": use_cache,
        }

    def _reorder_cache(self, cache, beam_idx: torch.LongTensor):
        """Called by transformers' beam search after every step (``beam_idx``: for each row of the next step,
        the flat ``batch * beams`` row it continues)."""
        if cache is None:
            return None
        return LstmSeq2SeqState(cache).reorder(beam_idx)


__all__ = [
    "LstmSeq2SeqEncoderOutput",
    "LstmSeq2SeqForConditionalGeneration",
    "LstmSeq2SeqPreTrainedModel",
    "LstmSeq2SeqState",
]
