"""The SFT stage of the LLM scheduler: teacher data (``dcops llm-sft-data``) and training (``train-scheduler-sft``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dcops.training.scheduler.sft_data import build_sft_dataset, load_examples


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("sft_data")
    manifest = build_sft_dataset(out, 2, 1, progress=False)
    return out, manifest


def test_the_dataset_is_the_teachers_decisions_on_the_fixed_split(data):
    """Replaying each seed with priority_threshold gives, window by window, the same requests and the same
    answers as the examples; the split is seeds 1000-1001 and 2000, and the manifest counts what the files hold."""
    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.training.scheduler.teacher import scenario_env_kwargs

    out, manifest = data
    entry = manifest["teachers"]["priority_threshold"]
    assert entry["seeds"] == {"train": "1000-1001", "validation": "2000-2000"}
    for split, seeds in (("train", (1000, 1001)), ("validation", (2000,))):
        examples = load_examples(out, "priority_threshold", split)
        assert entry[split]["examples"] == len(examples) > 0
        assert sum(entry[split]["answers"].values()) == len(examples)
        assert {e["seed"] for e in examples} == set(seeds)
        for seed in seeds:
            env = dcops.parallel_env(**scenario_env_kwargs(seed))
            _, infos = env.reset(seed=seed)
            teacher, replayed = PriorityThresholdScheduler(), []
            while env.agents:
                view = infos["scheduler"]["view"]
                decisions = teacher.decide(view)
                replayed += [(view["window"], d["request_id"], d["decision"]) for d in decisions]
                _, _, _, _, infos = env.step({"scheduler": decisions})
            recorded = [(e["window"], e["request_id"], e["completion"].strip()) for e in examples if e["seed"] == seed]
            assert sorted(recorded) == sorted(replayed)
    first = load_examples(out, "priority_threshold", "train")[0]
    assert first["prompt"].endswith("Decision:") and first["completion"] in (" ACCEPT", " REJECT", " DEFER")


def test_a_rerun_replays_only_the_missing_seeds(data, monkeypatch):
    from dcops.training.scheduler import sft_data

    out, _ = data
    before = (out / "priority_threshold_train.jsonl").read_text()
    (out / "shards" / "priority_threshold" / "1001.jsonl").unlink()
    played = []
    original = sft_data.sft_episode
    monkeypatch.setattr(sft_data, "sft_episode", lambda task: played.append(task[1]) or original(task))
    build_sft_dataset(out, 2, 1, progress=False)
    assert played == [1001]
    assert (out / "priority_threshold_train.jsonl").read_text() == before


def test_unknown_teacher_and_a_missing_split_are_named(tmp_path):
    from dcops.training.scheduler.sft import SFTSchedulerConfig

    with pytest.raises(ValueError, match="teachers: unknown"):
        build_sft_dataset(tmp_path, 1, 0, teachers=("oracle",), progress=False)
    with pytest.raises(FileNotFoundError, match="llm-sft-data"):
        load_examples(tmp_path, "priority_threshold", "train")
    with pytest.raises(ValueError, match="max_steps=0"):
        SFTSchedulerConfig(max_steps=0)


def test_the_truth_planner_teaches_from_the_public_prompt(tmp_path):
    """The privileged teacher's answers are allowed words, and its prompts are built like every other."""
    manifest = build_sft_dataset(tmp_path, 1, 0, teachers=("truth_planner",), progress=False)
    examples = load_examples(tmp_path, "truth_planner", "train")
    assert manifest["teachers"]["truth_planner"]["train"]["examples"] == len(examples) > 0
    assert all(e["completion"].strip() in e["allowed"] for e in examples)
    assert not any("true_" in e["prompt"] for e in examples)


def test_sft_steps_on_the_tiny_model_train_save_and_resume(data, tmp_path):
    """Two SFT steps move the adapter off its initialisation (LoRA's B starts at zero), save it with its step,
    log two rows and score the validation examples; --resume continues to the third step."""
    pytest.importorskip("trl")
    from safetensors.torch import load_file

    from dcops.agents.llm.model import tiny_model
    from dcops.training.scheduler.sft import SFTSchedulerConfig, train_sft_scheduler

    folder, _ = data
    config = SFTSchedulerConfig(data=str(folder), out=str(tmp_path / "run"), model="tiny", max_steps=2,
                                batch_size=2, warmup_steps=0, learning_rate=1e-2, lora_r=2, lora_alpha=4,
                                save_steps=1, validation_examples=4, progress=False)
    model, tokenizer = tiny_model(seed=0)
    record = train_sft_scheduler(config, model=model, tokenizer=tokenizer)
    run = tmp_path / "run"
    assert record["steps_done"] == 2 and (run / "adapter" / "STEP").read_text().strip() == "2"
    tensors = load_file(str(run / "adapter" / "adapter_model.safetensors"))
    assert any(float(t.abs().max()) > 0 for name, t in tensors.items() if "lora_B" in name)
    rows = (run / "log.csv").read_text().splitlines()
    assert rows[0].startswith("step,loss") and len(rows) == 3
    accuracy = record["validation_accuracy"]
    assert accuracy["examples"] == 4 and 0.0 <= accuracy["accuracy"] <= 1.0
    assert sum(accuracy["confusion"].values()) == 4
    summary = json.loads((run / "summary.json").read_text())
    assert summary["config"]["max_steps"] == 2 and summary["prompt_tokens"]["max"] < 320

    config.max_steps = 3
    model, tokenizer = tiny_model(seed=0)
    again = train_sft_scheduler(config, resume=True, model=model, tokenizer=tokenizer)
    assert again["steps_done"] == 3 and (run / "adapter" / "STEP").read_text().strip() == "3"

    from dcops.training.scheduler.sft_report import read_sft_log, write_sft_report

    assert [int(r["step"]) for r in read_sft_log(run)] == [1, 2, 3]
    png, md = write_sft_report(run, tmp_path / "report", command="dcops train-scheduler-sft --model tiny")
    text = md.read_text()
    assert png.stat().st_size > 1000 and "`dcops train-scheduler-sft --model tiny`" in text
    expected = f"| with the adapter (step 3) | {again['validation_accuracy']['accuracy']:.3f} | 4 |"
    assert expected in text


def test_the_command_names_a_bad_option_before_any_work(tmp_path):
    for args, message in ((["--model", "no/such/model/here"], "--model"), (["--max-steps", "0"], "max_steps=0"),
                          (["--resume"], "--resume: no checkpoint")):
        result = subprocess.run([sys.executable, "-m", "dcops.cli", "train-scheduler-sft", "--data", str(tmp_path),
                                 "--out", str(tmp_path / "run"), *args], capture_output=True, text=True, timeout=120)
        assert result.returncode != 0 and message in result.stderr, result.stderr
