"""The LSTM classifier of (input, candidate) pairs (the structure-annotation paper's LSTM baseline): it reads
only real tokens, its two segments matter, it ignores structure, and it loads with the Auto classes."""

import pytest
import torch
from torch.nn import functional as F
from transformers import AutoModelForSequenceClassification

import hf_recogs.models  # noqa: F401  (registers the model with the Auto classes)
from hf_recogs.models.configuration_lstm_classifier import LstmClassifierConfig
from hf_recogs.models.modeling_lstm_classifier import LstmClassifierForSequenceClassification


def tiny(**overrides):
    torch.manual_seed(0)
    config = LstmClassifierConfig(vocab_size=20, embedding_size=8, hidden_size=12, num_layers=2, dropout=0.0,
                                  **overrides)
    return LstmClassifierForSequenceClassification(config).eval()


def test_padding_never_reaches_the_logit():
    model = tiny()
    ids = torch.tensor([[1, 5, 6, 2, 7, 8, 0, 0, 0], [1, 5, 6, 2, 7, 8, 9, 9, 3]])
    mask = (ids != 0).long()
    types = torch.tensor([[0, 0, 0, 1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1, 1, 1, 1]])
    with torch.no_grad():
        padded = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
        alone = model(input_ids=ids[:1, :6], attention_mask=mask[:1, :6], token_type_ids=types[:1, :6]).logits
        garbage = ids.clone()
        garbage[0, 6:] = 11  # what sits under the mask is never read
        again = model(input_ids=garbage, attention_mask=mask, token_type_ids=types).logits
    assert torch.allclose(padded[0], alone[0], atol=1e-6) and torch.equal(padded[0], again[0])
    assert not torch.allclose(padded[0], padded[1])
    # padding before the tokens would reach the state: refused
    with pytest.raises(ValueError, match="reads right-padded batches"):
        model(input_ids=ids, attention_mask=mask.flip(1), token_type_ids=types)


def test_first_token_and_segments_change_the_logit_and_structure_is_ignored():
    model = tiny()
    ids = torch.tensor([[1, 5, 6, 2, 7, 8]])
    types = torch.tensor([[0, 0, 0, 1, 1, 1]])
    with torch.no_grad():
        base = model(input_ids=ids, token_type_ids=types).logits
        other_first = model(input_ids=torch.tensor([[1, 4, 6, 2, 7, 8]]), token_type_ids=types).logits
        one_segment = model(input_ids=ids, token_type_ids=torch.zeros_like(types)).logits
        with_relations = model(input_ids=ids, token_type_ids=types,
                               relation_ids=torch.randint(0, 10, (1, 6, 6))).logits
    assert base.shape == (1, 1)
    assert not torch.allclose(base, other_first) and not torch.allclose(base, one_segment)
    assert torch.equal(base, with_relations)


def test_loss_is_sigmoid_cross_entropy_on_one_logit():
    model = tiny(type_vocab_size=0)
    ids = torch.tensor([[1, 5, 2, 7], [1, 6, 2, 8]])
    labels = torch.tensor([1, 0])
    out = model(input_ids=ids, labels=labels)
    assert torch.allclose(out.loss, F.binary_cross_entropy_with_logits(out.logits.squeeze(-1), labels.float()))
    out.loss.backward()
    assert model.word_embeddings.weight.grad is not None


def test_saved_model_loads_with_auto_classes(tmp_path):
    model = tiny()
    model.save_pretrained(tmp_path)
    loaded = AutoModelForSequenceClassification.from_pretrained(tmp_path).eval()
    ids = torch.tensor([[1, 5, 6, 2, 7, 8]])
    assert type(loaded).__name__ == "LstmClassifierForSequenceClassification"
    with torch.no_grad():
        assert torch.equal(model(input_ids=ids).logits, loaded(input_ids=ids).logits)
