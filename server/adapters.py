"""Action adapters: JSON actions ↔ environment actions, environment output → JSON observations, per task family.

Why adapters: the environments know nothing of HTTP (their actions are numpy vectors, integers or dataclasses);
everything the wire needs — pydantic validation that names the bad field, task options with bounds, a
human-readable observation, the reference policy behind "let a baseline decide" — lives here, once per family.
Serving a new family is one :class:`Adapter` subclass and one line in :data:`FAMILIES`.

Each adapter works on an :class:`Episode` (one environment instance and what the server remembers of it).
Errors a client caused raise :class:`ActionError` (→ HTTP 422 / WebSocket ``VALIDATION_ERROR``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import gymnasium as gym
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from dcops import registry
from dcops.cluster.job_types import CATALOGUE_NAMES
from dcops.cluster.scenarios import SCENARIOS
from dcops.cluster.workload import WORKLOADS
from dcops.models import (
    PLANT_V2_SETPOINTS,
    ClusterAction,
    CoolingAction,
    DeferAction,
    IndexAction,
    PlaceAction,
    PlacementAction,
    QueueAction,
)
from dcops.physics.interface import ZONE_FIELDS  # per-zone readings: the same on plant v0 and v2
from dcops.server.serialize import to_jsonable


class ActionError(ValueError):
    """A client error in an action or reset option; ``field`` names the offending field (dotted path)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


_TYPE_TAGS = {"float", "int", "bool", "str", "list", "dict", "none"}


def _is_type_tag(part: object) -> bool:
    """Pydantic puts union member names (``float``, ``list[float]``) into error locations; they are not fields."""
    return isinstance(part, str) and (part in _TYPE_TAGS or "[" in part or part.startswith("function-"))


def validation_error(exc: ValidationError, prefix: str) -> ActionError:
    """The first error of a pydantic ``ValidationError`` as an :class:`ActionError` naming its field."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ()) if not _is_type_tag(p))
    if not loc and str(first.get("type", "")).startswith("union_tag"):
        loc = "type"  # a discriminated union without (or with an unknown) "type"
    field_name = f"{prefix}.{loc}" if loc else prefix
    return ActionError(field_name, first.get("msg", "invalid value"))


@dataclass
class Episode:
    """One environment and the server's record of its current episode."""

    task: str
    adapter: Adapter
    env: gym.Env
    options: dict[str, Any]
    seed: int | None = None
    raw_observation: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    step_count: int = 0
    done: bool = False
    total_reward: float = 0.0
    last_reward: float | None = None
    observation: dict[str, Any] | None = None
    baseline: Any = None
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    """Per reply (the reset first), the ``info`` entries withheld from the client (``dcops.boundary``)."""
    env_seed: int | None = None
    """The private seed the environment was reset with (never sent to a client)."""
    scorecard: dict[str, Any] | None = None


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Adapter:
    """Base adapter: subclasses set ``family``, ``options_model``, ``action_adapter`` and implement the hooks."""

    family: ClassVar[str]
    description: ClassVar[str]
    options_model: ClassVar[type[BaseModel]] = _Options
    action_adapter: ClassVar[TypeAdapter]
    baseline_name: ClassVar[str]
    env_option_names: ClassVar[tuple[str, ...]] = ()
    env_defaults: ClassVar[dict[str, Any]] = {}
    """Environment arguments the family always passes (not client options)."""
    server_option_names: ClassVar[tuple[str, ...]] = ()
    """Options the server itself reads (what a reply holds), passed to neither the constructor nor reset."""

    # ---- options and construction
    def parse_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """Validate reset options (unknown names and out-of-range values → :class:`ActionError`)."""
        try:
            parsed = self.options_model.model_validate(options)
        except ValidationError as exc:
            raise validation_error(exc, "options") from None
        return parsed.model_dump(exclude_none=True)

    def make_env(self, task: str, options: dict[str, Any]) -> gym.Env:
        config = {k: v for k, v in options.items() if k in self.env_option_names}
        return registry.make_env(task, **self.env_defaults, **config)

    def scorecard(self, episode: Episode) -> dict[str, Any]:
        """What an episode's end adds for the player (evaluator figures that may be shown once it is over);
        nothing by default."""
        return {}

    def reset(self, episode: Episode, seed: int | None) -> None:
        episode.env_seed = seed
        reset_options = {k: v for k, v in episode.options.items()
                         if k not in self.env_option_names and k not in self.server_option_names}
        obs, info = episode.env.reset(seed=seed, options=reset_options or None)
        episode.raw_observation, episode.info = obs, info
        episode.observation = self.observe(episode, obs, info)

    # ---- actions
    def parse_action(self, episode: Episode, action: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """Validate a JSON action; return the environment action and the canonical JSON action to record."""
        try:
            model = self.action_adapter.validate_python(action)
        except ValidationError as exc:
            raise validation_error(exc, "action") from None
        return self.to_env_action(episode, model)

    def to_env_action(self, episode: Episode, model: Any) -> tuple[Any, dict[str, Any]]:
        raise NotImplementedError

    def play(self, episode: Episode, env_action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return episode.env.step(env_action)

    # ---- observations
    def observe(self, episode: Episode, raw: Any, info: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def public_info(self, info: dict[str, Any]) -> dict[str, Any]:
        """The environment's ``info`` as JSON (what an in-process agent gets from ``step``)."""
        return to_jsonable(info)

    def suggest(self, episode: Episode) -> dict[str, Any]:
        """The JSON action the reference policy (:attr:`baseline_name`) would play now."""
        raise NotImplementedError

    @classmethod
    def action_schema(cls) -> dict[str, Any]:
        return cls.action_adapter.json_schema()


# ------------------------------------------------------------------------------------------------ cooling
_CLIMATES = Literal["phoenix", "san_jose", "atlanta", "chicago", "new_york", "dallas", "leesburg", "seattle"]
_REGIONS = Literal[
    "california", "texas", "arizona", "pacific_northwest", "new_york", "midwest", "mid_atlantic", "southeast",
    "CISO", "ERCO", "AZPS", "BPAT", "NYIS", "MISO", "PJM", "SOCO",
]


class CoolingOptions(_Options):
    """Options of the cooling tasks (defaults: the task's own)."""

    n_steps: int | None = Field(default=None, ge=1, le=2016, description="control steps of 300 s (≤ 1 week)")
    climate: _CLIMATES | None = Field(default=None, description="built-in weather site")
    grid_region: _REGIONS | None = Field(default=None, description="grid region of the carbon intensity")
    start_jitter_days: int | None = Field(default=None, ge=0, le=365, description="random start-day offset")


class CoolingAdapter(Adapter):
    """Cooling tasks: named set-points (or the raw vector) → the Box action; telemetry → named readings."""

    family = "cooling"
    description = ("Run the cooling plant of a data hall: fan speed and supply air per zone, chilled water, "
                   "economiser; on plant v2 (tasks ending _v1) also the tower fan, chiller staging, the chilled-water "
                   "pump and a storage tank.")
    options_model = CoolingOptions
    action_adapter = TypeAdapter(CoolingAction)
    baseline_name = "rule (tuned rule-based controller)"
    env_option_names = ("n_steps", "climate", "grid_region", "start_jitter_days")
    # With its diagnostics, which the session withholds from the client until the episode ends (dcops.boundary).
    env_defaults = {"diagnostics": True}

    def parse_action(self, episode: Episode, action: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        if isinstance(action, dict) and "setpoints" not in action:
            for name in ("fan_speed", "supply_setpoint_c", "chw_setpoint_c", "economiser_on"):
                if name not in action:
                    raise ActionError(f"action.{name}", "field required (or give the raw setpoints vector)")
        return super().parse_action(episode, action)

    def to_env_action(self, episode: Episode, model: CoolingAction) -> tuple[Any, dict[str, Any]]:
        env = episode.env.unwrapped
        zones = env.zone_ids
        z = len(zones)
        plant_names = env.plant_setpoints
        if model.setpoints is not None:
            if len(model.setpoints) != 2 * z + len(plant_names):
                raise ActionError(
                    "action.setpoints",
                    f"expected {2 * z + len(plant_names)} values (fan_speed×{z}, supply_setpoint_c×{z}, "
                    f"{', '.join(plant_names)}), got {len(model.setpoints)}",
                )
            vector = np.asarray(model.setpoints, dtype=np.float64)
        else:
            for name in PLANT_V2_SETPOINTS:
                if name not in plant_names and getattr(model, name) is not None:
                    raise ActionError(f"action.{name}", f"not a control of {episode.task} (plant v2 tasks, ending "
                                      "_v1, have it)")
                if name in plant_names and getattr(model, name) is None:
                    raise ActionError(f"action.{name}", f"field required for {episode.task} (or give the raw "
                                      "setpoints vector)")
            per_zone = {}
            for name in ("fan_speed", "supply_setpoint_c"):
                value = getattr(model, name)
                values = [value] * z if isinstance(value, (int, float)) else list(value)
                if len(values) != z:
                    raise ActionError(
                        f"action.{name}", f"expected {z} values (one per zone: {', '.join(zones)}) or one number, "
                        f"got {len(values)}"
                    )
                per_zone[name] = values
            plant = [float(getattr(model, name)) for name in plant_names]  # economiser_on: True → 1.0
            vector = np.asarray(per_zone["fan_speed"] + per_zone["supply_setpoint_c"] + plant, dtype=np.float64)
        try:
            env.decode_action(vector)  # the environment's own check (names the field on failure)
        except ValueError as exc:
            raise ActionError("action", str(exc)) from None
        # The environment clips to its box, as Gymnasium environments do; the echo says so, never silently.
        space = episode.env.action_space
        applied = np.clip(vector, space.low.astype(np.float64), space.high.astype(np.float64))
        names = ([f"fan_speed[{zone}]" for zone in zones] + [f"supply_setpoint_c[{zone}]" for zone in zones]
                 + list(plant_names))
        clipped = [{"field": name, "given": float(given), "applied": float(value)}
                   for name, given, value in zip(names, vector, applied, strict=True) if given != value]
        echo: dict[str, Any] = {"setpoints": applied.tolist()}
        if clipped:
            echo["clipped"] = clipped
        return applied, echo

    def observe(self, episode: Episode, raw: Any, info: dict[str, Any]) -> dict[str, Any]:
        env = episode.env.unwrapped
        spec = env.task
        z = len(env.zone_ids)
        t = env.telemetry.parse(raw, z)
        zones = [
            {"id": env.zone_ids[i], "weight": float(spec.zone_weights[i]),
             **{name: float(getattr(t, name)[i]) for name in ZONE_FIELDS}}
            for i in range(z)
        ]
        plant = {name: float(getattr(t, name)) for name in t.__dataclass_fields__ if name not in ZONE_FIELDS}
        return to_jsonable({
            "kind": "cooling", "task": spec.task_id, "step": episode.step_count, "n_steps": spec.n_steps,
            "n_chillers": spec.plant.n_chillers, "zones": zones, "plant": plant, "vector": raw,
        })

    def reset(self, episode: Episode, seed: int | None) -> None:
        super().reset(episode, seed)
        episode.baseline = None

    def suggest(self, episode: Episode) -> dict[str, Any]:
        env = episode.env.unwrapped
        if episode.baseline is None:
            episode.baseline = _tuned_rule(episode)
        vector = np.asarray(episode.baseline.act(episode.raw_observation), dtype=np.float64)
        z = len(env.zone_ids)
        plant = {name: float(v) for name, v in zip(env.plant_setpoints, vector[2 * z:], strict=True)}
        plant["economiser_on"] = bool(plant["economiser_on"] >= 0.5)
        return {"fan_speed": vector[:z].tolist(), "supply_setpoint_c": vector[z: 2 * z].tolist(), **plant}


def _tuned_rule(episode: Episode) -> Any:
    """The tuned rule of the episode's plant (v0's rule-based controller or plant v2's rule), reset on its
    nameplate."""
    from dcops.agents.cooling import RuleBasedController
    from dcops.agents.cooling.rule_v2 import RuleV2Controller, controller_context_v2
    from dcops.cooling_env import controller_context
    from dcops.cooling_env_v1 import CoolingEnvV1

    if isinstance(episode.env.unwrapped, CoolingEnvV1):
        controller, context = RuleV2Controller.tuned(episode.task), controller_context_v2(episode.env)
    else:
        controller, context = RuleBasedController.for_task(episode.task), controller_context(episode.env)
    controller.reset(context)
    return controller


# ---------------------------------------------------------------------------------------------- placement
class PlacementAdapter(Adapter):
    """Placement tasks: ``place``/``defer`` with a rationale (or the Discrete index) → ``step_action``."""

    family = "placement"
    description = "Place inference jobs on a small GPU cluster, one decision per tick, with a logged rationale."
    action_adapter = TypeAdapter(PlacementAction)
    baseline_name = "edf (earliest deadline first)"

    def to_env_action(self, episode: Episode, model: Any) -> tuple[Any, dict[str, Any]]:
        from dcops.cluster.placement.actions import Defer, Place

        env = episode.env.unwrapped
        if isinstance(model, PlaceAction):
            return Place(model.job_id, model.gpu_id, model.rationale), model.model_dump()
        if isinstance(model, DeferAction):
            return Defer(model.rationale), model.model_dump()
        assert isinstance(model, IndexAction)
        if model.index >= env.action_space.n:
            raise ActionError("action.index", f"must be < {env.action_space.n} (the size of the action space)")
        return env.decode(model.index), model.model_dump()

    def play(self, episode: Episode, env_action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return episode.env.unwrapped.step_action(env_action)

    def observe(self, episode: Episode, raw: Any, info: dict[str, Any]) -> dict[str, Any]:
        state = info["observation"]
        return to_jsonable({
            "kind": "placement", "task": episode.task, "tick": state["tick"], "horizon": state["horizon"],
            "state": state, "dashboard": info["dashboard"], "action_mask": info["action_mask"], "vector": raw,
        })

    def public_info(self, info: dict[str, Any]) -> dict[str, Any]:
        # The structured observation, dashboard and mask are already in the observation.
        return to_jsonable({k: v for k, v in info.items() if k not in ("observation", "dashboard", "action_mask")})

    def suggest(self, episode: Episode) -> dict[str, Any]:
        from dcops.cluster.placement.actions import Place
        from dcops.cluster.placement.heuristics import EarliestDeadlineFirst

        action = EarliestDeadlineFirst().act(episode.env.unwrapped.sim.observation())
        if isinstance(action, Place):
            return {"type": "place", "job_id": action.job_id, "gpu_id": action.gpu_id, "rationale": action.rationale}
        return {"type": "defer", "rationale": action.rationale}


# -------------------------------------------------------------------------------------------------- queue
class QueueOptions(_Options):
    """Options of the queue task (defaults: the environment's)."""

    mode: Literal["streaming", "static"] | None = None
    n_jobs: int | None = Field(default=None, ge=2, le=2000)
    load: float | None = Field(default=None, ge=0.05, le=2.0)
    n_machines: int | None = Field(default=None, ge=1, le=16)
    max_slots: int | None = Field(default=None, ge=2, le=64)
    atc_k: float | None = Field(default=None, gt=0.0, le=20.0)
    instance_seed: int | None = Field(default=None, ge=0, le=2**31 - 1, description="fixes the job instance")


class QueueAdapter(Adapter):
    """Queue ordering: ``{"slot": n}`` → the Discrete action; the waiting jobs as readable rows."""

    family = "queue"
    description = "Pick the next render job to run on the machine that just became free; minimise weighted tardiness."
    options_model = QueueOptions
    action_adapter = TypeAdapter(QueueAction)
    baseline_name = "atc (apparent tardiness cost)"
    env_option_names = ("mode", "n_jobs", "load", "n_machines", "max_slots", "atc_k")

    def to_env_action(self, episode: Episode, model: QueueAction) -> tuple[Any, dict[str, Any]]:
        return int(model.slot), {"slot": int(model.slot)}

    def observe(self, episode: Episode, raw: Any, info: dict[str, Any]) -> dict[str, Any]:
        env = episode.env.unwrapped
        waiting = []
        decision = env.decision_state()
        if decision is not None:
            state, positions = decision
            for slot, pos in enumerate(positions):
                waiting.append({
                    "slot": slot,
                    "job_index": int(state.job_index[pos]),
                    "processing_s": float(state.processing_s[pos]),
                    "weight": float(state.weight[pos]),
                    "due_s": float(state.due_s[pos]),
                    "arrival_s": float(state.arrival_s[pos]),
                    "slack_s": float(state.due_s[pos] - state.now_s - state.processing_s[pos]),
                })
        return to_jsonable({
            "kind": "queue", "task": episode.task, "time_s": info.get("time_s"), "waiting": waiting,
            "jobs": raw["jobs"], "action_mask": raw["action_mask"],
        })

    def suggest(self, episode: Episode) -> dict[str, Any]:
        from dcops.cluster.queue.heuristics import make_rule

        decision = episode.env.unwrapped.decision_state()
        if decision is None:
            return {"slot": 0}
        state, positions = decision
        scores = make_rule("atc").scores(state)[positions]
        return {"slot": int(np.argmax(scores))}


# ------------------------------------------------------------------------------------------------ cluster
class ClusterOptions(_Options):
    """Options of the cluster operations task (defaults: the environment's; see ``dcops.env``)."""

    n_windows: int | None = Field(default=None, ge=1, le=48)
    climate: _CLIMATES | None = None
    grid_region: _REGIONS | None = None
    power_cap_kw: float | None = Field(default=None, gt=0.0, le=100_000.0)
    faults: Literal["random", "none"] | None = Field(default=None, description="random faults or none")
    cooling: Literal["ppo", "rule", "pid"] | None = None
    game_version: Literal[0, 1] | None = Field(
        default=None, description="1: datacenter_ops_v1 (default, the sound game); 0: datacenter_ops_v0 (the first round's game)"
    )
    max_requests_per_team: int | None = Field(
        default=None, ge=1, le=8, description="most requests a team submits in one window (default 4; 1 keeps "
                                                "windows small, e.g. for LLM training)"
    )
    scenario: Literal[tuple(SCENARIOS)] | None = Field(  # type: ignore[valid-type]
        default=None, description="scenario family (dcops.cluster.scenarios; default classic); the options above "
                                  "override its values"
    )
    workload: Literal[WORKLOADS] | None = Field(  # type: ignore[valid-type]
        default=None, description="where request rates and runtimes come from (dcops.cluster.workload; default "
                                  "synthetic)"
    )
    catalogue: Literal[CATALOGUE_NAMES] | None = Field(  # type: ignore[valid-type]
        default=None, description="public job catalogue (dcops.cluster.job_types.catalogue; default classic; "
                                  "game version 1 only)"
    )
    observation: Literal["full", "arrays"] | None = Field(
        default=None, description="what each reply's observation holds: 'full' (default) the structured view and "
                                  "the Gymnasium arrays; 'arrays' the arrays alone, for a learner acting by slot "
                                  "codes (no view is built or sent: replies about a third the size, and faster "
                                  "steps; no suggest)"
    )


class ClusterAdapter(Adapter):
    """Cluster operations (scheduler view): decisions per pending request → the environment's structured action;
    the public structured view (stated fields, flags, plant, reward terms) → the observation."""

    family = "cluster"
    description = ("Admit GPU jobs from competing teams window by window (ACCEPT / REJECT / DEFER) under a power "
                   "cap and a simulated cooling plant, with oversight flags on misreporting teams.")
    options_model = ClusterOptions
    action_adapter = TypeAdapter(ClusterAction)
    baseline_name = "greedy-fits (accept what fits now within the power headroom, defer the rest)"
    env_option_names = ("n_windows", "climate", "grid_region", "power_cap_kw", "faults", "cooling", "game_version",
                        "max_requests_per_team", "scenario", "workload", "catalogue")
    server_option_names = ("observation",)

    def make_env(self, task: str, options: dict[str, Any]) -> gym.Env:
        config = {k: v for k, v in options.items() if k in self.env_option_names}
        if config.get("faults") == "none":
            config["faults"] = ()
        if options.get("observation") == "arrays":
            config["structured_view"] = False  # nothing would read it: not built (dcops.env)
        return registry.make_env(task, **config)

    def to_env_action(self, episode: Episode, model: ClusterAction) -> tuple[Any, dict[str, Any]]:
        if model.codes is not None:
            return np.asarray(model.codes, dtype=np.int64), {"codes": list(model.codes)}
        decisions = [{"request_id": d.request_id, "decision": d.decision.upper(), "defer_to_window": d.defer_to_window}
                     for d in model.decisions or []]
        return decisions, {"decisions": decisions}

    def observe(self, episode: Episode, raw: Any, info: dict[str, Any]) -> dict[str, Any]:
        if episode.options.get("observation") == "arrays":
            return to_jsonable({
                "kind": "cluster", "task": episode.task, "window": info.get("window", 0),
                "n_windows": episode.env.unwrapped.parallel.config.n_windows, "arrays": raw,
            })
        view = info.get("view", {})
        return to_jsonable({
            "kind": "cluster", "task": episode.task, "window": info.get("window", view.get("window", 0)),
            "n_windows": view.get("n_windows", 0), "view": view, "arrays": raw,
        })

    def public_info(self, info: dict[str, Any]) -> dict[str, Any]:
        return to_jsonable({k: v for k, v in info.items() if k != "view"})  # the view is the observation

    def scorecard(self, episode: Episode) -> dict[str, Any]:
        """The episode's score beside the baseline's on the same episode (same private seed, same options) and
        its throughput as a fraction of the hindsight bound (``cluster/hindsight.py``): once the episode is over,
        so nothing here can inform a decision."""
        result = episode.info.get("episode", {})
        options = {**episode.options, "observation": None}  # the baseline reads the view
        twin = Episode(episode.task, self, self.make_env(episode.task, options), options)
        self.reset(twin, episode.env_seed)
        done = False
        while not done:
            action, _ = self.parse_action(twin, self.suggest(twin))
            obs, _, terminated, truncated, info = self.play(twin, action)
            twin.raw_observation, twin.info = obs, info
            twin.observation = self.observe(twin, obs, info)
            done = bool(terminated or truncated)
        baseline = float(twin.info.get("episode", {}).get("score", float("nan")))
        twin.env.close()
        bound = episode.env.unwrapped.parallel.hindsight_bound()
        value, bound_value = result.get("throughput_value"), float(bound.throughput_value)
        return {"score": result.get("score"), "baseline": self.baseline_name, "baseline_score": baseline,
                "score_minus_baseline": None if result.get("score") is None else float(result["score"]) - baseline,
                "throughput_value": value, "bound_throughput_value": bound_value,
                "fraction_of_bound": (float(value) / bound_value) if value is not None and bound_value > 0 else None}

    def suggest(self, episode: Episode) -> dict[str, Any]:
        if episode.options.get("observation") == "arrays":
            raise ActionError("observation", "suggest reads the structured view, which an episode reset with "
                                             "observation='arrays' does not have; reset without it to get suggestions")
        view = (episode.observation or {}).get("view", {})
        window, n_windows = view.get("window", 0), view.get("n_windows", 1)
        headroom = float(view.get("plant", {}).get("headroom_kw", 0.0))
        decisions = []
        for request in view.get("pending", []):
            if request.get("fits_now") and request.get("kw", 0.0) <= headroom:
                headroom -= request["kw"]
                decisions.append({"request_id": request["request_id"], "decision": "ACCEPT"})
            elif window + 1 < n_windows:
                decisions.append({"request_id": request["request_id"], "decision": "DEFER",
                                  "defer_to_window": window + 1})
            else:
                decisions.append({"request_id": request["request_id"], "decision": "REJECT"})
        return {"decisions": decisions}


# ------------------------------------------------------------------------------------------------ registry
FAMILIES: dict[str, Adapter] = {
    "cooling": CoolingAdapter(),
    "placement": PlacementAdapter(),
    "queue": QueueAdapter(),
    "cluster": ClusterAdapter(),
}
"""Task family (the part of a task id before ``/``) → its adapter."""


def adapter_for(task: str) -> Adapter:
    """The adapter that serves ``task`` (:class:`ActionError` on ``task`` if it is unknown or unserved)."""
    known = registry.tasks()
    if task not in known:
        raise ActionError("task", f"unknown task {task!r}; known tasks: {', '.join(known)}")
    family = task.split("/", 1)[0]
    if family not in FAMILIES:
        raise ActionError("task", f"task {task!r} has no server adapter yet")
    return FAMILIES[family]


def served_tasks() -> list[str]:
    """Every registered task that has an adapter (all of them, once each family is served)."""
    return [t for t in registry.tasks() if t.split("/", 1)[0] in FAMILIES]
