"""The constrained LLM placement policy on one canonical scenario with the tiny model: every action valid."""

from __future__ import annotations

import pytest

from dcops.agents.llm.placement import LLMPlacementPolicy, action_texts, placement_prompt
from dcops.cluster.placement.catalog import get_scenario
from dcops.cluster.placement.policy import PlacementPolicy, run_episode


def test_tiny_model_plays_a_canonical_scenario_with_valid_actions_only(tiny):
    model, tokenizer = tiny
    policy = LLMPlacementPolicy(model, tokenizer)
    assert isinstance(policy, PlacementPolicy)
    scenario = get_scenario("deadline_crunch")
    result = run_episode(scenario, policy)
    assert result.metrics.invalid == 0
    assert len(result.history) == result.metrics.ticks > 0
    assert all(record.valid for record in result.history)
    assert any(record.action == "place" for record in result.history) or result.metrics.completed == 0


def test_choices_are_defer_and_the_feasible_placements():
    from dcops.cluster.placement.sim import PlacementSim

    obs = PlacementSim(get_scenario("deadline_crunch")).reset()
    choices = action_texts(obs)
    assert choices[0] == (" defer\n", None)
    assert [c[1] for c in choices[1:]] == [(p.job_id, p.gpu_id) for p in obs.feasible]
    assert placement_prompt(obs).endswith("\nAction:") and obs.dashboard.text() in placement_prompt(obs)


# ------------------------------------------------------------------------------- SFT on the optimum's actions
class _Replay:
    """Plays recorded action texts by tick (defer where none was recorded)."""

    name = "replay"

    def __init__(self, by_tick, defer, place):
        self.by_tick, self.defer, self.place = by_tick, defer, place

    def act(self, observation):
        words = self.by_tick.get(observation.tick, ["defer"])
        return self.defer() if words == ["defer"] else self.place(job_id=words[1], gpu_id=words[3])


def test_the_sft_data_is_the_optimums_play_without_its_clairvoyant_rationale():
    """Replaying the recorded actions (defer where a tick had no other choice) earns exactly the optimum's
    reward on every scenario; every answer is one of its tick's valid actions; no prompt quotes the optimum's
    reward-to-go; the splits are disjoint from each other and from the evaluation's seeds 0-99."""
    from dcops.cluster.placement.actions import Defer, Place
    from dcops.cluster.placement.generator import TRAIN_SEED_START, generate_scenario
    from dcops.cluster.placement.optimum import OptimalPolicy
    from dcops.training.placement.llm_sft import VALIDATION_SEED_START, scenario_examples, split_seeds

    splits = split_seeds(3, 2)
    assert splits == {"train": [TRAIN_SEED_START + i for i in range(3)],
                      "validation": [VALIDATION_SEED_START, VALIDATION_SEED_START + 1]}
    assert not set(range(100)) & set(splits["train"] + splits["validation"])
    for seed in splits["train"]:
        rows = scenario_examples(seed)
        assert rows and all(r["completion"] in r["choices"] and len(r["choices"]) > 1 for r in rows)
        assert not any("reward-to-go" in r["prompt"] or "optimum" in r["prompt"] for r in rows)
        by_tick = {r["tick"]: r["completion"].split() for r in rows}

        scenario = generate_scenario(seed)
        replayed = run_episode(scenario, _Replay(by_tick, Defer, Place)).metrics.total_reward
        assert replayed == pytest.approx(run_episode(scenario, OptimalPolicy(scenario)).metrics.total_reward)


def test_eval_placement_factories_give_each_mode_its_model(tiny, tmp_path):
    """``dcops eval-placement --llm constrained,sft``: the sft policy carries the adapter and writes no rationale,
    the constrained one keeps the base model untouched, and both play a generated scenario validly."""
    import copy

    from peft import LoraConfig, get_peft_model

    from dcops.agents.llm.placement import llm_placement_factories, make_llm_placement_policy
    from dcops.cluster.placement.evaluate import evaluate

    model, tokenizer = tiny
    adapter = tmp_path / "adapter"
    get_peft_model(copy.deepcopy(model), LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj"],
                                                    task_type="CAUSAL_LM")).save_pretrained(str(adapter))
    factories = llm_placement_factories(["constrained", "sft"], adapter=str(adapter), model=model, tokenizer=tokenizer)
    assert list(factories) == ["llm_constrained", "llm_sft"]
    constrained, sft = (factories[name](None) for name in factories)
    assert not any("lora_" in n for n, _ in constrained.model.named_parameters())
    assert any("lora_" in n for n, _ in sft.model.named_parameters()) and sft.rationale is False
    report = evaluate(n_generated=1, factories=factories)
    rows = [r for r in report.rows if r.policy in factories]
    assert rows and all(r.invalid == 0 for r in rows)
    with pytest.raises(ValueError, match="needs adapter="):
        make_llm_placement_policy("sft", model=model, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="only for mode 'sft'"):
        make_llm_placement_policy("constrained", adapter=str(adapter), model=model, tokenizer=tokenizer)
