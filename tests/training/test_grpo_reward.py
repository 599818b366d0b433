"""GRPO pieces without a model: window-state snapshots, the environment reward, the report, the command line."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dcops
from dcops.agents.llm.prompt import format_answer
from dcops.agents.schedulers import BASELINES
from dcops.cli import build_parser, main
from dcops.training.scheduler.commands import parse_int_list
from dcops.training.scheduler.grpo import GRPOSchedulerConfig
from dcops.training.scheduler.report import first_last_change, moving_average, read_log
from dcops.training.scheduler.reward import FormatTerms, SchedulerReward
from dcops.training.scheduler.states import build_window_states

ENV = {"max_requests_per_team": 2}
SEED, WINDOW = 1000, 2


@pytest.fixture(scope="module")
def states():
    return build_window_states(ENV, [SEED, SEED + 1], windows=[0, WINDOW])


def _replay_reward(decisions_of_view) -> float:
    """Play SEED with the baseline up to WINDOW, then step with ``decisions_of_view(view)``."""
    env = dcops.parallel_env(**ENV)
    _, infos = env.reset(seed=SEED)
    baseline = BASELINES["priority_threshold"]()
    for _ in range(WINDOW):
        _, _, _, _, infos = env.step({"scheduler": baseline.decide(infos["scheduler"]["view"])})
    _, rewards, _, _, _ = env.step({"scheduler": decisions_of_view(infos["scheduler"]["view"])})
    return float(rewards["scheduler"])


def test_a_snapshot_restores_exactly_the_replayed_state(states):
    state = states[f"{SEED}:{WINDOW}"]
    assert state.view["window"] == WINDOW and state.view["pending"]
    decide = BASELINES["earliest_deadline"]().decide
    first, second = state.restore(), state.restore()
    r1 = first.step({"scheduler": decide(state.view)})[1]["scheduler"]
    r1_again = first.step({"scheduler": []})[1]["scheduler"]  # moves `first` on; `second` must not follow
    r2 = second.step({"scheduler": decide(state.view)})[1]["scheduler"]
    assert r1 == r2 == pytest.approx(_replay_reward(decide), abs=0)
    assert math.isfinite(r1_again)


def test_states_reject_bad_arguments():
    with pytest.raises(ValueError, match="windows"):
        build_window_states(ENV, [0], windows=[99])
    with pytest.raises(ValueError, match="baseline"):
        build_window_states(ENV, [0], baseline="nope")
    with pytest.raises(KeyError, match="no window state"):
        build_window_states(ENV, [0], windows=[0])["5:5"]


def test_a_well_formed_answer_earns_the_environment_reward_plus_the_bonus(states):
    key = f"{SEED}:{WINDOW}"
    view = states[key].view
    decide = BASELINES["carbon_greedy"]().decide
    text = format_answer(decide(view)) + "\n\n# Example\nwhatever the base model writes next"
    scored = SchedulerReward(states).score(text, key)
    assert scored.format_ok and scored.n_invalid == 0
    assert scored.env_reward == pytest.approx(_replay_reward(decide), abs=0)
    assert scored.reward == pytest.approx(scored.env_reward + 0.05)


def test_garbage_gets_the_default_decisions_and_the_capped_penalty(states):
    from dcops.cluster.decisions import default_decision

    key = f"{SEED}:{WINDOW}"
    view = states[key].view
    scored = SchedulerReward(states).score("I think we should accept everything!", key)
    n = len(view["pending"])
    assert not scored.format_ok and scored.n_invalid == n
    assert scored.format_term == pytest.approx(-0.10 * min(n, 5))
    defaults = [default_decision(r["request_id"], WINDOW, view["n_windows"]).as_dict() for r in view["pending"]]
    assert scored.env_reward == pytest.approx(_replay_reward(lambda v: defaults), abs=0)


def test_a_longer_horizon_adds_the_baseline_continuation(states):
    key = f"{SEED}:{WINDOW}"
    text = format_answer(BASELINES["priority_threshold"]().decide(states[key].view))
    one = SchedulerReward(states, horizon=1).score(text, key)
    three = SchedulerReward(states, horizon=3).score(text, key)
    env = states[key].restore()
    baseline = BASELINES["priority_threshold"]()
    total, view = 0.0, states[key].view
    for _ in range(3):
        _, rewards, _, _, infos = env.step({"scheduler": baseline.decide(view)})
        total += rewards["scheduler"]
        view = infos["scheduler"]["view"]
    assert three.env_reward == pytest.approx(total)
    assert one.env_reward != pytest.approx(total)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.text(max_size=300), st.builds(
    lambda ids, kinds: "{" + ",".join(f'"{i}": {{"decision": "{k}", "defer_to_window": 3}}'
                                      for i, k in zip(ids, kinds, strict=False)) + "}",
    st.lists(st.sampled_from(["r0001", "r0002", "r0003", "r0004", "rX"]), max_size=8),
    st.lists(st.sampled_from(["ACCEPT", "REJECT", "DEFER", "maybe"]), max_size=8))))
def test_any_completion_gets_a_bounded_reward_and_a_group_is_scored_alike(states, text):
    key = f"{SEED}:0"
    reward = SchedulerReward(states)
    logged = {}
    values = reward(prompts=["p"] * 2, completions=[text, text], state_key=[key, key],
                    log_metric=lambda name, value: logged.__setitem__(name, value))
    assert values[0] == values[1]
    assert -1.10 - 0.50 - 1e-9 <= values[0] <= 0.65 + 0.05 + 1e-9
    assert 0.0 <= logged["format_failure_rate"] <= 1.0
    assert logged["env_reward"] + logged["format_term"] == pytest.approx(values[0])


def test_reward_arguments_are_checked(states):
    with pytest.raises(ValueError, match="horizon"):
        SchedulerReward(states, horizon=0)
    with pytest.raises(ValueError, match="state_key"):
        SchedulerReward(states)(prompts=["p"], completions=["x"], state_key=[])
    with pytest.raises(ValueError, match="format_bonus"):
        FormatTerms(format_bonus=-1)
    with pytest.raises(ValueError, match="num_generations"):
        GRPOSchedulerConfig(num_generations=1)
    with pytest.raises(ValueError, match="model"):
        GRPOSchedulerConfig(model="")
    assert GRPOSchedulerConfig(model="Qwen/Qwen3-0.6B").model == "Qwen/Qwen3-0.6B"  # resolved when loaded


def test_a_model_that_cannot_be_found_offline_stops_the_command_naming_the_option(tmp_path, capsys):
    with pytest.raises(SystemExit, match="--model: .*not a model folder"):
        main(["train-scheduler", "--model", str(tmp_path / "missing"), "--out", str(tmp_path / "run")])
    assert not (tmp_path / "run").exists()


def test_stop_tokens_end_the_answer_but_not_its_lines():
    from dcops.agents.llm.model import load_tokenizer
    from dcops.training.scheduler.grpo import default_stop_strings, stop_token_ids

    tokenizer = load_tokenizer()
    ids = set(stop_token_ids(tokenizer, default_stop_strings()))
    answer = format_answer([{"request_id": "r0001", "decision": "ACCEPT"},
                            {"request_id": "r0002", "decision": "DEFER", "defer_to_window": 3}])
    assert not ids & set(tokenizer(answer, add_special_tokens=False)["input_ids"])
    assert ids & set(tokenizer(answer + "\n\n# Example", add_special_tokens=False)["input_ids"])


def test_first_last_change_and_moving_average():
    rising = [0.0] * 10 + [1.0 + 0.01 * (i % 3) for i in range(10)]
    change = first_last_change(rising, 10)
    assert change.significant and change.ci_low > 0.9
    flat = [0.1, -0.1] * 10
    assert not first_last_change(flat, 10).significant
    # Welch's interval, by the textbook formula (unequal variances, Welch–Satterthwaite degrees of freedom)
    from scipy import stats

    a, b = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 7.0, 11.0]
    va, vb = stats.tvar(a) / 4, stats.tvar(b) / 4
    dof = (va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 3)
    half = stats.t.ppf(0.975, dof) * math.sqrt(va + vb)
    welch = first_last_change(a + b, 4)
    assert welch.diff == pytest.approx(3.5)
    assert (welch.ci_low, welch.ci_high) == pytest.approx((3.5 - half, 3.5 + half))
    assert moving_average([1.0, 3.0, math.nan, 5.0], 2) == [1.0, 2.0, 3.0, 5.0]
    with pytest.raises(ValueError, match="at least 4"):
        first_last_change([1.0, 2.0], 10)


def _write_log(run, n):
    run.mkdir(parents=True)
    rows = [{"step": i + 1, "reward": 0.1 * i, "env_reward": 0.1 * i - 0.05, "format_failure_rate": 1 - i / n,
             "format_term": -0.1, "invalid_per_completion": 1.0, "kl": 0.001 * i, "loss": 0.0, "step_s": 20.0,
             "wall_s": 20.0 * (i + 1)} for i in range(n)]
    (run / "log.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (run / "config.json").write_text(json.dumps({"config": {"model": "gemma", "max_steps": n,
                                                            "train_seeds": [1000, 1001]}, "states": 12}))


def test_plot_only_writes_the_curve_and_report_from_a_log(tmp_path):
    run = tmp_path / "run"
    _write_log(run, 24)
    assert main(["train-scheduler", "--plot-only", str(run), "--report-dir", str(tmp_path / "rep"),
                 "--command", "dcops train-scheduler --steps 24"]) == 0
    md = (tmp_path / "rep" / "grpo_training.md").read_text()
    assert "steps done: **24** of 24" in md and "dcops train-scheduler --steps 24" in md
    assert "| reward (env + format) | +0.450 | +1.850 | +1.400" in md
    assert (tmp_path / "rep" / "grpo_curve.png").stat().st_size > 10_000
    assert len(read_log(run)) == 24


def test_command_line_arguments():
    assert parse_int_list("1000-1003,7") == (1000, 1001, 1002, 1003, 7)
    with pytest.raises(Exception, match="integers"):
        parse_int_list("5-2")
    args = build_parser().parse_args(["train-scheduler", "--env", '{"max_requests_per_team": 2}', "--steps", "3",
                                      "--use-vllm", "--vllm-mode", "server"])
    assert args.env == {"max_requests_per_team": 2} and args.steps == 3 and args.use_vllm
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train-scheduler", "--env", "[1]"])


def test_scored_completions_are_logged_with_their_step(states, tmp_path):
    from types import SimpleNamespace

    key = f"{SEED}:{WINDOW}"
    good = format_answer(BASELINES["priority_threshold"]().decide(states[key].view))
    reward = SchedulerReward(states, completions_log=tmp_path / "completions.jsonl")
    values = reward(prompts=["p", "p"], completions=[good, "nope"], state_key=[key, key],
                    trainer_state=SimpleNamespace(global_step=4))
    lines = [json.loads(x) for x in (tmp_path / "completions.jsonl").read_text().splitlines()]
    assert [x["step"] for x in lines] == [5, 5] and [x["state_key"] for x in lines] == [key, key]
    assert [x["format_ok"] for x in lines] == [True, False] and [x["text"] for x in lines] == [good, "nope"]
    assert [x["reward"] for x in lines] == values


def test_bf16_on_a_cpu_only_machine_asks_transformers_to_train_on_the_cpu(tmp_path, monkeypatch):
    """transformers refuses ``bf16=True`` without a GPU unless ``use_cpu`` is set; CPUs with bf16 units
    (avx512_bf16, AMX) train about 1.5x faster with it (README, GRPO)."""
    import dcops.training.scheduler.grpo as grpo

    monkeypatch.setattr(grpo, "_cuda_available", lambda: False)
    config = grpo.GRPOSchedulerConfig(model="tiny", out=str(tmp_path))
    args = grpo.grpo_arguments(config, tmp_path, bf16=True)
    assert args.bf16 and args.use_cpu
    assert not grpo.grpo_arguments(config, tmp_path, bf16=False).use_cpu
