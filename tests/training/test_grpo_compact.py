"""The GRPO stage on compact prompts: counterfactual returns (``dcops llm-counterfactual``) and the trainer
(``dcops train-scheduler-grpo-compact``)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from dcops.training.scheduler.counterfactual import build_counterfactual_dataset, gain_of, load_rows


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("cf_data")
    manifest = build_counterfactual_dataset(out, 1, 1, progress=False)
    return out, manifest


def _replay(seed: int, change: tuple[int, str, str] | None) -> float:
    """The episode's score with priority_threshold, one answer changed (window, request id, word), played from
    reset without any copy: the check of the copies the data command branches from."""
    import dcops
    from dcops.agents.llm.compact import to_decision
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.training.scheduler.teacher import scenario_env_kwargs

    env = dcops.parallel_env(**scenario_env_kwargs(seed))
    _, infos = env.reset(seed=seed)
    teacher = PriorityThresholdScheduler()
    while env.agents:
        view = infos["scheduler"]["view"]
        decisions = teacher.decide(view)
        decisions = list(decisions.get("decisions", [])) if isinstance(decisions, dict) else list(decisions)
        if change is not None and view["window"] == change[0]:
            decisions = [d for d in decisions if d["request_id"] != change[1]] + [to_decision(change[1], change[2], view)]
        _, _, _, _, infos = env.step({"scheduler": decisions})
    return float(infos["scheduler"]["episode"]["score"])


def test_q_is_the_episode_score_with_that_one_answer_changed(data):
    """Q(teacher's answer) is the teacher's own episode score, and Q of a changed answer equals a replay from
    reset with that answer changed (the branch copies leak nothing between branches); the manifest counts rows."""
    out, manifest = data
    rows = load_rows(out, "train")
    assert manifest["splits"]["train"]["rows"] == len(rows) > 0
    assert {r["seed"] for r in rows} == {1000}
    factual = _replay(1000, None)
    assert all(r["q"][r["teacher"]] == pytest.approx(factual, abs=1e-12) for r in rows)
    assert manifest["splits"]["train"]["teacher_mean_score"] == pytest.approx(factual, abs=1e-12)
    changed = [r for r in rows if gain_of(r) > 1e-6][:2] + [r for r in rows if gain_of(r) == 0 and len(set(r["q"].values())) > 1][:1]
    assert changed
    for row in changed:
        for word in row["allowed"]:
            if word != row["teacher"]:
                assert row["q"][word] == pytest.approx(_replay(1000, (row["window"], row["request_id"], word)), abs=1e-12)
    assert all(set(r["q"]) == set(r["allowed"]) and r["prompt"].endswith("Decision:") for r in rows)
    assert all("DEFER" not in r["allowed"] for r in rows if r["window"] == 7)


def test_a_rerun_replays_only_the_missing_seeds(data, monkeypatch):
    from dcops.training.scheduler import counterfactual

    out, _ = data
    before = (out / "validation.jsonl").read_text()
    (out / "shards" / "2000.jsonl").unlink()
    played = []
    original = counterfactual.counterfactual_episode
    monkeypatch.setattr(counterfactual, "counterfactual_episode", lambda seed: played.append(seed) or original(seed))
    build_counterfactual_dataset(out, 1, 1, progress=False)
    assert played == [2000]
    assert (out / "validation.jsonl").read_text() == before


def _row(q: dict[str, float], teacher: str = "ACCEPT") -> dict:
    return {"prompt": "x Decision:", "allowed": list(q), "teacher": teacher, "q": q}


def test_advantages_are_centred_per_group_and_scaled_once_for_the_run():
    from dcops.training.scheduler.grpo_compact import centred, default_advantage_scale, spread

    a = _row({"ACCEPT": 0.2, "REJECT": 0.1, "DEFER": 0.3})
    b = _row({"ACCEPT": 0.5, "REJECT": 0.5})
    np.testing.assert_allclose(centred(a), [0.0, -0.1, 0.1], atol=1e-12)
    np.testing.assert_allclose(centred(b), [0.0, 0.0])
    assert spread(a) == pytest.approx(0.2) and spread(b) == 0
    values = np.array([0.0, -0.1, 0.1, 0.0, 0.0])
    assert default_advantage_scale([a, b]) == pytest.approx(values.std())
    assert default_advantage_scale([b]) == 1.0


def test_the_target_maximises_the_kl_leashed_advantage_over_the_group():
    """π* = argmax Σ π Â − β KL(π ‖ π_ref) over the simplex: no random distribution scores higher, and an answer
    overtakes the reference's favourite exactly when its advantage gap beats β times the log-odds."""
    import torch

    from dcops.training.scheduler.grpo_compact import mirror_target

    rng = np.random.default_rng(0)
    for _ in range(50):
        ref = torch.log_softmax(torch.tensor(rng.normal(0, 4, 3)), 0)
        adv, beta = rng.normal(0, 1, 3), float(rng.uniform(0.05, 2.0))
        target = mirror_target(ref, adv, beta)

        def value(p, adv=adv, beta=beta, ref=ref):
            p = torch.as_tensor(p, dtype=torch.float64)
            return float((p * torch.as_tensor(adv)).sum() - beta * (p * (p.log() - ref)).sum())

        best = value(target)
        for p in rng.dirichlet(np.ones(3), 200):
            assert value(p) <= best + 1e-9
    ref = torch.log(torch.tensor([1 - 2e-4, 1e-4, 1e-4], dtype=torch.float64))
    log_odds = float(ref[0] - ref[1])
    for gap, flips in ((0.1 * log_odds - 0.05, False), (0.1 * log_odds + 0.05, True)):
        target = mirror_target(ref, np.array([0.0, gap, -1.0]), 0.1)
        assert (int(target.argmax()) == 1) is flips


def test_bad_settings_name_the_field():
    from dcops.training.scheduler.grpo_compact import CompactGRPOConfig

    for kwargs, field in (({"max_steps": 0}, "max_steps"), ({"learning_rate": 0.0}, "learning_rate"),
                          ({"advantage_scale": -1.0}, "advantage_scale"), ({"batch_size": 0}, "batch_size"),
                          ({"kl_beta": 0.0}, "kl_beta")):
        with pytest.raises(ValueError, match=field):
            CompactGRPOConfig(**kwargs)


def test_answer_logprobs_equal_the_schedulers_own_scores():
    """The differentiable scores the trainer uses are the ``sft`` scheduler's log-likelihoods (its KV-cached
    scorer), for two- and three-answer rows, batched together."""
    import torch

    from dcops.agents.llm.backends import CompactLoglikBackend
    from dcops.agents.llm.model import tiny_model
    from dcops.training.scheduler.grpo_compact import answer_logprobs, word_token_ids

    model, tokenizer = tiny_model(seed=3)
    rows = [_row({"ACCEPT": 0.0, "REJECT": 0.0, "DEFER": 0.0}) | {"prompt": "Rules: be brief.\nRequest r1 Decision:"},
            _row({"ACCEPT": 0.0, "REJECT": 0.0}) | {"prompt": "Window 7 of 8. Request r2, priority HIGH. Decision:"}]
    words = word_token_ids(tokenizer, ["ACCEPT", "REJECT", "DEFER"])
    with torch.no_grad():
        values = answer_logprobs(model, tokenizer, rows, words)
    backend = CompactLoglikBackend(model, tokenizer)
    for row, got in zip(rows, values, strict=True):
        expected = backend.word_scores(row["prompt"], tuple(row["allowed"]))
        np.testing.assert_allclose(got.numpy(), [expected[w] for w in row["allowed"]], rtol=1e-4, atol=1e-4)


def test_training_moves_the_policy_towards_the_better_answer(tmp_path, monkeypatch):
    """On rows where REJECT beats the teacher's ACCEPT (and DEFER) by a wide margin, a few steps raise
    log π(REJECT) on them, and more than DEFER's, the log and summary are written, and a resumed run continues from the saved step."""
    import torch
    from peft import LoraConfig, get_peft_model

    from dcops.agents.llm.model import tiny_model
    from dcops.training.scheduler import grpo_compact
    from dcops.training.scheduler.grpo_compact import (
        CompactGRPOConfig,
        answer_logprobs,
        train_compact_grpo,
        word_token_ids,
    )

    base, tokenizer = tiny_model(seed=1)
    start = tmp_path / "start"
    get_peft_model(copy.deepcopy(base), LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                   task_type="CAUSAL_LM")).save_pretrained(str(start))
    data = tmp_path / "data"
    data.mkdir()
    rows = [_row({"ACCEPT": 0.10, "REJECT": 0.30, "DEFER": 0.10}) | {"prompt": f"Request r{i}, priority LOW. Decision:"}
            for i in range(4)]
    for split in ("train", "validation"):
        (data / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = CompactGRPOConfig(data=str(data), out=str(tmp_path / "run"), init_adapter=str(start), model="tiny",
                               max_steps=6, batch_size=4, learning_rate=3e-3, kl_beta=0.01, save_steps=3,
                               validation_rows=4, bf16=False)

    def load(config, resume_adapter):
        return grpo_compact._load_with(copy.deepcopy(base), tokenizer, config, resume_adapter)

    monkeypatch.setattr(grpo_compact, "_load", load)  # the tiny base model, seeded
    summary = train_compact_grpo(config)
    assert summary["steps_done"] == 6
    log = (tmp_path / "run" / "log.csv").read_text().splitlines()
    assert log[0].split(",")[0] == "step" and len(log) == 7
    model, _, _ = load(config, tmp_path / "run" / "adapter")
    words = word_token_ids(tokenizer, ["ACCEPT", "REJECT", "DEFER"])
    with torch.no_grad():
        trained = torch.log_softmax(answer_logprobs(model, tokenizer, rows[:1], words)[0], 0)
        model.set_adapter("reference")
        initial = torch.log_softmax(answer_logprobs(model, tokenizer, rows[:1], words)[0], 0)
    moved = (trained - initial).numpy()  # log π − log π_ref per answer: ACCEPT, REJECT, DEFER
    assert moved[1] > 0.3 and moved[1] > moved[2] + 0.3 and moved[0] <= 1e-6
    assert summary["validation_after"]["mean_gain_over_teacher"] >= summary["validation_before"]["mean_gain_over_teacher"]
    with pytest.raises(ValueError, match="out: .* already holds a run"):
        train_compact_grpo(config)
    step_file = tmp_path / "run" / "adapter" / "STEP"
    step_file.write_text("3\n")  # as if killed between writing state.pt and the adapter
    with pytest.raises(ValueError, match="at step 3 but state.pt at step 6"):
        train_compact_grpo(config, resume=True)
    step_file.write_text("6\n")
    with pytest.raises(ValueError, match="kl_beta: the run in .* was started with 0.01"):
        train_compact_grpo(CompactGRPOConfig(**{**config.__dict__, "kl_beta": 0.5}), resume=True)
    resumed = train_compact_grpo(CompactGRPOConfig(**{**config.__dict__, "max_steps": 8}), resume=True)
    assert resumed["steps_done"] == 8
    assert len((tmp_path / "run" / "log.csv").read_text().splitlines()) == 9
    from dcops.training.scheduler.grpo_compact_report import write_grpo_compact_report

    png, md = write_grpo_compact_report(tmp_path / "run", tmp_path / "report", command="dcops x --model tiny",
                                        evaluation="## Episodes\n\nrow\n")
    text = md.read_text()
    assert png.stat().st_size > 1000 and "`dcops x --model tiny`" in text and text.rstrip().endswith("row")
    after = resumed["validation_after"]
    assert f"| after GRPO | 4 | {after['best_agreement']:.3f} |" in text
    assert "Steps logged: 8" in text


def test_the_command_refuses_bad_options_before_any_work(tmp_path):
    from dcops.cli import main

    with pytest.raises(SystemExit, match="kl_beta"):
        main(["train-scheduler-grpo-compact", "--data", str(tmp_path), "--kl-beta", "0", "--model", "tiny"])
    with pytest.raises(SystemExit, match="data: .* no train.jsonl"):
        main(["train-scheduler-grpo-compact", "--data", str(tmp_path), "--out", str(tmp_path / "run"), "--model",
              "tiny"])
    (tmp_path / "train.jsonl").write_text(json.dumps(_row({"ACCEPT": 0.0, "REJECT": 1.0})) + "\n")
    with pytest.raises(SystemExit, match="resume: .* no saved state"):
        main(["train-scheduler-grpo-compact", "--data", str(tmp_path), "--out", str(tmp_path / "run"), "--resume",
              "--model", "tiny"])
    with pytest.raises(SystemExit, match="init_adapter: .* no adapter_config.json"):
        main(["train-scheduler-grpo-compact", "--data", str(tmp_path), "--init-adapter", str(tmp_path / "none"),
              "--out", str(tmp_path / "run"), "--model", "tiny"])
    with pytest.raises(SystemExit, match="--install is for the gemma model"):
        main(["train-scheduler-grpo-compact", "--data", str(tmp_path), "--out", str(tmp_path / "run"), "--install",
              "--model", "tiny"])
    with pytest.raises(SystemExit, match="--evaluation: only with --plot-only"):
        main(["train-scheduler-grpo-compact", "--evaluation", str(tmp_path / "x.md")])
    with pytest.raises(SystemExit, match="--install: not with --plot-only"):
        main(["train-scheduler-grpo-compact", "--plot-only", str(tmp_path), "--install"])
    with pytest.raises(SystemExit, match="--plot-only: .*no log here"):
        main(["train-scheduler-grpo-compact", "--plot-only", str(tmp_path / "none")])
    assert not (tmp_path / "run").exists()


def test_micro_batches_change_the_memory_not_the_step(tmp_path, monkeypatch):
    """One step over 4 prompts in micro-batches of 1 and in one pass of 4 moves the adapter to the same weights."""
    from peft import LoraConfig, get_peft_model
    from safetensors.numpy import load_file

    from dcops.agents.llm.model import tiny_model
    from dcops.training.scheduler import grpo_compact
    from dcops.training.scheduler.grpo_compact import CompactGRPOConfig, train_compact_grpo

    base, tokenizer = tiny_model(seed=2)
    start = tmp_path / "start"
    get_peft_model(copy.deepcopy(base), LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                   init_lora_weights=False, task_type="CAUSAL_LM")
                   ).save_pretrained(str(start))
    data = tmp_path / "data"
    data.mkdir()
    rows = [_row({"ACCEPT": 0.1 * i, "REJECT": 0.3, "DEFER": 0.05 * i}) | {"prompt": f"Request r{i}. Decision:"}
            for i in range(4)]
    (data / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (data / "validation.jsonl").write_text("")
    monkeypatch.setattr(grpo_compact, "_load", lambda config, resume: grpo_compact._load_with(
        copy.deepcopy(base), tokenizer, config, resume))
    weights, losses = [], []
    for micro in (1, 4):
        out = tmp_path / f"run{micro}"
        train_compact_grpo(CompactGRPOConfig(data=str(data), out=str(out), init_adapter=str(start), model="tiny",
                                             max_steps=1, batch_size=4, micro_batch=micro, learning_rate=1e-2,
                                             warmup_steps=1, validation_rows=0, bf16=False))
        weights.append(load_file(str(out / "adapter" / "adapter_model.safetensors")))
        losses.append(float((out / "log.csv").read_text().splitlines()[1].split(",")[1]))
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)  # the batch mean, however it is split
    before = load_file(str(start / "adapter_model.safetensors"))
    assert weights[0].keys() == weights[1].keys() == before.keys()
    moved = 0.0
    for key in before:
        np.testing.assert_allclose(weights[0][key], weights[1][key], rtol=1e-4, atol=1e-6)
        moved = max(moved, float(np.abs(weights[0][key] - before[key]).max()))
    assert moved > 1e-3
