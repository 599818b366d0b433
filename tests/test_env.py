"""``datacenter_ops_v0``: the PettingZoo contract, determinism, pickling, rendering, and no truth leaks."""

from __future__ import annotations

import json
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test

import dcops
from dcops.agents.teams import CooperativeTeam, make_team
from dcops.cluster.requests import Priority, RequestTruth
from dcops.cluster.reward import WINDOW_REWARD_RANGE

ROOT = Path(__file__).resolve().parents[1]


def test_passes_the_pettingzoo_parallel_api_test():
    parallel_api_test(dcops.parallel_env(), num_cycles=1000)


def test_passes_the_parallel_api_test_with_a_cooling_agent_and_a_learning_team():
    env = dcops.parallel_env(cooling="agent", team_kinds=("cooperative", "strategic", "learner"))
    assert env.possible_agents == ["learner_0", "cooling", "scheduler"]
    parallel_api_test(env, num_cycles=100)


def test_only_agents_that_act_are_agents_and_a_scripted_teams_id_is_refused_by_name():
    env = dcops.parallel_env(cooling="rule")
    assert env.possible_agents == ["scheduler"] and env.team_ids == ["team_0", "team_1", "team_2", "team_3"]
    observations, infos = env.reset(seed=0)
    assert set(observations) == set(infos) == {"scheduler"}
    with pytest.raises(ValueError, match=r"unknown agent\(s\) \['team_1'\].*scripted teams take no actions"):
        env.step({"scheduler": [], "team_1": np.zeros(12, dtype=np.int64)})
    with pytest.raises(ValueError, match=r"unknown agent\(s\) \['learner_0'\]"):
        env.step({"learner_0": np.zeros(12, dtype=np.int64)})
    _, rewards, terminations, truncations, infos = env.step({"scheduler": []})  # the refusals changed nothing
    assert set(rewards) == set(terminations) == set(truncations) == set(infos) == {"scheduler"}
    assert infos["scheduler"]["window"] == 1


def test_learner_agents_follow_the_shuffled_learner_teams_and_act_through_them():
    kinds = ("cooperative", "learner", "strategic", "learner")
    env = dcops.parallel_env(cooling="rule", n_windows=3, team_kinds=kinds)
    assert env.possible_agents == ["learner_0", "learner_1", "scheduler"]
    mappings = set()
    for seed in range(6):
        observations, infos = env.reset(seed=seed)
        teams = [infos[f"learner_{k}"]["team"] for k in range(2)]
        assert teams == list(env.learner_team.values()) and len(set(teams)) == 2
        assert all(env.team_kind[team] == "learner" for team in teams)
        assert set(infos["learner_0"]) == {"team", "window", "flags"}  # its own id, never another team's kind
        mappings.add(tuple(teams))
    assert len(mappings) > 1  # the ids move over the kinds; the agent names do not
    # A learner's index says nothing of where the other learner is: learner_0 is the higher id as often as not.
    assert any(a > b for a, b in mappings) and any(a < b for a, b in mappings)
    inflate = np.tile([3, 0, 0], 4)  # inflate every request's priority by 3 levels
    while env.agents:
        _, rewards, _, _, infos = env.step({"scheduler": [], "learner_0": inflate})
        assert set(rewards) == {"learner_0", "learner_1", "scheduler"} and all(-1 <= rewards[a] <= 1 for a in rewards)
        for name, team in env.learner_team.items():  # the flags against its own team, as the scheduler sees them
            assert infos[name]["flags"] == [f for f in infos["scheduler"]["view"]["flags"] if f["team"] == team]
    acted, honest = env.learner_team["learner_0"], env.learner_team["learner_1"]
    assert any("priority_inflation" in tactics for tactics in env.tactics[acted])
    assert not any(env.tactics[honest])  # a learner with no action states honestly


def test_spaces_are_built_once_and_returned_as_the_same_objects():
    env = dcops.parallel_env()
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)


def _dumps(value) -> str:
    def default(o):
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, (np.floating, np.integer)):
            return o.item()
        return str(o)
    return json.dumps(value, default=default, sort_keys=True)


def _play(seed: int, action_seed: int, steps: int = 100, **config) -> list[str]:
    env = dcops.parallel_env(render_mode="ansi", **config)
    for agent in env.possible_agents:
        env.action_space(agent).seed(action_seed)
    trace = []
    obs, infos = env.reset(seed=seed)
    trace.append(_dumps([obs, infos]))
    for _ in range(steps):
        if not env.agents:
            obs, infos = env.reset(seed=seed + 1)
            trace.append(_dumps([obs, infos]))
            continue
        actions = {a: env.action_space(a).sample() for a in env.agents}
        trace.append(_dumps(env.step(actions)) + env.render())
    return trace


def test_whole_episodes_are_identical_from_the_same_seed_and_differ_across_seeds():
    first = _play(seed=12, action_seed=1, steps=20)
    assert first == _play(seed=12, action_seed=1, steps=20)
    assert first != _play(seed=13, action_seed=1, steps=20)


def test_the_environment_pickles_mid_episode_and_resumes_identically():
    env = dcops.parallel_env()
    env.reset(seed=5)
    action = {"scheduler": np.zeros(env.config.max_slots, dtype=np.int64)}
    for _ in range(3):
        env.step(action)
    clone = pickle.loads(pickle.dumps(env))
    while env.agents:
        a, b = env.step(action), clone.step(action)
        assert _dumps(a) == _dumps(b)


def test_render_ansi_shows_the_window_the_plant_and_the_last_reward():
    env = dcops.parallel_env(render_mode="ansi")
    env.reset(seed=0)
    env.step({"scheduler": np.zeros(env.config.max_slots, dtype=np.int64)})
    text = env.render()
    assert "window" in text and "facility" in text and "last window: reward" in text
    assert dcops.parallel_env().render() is None


def test_the_single_agent_scheduler_task_passes_the_gymnasium_checker():
    env = dcops.make_env("cluster/operations")
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and "view" in info


def test_team_ids_are_neutral_and_shuffled_over_the_team_kinds_per_episode():
    env = dcops.parallel_env()
    mappings = set()
    for seed in range(8):
        env.reset(seed=seed)
        mappings.add(tuple(env.team_kind[a] for a in env.team_ids))
    assert len(mappings) > 2
    _, infos = env.reset(seed=0)
    assert {r["team"] for r in infos["scheduler"]["view"]["pending"]} <= set(env.team_ids)


def test_flags_raised_at_the_end_of_a_window_appear_in_the_next_observation():
    env = dcops.parallel_env()
    env.reset(seed=1)
    for _ in range(8):
        obs, _, _, _, infos = env.step({"scheduler": np.zeros(env.config.max_slots, dtype=np.int64)})
        flags = infos["scheduler"]["view"]["flags"]
        if flags:
            break
    assert flags, "seed 1 should raise a flag within the episode"
    team_row = env.team_index[flags[0]["team"]]
    assert obs["scheduler"]["teams"][team_row, 5:9].sum() > 0


def test_structured_and_array_actions_give_the_same_episode():
    codes_env, list_env = dcops.parallel_env(), dcops.parallel_env()
    _, infos = codes_env.reset(seed=9)
    list_env.reset(seed=9)
    rng = np.random.default_rng(0)
    while codes_env.agents:
        pending = [r["request_id"] for r in infos["scheduler"]["view"]["pending"]]
        w = infos["scheduler"]["view"]["window"]
        codes = np.zeros(codes_env.config.max_slots, dtype=np.int64)
        codes[: len(pending)] = rng.integers(0, 2 + (1 if w < 7 else 0), size=len(pending))
        decisions = [{"request_id": rid, "decision": ["ACCEPT", "REJECT", "DEFER"][c], "defer_to_window": w + 1}
                     for rid, c in zip(pending, codes, strict=False)]
        _, a_rewards, _, _, infos = codes_env.step({"scheduler": codes})
        _, b_rewards, _, _, _ = list_env.step({"scheduler": decisions})
        assert a_rewards["scheduler"] == pytest.approx(b_rewards["scheduler"])


def test_invalid_scheduler_input_is_reported_and_penalised_never_raised():
    env = dcops.parallel_env()
    _, infos = env.reset(seed=2)
    pending = [r["request_id"] for r in infos["scheduler"]["view"]["pending"]]
    bad = [{"request_id": pending[0], "decision": "ACCEPT"}] * 3 + [{"request_id": "nope", "decision": "REJECT"}, 42]
    _, rewards, _, _, infos = env.step({"scheduler": bad})
    invalid = infos["scheduler"]["invalid"]
    assert invalid["duplicates"] == [pending[0]] * 2 and invalid["unknown_ids"] == ["nope"]
    assert len(invalid["malformed"]) == 1 and set(invalid["undecided"]) == set(pending[1:])
    assert infos["scheduler"]["reward_terms"]["invalid_penalty"] > 0
    for garbage in (None, "text", np.full(3, np.nan), {"decisions": "x"}, object()):
        _, rewards, _, _, infos = env.step({"scheduler": garbage})
        assert WINDOW_REWARD_RANGE[0] <= rewards["scheduler"] <= WINDOW_REWARD_RANGE[1]
        if not env.agents:
            break


def test_cooling_agent_sets_the_plant_and_is_rewarded_in_its_range():
    env = dcops.parallel_env(cooling="agent")
    obs, _ = env.reset(seed=0)
    assert env.observation_space("cooling").contains(obs["cooling"])
    while env.agents:
        actions = {"scheduler": np.zeros(env.config.max_slots, dtype=np.int64),
                   "cooling": env.action_space("cooling").sample()}
        obs, rewards, _, _, infos = env.step(actions)
        assert -1.5 <= rewards["cooling"] <= 0.0
    assert dcops.parallel_env(cooling="pid").reset(seed=0)


SENTINEL_RUNTIME_H = 1.2345678
SENTINEL_DEADLINE = 7919


class SentinelTeam(CooperativeTeam):
    """Every job's truth carries values that appear nowhere else; its statements are unrelated to them."""

    def draft(self, window, u):
        draft = super().draft(window, u)
        truth = RequestTruth(Priority.LOW, SENTINEL_DEADLINE, True, SENTINEL_RUNTIME_H)
        return type(draft)(draft.job_type, draft.kw, draft.gpus, truth, window)

    def state(self, draft, window, stated, slot, action, u):
        stated.update(duration_h=2.0, priority=3, deadline_window=window + 1, carbon_flexible=False, urgent=False)
        return set()


@pytest.mark.parametrize("game_version", [0, 1])
def test_no_private_truth_reaches_the_scheduler_before_a_job_is_audited(game_version):
    """Version 0 audits completed jobs (runtime, deadline, flexibility); version 1 audits every resolved job,
    its true priority and runtime included (resolution is an audit). Either way the sentinel truth appears only
    in the audits, and only for jobs audited by then."""
    env = dcops.parallel_env(render_mode="ansi", team_kinds=("cooperative", "cooperative"), game_version=game_version,
                             team_factory=lambda kind: SentinelTeam() if kind == "cooperative" else make_team(kind))
    obs, infos = env.reset(seed=3)
    audited: set[str] = set()
    outputs = [(obs, infos, env.render(), set())]
    while env.agents:
        obs, _, _, _, infos = env.step({"scheduler": np.zeros(env.config.max_slots, dtype=np.int64)})
        resolved = {rid for rid, job in env.episode.ledger.jobs.items() if job.outcome is not None}
        outputs.append((obs, infos, env.render(), resolved))
    for obs, infos, rendering, resolved in outputs:
        infos = json.loads(_dumps(infos))
        infos["scheduler"].pop("episode", None)  # the end-of-episode summary may reveal (team kinds)
        view = infos["scheduler"]["view"]
        audits = view.pop("audits")
        audited |= {a["request_id"] for a in audits}
        text = _dumps([obs, infos]) + rendering
        assert not re.search(r"(?<![\d.])(1\.2345678|7919)(?![\d])", text)
        assert "true_priority" not in text and "true_runtime" not in text and "tactic" not in text
        assert "value_gained" not in text and "outcomes" not in text  # truth-derived sums wait for the end
        for audit in audits:
            assert audit["true_deadline_window"] == SENTINEL_DEADLINE
            if game_version == 0:
                assert audit["realised_runtime_h"] == 1.25 and "true_priority" not in audit
            else:
                assert audit["request_id"] in resolved
                assert audit["true_priority"] == "LOW" and audit["true_runtime_h"] == SENTINEL_RUNTIME_H
    assert audited, "some jobs should have completed and been audited"
    with pytest.raises(RuntimeError):
        dcops.parallel_env().episode_truth()


def test_importing_dcops_does_not_import_torch():
    code = "import sys, dcops; dcops.parallel_env(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_the_pettingzoo_quickstart_example_runs():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "pettingzoo_quickstart.py")], capture_output=True,
                         text=True, check=True, cwd=ROOT, timeout=120)
    assert "episode score" in out.stdout


def test_the_text_view_for_language_agents_lists_every_pending_request_and_no_private_field():
    from dcops.cluster.observation import view_to_text

    env = dcops.parallel_env()
    _, infos = env.reset(seed=0)
    view = infos["scheduler"]["view"]
    text = view_to_text(view)
    assert all(r["request_id"] in text for r in view["pending"])
    assert "true_" not in text and "Window 0" in text


def test_ppo_cooling_controller_runs_the_cluster_plant():
    env = dcops.parallel_env(cooling="ppo", faults=())
    env.reset(seed=3)
    while env.agents:
        _, rewards, _, _, infos = env.step({"scheduler": []})
    summary = infos["scheduler"]["episode"]
    assert np.isfinite(summary["score"])
    assert env.controller.name == "ppo"
