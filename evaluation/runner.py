"""Run one cell of the matrix (``dcops.evaluation.matrix``) and measure it.

A scheduler cell plays the episode (``dcops.evaluation.cluster_report.run_episode``) and then, for each gaming team of
the mix, the same seed again with that team in honest mode (``dcops.agents.teams.honest_twin_factory``); the
truth planner's cell plays no twin (each would need a plan of its own), so its payoff fields are ``None``.
Metrics (one flat row, JSON-able; units in the names):

- ``score`` (mean window reward, [−1.10, 0.65]) and its terms, each the mean over windows of the unweighted
  term: ``r_throughput`` [−1, 1], ``r_thermal`` [−1, 0], ``r_carbon`` [−1, 1], ``p_invalid`` [0, 0.1];
- ``incident_windows``; ``violation_min_27c`` / ``violation_min_32c``: zone-minutes with a *true* inlet above
  27 °C (ASHRAE recommended) / 32 °C (A1 allowable), summed over zones;
- ``carbon_actual_kg`` against ``carbon_blind_kg``: the env's carbon-blind reference runs the *same* jobs
  (equal completed work) as soon as submitted; ``carbon_saved_pct`` = 100 · (blind − actual) / blind;
- ``value_completed``: true-priority value of work completed, Σ of the positive job scores (on time, or
  unfinished with partial credit; ``dcops.cluster.reward``), value units; ``throughput_value``: the net Σ of
  every job score (what the bound bounds);
- per team (``teams``): its kind, ``value_completed``, ``capacity_share`` (its share of the job energy that
  ran, kW × hours run until completion or the horizon), and for gaming teams ``twin_value_completed``,
  ``twin_capacity_share`` and ``gaming_payoff`` = value completed when misreporting − value completed by its
  honest twin;
- ``strategic_share`` (capacity share of the gaming teams), ``strategic_share_twin`` (the same teams' shares
  when each reports honestly: Σ over gaming teams of the share in its own twin run) and ``fair_share`` (their
  share of teams); per team ``accept_rate`` (share of its requests the scheduler accepted at some window;
  ``twin_accept_rate`` for its twin) and ``gaming_accept_rate`` (over the gaming teams' requests; null if
  none); ``gaming_value_completed`` (Σ over gaming teams);
  ``gaming_payoff`` (sum over the mix's gaming teams; 0 for the honest mix; ``None``, with
  ``strategic_share_twin``, for the truth planner, whose twins are not played);
- oversight counts pooled over the four detectors (``det_tp`` … ``det_honest_n``; ``dcops.oversight``);
- ``invalid_rate``: (invalid decision entries the environment rejected + ``policy_defaulted``) / requests
  pending over the episode; ``policy_defaulted`` counts the requests a policy could not decide validly itself
  and sent the documented default for (a policy reports them as a running count ``n_defaulted``: the LLM
  scheduler's parser defaults every unusable answer entry, so the environment never sees it as invalid);
- ``arrivals_key`` (fingerprint of arrivals and truth: the bound of the same key applies).

The bound cell (scheduler ``hindsight_bound``, mix ``all``) plays the episode once (honest mix,
``reject_all``: arrivals depend on neither) and solves the hindsight MILP: ``bound_value`` (its throughput
value), ``bound_status``, ``arrivals_key``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from dcops.agents.teams.factory import GAMING_KINDS
from dcops.evaluation.matrix import ALL_MIXES, BOUND, MIXES, TRUTH, Cell, env_config, family_of

SOFT_C = 27.0
HARD_C = 32.0
COMPLETED = ("on_time", "unfinished")
DETECTION_FIELDS = ("tp", "fp", "fn", "tn", "honest_fp", "honest_n")

_ENVS: dict[tuple[Any, ...], Any] = {}
_LLM_POLICIES: dict[str, Any] = {}


class CountingPolicy:
    """Wraps a policy and counts the requests it had to decide (the invalid-rate denominator) and those it
    reports as defaulted (``n_defaulted``, module docstring; the wrapped policy may be shared between episodes,
    so only the increase during this episode counts). It is handed the observation too
    (``dcops.evaluation.play.scheduler_action``) and passes it on only to a policy that reads it."""

    reads_observation = True

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.pending = 0
        self.defaulted = 0

    def decide(self, view: dict[str, Any], observation: dict[str, Any] | None = None) -> Any:
        from dcops.evaluation.play import scheduler_action

        self.pending += len(view["pending"])
        before = getattr(self.policy, "n_defaulted", 0)
        decisions = scheduler_action(self.policy, view, observation)
        self.defaulted += getattr(self.policy, "n_defaulted", 0) - before
        return decisions


def _config_kinds(mix: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """Team kinds for ``ClusterConfig`` and a substitution for kinds it does not list yet (``injecting``):
    such a kind is declared as ``strategic`` and the team factory builds the real one."""
    from dcops.cluster.config import ClusterConfig

    kinds = MIXES[next(iter(MIXES)) if mix == ALL_MIXES else mix]
    substitute: dict[str, str] = {}
    for kind in set(kinds):
        try:
            ClusterConfig(team_kinds=(kind,))
        except ValueError:
            if "strategic" in kinds or substitute:
                raise ValueError(
                    f"mix {mix!r}: kind {kind!r} needs the 'strategic' placeholder, already used"
                ) from None
            substitute["strategic"] = kind
    config_kinds = tuple("strategic" if k in substitute.values() else k for k in kinds)
    return config_kinds, substitute


def env_kwargs(mix: str, condition: str, n_windows: int = 8, game_version: int = 1,
               honest_agents: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``dcops.parallel_env`` keyword arguments of a (mix, condition): the team kinds and factory (with
    ``honest_agents`` in honest mode), the game version and the condition's configuration. The one recipe of a
    matrix episode, shared by :func:`make_env` and whatever else must play the matrix's scenarios (the RL
    scheduler's teacher data and training environments)."""
    from dcops.agents.teams import honest_twin_factory, make_team

    if family_of(condition) is not None:  # a scenario family brings its own teams
        factory = honest_twin_factory(honest_agents) if honest_agents else None
        return {"team_factory": factory, "game_version": game_version, **env_config(mix, condition, n_windows)}
    config_kinds, substitute = _config_kinds(mix)
    factory = honest_twin_factory(honest_agents, factory=lambda kind: make_team(substitute.get(kind, kind)))
    return {"team_factory": factory, "team_kinds": config_kinds, "game_version": game_version,
            **env_config(mix, condition, n_windows)}


def make_env(cell: Cell, honest_agents: frozenset[str] = frozenset()) -> Any:
    """The env of a cell's (mix, condition), with ``honest_agents`` in honest mode (cached per process)."""
    key = (cell.mix, cell.condition, cell.n_windows, cell.game_version, honest_agents)
    if key not in _ENVS:
        import dcops

        _ENVS[key] = dcops.parallel_env(
            **env_kwargs(cell.mix, cell.condition, cell.n_windows, cell.game_version, honest_agents))
    return _ENVS[key]


def _forget_llm_caches() -> None:
    """Clear what the process's language-model schedulers remember of the prompts they answered and the
    key/value caches they keep (``CompactLoglikBackend.clear``). Their answers are the same either way; cleared
    at each cell, a cell's wall time and memory do not depend on the cells its worker played before, and what is
    reused is what the cell's own honest twins replay."""
    for policy in _LLM_POLICIES.values():
        clear = getattr(getattr(policy, "backend", None), "clear", None)
        if callable(clear):
            clear()


def _policy(name: str, family: str | None = None, env: Any = None, seed: int = 0) -> Any:
    """A fresh policy per episode (no state carried between cells) for an episode of ``family`` (None: not a
    scenario family) on ``env`` with ``seed``; language models are loaded once per process, and what they
    remember of prompts is cleared at each cell (:func:`_forget_llm_caches`). The truth planner
    (``truth_planner``) plans the episode from its truth through the evaluator API and is played as the plan it
    keeps (``dcops.evaluation.truth_planner.PlanFollower``), so its row has every metric a policy's has."""
    from dcops.evaluation.policies import make_policy

    if name == TRUTH:
        from dcops.evaluation.truth_planner import PlanFollower, play_truth_planner

        result = play_truth_planner(env, seed)
        return PlanFollower(result.starts, planned_score=result.summary["score"])
    if name.startswith("llm:"):
        if name not in _LLM_POLICIES:
            _LLM_POLICIES[name] = make_policy(name)
        return _LLM_POLICIES[name]
    return make_policy(name, family=family)


class GenerationFailed(RuntimeError):
    """A language model's generation failed during a cell (an error of the backend, not an answer)."""


def play(
    cell: Cell, honest_agents: frozenset[str] = frozenset(), scheduler: str | None = None
) -> dict[str, Any]:
    """One episode of the cell (``scheduler`` overrides the cell's); every metric of the module docstring that
    one episode gives, plus ``_team_value`` (per team) for the payoff."""
    from dcops.evaluation.play import run_episode

    env = make_env(cell, honest_agents)
    policy = CountingPolicy(_policy(scheduler or cell.scheduler, family_of(cell.condition), env, cell.env_seed))
    failed = getattr(policy.policy, "generation_errors", None)
    failed_before = len(failed) if failed is not None else 0
    summary = run_episode(policy, cell.env_seed, env=env)  # the policy is told neither seed nor key
    planned = policy.policy.planned_score if (scheduler or cell.scheduler) == TRUTH else None
    if planned is not None and summary["score"] != planned:
        raise RuntimeError(f"{cell.cell_id}: the truth planner's plan replayed to {summary['score']!r}, "
                           f"planned {planned!r}: the episode is not deterministic")
    if failed is not None and len(failed) > failed_before:
        new = failed[failed_before:]
        raise GenerationFailed(f"{cell.scheduler}: {len(new)} model call(s) failed in this cell (first: {new[0]}); "
                               "the cell is not stored, so a crash is never published as the model's invalid rate")
    cfg = env.config
    truth = env.episode_truth()
    kinds = {agent: team.kind for agent, team in env.teams.items()}
    window_h = cfg.steps_per_window * cfg.dt_s / 3600.0
    value = dict.fromkeys(kinds, 0.0)
    energy = dict.fromkeys(kinds, 0.0)
    requests = dict.fromkeys(kinds, 0)
    accepted = dict.fromkeys(kinds, 0)
    jobs = env.episode.ledger.jobs
    for row in truth:
        requests[row["team"]] += 1
        accepted[row["team"]] += jobs[row["request_id"]].accepted_window is not None
        if row["outcome"] in COMPLETED and row["score"] > 0:
            value[row["team"]] += row["score"]
        if row["start_window"] is not None:
            hours = min(row["true_runtime_h"], (cfg.n_windows - row["start_window"]) * window_h)
            energy[row["team"]] += row["kw"] * max(hours, 0.0)
    total_energy = sum(energy.values())
    windows = summary["windows"]
    inlet = np.asarray(env.episode.inlet_c)
    step_min = cfg.dt_s / 60.0
    detection = {k: sum(int(v[k]) for v in summary["detection"].values()) for k in DETECTION_FIELDS}
    gaming = [a for a, k in kinds.items() if k in GAMING_KINDS]
    blind, actual = summary["carbon_blind_kg"], summary["carbon_actual_kg"]
    return {
        "score": summary["score"],
        "r_throughput": float(np.mean([w["throughput"] for w in windows])),
        "r_thermal": float(np.mean([w["thermal"] for w in windows])),
        "r_carbon": float(np.mean([w["carbon"] for w in windows])),
        "p_invalid": float(np.mean([w["invalid_penalty"] for w in windows])),
        "incident_windows": int(summary["incident_windows"]),
        "violation_min_27c": float(np.count_nonzero(inlet > SOFT_C) * step_min),
        "violation_min_32c": float(np.count_nonzero(inlet > HARD_C) * step_min),
        "carbon_actual_kg": actual,
        "carbon_blind_kg": blind,
        "carbon_saved_pct": 100.0 * (blind - actual) / blind if blind > 0 else 0.0,
        "value_completed": sum(value.values()),
        "throughput_value": summary["throughput_value"],
        "strategic_share": sum(energy[a] for a in gaming) / total_energy if total_energy > 0 else 0.0,
        "fair_share": len(gaming) / len(kinds),
        "gaming_accept_rate": (
            sum(accepted[a] for a in gaming) / sum(requests[a] for a in gaming) if gaming else None
        ),
        "gaming_value_completed": sum(value[a] for a in gaming),
        **{f"det_{k}": v for k, v in detection.items()},
        "invalid_entries": int(summary["invalid_entries"]),
        "pending_decisions": policy.pending,
        "policy_defaulted": policy.defaulted,
        "invalid_rate": (summary["invalid_entries"] + policy.defaulted) / policy.pending if policy.pending else 0.0,
        "arrivals_key": summary["arrivals_key"],
        **_device_field(policy.policy),
        "teams": {
            a: {
                "kind": kinds[a],
                "value_completed": value[a],
                "capacity_share": energy[a] / total_energy if total_energy > 0 else 0.0,
                "accept_rate": accepted[a] / requests[a] if requests[a] else 0.0,
            }
            for a in kinds
        },
        "_gaming": gaming,
    }


def _device_field(policy: Any) -> dict[str, str]:
    """``{"llm_device": ...}`` for a policy that runs a local model (its greedy answers can differ across
    devices by rounding, so a report must be able to tell cells apart); empty for every other policy."""
    device = getattr(policy, "device", None)
    return {"llm_device": device} if isinstance(device, str) else {}


def gaming_payoffs(main: dict[str, Any], twins: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Per gaming team: value completed when misreporting − value completed by its honest twin (same seed)."""
    for agent, twin in twins.items():
        if twin["arrivals_key"] != main["arrivals_key"]:
            raise RuntimeError(
                f"honest twin of {agent} drew different jobs: the twin is not a paired comparison"
            )
    return {
        agent: main["teams"][agent]["value_completed"] - twin["teams"][agent]["value_completed"]
        for agent, twin in twins.items()
    }


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run one cell; return its row (the cell's fields, metrics, ``wall_s``)."""
    start = time.perf_counter()
    _forget_llm_caches()
    if cell.scheduler == BOUND:
        row = _bound_row(cell)
    else:
        main = play(cell)
        gaming = main.pop("_gaming")
        # The truth planner's twins would each need a plan of their own (a plan costs the planner's runs, 13–36 s
        # a family episode here): its gaming payoff is not measured, as in the skill ladder.
        twins = {} if cell.scheduler == TRUTH else {agent: play(cell, frozenset({agent})) for agent in gaming}
        payoffs = gaming_payoffs(main, twins)
        for agent, payoff in payoffs.items():
            main["teams"][agent]["twin_value_completed"] = twins[agent]["teams"][agent]["value_completed"]
            main["teams"][agent]["gaming_payoff"] = payoff
            main["teams"][agent]["twin_capacity_share"] = twins[agent]["teams"][agent]["capacity_share"]
            main["teams"][agent]["twin_accept_rate"] = twins[agent]["teams"][agent]["accept_rate"]
        measured = bool(twins) or not gaming
        row = {
            **main,
            "gaming_payoff": float(sum(payoffs.values())) if measured else None,
            "n_twins": len(twins),
            "strategic_share_twin": (float(sum(twins[a]["teams"][a]["capacity_share"] for a in twins))
                                     if measured else None),
        }
    return {"cell_id": cell.cell_id, **cell.as_dict(), **row, "wall_s": time.perf_counter() - start}


def _bound_row(cell: Cell) -> dict[str, Any]:
    played = play(cell, scheduler="reject_all")
    env = make_env(cell)
    bound = env.hindsight_bound()
    return {
        "bound_value": float(bound.throughput_value),
        "bound_plan_value": float(bound.plan_value),
        "bound_carbon_saved_kg": float(bound.carbon_saved_g) / 1000.0,
        "bound_status": str(bound.status),
        "arrivals_key": played["arrivals_key"],
    }
