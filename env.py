"""``datacenter_ops_v1``: multi-agent datacenter operations as a PettingZoo ``ParallelEnv``.

Teams submit GPU jobs; a scheduler answers every request each admission window; the jobs' power heats a data
hall whose cooling plant is simulated (``dcops.physics``); an oversight monitor flags teams that misreport.

=====================  ===================================================================================
Creation               ``dcops.parallel_env(**config)`` (or ``dcops.env.parallel_env``); PettingZoo's three
                       constructors: ``dcops.datacenter_ops_v1``; single-agent scheduler view:
                       ``dcops.make_env("cluster/operations", **config)``
Agents                 ``learner_0`` … ``learner_{L-1}`` (one per ``"learner"`` in ``team_kinds``, L = 0 by
                       default), ``cooling`` when ``cooling="agent"``, then ``scheduler``; scripted teams are
                       not agents
Scheduler action       ``MultiDiscrete([2 + max_defer] × max_slots)`` = ``[6] × 48``: per request slot 0 ACCEPT,
                       1 REJECT, 1 + k DEFER by k windows; or a structured list of decisions (below)
Scheduler observation  ``Dict``: ``requests`` (48, 26), ``request_mask`` (48,), ``action_mask`` (288,) int8,
                       ``cluster`` (20,), ``zones`` (4, 7), ``teams`` (4, 15) (``dcops.cluster.observation``)
Learner action         ``MultiDiscrete([4, 4, 2] × 4)``: how its team states the requests it submits
Learner observation    ``Box(16,)`` float32: its team's public record
Cooling (optional)     action ``Box(2Z + 2)`` set-points, observation ``Box(5Z + 11)`` telemetry
                       (``dcops.physics.interface``), held for the whole window
State                  ``Box(1692,)`` float32 with the defaults (``state()``, ``state_space``): every agent's
                       observation, flattened and concatenated in ``possible_agents`` order
Episode                ``n_windows`` = 8 steps (one per admission window of 18 × 5 min physics steps, 12 h),
                       or fewer with ``max_cycles``
=====================  ===================================================================================

**Agents.** An agent is something whose action changes the game. The scheduler always is; the cooling plant's
set-points are when ``cooling="agent"``; a team is when its kind is ``"learner"``. Scripted teams
(cooperative, strategic, adaptive, injecting, detector_aware, slow_burn) decide their own requests, so they are
not agents and an action for one (``team_2``) is refused as for any unknown agent. The team ids ``team_i`` are
neutral and shuffled over the kinds every episode, so a learner's agent name does not follow its id:
``learner_k`` is one of this episode's learner teams (assigned in a random order, so that its index says
nothing of where the other learners are), and ``infos[learner_k]`` says which
``team_i`` it is (``"team"``: the id its requests carry in the scheduler's view), the window, and the flags
raised against that team at the end of the last window (``"flags"``); nothing says which kind any other team
is until the episode ends. The scheduler comes last in ``possible_agents`` because
PettingZoo's ``api_test`` compares every agent's observation with the first agent's as arrays: the scheduler's
is a ``Dict``, so with it last that test passes on every configuration (``dcops.datacenter_ops_v1``).

**Observations.** The scheduler sees only public material: stated request fields, the control room's readings
(reported sensor values, meters, chiller capacity and the planning power estimate of ``dcops.cluster.power``),
its own commitments, team statistics, audits of finished jobs, and the oversight flags raised at the end of the
previous window. The same material in a structured, JSON-able form (``dcops.cluster.observation``) is in
``infos["scheduler"]["view"]`` for language agents (``dcops.cluster.observation.view_to_text`` renders it as
a prompt). No private truth (true priority, true deadline, true flexibility, true runtime) reaches an
observation, info or rendering before the job's audit (runtime, deadline and flexibility, after it completes)
or the end of the episode (everything). Team ids are neutral and shuffled over the team kinds every episode. An
incident names the limit crossed, never the true inlet behind it. What a policy may see, and how a server or an
evaluation keeps the seed from reproducing the private content (keyed seeds), is defined once in
``dcops.boundary``; ``reset(seed=...)`` here is the in-process form, reproducible bit for bit.

In game version 1 each team of the view (``view["teams"][team]``) also carries ``gaming_posterior``: the
calibrated probability that the team misreports on purpose given the public evidence so far (its stated
fields, its audits, the monitor's statistics; ``dcops.oversight.posterior``, ``dcops train-posterior``). It is
computed where the structured view is built (``structured_view=True``, the default here but not in
``dcops.datacenter_ops_v1``'s constructors) or where ``team_posterior=True`` asks for it in the array
observation: a 16th column of ``teams`` (``dcops.cluster.observation``), the same value in float32. It is off
by default, so the observation space of every existing learner stays as it was.

The scheduler's ``action_mask`` marks the valid codes of every request slot, slot after slot (entry
``slot · 6 + code``): one int8 entry per logit of the ``MultiDiscrete([6] × 48)`` action, the convention every
masked dcops environment follows (``dcops.registry``, **Action masks**); ``env.action_space("scheduler")
.sample(observations["scheduler"]["action_mask"])`` draws a valid action.

A learner's observation is its team's own public record: progress, budget left, flags against it last window
and so far (by kind), its pending / queued / running / finished / rejected job counts, its last window's reward.

The global state (``state()``, for centralised critics) is every agent's current observation, flattened by
``gymnasium.spaces.flatten`` and concatenated in ``possible_agents`` order; ``state_space`` is the matching
``Box`` (the flattened observation spaces end to end). It holds nothing that no agent sees.

**Actions.** Every window the scheduler must decide every pending request (the new ones and those deferred to
this window): ACCEPT (the job queues and starts at a window boundary in a zone with its GPU model, free GPUs and
free zone power), REJECT, or DEFER to a later window before the horizon. Instead of the array, the scheduler may
pass a structured action: a list of ``{"request_id", "decision", "defer_to_window"}`` (or
``{"decisions": [...]}``). Duplicates, unknown ids, DEFER to the past or past the horizon, malformed entries and
missing decisions are invalid: they are counted, penalised and listed in ``infos["scheduler"]["invalid"]``,
and an undecided request gets the default (DEFER to the next window, REJECT in the last); ``step`` never raises
on scheduler input. A learner's action sets how its team states the requests it submits in the *next* window
(``dcops.agents.teams.learner``); a learner with no action states them honestly.

**Rewards** (``dcops.cluster.reward``). The scheduler's window reward is
``0.50·R_throughput + 0.35·R_thermal + 0.15·R_carbon − P_invalid`` in [−1.10, 0.65]; every job is scored once
over its lifecycle, so no sequence of decisions can leave that range. Worked example: a HIGH 40 kW × 3 h job
completes on time after one window's wait (inflexible: +432 value), a MEDIUM job's deadline passes while deferred
(−40): R_throughput = 392 / 1658 = 0.236; 2 of 72 zone-steps above 27 °C: R_thermal = −0.014; 6 of 66 kg CO2
saved against carbon-blind: R_carbon = 0.091; one duplicate id among 5 pending: P = 0.02; reward = 0.107.
A learner's reward is the same bounded throughput ratio over its team's own jobs (scale V / T), in [−1, 1].
The cooling agent's is ``R_thermal − 0.5·min(1, 2 · cooling kWh / IT kWh)`` in [−1.5, 0].

**Episode end.** After the last window every agent is terminated (no truncation); unfinished jobs are scored
(partial credit if their deadline lies beyond the horizon) and ``infos["scheduler"]["episode"]`` holds the
episode score (mean window reward), throughput value, carbon, incidents, the team kinds behind the neutral ids
and the oversight detection counts. ``env.hindsight_bound()`` then gives the MILP upper bound of
``dcops.cluster.hindsight``. With ``max_cycles`` below ``n_windows`` the episode is instead cut after that
many windows: every agent is truncated (not terminated), nothing more is scored, there is no
``infos["scheduler"]["episode"]``, ``hindsight_bound()`` refuses (it needs the whole episode) and
``episode_truth()`` lists the requests so far (``outcome`` None for those not yet resolved).

**Arguments** (all keyword; ``dcops.cluster.config.ClusterConfig`` documents each): ``n_windows`` (8),
``steps_per_window`` (18), ``dt_s`` (300), ``team_kinds`` (``("cooperative", "cooperative", "strategic",
"adaptive")``; ``"learner"`` too), ``zones`` (four 250 kW zones: 2 × 96 H100, 128 A100, 192 L40S),
``base_load_fraction`` (0.25), ``power_cap_kw`` (900), ``inlet_limit_c`` (32), ``climate`` (``"phoenix"``),
``grid_region`` (the site's), ``start`` (2026-07-15 06:00), ``faults`` (``"random"``, ``()`` or a tuple of
``dcops.physics.faults``), ``plant``, ``cooling`` (``"ppo"``, the default, ``"rule"``, ``"pid"`` or ``"agent"``),
``max_requests_per_team`` (4), ``max_slots`` (48), ``max_defer`` (4), ``team_budget`` (150), ``price_per_kwh``
(0.12), ``value_scale`` (computed), ``initial_zone_temp_c`` (35), ``initial_chw_c`` (18), ``game_version``
(1; below), ``workload`` (``"synthetic"``), ``catalogue`` (``"classic"``: the public job catalogue,
``dcops.cluster.job_types.catalogue``, named in the view as ``view["catalogue"]`` when it is not ``classic``);
plus
``render_mode`` (``None``; ``"ansi"``: ``render()`` returns the control-room text; ``"human"``: ``render()``
prints it to stdout), ``max_cycles`` (``None``: the episode runs its ``n_windows``; an integer: every agent is
truncated after that many windows, PettingZoo's convention), ``structured_view`` (True: build
``infos["scheduler"]["view"]`` and its posteriors every window; the default here and in ``dcops.parallel_env``,
the path of evaluations, language agents and the server; ``dcops.datacenter_ops_v1``'s constructors, the RL
entry, default to False: smaller infos, faster steps) and ``team_factory`` (a callable ``kind -> team`` replacing ``dcops.agents.teams.make_team``: the hook for custom
teams, e.g. ones that put instructions in their descriptions to test language-model schedulers) and
``team_posterior`` (False; True: the scheduler's ``teams`` array carries each team's ``gaming_posterior``, below).

**Versions.** ``game_version=1`` (the default, ``datacenter_ops_v1``, ``metadata["name"]``) is the sound game of
the integrity issue, on which the README's cluster tables are made; ``game_version=0`` (``datacenter_ops_v0``)
keeps the first round's game reproducible bit for bit. Version 1 differs in these rules:
a job accepted but never started by the horizon scores a rejection, not 0 (``dcops.cluster.reward``), which
closes the last-window accounting trick; every resolved job is audited, true priority included, in the window
its outcome is booked (``dcops.cluster.ledger``), so the reward decodes nothing an audit does not say; the
oversight monitor is calibrated to honest teams' habits (``dcops.oversight.calibrated``: at most 2 % of honest
teams flagged at 8 to 48 windows); ``hindsight_bound()`` budgets job power by the facility meter's electrical
floor, which every incident-free schedule respects under any fault, and stops HiGHS by a node count instead
of wall-clock time, so the bound is a bound and the same on every run; and every team words its descriptions by
one model of the stated fields, with injections on half the injecting team's requests
(``dcops.agents.teams.base``), so no keyword marks a misreport.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv

from dcops.agents.cooling import ControllerContext, PIDController, RuleBasedController
from dcops.agents.teams import make_team
from dcops.agents.teams.base import TeamFeedback
from dcops.agents.teams.learner import ACTION_FIELDS
from dcops.cluster.config import ClusterConfig
from dcops.cluster.cooling import HeldSetpoints, RuleFastPath, TelemetryController
from dcops.cluster.decisions import DecisionBatch, resolve_array, resolve_structured
from dcops.cluster.episode import ClusterEpisode, WindowResult
from dcops.cluster.observation import ObservationBuilder, TeamStats
from dcops.cluster.requests import Submission
from dcops.cluster.reward import bounded_ratio
from dcops.oversight import FLAG_KINDS, CalibratedMonitor, OversightMonitor, score_detection
from dcops.oversight.honest_model import honest_model_for
from dcops.oversight.posterior import PublicRecord, TeamPosterior
from dcops.physics.interface import setpoint_bounds, telemetry_bounds

ENV_NAME = "datacenter_ops_v1"
"""The name of the default game (``game_version=1``); ``env.metadata["name"]`` gives an instance's own."""


def env_name(game_version: int) -> str:
    """``datacenter_ops_v<game_version>``."""
    return f"datacenter_ops_v{game_version}"


N_TEAM_OBS = 16
SCHEDULER = "scheduler"
COOLING = "cooling"


def learner_name(k: int) -> str:
    """The agent name of one of an episode's learner teams (module docstring, **Agents**)."""
    return f"learner_{k}"


def parallel_env(**config: Any) -> DatacenterOpsEnv:
    """Build ``datacenter_ops`` (version 1 unless ``game_version=0``) (module docstring lists every argument)."""
    return DatacenterOpsEnv(**config)


def _is_structured(action: Any) -> bool:
    if action is None or isinstance(action, Mapping):
        return True
    if isinstance(action, (list, tuple)):
        return len(action) == 0 or not isinstance(action[0], (int, float, np.integer, np.floating))
    return False


class DatacenterOpsEnv(ParallelEnv):
    """The PettingZoo environment (full manual in the module docstring)."""

    metadata = {"name": ENV_NAME, "render_modes": ["ansi", "human"], "is_parallelizable": True, "render_fps": 1}

    def __init__(self, render_mode: str | None = None, structured_view: bool = True,
                 team_factory: Callable[[str], Any] | None = None, max_cycles: int | None = None,
                 team_posterior: bool = False, **config: Any) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        if not isinstance(team_posterior, bool):
            raise ValueError(f"team_posterior: must be True or False, got {team_posterior!r}")
        if max_cycles is not None and (isinstance(max_cycles, bool) or not isinstance(max_cycles, int) or max_cycles < 1):
            raise ValueError(f"max_cycles must be None or a positive integer, got {max_cycles!r}")
        self.render_mode = render_mode
        self.max_cycles = max_cycles
        self.structured_view = structured_view
        self.team_factory = team_factory or make_team
        self.config = ClusterConfig.from_kwargs(**config)
        cfg = self.config
        if team_posterior and cfg.game_version < 1:
            raise ValueError("team_posterior: the team posterior is a version 1 feature (game_version=1)")
        self.team_posterior = team_posterior
        self.metadata = {**type(self).metadata, "name": env_name(cfg.game_version)}
        self.team_ids = [f"team_{i}" for i in range(cfg.n_teams)]
        """The neutral team ids (``team_i``), shuffled over ``team_kinds`` every episode; not agent names."""
        self.learners = [learner_name(k) for k in range(sum(kind == "learner" for kind in cfg.team_kinds))]
        # The scheduler last: api_test compares each agent's observation with the first one's as arrays.
        self.possible_agents = [*self.learners, *([COOLING] if cfg.cooling == "agent" else []), SCHEDULER]
        self.agents: list[str] = []
        self.learner_team: dict[str, str] = {}
        """This episode's ``learner_k`` -> ``team_i`` (module docstring, **Agents**)."""
        plant = cfg.plant_config()
        context = ControllerContext.from_plant(plant, [1.0] * plant.n_zones, cfg.dt_s)
        if cfg.cooling == "rule":
            rule = RuleBasedController()
            self.controller: Any = RuleFastPath(zone_weights=context.zone_weights, **asdict(rule))
        elif cfg.cooling == "pid":
            self.controller = TelemetryController(PIDController(), context)
        elif cfg.cooling == "ppo":
            from dcops.agents.cooling.ppo import PPOController

            self.controller = TelemetryController(PPOController(), context)
        else:
            self.controller = HeldSetpoints()
        self.episode = ClusterEpisode(cfg, self.controller)
        # Version 1's monitor is calibrated to honest teams' systematic habits and reads resolution audits.
        self.monitor: OversightMonitor | CalibratedMonitor = (
            OversightMonitor(window_h=cfg.window_h) if cfg.game_version == 0
            else CalibratedMonitor(window_h=cfg.window_h, model=honest_model_for(cfg.catalogue)))
        # Version 1's view carries each team's calibrated P(gaming | public evidence so far)
        # (dcops.oversight.posterior), fed what the monitor is fed; only where a structured view is built or the
        # array observation asks for it (team_posterior).
        self.posterior: TeamPosterior | None = (
            TeamPosterior.load() if cfg.game_version >= 1 and (structured_view or team_posterior) else None)
        self.posterior_record: PublicRecord | None = None
        self.builder = ObservationBuilder(cfg, FLAG_KINDS, team_posterior=team_posterior)
        team_obs = gym.spaces.Box(-1.0, 5.0, (N_TEAM_OBS,), np.float32)
        team_act = gym.spaces.MultiDiscrete(np.tile(np.asarray(ACTION_FIELDS, dtype=np.int64), cfg.max_requests_per_team))
        self._observation_spaces: dict[str, gym.Space] = {SCHEDULER: self.builder.space}
        self._action_spaces: dict[str, gym.Space] = {SCHEDULER: self.builder.action_space}
        for agent in self.learners:
            self._observation_spaces[agent] = team_obs
            self._action_spaces[agent] = team_act
        if cfg.cooling == "agent":
            low, high = telemetry_bounds(plant.n_zones)
            self._observation_spaces[COOLING] = gym.spaces.Box(low, high, dtype=np.float32)
            s_low, s_high = setpoint_bounds(plant.n_zones)
            self._action_spaces[COOLING] = gym.spaces.Box(s_low.astype(np.float32), s_high.astype(np.float32),
                                                          dtype=np.float32)
        flat = [gym.spaces.flatten_space(self._observation_spaces[a]) for a in self.possible_agents]
        self.state_space = gym.spaces.Box(np.concatenate([f.low for f in flat]).astype(np.float32),
                                          np.concatenate([f.high for f in flat]).astype(np.float32), dtype=np.float32)
        """The global state's space: every agent's flattened observation space, end to end (module docstring)."""
        self._observations: dict[str, Any] = {}
        self._truncated = False
        self._started = False

    # ------------------------------------------------------------------ spaces (built once, same objects)
    def observation_space(self, agent: str) -> gym.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gym.Space:
        return self._action_spaces[agent]

    def state(self) -> np.ndarray:
        """The global state: every agent's current observation, flattened and concatenated in
        ``possible_agents`` order (float32, in ``state_space``); after the episode, its last observations."""
        if not self._started:
            raise RuntimeError("call reset() first")
        return np.concatenate([gym.spaces.flatten(self._observation_spaces[a], self._observations[a])
                               for a in self.possible_agents]).astype(np.float32, copy=False)

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode; ``seed`` fixes everything (weather, faults, team tactics, arrivals, sensors), ``None``
        draws fresh entropy. ``options`` is accepted for the PettingZoo API and unused. Returns (observations,
        infos) for every agent; the teams' window-0 requests are already pending."""
        cfg = self.config
        # The learner stream is spawned last, so the streams before it are those of every earlier version.
        physics_seq, fault_seq, shuffle_seq, *team_seqs, learner_seq = np.random.SeedSequence(seed).spawn(
            4 + cfg.n_teams)
        self._rng = np.random.default_rng(shuffle_seq)
        kinds = [cfg.team_kinds[i] for i in self._rng.permutation(cfg.n_teams)]
        self.team_kind = dict(zip(self.team_ids, kinds, strict=True))
        self.teams = {team_id: self.team_factory(kind) for team_id, kind in self.team_kind.items()}
        for (team_id, team), child in zip(self.teams.items(), team_seqs, strict=True):
            team.reset(team_id, np.random.default_rng(child), cfg)
        # Learner names go to the learner teams in a random order of their own: in id order, a learner could
        # tell from its own id and index where the other learners are, and so the other teams' kinds.
        learner_teams = [t for t, k in self.team_kind.items() if k == "learner"]
        order = np.random.default_rng(learner_seq).permutation(len(learner_teams))
        self.learner_team = dict(zip(self.learners, [learner_teams[i] for i in order], strict=True))
        self.episode.reset(np.random.default_rng(physics_seq), np.random.default_rng(fault_seq), self.team_ids)
        self.monitor.reset(self.team_ids)
        # Version 1's monitor takes each window's requests at its decision time (_submit) and the audits at its
        # end, so the posterior's record reads it rather than a shadow fed the same material, where it judges by
        # the same norms (an evaluation may put another monitor in its place, before reset).
        self._requests_taken_by: Any = None
        if self.posterior is not None:
            shared = self.monitor if PublicRecord.can_share(self.monitor, cfg.window_h, cfg.catalogue) else None
            self.posterior_record = PublicRecord(self.team_ids, cfg.window_h, cfg.catalogue, monitor=shared)
        self.team_index = {team_id: i for i, team_id in enumerate(self.team_ids)}
        self._team_position = {team_id: i / max(1, cfg.n_teams - 1) for team_id, i in self.team_index.items()}
        self.stats = {team_id: TeamStats(len(FLAG_KINDS)) for team_id in self.team_ids}
        self.builder.reset()
        self.tactics: dict[str, list[set[str]]] = {t: [set() for _ in range(cfg.n_windows)] for t in self.team_ids}
        self._next_id = 0
        self._flags: list[Any] = []
        self._audits: list[Any] = []
        self._last: dict[str, Any] = {}
        self._team_reward = dict.fromkeys(self.learner_team.values(), 0.0)  # the learners' teams' last reward
        self._window_requests: list[Any] = []
        self.agents = list(self.possible_agents)
        self._started = True
        self._truncated = False
        self._cycles = 0
        self._submit({}, feedback=None)
        observations, infos = self._observe(result=None)
        self._observations = observations
        return observations, infos

    def _submit(self, team_actions: dict[str, Any], feedback: dict[str, TeamFeedback] | None) -> None:
        """Teams hand in this window's requests, in a freshly shuffled team order, numbered by the env;
        ``team_actions`` holds the learner teams' actions by team id."""
        w = self.episode.window
        submissions: list[Submission] = []
        for i in self._rng.permutation(len(self.team_ids)):
            team_id = self.team_ids[i]
            team = self.teams[team_id]
            action = team_actions.get(team_id) if team.kind == "learner" else None
            submissions.extend(team.submit(w, None if feedback is None else feedback.get(team_id), action,
                                           self._new_request_id))
        for sub in submissions:
            request = sub.request
            if sub.tactics:
                self.tactics[request.team][w] |= sub.tactics
            self.stats[request.team].add_request(request)
            self.builder.register(request, self._team_position[request.team])
        self.episode.submit(submissions)
        self._window_requests = [s.request for s in submissions]
        # (A subclass keeps the one-call flow at the window's end: it may override observe.)
        self._requests_taken_by = self.monitor if type(self.monitor) is CalibratedMonitor else None
        if self._requests_taken_by is not None:
            self.monitor.take_requests(w, self._window_requests)
        if self.posterior_record is not None:
            self.posterior_record.begin_window(w, self._window_requests, self._audits)

    def _new_request_id(self) -> str:
        self._next_id += 1
        return f"r{self._next_id:04d}"

    # ------------------------------------------------------------------ step
    def step(self, actions: dict[str, Any]):
        """Run one admission window (module docstring): decide, run 18 physics steps, score, flag, submit.

        A missing ``scheduler`` action means no decisions (every pending request undecided, with its default
        and penalty); a missing or malformed learner action states its team's requests honestly; a malformed
        ``cooling`` action keeps the previous set-points and is reported in ``infos["cooling"]["action_error"]``.
        ``actions`` that is not a dict, or that names an agent not in ``agents`` (a scripted team's id too),
        raises ``TypeError`` / ``ValueError`` before anything changes."""
        return self.finish_step(self.begin_step(actions), self.episode.run_window())

    def begin_step(self, actions: dict[str, Any]) -> tuple[int, str | None]:
        """The first part of :meth:`step`, up to the window's physics: apply the scheduler's decisions and the
        cooling agent's set-points. Returns what :meth:`finish_step` needs (the window, any cooling error).
        ``dcops.vector_env`` calls the two parts around a batched physics run of several episodes."""
        if not self._started or not self.agents:
            raise RuntimeError("call reset() before step(); the episode is over" if self._started else "call reset() first")
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions: must be a dict of agent -> action, got {type(actions).__name__}")
        strangers = sorted(str(a) for a in actions if a not in self.agents)
        if strangers:  # refused before anything changes, so the episode stays usable
            raise ValueError(f"actions: unknown agent(s) {strangers}; this episode's agents: {self.agents}"
                             + ("; team ids are not agent names: scripted teams take no actions and a learner "
                                "team acts as learner_<k> (infos[learner_k]['team'] is its id)"
                                if any(a in self.team_index for a in strangers) else ""))
        episode = self.episode
        w = episode.window
        batch = self._resolve(actions.get(SCHEDULER))
        cooling_error = None
        if COOLING in self.agents:
            try:
                self.controller.set(actions.get(COOLING))
            except ValueError as error:  # keep the previous set-points, say why
                cooling_error = str(error)
        episode.decide(batch)
        self._team_actions = {team_id: actions.get(name) for name, team_id in self.learner_team.items()}
        return w, cooling_error

    def finish_step(self, begun: tuple[int, str | None], result: WindowResult):
        """The rest of :meth:`step` once the window has run: oversight, rewards, the teams' next requests, the
        observations; returns what :meth:`step` returns."""
        cfg = self.config
        episode = self.episode
        w, cooling_error = begun
        taken = self._requests_taken_by is self.monitor
        flags = self.monitor.observe(w, () if taken else self._window_requests, result.audits)
        for audit in result.audits:
            self.stats[audit.request.team].add_audit(audit)
        self.builder.count_flags(self.stats, flags)
        self._flags = flags
        self._audits = result.audits
        score = result.score
        self._last = {**score.public_dict(), "invalid": result.invalid, "decisions": result.decisions,
                      "started": result.started}
        rewards: dict[str, float] = {}
        team_scale = cfg.throughput_scale / cfg.n_teams
        for name, team_id in self.learner_team.items():
            self._team_reward[team_id] = bounded_ratio(score.team_gain.get(team_id, 0.0),
                                                       score.team_loss.get(team_id, 0.0), team_scale)
            rewards[name] = float(self._team_reward[team_id])
        if COOLING in self.agents:
            overhead = result.cooling_kwh / max(result.it_kwh, 1e-9)
            rewards[COOLING] = float(score.thermal - 0.5 * min(1.0, overhead / 0.5))
        rewards[SCHEDULER] = float(score.reward)
        done = episode.done
        if not done:
            feedback = {team_id: TeamFeedback(w, frozenset(f.kind for f in flags if f.team == team_id))
                        for team_id in self.team_ids}
            self._submit(self._team_actions, feedback)
        observations, infos = self._observe(result=result)
        self._observations = observations
        if COOLING in self.agents:
            infos[COOLING]["action_error"] = cooling_error
        self._cycles += 1
        # max_cycles cuts the episode short (PettingZoo's convention): truncated, not terminated, nothing scored.
        truncated = not done and self.max_cycles is not None and self._cycles >= self.max_cycles
        terminations = dict.fromkeys(self.agents, done)
        truncations = dict.fromkeys(self.agents, truncated)
        if done:
            infos[SCHEDULER]["episode"] = self._episode_summary()
        if done or truncated:
            self._truncated = truncated
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _resolve(self, action: Any) -> DecisionBatch:
        """Turn the scheduler's action (array or structured) into one decision per pending request."""
        cfg, episode = self.config, self.episode
        pending = episode.pending_ids()
        if _is_structured(action):
            return resolve_structured(action, pending, episode.window, cfg.n_windows)
        return resolve_array(action, pending[: cfg.max_slots], pending[cfg.max_slots :], episode.window,
                             cfg.n_windows, cfg.max_slots, cfg.max_defer)

    # ------------------------------------------------------------------ observations and infos
    def _pending_requests(self) -> list[Any]:
        jobs = self.episode.ledger.jobs
        return [jobs[i].request for i in self.episode.pending_ids()]

    def _observe(self, result: WindowResult | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Every agent's observation and info for the coming window."""
        episode = self.episode
        pending = self._pending_requests()
        pool = episode.pool
        fits = [pool.find(r.gpu_type, r.gpus, r.kw) is not None for r in pending]
        power = episode.power_estimate()
        inlet = episode.reported_inlet_c(episode.step_index)
        obs: dict[str, Any] = self._learner_observations()
        if COOLING in self.possible_agents:
            it_row = np.asarray(self.config.base_kw_per_zone, dtype=np.float64).copy()
            for request_id in episode.ledger.running:
                job = episode.ledger.jobs[request_id]
                it_row[job.zone] += job.request.kw
            obs[COOLING] = episode.telemetry(episode.step_index, it_row)
        posteriors = (self.posterior.probabilities(self.posterior_record)
                      if self.posterior is not None and self.posterior_record is not None else None)
        obs[SCHEDULER] = self.builder.arrays(episode, pending, fits, self.stats, power, inlet, self._last,
                                             posteriors if self.team_posterior else None)
        return obs, self._infos(result, pending, fits, power, inlet, posteriors)

    def _learner_observations(self) -> dict[str, np.ndarray]:
        """Each learner's observation, its team's record (module docstring), built as one (L, 16) array."""
        if not self.learner_team:
            return {}
        cfg = self.config
        n = cfg.n_windows
        ledger = self.episode.ledger
        rows = []
        for team_id in self.learner_team.values():
            st = self.stats[team_id]
            c = ledger.status_counts[team_id]  # pending+deferred, queued, running, done, rejected
            rows.append([self.episode.window / n, ledger.budget_left[team_id] / max(cfg.team_budget, 1e-9),
                         *st.flags_last, *[f / n for f in st.flags_total],
                         (c[0] + c[1]) / 20.0, c[2] / 20.0, c[3] / 20.0, c[4] / 20.0, c[5] / 20.0,
                         self._team_reward[team_id]])
        block = np.array(rows, dtype=np.float32)
        np.maximum(block, -1.0, out=block)
        np.minimum(block, 5.0, out=block)
        return dict(zip(self.learner_team, block, strict=True))

    def _infos(self, result: WindowResult | None, pending: list[Any], fits: list[bool], power: Any,
               inlet: np.ndarray, posteriors: dict[str, float] | None = None) -> dict[str, Any]:
        episode = self.episode
        scheduler: dict[str, Any] = {"window": episode.window, "score_so_far": episode.score()}
        flag_dicts = [f.as_dict() for f in self._flags]
        if result is not None:
            scheduler.update({
                "reward_terms": {k: self._last[k] for k in ("reward", "throughput", "thermal", "carbon", "invalid_penalty")},
                "invalid": result.invalid,
                "decisions": result.decisions,
                "started": result.started,
                "incident": result.score.incident,
                "incident_reasons": result.score.incident_reasons,
                "unfinished": result.unfinished,
                "facility_kwh": result.facility_kwh,
                "carbon_g": result.carbon_g,
                "max_facility_kw": result.max_facility_kw,
            })
        if self.structured_view:
            scheduler["view"] = self.builder.view(episode, pending, fits, self.stats, power, inlet, flag_dicts,
                                                  self._audits, dict(self._last))
            for team, probability in (posteriors or {}).items():
                scheduler["view"]["teams"][team]["gaming_posterior"] = probability
        infos: dict[str, Any] = {name: {"team": team_id, "window": episode.window,
                                        "flags": [f for f in flag_dicts if f["team"] == team_id]}
                                 for name, team_id in self.learner_team.items()}
        if COOLING in self.possible_agents:
            infos[COOLING] = {"window": episode.window, "it_kwh": result.it_kwh if result else 0.0,
                              "cooling_kwh": result.cooling_kwh if result else 0.0}
        infos[SCHEDULER] = scheduler
        return infos

    # ------------------------------------------------------------------ episode end
    def _episode_summary(self) -> dict[str, Any]:
        episode, cfg = self.episode, self.config
        ledger = episode.ledger
        scores = episode.window_scores
        outcomes: dict[str, int] = {}
        for s in scores:
            for k, v in s.outcomes.items():
                outcomes[k] = outcomes.get(k, 0) + v
        honest = [a for a, k in self.team_kind.items() if k == "cooperative"]
        detection = score_detection(self.monitor.flags, self.tactics, honest, cfg.n_windows,
                                    self.monitor.settings.scope_windows)
        return {
            "score": episode.score(),
            "throughput_value": ledger.totals["value"],
            "carbon_actual_kg": ledger.totals["carbon_actual_g"] / 1000.0,
            "carbon_blind_kg": ledger.totals["carbon_blind_g"] / 1000.0,
            "incident_windows": sum(s.incident for s in scores),
            "outcomes": outcomes,
            "facility_kwh": float(episode.facility_kw.sum() * cfg.dt_s / 3600.0),
            "invalid_entries": sum(s.n_invalid for s in scores),
            "windows": [s.as_dict() for s in scores],
            "overdraft": dict(ledger.overdraft),
            "team_kinds": dict(self.team_kind),
            "detection": detection.as_dict(),
        }

    def episode_truth(self) -> list[dict[str, Any]]:
        """Every request with its truth and outcome (evaluation only; refused before the episode ends)."""
        if self.agents or not self._started:
            raise RuntimeError("private truth is only available after the episode ends")
        ledger = self.episode.ledger
        rows = []
        for request_id in ledger.order:
            job = ledger.jobs[request_id]
            rows.append({**job.request.public_dict(), **{k: getattr(job.truth, k) for k in
                         ("true_priority", "true_deadline_window", "true_carbon_flexible", "true_runtime_h")},
                         "tactics": sorted(job.tactics), "outcome": job.outcome, "score": job.score,
                         "start_window": job.start_window})
        return rows

    def hindsight_bound(self) -> Any:
        """The hindsight MILP bound of this episode (``dcops.cluster.hindsight``); after the episode ends."""
        if self.agents or not self._started or self._truncated:
            raise RuntimeError("the hindsight bound needs the whole episode: finish it first"
                               + (f" (this one was truncated at max_cycles={self.max_cycles})" if self._truncated else ""))
        from dcops.cluster.hindsight import hindsight_bound

        return hindsight_bound(self.episode)

    # ------------------------------------------------------------------ rendering
    def render(self) -> str | None:
        """``"ansi"``: the control room as text; ``"human"``: the same text printed to stdout (returns None)."""
        if self.render_mode is None:
            return None
        text = self._render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _render_text(self) -> str:
        if not self._started:
            return f"{self.metadata['name']} (not reset)"
        episode, cfg = self.episode, self.config
        status = episode.status_outputs
        power = episode.power_estimate()
        lines = [
            f"{self.metadata['name']}  window {min(episode.window + (1 if episode.done else 0), cfg.n_windows)}/{cfg.n_windows}"
            f"  score so far {episode.score():+.3f}",
            f"  facility {float(status.facility_kw):6.1f} kW (cap {cfg.power_cap_kw:.0f})  IT {float(status.it_kw):6.1f} kW"
            f"  PUE {float(status.pue):.3f}  chiller capacity {float(status.chiller_capacity_kw):6.1f} kW",
            f"  safe job power {power.safe_job_kw:6.1f} kW  committed {power.committed_job_kw:6.1f} kW"
            f"  headroom {power.headroom_kw:6.1f} kW",
            f"  pending {len(episode.pending_ids()) if not episode.done else 0}  queued {len(episode.ledger.queue)}"
            f"  running {len(episode.ledger.running)}",
        ]
        inlet = episode.reported_inlet_c(episode.step_index)
        for i, zone in enumerate(cfg.zones):
            lines.append(f"  {zone.name:<12} {zone.gpu_type:<5} GPUs free {episode.pool.free_gpus[i]:4d}/{zone.gpus:<4d}"
                         f" inlet {float(inlet[i]):5.1f} °C (reported)")
        if self._last:
            lines.append(f"  last window: reward {self._last['reward']:+.3f} (throughput {self._last['throughput']:+.3f},"
                         f" thermal {self._last['thermal']:+.3f}, carbon {self._last['carbon']:+.3f},"
                         f" invalid −{self._last['invalid_penalty']:.3f})"
                         + (f"  INCIDENT: {'; '.join(self._last['incident_reasons'])}" if self._last["incident"] else ""))
        for flag in self._flags:
            lines.append(f"  flag {flag.team} {flag.kind} ({flag.severity}, {flag.confidence:.2f})")
        return "\n".join(lines)

    def close(self) -> None:
        return None


class SchedulerEnv(gym.Env):
    """The single-agent scheduler view (Gymnasium): scripted teams, rule-based cooling.

    Observation and action are the ``scheduler`` agent's; the reward is its window reward; ``terminated`` after
    the last window; ``info`` is ``infos["scheduler"]``. Arguments as for :func:`parallel_env` (``cooling`` may
    not be ``"agent"`` here). :meth:`action_masks` gives the valid decision codes of every slot in the form
    sb3-contrib's ``MaskablePPO`` reads, so it trains on this environment with no ``ActionMasker`` wrapper.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, render_mode: str | None = None, **config: Any) -> None:
        if config.get("cooling") == "agent":
            raise ValueError("the single-agent scheduler view needs scripted cooling ('rule' or 'pid')")
        self.render_mode = render_mode
        self.parallel = DatacenterOpsEnv(render_mode=render_mode, **config)
        self.observation_space = self.parallel.observation_space(SCHEDULER)
        self.action_space = self.parallel.action_space(SCHEDULER)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**31))
        obs, infos = self.parallel.reset(seed=seed, options=options)
        return obs[SCHEDULER], infos[SCHEDULER]

    def step(self, action: Any):
        obs, rewards, terminations, truncations, infos = self.parallel.step({SCHEDULER: action})
        return obs[SCHEDULER], rewards[SCHEDULER], terminations[SCHEDULER], truncations[SCHEDULER], infos[SCHEDULER]

    def render(self) -> str | None:
        return self.parallel.render()

    def action_masks(self) -> np.ndarray:
        """The observation's ``action_mask`` as bool, ``(max_slots · (2 + max_defer),)``: the valid codes of every
        request slot, slot after slot, as ``MaskablePPO`` reads a ``MultiDiscrete`` mask (an empty slot allows
        only code 0, which is ignored, so every slot has a valid code)."""
        if not self.parallel._started:
            raise RuntimeError("call reset() first")
        return self.parallel._observations[SCHEDULER]["action_mask"].astype(bool)


def make_scheduler_env(**config: Any) -> SchedulerEnv:
    """Factory of the registered task ``cluster/operations``."""
    return SchedulerEnv(**config)
