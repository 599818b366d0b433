"""Typed wire models of the OpenEnv HTTP/WebSocket API, shared by the server (``dcops.server``) and the client
(``dcops.client``).

Why here and not in ``server/``: a client must be able to build actions and read observations without
importing FastAPI or any environment; both ends validate the same pydantic models, so the JSON schemas
served at ``/schema`` are exactly what the server accepts.

**Actions** (the body of ``POST /step`` is ``{"action": {...}}``; a WebSocket ``step`` frame carries the
action itself as ``data``), one model per task family:

- cooling tasks: :class:`CoolingAction`, physical set-points by name (``fan_speed`` and
  ``supply_setpoint_c`` per zone, or one number for every zone; ``chw_setpoint_c``; ``economiser_on``) or
  the raw ``setpoints`` vector of the Gymnasium action space. Values outside the box are clipped by the
  environment, exactly as in-process.
- placement tasks: :class:`PlaceAction` ``{"type": "place", "job_id", "gpu_id", "rationale"}``,
  :class:`DeferAction` ``{"type": "defer", "rationale"}`` or :class:`IndexAction` ``{"type": "index",
  "index": n}`` (the Discrete action of the Gymnasium space).
- queue task: :class:`QueueAction` ``{"slot": n}``.
- cluster operations task: :class:`ClusterAction` ``{"decisions": [{"request_id", "decision": "ACCEPT" |
  "REJECT" | "DEFER", "defer_to_window"}, ...]}`` or ``{"codes": [...]}``.

**Observations** (``observation`` of every reply) are discriminated by ``kind``: :class:`CoolingObservation`
(reported sensor values only; the true inlet temperatures stay in ``metadata.info`` as the environment's
``info`` has them), :class:`PlacementObservationWire`, :class:`QueueObservation`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, model_validator

API_VERSION = "1.1.0"
"""Version of the wire contract (the FastAPI app's version; OpenEnv's validator expects 1.x). 1.1.0: the
cluster observation's ``arrays`` carry ``action_mask`` ((288,) int8, slot after slot: the one mask convention
of ``dcops.registry``) in place of 1.0.0's ``decision_mask`` ((48, 6)); ``/health`` reports ``workers``."""

MAX_RATIONALE_CHARS = 2000
"""Longest rationale accepted on the wire (the placement environment keeps its first 500 characters)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


# ---------------------------------------------------------------------------------------------------- actions
Number = Annotated[float, Field(allow_inf_nan=False)]


PLANT_V2_SETPOINTS = ("tower_fan_speed", "chillers_staged", "chw_pump_speed", "tank_flow")
"""The named cooling set-points only the plant v2 tasks (``_v1``) have."""


class CoolingAction(_Strict):
    """Set-points for a cooling task: either the named fields or the raw ``setpoints`` vector.

    ``fan_speed`` (fraction, 0.2–1) and ``supply_setpoint_c`` (°C, 15–27) take one value per zone, or one
    number for every zone; ``chw_setpoint_c`` (°C; 5–18 on plant v0, 5–20 on plant v2); ``economiser_on``
    (bool). The plant v2 tasks (ids ending ``_v1``) also need ``tower_fan_speed`` (0.2–1), ``chillers_staged``
    (0–N, rounded), ``chw_pump_speed`` (0.3–1) and ``tank_flow`` (−1 discharge … +1 charge; no effect without a
    tank); the v0 tasks refuse them. ``setpoints`` is the Gymnasium vector ``[fan_speed × Z, supply_setpoint_c ×
    Z, then the plant set-points in the order above]`` (2·Z + 2 values on v0, 2·Z + 6 on v1).
    """

    fan_speed: Number | list[Number] | None = Field(default=None, description="fraction of max airflow per zone")
    supply_setpoint_c: Number | list[Number] | None = Field(default=None, description="supply air °C per zone")
    chw_setpoint_c: Number | None = Field(default=None, description="chilled-water set-point, °C")
    economiser_on: StrictBool | None = Field(default=None, description="enable the waterside economiser")
    tower_fan_speed: Number | None = Field(default=None, description="plant v2 (_v1 tasks): cooling-tower fan, 0.2–1")
    chillers_staged: Number | None = Field(default=None, description="plant v2: chillers requested on, 0–N")
    chw_pump_speed: Number | None = Field(default=None, description="plant v2: chilled-water pump speed, 0.3–1")
    tank_flow: Number | None = Field(default=None, description="plant v2: storage tank flow, −1 … +1")
    setpoints: list[Number] | None = Field(default=None, description="raw set-point vector (2·Z + 2 values on "
                                           "plant v0, 2·Z + 6 on plant v2)")

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, json_schema_extra={"oneOf": [
        {"required": ["setpoints"]},
        {"required": ["fan_speed", "supply_setpoint_c", "chw_setpoint_c", "economiser_on"]},
    ]})

    @model_validator(mode="after")
    def _one_form(self) -> CoolingAction:
        named = {
            "fan_speed": self.fan_speed, "supply_setpoint_c": self.supply_setpoint_c,
            "chw_setpoint_c": self.chw_setpoint_c, "economiser_on": self.economiser_on,
        }
        given = [k for k, v in named.items() if v is not None]
        given += [k for k in PLANT_V2_SETPOINTS if getattr(self, k) is not None]
        if self.setpoints is not None:
            if given:
                raise ValueError(f"give either setpoints or the named fields, not both (also got {', '.join(given)})")
            return self
        missing = [k for k, v in named.items() if v is None]
        if missing:
            raise ValueError(f"missing field(s): {', '.join(missing)} (or give the raw setpoints vector)")
        return self


class PlaceAction(_Strict):
    """Start job ``job_id`` on GPU ``gpu_id`` this tick (an impossible placement is an *invalid* action:
    penalised by the environment, the tick passes as a defer)."""

    type: Literal["place"] = "place"
    job_id: str = Field(min_length=1, max_length=200)
    gpu_id: str = Field(min_length=1, max_length=200)
    rationale: str = Field(default="", max_length=MAX_RATIONALE_CHARS)


class DeferAction(_Strict):
    """Start nothing this tick."""

    type: Literal["defer"] = "defer"
    rationale: str = Field(default="", max_length=MAX_RATIONALE_CHARS)


class IndexAction(_Strict):
    """The Gymnasium ``Discrete`` action of a placement task (``job_slot · max_gpus + gpu_slot``; the last
    index defers)."""

    type: Literal["index"] = "index"
    index: StrictInt = Field(ge=0, le=1_000_000)


PlacementAction = Annotated[PlaceAction | DeferAction | IndexAction, Field(discriminator="type")]


class QueueAction(_Strict):
    """Run the job in slot ``slot`` next (an empty slot is an *invalid* action: the environment runs the first
    waiting job and subtracts its penalty)."""

    slot: StrictInt = Field(ge=-1_000_000, le=1_000_000)


class ClusterDecision(_Strict):
    """One decision about a pending request: ``defer_to_window`` (an absolute window index) only for DEFER."""

    request_id: str = Field(min_length=1, max_length=100)
    decision: Literal["ACCEPT", "REJECT", "DEFER", "accept", "reject", "defer"]
    defer_to_window: StrictInt | None = Field(default=None, ge=-1000, le=1000)


class ClusterAction(_Strict):
    """The scheduler's decisions for this window: ``decisions`` (one per pending request) or ``codes`` (the
    ``MultiDiscrete`` array: per request slot 0 ACCEPT, 1 REJECT, 1 + k DEFER by k windows). Duplicates, unknown
    ids, a DEFER past the horizon or a missing decision are the environment's *invalid* decisions: counted,
    penalised, listed in ``metadata.info.invalid``, never an HTTP error."""

    decisions: list[ClusterDecision] | None = Field(default=None, max_length=1000)
    codes: list[Annotated[StrictInt, Field(ge=0, le=1000)]] | None = Field(default=None, max_length=1000)

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, json_schema_extra={"oneOf": [
        {"required": ["decisions"]}, {"required": ["codes"]},
    ]})

    @model_validator(mode="after")
    def _one_form(self) -> ClusterAction:
        if (self.decisions is None) == (self.codes is None):
            raise ValueError("give exactly one of decisions or codes")
        return self


AnyAction = CoolingAction | PlacementAction | QueueAction | ClusterAction
"""Any task family's action (the session's task decides which one applies)."""


# ----------------------------------------------------------------------------------------------- observations
class CoolingZone(BaseModel):
    """One zone as the sensors report it (°C, fractions)."""

    id: str
    weight: float
    inlet_c: float = Field(description="reported inlet temperature (sensor noise, bias and drift included)")
    return_c: float
    load_fraction: float
    fan_speed: float
    supply_c: float


class CoolingPlant(BaseModel):
    """Plant-level readings (``carbon_kg_per_kwh`` is the grid's intensity now; ``pue`` of the last step). The
    plant v2 tasks (``_v1``) add the fields that default to ``None`` here (``dcops.physics.v2.interface``)."""

    chw_supply_c: float
    chillers_available: float
    economiser_fraction: float
    dry_bulb_c: float
    wet_bulb_c: float
    carbon_kg_per_kwh: float
    hour_sin: float
    hour_cos: float
    progress: float
    cooling_over_design_it: float
    pue: float
    chw_return_c: float | None = None
    cw_supply_c: float | None = Field(default=None, description="condenser water leaving the tower, °C")
    chillers_on: float | None = None
    tower_fan_speed: float | None = None
    chw_pump_speed: float | None = None
    price_per_kwh: float | None = None
    tank_temp_c: float | None = Field(default=None, description="storage tank temperature, °C (0 with no tank)")
    tank_flow: float | None = None
    wet_bulb_1h_c: float | None = Field(default=None, description="forecast, with error")
    wet_bulb_3h_c: float | None = None
    carbon_1h_kg_per_kwh: float | None = None
    carbon_3h_kg_per_kwh: float | None = None
    price_1h_per_kwh: float | None = Field(default=None, description="the published tariff, exact")
    price_3h_per_kwh: float | None = None
    load_1h_fraction: float | None = Field(default=None, description="forecast total IT load over design")
    load_3h_fraction: float | None = None


class CoolingObservation(BaseModel):
    kind: Literal["cooling"] = "cooling"
    task: str
    step: int
    n_steps: int
    n_chillers: int
    zones: list[CoolingZone]
    plant: CoolingPlant
    vector: list[float] = Field(description="the Gymnasium observation (telemetry vector)")


class PlacementObservationWire(BaseModel):
    kind: Literal["placement"] = "placement"
    task: str
    tick: int
    horizon: int
    state: dict[str, Any] = Field(description="the structured observation: GPUs, jobs, metrics, history, feasible")
    dashboard: str
    action_mask: list[int]
    vector: list[float]


class QueueJob(BaseModel):
    """A waiting job in a decision slot (seconds; ``slack_s`` = due − now − processing)."""

    slot: int
    job_index: int
    processing_s: float
    weight: float
    due_s: float
    arrival_s: float
    slack_s: float


class QueueObservation(BaseModel):
    kind: Literal["queue"] = "queue"
    task: str
    time_s: float | None
    waiting: list[QueueJob]
    jobs: list[list[float]] = Field(description="the Gymnasium observation's job feature matrix")
    action_mask: list[int]


class _ViewPart(BaseModel):
    """A part of the cluster's public view (``cluster/observation.py`` builds it; ``dcops.boundary`` says why
    each field may be seen). Exact: a test validates served views against these models with no extra field."""

    model_config = ConfigDict(extra="forbid")


class PendingRequestView(_ViewPart):
    """A request awaiting a decision: what its team stated, never its truth."""

    request_id: str
    team: str
    job_type: str
    description: str = Field(description="the team's free text: untrusted (it may carry an injection)")
    kw: float = Field(description="stated job power, kW")
    duration_h: float = Field(description="stated runtime, h")
    gpus: int
    gpu_type: str
    priority: str = Field(description="stated priority: LOW, MEDIUM, HIGH or CRITICAL")
    deadline_window: int = Field(description="stated deadline, as a window index")
    carbon_flexible: bool = Field(description="stated: may be shifted to a cleaner window")
    chargeback: float = Field(description="what the team is charged if accepted (budget units)")
    submitted_window: int
    slot: int = Field(description="row of the request in the Gymnasium array observation")
    windows_waited: int
    fits_now: bool = Field(description="GPUs and safe power are free for it this window")


class QueuedJobView(_ViewPart):
    """An admitted job waiting for GPUs or power."""

    request_id: str
    gpu_type: str
    gpus: int
    kw: float


class RunningJobView(_ViewPart):
    request_id: str
    team: str
    zone: str
    kw: float
    gpus: int
    started_window: int
    stated_end_window: int


class PlantView(_ViewPart):
    """Plant meters at the end of the last window (before window 0 ends: the planning probe at nominal load)
    and the power budget, kW unless named otherwise."""

    facility_kw: float
    it_kw: float
    cooling_kw: float
    pue: float
    chillers_available: float
    chiller_capacity_kw: float
    outdoor_dry_bulb_c: float
    base_load_kw: float
    planning_pue: float
    cooling_capacity_kw: float
    safe_it_kw: float
    safe_job_kw: float
    committed_job_kw: float
    headroom_kw: float


class ZoneView(_ViewPart):
    name: str
    gpu_type: str
    gpus_total: int
    gpus_free: int
    job_kw_free: float
    fan_units_alive: float
    inlet_c_reported: float = Field(description="the zone's inlet sensor, °C (it may drift; the truth is private)")


class TeamView(_ViewPart):
    """Public statistics of a team's stated fields, audits and flags."""

    budget_left: float
    requests: int
    stated_high_share: float
    stated_inflexible_share: float
    urgent_share: float
    audited_jobs: int
    audited_mean_deadline_gap: float | None = Field(description="mean (true − stated) deadline of audited jobs, "
                                                                "windows; None before any audit")
    flags_last_window: dict[str, int]
    flags_so_far: dict[str, int]
    gaming_posterior: float | None = Field(default=None, description="P(the team games) from public evidence "
                                                                     "(oversight/posterior.py; datacenter_ops_v1)")


class FlagView(_ViewPart):
    team: str
    kind: str
    window: int
    severity: str
    confidence: float
    evidence: str
    request_ids: list[str]


class AuditView(_ViewPart):
    """A completed or rejected job's revealed truth beside what was stated: public evidence once resolved."""

    model_config = ConfigDict(extra="allow")  # the stated fields plus what resolution reveals (per game version)

    request_id: str
    team: str
    priority: str
    deadline_window: int
    carbon_flexible: bool


class InvalidView(_ViewPart):
    count: int
    duplicates: list[str]
    unknown_ids: list[str]
    bad_defer: list[str]
    malformed: list[str]
    undecided: list[str]
    overflow: list[str]


class LastWindowView(_ViewPart):
    """What happened in the window just played (empty before window 0 ends)."""

    window: int
    reward: float
    throughput: float
    thermal: float
    carbon: float
    invalid_penalty: float
    incident: bool
    incident_reasons: list[str]
    invalid: InvalidView
    decisions: dict[str, list[str]]
    started: list[str]


class NoWindowYet(_ViewPart):
    """``last_window`` before window 0 ends: an empty object."""


class ClusterView(_ViewPart):
    """The public structured view of ``cluster/operations`` at the start of a window."""

    window: int
    n_windows: int
    window_h: float = Field(description="window length, h")
    time: str = Field(description="local time at the window's start, ISO 8601")
    power_cap_kw: float
    catalogue: str = Field(default="classic", description="the public job catalogue whose norms the job types "
                                                            "follow (dcops.cluster.job_types.catalogue); absent "
                                                            "from a view of the default, classic")
    pending: list[PendingRequestView]
    overflow: list[str] = Field(description="pending request ids beyond the array's slots (they get the default)")
    queued: list[QueuedJobView]
    running: list[RunningJobView]
    plant: PlantView
    zones: list[ZoneView]
    carbon_forecast_g_per_kwh: list[float] = Field(description="per window of the episode (index = window)")
    teams: dict[str, TeamView]
    flags: list[FlagView] = Field(description="flags raised at the end of the last window")
    audits: list[AuditView]
    last_window: LastWindowView | NoWindowYet = Field(description="empty before window 0 ends")


class ClusterObservation(BaseModel):
    kind: Literal["cluster"] = "cluster"
    task: str
    window: int
    n_windows: int
    view: ClusterView | None = Field(default=None, description="the public structured view: pending requests "
                                                               "with stated fields, plant, zones, carbon forecast, "
                                                               "team statistics, flags, audits (absent when the "
                                                               "episode was reset with observation='arrays')")
    arrays: dict[str, Any] = Field(description="the Gymnasium observation (requests, request_mask, action_mask, "
                                               "cluster, zones, teams)")


Observation = Annotated[
    CoolingObservation | PlacementObservationWire | QueueObservation | ClusterObservation,
    Field(discriminator="kind"),
]


# ------------------------------------------------------------------------------------------ requests / replies
class ResetRequest(BaseModel):
    """Body of ``POST /reset`` (all optional). Unknown top-level fields are task options too, so
    ``{"task": "queue/weighted_tardiness", "n_jobs": 40}`` works like ``"options": {"n_jobs": 40}``."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"examples": [{"task": "cooling/single_zone_recovery", "seed": 7}]})

    seed: int | None = Field(default=None, ge=0, le=2**63 - 1, description="seed of the episode")
    episode_id: str | None = Field(default=None, min_length=1, max_length=255, description="your label")
    task: str | None = Field(default=None, max_length=200, description="a task id of /metadata (default: the server's)")
    options: dict[str, Any] | None = Field(default=None, description="task options (see /metadata)")


class StepRequest(BaseModel):
    """Body of ``POST /step``: the action of the session's task family (see ``/schema``)."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"examples": [
        {"action": {"fan_speed": 0.6, "supply_setpoint_c": 21.0, "chw_setpoint_c": 12.0, "economiser_on": True}},
        {"action": {"type": "place", "job_id": "J1", "gpu_id": "h100-0", "rationale": "tightest deadline"}},
        {"action": {"type": "defer", "rationale": "a cheaper GPU frees next tick"}},
        {"action": {"slot": 0}},
        {"action": {"decisions": [{"request_id": "r0001", "decision": "ACCEPT"}]}},
    ]})

    action: dict[str, Any] = Field(description="an action object of the task's family (see /schema)")
    expected_step: int | None = Field(
        default=None, ge=0,
        description="the episode's step count before this action, as the client believes it: a retry of the last "
                    "step (one behind, same action) gets the same reply again (metadata.replayed) instead of a "
                    "second step; any other mismatch is 409 STALE_STEP")


class StepResponse(BaseModel):
    """Reply of reset and step: the OpenEnv shape, plus the HTTP session id."""

    observation: dict[str, Any]
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] | None = None
    session_id: str | None = Field(default=None, description="send it back as the X-Session-Id header")


class EpisodeState(BaseModel):
    """Reply of ``GET /state`` (and of a WebSocket ``state`` frame)."""

    session_id: str
    episode_id: str | None = None
    task: str | None = None
    seed: int | None = None
    step_count: int = 0
    done: bool = False
    total_reward: float = 0.0
    last_reward: float | None = None
    observation: dict[str, Any] | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class ErrorResponse(BaseModel):
    """Every error reply's body (4xx, 5xx): ``code`` is stable for programs, ``message`` is for people,
    ``field`` names what to fix when one field is at fault; ``detail`` keeps FastAPI's shape (a string, or the
    validation errors with their locations)."""

    detail: str | list[dict[str, Any]]
    code: str = Field(description="e.g. VALIDATION_ERROR, SESSION_NOT_FOUND, SESSION_EVICTED, STALE_STEP, "
                                  "CAPACITY_REACHED, PAYLOAD_TOO_LARGE")
    message: str
    field: str | None = None


class WorkerStatus(BaseModel):
    configured: int
    alive: int
    replaced: int


class HealthResponse(BaseModel):
    status: Literal["healthy", "degraded"] = Field(
        default="healthy", description="degraded: every session slot is taken (new sessions evict the least "
                                       "recently used idle one, or get 503 when none is idle)")
    sessions: int
    max_sessions: int
    version: str
    workers: WorkerStatus | None = Field(
        default=None, description="with worker processes or Ray actors (`--workers N`): how many, how many alive, "
                                  "and how many were found dead and replaced (their sessions were lost)")


class SessionTotals(BaseModel):
    created: int
    expired: int
    evicted: int
    refused: int


class SessionsResponse(BaseModel):
    """``GET /sessions``: capacity and occupancy (never the ids: they are the sessions' only credential)."""

    capacity: int
    open: int
    running: int = Field(description="sessions with an episode in progress")
    finished: int = Field(description="sessions with no episode running (never reset, or over): evicted first")
    websocket: int = Field(description="WebSocket sessions (never evicted: the connection is their lifetime)")
    evictable: int = Field(description="HTTP sessions not inside a request: what a new session may replace")
    idle_timeout_s: float
    totals: SessionTotals


class TaskInfo(BaseModel):
    id: str
    family: str
    description: str
    options: dict[str, Any] = Field(description="JSON schema of the task options accepted by reset")


class MetadataResponse(BaseModel):
    name: str
    description: str
    version: str
    default_task: str
    tasks: list[TaskInfo]
    max_sessions: int
    session_idle_timeout_s: float
    episode_store: bool


class SchemaResponse(BaseModel):
    action: dict[str, Any]
    observation: dict[str, Any]
    state: dict[str, Any]
    actions_by_family: dict[str, dict[str, Any]]


class SuggestResponse(BaseModel):
    """What a reference policy would play now (``GET /suggest``): step it or ignore it."""

    policy: str
    action: dict[str, Any]
