"""The constrained LLM placement policy on one canonical scenario with the tiny model: every action valid."""

from __future__ import annotations

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
