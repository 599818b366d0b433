"""TRL's environment path: GRPOTrainer(environment_factory=ClusterSchedulingEnv) against a live dcops server.

One GRPO step of the tiny model (decoding under the answer grammar of ``conftest.answering_tiny_model``, its
answers wrapped as ``answer_window`` tool calls) on two-window episodes served by a real server process: every
rollout plays its episode window by window through the tool, the rewards are the server's, and the group's
rewards differ, so the gradient is not zero.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

OPTIONS = {"n_windows": 2, "max_requests_per_team": 1}


def test_an_episode_is_played_window_by_window_through_the_tool(dcops_server):
    from dcops.training.scheduler.trl_env import ClusterSchedulingEnv

    env = ClusterSchedulingEnv(dcops_server, options=OPTIONS)
    first = env.reset(seed=3, prompt="ignored")
    assert "# Now\n## Window 0 (windows 0-1" in first and first.rstrip().endswith("Answer:")
    view = env._view
    answer = "{" + ", ".join(f'"{r["request_id"]}": {{"decision": "REJECT"}}' for r in view["pending"]) + "}"
    reply = env.answer_window(answer)
    assert reply.startswith("Window reward ") and "## Window 1 (windows 0-1" in reply
    assert env.episode.turns[0].format_ok and env.episode.turns[0].by_model
    reward = env.get_reward()  # plays window 1 with an empty answer
    assert env.episode.done and [t.by_model for t in env.episode.turns] == [True, False]
    assert env.episode.turns[1].format_term == pytest.approx(-0.1 * min(5, env.episode.turns[1].n_invalid))
    assert env.client.state().total_reward == pytest.approx(env.episode.server_return)
    assert reward == pytest.approx(env.episode.server_return + sum(t.format_term for t in env.episode.turns))
    with pytest.raises(ValueError, match="episode is over"):
        env.answer_window("{}")
    # A pooled instance starts afresh on reset; the same public seed gives the same episode.
    env.reset(seed=3)
    assert env.episode.turns == [] and env._view["pending"] == view["pending"]


def test_the_only_tool_trl_sees_is_answer_window():
    import inspect

    from dcops.training.scheduler.trl_env import ClusterSchedulingEnv

    public = [name for name, _ in inspect.getmembers(ClusterSchedulingEnv, predicate=inspect.isfunction)
              if not name.startswith("_")]
    assert sorted(public) == ["answer_window", "get_reward", "reset"]
    from transformers.utils import get_json_schema

    schema = get_json_schema(ClusterSchedulingEnv.answer_window)
    assert schema["function"]["parameters"]["required"] == ["answer"]


def test_grpo_with_environment_factory_trains_on_served_episodes(tmp_path, dcops_server, answering_tiny,
                                                                 monkeypatch):
    import torch
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer

    from dcops.training.scheduler.grpo import score_only_completion_tokens
    from dcops.training.scheduler.trl_env import ClusterSchedulingEnv, episode_dataset, use_tool_chat_template

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch.manual_seed(0)
    model, tokenizer = answering_tiny(seed=0, tool_call="answer_window")
    tokenizer.padding_side = "left"
    assert use_tool_chat_template(tokenizer)
    envs: list[ClusterSchedulingEnv] = []

    def factory() -> ClusterSchedulingEnv:
        env = ClusterSchedulingEnv(dcops_server, options=OPTIONS)
        envs.append(env)
        return env

    args = GRPOConfig(
        output_dir=str(tmp_path / "run"), seed=0, max_steps=1, per_device_train_batch_size=4, num_generations=4,
        max_completion_length=2048, max_tool_calling_iterations=3, temperature=1.0, learning_rate=5e-3, beta=0.0,
        logging_steps=1, save_strategy="no", report_to="none", disable_tqdm=True, lr_scheduler_type="constant",
        dataloader_num_workers=0, use_cpu=True,
    )
    trainer = GRPOTrainer(model=model, args=args, train_dataset=episode_dataset([11, 12]),
                          processing_class=tokenizer, environment_factory=factory,
                          peft_config=LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                 task_type="CAUSAL_LM"))
    with score_only_completion_tokens():
        trainer.train()

    logs = [row for row in trainer.state.log_history if "reward" in row]
    assert len(logs) == 1
    (log,) = logs
    # The probe instance TRL makes first seeds its pool, which grows to the batch's 4 concurrent rollouts.
    used = envs[:4]
    assert len(envs) == 4 and all(env.episodes_started == 1 for env in used)
    for env in used:
        episode = env.episode
        assert episode.done and len(episode.turns) == OPTIONS["n_windows"]
        assert episode.model_turns == OPTIONS["n_windows"], "the model did not answer every window by the tool"
        # The reward is the server's: its own running total of the episode, plus the format terms.
        assert env.client.state().total_reward == pytest.approx(episode.server_return, abs=1e-6)
    assert log["rewards/ClusterSchedulingEnv/mean"] == pytest.approx(
        sum(env.episode.reward for env in used) / 4, abs=1e-4)
    assert log["tools/call_frequency"] >= OPTIONS["n_windows"]
    assert math.isfinite(log["loss"])
    assert log["reward_std"] > 0, "the group's rollouts all got the same reward"
    assert log["grad_norm"] > 0
