"""Incremental decoding of the attention LSTM: the recurrent-state cache gives what re-reading the whole prefix
gives, for greedy decoding and for beam search (whose state is reordered by beam at every step).

Tiny models (hidden 24, 2 layers) on a toy task (reverse the source, with EOS), trained for a few seconds (not
to perfection) so that outputs end at different lengths and the beams really compete; untrained models cover
outputs cut at ``max_length``. The whole file runs in well under 30 s on one thread.
"""

from __future__ import annotations

import random

import pytest
import torch

from hf_recogs.models.configuration_lstm_seq2seq import LstmSeq2SeqConfig
from hf_recogs.models.modeling_lstm_seq2seq import (
    CACHE_FIELD,
    LstmSeq2SeqForConditionalGeneration,
    LstmSeq2SeqState,
)

PAD, BOS, EOS = 0, 1, 2
WORDS = list(range(3, 13))
VOCAB = 13
VARIANTS = {
    "lstm": {},
    "lstm_no_attention": {"attention": False},
    "gru": {"cell": "gru"},
}


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _pad(rows: list[list[int]], value: int) -> torch.Tensor:
    width = max(map(len, rows))
    return torch.tensor([row + [value] * (width - len(row)) for row in rows])


def _sources(n: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.choice(WORDS) for _ in range(rng.randint(2, 7))] for _ in range(n)]


def _encode(sources: list[list[int]]) -> dict:
    ids = _pad(sources, PAD)
    return {"input_ids": ids, "attention_mask": (ids != PAD).long()}


def _model(variant: str, train_steps: int, seed: int = 0) -> LstmSeq2SeqForConditionalGeneration:
    torch.manual_seed(seed)
    config = LstmSeq2SeqConfig(vocab_size=VOCAB, hidden_size=24, encoder_layers=2, decoder_layers=2,
                               dropout=0.1, **VARIANTS[variant])
    model = LstmSeq2SeqForConditionalGeneration(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for step in range(train_steps):
        sources = _sources(32, seed=1000 + step)
        labels = _pad([src[::-1] + [EOS] for src in sources], -100)
        loss = model(**_encode(sources), labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if not train_steps:  # untrained: make EOS unlikely, so that outputs run to max_length
        with torch.no_grad():
            model.lm_head.bias[EOS] -= 2.0
    return model.eval()


@pytest.fixture(scope="module")
def models() -> dict:
    """(variant, trained) → model; the trained ones get half to three quarters of the toy rows right (not all,
    so that the beams compete), and their outputs differ in length."""
    built = {}
    for variant in VARIANTS:
        built[variant, True] = _model(variant, train_steps=150)
        built[variant, False] = _model(variant, train_steps=0)
    return built


CASES = [(variant, trained) for variant in VARIANTS for trained in (True, False)]
IDS = [f"{variant}-{'trained' if trained else 'random'}" for variant, trained in CASES]
SOURCES = _sources(10, seed=7)  # padded batch of 10 sources of 2 to 7 words


def _count_decoder_inputs(model, monkeypatch) -> list[int]:
    """Records the decoder input length of every forward call of ``model``."""
    fed: list[int] = []
    decoder_forward = model.decoder.forward

    def recording(input_ids, *args, **kwargs):
        fed.append(input_ids.shape[1])
        return decoder_forward(input_ids, *args, **kwargs)

    monkeypatch.setattr(model.decoder, "forward", recording)
    return fed


def test_the_trained_models_have_learned_something(models):
    for variant in VARIANTS:
        out = models[variant, True].generate(**_encode(SOURCES), max_length=10)
        right = sum(row[1:len(src) + 2].tolist() == src[::-1] + [EOS] for row, src in zip(out, SOURCES))
        assert 4 <= right < len(SOURCES), (variant, right)


@pytest.mark.parametrize(("variant", "trained"), CASES, ids=IDS)
def test_greedy_with_the_cache_equals_without(models, variant, trained, monkeypatch):
    model = models[variant, trained]
    fed = _count_decoder_inputs(model, monkeypatch)
    with torch.no_grad():
        cached = model.generate(**_encode(SOURCES), max_length=12, output_scores=True, return_dict_in_generate=True)
        steps = len(fed)
        assert steps > 2 and set(fed) == {1}, fed  # one new token per step
        fed.clear()
        slow = model.generate(**_encode(SOURCES), max_length=12, output_scores=True, return_dict_in_generate=True,
                              use_cache=False)
    assert fed == list(range(1, steps + 1))  # the slow path re-reads the prefix
    assert torch.equal(cached.sequences, slow.sequences)
    torch.testing.assert_close(torch.stack(cached.scores), torch.stack(slow.scores), rtol=1e-5, atol=1e-5)
    if trained:  # outputs of different lengths: some rows stopped at EOS and were padded
        lengths = {int((row != PAD).sum()) for row in cached.sequences}
        assert len(lengths) > 1, lengths


@pytest.mark.parametrize(("variant", "trained"), CASES, ids=IDS)
def test_beam_search_with_the_cache_equals_without(models, variant, trained, monkeypatch):
    """num_beams=4, all four beams returned with their scores, as the model-negative generators decode."""
    model = models[variant, trained]
    kwargs = {"max_length": 12, "num_beams": 4, "num_return_sequences": 4, "output_scores": True,
              "return_dict_in_generate": True, "do_sample": False}
    fed = _count_decoder_inputs(model, monkeypatch)
    with torch.no_grad():
        cached = model.generate(**_encode(SOURCES), **kwargs)
        assert len(fed) > 2 and set(fed) == {1}, fed  # the beams were decoded with the state
        fed.clear()
        slow = model.generate(**_encode(SOURCES), use_cache=False, **kwargs)
        assert max(fed) > 1  # ... and the reference without it
    assert cached.sequences.shape[0] == 4 * len(SOURCES)
    assert torch.equal(cached.sequences, slow.sequences)
    torch.testing.assert_close(cached.sequences_scores, slow.sequences_scores, rtol=1e-5, atol=1e-5)
    assert torch.equal(cached.beam_indices, slow.beam_indices)
    # the four beams of a source are distinct hypotheses, best first
    for i in range(len(SOURCES)):
        beams = cached.sequences[4 * i: 4 * i + 4]
        assert len({tuple(b.tolist()) for b in beams}) == 4
        scores = cached.sequences_scores[4 * i: 4 * i + 4]
        assert (scores[:-1] >= scores[1:]).all()


def test_beam_search_depends_on_reordering_the_state(models, monkeypatch):
    """The comparison above would notice a state that is not reordered: without the reordering, the beams
    come out different."""
    model = models["lstm", True]
    kwargs = {"max_length": 12, "num_beams": 4, "num_return_sequences": 4, "output_scores": True,
              "return_dict_in_generate": True}
    with torch.no_grad():
        right = model.generate(**_encode(SOURCES), **kwargs)
        monkeypatch.setattr(model, "_reorder_cache", lambda cache, beam_idx: cache)
        stale = model.generate(**_encode(SOURCES), **kwargs)
    assert not torch.equal(right.sequences, stale.sequences) or not torch.allclose(
        right.sequences_scores, stale.sequences_scores)


def test_single_source_beams_equal_the_batched_ones(models):
    """Reordering uses flat (batch × beam) row indices: each source's beams in a padded batch are those it gets
    alone."""
    model = models["lstm", True]
    kwargs = {"max_length": 12, "num_beams": 4, "num_return_sequences": 4, "output_scores": True,
              "return_dict_in_generate": True}
    with torch.no_grad():
        batched = model.generate(**_encode(SOURCES[:4]), **kwargs)
        for i, src in enumerate(SOURCES[:4]):
            alone = model.generate(**_encode([src]), **kwargs)
            width = alone.sequences.shape[1]
            rows = batched.sequences[4 * i: 4 * i + 4]
            assert torch.equal(rows[:, :width], alone.sequences)
            # padding after a finished beam (transformers 5.24's beam search pads with EOS when pad_token_id is 0)
            assert torch.isin(rows[:, width:], torch.tensor([PAD, EOS])).all()
            torch.testing.assert_close(batched.sequences_scores[4 * i: 4 * i + 4], alone.sequences_scores,
                                       rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_teacher_forced_logits_equal_step_by_step_cached_logits(models, variant):
    model = models[variant, True]
    inputs = _encode(SOURCES)
    labels = _pad([src[::-1] + [EOS] for src in SOURCES], -100)
    with torch.no_grad():
        full = model(**inputs, labels=labels, use_cache=False)
        assert getattr(full, CACHE_FIELD) is None
        decoder_input_ids = model.prepare_decoder_input_ids_from_labels(labels)
        encoder_outputs = model.get_encoder()(**inputs)
        state, steps = None, []
        for t in range(decoder_input_ids.shape[1]):
            out = model(attention_mask=inputs["attention_mask"], encoder_outputs=encoder_outputs,
                        decoder_input_ids=decoder_input_ids[:, t: t + 1], **{CACHE_FIELD: state}, use_cache=True)
            state = getattr(out, CACHE_FIELD)
            assert isinstance(state, LstmSeq2SeqState)
            assert state[0].shape == state[1].shape == (len(SOURCES), 2, 24)
            steps.append(out.logits)
    torch.testing.assert_close(torch.cat(steps, dim=1), full.logits, rtol=1e-5, atol=1e-5)


def test_state_reorder_picks_rows():
    hidden, cell = torch.arange(12.0).view(3, 2, 2), -torch.arange(12.0).view(3, 2, 2)
    state = LstmSeq2SeqState((hidden, cell))
    h, c = state  # still unpacks as a tuple
    assert h is hidden and c is cell
    reordered = LstmSeq2SeqForConditionalGeneration._reorder_cache(None, state, torch.tensor([2, 2, 0]))
    assert isinstance(reordered, LstmSeq2SeqState)
    assert torch.equal(reordered[0], hidden[[2, 2, 0]]) and torch.equal(reordered[1], cell[[2, 2, 0]])
    assert LstmSeq2SeqForConditionalGeneration._reorder_cache(None, None, torch.tensor([0])) is None
    with pytest.raises(ValueError, match="hidden, cell"):
        LstmSeq2SeqState((hidden,))
