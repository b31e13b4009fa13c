"""SLOG configs: split sizes and categories (docs/DATASETS.md §6.1), the missing COGS-LF train file, the gen
sets.

The gen sets must never appear in plain text: every assertion on gen rows compares counts, category names or
booleans, never a line (a failing assert must not print one either).
"""

from __future__ import annotations

from collections import Counter

import pytest

from hf_recogs.benchmarks import slog
from hf_recogs.registry import get_config
from hf_recogs.sources import SourceError, SourceUnavailable, is_available

# docs/DATASETS.md §6.1
EXPOSURE = [
    "exposure_example_" + x
    for x in (
        "active", "do_dative", "obj_common", "obj_omitted_transitive", "obj_proper", "passive", "pp_dative",
        "subj_common", "subj_proper", "transitive_subj", "unacc", "unacc_subj",
    )
]
TRAIN_CATEGORIES = {
    "in_distribution": 24_000, "object_modifying_RC": 5_082, "wh_Q_simple_trans": 2_328, "pp_4": 451,
    "primitive": 183, "center_embed_4": 179, "center_embed_2": 163, "cp_4": 157, "standalone_NP_PP": 100,
    "standalone_NP_RC": 100,
}
DEV_CATEGORIES = {
    "in_distribution": 3_000, "object_modifying_RC": 635, "wh_Q_simple_trans": 292, "pp_4": 56,
    "center_embed_2": 29, "cp_4": 20, "center_embed_4": 14,
}
# test.tsv (both formats, sha256-verified) has the same 4,046 rows, categories and in_distribution/cp_4
# counts as dev.tsv, but a different mix of the others (counted with `cut -f3 test.tsv | sort | uniq -c`).
TEST_CATEGORIES = {
    "in_distribution": 3_000, "object_modifying_RC": 636, "wh_Q_simple_trans": 290, "pp_4": 57,
    "center_embed_2": 22, "cp_4": 20, "center_embed_4": 21,
}
GEN_CATEGORIES = {
    "PP_3", "PP_5-12", "CP_3", "CP_5-12", "center_embed_3", "center_embed_5-12", "PP_modif_subj", "PP_modif_iobj",
    "RC_modif_subj", "RC_modif_iobj", "RC_iobj_extracted", "Q_subj_active", "Q_subj_passive", "Q_dobj_ditransV",
    "Q_iobj_ditransV", "Q_long_mv", "Q_modified_NPs",
}


def categories(config, split):
    return Counter(r["category"] for r in get_config(config).rows(split))


def test_catalogue():
    for name in ("slog", "slog_varfree"):
        cfg = get_config(name)
        assert cfg.family == "slog" and cfg.license == "MIT" and cfg.citations == ("slog",)
        assert cfg.splits == ("train", "validation", "test", "gen")
        assert "gen" not in cfg.publishable_splits
        assert cfg.publishable_splits == ("train", "validation", "test")
        assert cfg.params == ()
    assert set(slog.GEN_CATEGORIES) == GEN_CATEGORIES


def test_sources_listed():
    paths = {s: [f.path for f in get_config("slog").sources(s)] for s in get_config("slog").splits}
    assert paths == {
        "train": ["data/cogs_LF/train.tsv"],
        "validation": ["data/cogs_LF/dev.tsv"],
        "test": ["data/cogs_LF/test.tsv"],
        "gen": ["data/generalization_sets.zip"],
    }
    assert [f.path for f in get_config("slog_varfree").sources("train")] == ["data/varfree_LF/train.tsv"]
    assert all(f.commit.startswith("1c55df8") for s in paths for f in get_config("slog").sources(s))


def test_unknown_parameter():
    with pytest.raises(ValueError, match="has no parameter seed"):
        list(get_config("slog_varfree").rows("test", seed=0))


def test_malformed_line_error_does_not_show_the_line():
    secret = "a sentence that must not be echoed"
    with pytest.raises(SourceError) as info:
        list(slog._rows(f"{secret}\tonly two fields\n", "somewhere"))
    assert secret not in str(info.value) and "line 1 has 2 fields" in str(info.value)


@pytest.mark.mirror
def test_cogs_lf_train_is_left_out_with_a_clear_error(mirror):
    # The offline mirror lacks data/cogs_LF/train.tsv and the tests run with HF offline mode on.
    (train,) = get_config("slog").sources("train")
    assert not is_available(train)
    with pytest.raises(SourceUnavailable, match="slog_varfree"):
        next(iter(get_config("slog").rows("train")))
    # the other splits of the same config still load
    assert sum(1 for _ in get_config("slog").rows("test")) == 4_046


@pytest.mark.mirror
def test_varfree_train(mirror):
    cats = categories("slog_varfree", "train")
    assert sum(cats.values()) == 32_755
    assert {k: v for k, v in cats.items() if v > 1} == TRAIN_CATEGORIES
    assert sorted(k for k, v in cats.items() if v == 1) == EXPOSURE


@pytest.mark.mirror
@pytest.mark.parametrize("config", ["slog", "slog_varfree"])
@pytest.mark.parametrize("split", ["validation", "test"])
def test_dev_test(mirror, config, split):
    cats = categories(config, split)
    assert sum(cats.values()) == 4_046
    assert cats == (DEV_CATEGORIES if split == "validation" else TEST_CATEGORIES)


@pytest.mark.mirror
@pytest.mark.parametrize("split", ["validation", "test"])
def test_both_formats_share_sentences(mirror, split):
    a = [r["input"] for r in get_config("slog").rows(split)]
    b = [r["input"] for r in get_config("slog_varfree").rows(split)]
    assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 0


@pytest.mark.mirror
def test_gen(mirror):
    cogs = list(get_config("slog").rows("gen"))
    varfree = list(get_config("slog_varfree").rows("gen"))
    for rows in (cogs, varfree):
        assert len(rows) == 17_000
        assert Counter(r["category"] for r in rows) == {c: 1_000 for c in GEN_CATEGORIES}
        assert all(set(r) == {"input", "output", "category"} for r in rows)
        assert all(r["input"] and r["output"] for r in rows)
    # same sentences, same order, in both formats (compared without ever showing one)
    assert sum(x["input"] != y["input"] or x["category"] != y["category"] for x, y in zip(cogs, varfree)) == 0
    assert max(len(r["input"].split(" ")) for r in cogs) == 61  # docs/DATASETS.md §6.1: max source 61 words
    assert max(len(r["output"].split(" ")) for r in cogs) == 601  # and max COGS-LF 601 tokens
    # gen sentences never occur in train/validation/test
    seen = {r["input"] for s in ("train", "validation", "test") for r in get_config("slog_varfree").rows(s)}
    assert sum(r["input"] in seen for r in varfree) == 0
