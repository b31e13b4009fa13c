"""The structure-masked encoder classifier: a masked token pair receives no attention and carries no
information, soft relation labels change the logits, cross-links can be switched off, and a saved model loads
with plain AutoModelForSequenceClassification (after ``import hf_recogs.models``) or with trust_remote_code."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from hf_recogs.models import StructureEncoderConfig, StructureEncoderForSequenceClassification
from hf_recogs.models.configuration_structure_encoder import RELATIONS

R = {name: i for i, name in enumerate(RELATIONS)}
LENGTH = 7


def small(**overrides) -> StructureEncoderForSequenceClassification:
    torch.manual_seed(0)
    config = StructureEncoderConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                    intermediate_size=32, hidden_dropout_prob=0.0, **overrides)
    return StructureEncoderForSequenceClassification(config).eval()


def relations() -> torch.Tensor:
    """CLS (0) over a chain 1 → 2 → 3 (the input) and 4 → 5 (the candidate); 6 is outside both trees; 3 and 5
    are cross-linked. Every other pair is unrelated (label none)."""
    rel = torch.full((LENGTH, LENGTH), R["none"])
    for i in range(LENGTH):
        rel[i, i] = R["self"]
        if i:
            rel[0, i], rel[i, 0] = R["from_cls"], R["to_cls"]
    for parent, child in ((1, 2), (2, 3), (4, 5)):
        rel[parent, child], rel[child, parent] = R["parent_to_child"], R["child_to_parent"]
    rel[3, 5], rel[5, 3] = R["input_to_candidate_link"], R["candidate_to_input_link"]
    return rel[None]


def run(model, ids, rel, **kwargs):
    with torch.no_grad():
        return model(input_ids=ids, relation_ids=rel, output_attentions=True, **kwargs)


def test_the_hard_mask_leaves_no_attention_on_a_masked_pair():
    ids = torch.tensor([[1, 5, 6, 7, 8, 9, 10]])
    probs = run(small(attention="hard"), ids, relations()).attentions[0][0]  # (heads, length, length)
    allowed = {(i, i) for i in range(LENGTH)} | {(0, i) for i in range(LENGTH)} | {(i, 0) for i in range(LENGTH)}
    allowed |= {(1, 2), (2, 1), (2, 3), (3, 2), (4, 5), (5, 4), (3, 5), (5, 3)}
    for i in range(LENGTH):
        for j in range(LENGTH):
            if (i, j) in allowed:
                assert (probs[:, i, j] > 0).all(), (i, j)
            else:
                assert (probs[:, i, j] == 0).all(), (i, j)
    assert torch.allclose(probs.sum(-1), torch.ones(2, LENGTH))
    # token 6 is outside the trees: it sees itself and CLS only
    assert set(torch.nonzero(probs[0, 6]).flatten().tolist()) == {0, 6}


def test_with_one_layer_a_masked_token_does_not_reach_a_node():
    """Changing token 6 (not linked to 1) changes nothing at token 1 under the hard mask; without it, it does."""
    rel = relations()
    ids = torch.tensor([[1, 5, 6, 7, 8, 9, 10]])
    changed = ids.clone()
    changed[0, 6] = 11
    for attention, same in (("hard", True), ("none", False)):
        model = small(attention=attention)
        hidden = {}
        model.layers[0].register_forward_hook(lambda m, a, out, seen=hidden: seen.__setitem__("h", out[0]))
        run(model, ids, rel)
        before = hidden["h"][0, 1].clone()
        run(model, changed, rel)
        assert torch.allclose(before, hidden["h"][0, 1], atol=1e-6) is same, attention


@pytest.mark.parametrize("attention", ["none", "hard"])
def test_a_training_step_through_the_fused_kernel_is_the_explicit_attention(attention, monkeypatch):
    """In training, attention without relation labels runs through PyTorch's fused kernel (one call per layer,
    no probabilities stored); its loss and every gradient equal those of the explicit computation (evaluation,
    ``output_attentions``), padding included, and under the hard mask a masked token still does not reach a
    node."""
    from hf_recogs.models import modeling_structure_encoder

    calls = []
    fused_kernel = modeling_structure_encoder.F.scaled_dot_product_attention
    monkeypatch.setattr(modeling_structure_encoder.F, "scaled_dot_product_attention",
                        lambda *a, **k: calls.append(1) or fused_kernel(*a, **k))
    ids = torch.tensor([[1, 5, 6, 7, 8, 9, 10], [1, 5, 6, 7, 0, 0, 0]])
    batch = {"input_ids": ids, "attention_mask": (ids > 0).long(), "relation_ids": relations().expand(2, -1, -1),
             "labels": torch.tensor([1.0, 0.0])}
    model = small(attention=attention).train()
    grads = []
    for explicit in (False, True):
        out = model(**batch, output_attentions=explicit)
        out.loss.backward()
        grads.append((out.loss.item(), {n: p.grad.clone() for n, p in model.named_parameters()}))
        model.zero_grad()
        assert len(calls) == 1  # the one layer of the fused step; the explicit one adds none
    (fused_loss, fused), (explicit_loss, explicit) = grads
    assert fused_loss == pytest.approx(explicit_loss, rel=1e-6)
    assert all(torch.allclose(fused[n], explicit[n], atol=1e-6) for n in fused)
    assert any(fused[n].abs().sum() > 0 for n in fused if ".attention.query." in n)
    hidden = {}
    model.layers[0].register_forward_hook(lambda m, a, out: hidden.__setitem__("h", out[0]))
    changed = ids.clone()
    changed[0, 6] = 11
    with torch.no_grad():
        model(**{**batch, "input_ids": ids})
        before = hidden["h"][0, 1].clone()
        model(**{**batch, "input_ids": changed})
    assert torch.allclose(before, hidden["h"][0, 1], atol=1e-6) is (attention == "hard")


def test_cross_links_off_removes_the_linked_pairs_and_soft_labels_move_the_logit():
    ids = torch.tensor([[1, 5, 6, 7, 8, 9, 10]])
    off = run(small(attention="hard", cross_links=False), ids, relations()).attentions[0][0]
    assert (off[:, 3, 5] == 0).all() and (off[:, 5, 3] == 0).all()
    soft = small(attention="soft")
    with torch.no_grad():
        soft.layers[0].attention.relation_keys.weight.normal_(0, 1.0)
    plain = run(soft, ids, torch.zeros_like(relations())).logits
    assert not torch.allclose(plain, run(soft, ids, relations()).logits)
    # soft alone masks nothing: every pair attends
    assert (run(soft, ids, relations()).attentions[0] > 0).all()


def test_padding_keys_get_no_attention_and_the_loss_is_sigmoid_cross_entropy():
    ids = torch.tensor([[1, 5, 6, 7, 0, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 0, 0, 0]])
    out = run(small(attention="both"), ids, relations(), attention_mask=mask, labels=torch.tensor([1.0]))
    assert (out.attentions[0][0, :, :4, 4:] == 0).all()
    expected = torch.nn.functional.softplus(-out.logits[0, 0])  # -log sigmoid(logit) for label 1
    assert out.loss.item() == pytest.approx(expected.item(), rel=1e-6)


def test_a_masked_model_needs_relation_ids():
    with pytest.raises(ValueError, match="needs relation_ids"):
        small(attention="hard")(input_ids=torch.tensor([[1, 2]]))


def test_saved_model_loads_with_the_auto_classes(tmp_path):
    from transformers import AutoModelForSequenceClassification

    model = small(attention="both")
    model.save_pretrained(tmp_path)
    ids = torch.tensor([[1, 5, 6, 7, 8, 9, 10]])
    loaded = AutoModelForSequenceClassification.from_pretrained(tmp_path).eval()
    assert torch.allclose(run(model, ids, relations()).logits, run(loaded, ids, relations()).logits)
    # without hf_recogs: the code saved next to the weights, in a process that never imports hf_recogs
    script = ("import sys\n"
              "from transformers import AutoModelForSequenceClassification\n"
              f"model = AutoModelForSequenceClassification.from_pretrained({str(tmp_path)!r}, trust_remote_code=True)\n"
              "assert 'hf_recogs' not in sys.modules, 'hf_recogs was imported'\n"
              "print(type(model).__name__, type(model).__module__)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={"HF_HOME": str(tmp_path / "hf_home"), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    name, module = proc.stdout.split()
    assert name == "StructureEncoderForSequenceClassification" and module.startswith("transformers_modules.")
