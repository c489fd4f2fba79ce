"""Every metric config key is type- and range-checked, with one line naming the dotted key."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from sciflow.config import (
    CHECKED_TABLES,
    ConfigError,
    CritiqueConfig,
    GraphWeights,
    ImageConfig,
    JudgeConfig,
    MatchingConfig,
    OverallWeights,
    TextConfig,
    default_data,
    load_config,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def nested(dotted: str, value: object) -> dict:
    *tables, key = dotted.split(".")
    out: dict = {key: value}
    for t in reversed(tables):
        out = {t: out}
    return out


def table(data: dict, dotted: str) -> dict:
    for part in dotted.split("."):
        data = data[part]
    return data


def scalar_keys() -> list[tuple[str, object]]:
    data = default_data()
    return [(f"{t}.{k}", v) for t in CHECKED_TABLES for k, v in table(data, t).items() if not isinstance(v, dict)]


def config_error(overrides: dict) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(overrides=overrides)
    msg = str(info.value)
    assert "\n" not in msg and msg.strip() == msg and msg
    return msg


@pytest.mark.parametrize(
    "dotted, value, message",
    [
        ("graph.edge_weight", -0.5, "graph.edge_weight = -0.5: must be >= 0"),
        ("matching.threshold", "high", "matching.threshold = 'high': expected a number"),
        ("matching.threshold", 0, "matching.threshold = 0: must lie in (0, 1]"),
        ("matching.threshold", 1.5, "matching.threshold = 1.5: must lie in (0, 1]"),
        ("matching.threshold", True, "matching.threshold = true: expected a number"),
        ("matching.string_weight", -0.1, "matching.string_weight = -0.1: must lie in [0, 1]"),
        ("matching.embedder", 3, "matching.embedder = 3: expected a string"),
        ("text.alignment_backend", "oracle",
         "text.alignment_backend = 'oracle': expected one of 'deterministic', 'judge'"),
        ("text.judge.timeout_s", 0, "text.judge.timeout_s = 0: must be > 0"),
        ("text.judge.timeout_s", float("nan"), "text.judge.timeout_s = nan: expected a finite number"),
        ("text.judge.max_retries", 1.5, "text.judge.max_retries = 1.5: expected an integer"),
        ("text.judge.max_retries", -1, "text.judge.max_retries = -1: must be >= 0"),
        ("text.judge.seed", False, "text.judge.seed = false: expected an integer"),
        ("text.judge", 5, "text.judge = 5: expected a table"),
        ("graph", 0.5, "graph = 0.5: expected a table"),
        ("image.common_size", 16, "image.common_size = 16: must be >= 32"),
        ("image.flow_overlap_iou", 1.0, "image.flow_overlap_iou = 1.0: must lie in [0, 1)"),
        ("image.semantic_backend", "siglip",
         "image.semantic_backend = 'siglip': expected one of 'auto', 'clip', 'ocr-text-embedding'"),
        ("critique.fail_on_missing_node", 1, "critique.fail_on_missing_node = 1: expected true or false"),
        ("critique.max_steps", 2.0, "critique.max_steps = 2.0: expected an integer"),
        ("critique.misspell_threshold", 2, "critique.misspell_threshold = 2: must lie in [0, 1]"),
    ],
)
def test_bad_values_name_the_key_the_value_and_the_expectation(dotted, value, message):
    assert config_error(nested(dotted, value)) == message


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"graph": {"edge_weight": -0.5, "node_weight": 1.5}}, "graph.edge_weight = -0.5: must be >= 0"),
        ({"graph": {"edge_weight": 0.7}},
         "graph.edge_weight + graph.node_weight = 0.7 + 0.4 = 1.1: must sum to 1"),
        ({"overall": {"image": 0.0}},
         "overall.graph + overall.text + overall.image = 0.4 + 0.3 + 0 = 0.7: must sum to 1"),
        ({"text": {"coverage": 0.5}},
         "text.coverage + text.faithfulness + text.alignment = 0.5 + 0.3 + 0.4 = 1.2: must sum to 1"),
        ({"text": {"relation_weight": 0.5}},
         "text.relation_weight + text.embedding_weight = 0.5 + 0.4 = 0.9: must sum to 1"),
        ({"image": {"flow_weight": 0.5}}, "image.semantic_weight + image.perceptual_weight + image.flow_weight"
                                          " = 0.4 + 0.2 + 0.5 = 1.1: must sum to 1"),
        ({"image": {"flow_direction": -0.2, "flow_crossings": 0.8}}, "image.flow_direction = -0.2: must be >= 0"),
    ],
)
def test_weight_groups(overrides, message):
    assert config_error(overrides) == message


@pytest.mark.parametrize("dotted, default", scalar_keys(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_key_is_type_checked(dotted, default):
    wrong: object = 1 if isinstance(default, (bool, str)) else "x"
    msg = config_error(nested(dotted, wrong))
    assert msg.startswith(f"{dotted} = {wrong!r}: expected ")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        assert config_error(nested(dotted, True)).startswith(f"{dotted} = true: expected ")


def test_valid_values_pass():
    cfg = load_config(overrides={
        "matching": {"threshold": 1, "string_weight": 0},  # an integer is a valid float
        "graph": {"edge_weight": 1, "node_weight": 0},
        "overall": {"graph": 0.2, "text": 0.2, "image": 0.6},
        "text": {"judge": {"timeout_s": 5, "temperature": 0.7}},
        "critique": {"fail_on_missing_edge": False, "max_steps": 0},
        # the parser table is open: agents validate their own parameters
        "parser": {"text_spotter": {"min_confidence": "anything", "new_key": [1, 2]}},
    })
    assert cfg.matching.threshold == 1 and cfg.graph.edge_weight == 1
    assert cfg.parser["text_spotter"]["new_key"] == [1, 2]


def test_dataclass_defaults_match_the_toml_defaults():
    data = default_data()
    for cls, name in ((MatchingConfig, "matching"), (GraphWeights, "graph"), (TextConfig, "text"),
                      (JudgeConfig, "text.judge"), (OverallWeights, "overall"), (ImageConfig, "image"),
                      (CritiqueConfig, "critique")):
        toml = table(data, name)
        for f in fields(cls):
            if f.name == "judge":
                continue
            assert f.name in toml, (name, f.name)
            assert type(f.default) is type(toml[f.name]), (name, f.name)
            assert f.default == toml[f.name], (name, f.name)


def test_image_and_critique_configs_built_in_code_name_the_key():
    with pytest.raises(ConfigError, match=r"^image\.semantic_weight \+ image\.perceptual_weight \+ "
                                          r"image\.flow_weight = 0\.5 \+ 0\.2 \+ 0\.4 = 1\.1: must sum to 1$"):
        ImageConfig(semantic_weight=0.5)
    with pytest.raises(ConfigError, match=r"^image\.clip_scale = 0: must be > 0$"):
        ImageConfig(clip_scale=0)
    with pytest.raises(ConfigError, match=r"^critique\.local_edit_limit = -1: must be >= 0$"):
        CritiqueConfig(local_edit_limit=-1)
    assert ImageConfig(flow_direction=1, flow_crossings=0, flow_overlaps=0, flow_arrowheads=0).flow_direction == 1


def test_bad_file_is_one_config_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[matching]\nthreshold = "high"\n')
    with pytest.raises(ConfigError, match=r"^matching\.threshold = 'high': expected a number$"):
        load_config(bad)


def _sciflow() -> list[str]:
    exe = Path(sys.executable).parent / "sciflow"
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "sciflow.cli"]


@pytest.mark.parametrize(
    "toml, message",
    [
        ("[graph]\nedge_weight = -0.5\nnode_weight = 1.5\n", "graph.edge_weight = -0.5: must be >= 0"),
        ('[matching]\nthreshold = "high"\n', "matching.threshold = 'high': expected a number"),
    ],
)
def test_cli_reports_a_bad_config_in_one_line(tmp_path, toml, message):
    bad = tmp_path / "bad.toml"
    bad.write_text(toml)
    env = {**os.environ, "COLUMNS": "40", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run(
        [*_sciflow(), "score", str(EXAMPLES / "predictions" / "careful-gen"), "--refs",
         str(EXAMPLES / "references"), "--out", str(tmp_path / "out"), "--config", str(bad)],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert not (tmp_path / "out").exists()
