r"""The scheduler's reward: each job scored once over its lifecycle, every window bounded.

Per window w::

    R_window = 0.50·R_throughput + 0.35·R_thermal + 0.15·R_carbon − P_invalid        ∈ [−1.10, 0.65]

**Job value.** ``v_j = W(true priority) · kW_j · true runtime_j (h)`` with W = 1, 2, 4, 8 for LOW, MEDIUM, HIGH,
CRITICAL: true-priority-weighted energy of work (value units, "weighted kWh").

**Throughput: each job is scored exactly once**, in the window its lifecycle resolves, with one of four
outcomes (the ledger marks a job scored and never scores it again, so accepting, re-accepting or deferring
a request many times cannot add value):

=============  =========================================================  ========================
outcome        when                                                        score s_j
=============  =========================================================  ========================
on time        completes by the end of its true deadline window            ``+v_j · d_j``
missed         its true deadline window ends (inside the horizon) first    ``−0.5 · v_j``
               (pending, deferred, queued or running: all the same)
rejected       the scheduler rejects it (before it was missed)             ``−ρ(true priority) · v_j``
unfinished     the episode ends first and its deadline lies beyond it      ``+v_j · d_j · f_j``
               (game version 1: one that never started scores a rejection, ``−ρ(true priority) · v_j``)
=============  =========================================================  ========================

with the delay factor ``d_j = 1`` for a truly carbon-flexible job and ``max(0.5, 1 − 0.1·(start window −
submission window))`` otherwise (inflexible work loses value while it waits), the rejection cost
ρ = 0, 0.1, 0.3, 0.5 for LOW..CRITICAL (rejecting high-value work costs, rejecting low-value work is free), and
``f_j`` the fraction of its true runtime done by the end (0 if it never started). A job that misses its
deadline keeps running (the team still wants it) but scores nothing more.

With ``G_w`` the sum of positive and ``L_w`` the sum of the magnitudes of negative job scores resolved in w::

    R_throughput = (G_w − L_w) / max(V, G_w + L_w)                                      ∈ [−1, 1]

V (``ClusterConfig.throughput_scale``) is the value of running the nominal job power the cap admits
(``cap/1.3 − base load``, ≈ 442 kW by default) for one window at the mean priority weight 2.5 (≈ 1,658 by
default): below V the term is linear in value, above it saturates, so no window can leave [−1, 1].

**Thermal**: ``R_thermal = −1`` in an incident window (any step with facility power over the cap, or any
true inlet above 32 °C), otherwise ``−0.5 ·`` the fraction of zone-steps with a true inlet above 27 °C. In [−1, 0].

**Carbon**: each job that ran is scored once, when it completes (or at the horizon if still running). Its
emissions ``A_j = Σ_k kW_j · PUE_k · CI_k · Δt`` (g; k over the steps it ran, CI in g/kWh) are compared with
running the same energy carbon-blind, i.e. as soon as it was submitted: ``B_j = (Σ_k kW_j · PUE_k · Δt) ·
mean CI over the same number of steps from its submission window's start``. Then::

    R_carbon = Σ_j (B_j − A_j) / Σ_j max(A_j, B_j)    (0 when no job is scored)       ∈ [−1, 1]

**Invalid decisions**: ``P_invalid = 0.10 · min(1, I_w / max(1, N_w))`` with I_w the invalid entries
(``dcops.cluster.decisions``) and N_w the requests pending in the window. In [0, 0.10].

**Episode score**: the mean of the window rewards, in [−1.10, 0.65].

Worked example (defaults, V = 1,658): in window 3 a HIGH job of 40 kW × 3 h completes on time after waiting one
window while inflexible (v = 4·40·3 = 480, d = 0.9, s = +432), and a MEDIUM 20 kW × 2 h job's deadline passes
while it was still deferred (v = 80, s = −40): R_throughput = (432 − 40)/max(1658, 472) = 0.236. No incident,
2 of 72 zone-steps above 27 °C: R_thermal = −0.5·2/72 = −0.014. The completed job emitted 60 kg against 66 kg
carbon-blind: R_carbon = 6/66 = 0.091. One duplicate id among 5 pending: P = 0.1·1/5 = 0.02. R_window =
0.5·0.236 − 0.35·0.014 + 0.15·0.091 − 0.02 = 0.107.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dcops.cluster.requests import Priority, RequestTruth

W_THROUGHPUT = 0.50
W_THERMAL = 0.35
W_CARBON = 0.15
INVALID_PENALTY = 0.10

PRIORITY_WEIGHT: dict[Priority, float] = {
    Priority.LOW: 1.0, Priority.MEDIUM: 2.0, Priority.HIGH: 4.0, Priority.CRITICAL: 8.0,
}
REJECT_COST: dict[Priority, float] = {
    Priority.LOW: 0.0, Priority.MEDIUM: 0.1, Priority.HIGH: 0.3, Priority.CRITICAL: 0.5,
}
MISS_COST = 0.5
DELAY_LOSS_PER_WINDOW = 0.1
DELAY_FLOOR = 0.5
SOFT_INLET_C = 27.0
SOFT_THERMAL_WEIGHT = 0.5

WINDOW_REWARD_RANGE = (
    -(W_THROUGHPUT + W_THERMAL + W_CARBON + INVALID_PENALTY),
    W_THROUGHPUT + W_CARBON,
)
"""Range of every window reward and of the episode score (their mean): (−1.10, 0.65)."""

OUTCOMES = ("on_time", "missed", "rejected", "unfinished")


def job_value(truth: RequestTruth, kw: float) -> float:
    """``v_j = W(true priority) · kW · true runtime (h)``, value units."""
    return PRIORITY_WEIGHT[truth.true_priority] * kw * truth.true_runtime_h


def waiting_factor(flexible: bool, start_window: int, submitted_window: int) -> float:
    """1 for a carbon-flexible job, else ``max(0.5, 1 − 0.1 · windows waited)``: the one formula, which the reward
    applies to the truth (:func:`delay_factor`) and a planner may apply to stated flexibility."""
    if flexible:
        return 1.0
    return max(DELAY_FLOOR, 1.0 - DELAY_LOSS_PER_WINDOW * max(start_window - submitted_window, 0))


def delay_factor(truth: RequestTruth, start_window: int, submitted_window: int) -> float:
    """1 for a truly flexible job, else ``max(0.5, 1 − 0.1 · windows waited)`` (:func:`waiting_factor`)."""
    return waiting_factor(truth.true_carbon_flexible, start_window, submitted_window)


def on_time_score(value: float, truth: RequestTruth, start_window: int, submitted_window: int) -> float:
    return value * delay_factor(truth, start_window, submitted_window)


def missed_score(value: float) -> float:
    return -MISS_COST * value


def rejected_score(value: float, truth: RequestTruth) -> float:
    return -REJECT_COST[truth.true_priority] * value


def unfinished_score(value: float, truth: RequestTruth, start_window: int | None, submitted_window: int,
                     fraction_done: float, game_version: int = 0) -> float:
    """A job the horizon interrupts: ``v·d·f`` for the fraction f of its runtime done. One that never started
    scores 0 in version 0, and a rejection, ``−ρ·v``, from version 1: accepting at the horizon a job that can
    never start must not pay more than rejecting it (version 0's 0 made that a free +ρ·v)."""
    if start_window is None or fraction_done <= 0.0:
        return 0.0 if game_version == 0 else rejected_score(value, truth)
    return value * delay_factor(truth, start_window, submitted_window) * min(fraction_done, 1.0)


def bounded_ratio(gain: float, loss: float, scale: float) -> float:
    """``(gain − loss) / max(scale, gain + loss)``: in [−1, 1] for any non-negative gain and loss."""
    return (gain - loss) / max(scale, gain + loss, 1e-12)


def throughput_term(gain: float, loss: float, scale: float) -> float:
    return bounded_ratio(gain, loss, scale)


def thermal_term(incident: bool, soft_fraction: float) -> float:
    """−1 in an incident window, else −0.5 × the fraction of zone-steps above 27 °C."""
    if incident:
        return -1.0
    return -SOFT_THERMAL_WEIGHT * min(max(soft_fraction, 0.0), 1.0)


def carbon_term(saved_g: float, denominator_g: float) -> float:
    """``Σ(B − A) / Σ max(A, B)``, 0 with nothing scored."""
    if denominator_g <= 0.0:
        return 0.0
    return max(-1.0, min(1.0, saved_g / denominator_g))


def invalid_term(n_invalid: int, n_pending: int) -> float:
    return INVALID_PENALTY * min(1.0, n_invalid / max(1, n_pending))


@dataclass
class WindowScore:
    """The components of one window's reward and the raw sums behind them."""

    window: int
    gain: float = 0.0
    loss: float = 0.0
    carbon_saved_g: float = 0.0
    carbon_denominator_g: float = 0.0
    incident: bool = False
    incident_reasons: list[str] = field(default_factory=list)
    """What an operator sees of an incident: which limit was crossed (the cap with its metered power, or "an
    inlet above the limit"), never a true temperature that the sensors may report with an error."""
    incident_detail: list[str] = field(default_factory=list)
    """The same with the true values (evaluation only: :meth:`as_dict`)."""
    soft_fraction: float = 0.0
    n_invalid: int = 0
    n_pending: int = 0
    throughput: float = 0.0
    thermal: float = 0.0
    carbon: float = 0.0
    invalid_penalty: float = 0.0
    reward: float = 0.0
    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    team_gain: dict[str, float] = field(default_factory=dict)
    team_loss: dict[str, float] = field(default_factory=dict)

    def add_job_score(self, team: str, outcome: str, score: float) -> None:
        """Book one job's lifecycle score (called once per job by the ledger)."""
        self.outcomes[outcome] += 1
        if score >= 0.0:
            self.gain += score
            self.team_gain[team] = self.team_gain.get(team, 0.0) + score
        else:
            self.loss -= score
            self.team_loss[team] = self.team_loss.get(team, 0.0) - score

    def finalise(self, scale: float) -> WindowScore:
        """Compute the terms and the reward from the raw sums (module docstring formulas)."""
        self.throughput = throughput_term(self.gain, self.loss, scale)
        self.thermal = thermal_term(self.incident, self.soft_fraction)
        self.carbon = carbon_term(self.carbon_saved_g, self.carbon_denominator_g)
        self.invalid_penalty = invalid_term(self.n_invalid, self.n_pending)
        self.reward = (W_THROUGHPUT * self.throughput + W_THERMAL * self.thermal + W_CARBON * self.carbon
                       - self.invalid_penalty)
        return self

    def public_dict(self) -> dict[str, Any]:
        """The reward and its terms, as the scheduler may see them during the episode. The raw value sums and
        outcome counts behind them are computed from private truth (a missed-deadline count would reveal a
        pending job's true deadline), so they stay out of observations until the episode ends; so do the true
        temperatures behind an incident (``incident_detail``) and the share of zone-steps above 27 °C, which the
        drifting sensors may hide. (The thermal term, the scheduler's own reward, is computed from that share:
        a reward scores true outcomes, and it is the one way they reach the scheduler, aggregated.)"""
        return {
            "window": self.window,
            "reward": self.reward,
            "throughput": self.throughput,
            "thermal": self.thermal,
            "carbon": self.carbon,
            "invalid_penalty": self.invalid_penalty,
            "incident": self.incident,
            "incident_reasons": list(self.incident_reasons),
        }

    def as_dict(self) -> dict[str, Any]:
        """Everything, raw sums and outcome counts included (evaluation, after the episode)."""
        return {
            "window": self.window,
            "reward": self.reward,
            "throughput": self.throughput,
            "thermal": self.thermal,
            "carbon": self.carbon,
            "invalid_penalty": self.invalid_penalty,
            "value_gained": self.gain,
            "value_lost": self.loss,
            "carbon_saved_g": self.carbon_saved_g,
            "incident": self.incident,
            "incident_reasons": list(self.incident_reasons),
            "incident_detail": list(self.incident_detail),
            "fraction_above_27c": self.soft_fraction,
            "outcomes": dict(self.outcomes),
        }
