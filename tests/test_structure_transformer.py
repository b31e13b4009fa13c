"""structure_transformer, the structure track: with structure off it is our Bart ``transformer`` exactly; a hard
mask leaves no attention on a masked pair and no information from it; relation_ids of a known sentence are its
tree (written here by hand from the sentence's grammar); checkpoints reload through the Auto classes; greedy and
beam generation read relation_ids in the encoder only; and a tiny train.py run records the track."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from hf_recogs.models import build_model
from hf_recogs.models.configuration_structure_transformer import TREE_RELATIONS
from hf_recogs.tokenization import build_tokenizer

ROOT = Path(__file__).resolve().parents[1]
CONFIG = str(ROOT / "configs" / "recogs_pos_structure_transformer_fast.yaml")
R = {name: i for i, name in enumerate(TREE_RELATIONS)}
TINY = {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 2,
        "decoder_attention_heads": 2, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64}
SENTENCE = "Emma gave the cake to Liam ."
SHORT = "Liam smiled ."


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer([SENTENCE, SHORT, "A cat in the room smiled ."], ["cake ( 3 ) ; give ( 1 )"])


def tiny(tok, **overrides):
    torch.manual_seed(0)
    return build_model("structure_transformer", tok, max_positions=32, **{**TINY, **overrides}).eval()


def by_hand() -> torch.Tensor:
    """The relation labels of ``Emma gave the cake to Liam . </s>`` (positions 0..7) over its head-word tree,
    from the sentence's grammar: ``gave`` heads its subject ``Emma``, its object ``cake`` and its recipient
    ``Liam``; ``the`` hangs from ``cake``, the preposition ``to`` from ``Liam``; ``.`` and ``</s>`` are outside
    the tree. Every pair not listed is unrelated."""
    edges = [(1, 0), (1, 3), (3, 2), (1, 5), (5, 4)]  # (head, dependent)
    grand = [(1, 2), (1, 4)]  # gave dominates the and to through cake and Liam
    siblings = [(0, 3), (0, 5), (3, 5)]  # the dependents of gave
    rel = torch.full((8, 8), R["none"])
    for head, dep in edges:
        rel[head, dep], rel[dep, head] = R["parent_to_child"], R["child_to_parent"]
    for top, low in grand:
        rel[top, low], rel[low, top] = R["ancestor_to_descendant"], R["descendant_to_ancestor"]
    for a, b in siblings:
        rel[a, b] = rel[b, a] = R["sibling"]
    rel[range(8), range(8)] = R["self"]
    return rel


def encoded(tok, texts=(SENTENCE, SHORT)):
    """The two sentences with their hand-made relations, right-padded (the short one's tree: smiled → Liam)."""
    enc = tok(list(texts), padding=True, return_tensors="pt")
    length = enc["input_ids"].shape[1]
    rel = torch.full((2, length, length), R["none"])
    rel[0, :8, :8] = by_hand()
    rel[1, range(4), range(4)] = R["self"]
    rel[1, 1, 0], rel[1, 0, 1] = R["parent_to_child"], R["child_to_parent"]
    return {**enc, "relation_ids": rel}


def test_structure_off_is_our_transformer_exactly(tok):
    """Same seed, same weights as ``transformer``; the same weights give the same logits; a fresh soft bias
    (zero) changes nothing either."""
    off = tiny(tok, encoder_structure="none")
    torch.manual_seed(0)
    bart = build_model("transformer", tok, max_positions=32, **TINY).eval()
    assert off.state_dict().keys() == bart.state_dict().keys()
    assert all(torch.equal(v, bart.state_dict()[k]) for k, v in off.state_dict().items())
    batch = encoded(tok)
    labels = tok(["cake ( 3 )", "give ( 1 )"], padding=True, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        expected = bart(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels).logits
        assert torch.equal(off(**batch, labels=labels).logits, expected)
        soft = tiny(tok, encoder_structure="soft")
        soft.load_state_dict(off.state_dict(), strict=False)  # its bias stays at zero
        assert torch.equal(soft(**batch, labels=labels).logits, expected)


def test_the_hard_mask_leaves_no_attention_on_a_masked_pair(tok):
    model = tiny(tok, encoder_structure="hard", attn_implementation="eager")  # 1 of 2 heads structured
    batch = encoded(tok)
    with torch.no_grad():
        probs = model(**batch, decoder_input_ids=torch.ones(2, 1, dtype=torch.long),
                      output_attentions=True).encoder_attentions[0]
    allowed = {(i, i) for i in range(8)} | {(1, 0), (0, 1), (1, 3), (3, 1), (3, 2), (2, 3), (1, 5), (5, 1), (5, 4),
                                             (4, 5)}
    for i in range(8):
        for j in range(8):
            assert ((probs[0, 0, i, j] > 0) == ((i, j) in allowed)).item(), (i, j)
    assert (probs[0, 1] > 0).all()  # the free head reads everything
    assert (probs[1, :, :4, 4:] == 0).all()  # padding keys, in both heads
    assert set(torch.nonzero(probs[1, 0, 2]).flatten().tolist()) == {2}  # "." sees itself only
    assert torch.allclose(probs.sum(-1), torch.ones_like(probs.sum(-1)))  # no empty row, padding rows included


@pytest.mark.parametrize("kind, same", [("hard", True), ("both", True), ("none", False)])
def test_a_token_outside_the_allowed_set_does_not_reach_the_first_layer(tok, kind, same):
    """``Liam`` (5) may attend to itself, ``to`` (4) and ``gave`` (1): changing ``the`` (2) leaves its first-layer
    output alone when every head is masked."""
    model = tiny(tok, encoder_structure=kind, structure_heads=2 if kind != "none" else None)
    if kind == "both":
        with torch.no_grad():
            model.model.encoder.relation_bias.weight.normal_(0, 1.0)
    seen = {}
    model.model.encoder.layers[0].register_forward_hook(lambda m, a, out: seen.__setitem__("h", out))
    batch = encoded(tok)
    changed = batch["input_ids"].clone()
    changed[0, 2] = tok.convert_tokens_to_ids("cat")
    with torch.no_grad():
        model.get_encoder()(**batch)
        before = seen["h"][0, 5].clone()
        model.get_encoder()(**{**batch, "input_ids": changed})
    assert torch.equal(before, seen["h"][0, 5]) is same


@pytest.mark.mirror
def test_relation_ids_of_a_sentence_are_its_tree_by_hand(tok, mirror):
    from hf_recogs.train.arguments import ExperimentArguments
    from hf_recogs.train.data import COGS_MARKERS, SourceLayout, source_parser

    parse, markers, _ = source_parser(ExperimentArguments(dataset="recogs_pos", arch="structure_transformer"))
    assert markers == COGS_MARKERS
    layout = SourceLayout(tok, parse, markers, max_length=32)
    batch = layout.batch([SENTENCE, SHORT])
    # the encoder ids are the tokenizer's, position for position
    assert batch["input_ids"][0].tolist() == tok(SENTENCE)["input_ids"]
    assert batch["input_ids"][1, :4].tolist() == tok(SHORT)["input_ids"]
    assert torch.equal(batch["relation_ids"][0], by_hand())
    assert torch.equal(batch["relation_ids"][1, 4:], torch.full((4, 8), R["none"]))  # padding rows: none
    # with structure tokens: the constituency tree, constituents after </s> (positions 8..13)
    ids, heads = SourceLayout(tok, parse, markers, structure_tokens=True, max_length=32).encode(SENTENCE)
    tokens = tok.convert_ids_to_tokens(ids)
    assert tokens[:8] == [*SENTENCE.split(), "</s>"] and len(tokens) == 14  # S NP VP NP PP NP: <unk> here
    # S(8) root; NP(9) Emma and VP(10) gave under S; NP(11) the cake and PP(12) under VP; to and NP(13) Liam
    # under PP; "." and </s> outside
    assert heads == [9, 10, 11, 11, 12, 13, -2, -2, -1, 8, 8, 10, 10, 12]
    # a sentence outside the grammar has no tree: every token relates to itself only
    odd = layout.batch(["gave gave gave"])["relation_ids"][0]
    assert torch.equal(odd, torch.eye(4, dtype=torch.long) * R["self"]) and layout.count_unparsed(["gave gave gave"])


def test_a_layout_for_a_model_without_structure_is_refused(tok):
    from hf_recogs.models import build_model
    from hf_recogs.train.data import SourceLayout

    plain = build_model("transformer", tok, max_positions=32, **TINY)
    with pytest.raises(ValueError, match="needs a structure_transformer.*tokenizer alone"):
        SourceLayout.for_model(plain, tok)


def test_a_saved_model_reloads_through_the_auto_classes(tok, tmp_path):
    from transformers import AutoModelForSeq2SeqLM

    import hf_recogs.models  # noqa: F401 - registers the model with the Auto classes

    model = tiny(tok, encoder_structure="both", structure_tokens=True)
    with torch.no_grad():
        model.model.encoder.relation_bias.weight.normal_(0, 1.0)
    model.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["auto_map"]["AutoModelForSeq2SeqLM"].startswith("modeling_structure_transformer.")
    assert (tmp_path / "modeling_structure_transformer.py").is_file()
    loaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path).eval()
    assert type(loaded) is type(model) and loaded.config.structure_tokens and loaded.config.encoder_structure == "both"
    batch = encoded(tok)
    with torch.no_grad():
        assert torch.equal(loaded(**batch, labels=batch["input_ids"]).logits,
                           model(**batch, labels=batch["input_ids"]).logits)


def test_greedy_and_beam_generation_read_relation_ids_in_the_encoder_only(tok):
    model = tiny(tok, encoder_structure="both")
    with torch.no_grad():
        model.model.encoder.relation_bias.weight.normal_(0, 1.0)
    batch = encoded(tok)
    calls = []
    model.get_encoder().register_forward_hook(lambda m, a, out: calls.append(1))
    with torch.no_grad():
        greedy = model.generate(**batch, max_length=10)
        assert len(calls) == 1  # the encoder runs once; the decoding steps read its outputs
        beams = model.generate(**batch, max_length=10, num_beams=4)
        assert greedy.shape[0] == beams.shape[0] == 2 and len(calls) == 2
        # a decoding step given the encoder's outputs ignores relation_ids
        encoder_outputs = model.get_encoder()(**batch)
        step = {"attention_mask": batch["attention_mask"], "decoder_input_ids": greedy[:, :3],
                "encoder_outputs": encoder_outputs}
        assert torch.equal(model(**step, relation_ids=torch.zeros_like(batch["relation_ids"])).logits,
                           model(**step, relation_ids=batch["relation_ids"]).logits)
        # padding is harmless: the short sentence alone decodes as it does in the padded batch
        alone = model.generate(input_ids=batch["input_ids"][1:, :4], attention_mask=batch["attention_mask"][1:, :4],
                               relation_ids=batch["relation_ids"][1:, :4, :4], max_length=10)
        assert torch.equal(alone[0], greedy[1, :alone.shape[1]])
    with pytest.raises(ValueError, match="needs relation_ids"):
        model.generate(input_ids=batch["input_ids"], max_length=5)


def test_structure_options_are_model_overrides_and_checked_early(tmp_path):
    from hf_recogs.train import ConfigError, parse_args

    exp, _ = parse_args([CONFIG, f"output_dir={tmp_path}",
                         "model_overrides={encoder_structure: soft, structure_layers: [0], structure_heads: 4}"])
    assert exp.arch == "structure_transformer" and exp.model_overrides["structure_layers"] == [0]
    with pytest.raises(ConfigError, match="encoder_structure must be one of none, hard, soft, both"):
        parse_args([CONFIG, "model_overrides={encoder_structure: x}"])
    with pytest.raises(ConfigError, match="structure_heads must be between 1 and"):
        parse_args([CONFIG, "model_overrides={structure_heads: 5}"])
    with pytest.raises(ConfigError, match="cross_attention_structure must be one of none, pointer"):
        parse_args([CONFIG, "model_overrides={cross_attention_structure: tree}"])
    with pytest.raises(ConfigError, match="pointer_offsets must be a whole number >= 0"):
        parse_args([CONFIG, "model_overrides={pointer_offsets: -1}"])
    with pytest.raises(ConfigError, match="pointer_keys needs a pointer term"):
        parse_args([CONFIG, "model_overrides={pointer_keys: true}"])
    with pytest.raises(ConfigError, match="pointer_sides splits the tree labels .* needs cross_attention_structure"):
        parse_args([CONFIG, "model_overrides={pointer_offsets: 4, pointer_sides: true}"])
    with pytest.raises(ConfigError, match="pointer_values adds the tree labels .* needs cross_attention_structure"):
        parse_args([CONFIG, "model_overrides={pointer_offsets: 4, pointer_values: true}"])
    for bad in (-1, 512):  # the config's table has 512 positions
        with pytest.raises(ConfigError, match="decoder_position_shift must be a whole number from 0 .* 511"):
            parse_args([CONFIG, f"model_overrides={{decoder_position_shift: {bad}}}"])
    with pytest.raises(ConfigError, match="pointer_coverage counts the positions the output names: it needs a pointer"):
        parse_args([CONFIG, "model_overrides={pointer_coverage: true}"])
    with pytest.raises(ConfigError, match="pointer_head_counts counts the conjuncts each named word heads: it needs"):
        parse_args([CONFIG, "model_overrides={pointer_head_counts: true}"])
    with pytest.raises(ConfigError, match="pointer_argument_mask reads the tree .* needs cross_attention_structure"):
        parse_args([CONFIG, "model_overrides={pointer_offsets: 4, pointer_argument_mask: true}"])
    with pytest.raises(ConfigError, match="pointer_arity_mask keeps the word the output named last: it needs a"):
        parse_args([CONFIG, "model_overrides={pointer_arity_mask: true}"])
    with pytest.raises(ConfigError, match="pointer_offsets_scope must be one of all, noun_list"):
        parse_args([CONFIG, "model_overrides={pointer_offsets: 4, pointer_offsets_scope: nouns}"])
    with pytest.raises(ConfigError, match="pointer_offsets_scope limits the offset term: it needs pointer_offsets"):
        parse_args([CONFIG, "model_overrides={cross_attention_structure: pointer, pointer_offsets_scope: noun_list}"])
    with pytest.raises(ConfigError, match="decoder_relative_positions must be a whole number >= 0"):
        parse_args([CONFIG, "model_overrides={decoder_relative_positions: -2}"])
    with pytest.raises(ConfigError, match="decoder_relative_positions drops .* set one of the two"):
        parse_args([CONFIG, "model_overrides={decoder_relative_positions: 8, decoder_position_shift: 16}"])
    with pytest.raises(ConfigError, match="decoder_attention_window must be a whole number >= 0"):
        parse_args([CONFIG, "model_overrides={decoder_relative_positions: 8, decoder_attention_window: -1}"])
    with pytest.raises(ConfigError, match="decoder_attention_window masks .* needs decoder_relative_positions > 0"):
        parse_args([CONFIG, "model_overrides={decoder_attention_window: 8}"])
    with pytest.raises(ConfigError, match="decoder_position_shift' expected int"):
        parse_args([CONFIG, "model_overrides={decoder_position_shift: 2.5}"])
    with pytest.raises(ConfigError, match="reads the parse of COGS-grammar inputs"):
        parse_args([CONFIG, "dataset=scan_simple"])


@pytest.mark.mirror
def test_a_tiny_train_run_records_the_structure_track(tmp_path, mirror):
    from hf_recogs.report.card import render_model_card
    from hf_recogs.train import main
    from hf_recogs.train.record import TRACK_WITH_STRUCTURE, structure_track

    out = tmp_path / "out"
    model = json.dumps({**TINY, "structure_heads": 1, "cross_attention_structure": "pointer", "pointer_offsets": 4,
                        "pointer_keys": True, "pointer_sides": True, "pointer_argument_mask": True,
                        "pointer_values": True, "pointer_coverage": True, "decoder_position_shift": 16,
                        "pointer_arity_mask": True, "pointer_head_counts": True, "output_copy": True,
                        "output_copy_lexicon": True, "pointer_named_words": True, "encoder_word_classes": True,
                        "pointer_offsets_scope": "noun_list", "output_copy_positions": True,
                        "encoder_functions": True})
    assert main([CONFIG, f"output_dir={out}", "seeds=[3]",
                 "max_train_samples=48", "max_steps=3", "eval_strategy=no", "save_strategy=no", "eval_splits=[gen]",
                 "max_eval_samples=6", "generation_max_length=12", "source_check=false", "cpu_threads=1",
                 "logging_steps=1", f"model_overrides={model}"]) == 0
    res = json.loads((out / "seed_3" / "results.json").read_text())
    assert res["arch"] == "structure_transformer" and structure_track(res) == TRACK_WITH_STRUCTURE
    structure = res["input_structure"]
    assert structure["parser"] == "hf_recogs.structure.cogs_parse_sentence"
    assert (structure["encoder_structure"], structure["structure_heads"], structure["structure_layers"]) == (
        "hard", 1, [0])
    assert structure["unparsed_inputs"] == {"train": 0, "gen": 0}
    assert structure["cross_attention_structure"] == "pointer" and structure["pointer_offsets"] == 4
    assert structure["pointer_keys"] is True and structure["pointer_sides"] is True
    assert structure["decoder_position_shift"] == 16
    assert res["train"]["global_step"] == 3 and res["splits"]["gen"]["n"] == 6
    card = (out / "seed_3" / "README.md").read_text()
    assert "Track: **with input structure**" in card and "`cross_attention_structure: pointer`" in card
    assert "clipped to ±4 (`pointer_offsets`)" in card and "added to the keys (`pointer_keys`)" in card
    assert structure["pointer_offsets_scope"] == "noun_list" and "(the noun list; `pointer_offsets_scope" in card
    assert structure["pointer_argument_mask"] is True and "(`pointer_argument_mask`)" in card
    assert structure["pointer_arity_mask"] is True and "the word that argument names (`pointer_arity_mask`)" in card
    assert structure["pointer_coverage"] is True and "named each source word so far (`pointer_coverage`)" in card
    assert structure["pointer_head_counts"] is True and "2 and more (`pointer_head_counts`)" in card
    assert structure["output_copy"] is True and "(`output_copy`, a pointer-generator)" in card
    assert structure["output_copy_lexicon"] is True and "`blessed` wrote `bless`; `output_copy_lexicon`" in card
    assert structure["pointer_named_words"] is True and "(`scream` named `screamed`; `pointer_named_words`)" in card
    assert structure["output_copy_positions"] is True and "position tokens nothing (`output_copy_positions`)" in card
    assert structure["pointer_values"] is True and "added to the values (`pointer_values`)" in card
    assert structure["encoder_word_classes"] is True and "noun, verb or other (`encoder_word_classes`)" in card
    assert structure["encoder_functions"] is True and "(`encoder_functions`; functions, not roles)" in card
    assert "on which side of that word a source word stands (`pointer_sides`)" in card
    assert "random offset of 0 to 16 (`decoder_position_shift`, SHAPE); decoding starts at 0" in card
    assert structure["decoder_relative_positions"] == 0 and "`decoder_relative_positions`" not in card
    assert structure["pointer_offsets_by"] == "position" and "`pointer_offsets_by" not in card
    ranked = {**res, "input_structure": {**structure, "pointer_offsets_by": "relation"}}
    assert "counted outward on its side (`pointer_offsets`, `pointer_offsets_by: relation`)" in str(
        render_model_card(ranked))
    both = str(render_model_card({**res, "input_structure": {**structure, "pointer_offsets_by": "both"}}))
    assert "two offset terms side by side, each clipped to ±4" in both and "`pointer_offsets_by: both`" in both
    relative = {**res, "input_structure": {**structure, "decoder_position_shift": 0, "decoder_relative_positions": 8}}
    assert "a learned term per head for 0 to 7 and one for 8 or more (`decoder_relative_positions`)" in str(
        render_model_card(relative))
    assert structure["decoder_attention_window"] == 0 and "`decoder_attention_window`" not in str(
        render_model_card(relative))
    relative["input_structure"]["decoder_attention_window"] = 6
    assert "saw only itself and the 5 tokens before it (`decoder_attention_window`)" in str(render_model_card(relative))
    without = {**res, "input_structure": {**structure, "pointer_values": False, "encoder_word_classes": False,
                                          "encoder_functions": False,
                                          "pointer_arity_mask": False, "pointer_head_counts": False,
                                          "output_copy": False, "output_copy_lexicon": False,
                                          "output_copy_positions": False}}
    assert "`pointer_values`" not in str(render_model_card(without))
    assert "`pointer_head_counts`" not in str(render_model_card(without))
    assert "`output_copy`" not in str(render_model_card(without))
    assert "`output_copy_lexicon`" not in str(render_model_card(without))
    assert "`output_copy_positions`" not in str(render_model_card(without))
    assert "`pointer_arity_mask`" not in str(render_model_card(without))
    assert "`encoder_word_classes`" not in str(render_model_card(without))
    assert "`encoder_functions`" not in str(render_model_card(without))
    baseline = {**res, "arch": "transformer", "input_structure": None}
    assert structure_track(baseline) == "without input structure"
    assert "Track:" not in str(render_model_card(baseline))


# ---------------------------------------------------------------------------------------------------------
# cross_attention_structure="pointer": the decoder's cross-attention reads the tree from the word last named

TARGET = "give ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 )"


@pytest.fixture(scope="module")
def pointer_tok():
    return build_tokenizer([SENTENCE, SHORT], [TARGET, "cake ( 3 ) ; smile ( 1 )", "x _ 2"])


def test_the_pointer_of_each_decoder_token_is_the_position_named_last(pointer_tok):
    from hf_recogs.models.modeling_structure_transformer import pointer_positions

    model = tiny(pointer_tok, cross_attention_structure="pointer")
    ids = [pointer_tok.convert_tokens_to_ids(t) for t in ["<s>", *TARGET.split()]]
    # <s> give ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 ), by hand
    expected = [-1, -1, -1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 3, 3]
    assert pointer_positions(torch.tensor([ids]), model.position_of_token)[0].tolist() == expected
    # the numbers of the vocabulary name positions 0..3; there is no 4 or more here
    assert [pointer_tok.convert_ids_to_tokens(i) for i in model.config.pointer_token_ids] == ["0", "1", "2", "3"]
    with pytest.raises(ValueError, match="needs outputs that name source positions by number"):
        tiny(tok_without_numbers(), cross_attention_structure="pointer")


def tok_without_numbers():
    return build_tokenizer([SENTENCE], ["cake ; give"])


def _pointer_batch(tok):
    batch = encoded(tok)
    labels = tok([TARGET, "smile ( 1 )"], padding=True, return_tensors="pt")["input_ids"]
    return batch, labels


def test_a_fresh_pointer_model_is_the_model_without_it(pointer_tok):
    """The pointer term starts at zero: the same weights give the same logits with and without it."""
    plain = tiny(pointer_tok, encoder_structure="hard")
    pointer = tiny(pointer_tok, encoder_structure="hard", cross_attention_structure="pointer")
    missing = set(pointer.state_dict()) - set(plain.state_dict())
    assert missing == {"model.decoder.pointer_bias.weight"}
    assert all(torch.equal(v, pointer.state_dict()[k]) for k, v in plain.state_dict().items())
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        assert torch.allclose(pointer(**batch, labels=labels).logits, plain(**batch, labels=labels).logits,
                              atol=1e-6)


def test_the_pointer_term_reaches_exactly_the_related_source_words(pointer_tok):
    """A large negative term on ``parent_to_child`` takes every head's cross-attention off the dependents of
    the word last named (``gave``, 1: ``Emma``, ``cake``, ``Liam`` = 0, 3, 5) once it is named, and nowhere
    else."""
    from hf_recogs.models.configuration_structure_transformer import POINTER_RELATIONS

    model = tiny(pointer_tok, cross_attention_structure="pointer", attn_implementation="eager")
    with torch.no_grad():
        model.model.decoder.pointer_bias.weight[:, :, POINTER_RELATIONS.index("parent_to_child")] = -1e4
        batch, labels = _pointer_batch(pointer_tok)
        cross = model(**batch, labels=labels, output_attentions=True).cross_attentions[0][0]  # (heads, tgt, src)
    dependents = [0, 3, 5]
    # decoder inputs: <s> give ( 1 ) AND agent ( 1 , 0 ...: "1" is input 3, "0" input 10 points at Emma (no
    # dependents); inputs 3..9 point at gave
    assert (cross[:, 3:10, dependents] < 1e-6).all()
    assert (cross[:, :3, dependents] > 1e-3).all()  # nothing named yet
    assert (cross[:, 10:15, dependents] > 1e-3).all()  # pointing at Emma, whose relation to them is not this
    assert torch.allclose(cross.sum(-1)[:, :17], torch.ones(2, 17))


def test_pointer_sides_label_each_relation_by_its_side_of_the_pointed_word(pointer_tok):
    """With ``pointer_sides`` the subject of ``gave`` (Emma, left) and its object and recipient (cake, Liam,
    right) get different labels, by hand from the tree of ``by_hand``; a large negative term on
    ``parent_to_child:right`` takes the cross-attention off cake and Liam and leaves Emma."""
    from hf_recogs.models.configuration_structure_transformer import POINTER_RELATIONS_WITH_SIDES as S
    from hf_recogs.models.modeling_structure_transformer import StructureTransformerDecoder

    rel = by_hand()[None]
    mask = torch.ones(1, 8, dtype=torch.long)
    labels = StructureTransformerDecoder.pointer_labels(torch.tensor([[1, 3, -1]]), rel, mask, sides=True)
    names = [[S[i] for i in row] for row in labels[0].tolist()]
    # pointing at gave (1): Emma gave the cake to Liam . </s>
    assert names[0] == ["parent_to_child", "self", "ancestor_to_descendant:right", "parent_to_child:right",
                        "ancestor_to_descendant:right", "parent_to_child:right", "none", "none"]
    # pointing at cake (3): gave is its head on the left, the its dependent on the left, Liam a sibling right
    assert names[1] == ["sibling", "child_to_parent", "parent_to_child", "self", "none", "sibling:right", "none",
                        "none"]
    assert names[2] == ["no_pointer"] * 8
    # without sides: the labels of POINTER_RELATIONS, the same relations with no side
    plain = StructureTransformerDecoder.pointer_labels(torch.tensor([[1, 3, -1]]), rel, mask)
    assert [[n.split(":")[0] for n in row] for row in names] == [[S[i] for i in row] for row in plain[0].tolist()]

    model = tiny(pointer_tok, cross_attention_structure="pointer", pointer_sides=True, attn_implementation="eager")
    assert model.model.decoder.pointer_bias.weight.shape[-1] == len(S)
    with torch.no_grad():
        model.model.decoder.pointer_bias.weight[:, :, S.index("parent_to_child:right")] = -1e4
        batch, target = _pointer_batch(pointer_tok)
        cross = model(**batch, labels=target, output_attentions=True).cross_attentions[0][0]
    # decoder inputs 3..9 point at gave: cake (3) and Liam (5) lose the attention, Emma (0) keeps it
    assert (cross[:, 3:10, [3, 5]] < 1e-6).all() and (cross[:, 3:10, 0] > 1e-3).all()
    assert (cross[:, :3, [3, 5]] > 1e-3).all()  # nothing named yet


def test_offset_labels_by_hand_and_the_offset_term_reaches_exactly_those_keys(pointer_tok):
    """``pointer_offsets=2``: source token j gets the label of its offset j - p from the pointed word p, clipped
    to -2..2 (labels 0..4), and 5 before anything is named; a large negative term on offset +2 takes the
    cross-attention off word p + 2 and every word after it, and nothing else. No tree is read."""
    from hf_recogs.models.modeling_structure_transformer import StructureTransformerDecoder

    mask = torch.tensor([[1] * 8, [1] * 4 + [0] * 4])
    pointer = torch.tensor([[-1, 1, 5], [3, 6, 0]])  # row 1: position 6 is padding, so nothing is pointed at
    labels = StructureTransformerDecoder.offset_labels(pointer, mask, 8, 2)
    assert labels[0, 0].tolist() == [5] * 8
    assert labels[0, 1].tolist() == [1, 2, 3, 4, 4, 4, 4, 4]  # offsets -1, 0, 1, 2, 3 ... clipped at +2
    assert labels[0, 2].tolist() == [0, 0, 0, 0, 1, 2, 3, 4]
    assert labels[1, 1].tolist() == [5] * 8 and labels[1, 2].tolist() == [2, 3, 4, 4, 4, 4, 4, 4]

    model = tiny(pointer_tok, encoder_structure="none", pointer_offsets=2, attn_implementation="eager")
    assert model.model.decoder.pointer_bias is None  # offsets alone: no tree term
    with torch.no_grad():
        model.model.decoder.offset_bias.weight[:, :, 4] = -1e4  # offset +2 and beyond
        batch, labels = _pointer_batch(pointer_tok)
        del batch["relation_ids"]  # offsets read no tree
        cross = model(**batch, labels=labels, output_attentions=True).cross_attentions[0][0]
    # decoder inputs 3..9 point at word 1 (gave): words 3..7 are 2 or more to its right
    assert (cross[:, 3:10, 3:8] < 1e-6).all() and (cross[:, 3:10, :3] > 1e-3).all()
    assert (cross[:, :3] > 1e-3).all()  # nothing named yet: every word attended
    # input 10 names word 0 (Emma): from word 2 on
    assert (cross[:, 10, 2:8] < 1e-6).all() and (cross[:, 10, :2] > 1e-3).all()


def test_ranked_offset_labels_by_hand():
    """``pointer_offsets_by="relation"``, clipped to ±2: each source token's rank among the tokens in the same
    tree relation to the pointed word on its side, counted outward (by hand from the tree of ``by_hand``);
    5 where nothing (or padding) is pointed at."""
    from hf_recogs.models.modeling_structure_transformer import StructureTransformerDecoder as Decoder

    rel = torch.stack([by_hand(), by_hand()])
    mask = torch.tensor([[1] * 8, [1, 1, 1, 0, 1, 1, 0, 0]])  # row 1: cake, . and </s> masked out
    pointer = torch.tensor([[1, 3, -1], [6, 3, 1]])
    labels = Decoder.ranked_offset_labels(pointer, rel, mask, 2)
    # from gave (1): Emma its first dependent on the left (-1); on the right cake and Liam its dependents 1 and
    # 2, the and to its descendants 1 and 2, . and </s> the unrelated 1 and 2
    assert labels[0, 0].tolist() == [1, 2, 3, 3, 4, 4, 3, 4]
    assert Decoder.offset_labels(pointer, mask, 8, 2)[0, 0].tolist() == [1, 2, 3, 4, 4, 4, 4, 4]
    # from cake (3): the (its dependent), gave (its head) and Emma (a sibling) each the first of their kind on
    # the left; to (unrelated) and Liam (a sibling) the first on the right, then . and </s> (unrelated 2, 3)
    assert labels[0, 1].tolist() == [1, 1, 1, 2, 3, 3, 4, 4]
    # nothing named; a masked token named
    assert labels[0, 2].tolist() == labels[1, 0].tolist() == labels[1, 1].tolist() == [5] * 8
    # masked tokens do not count: from gave, with cake masked out, Liam is its first dependent on the right
    assert labels[1, 2, 5].item() == 3 and labels[0, 0, 5].item() == 4


def test_ranked_offsets_do_not_move_when_a_phrase_is_inserted():
    """The point of ``pointer_offsets_by="relation"``: seen from the verb, the subject of *The dog in a bakery
    sneezed .* gets the label the subject of *The dog sneezed .* gets (the verb's first dependent on the left),
    where the offset by position moves from -1 to -4; the phrase's last noun, right before the verb, is a
    descendant, not a dependent."""
    from hf_recogs.models.configuration_structure_transformer import TREE_RELATIONS
    from hf_recogs.models.modeling_structure_transformer import StructureTransformerDecoder as Decoder
    from hf_recogs.structure.pairs import tree_relations

    def labels(heads, verb, by_relation):
        rel = torch.from_numpy(tree_relations(heads).astype("int64"))[None]
        pointer, mask = torch.tensor([[verb]]), torch.ones(1, len(heads), dtype=torch.long)
        if by_relation:
            return Decoder.ranked_offset_labels(pointer, rel, mask, 4)[0, 0].tolist(), rel[0, verb].tolist()
        return Decoder.offset_labels(pointer, mask, len(heads), 4)[0, 0].tolist(), rel[0, verb].tolist()

    short = (1, 2, None, None)  # The dog sneezed .
    long = (1, 5, 4, 4, 1, None, None)  # The dog in a bakery sneezed .
    (ranked_short, rel_short), (ranked_long, rel_long) = labels(short, 2, True), labels(long, 5, True)
    assert TREE_RELATIONS[rel_short[1]] == TREE_RELATIONS[rel_long[1]] == "parent_to_child"
    assert ranked_short[1] == ranked_long[1] == 4 - 1  # dog: -1 in both
    assert TREE_RELATIONS[rel_long[4]] == "ancestor_to_descendant" and ranked_long[4] == 4 - 1  # bakery
    assert labels(short, 2, False)[0][1] == 4 - 1 and labels(long, 5, False)[0][1] == 4 - 4


def test_offsets_by_relation_need_the_tree_pointer(pointer_tok):
    """``pointer_offsets_by="relation"`` reads the tree: without the tree pointer term (or without offsets) the
    model is refused with a message that says what to set, and an unknown value names the allowed ones. (That
    the ranked term reaches the logits is checked by the cached-decoding test below.)"""
    from huggingface_hub.errors import StrictDataclassClassValidationError

    for options in ({"pointer_offsets": 2}, {"cross_attention_structure": "pointer"}):
        with pytest.raises(StrictDataclassClassValidationError, match="needs pointer_offsets > 0 and "
                                                                      "cross_attention_structure='pointer'"):
            tiny(pointer_tok, pointer_offsets_by="relation", **options)
    with pytest.raises(StrictDataclassClassValidationError, match="pointer_offsets_by must be one of"):
        tiny(pointer_tok, pointer_offsets=2, pointer_offsets_by="words")


def test_offsets_by_both_are_two_terms_positions_and_ranks(pointer_tok):
    """``pointer_offsets_by="both"``: the offset term keeps the offsets by position and a second term of its own
    (scalars, and keys with ``pointer_keys``) gets the ranks, in scope and out of it the "nothing named" label."""
    from hf_recogs.models.modeling_structure_transformer import StructureTransformerDecoder as Decoder

    model = tiny(pointer_tok, cross_attention_structure="pointer", pointer_offsets=2, pointer_keys=True,
                 pointer_offsets_by="both")
    decoder = model.model.decoder
    assert decoder.rank_bias.weight.shape == decoder.offset_bias.weight.shape
    assert decoder.rank_keys.weight.shape == decoder.offset_keys.weight.shape
    alone = tiny(pointer_tok, cross_attention_structure="pointer", pointer_offsets=2, pointer_keys=True,
                 pointer_offsets_by="relation")
    assert alone.model.decoder.rank_bias is None and alone.model.decoder.rank_keys is None
    rel, mask = torch.stack([by_hand()]), torch.ones(1, 8, dtype=torch.long)
    pointer = torch.tensor([[1, 3, -1]])
    _, offsets, ranks = decoder.pointer_label_sets(pointer, rel, mask, 8)
    assert offsets.tolist() == Decoder.offset_labels(pointer, mask, 8, 2).tolist()
    assert ranks.tolist() == Decoder.ranked_offset_labels(pointer, rel, mask, 2).tolist()
    assert ranks[0, 0].tolist() == [1, 2, 3, 3, 4, 4, 3, 4]  # by hand: test_ranked_offset_labels_by_hand
    _, offsets, ranks = decoder.pointer_label_sets(pointer, rel, mask, 8, torch.tensor([[True, False, True]]))
    assert offsets[0, 1].tolist() == ranks[0, 1].tolist() == [5] * 8
    assert ranks[0, 0].tolist() == [1, 2, 3, 3, 4, 4, 3, 4]
    # with "relation" alone, the one offset term holds the ranks
    _, offsets, ranks = alone.model.decoder.pointer_label_sets(pointer, rel, mask, 8)
    assert ranks is None and offsets[0, 0].tolist() == [1, 2, 3, 3, 4, 4, 3, 4]


def _forced_decoding(model, batch, target):
    """The first row forced through ``target`` token by token with a cache, as generate decodes: (the decoded
    sequence without its start token, the step logits stacked (target_len, vocab))."""
    forced = lambda _, prefix: [target[0, len(prefix) - 1].item()] if len(prefix) <= target.shape[1] else [0]
    one = {k: v[:1] for k, v in batch.items()}
    with torch.no_grad():
        out = model.generate(**one, max_length=target.shape[1] + 1, prefix_allowed_tokens_fn=forced,
                             output_logits=True, return_dict_in_generate=True)
    return out.sequences[0, 1:], torch.stack(out.logits, 1)[0]


@pytest.mark.parametrize(("sides", "argument_mask", "coverage", "scope", "relative", "offsets_by", "window"),
                         [(False, False, False, "all", 0, "position", 0),
                          (True, False, False, "noun_list", 0, "position", 0),
                          (False, True, True, "all", 3, "position", 0), (True, False, True, "all", 0, "relation", 0),
                          (True, False, False, "noun_list", 0, "both", 0), (False, False, True, "all", 3, "both", 2)])
def test_decoding_with_a_cache_sees_the_pointer_training_sees(pointer_tok, sides, argument_mask, coverage, scope,
                                                              relative, offsets_by, window):
    """Forced through the target token by token (with a cache, as generate decodes), the model gives the
    logits of one teacher-forced forward: the pointer of each step comes from the whole decoded prefix (and,
    with ``pointer_sides``, each source word's side of it; with ``pointer_argument_mask``, whether the step is
    inside a second argument, and with ``pointer_arity_mask`` whether it names a first one; with
    ``pointer_coverage``, how often each word was named before; with a scoped offset term, whether the prefix has
    an ``AND`` yet; with ``decoder_relative_positions``, how far back each earlier token stands, and with
    ``decoder_attention_window``, whether it is inside the window)."""
    model = tiny(pointer_tok, encoder_structure="both", cross_attention_structure="pointer", pointer_offsets=3,
                 pointer_sides=sides, pointer_argument_mask=argument_mask, pointer_arity_mask=argument_mask,
                 pointer_coverage=coverage, pointer_offsets_scope=scope, decoder_relative_positions=relative,
                 pointer_offsets_by=offsets_by, decoder_attention_window=window, decoder_layers=2 if window else 1)
    terms = [model.model.decoder.pointer_bias, model.model.decoder.offset_bias]
    terms += [model.model.decoder.rank_bias] if offsets_by == "both" else []
    terms += [model.model.decoder.coverage_bias] if coverage else []
    terms += [model.model.decoder.distance_bias] if relative else []
    with torch.no_grad():
        for bias in terms:
            bias.weight.normal_(0, 2.0)
        model.model.encoder.relation_bias.weight.normal_(0, 1.0)
    batch, labels = _pointer_batch(pointer_tok)
    target = labels[:1]
    one = {k: v[:1] for k, v in batch.items()}
    sequence, logits = _forced_decoding(model, batch, target)
    with torch.no_grad():
        assert torch.equal(sequence, target[0])
        teacher = model(**one, labels=target).logits[0]
        assert torch.allclose(logits, teacher, atol=1e-4)
        # each term changes what the model predicts: without it the logits differ
        for bias in terms:
            kept = bias.weight.clone()
            bias.weight.zero_()
            assert not torch.allclose(model(**one, labels=target).logits[0], teacher, atol=1e-3)
            bias.weight.copy_(kept)
        if window:  # so does the window
            model.model.decoder.attention_window = 0
            assert not torch.allclose(model(**one, labels=target).logits[0], teacher, atol=1e-3)
            model.model.decoder.attention_window = window
        beams = model.generate(**batch, max_length=12, num_beams=3)
    assert beams.shape[0] == 2


def test_a_saved_pointer_model_reloads_with_its_position_tokens(pointer_tok, tmp_path):
    from transformers import AutoModelForSeq2SeqLM

    model = tiny(pointer_tok, cross_attention_structure="pointer")
    with torch.no_grad():
        model.model.decoder.pointer_bias.weight.normal_(0, 1.0)
    model.save_pretrained(tmp_path)
    assert "position_of_token" not in str(sorted(model.state_dict()))  # rebuilt from the config, not saved
    loaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path).eval()
    assert loaded.config.pointer_token_ids == model.config.pointer_token_ids
    assert torch.equal(loaded.position_of_token, model.position_of_token)
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        assert torch.equal(loaded(**batch, labels=labels).logits, model(**batch, labels=labels).logits)


# ---------------------------------------------------------------------------------------------------------
# pointer_keys: the pointer terms also depend on what the decoder token asks (Shaw et al.'s relation keys)


def test_pointer_keys_term_by_hand():
    """Head h of decoder token t adds q[h, t] · a[label(t, s), h] · scaling to source token s's logit."""
    from hf_recogs.models.modeling_structure_transformer import PointerKeys

    torch.manual_seed(0)
    keys = PointerKeys(layers=2, labels=3, d_model=4)  # 2 heads of 2 dimensions
    with torch.no_grad():
        keys.weight.normal_()
    query = torch.randn(1, 2, 2, 2)  # (batch, heads, tgt, head_dim)
    labels = torch.tensor([[[0, 2, 1], [1, 1, 0]]])  # (batch, tgt, src)
    term = keys(1, query, labels, scaling=0.5)
    for h in range(2):
        for t in range(2):
            for s in range(3):
                a = keys.weight[1, labels[0, t, s], 2 * h:2 * h + 2]
                assert torch.isclose(term[0, h, t, s], (query[0, h, t] * a).sum() * 0.5, atol=1e-6)


def _decodes_as_it_trains_and_reloads(model, batch, labels, teacher, tmp_path, reload_atol=0.0):
    """Forced decoding with a cache gives the first row's teacher-forced logits ``teacher[0]``, and the model
    saved and loaded through the Auto classes gives ``teacher`` exactly (or within ``reload_atol``: a reloaded
    weight can sit at another memory alignment, and a float32 matmul then round differently)."""
    from transformers import AutoModelForSeq2SeqLM

    sequence, logits = _forced_decoding(model, batch, labels[:1])
    assert torch.equal(sequence, labels[0])
    assert torch.allclose(logits, teacher[0], atol=1e-4)
    model.save_pretrained(tmp_path)
    loaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path).eval()
    with torch.no_grad():
        reloaded = loaded(**batch, labels=labels).logits
    assert torch.equal(reloaded, teacher) if not reload_atol else torch.allclose(reloaded, teacher, atol=reload_atol)


def test_fresh_pointer_keys_change_nothing_and_trained_ones_decode_as_they_train(pointer_tok, tmp_path):
    """Zero keys give the logits of the same model without them; random keys change the logits, decoding
    with a cache sees what teacher forcing sees, and the model reloads with them."""
    options = {"encoder_structure": "hard", "cross_attention_structure": "pointer", "pointer_offsets": 3}
    plain = tiny(pointer_tok, **options)
    keyed = tiny(pointer_tok, **options, pointer_keys=True)
    missing, unexpected = keyed.load_state_dict(plain.state_dict(), strict=False)
    assert sorted(missing) == ["model.decoder.offset_keys.weight", "model.decoder.tree_keys.weight"]
    assert not unexpected
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        fresh = keyed(**batch, labels=labels).logits
        assert torch.allclose(fresh, plain(**batch, labels=labels).logits, atol=1e-6)
        keyed.model.decoder.tree_keys.weight.normal_(0, 2.0)
        keyed.model.decoder.offset_keys.weight.normal_(0, 2.0)
        teacher = keyed(**batch, labels=labels).logits
        assert not torch.allclose(teacher, plain(**batch, labels=labels).logits, atol=1e-3)
    _decodes_as_it_trains_and_reloads(keyed, batch, labels, teacher, tmp_path)


def test_pointer_keys_are_added_to_the_keys_of_the_cross_attention(pointer_tok):
    """The cross-attention weights are softmax(q · (k_s + a_label(s)) · scaling + the scalar terms): computed
    here from the layer's own queries and keys (caught on their projections) and the labels of the pointer."""
    model = tiny(pointer_tok, cross_attention_structure="pointer", pointer_keys=True,
                 attn_implementation="eager")
    decoder = model.model.decoder
    with torch.no_grad():
        decoder.tree_keys.weight.normal_(0, 2.0)
        decoder.pointer_bias.weight.normal_(0, 1.0)
    attn = decoder.layers[0].encoder_attn
    caught = {}
    hooks = [attn.q_proj.register_forward_hook(lambda m, i, o: caught.__setitem__("q", o)),
             attn.k_proj.register_forward_hook(lambda m, i, o: caught.__setitem__("k", o))]
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        out = model(**batch, labels=labels, output_attentions=True)
    for hook in hooks:
        hook.remove()
    heads, head_dim = attn.num_heads, attn.head_dim
    q = caught["q"].view(*caught["q"].shape[:2], heads, head_dim)  # (batch, tgt, heads, head_dim)
    k = caught["k"].view(*caught["k"].shape[:2], heads, head_dim)
    from hf_recogs.models.modeling_structure_transformer import pointer_positions

    decoder_ids = torch.cat([torch.full((2, 1), model.config.decoder_start_token_id), labels[:, :-1]], 1)
    pointer = pointer_positions(decoder_ids, model.position_of_token)
    rel = decoder.pointer_labels(pointer, batch["relation_ids"], batch["attention_mask"])
    a = decoder.tree_keys.weight[0].view(-1, heads, head_dim)  # (labels, heads, head_dim)
    for b in range(2):
        real = batch["attention_mask"][b].bool()
        for h in range(heads):
            keys = k[b, :, h][None] + a[rel[b], h]  # (tgt, src, head_dim): each pair's key plus its label's
            scalars = decoder.pointer_bias.weight[0, h][rel[b]]
            logits = (q[b, :, h, None] * keys).sum(-1) * attn.scaling + scalars
            expected = logits[:, real].softmax(-1)
            assert torch.allclose(out.cross_attentions[0][b, h][:, real], expected, atol=1e-5)


# ---------------------------------------------------------------------------------------------------------
# pointer_values: each head's output also says how much attention went to each tree label (relation values)


def test_pointer_values_term_by_hand():
    """Decoder token t gets sum over heads h and source tokens s of w[h, t, s] · v[h, label(t, s)]."""
    from hf_recogs.models.modeling_structure_transformer import PointerValues

    torch.manual_seed(0)
    values = PointerValues(layers=2, heads=2, labels=3, d_model=4)
    with torch.no_grad():
        values.weight.normal_()
    weights = torch.rand(1, 2, 2, 3).softmax(-1)  # (batch, heads, tgt, src)
    labels = torch.tensor([[[0, 2, 2], [1, 1, 0]]])  # (batch, tgt, src): two sources share a label
    term = values(1, weights, labels)
    assert term.shape == (1, 2, 4)
    for t in range(2):
        expected = sum(weights[0, h, t, s] * values.weight[1, h, labels[0, t, s]] for h in range(2) for s in range(3))
        assert torch.allclose(term[0, t], expected, atol=1e-6)


def test_fresh_pointer_values_change_nothing_and_trained_ones_decode_as_they_train(pointer_tok, tmp_path):
    """Zero values give the logits of the same model without them; random values change the logits, decoding
    with a cache sees what teacher forcing sees (the attention weights of one step are those of its row), and
    the model reloads with them."""
    options = {"encoder_structure": "hard", "cross_attention_structure": "pointer", "pointer_offsets": 3,
               "pointer_sides": True, "pointer_keys": True}
    plain = tiny(pointer_tok, **options)
    valued = tiny(pointer_tok, **options, pointer_values=True)
    missing, unexpected = valued.load_state_dict(plain.state_dict(), strict=False)
    assert missing == ["model.decoder.tree_values.weight"] and not unexpected
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        # a term that moves the attention, so the weights differ from row to row; the same in both models
        plain.model.decoder.pointer_bias.weight.normal_(0, 2.0)
        valued.model.decoder.pointer_bias.weight.copy_(plain.model.decoder.pointer_bias.weight)
        fresh = valued(**batch, labels=labels).logits
        assert torch.allclose(fresh, plain(**batch, labels=labels).logits, atol=1e-6)
        valued.model.decoder.tree_values.weight.normal_(0, 2.0)
        teacher = valued(**batch, labels=labels).logits
        assert not torch.allclose(teacher, plain(**batch, labels=labels).logits, atol=1e-3)
    # decoding projects the source's keys once per layer (the attention's cache), not again for the values' weights
    projected = []
    for layer in valued.model.decoder.layers:
        layer.encoder_attn.k_proj.register_forward_hook(lambda *_: projected.append(1))
    valued.generate(**{k: v[:1] for k, v in batch.items()}, max_length=8, min_length=8)
    assert len(projected) == len(valued.model.decoder.layers)
    _decodes_as_it_trains_and_reloads(valued, batch, labels, teacher, tmp_path)


def test_pointer_values_add_each_labels_share_of_the_attention_to_the_output(pointer_tok):
    """What enters the cross-attention's residual sum is Bart's attention output plus, per head, the weight the
    attention itself gave (``output_attentions``, eager) to the source tokens of each tree label, times that
    label's vector: caught on the layer's own modules and summed here by hand."""
    model = tiny(pointer_tok, cross_attention_structure="pointer", pointer_sides=True, pointer_values=True,
                 attn_implementation="eager")
    decoder = model.model.decoder
    with torch.no_grad():
        decoder.tree_values.weight.normal_(0, 2.0)
        decoder.pointer_bias.weight.normal_(0, 1.0)
    batch, labels = _pointer_batch(pointer_tok)
    out, decoder_ids, added = _value_term_of_first_layer(model, batch, labels)
    from hf_recogs.models.modeling_structure_transformer import pointer_positions

    pointer = pointer_positions(decoder_ids, model.position_of_token)
    rel = decoder.pointer_labels(pointer, batch["relation_ids"], batch["attention_mask"], sides=True)
    _assert_each_labels_share(added, out.cross_attentions[0], decoder.tree_values.weight[0], rel)
    assert added.abs().max() > 0.1  # the values were reached


def _value_term_of_first_layer(model, batch, labels):
    """(the model's eager output with attentions, its decoder inputs, what the first decoder layer's
    cross-attention step adds to the residual sum besides Bart's attention output), caught on the layer's own
    modules."""
    layer = model.model.decoder.layers[0]
    caught = {}
    hooks = [layer.encoder_attn.out_proj.register_forward_hook(lambda m, i, o: caught.__setitem__("attn", o)),
             layer.self_attn_layer_norm.register_forward_hook(lambda m, i, o: caught.__setitem__("residual", o)),
             layer.encoder_attn_layer_norm.register_forward_hook(lambda m, i, o: caught.__setitem__("sum", i[0]))]
    with torch.no_grad():
        out = model(**batch, labels=labels, output_attentions=True)
    for hook in hooks:
        hook.remove()
    decoder_ids = torch.cat([torch.full((len(labels), 1), model.config.decoder_start_token_id), labels[:, :-1]], 1)
    return out, decoder_ids, caught["sum"] - caught["residual"] - caught["attn"]


def _assert_each_labels_share(added, weights, value, label):
    """``added`` (batch, tgt, d_model) is, for every row and decoder token, the sum over heads h and source tokens
    s of the attention ``weights`` (batch, heads, tgt, src) times ``value[h, label[b, t, s]]``, by hand."""
    for b in range(added.shape[0]):
        for t in range(added.shape[1]):
            expected = sum(weights[b, h, t, s] * value[h, label[b, t, s]]
                           for h in range(weights.shape[1]) for s in range(weights.shape[-1]))
            assert torch.allclose(added[b, t], expected, atol=1e-5)


# ---------------------------------------------------------------------------------------------------------
# encoder_word_classes: each encoder token also embeds its word class in the parser's lexicon


def test_word_classes_of_a_vocabulary_by_hand(tok):
    """Function words, verbs the lexicon knows, names, other lower-case words and the rest, read by hand from
    ``Emma gave the cake to Liam .`` etc. with a lexicon that knows ``gave`` and ``smiled``."""
    from hf_recogs.models import word_class_ids
    from hf_recogs.models.configuration_structure_transformer import WORD_CLASSES
    from hf_recogs.structure import CogsLexicon

    lexicon = CogsLexicon({"gave": "give", "smiled": "smile"}, {})
    classes = word_class_ids(tok, lexicon)
    assert len(classes) == len(tok)
    named = {t: WORD_CLASSES[classes[i]] for t, i in tok.get_vocab().items()}
    assert {t: named[t] for t in ("Emma", "Liam", "gave", "smiled", "the", "to", ".", "cake", "room", "A", "in")} == {
        "Emma": "name", "Liam": "name", "gave": "verb", "smiled": "verb", "the": "function", "to": "function",
        ".": "function", "cake": "noun", "room": "noun", "A": "function", "in": "function"}
    assert {named[t] for t in ("(", "3", ";", tok.eos_token, tok.pad_token)} == {"other"}


def test_word_classes_add_each_class_vector_to_the_encoder_embedding(tok, tmp_path):
    """A fresh class table changes nothing; a trained one gives every encoder token its token embedding plus its
    class's vector, and nothing to the decoder; the model reloads with its classes."""
    from transformers import AutoModelForSeq2SeqLM

    from hf_recogs.models import word_class_ids
    from hf_recogs.structure import CogsLexicon

    classes = word_class_ids(tok, CogsLexicon({"gave": "give", "smiled": "smile"}, {}))
    plain = tiny(tok, encoder_structure="hard")
    classed = tiny(tok, encoder_structure="hard", encoder_word_classes=True, word_class_ids=classes)
    missing, unexpected = classed.load_state_dict(plain.state_dict(), strict=False)
    assert sorted(missing) == ["model.encoder.word_classes.class_of_token", "model.encoder.word_classes.weight"]
    assert not unexpected
    assert classed.model.encoder.word_classes.class_of_token.tolist() == classes
    batch = encoded(tok)
    labels = tok(["cake ( 3 ) ; give ( 1 )"] * 2, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert torch.allclose(classed(**batch, labels=labels).logits, plain(**batch, labels=labels).logits,
                              atol=1e-6)
        classed.model.encoder.word_classes.weight.normal_(0, 1.0)
        out = classed(**batch, labels=labels).logits
        # by hand: the plain model fed the token embeddings plus each token's class vector
        table = classed.model.encoder.word_classes.weight
        embeds = plain.model.encoder.embed_tokens(batch["input_ids"]) + table[torch.tensor(classes)[batch["input_ids"]]]
        encoder_out = plain.model.encoder(inputs_embeds=embeds, attention_mask=batch["attention_mask"],
                                          relation_ids=batch["relation_ids"])
        expected = plain(attention_mask=batch["attention_mask"], encoder_outputs=encoder_out, labels=labels).logits
        assert torch.allclose(out, expected, atol=1e-5)
        assert not torch.allclose(out, plain(**batch, labels=labels).logits, atol=1e-3)
    classed.save_pretrained(tmp_path)
    loaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path).eval()
    assert loaded.model.encoder.word_classes.class_of_token.tolist() == classes
    with torch.no_grad():
        assert torch.equal(loaded(**batch, labels=labels).logits, out)
    from huggingface_hub.errors import StrictDataclassClassValidationError

    with pytest.raises(StrictDataclassClassValidationError, match="word_class_ids must give every one of the"):
        tiny(tok, encoder_word_classes=True, word_class_ids=classes[:-1])


# ---------------------------------------------------------------------------------------------------------
# encoder_functions: each encoder word also embeds its syntactic function in the input's parse


def test_function_ids_of_sentences_by_hand(tok, mirror):
    from hf_recogs.models.configuration_structure_transformer import WORD_FUNCTIONS
    from hf_recogs.train.arguments import ExperimentArguments
    from hf_recogs.train.data import SourceLayout, source_parser

    F = {name: i for i, name in enumerate(WORD_FUNCTIONS)}
    parse, markers, _ = source_parser(ExperimentArguments(dataset="recogs_pos", arch="structure_transformer"))
    layout = SourceLayout(tok, parse, markers, max_length=32, functions=True)
    batch = layout.batch([SENTENCE, SHORT])
    # Emma gave the cake to Liam . </s>: the subject, the verb, the object's noun, the phrase's noun; padding other
    assert batch["function_ids"].tolist() == [
        [F["subject"], F["verb"], 0, F["object"], 0, F["phrase_object"], 0, 0],
        [F["subject"], F["verb"], 0, 0, 0, 0, 0, 0]]
    assert "function_ids" not in SourceLayout(tok, parse, markers, max_length=32).batch([SHORT])
    assert layout.batch(["gave gave gave"])["function_ids"].tolist() == [[0, 0, 0, 0]]  # no parse: other
    # cut where the ids are cut (the words first, </s> kept)
    cut = SourceLayout(tok, parse, markers, max_length=4, functions=True).batch([SENTENCE])
    assert cut["input_ids"].shape[1] == 4 and cut["function_ids"].tolist() == [[F["subject"], F["verb"], 0, 0]]


def test_functions_add_each_function_vector_to_the_encoder_embedding(tok, tmp_path):
    """A fresh function table changes nothing; a trained one gives every encoder token its token embedding plus
    its function's vector; generate hands function_ids to the encoder; the model reloads; without function_ids it
    refuses to run."""
    from transformers import AutoModelForSeq2SeqLM

    plain = tiny(tok, encoder_structure="hard")
    with_functions = tiny(tok, encoder_structure="hard", encoder_functions=True)
    missing, unexpected = with_functions.load_state_dict(plain.state_dict(), strict=False)
    assert missing == ["model.encoder.functions.weight"] and not unexpected
    batch = encoded(tok)
    functions = torch.zeros_like(batch["input_ids"])
    functions[0, :6] = torch.tensor([2, 1, 0, 4, 0, 6])
    functions[1, :2] = torch.tensor([2, 1])
    labels = tok(["cake ( 3 ) ; give ( 1 )"] * 2, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert torch.allclose(with_functions(**batch, function_ids=functions, labels=labels).logits,
                              plain(**batch, labels=labels).logits, atol=1e-6)
        with_functions.model.encoder.functions.weight.normal_(0, 1.0)
        out = with_functions(**batch, function_ids=functions, labels=labels).logits
        # by hand: the plain model fed the token embeddings plus each token's function vector
        embeds = (plain.model.encoder.embed_tokens(batch["input_ids"])
                  + with_functions.model.encoder.functions.weight[functions])
        encoder_out = plain.model.encoder(inputs_embeds=embeds, attention_mask=batch["attention_mask"],
                                          relation_ids=batch["relation_ids"])
        expected = plain(attention_mask=batch["attention_mask"], encoder_outputs=encoder_out, labels=labels).logits
        assert torch.allclose(out, expected, atol=1e-5)
        assert not torch.allclose(out, plain(**batch, labels=labels).logits, atol=1e-3)
        # generate: the first step's scores are the forward's, and other functions give other scores
        first = with_functions.generate(**batch, function_ids=functions, max_length=3, do_sample=False,
                                        output_scores=True, return_dict_in_generate=True).scores[0]
        start = torch.full((2, 1), with_functions.config.decoder_start_token_id)
        step = with_functions(**batch, function_ids=functions, decoder_input_ids=start).logits[:, -1]
        assert torch.allclose(first, step, atol=1e-5)
        other = with_functions.generate(**batch, function_ids=torch.zeros_like(functions), max_length=3,
                                        output_scores=True, return_dict_in_generate=True).scores[0]
        assert not torch.allclose(first, other, atol=1e-3)
        beams = with_functions.generate(**batch, function_ids=functions, max_length=6, num_beams=3)
        assert beams.shape[0] == 2
    with pytest.raises(ValueError, match="encoder_functions needs function_ids"):
        with_functions(**batch, labels=labels)
    with_functions.save_pretrained(tmp_path)
    loaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path).eval()
    assert loaded.config.encoder_functions
    with torch.no_grad():
        assert torch.equal(loaded(**batch, function_ids=functions, labels=labels).logits, out)


def test_position_shifts_are_uniform_up_to_the_limit_and_stay_in_the_table():
    from hf_recogs.models.modeling_structure_transformer import random_position_shifts

    torch.manual_seed(0)
    shifts = random_position_shifts(4000, 10, max_shift=5, table_size=32)
    assert shifts.shape == (4000, 1) and set(shifts.flatten().tolist()) == {0, 1, 2, 3, 4, 5}
    # a target of 30 positions in a table of 32 can start at 0, 1 or 2 only; one that fills the table at 0
    assert set(random_position_shifts(4000, 30, max_shift=5, table_size=32).flatten().tolist()) == {0, 1, 2}
    assert set(random_position_shifts(100, 32, max_shift=5, table_size=32).flatten().tolist()) == {0}


def test_a_shifted_decoder_trains_on_shifted_positions_and_decodes_from_zero(pointer_tok, monkeypatch):
    """In training, the decoder of a ``decoder_position_shift`` model reads the position rows from the drawn
    offset on: with the offset fixed at 3 it gives the logits of the same model without the shift whose table is
    moved 3 rows up. In evaluation it is that model without the shift, unmoved."""
    from hf_recogs.models import modeling_structure_transformer as modeling

    quiet = {"dropout": 0.0, "attention_dropout": 0.0, "activation_dropout": 0.0}
    shifted = tiny(pointer_tok, decoder_position_shift=5, **quiet)
    plain = tiny(pointer_tok, **quiet)
    assert all(torch.equal(v, shifted.state_dict()[k]) for k, v in plain.state_dict().items())
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        assert torch.equal(shifted(**batch, labels=labels).logits, plain(**batch, labels=labels).logits)
        draws = []

        def fixed(batch_size, seq_length, max_shift, table_size, device=None):
            draws.append((batch_size, seq_length, max_shift, table_size))
            return torch.full((batch_size, 1), 3)

        monkeypatch.setattr(modeling, "random_position_shifts", fixed)
        trained = shifted.train()(**batch, labels=labels).logits
        assert draws == [(2, labels.shape[1], 5, 32)]
        table = plain.model.decoder.embed_positions.weight
        assert not torch.allclose(trained, plain.train()(**batch, labels=labels).logits)
        table[: -3] = table[3:].clone()
        assert torch.allclose(trained, plain(**batch, labels=labels).logits, atol=1e-6)
        shifted.eval()(**batch, labels=labels)
        assert len(draws) == 1  # evaluation draws nothing


def test_relative_distances_by_hand():
    from hf_recogs.models.modeling_structure_transformer import relative_distances

    assert relative_distances(3, 3, 2).tolist() == [[0, -1, -1], [1, 0, -1], [2, 1, 0]]
    assert relative_distances(3, 3, 1).tolist() == [[0, -1, -1], [1, 0, -1], [1, 1, 0]]
    assert relative_distances(1, 4, 2).tolist() == [[2, 2, 1, 0]]  # a decoding step: the last query only


def test_a_relative_decoder_reads_distances_and_no_position_table(pointer_tok):
    """``decoder_relative_positions=2``: scrambling the decoder's (unused) table of learned positions changes
    nothing, where it changes the plain model's outputs; a large negative term on distance 1 takes every head's
    self-attention off the token just before, and off nothing else; a padded key gets none."""
    relative = tiny(pointer_tok, encoder_structure="none", decoder_relative_positions=2, attn_implementation="eager")
    plain = tiny(pointer_tok, encoder_structure="none", attn_implementation="eager")
    batch = encoded(pointer_tok)
    del batch["relation_ids"]
    labels = pointer_tok([TARGET, "smile ( 1 )"], padding=True, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        before = [m(**batch, labels=labels).logits for m in (relative, plain)]
        for m in (relative, plain):
            m.model.decoder.embed_positions.weight.normal_(0, 1.0)
        after = [m(**batch, labels=labels).logits for m in (relative, plain)]
        assert torch.equal(before[0], after[0]) and not torch.allclose(before[1], after[1], atol=1e-3)
        relative.model.decoder.distance_bias.weight[:, :, 1] = -1e4
        decoder_mask = torch.ones_like(labels)
        decoder_mask[0, 2] = 0
        attentions = relative(**batch, labels=labels, decoder_attention_mask=decoder_mask,
                              output_attentions=True).decoder_attentions
    for layer in attentions:  # (batch, heads, tgt, tgt)
        steps = layer.shape[-1]
        previous = layer[0, :, range(1, steps), range(steps - 1)]
        assert (previous < 1e-3).all()
        assert (layer[0][..., 2] == 0).all()  # the padded key
        others = [(t, k) for t in range(steps) for k in range(t + 1) if k not in (t - 1, 2)]
        assert all((layer[0, :, t, k] > 1e-4).all() for t, k in others)
        assert (layer[0].triu(1) == 0).all()  # causal


def test_a_decoder_window_hides_the_tokens_before_it(pointer_tok):
    """``decoder_attention_window=2``: every decoder self-attention head gives some weight to the token itself and
    the one before it and none to any other; with two decoder layers a token's logits then change when the
    decoder input two tokens back changes and stay as they were when one three or more back does (past
    2 × (2 - 1)), where the same model without the window reads that far."""
    windowed, reads_all = (tiny(pointer_tok, encoder_structure="none", decoder_layers=2, decoder_relative_positions=4,
                                decoder_attention_window=window, attn_implementation="eager") for window in (2, 0))
    batch = encoded(pointer_tok)
    del batch["relation_ids"]
    batch = {k: v[:1] for k, v in batch.items()}
    ids = pointer_tok([TARGET], return_tensors="pt")["input_ids"]
    changed = ids.clone()
    changed[0, 1] = pointer_tok.convert_tokens_to_ids("AND")
    assert ids[0, 1] != changed[0, 1] and ids.shape[1] > 6
    with torch.no_grad():
        for model in (windowed, reads_all):
            model.model.decoder.distance_bias.weight.normal_(0, 1.0)
        attentions = windowed(**batch, decoder_input_ids=ids, output_attentions=True).decoder_attentions
        # (logits before the change, after it) of each model
        windowed_logits, full_logits = ([m(**batch, decoder_input_ids=x).logits[0] for x in (ids, changed)]
                                        for m in (windowed, reads_all))
    for layer in attentions:  # (batch, heads, tgt, tgt)
        steps = layer.shape[-1]
        for t in range(steps):
            for k in range(steps):
                assert ((layer[0, :, t, k] > 1e-4) if t - k in (0, 1) else (layer[0, :, t, k] == 0)).all()
    assert not torch.allclose(windowed_logits[0][3], windowed_logits[1][3], atol=1e-4)  # two back: within reach
    assert torch.equal(windowed_logits[0][4:], windowed_logits[1][4:])  # three or more back: out of reach
    assert not torch.allclose(full_logits[0][-1], full_logits[1][-1], atol=1e-4)  # no window: the last reads it


def test_a_noun_list_scope_keeps_the_offset_term_until_the_first_and(pointer_tok):
    """``pointer_offsets_scope="noun_list"``: the steps before the first ``AND`` read the offsets as without the
    scope; from the step whose input is that ``AND`` on (it writes the first predicate after it), the offset
    term is the same for every source word, so the attention is that of a model whose offset term is zero,
    however large the term's weights are."""
    from hf_recogs.models.modeling_structure_transformer import before_first

    tokens = ["<s>", *"cake ( 3 ) ; give ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 )".split()]
    ids = torch.tensor([pointer_tok.convert_tokens_to_ids(tokens)])
    and_id = pointer_tok.convert_tokens_to_ids("AND")
    assert before_first(ids, and_id)[0].tolist() == [True] * 10 + [False] * 14  # "AND" is input 10
    scoped = tiny(pointer_tok, encoder_structure="none", pointer_offsets=2, pointer_offsets_scope="noun_list",
                  attn_implementation="eager")
    assert scoped.config.pointer_scope_token_id == and_id
    everywhere = tiny(pointer_tok, encoder_structure="none", pointer_offsets=2, attn_implementation="eager")
    zero = tiny(pointer_tok, encoder_structure="none", pointer_offsets=2, attn_implementation="eager")
    assert scoped.state_dict().keys() == everywhere.state_dict().keys()  # no parameters of its own
    labels = pointer_tok([" ".join(tokens[1:]), "smile ( 1 )"], padding=True, return_tensors="pt")["input_ids"]
    batch = encoded(pointer_tok)
    del batch["relation_ids"]
    with torch.no_grad():
        weights = torch.randn_like(scoped.model.decoder.offset_bias.weight) * 3
        scoped.model.decoder.offset_bias.weight.copy_(weights)
        everywhere.model.decoder.offset_bias.weight.copy_(weights)
        got = scoped(**batch, labels=labels, output_attentions=True).cross_attentions
        full = everywhere(**batch, labels=labels, output_attentions=True).cross_attentions
        off = zero(**batch, labels=labels, output_attentions=True).cross_attentions
    for layer_got, layer_full, layer_off in zip(got, full, off, strict=True):
        assert torch.allclose(layer_got[0, :, :10], layer_full[0, :, :10], atol=1e-6)
        assert torch.allclose(layer_got[0, :, 10:], layer_off[0, :, 10:], atol=1e-6)
        assert not torch.allclose(layer_got[0, :, 10:], layer_full[0, :, 10:], atol=1e-3)
    with pytest.raises(ValueError, match="this vocabulary has no 'AND'"):
        tiny(build_tokenizer([SENTENCE], ["cake ( 3 )"]), pointer_offsets=2, pointer_offsets_scope="noun_list")


# ---------------------------------------------------------------------------------------------------------
# pointer_argument_mask: a conjunct's second argument is read from the children and siblings of its first


def _flagged(tok, text, slots_of, model, tokens) -> list[tuple[int, str]]:
    """(index, token) of the decoder input ``<s> text`` that ``slots_of`` flags."""
    words = ["<s>", *text.split()]
    ids = torch.tensor([tok.convert_tokens_to_ids(words)])
    assert tok.unk_token_id not in ids
    flags = slots_of(ids, model.position_of_token, tokens)[0].tolist()
    return [(i, t) for i, (t, flag) in enumerate(zip(words, flags, strict=True)) if flag]


def test_argument_slots_by_hand(pointer_tok):
    """Inside a second argument: from its ``,`` until a position token or ``)``. ReCOGS_pos: the ``,`` alone
    (the next token is the argument); COGS: ``,``, ``x`` and ``_`` before the number, or ``,`` and a name."""
    from hf_recogs.models.modeling_structure_transformer import argument_slots

    model = tiny(pointer_tok, cross_attention_structure="pointer", pointer_argument_mask=True)
    assert model.config.pointer_argument_tokens == pointer_tok.convert_tokens_to_ids([",", ")"])

    def slots(text):
        return [t for _, t in _flagged(pointer_tok, text, argument_slots, model, model.config.pointer_argument_tokens)]

    recogs = slots(TARGET)  # give ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 )
    assert recogs == [",", ","]
    assert slots("agent ( x _ 2 , x _ 1 ) AND theme ( x _ 2 , Emma ) AND cake ( x _ 3 )") == [
        ",", "x", "_", ",", "Emma"]
    with pytest.raises(ValueError, match="needs outputs of binary conjuncts .* has no ','"):
        tiny(build_tokenizer([SENTENCE], ["cake ( 3 )"]), cross_attention_structure="pointer",
             pointer_argument_mask=True)


def test_the_argument_mask_hides_all_but_the_children_and_siblings_of_the_first_argument(pointer_tok):
    """``Emma gave the cake to Liam .``: ``gave`` (1) has the children Emma, cake, Liam (0, 3, 5); Emma has the
    siblings cake and Liam; ``the`` (2) has neither. Writing the second argument after ``( 1 ,`` every head
    attends to 0, 3, 5 only; after ``( 0 ,`` to 3, 5; after ``( 2 ,`` as without the mask; every other step
    exactly as without it."""
    with_mask = tiny(pointer_tok, cross_attention_structure="pointer", pointer_argument_mask=True,
                     attn_implementation="eager")
    without = tiny(pointer_tok, cross_attention_structure="pointer", attn_implementation="eager")
    assert with_mask.state_dict().keys() == without.state_dict().keys()  # no parameters of its own
    batch = encoded(pointer_tok)
    target = "give ( 1 ) AND agent ( 1 , 0 ) AND agent ( 0 , 3 ) AND agent ( 2 , 3 )"
    labels = pointer_tok([target, "smile ( 1 )"], padding=True, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        masked = with_mask(**batch, labels=labels, output_attentions=True).cross_attentions
        free = without(**batch, labels=labels, output_attentions=True).cross_attentions
    inputs = ["<s>", *target.split()]
    commas = [t for t, token in enumerate(inputs) if token == ","]
    assert len(commas) == 3
    for layer_masked, layer_free in zip(masked, free, strict=True):
        for step, allowed in zip(commas, ([0, 3, 5], [3, 5], None), strict=True):
            row = layer_masked[0, :, step]
            if allowed is None:
                assert torch.allclose(row, layer_free[0, :, step])
                continue
            hidden = [j for j in range(8) if j not in allowed]
            assert (row[:, hidden] == 0).all() and (row[:, allowed] > 1e-3).all()
        others = [t for t in range(len(inputs)) if t not in commas[:2]]
        assert torch.allclose(layer_masked[0][:, others], layer_free[0][:, others], atol=1e-6)
        assert torch.allclose(layer_masked[1], layer_free[1], atol=1e-6)  # no second argument


# ---------------------------------------------------------------------------------------------------------
# pointer_arity_mask: the step that writes "," or ")" after a first argument sees only the word it names


def test_arity_slots_by_hand(pointer_tok):
    """The first position named after each ``(`` with no ``,`` between: ReCOGS_pos ``( 1``; COGS ``( x _ 2``
    (the number, not ``x`` or ``_``); never a second argument, a name, or a number before any ``(``."""
    from hf_recogs.models.modeling_structure_transformer import arity_slots

    model = tiny(pointer_tok, cross_attention_structure="pointer", pointer_arity_mask=True)
    assert model.config.pointer_arity_tokens == pointer_tok.convert_tokens_to_ids(["(", ","])

    def slots(text):
        return _flagged(pointer_tok, text, arity_slots, model, model.config.pointer_arity_tokens)

    # <s> give ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 )
    assert slots(TARGET) == [(3, "1"), (8, "1"), (15, "1")]
    assert slots("3 agent ( x _ 2 , x _ 1 ) AND theme ( x _ 2 , Emma ) AND cake ( x _ 3 )") == [
        (6, "2"), (17, "2"), (26, "3")]
    with pytest.raises(ValueError, match=r"pointer_arity_mask needs outputs of conjuncts .* has no '\('"):
        tiny(build_tokenizer([SENTENCE], ["cake , 3"]), cross_attention_structure="pointer", pointer_arity_mask=True)
    # a config written by hand, without the token ids, is refused when the model is built, not at its first step
    from hf_recogs.models.modeling_structure_transformer import StructureTransformerForConditionalGeneration

    config = model.config.to_dict() | {"pointer_arity_tokens": None}
    with pytest.raises(ValueError, match="needs pointer_arity_tokens .*hf_recogs.models.build_model"):
        StructureTransformerForConditionalGeneration(type(model.config)(**config))


def test_the_arity_mask_leaves_only_the_named_word_at_the_arity_steps(pointer_tok):
    """Writing ``,`` or ``)`` after ``give ( 1``, ``agent ( 1`` and ``agent ( 0`` every head of every layer attends
    to word 1, 1 and 0 only (all its attention there); every other step, and a row with no such step, exactly as
    without the mask; the mask has no parameters, and it needs no tree (offsets alone)."""
    for kind in ({"cross_attention_structure": "pointer"}, {"pointer_offsets": 2}):
        with_mask = tiny(pointer_tok, **kind, pointer_arity_mask=True, attn_implementation="eager")
        without = tiny(pointer_tok, **kind, attn_implementation="eager")
        assert with_mask.state_dict().keys() == without.state_dict().keys()
        batch = encoded(pointer_tok)
        target = "give ( 1 ) AND agent ( 1 , 0 ) AND agent ( 0 , 3 )"
        labels = pointer_tok([target, "smile"], padding=True, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            masked = with_mask(**batch, labels=labels, output_attentions=True).cross_attentions
            free = without(**batch, labels=labels, output_attentions=True).cross_attentions
        inputs = ["<s>", *target.split()]
        steps = {3: 1, 8: 1, 15: 0}  # decoder input token -> the word it names
        assert all(inputs[t] == str(word) for t, word in steps.items())
        for layer_masked, layer_free in zip(masked, free, strict=True):
            for step, word in steps.items():
                row = layer_masked[0, :, step]
                assert torch.allclose(row[:, word], torch.ones(row.shape[0]))
                assert (row.sum(-1) - row[:, word] == 0).all()
            others = [t for t in range(len(inputs)) if t not in steps]
            assert torch.allclose(layer_masked[0][:, others], layer_free[0][:, others], atol=1e-6)
            assert torch.allclose(layer_masked[1], layer_free[1], atol=1e-6)


# ---------------------------------------------------------------------------------------------------------
# pointer_coverage: how many times the output has named each source word so far


def test_coverage_counts_by_hand(pointer_tok):
    from hf_recogs.models.modeling_structure_transformer import coverage_counts

    model = tiny(pointer_tok, cross_attention_structure="pointer", pointer_coverage=True)
    tokens = ["<s>", *"give ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 )".split()]
    ids = torch.tensor([pointer_tok.convert_tokens_to_ids(tokens)])
    counts = coverage_counts(ids, model.position_of_token, 4)
    # positions 0..3 after each token: "1" at inputs 3, 8 and 15 (the third is capped at 2), "0" at 10, "3" at 17
    assert counts[0, 2].tolist() == [0, 0, 0, 0] and counts[0, 3].tolist() == [0, 1, 0, 0]
    assert counts[0, 8].tolist() == [0, 2, 0, 0] and counts[0, 10].tolist() == [1, 2, 0, 0]
    assert counts[0, 15].tolist() == [1, 2, 0, 0] and counts[0, -1].tolist() == [1, 2, 0, 1]
    assert torch.equal(coverage_counts(ids, model.position_of_token, 4, last=3), counts[:, -3:])
    assert torch.equal(coverage_counts(ids, model.position_of_token, 4, most=5)[0, -1], torch.tensor([1, 3, 0, 1]))


def test_a_fresh_coverage_term_changes_nothing_and_a_trained_one_reaches_words_by_count(pointer_tok):
    """Zero at the start: the model without it, exactly. A large negative term on ``never named`` takes every
    head's cross-attention off the words not named yet, once some word is named: after ``give ( 1`` onto
    ``gave`` alone, after ``agent ( 1 , 0`` onto ``Emma`` and ``gave``; before any word is named every word has
    the same label and the attention is the model's without the term."""
    plain = tiny(pointer_tok, cross_attention_structure="pointer", pointer_keys=True, attn_implementation="eager")
    covered = tiny(pointer_tok, cross_attention_structure="pointer", pointer_keys=True, pointer_coverage=True,
                   attn_implementation="eager")
    extra = set(covered.state_dict()) - set(plain.state_dict())
    assert extra == {"model.decoder.coverage_bias.weight", "model.decoder.coverage_keys.weight"}
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        free = plain(**batch, labels=labels, output_attentions=True)
        fresh = covered(**batch, labels=labels, output_attentions=True)
        assert torch.allclose(fresh.logits, free.logits, atol=1e-6)
        covered.model.decoder.coverage_bias.weight[:, :, 0] = -1e4
        cross = covered(**batch, labels=labels, output_attentions=True).cross_attentions[0][0]
    # decoder inputs: <s> give ( 1 ) AND agent ( 1 , 0 ...: "1" is input 3, "0" input 10
    # (-1e4 on every logit of a row leaves float32 about 1e-3 of resolution)
    assert torch.allclose(cross[:, :3], free.cross_attentions[0][0][:, :3], atol=1e-3)
    assert (cross[:, 3:10, 1] > 0.999).all()
    assert (cross[:, 10, :2].sum(-1) > 0.999).all() and (cross[:, 10, :2] > 1e-3).all()


# ---------------------------------------------------------------------------------------------------------
# pointer_head_counts: how many conjuncts have had each source word as their first argument, on the values


def test_head_counts_by_hand(pointer_tok):
    """Counted from the first arguments only: in ``theme ( 1 , 3 ) AND give ( 3 ) AND agent ( 3 , 0 )`` (the shape
    of ``ccomp ( 1 , 3 ) AND like ( 3 ) …``) word 3 is named as a second argument first (no count), then heads
    ``give`` (1) and ``agent`` (2); plain coverage counts it 2 already at ``give``. COGS ``( x _ 2`` counts the
    number."""
    from hf_recogs.models.modeling_structure_transformer import coverage_counts, head_counts

    model = tiny(pointer_tok, cross_attention_structure="pointer", pointer_head_counts=True)
    assert model.config.pointer_arity_tokens == pointer_tok.convert_tokens_to_ids(["(", ","])
    words = ["<s>", *"theme ( 1 , 3 ) AND give ( 3 ) AND agent ( 3 , 0 )".split()]
    ids = torch.tensor([pointer_tok.convert_tokens_to_ids(words)])
    assert pointer_tok.unk_token_id not in ids
    counts = head_counts(ids, model.position_of_token, model.config.pointer_arity_tokens, 4)
    # inputs: 3 "1" (heads theme), 5 "3" (second argument), 10 "3" (heads give), 15 "3" (heads agent), 17 "0"
    assert counts[0, 2].tolist() == [0, 0, 0, 0] and counts[0, 3].tolist() == [0, 1, 0, 0]
    assert counts[0, 5].tolist() == [0, 1, 0, 0] and counts[0, 10].tolist() == [0, 1, 0, 1]
    assert counts[0, 15].tolist() == [0, 1, 0, 2] and counts[0, -1].tolist() == [0, 1, 0, 2]
    assert coverage_counts(ids, model.position_of_token, 4)[0, 10].tolist() == [0, 1, 0, 2]
    last = head_counts(ids, model.position_of_token, model.config.pointer_arity_tokens, 4, last=3)
    assert torch.equal(last, counts[:, -3:])
    cogs = ["<s>", *"agent ( x _ 2 , x _ 1 ) AND theme ( x _ 2 , Emma )".split()]
    ids = torch.tensor([pointer_tok.convert_tokens_to_ids(cogs)])
    counts = head_counts(ids, model.position_of_token, model.config.pointer_arity_tokens, 3)
    assert counts[0, 5].tolist() == [0, 0, 1] and counts[0, -1].tolist() == [0, 0, 2]
    # a config written by hand, without the token ids, is refused when the model is built
    from hf_recogs.models.modeling_structure_transformer import StructureTransformerForConditionalGeneration

    config = model.config.to_dict() | {"pointer_arity_tokens": None}
    with pytest.raises(ValueError, match="pointer_head_counts needs pointer_arity_tokens .*build_model"):
        StructureTransformerForConditionalGeneration(type(model.config)(**config))


def test_head_counts_add_each_counts_share_of_the_attention_to_the_output(pointer_tok, tmp_path):
    """Zero at the start: the model without them, exactly. Trained: what enters the cross-attention's residual sum
    is Bart's attention output plus, per head, the attention weight on the source words of each count times that
    count's vector; with the arity mask, at ``agent ( 1`` all of it is count 2's vector (word 1 heads ``give``
    and ``agent``), at ``give ( 1`` count 1's. Decoding with a cache sees what teacher forcing sees."""
    from hf_recogs.models.modeling_structure_transformer import head_counts

    options = {"cross_attention_structure": "pointer", "pointer_arity_mask": True, "attn_implementation": "eager"}
    plain = tiny(pointer_tok, **options)
    counted = tiny(pointer_tok, **options, pointer_head_counts=True)
    missing, unexpected = counted.load_state_dict(plain.state_dict(), strict=False)
    assert missing == ["model.decoder.head_values.weight"] and not unexpected
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        assert torch.allclose(counted(**batch, labels=labels).logits, plain(**batch, labels=labels).logits,
                              atol=1e-6)
        counted.model.decoder.head_values.weight.normal_(0, 2.0)
    out, decoder_ids, added = _value_term_of_first_layer(counted, batch, labels)
    counts = head_counts(decoder_ids, counted.position_of_token, counted.config.pointer_arity_tokens,
                         batch["input_ids"].shape[1])
    value = counted.model.decoder.head_values.weight[0]  # (heads, 3, d_model)
    _assert_each_labels_share(added, out.cross_attentions[0], value, counts)
    # <s> give ( 1 ) AND agent ( 1 , 0 ...: "1" at inputs 3 (heads give) and 8 (heads agent), arity steps
    assert torch.allclose(added[0, 3], value[:, 1].sum(0), atol=1e-5)
    assert torch.allclose(added[0, 8], value[:, 2].sum(0), atol=1e-5)
    # the same weights in the default attention (which a reloaded model gets) decode as they train
    default = tiny(pointer_tok, cross_attention_structure="pointer", pointer_arity_mask=True, pointer_head_counts=True)
    default.load_state_dict(counted.state_dict())
    with torch.no_grad():
        teacher = default(**batch, labels=labels).logits
        assert torch.allclose(teacher, out.logits, atol=1e-5)
    _decodes_as_it_trains_and_reloads(default, batch, labels, teacher, tmp_path)


# ---------------------------------------------------------------------------------------------------------
# output_copy: a pointer-generator output layer (See et al. 2017)


def test_output_copy_by_hand():
    """The probability of token w is (1 - g) * softmax(vocabulary logits)[w] + g * (the attention on the source
    tokens whose id is w), the attention a softmax of query(h) . key(encoder state) / sqrt(d) over the unpadded
    source, g = sigmoid(gate(h)); the output is the logarithm."""
    from hf_recogs.models.modeling_structure_transformer import OutputCopy

    torch.manual_seed(0)
    copy = OutputCopy(d_model=4)
    hidden, encoder_hidden = torch.randn(1, 2, 4), torch.randn(1, 4, 4)
    vocabulary_logits = torch.randn(1, 2, 6)
    source_ids = torch.tensor([[3, 5, 3, 0]])  # token 3 twice; the last position is padding
    with torch.no_grad():
        out = copy(hidden, vocabulary_logits, encoder_hidden, source_ids, torch.tensor([[1, 1, 1, 0]]))
        for t in range(2):
            query = copy.query.weight @ hidden[0, t]
            scores = torch.stack([query @ (copy.key.weight @ encoder_hidden[0, s]) / 2 for s in range(3)])
            attention = scores.softmax(0)
            gate = torch.sigmoid(copy.gate.weight[0] @ hidden[0, t] + copy.gate.bias[0])
            expected = (1 - gate) * vocabulary_logits[0, t].softmax(0)
            expected[3] += gate * (attention[0] + attention[2])
            expected[5] += gate * attention[1]
            assert torch.allclose(out[0, t].exp(), expected, atol=1e-6)


# Five training pairs whose alignments follow by hand from counting rows (Dice = 2 c(x, w) / (c(x) + c(w))):
# blessed {1} / bless {1}: 1; a {1, 2} / cat {1, 2}: 1 (theme {1, 2, 3}: 0.8); liked {2, 3} / like {2, 3}: 1
# (Liam {2, 3, 4}: 0.8); Liam {2, 3, 4} / Liam: 1 (agent, every row: 0.75); smiled {4, 5} / smile {4, 5}: 1;
# um {5} / smile: 2/3 (Emma {1, 3, 5}: 0.5); Emma and cat: themselves, 1. Brackets and positions align with nothing.
LEXICON_SOURCES = ["Emma blessed a cat .", "Liam liked a cat .", "Emma liked Liam .", "Liam smiled .",
                   "Emma smiled um ."]
LEXICON_TARGETS = ["Emma ( 0 ) ; cat ( 3 ) ; bless ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 )",
                   "Liam ( 0 ) ; cat ( 3 ) ; like ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 3 )",
                   "Emma ( 0 ) ; Liam ( 2 ) ; like ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 2 )",
                   "Liam ( 0 ) ; smile ( 1 ) AND agent ( 1 , 0 )", "Emma ( 0 ) ; smile ( 1 ) AND agent ( 1 , 0 )"]


def test_aligned_words_by_hand():
    from hf_recogs.models import aligned_words

    expected = {"Emma": "Emma", "blessed": "bless", "a": "cat", "cat": "cat", "Liam": "Liam", "liked": "like",
                "smiled": "smile", "um": "smile"}
    assert aligned_words(LEXICON_SOURCES, LEXICON_TARGETS) == expected
    del expected["um"]  # 2/3 is below 0.7
    assert aligned_words(LEXICON_SOURCES, LEXICON_TARGETS, threshold=0.7) == expected


def test_a_lexicon_copy_writes_the_aligned_token(pointer_tok, tmp_path):
    """With ``output_copy_lexicon`` the share a source token gets goes to the token aligned with it: with the
    gate open and the same weights, each token gets the plain copy's shares of the tokens aligned with it, and
    ``gave``, aligned with ``give``, nothing.
    The lexicon is saved with the weights; the model needs the training pairs to build it."""
    from huggingface_hub.errors import StrictDataclassClassValidationError

    from hf_recogs.models import copy_lexicon_ids

    vocab = pointer_tok.get_vocab()
    # gave / give: Dice 1, and 2/3 for the words of both rows (AND, agent, theme); "." has no letter
    lexicon = copy_lexicon_ids(pointer_tok, [SENTENCE, SHORT],
                               [TARGET, "smile ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 0 )"])
    assert lexicon[vocab["gave"]] == vocab["give"] and lexicon[vocab["smiled"]] == vocab["smile"]
    assert lexicon[vocab["."]] == vocab["."] and lexicon[vocab["("]] == vocab["("]
    options = {"cross_attention_structure": "pointer", "pointer_offsets": 3, "output_copy": True}
    plain = tiny(pointer_tok, **options)
    with pytest.raises(ValueError, match="pass build_model\\(..., training_pairs="):
        tiny(pointer_tok, **options, output_copy_lexicon=True)
    with pytest.raises(StrictDataclassClassValidationError, match="output_copy_lexicon sets what a copy writes"):
        tiny(pointer_tok, output_copy_lexicon=True, copy_lexicon_ids=lexicon)
    aligned = tiny(pointer_tok, **options, output_copy_lexicon=True, copy_lexicon_ids=lexicon)
    assert set(aligned.state_dict()) - set(plain.state_dict()) == {"copy.written_token"}
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        for model in (plain, aligned):
            model.copy.gate.weight.zero_()
            model.copy.gate.bias.fill_(50.0)
        copied = plain(**batch, labels=labels).logits.exp()
        written = aligned(**batch, labels=labels).logits.exp()
        # token w gets the plain copy's shares of every token aligned with w: written = copied @ (x -> lexicon[x])
        moves = torch.zeros(len(lexicon), len(lexicon))
        moves[torch.arange(len(lexicon)), torch.tensor(lexicon)] = 1.0
        assert torch.allclose(written, copied @ moves, atol=1e-6)
        assert (written[0, :, vocab["gave"]] < 1e-12).all() and (copied[0, :, vocab["gave"]] > 1e-3).all()
        aligned.copy.gate.weight.normal_(0, 1.0)
        aligned.copy.gate.bias.zero_()
        teacher = aligned(**batch, labels=labels).logits
    _decodes_as_it_trains_and_reloads(aligned, batch, labels, teacher, tmp_path, reload_atol=1e-5)


def test_one_argument_words_by_hand():
    """The words a logical form writes as a one-argument predicate: nouns, names and lemmas (ReCOGS_pos and
    COGS forms), never a role, a preposition of ``nmod`` or a COGS verb, which take two arguments."""
    from hf_recogs.models import one_argument_words

    assert one_argument_words(LEXICON_TARGETS) == {"Emma", "Liam", "cat", "bless", "like", "smile"}
    recogs = "* cake ( 3 ) ; nmod . in ( 3 , 6 ) AND eat ( 1 ) AND agent ( 1 , 0 )"
    cogs = "* cake ( x _ 3 ) ; eat . agent ( x _ 1 , Emma ) AND eat . theme ( x _ 1 , x _ 3 )"
    assert one_argument_words([recogs]) == {"cake", "eat"}
    assert one_argument_words([cogs]) == {"cake"}


def test_word_positions_by_hand():
    """A word token's k-th time in the output names the k-th source token its lexicon writes as that word; a
    token that writes no word, a word absent from the source, one written more often than the source has it and
    a padded source token name nothing."""
    from hf_recogs.models.modeling_structure_transformer import pointer_positions, word_positions

    # token ids: 1 cat, 2 cats (a source form of cat), 3 smiled, 4 smile, 5 dog, 6 "(", 7..9 positions 0..2
    written = torch.arange(10)
    written[2], written[3] = 1, 4
    writes_word = torch.zeros(10, dtype=torch.bool)
    writes_word[[1, 4, 5]] = True
    source = torch.tensor([[1, 3, 2, 1]])  # cat smiled cats <pad: also cat>
    mask = torch.tensor([[1, 1, 1, 0]])
    output = torch.tensor([[1, 6, 1, 6, 4, 5, 1, 3, 6]])  # cat ( cat ( smile dog cat smiled (
    expected = [0, -1, 2, -1, 1, -1, -1, -1, -1]  # the third cat has no third source form: the padded one is out
    assert word_positions(output, source, written, writes_word, mask)[0].tolist() == expected
    assert word_positions(output, source, written, writes_word)[0, 6].item() == 3  # unmasked, the fourth counts
    # in the pointer, a position token still names its position, and a named word holds until the next name
    table = torch.full((10,), -1)
    table[7:10] = torch.arange(3)
    output = torch.tensor([[1, 6, 7, 4, 6, 8, 6]])  # cat ( 0 smile ( 1 (
    named = word_positions(output, source, written, writes_word, mask)
    assert pointer_positions(output, table, named)[0].tolist() == [0, 0, 0, 1, 1, 1, 1]
    assert pointer_positions(output, table)[0].tolist() == [-1, -1, 0, 0, 0, 1, 1]


def test_word_positions_agree_with_counting_by_hand_on_random_rows():
    """``word_positions`` (keys and binary search) against its definition counted in plain Python, on random
    rows with few ids (so that words repeat), padded sources and tokens that write no word."""
    from hf_recogs.models.modeling_structure_transformer import word_positions

    def by_hand(output, source, written, writes_word, mask):
        words = [written[s] if keep else None for s, keep in zip(source, mask, strict=True)]
        named = []
        for t, token in enumerate(output):
            times = output[:t].count(token)  # the same token before this one
            places = [j for j, w in enumerate(words) if w == token]
            named.append(places[times] if writes_word[token] and times < len(places) else -1)
        return named

    rng = torch.Generator().manual_seed(0)
    for _ in range(200):
        vocab, rows = int(torch.randint(3, 12, (1,), generator=rng)), int(torch.randint(1, 4, (1,), generator=rng))
        source = torch.randint(0, vocab, (rows, int(torch.randint(1, 10, (1,), generator=rng))), generator=rng)
        output = torch.randint(0, vocab, (rows, int(torch.randint(1, 25, (1,), generator=rng))), generator=rng)
        written = torch.randint(0, vocab, (vocab,), generator=rng)
        writes_word = torch.rand(vocab, generator=rng) < 0.6
        mask = (torch.rand(source.shape, generator=rng) < 0.8).long()
        got = word_positions(output, source, written, writes_word, mask)
        for b in range(rows):
            assert got[b].tolist() == by_hand(output[b].tolist(), source[b].tolist(), written.tolist(),
                                              writes_word.tolist(), mask[b].tolist())


def test_named_words_point_at_their_source_word_and_decode_as_they_train(pointer_tok, tmp_path):
    """With ``pointer_named_words``, from the lemma ``give`` on the pointer terms read from ``gave`` (position 1):
    the model's logits change where the pointer does and nowhere before; decoding with a cache sees what teacher
    forcing sees, and the model reloads with its word table. It needs the lexicon and a pointer term."""
    from huggingface_hub.errors import StrictDataclassClassValidationError

    pairs = ([SENTENCE, SHORT], [TARGET, "smile ( 1 ) AND agent ( 1 , 0 ) AND theme ( 1 , 0 )"])
    options = {**TINY, "cross_attention_structure": "pointer", "pointer_offsets": 3, "output_copy": True,
               "output_copy_lexicon": True}
    with pytest.raises(StrictDataclassClassValidationError, match="pointer_named_words lets a written word"):
        build_model("structure_transformer", pointer_tok, max_positions=32, training_pairs=pairs,
                    **{**TINY, "pointer_named_words": True})

    def model(**more):
        torch.manual_seed(0)
        built = build_model("structure_transformer", pointer_tok, max_positions=32, training_pairs=pairs,
                            **options, **more).eval()
        with torch.no_grad():
            built.model.decoder.pointer_bias.weight.normal_(0, 2.0)
            built.model.decoder.offset_bias.weight.normal_(0, 2.0)
        return built

    plain, named = model(), model(pointer_named_words=True)
    vocab = pointer_tok.get_vocab()
    assert sorted(named.config.pointer_word_ids) == sorted([vocab["give"], vocab["smile"]])
    assert set(named.state_dict()) == set(plain.state_dict())  # the word table is rebuilt, not saved
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        before, teacher = plain(**batch, labels=labels).logits, named(**batch, labels=labels).logits
    # decoder inputs of row 0: <s> give ( 1 ...: the steps reading give and ( differ, the others do not (from
    # 1 on the position token names the word anyway; with one decoder layer a step's cross-attention reaches
    # no later step)
    assert torch.allclose(before[0, 0], teacher[0, 0], atol=1e-6)
    assert not torch.allclose(before[0, 1], teacher[0, 1], atol=1e-3)
    assert not torch.allclose(before[0, 2], teacher[0, 2], atol=1e-3)
    assert torch.allclose(before[0, 3:], teacher[0, 3:], atol=1e-5)
    with torch.no_grad():
        assert named.generate(**batch, max_length=12, num_beams=3).shape[0] == 2  # beams carry the source ids
    _decodes_as_it_trains_and_reloads(named, batch, labels, teacher, tmp_path, reload_atol=1e-5)


def test_a_copy_model_trains_on_the_mixture_and_decodes_as_it_trains(pointer_tok, tmp_path):
    """The copy layer comes last: a seed gives every other weight the value it gives the model without it. The
    logits are log-probabilities and the loss their cross-entropy; with the gate shut they are the plain model's
    log-softmax, with it open every token outside the row's sentence gets nothing. Decoding with a cache (greedy
    and beams, which must carry the source ids along) sees what teacher forcing sees, and the model reloads."""
    from transformers.modeling_outputs import BaseModelOutput

    options = {"cross_attention_structure": "pointer", "pointer_offsets": 3}
    plain = tiny(pointer_tok, **options)
    copying = tiny(pointer_tok, **options, output_copy=True)
    assert set(copying.state_dict()) - set(plain.state_dict()) == {
        "copy.query.weight", "copy.key.weight", "copy.gate.weight", "copy.gate.bias"}
    assert all(torch.equal(v, copying.state_dict()[k]) for k, v in plain.state_dict().items())
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        out = copying(**batch, labels=labels)
        assert torch.allclose(out.logits.exp().sum(-1), torch.ones(labels.shape), atol=1e-5)
        assert torch.isclose(out.loss, torch.nn.functional.cross_entropy(out.logits.flatten(0, 1), labels.flatten()))
        copying.copy.gate.weight.zero_()
        copying.copy.gate.bias.fill_(-50.0)
        assert torch.allclose(copying(**batch, labels=labels).logits,
                              plain(**batch, labels=labels).logits.log_softmax(-1), atol=1e-5)
        copying.copy.gate.bias.fill_(50.0)
        shares = copying(**batch, labels=labels).logits.exp()
        for row in range(2):
            present = batch["input_ids"][row][batch["attention_mask"][row].bool()].unique()
            outside = torch.ones(shares.shape[-1], dtype=torch.bool)
            outside[present] = False
            assert (shares[row][:, outside] < 1e-12).all()
            assert torch.allclose(shares[row][:, present].sum(-1), torch.ones(labels.shape[1]), atol=1e-5)
        copying.copy.gate.weight.normal_(0, 1.0)
        copying.copy.gate.bias.zero_()
        teacher = copying(**batch, labels=labels).logits
        assert copying.generate(**batch, max_length=12, num_beams=3).shape[0] == 2
        encoder = copying.get_encoder()(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                                        relation_ids=batch["relation_ids"])
        assert torch.equal(encoder.input_ids, batch["input_ids"])
        with pytest.raises(ValueError, match="an output_copy model copies from the source ids"):
            copying(encoder_outputs=BaseModelOutput(last_hidden_state=encoder.last_hidden_state),
                    attention_mask=batch["attention_mask"], relation_ids=batch["relation_ids"], labels=labels)
    _decodes_as_it_trains_and_reloads(copying, batch, labels, teacher, tmp_path, reload_atol=1e-5)


# ---------------------------------------------------------------------------------------------------------
# output_copy_positions: position tokens written by pointing at the source's words


def test_position_copy_by_hand():
    """p(w) = gate * copy(w) + (1 - gate) * ((1 - h) * vocabulary(w) + h * pointed(w)): the vocabulary's softmax
    over the tokens that name no position, and pointed(w) the second attention's share of the source word whose
    position w names. After the first eos (structure tokens), in padding and at a position without a token there
    is no word to name."""
    from hf_recogs.models.modeling_structure_transformer import OutputCopy, PositionCopy

    torch.manual_seed(0)
    # vocabulary of 10: tokens 5, 6, 7 name positions 0, 1, 2, position 3 has no token, 8 and 9 name 4 and 5;
    # 2 is eos
    positions = PositionCopy(d_model=4, token_of_position=[5, 6, 7, -1, 8, 9], eos_token_id=2)
    copy = OutputCopy(d_model=4, positions=positions)
    hidden, encoder_hidden = torch.randn(1, 2, 4), torch.randn(1, 6, 4)
    vocabulary_logits = torch.randn(1, 2, 10)
    # words at 0..3 (ids 3, 4, 3, 4), eos at 4, a structure token at 5 (id 3 again)
    source_ids = torch.tensor([[3, 4, 3, 4, 2, 3]])
    with torch.no_grad():
        out = copy(hidden, vocabulary_logits, encoder_hidden, source_ids, torch.ones(1, 6, dtype=torch.long))
        for t in range(2):
            h = hidden[0, t]
            word_scores = torch.stack([(copy.query.weight @ h) @ (copy.key.weight @ encoder_hidden[0, s]) / 2
                                       for s in range(6)])
            word_attention = word_scores.softmax(0)
            position_scores = torch.stack([(positions.query.weight @ h) @ (positions.key.weight @ encoder_hidden[0, s])
                                           / 2 for s in range(3)])  # positions 0, 1, 2: words with a token
            position_attention = position_scores.softmax(0)
            gate = torch.sigmoid(copy.gate.weight[0] @ h + copy.gate.bias[0])
            pointing = torch.sigmoid(positions.gate.weight[0] @ h + positions.gate.bias[0])
            vocabulary = torch.zeros(10)
            vocabulary[:5] = vocabulary_logits[0, t, :5].softmax(0)
            expected = (1 - gate) * (1 - pointing) * vocabulary
            expected[5:8] += (1 - gate) * pointing * position_attention
            expected[3] += gate * (word_attention[0] + word_attention[2] + word_attention[5])
            expected[4] += gate * (word_attention[1] + word_attention[3])
            expected[2] += gate * word_attention[4]
            assert torch.allclose(out[0, t].exp(), expected, atol=1e-6)


def test_a_position_copy_model_writes_positions_only_by_pointing(pointer_tok, tmp_path):
    """The option adds the second attention and its gate and nothing else; the probabilities still sum to 1.
    With the word copy shut and the pointing gate open, the position tokens share all the probability, each
    one naming a word of its row's sentence (``Liam smiled .``: 0, 1, 2 only); with the pointing gate shut, no
    position token gets any. Decoding with a cache sees what teacher forcing sees, and the model reloads."""
    from huggingface_hub.errors import StrictDataclassClassValidationError

    from hf_recogs.models.modeling_structure_transformer import StructureTransformerForConditionalGeneration

    options = {"cross_attention_structure": "pointer", "pointer_offsets": 3, "output_copy": True}
    plain = tiny(pointer_tok, **options)
    pointing = tiny(pointer_tok, **options, output_copy_positions=True)
    assert set(pointing.state_dict()) - set(plain.state_dict()) == {
        "copy.positions.query.weight", "copy.positions.key.weight", "copy.positions.gate.weight",
        "copy.positions.gate.bias"}
    vocab = pointer_tok.get_vocab()
    position_ids = torch.tensor([i for i in pointing.config.pointer_token_ids if i >= 0])
    batch, labels = _pointer_batch(pointer_tok)
    with torch.no_grad():
        out = pointing(**batch, labels=labels)
        assert torch.allclose(out.logits.exp().sum(-1), torch.ones(labels.shape), atol=1e-5)
        pointing.copy.gate.weight.zero_()
        pointing.copy.gate.bias.fill_(-50.0)
        pointing.copy.positions.gate.weight.zero_()
        pointing.copy.positions.gate.bias.fill_(50.0)
        shares = pointing(**batch, labels=labels).logits.exp()
        assert torch.allclose(shares[..., position_ids].sum(-1), torch.ones(labels.shape), atol=1e-5)
        short = [vocab[k] for k in ("0", "1", "2") if k in vocab]
        assert set(short) == {vocab["0"], vocab["1"], vocab["2"]}
        assert torch.allclose(shares[1][:, short].sum(-1), torch.ones(labels.shape[1]), atol=1e-5)
        pointing.copy.positions.gate.bias.fill_(-50.0)
        assert (pointing(**batch, labels=labels).logits.exp()[..., position_ids] < 1e-12).all()
        pointing.copy.gate.weight.normal_(0, 1.0)
        pointing.copy.gate.bias.zero_()
        pointing.copy.positions.gate.weight.normal_(0, 1.0)
        pointing.copy.positions.gate.bias.zero_()
        teacher = pointing(**batch, labels=labels).logits
        assert pointing.generate(**batch, max_length=12, num_beams=3).shape[0] == 2
    _decodes_as_it_trains_and_reloads(pointing, batch, labels, teacher, tmp_path, reload_atol=1e-5)
    with pytest.raises(StrictDataclassClassValidationError, match="output_copy_positions writes positions by"):
        tiny(pointer_tok, output_copy_positions=True)
    config = type(pointing.config)(**{**pointing.config.to_dict(), "pointer_token_ids": None,
                                      "cross_attention_structure": "none", "pointer_offsets": 0})
    with pytest.raises(ValueError, match="output_copy_positions needs pointer_token_ids"):
        StructureTransformerForConditionalGeneration(config)
