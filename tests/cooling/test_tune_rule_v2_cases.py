"""Per-case tuning of the plant v2 rule: a case target tunes on that case's own spec and the family's tuning seeds,
and writing one target leaves every published entry of ``rule_v2_tuned.json`` as it was, byte for byte."""

from __future__ import annotations

import difflib
import json
from importlib import resources

import numpy as np
import pytest

from dcops.agents.cooling.rule_v2 import RuleV2Controller, run_controller_v2
from dcops.cooling_env_v1 import EVAL_SITES, FAULT_CASES, SEASONS, CoolingEnvV1, evaluation_case_spec
from dcops.training.cooling import tune_rule_v2

PUBLISHED = ("cooling/single_zone_recovery_v1", "cooling/multi_zone_sensor_drift_v1",
             "cooling/cascading_chiller_failure_v1", "cooling/daily_operations_v1", "eval_family_v1")


def mean_ratio(params: dict[str, float], site: str, season: str, fault: str, seeds: tuple[int, ...]) -> float:
    """The rule's mean objective over its yardstick, played here on the case's own spec."""
    env = CoolingEnvV1(evaluation_case_spec(site, season, fault))
    ratios = []
    for seed in seeds:
        r = run_controller_v2(env, RuleV2Controller(**params), seed)
        ratios.append(r["objective"] / r["reference"])
    return float(np.mean(ratios))


def test_there_is_one_case_target_per_case_of_the_family():
    cases = tune_rule_v2.case_targets()
    assert len(cases) == len(EVAL_SITES) * len(SEASONS) * len(FAULT_CASES) == 16
    assert "eval_family_v1/chicago/july/chiller_trip" in cases
    assert not set(cases) & set(tune_rule_v2.targets())  # `--target all` stays the published targets
    assert all(tune_rule_v2.tuning_seeds(c) == (1000, 1001) for c in cases)
    assert not set(tune_rule_v2.tuning_seeds(cases[0])) & set(range(100))  # never an evaluation seed


def test_a_case_target_tunes_on_its_own_case_and_the_familys_tuning_seeds(monkeypatch):
    monkeypatch.setattr(tune_rule_v2, "GRID", {"supply_c": (20.0, 23.0)})
    monkeypatch.setattr(tune_rule_v2, "REFINE", {"chw_margin_k": (0.0, 2.0)})
    result = tune_rule_v2.tune("eval_family_v1/seattle/july/chiller_trip", workers=1)
    assert result["tuning_seeds"] == [1000, 1001] and result["grid_size"] == 2
    ratio = result["tuning_result"]["objective_ratio"]
    assert ratio == pytest.approx(mean_ratio(result["params"], "seattle", "july", "chiller_trip", (1000, 1001)),
                                  rel=1e-12)
    # Not another case's figures, nor the same case's on other seeds.
    assert ratio != pytest.approx(mean_ratio(result["params"], "phoenix", "july", "chiller_trip", (1000, 1001)))
    assert ratio != pytest.approx(mean_ratio(result["params"], "seattle", "july", "chiller_trip", (0, 1)))


def test_an_unknown_target_is_refused_with_the_known_ones():
    with pytest.raises(KeyError, match="eval_family_v1/<site>"):
        tune_rule_v2.evaluate_parameters({}, "eval_family_v1/mars/july/normal")


def test_writing_a_target_keeps_the_published_entries_byte_for_byte(tmp_path):
    shipped = resources.files("dcops.agents.cooling").joinpath("rule_v2_tuned.json").read_text()
    out = tmp_path / "rule_v2_tuned.json"
    out.write_text(shipped)
    params = dict(RuleV2Controller().parameters(), supply_c=19.5)
    result = {"params": params, "tuning_result": {"objective_ratio": 1.5}, "tuning_seeds": [1000, 1001]}
    replaced = "eval_family_v1/atlanta/july/normal"
    tune_rule_v2.write_tuned({replaced: result, "cooling/zzz_new_task_v1": result}, out)
    old, new = shipped.splitlines(), out.read_text().splitlines()
    # Lines of the old file that changed lie in the replaced entry's block (or are the command line): every
    # other entry, the published ones included, is kept as it was, byte for byte.
    first = old.index(f'    "{replaced}": {{')
    last = min(i for i in range(first, len(old)) if old[i] in ("    }", "    },"))
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            assert all(first <= i <= last or old[i].strip().startswith('"command"') for i in range(i1, i2)), old[i1:i2]
    before, after = json.loads(shipped)["families"], json.loads(out.read_text())["families"]
    assert all(after[target] == before[target] for target in PUBLISHED)
    assert after["cooling/zzz_new_task_v1"]["params"]["supply_c"] == 19.5
    assert RuleV2Controller(**after[replaced]["params"]).supply_c == 19.5
    assert "--target cases" in json.loads(out.read_text())["command"]


def test_every_case_of_the_family_has_its_own_tuned_rule():
    family = RuleV2Controller.tuned("eval_family_v1")
    rules = [RuleV2Controller.tuned(target) for target in tune_rule_v2.case_targets()]
    assert any(rule != family for rule in rules)
