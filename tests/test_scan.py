"""SCAN configs: grammar, generated splits against the official files, read splits, validation, parameters.

Expected numbers come from the upstream files as docs/DATASETS.md §4 lists them (not from our code). Tests
marked ``mirror`` compare with the official files, read (and checksum-verified) through ``hf_recogs.sources``.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import pytest

from hf_recogs.benchmarks import scan
from hf_recogs.registry import configs_of, get_config
from hf_recogs.sources import fetch_bytes, pinned, read_lines

# ----------------------------------------------------------------------------------------------------------
# Expected numbers (docs/DATASETS.md §4.3)

UPSTREAM_SIZES = {  # config: (train lines, test lines)
    "scan_simple": (16_728, 4_182),
    "scan_length": (16_990, 3_920),
    "scan_addprim_jump": (14_670, 7_706),
    "scan_addprim_turn_left": (21_890, 1_208),
    "scan_template_around_right": (15_225, 4_476),
    "scan_template_jump_around_right": (18_528, 1_173),
    "scan_template_opposite_right": (15_225, 4_476),
    "scan_template_right": (15_225, 4_476),
    "scan_filler_num0": (15_225, 1_173),
    "scan_filler_num1": (16_290, 1_173),
    "scan_filler_num2": (17_391, 1_173),
    "scan_filler_num3": (18_528, 1_173),
    "scan_mcd1": (8_365, 1_045),
    "scan_mcd2": (8_365, 1_045),
    "scan_mcd3": (8_365, 1_045),
}
SIMPLE_SIZE_TRAIN = {1: 209, 2: 418, 4: 836, 8: 1_672, 16: 3_345, 32: 6_691, 64: 13_382}
FEWSHOT_ADDED_QUIRKS = {(32, 3): 31, (64, 1): 61, (64, 2): 61, (64, 3): 63, (64, 4): 62, (64, 5): 60}
COMPLEX_REPEAT = {1: 734, 2: 489, 4: 293, 8: 163, 16: 86, 32: 44}
COMPLEX_TRAIN_TOTAL = {1: 14_671, 2: 14_670, 4: 14_668, 8: 14_670, 16: 14_665, 32: 14_655}
FILLER_ADDED = {0: 0, 1: 1_065, 2: 2_166, 3: 3_303}

EXPECTED_CONFIGS = {
    "scan_simple", "scan_addprim_jump", "scan_addprim_turn_left", "scan_filler_num0", "scan_filler_num1",
    "scan_filler_num2", "scan_filler_num3", "scan_length", "scan_template_around_right",
    "scan_template_jump_around_right", "scan_template_opposite_right", "scan_template_right",
    "scan_mcd1", "scan_mcd2", "scan_mcd3", "scan_fewshot", "scan_addprim_complex_jump", "scan_simple_size",
}

GENERATED_FILES = {  # config: upstream folder/stem of its train/test files
    "scan_length": "length_split/tasks_{}_length.txt",
    "scan_addprim_jump": "add_prim_split/tasks_{}_addprim_jump.txt",
    "scan_addprim_turn_left": "add_prim_split/tasks_{}_addprim_turn_left.txt",
    **{
        f"scan_template_{t}": f"template_split/tasks_{{}}_template_{t}.txt"
        for t in ("around_right", "jump_around_right", "opposite_right", "right")
    },
    **{f"scan_filler_num{n}": f"filler_split/tasks_{{}}_filler_num{n}.txt" for n in range(4)},
}
BYTE_IDENTICAL = [c for c in GENERATED_FILES if "template" in c or "filler" in c]
MULTISET_ONLY = [c for c in GENERATED_FILES if c not in BYTE_IDENTICAL]


def lines(config, split, **params):
    return [f"IN: {r['input']} OUT: {r['output']}" for r in get_config(config).rows(split, **params)]


def official(path, source="scan"):
    return fetch_bytes(pinned(source, path)).decode("utf-8")


def assert_partition(config, fraction=0.1, **params):
    """With a hold-out, train + validation is the upstream train file (order kept), disjoint, deterministic."""
    full = scan.upstream_lines(config, "train", **params)
    train = list(get_config(config).rows("train", validation_fraction=fraction, **params))
    val = list(get_config(config).rows("validation", validation_fraction=fraction, **params))
    assert val == list(get_config(config).rows("validation", validation_fraction=fraction, **params))
    assert len(train) + len(val) == len(full)
    val_lines = {f"IN: {r['input']} OUT: {r['output']}" for r in val}
    assert not val_lines & {f"IN: {r['input']} OUT: {r['output']}" for r in train}
    assert [x for x in full if x not in val_lines] == [f"IN: {r['input']} OUT: {r['output']}" for r in train]
    assert all(scan.validation_position(r["input"]) < fraction for r in val)
    assert not {r["category"] for r in val} & {"primitive", "composed", "filler"}
    return train, val


# ----------------------------------------------------------------------------------------------------------
# Grammar (no mirror needed)


def test_grammar_counts():
    v, s, c = scan.verb_phrases(), scan.sentences(), scan.commands()
    assert len(v) == len(set(v)) == 34
    assert len(s) == len(set(s)) == 102
    assert len(c) == len(set(c)) == 20_910
    lengths = Counter(len(scan.interpret(x).split(" ")) for x in c)
    assert sum(n for k, n in lengths.items() if k <= 22) == 16_990
    assert sum(n for k, n in lengths.items() if k >= 24) == 3_920
    assert 23 not in lengths
    assert min(lengths) == 1 and max(lengths) == 48
    words = Counter(len(x.split(" ")) for x in c)
    assert min(words) == 1 and max(words) == 9
    assert {w for x in c for w in x.split(" ")} == scan.INPUT_VOCAB == {  # docs/DATASETS.md §4.1
        "after", "and", "around", "jump", "left", "look", "opposite", "right", "run", "thrice", "turn", "twice",
        "walk",
    }
    assert {a for x in c for a in scan.interpret(x).split(" ")} == {
        "I_WALK", "I_LOOK", "I_RUN", "I_JUMP", "I_TURN_LEFT", "I_TURN_RIGHT"
    }


def test_interpretation():
    # First line of tasks.txt
    assert scan.interpret("walk opposite right thrice after run opposite right") == (
        "I_TURN_RIGHT I_TURN_RIGHT I_RUN I_TURN_RIGHT I_TURN_RIGHT I_WALK I_TURN_RIGHT I_TURN_RIGHT I_WALK "
        "I_TURN_RIGHT I_TURN_RIGHT I_WALK"
    )
    assert scan.interpret("jump") == "I_JUMP"
    assert scan.interpret("turn left") == "I_TURN_LEFT"
    assert scan.interpret("turn opposite right") == "I_TURN_RIGHT I_TURN_RIGHT"
    assert scan.interpret("turn around left") == " ".join(["I_TURN_LEFT"] * 4)
    assert scan.interpret("look around right") == " ".join(["I_TURN_RIGHT I_LOOK"] * 4)
    assert scan.interpret("run twice and jump") == "I_RUN I_RUN I_JUMP"
    assert scan.interpret("run twice after jump") == "I_JUMP I_RUN I_RUN"
    for bad in ("", "turn", "fly", "walk up", "walk left around", "jump and"):
        with pytest.raises(ValueError):
            scan.interpret(bad)


def test_config_catalogue():
    names = set(configs_of("scan"))
    assert names == EXPECTED_CONFIGS
    for name in names:
        cfg = get_config(name)
        assert cfg.family == "scan" and cfg.license == "BSD-3-Clause"
        assert cfg.splits == ("train", "validation", "test")  # every split it can have
        assert cfg.splits_for() == ("train", "test")  # the official files: SCAN has no validation split
        assert cfg.splits_for({"validation_fraction": 0.1}) == ("train", "validation", "test")
        assert cfg.publishable_splits == ("train", "test")
        assert cfg.citations[0] == "scan"
        assert "validation_fraction" in cfg.notes  # the opt-in hold-out is labelled as ours
    assert "scan_template" in get_config("scan_filler_num2").citations
    assert "scan_mcd" in get_config("scan_mcd1").citations


def test_parameters():
    few = get_config("scan_fewshot")
    assert [p.name for p in few.params] == ["num", "rep", "validation_fraction"]
    assert few.resolve_params({"num": "8", "rep": 2}) == {"num": 8, "rep": 2, "validation_fraction": 0.0}
    with pytest.raises(ValueError, match=r"num=3 is not one of 1, 2, 4"):
        list(few.rows("train", num=3))
    with pytest.raises(ValueError, match=r"rep=6"):
        list(few.rows("train", num=8, rep=6))
    with pytest.raises(ValueError, match=r"num=64 is not one of"):
        list(get_config("scan_addprim_complex_jump").rows("test", num=64))
    with pytest.raises(ValueError, match=r"p=3 is not one of"):
        list(get_config("scan_simple_size").rows("train", p=3))
    with pytest.raises(ValueError, match=r"has no parameter seed"):
        list(few.rows("train", seed=1))
    with pytest.raises(ValueError, match=r"has no parameter num"):
        list(get_config("scan_length").rows("train", num=1))
    with pytest.raises(ValueError, match=r"no split 'gen'"):
        list(get_config("scan_length").rows("gen"))
    assert [p.name for p in get_config("scan_length").params] == ["validation_fraction"]
    with pytest.raises(ValueError, match=r"no split 'validation'.*validation_fraction=0.1"):
        list(get_config("scan_length").rows("validation"))
    with pytest.raises(ValueError, match=r"validation_fraction=0.7 must be between 0.0 and 0.5"):
        list(get_config("scan_length").rows("train", validation_fraction=0.7))
    with pytest.raises(ValueError, match=r"validation_fraction='ten' must be float"):
        list(get_config("scan_length").rows("train", validation_fraction="ten"))


def test_sources_listed():
    assert [f.path for f in get_config("scan_length").sources("train")] == ["tasks.txt"]
    assert [f.path for f in get_config("scan_fewshot").sources("validation", num=4, rep=2)] == [
        "few_shot_split/tasks_train_fewshot_num4_rep2.txt"
    ]
    assert [f.path for f in get_config("scan_mcd2").sources("test")] == ["mcd_split/tasks_test_mcd2.txt"]
    assert get_config("scan_mcd2").sources("test")[0].commit.startswith("9da9c8a")


# ----------------------------------------------------------------------------------------------------------
# Against the official files


@pytest.mark.mirror
def test_grammar_equals_tasks_txt(mirror):
    upstream = read_lines(pinned("scan", "tasks.txt"))
    assert len(upstream) == len(set(upstream)) == 20_910
    assert {scan.format_line(c, scan.interpret(c)) for c in scan.commands()} == set(upstream)


@pytest.mark.mirror
@pytest.mark.parametrize("config", sorted(UPSTREAM_SIZES))
def test_sizes(mirror, config):
    train, test = UPSTREAM_SIZES[config]
    cfg = get_config(config)
    assert sum(1 for _ in cfg.rows("train")) == train  # the whole official train file
    n_train = sum(1 for _ in cfg.rows("train", validation_fraction=0.1))
    n_val = sum(1 for _ in cfg.rows("validation", validation_fraction=0.1))
    assert n_train + n_val == train
    assert 0.08 * train < n_val < 0.12 * train
    assert sum(1 for _ in cfg.rows("test")) == test


@pytest.mark.mirror
@pytest.mark.parametrize("config", BYTE_IDENTICAL)
def test_generated_byte_identical(mirror, config):
    for split in ("train", "test"):
        ours = "".join(line + "\n" for line in scan.upstream_lines(config, split))
        assert ours == official(GENERATED_FILES[config].format(split)), f"{config} {split}"
    assert lines(config, "test") == scan.upstream_lines(config, "test")


@pytest.mark.mirror
@pytest.mark.parametrize("config", MULTISET_ONLY)
def test_generated_multiset(mirror, config):
    for split in ("train", "test"):
        theirs = official(GENERATED_FILES[config].format(split)).split("\n")[:-1]
        assert Counter(scan.upstream_lines(config, split)) == Counter(theirs), f"{config} {split}"


@pytest.mark.mirror
@pytest.mark.parametrize("config", ["scan_simple", "scan_mcd1", "scan_mcd2", "scan_mcd3"])
def test_read_splits_verbatim(mirror, config):
    source, folder = ("scan_mcd", "mcd_split") if "mcd" in config else ("scan", "simple_split")
    stem = config.removeprefix("scan_")
    for split in ("train", "test"):
        ours = "".join(line + "\n" for line in scan.upstream_lines(config, split))
        assert ours == official(f"{folder}/tasks_{split}_{stem}.txt", source)
    assert {r["category"] for r in get_config(config).rows("test")} == {stem}


@pytest.mark.mirror
def test_mcd_lines_are_scan_commands(mirror):
    universe = set(read_lines(pinned("scan", "tasks.txt")))
    for i in (1, 2, 3):
        train = set(scan.upstream_lines(f"scan_mcd{i}", "train"))
        test = set(scan.upstream_lines(f"scan_mcd{i}", "test"))
        assert train <= universe and test <= universe and not train & test


@pytest.mark.mirror
@pytest.mark.parametrize("p", sorted(SIMPLE_SIZE_TRAIN))
def test_simple_size_byte_identical(mirror, p):
    folder = "simple_split/size_variations"
    for split in ("train", "test"):
        ours = "".join(line + "\n" for line in scan.upstream_lines("scan_simple_size", split, p=p))
        assert ours == official(f"{folder}/tasks_{split}_simple_p{p}.txt"), f"p{p} {split}"
    full = scan.upstream_lines("scan_simple_size", "train", p=p)
    assert len(full) == SIMPLE_SIZE_TRAIN[p]
    assert sum(1 for _ in get_config("scan_simple_size").rows("test", p=p)) == 20_910 - SIMPLE_SIZE_TRAIN[p]


# ----------------------------------------------------------------------------------------------------------
# Categories


@pytest.mark.mirror
def test_length_categories(mirror):
    cfg = get_config("scan_length")
    for split, allowed in (("train", range(1, 23)), ("validation", range(1, 23)), ("test", range(24, 49))):
        for r in cfg.rows(split, validation_fraction=0.1):
            assert r["category"] == f"actions_{len(r['output'].split(' '))}"
            assert len(r["output"].split(" ")) in allowed


@pytest.mark.mirror
@pytest.mark.parametrize(
    "config, primitive, actions, reps, others, test",
    [
        ("scan_addprim_jump", "jump", "I_JUMP", 1_467, 13_203, 7_706),
        ("scan_addprim_turn_left", "turn left", "I_TURN_LEFT", 2_189, 19_701, 1_208),
    ],
)
def test_addprim_categories(mirror, config, primitive, actions, reps, others, test):
    train, val = assert_partition(config)
    cats = Counter(r["category"] for r in train + val)
    assert cats == {"primitive": reps, "other": others}  # duplicates of the primitive are kept
    assert {(r["input"], r["output"]) for r in train if r["category"] == "primitive"} == {(primitive, actions)}
    assert Counter(r["category"] for r in get_config(config).rows("test")) == {"composed": test}


@pytest.mark.mirror
@pytest.mark.parametrize("n", sorted(FILLER_ADDED))
def test_filler_categories(mirror, n):
    train, val = assert_partition(f"scan_filler_num{n}")
    cats = Counter(r["category"] for r in train + val)
    assert cats["filler"] == FILLER_ADDED[n] and cats["template"] == 0
    assert Counter(r["category"] for r in get_config(f"scan_filler_num{n}").rows("test")) == {"template": 1_173}
    if n:
        verbs = {"look", "walk", "run"} if n == 3 else {"look", "walk"} if n == 2 else {"look"}
        added = [r["input"].split(" ") for r in train if r["category"] == "filler"]
        assert all(w[i - 1] in verbs for w in added for i, x in enumerate(w) if x == "around" and w[i + 1] == "right")


@pytest.mark.mirror
@pytest.mark.parametrize("name", ["around_right", "opposite_right", "right"])
def test_template_categories(mirror, name):
    cfg = f"scan_template_{name}"
    train, val = assert_partition(cfg)
    assert {r["category"] for r in train + val} == {"other"}
    assert Counter(r["category"] for r in get_config(cfg).rows("test")) == {"template": 4_476}
    phrase = name.replace("_", " ")
    assert not any(scan.contains(r["input"], f"turn {phrase}") for r in get_config(cfg).rows("test"))


# ----------------------------------------------------------------------------------------------------------
# Validation


@pytest.mark.mirror
@pytest.mark.parametrize("config", ["scan_simple", "scan_length", "scan_template_jump_around_right", "scan_mcd2"])
def test_validation_partition(mirror, config):
    _, val = assert_partition(config)
    assert len(val) > 0


@pytest.mark.mirror
def test_validation_rule_is_shared_across_configs(mirror):
    simple = {r["input"] for r in get_config("scan_simple").rows("validation", validation_fraction=0.1)}
    length = {r["input"] for r in get_config("scan_length").rows("validation", validation_fraction=0.1)}
    length_train_cmds = {r["input"] for r in get_config("scan_length").rows("train", validation_fraction=0.1)}
    simple_train = {r["input"] for r in get_config("scan_simple").rows("train", validation_fraction=0.1)}
    assert not simple & length_train_cmds and not length & simple_train


@pytest.mark.mirror
def test_smaller_fraction_holds_out_a_subset(mirror):
    small = {r["input"] for r in get_config("scan_length").rows("validation", validation_fraction=0.05)}
    large = {r["input"] for r in get_config("scan_length").rows("validation", validation_fraction=0.2)}
    assert small < large
    assert 0.03 * 16_990 < len(small) < 0.07 * 16_990


# ----------------------------------------------------------------------------------------------------------
# Parameterised families read from files


@lru_cache(maxsize=1)
def tasks_order():
    return {line: i for i, line in enumerate(read_lines(pinned("scan", "tasks.txt")))}


@lru_cache(maxsize=1)
def filler1_additions():
    return frozenset(scan.upstream_lines("scan_filler_num1", "train")) - frozenset(
        scan.upstream_lines("scan_filler_num0", "train")
    )


def check_fewshot(num, rep):
    added = FEWSHOT_ADDED_QUIRKS.get((num, rep), num)
    train, val = assert_partition("scan_fewshot", num=num, rep=rep)
    full = scan.upstream_lines("scan_fewshot", "train", num=num, rep=rep)
    base = scan.upstream_lines("scan_filler_num0", "train")
    assert len(full) == 15_225 + added and full[:15_225] == base
    assert Counter(r["category"] for r in train + val) == Counter({"other": 15_225, "filler": added})
    assert set(full[15_225:]) <= filler1_additions()
    order = tasks_order()
    assert [order[x] for x in full[15_225:]] == sorted(order[x] for x in full[15_225:])
    assert scan.upstream_lines("scan_fewshot", "test", num=num, rep=rep) == scan.upstream_lines(
        "scan_template_jump_around_right", "test"
    )


def check_complex(num, rep):
    k = COMPLEX_REPEAT[num]
    train, val = assert_partition("scan_addprim_complex_jump", num=num, rep=rep)
    assert len(train) + len(val) == COMPLEX_TRAIN_TOTAL[num]
    assert Counter(r["category"] for r in train + val) == {
        "other": 13_203, "primitive": k, "composed": num * k
    }
    assert len({r["input"] for r in train if r["category"] == "composed"}) == num
    test = scan.upstream_lines("scan_addprim_complex_jump", "test", num=num, rep=rep)
    assert len(test) == 7_706 - num
    composed = {f"IN: {r['input']} OUT: {r['output']}" for r in train if r["category"] == "composed"}
    assert Counter(test) + Counter(composed) == Counter(scan.upstream_lines("scan_addprim_jump", "test"))


@pytest.mark.mirror
@pytest.mark.parametrize("num, rep", [(1, 1), (32, 3), (64, 2), (1024, 5)])
def test_fewshot(mirror, num, rep):
    check_fewshot(num, rep)


@pytest.mark.mirror
@pytest.mark.parametrize("num, rep", [(1, 1), (8, 4), (32, 5)])
def test_addprim_complex(mirror, num, rep):
    check_complex(num, rep)


@pytest.mark.mirror
@pytest.mark.slow
def test_all_parameter_values(mirror):
    for num in scan.FEWSHOT_NUMS:
        for rep in scan.REPS:
            check_fewshot(num, rep)
    for num in scan.COMPLEX_NUMS:
        for rep in scan.REPS:
            check_complex(num, rep)


@pytest.mark.mirror
def test_loaded_train_is_the_official_file(mirror, tmp_path, monkeypatch):
    import datasets

    import hf_recogs

    official_train = len(read_lines(pinned("scan", "length_split/tasks_train_length.txt")))
    plain = hf_recogs.load_dataset("scan_length", cache_dir=str(tmp_path / "c"))
    assert set(plain) == {"train", "test"}
    assert plain["train"].num_rows == official_train == 16_990
    with pytest.raises(ValueError, match=r"no split 'validation'.*validation_fraction=0.1"):
        hf_recogs.load_dataset("scan_length", split="validation", cache_dir=str(tmp_path / "c"))
    monkeypatch.chdir(tmp_path)  # the repository root has a folder named hf_recogs
    held = datasets.load_dataset("hf_recogs", "scan_length", validation_fraction=0.1, cache_dir=str(tmp_path / "c"))
    assert set(held) == {"train", "validation", "test"}
    assert held["train"].num_rows + held["validation"].num_rows == official_train
    assert held["test"].num_rows == plain["test"].num_rows
