"""``dcops.datacenter_ops_v1``: the cluster game in PettingZoo's convention (``env``, ``raw_env``,
``parallel_env``), checked by PettingZoo's own tests unmodified, with ``max_cycles``, ``"human"`` rendering, a
global state and the structured view off by default (the RL entry)."""

from __future__ import annotations

import sys
from functools import partial

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.test import api_test, max_cycles_test, parallel_api_test, render_test, seed_test, state_test
from pettingzoo.test.seed_test import parallel_seed_test
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

import dcops
from dcops import datacenter_ops_v1
from dcops.env import DatacenterOpsEnv

# PettingZoo's tests warn about what they would rather see (Box observations everywhere, agents named
# <name>_<number>, finite bounds): advice for a different kind of game, not failures.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

ACCEPT_ALL = np.zeros(48, dtype=np.int64)  # ACCEPT in every slot
FAST = {"n_windows": 3, "cooling": "rule"}  # PettingZoo's tests play many episodes: short ones, scripted cooling
LEARNERS_AND_COOLING = {"n_windows": 3, "cooling": "agent",
                        "team_kinds": ("cooperative", "learner", "strategic", "learner")}


def test_the_module_gives_pettingzoos_three_constructors():
    assert dcops.datacenter_ops_v1 is datacenter_ops_v1
    parallel = datacenter_ops_v1.parallel_env()
    assert isinstance(parallel, ParallelEnv) and isinstance(parallel, DatacenterOpsEnv)
    assert parallel.metadata["name"] == "datacenter_ops_v1" == datacenter_ops_v1.__name__.rsplit(".", 1)[1]
    raw = datacenter_ops_v1.raw_env()
    assert type(raw) is parallel_to_aec_wrapper and isinstance(raw, AECEnv)
    wrapped = datacenter_ops_v1.env()
    assert isinstance(wrapped, OrderEnforcingWrapper) and isinstance(wrapped.env, parallel_to_aec_wrapper)
    assert wrapped.possible_agents == ["scheduler"]  # the default teams are scripted: not agents
    assert datacenter_ops_v1.env(**LEARNERS_AND_COOLING).possible_agents == [
        "learner_0", "learner_1", "cooling", "scheduler"]
    with pytest.raises(ValueError, match="game_version"):
        datacenter_ops_v1.parallel_env(game_version=0)


def test_importing_dcops_does_not_import_the_module_until_it_is_asked_for():
    import subprocess

    code = "import sys, dcops; print('dcops.env' in sys.modules); dcops.datacenter_ops_v1; print('dcops.env' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


# ------------------------------------------------------------------ PettingZoo's own tests
@pytest.mark.parametrize("config", [FAST, LEARNERS_AND_COOLING, {**FAST, "max_cycles": 2}],
                         ids=["default", "learners_and_cooling_agent", "max_cycles"])
def test_passes_pettingzoos_parallel_api_test(config):
    parallel_api_test(datacenter_ops_v1.parallel_env(**config), num_cycles=20)


@pytest.mark.parametrize("config", [{}, FAST, LEARNERS_AND_COOLING, {**FAST, "max_cycles": 2}],
                         ids=["as_published", "short", "learners_and_cooling_agent", "max_cycles"])
def test_passes_pettingzoos_api_test_on_the_aec_form_unmodified(config):
    # The scheduler, whose observation is a Dict, is the last agent: api_test compares each agent's observation
    # with the first agent's as arrays, and it samples the scheduler's action with its int8 action_mask.
    api_test(datacenter_ops_v1.env(**config), num_cycles=20)


def test_passes_pettingzoos_api_test_on_the_unwrapped_aec_form():
    api_test(datacenter_ops_v1.raw_env(**FAST), num_cycles=20)


# seed_test compares infos with ==, and a short episode's detection summary can hold a NaN precision (a detector
# that flagged nothing), which never equals itself: the default 8 windows at its seed 42 have none.
@pytest.mark.parametrize("config", [{"cooling": "rule"}, LEARNERS_AND_COOLING],
                         ids=["default", "learners_and_cooling_agent"])
def test_passes_pettingzoos_seed_tests(config):
    seed_test(partial(datacenter_ops_v1.env, **config), num_cycles=20)
    parallel_seed_test(partial(datacenter_ops_v1.parallel_env, **config), num_cycles=20)


def test_passes_pettingzoos_max_cycles_test():
    max_cycles_test(datacenter_ops_v1)


def test_passes_pettingzoos_render_test_and_human_mode_prints_the_control_room(capsys):
    render_test(partial(datacenter_ops_v1.env, **FAST))
    assert set(datacenter_ops_v1.env().metadata["render_modes"]) == {"ansi", "human"}
    env = datacenter_ops_v1.parallel_env(render_mode="human")
    env.reset(seed=0)
    capsys.readouterr()
    env.step({"scheduler": ACCEPT_ALL})
    assert env.render() is None
    printed = capsys.readouterr().out
    ansi = datacenter_ops_v1.parallel_env(render_mode="ansi")
    ansi.reset(seed=0)
    ansi.step({"scheduler": ACCEPT_ALL})
    assert printed == ansi.render() + "\n" and "last window: reward" in printed
    with pytest.raises(ValueError, match="render_mode"):
        datacenter_ops_v1.parallel_env(render_mode="rgb_array")


@pytest.mark.parametrize("config", [FAST, LEARNERS_AND_COOLING], ids=["default", "learners_and_cooling_agent"])
def test_passes_pettingzoos_state_test(config):
    state_test(datacenter_ops_v1.env(**config), datacenter_ops_v1.parallel_env(**config), num_cycles=20)


# ------------------------------------------------------------------ state, max_cycles, the AEC form
@pytest.mark.parametrize("config", [{}, {"cooling": "agent"}, LEARNERS_AND_COOLING],
                         ids=["default", "cooling_agent", "learners_and_cooling_agent"])
def test_the_state_is_every_agents_observation_flattened_end_to_end(config):
    env = datacenter_ops_v1.parallel_env(**config)
    with pytest.raises(RuntimeError, match="reset"):
        env.state()
    observations, _ = env.reset(seed=1)
    sizes = [gym.spaces.flatdim(env.observation_space(a)) for a in env.possible_agents]
    assert env.state_space.shape == (sum(sizes),) and env.state_space.dtype == np.float32
    if not config:
        assert env.state_space.shape == (1692,)  # the number in dcops.env's docstring table
        assert env.possible_agents == ["scheduler"]
    for _ in range(3):
        state = env.state()
        assert env.state_space.contains(state)
        pieces = np.split(state, np.cumsum(sizes)[:-1])
        for agent, piece in zip(env.possible_agents, pieces, strict=True):
            expected = gym.spaces.flatten(env.observation_space(agent), observations[agent])
            np.testing.assert_array_equal(piece, expected.astype(np.float32))
        observations, *_ = env.step({"scheduler": ACCEPT_ALL})


def test_max_cycles_truncates_every_agent_and_scores_no_more():
    env = datacenter_ops_v1.parallel_env(max_cycles=3)
    env.reset(seed=2)
    for window in range(3):
        _, _, terminations, truncations, infos = env.step({"scheduler": ACCEPT_ALL})
        assert not any(terminations.values())
        assert all(truncations.values()) == (window == 2)
    assert env.agents == [] and "episode" not in infos["scheduler"]
    with pytest.raises(RuntimeError, match="truncated at max_cycles=3"):
        env.hindsight_bound()
    with pytest.raises(ValueError, match="max_cycles"):
        datacenter_ops_v1.parallel_env(max_cycles=0)


def test_max_cycles_at_or_beyond_the_horizon_changes_nothing():
    def play(**config):
        env = datacenter_ops_v1.parallel_env(**config)
        env.reset(seed=3)
        steps = []
        while env.agents:
            _, rewards, terminations, truncations, _ = env.step({"scheduler": ACCEPT_ALL})
            steps.append((rewards, terminations, truncations))
        return steps, env.episode.score()

    assert play() == play(max_cycles=8) == play(max_cycles=100)


def test_the_aec_form_plays_the_same_episode_as_the_parallel_form():
    parallel = datacenter_ops_v1.parallel_env()
    parallel.reset(seed=4)
    while parallel.agents:
        parallel.step({"scheduler": ACCEPT_ALL})
    aec = datacenter_ops_v1.env()
    aec.reset(seed=4)
    for agent in aec.agent_iter():
        _, _, termination, truncation, _ = aec.last()
        aec.step(None if termination or truncation else
                 ACCEPT_ALL if agent == "scheduler" else aec.action_space(agent).sample())
    assert aec.unwrapped.episode.score() == parallel.episode.score()
    assert aec.unwrapped.episode.window_scores == parallel.episode.window_scores


def test_the_single_agent_cluster_task_prints_in_human_mode(capsys):
    env = dcops.make_env("cluster/operations", render_mode="human")
    env.reset(seed=0)
    env.step(ACCEPT_ALL)
    assert env.render() is None and "datacenter_ops_v1" in capsys.readouterr().out


def test_the_rl_entry_builds_no_structured_view_unless_asked_and_plays_the_same_game():
    rl = datacenter_ops_v1.parallel_env()
    _, infos = rl.reset(seed=5)
    assert not rl.structured_view and rl.posterior is None and "view" not in infos["scheduler"]
    evaluation = dcops.parallel_env()  # the evaluation / language-agent path keeps it on
    _, eval_infos = evaluation.reset(seed=5)
    assert evaluation.structured_view and "gaming_posterior" in next(iter(eval_infos["scheduler"]["view"]["teams"].values()))
    _, opted_in = datacenter_ops_v1.parallel_env(structured_view=True).reset(seed=5)
    assert "view" in opted_in["scheduler"]
    while rl.agents:
        _, rewards, _, _, infos = rl.step({"scheduler": ACCEPT_ALL})
        _, eval_rewards, _, _, eval_infos = evaluation.step({"scheduler": ACCEPT_ALL})
        assert rewards == eval_rewards and "view" not in infos["scheduler"]
    np.testing.assert_equal(infos["scheduler"]["episode"], eval_infos["scheduler"]["episode"])  # NaN == NaN
