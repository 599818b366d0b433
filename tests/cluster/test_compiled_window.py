"""A cluster window through the compiled kernels (``dcops.cluster.compiled_window``) equals the Python path, bit
for bit: whole episodes, a declined plant step, and the PPO controller's compiled actor step by step."""

from __future__ import annotations

import hashlib
from dataclasses import asdict

import numpy as np
import pytest

import dcops
import dcops.agents.cooling.ppo_batched as ppo_batched
import dcops.cluster.compiled_window as compiled_window
from dcops.agents.cooling import ControllerContext, PPOController, RuleBasedController
from dcops.cluster.config import ClusterConfig
from dcops.cluster.cooling import RuleFastPath, TelemetryController
from dcops.physics.compiled_plant import JIT_ENV, compiled, plant_kernel
from dcops.physics.interface import decode_setpoint_values

WEIGHTS = [4.0, 4.0, 2.0, 1.0]
_last_episode: list = []  # the episode _faulty_episode built last (a test whose episode raises reads it here)


def _bytes(value) -> bytes:
    """The value's bytes: equality that sees signed zeros and NaN payloads (np.array_equal sees neither)."""
    return np.ascontiguousarray(np.asarray(value, dtype=np.float64)).tobytes()


def _faulty_episode(monkeypatch, jit: bool, cooling: str = "ppo", switch_after: int | None = None,
                    batched: bool = True, nan_reading_at: int | None = None):
    """test_cooling_fast_path's two days of jobs through a chiller trip, a fan failure and a drifting sensor, with
    the controller handed to the episode as the environment hands it (no recorder in between). With
    ``switch_after``, the windows from that one on take the other path (the compiled actor dropped, or made).
    ``batched=False`` steps the PPO controller through its per-episode compiled loop (``CompiledPPO.act``) rather
    than the batched kernels (``dcops.agents.cooling.ppo_batched``); ``nan_reading_at`` makes zone 0's inlet reading
    at that global step NaN (its sensor noise), on every path."""
    from dcops.cluster.decisions import resolve_structured
    from dcops.cluster.episode import ClusterEpisode
    from dcops.cluster.requests import Priority, Request, RequestTruth, Submission
    from dcops.physics.faults import ChillerTrip, FanFailure, SensorDrift
    from tests.cluster.test_cooling_fast_path import JOBS

    monkeypatch.setenv(JIT_ENV, "1" if jit else "0")
    if not batched:
        monkeypatch.setattr(ppo_batched.BatchedPPO, "batch_key", lambda self, episode, window: None)
    elif jit and cooling == "ppo" and not ppo_batched.agrees(PPOController().policy):
        pytest.skip("this machine's BLAS or tanh gives the batched MLP other bits: the per-episode path runs")
    config = ClusterConfig(faults=(ChillerTrip(start_s=2.0 * 3600.0, chiller=1, duration_s=4 * 3600.0),
                                   FanFailure(start_s=5.0 * 3600.0, zone=2, units_lost=0.5),
                                   SensorDrift(start_s=1.0 * 3600.0, zone=0, rate_k_per_h=1.5)))
    plant = config.plant_config()
    if cooling == "ppo":
        controller = TelemetryController(PPOController(), ControllerContext.from_plant(plant, WEIGHTS, 300.0))
    else:  # the rule's fast path, with the triage of the least critical zone that reads the chilled water
        controller = RuleFastPath(zone_weights=np.asarray(WEIGHTS), **asdict(RuleBasedController()))
    episode = ClusterEpisode(config, controller)
    _last_episode[:] = [episode]
    episode.reset(np.random.default_rng(11), np.random.default_rng(12), ["team_0"])
    if nan_reading_at is not None:
        episode.inlet_errors.noise_k[nan_reading_at, 0] = np.nan
    assert (controller.compiled_actor is not None) is jit
    jobs = [*JOBS, ("e", "H100", 32, 50.0, 2.0)]
    episode.submit([Submission(Request(rid, "team_0", "finetune", "", kw, h, gpus, gpu, Priority.HIGH, 9, False, 1.0,
                                       0), RequestTruth(Priority.HIGH, 9, False, h)) for rid, gpu, gpus, kw, h in jobs])
    for w in range(config.n_windows):
        if w == switch_after:
            controller.compiled_actor = None if jit else controller.controller.compiled()
        ids = episode.pending_ids()
        episode.decide(resolve_structured([{"request_id": i, "decision": "ACCEPT"} for i in ids], ids, w,
                                          config.n_windows))
        episode.run_window()
    return episode


def _assert_same_episode(a, b) -> None:
    """Every record, the plant's state and outputs, the last control and the controller's state, byte for byte."""
    for name in ("facility_kw", "cooling_kw", "it_kw_total", "inlet_c", "_pue_cum", "_pue_ci_cum"):
        assert _bytes(getattr(a, name)) == _bytes(getattr(b, name)), name
    assert _bytes(a.state.zone_temp_c) == _bytes(b.state.zone_temp_c)
    assert _bytes(a.state.chw_supply_c) == _bytes(b.state.chw_supply_c)
    for name in a.last_outputs._fields:
        x, y = np.asarray(getattr(a.last_outputs, name)), np.asarray(getattr(b.last_outputs, name))
        assert x.dtype == y.dtype and _bytes(x) == _bytes(y), name
    for field in ("fan_speed", "supply_setpoint_c", "chw_setpoint_c", "economiser_on"):
        assert _bytes(getattr(a.last_control, field)) == _bytes(getattr(b.last_control, field)), field
    assert [s.reward for s in a.window_scores] == [s.reward for s in b.window_scores]
    assert [s.soft_fraction for s in a.window_scores] == [s.soft_fraction for s in b.window_scores]
    inner_a, inner_b = getattr(a.controller, "controller", None), getattr(b.controller, "controller", None)
    if isinstance(inner_a, PPOController):  # the controller's own state, handed back after compiled windows
        assert inner_a.features._previous == inner_b.features._previous
        assert _bytes(inner_a.last_action) == _bytes(inner_b.last_action)
        assert inner_a.layer.trim._trims == inner_b.layer.trim._trims
        assert inner_a.layer.trim_max == inner_b.layer.trim_max


@pytest.mark.parametrize(("cooling", "batched"), [("ppo", True), ("ppo", False), ("rule", True)])
def test_a_faulty_episode_is_the_same_compiled_or_not(monkeypatch, cooling: str, batched: bool):
    triaged = []
    fault_control = RuleFastPath.fault_control

    def spy(self, i, chw_reading_c):
        control = fault_control(self, i, chw_reading_c)
        triaged.append(control.fan_speed[3] == pytest.approx(0.2))
        return control

    monkeypatch.setattr(RuleFastPath, "fault_control", spy)
    compiled_run = _faulty_episode(monkeypatch, jit=True, cooling=cooling, batched=batched)
    compiled_triage, triaged[:] = list(triaged), []
    python_run = _faulty_episode(monkeypatch, jit=False, cooling=cooling)
    _assert_same_episode(compiled_run, python_run)
    assert compiled_run.inlet_c.max() > 27.0  # the faults reach the interesting region
    if cooling == "rule":  # the chiller trip ran the fault procedure, its triage included, the same both ways
        assert any(compiled_triage) and not all(compiled_triage) and compiled_triage == triaged


@pytest.mark.parametrize(("jit", "switch_after"), [(True, 2), (True, 5), (False, 3)])
def test_compiled_and_python_windows_mix_in_one_episode(monkeypatch, jit: bool, switch_after: int):
    """The controller's state is handed back after a compiled window and taken before one, so an episode may
    change paths between windows and still be the all-Python episode."""
    mixed = _faulty_episode(monkeypatch, jit=jit, switch_after=switch_after)
    _assert_same_episode(mixed, _faulty_episode(monkeypatch, jit=False))


def test_an_actor_that_raises_mid_window_leaves_the_steps_done_as_the_python_loop_does(monkeypatch):
    """A NaN reading makes set-points that cannot be decoded: both paths raise the decoder's error, and the steps
    done before it are the episode's (the actor has written that step's set-points into its buffer by then)."""
    from dcops.agents.cooling.ppo_compiled import CompiledPPO

    def failing(method, at: int):
        calls = {"n": 0}

        def wrapped(self, telemetry):
            calls["n"] += 1
            if calls["n"] == at:
                telemetry = np.array(telemetry, dtype=np.float64)
                telemetry[0] = np.nan
                telemetry = telemetry if isinstance(self, CompiledPPO) else telemetry.tolist()
            return method(self, telemetry)
        return wrapped

    at = 18 * 2 + 7  # step 7 of window 2
    monkeypatch.setattr(CompiledPPO, "act", failing(CompiledPPO.act, at))
    with pytest.raises(ValueError, match="not finite"):
        _faulty_episode(monkeypatch, jit=True, batched=False)
    compiled_episode = _last_episode[0]
    monkeypatch.setattr(PPOController, "act_values", failing(PPOController.act_values, at))
    with pytest.raises(ValueError, match="not finite"):
        _faulty_episode(monkeypatch, jit=False)
    _assert_same_failed_episode(compiled_episode, _last_episode[0])


def _assert_same_failed_episode(compiled_episode, python_episode) -> None:
    """The state, last outputs, control and controller state of two episodes that raised mid-window."""
    assert _bytes(compiled_episode.state.zone_temp_c) == _bytes(python_episode.state.zone_temp_c)
    for name in python_episode.last_outputs._fields:
        assert _bytes(getattr(compiled_episode.last_outputs, name)) == _bytes(getattr(python_episode.last_outputs,
                                                                                      name)), name
    assert _bytes(compiled_episode.last_control.fan_speed) == _bytes(python_episode.last_control.fan_speed)
    inner_c, inner_p = compiled_episode.controller.controller, python_episode.controller.controller
    assert inner_c.layer.trim._trims == inner_p.layer.trim._trims
    assert _bytes(inner_c.features._previous) == _bytes(inner_p.features._previous)  # NaN: the failing reading
    assert np.isnan(inner_p.features._previous[0])


@pytest.mark.parametrize("batched", [True, False])
def test_a_nan_reading_raises_mid_window_on_every_path_leaving_the_steps_done(monkeypatch, batched: bool):
    """A NaN sensor reading at step 7 of window 2 makes set-points that cannot be decoded: the batched kernels,
    the per-episode compiled loop and the Python path raise the decoder's error with the same steps done."""
    at = 18 * 2 + 7
    with pytest.raises(ValueError, match="not finite"):
        _faulty_episode(monkeypatch, jit=True, batched=batched, nan_reading_at=at)
    compiled_episode = _last_episode[0]
    with pytest.raises(ValueError, match="not finite"):
        _faulty_episode(monkeypatch, jit=False, nan_reading_at=at)
    _assert_same_failed_episode(compiled_episode, _last_episode[0])
    assert compiled_episode.window == 2 and compiled_episode.compiled_records is None


def test_a_step_the_compiled_plant_declines_runs_through_step_plant(monkeypatch):
    kernel = compiled(plant_kernel)
    calls = {"n": 0, "declined": 0}

    def declining(*args):
        calls["n"] += 1
        if calls["n"] % 7 == 3:
            calls["declined"] += 1
            return False
        if calls["n"] % 7 == 5:
            calls["declined"] += 1
            raise ZeroDivisionError("as the float path raises it")
        return kernel(*args)

    real = compiled_window.compiled
    monkeypatch.setattr(compiled_window, "compiled", lambda f: declining if f is plant_kernel else real(f))
    declined_run = _faulty_episode(monkeypatch, jit=True, batched=False)
    assert calls["declined"] >= 40
    monkeypatch.setattr(compiled_window, "compiled", real)
    _assert_same_episode(declined_run, _faulty_episode(monkeypatch, jit=False))


def _digest(seed: int, cooling: str = "ppo") -> str:
    """Every reward, observation and per-step record of a random-fault PPO episode under a seeded masked-random
    scheduler."""
    env = dcops.parallel_env(structured_view=False, cooling=cooling, faults="random")
    observations, _ = env.reset(seed=seed)
    digest, rng = hashlib.sha256(), np.random.default_rng(seed)
    while env.agents:
        mask = np.asarray(observations["scheduler"]["action_mask"]).reshape(env.config.max_slots, -1)
        choice = np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask])
        observations, rewards, _, _, _ = env.step({"scheduler": choice})
        for agent in sorted(rewards):
            digest.update(np.float64(rewards[agent]).tobytes())
            for key in sorted(observations[agent]):
                digest.update(np.asarray(observations[agent][key]).tobytes())
    for name in ("facility_kw", "cooling_kw", "inlet_c", "it_kw_total"):
        digest.update(getattr(env.episode, name).tobytes())
    return digest.hexdigest()


@pytest.mark.parametrize("cooling", ["ppo", "rule"])
def test_whole_environment_episodes_are_the_same_compiled_or_not(monkeypatch, cooling: str):
    seeds = range(4)
    monkeypatch.setenv(JIT_ENV, "1")
    env = dcops.parallel_env(structured_view=False, cooling=cooling)
    env.reset(seed=0)
    assert env.controller.compiled_actor is not None, "the cluster env runs its cooling compiled"
    fast = [_digest(s, cooling) for s in seeds]
    monkeypatch.setenv(JIT_ENV, "0")
    assert [_digest(s, cooling) for s in seeds] == fast


def _decoded(controller: PPOController, telemetry: np.ndarray, z: int) -> np.ndarray:
    control = decode_setpoint_values(controller.act_values(telemetry.tolist()), z)
    return np.concatenate([control.fan_speed, control.supply_setpoint_c,
                           [float(control.chw_setpoint_c), float(control.economiser_on)]])


@pytest.mark.parametrize("n_zones", [1, 3, 7])
def test_the_compiled_ppo_actor_gives_act_values_set_points_step_by_step(n_zones: int):
    from dcops.physics.interface import telemetry_bounds
    from dcops.physics.plant import PlantConfig

    plant = PlantConfig.default(n_zones=n_zones)
    context = ControllerContext.from_plant(plant, [1.0] * n_zones, 300.0)
    reference, fast = PPOController(), PPOController()
    reference.reset(context)
    fast.reset(context)
    actor = fast.compiled()
    low, high = telemetry_bounds(n_zones)
    rng = np.random.default_rng(n_zones)
    centre = rng.uniform(low, high).astype(np.float32)
    for step in range(200):
        # A wandering state with jumps, values at the box's edges, and the zones far apart.
        centre = np.clip(centre + rng.normal(0.0, 0.05, centre.size) * (high - low), low, high).astype(np.float32)
        telemetry = centre.astype(np.float64)
        if step % 17 == 0:
            telemetry = np.where(rng.random(centre.size) < 0.3, low, telemetry).astype(np.float64)
        expected = _decoded(reference, telemetry, n_zones)
        got = actor.act(telemetry)
        assert _bytes(expected) == _bytes(got), f"step {step}: {expected} != {got}"
    actor.store_state()  # the controller's own state, as act_values left the reference's
    assert fast.layer.trim._trims == reference.layer.trim._trims
    assert fast.layer.trim_max == reference.layer.trim_max
    assert _bytes(fast.last_action) == _bytes(reference.last_action)
    assert fast.features._previous == reference.features._previous


def test_a_non_finite_telemetry_value_raises_the_float_paths_error():
    from dcops.physics.interface import telemetry_bounds
    from dcops.physics.plant import PlantConfig

    plant = PlantConfig.default(n_zones=2)
    context = ControllerContext.from_plant(plant, [1.0, 1.0], 300.0)
    reference, fast = PPOController(), PPOController()
    reference.reset(context)
    fast.reset(context)
    actor = fast.compiled()
    low, high = telemetry_bounds(2)
    telemetry = ((low + high) / 2.0).astype(np.float64)
    telemetry[0] = np.nan
    with pytest.raises(ValueError) as python_error:
        _decoded(reference, telemetry, 2)
    with pytest.raises(ValueError) as compiled_error:
        actor.act(telemetry)
    assert str(compiled_error.value) == str(python_error.value)


def test_the_telemetry_kernel_gives_the_episodes_telemetry_values_at_every_step(monkeypatch):
    """Every field, the ones the PPO policy ignores (progress, carbon, PUE) included, at every reading of a faulty
    episode, for the window's loads and for loads far past the box."""
    from dcops.cluster.compiled_window import PLANT_ROWS, telemetry_arrays, telemetry_kernel

    episode = _faulty_episode(monkeypatch, jit=False)
    arrays, kernel = telemetry_arrays(episode), compiled(telemetry_kernel)
    out, z = episode.last_outputs, episode.plant.n_zones
    last_zone, last_plant = np.array(out[:8]), np.array([float(v) for v in out[8:]])
    assert len(last_plant) == len(PLANT_ROWS)
    telemetry = np.empty(5 * z + 11)
    rng = np.random.default_rng(3)
    for k in range(episode.n_steps + 1):  # the last reading, after the last step, included
        it_row = rng.uniform(-50.0, 900.0, z) if k % 5 else np.array([500.0, 0.0, 2e5, 120.0])
        kernel(k, arrays.zone_noise, arrays.inlet_drift, arrays.zone_constants, arrays.step_values, arrays.chw_noise,
               arrays.scalars, arrays.low, arrays.high, last_zone, last_plant, episode.last_control.fan_speed, it_row,
               telemetry)
        assert _bytes(telemetry) == _bytes(episode.telemetry_values(k, it_row)), f"reading {k}"


def test_a_reading_on_its_bound_takes_the_bound_as_numpy_does(monkeypatch):
    """numpy's maximum and minimum give their second operand on a tie, so a load of -0.0 kW reads +0.0 (the
    bound), as in the Python telemetry; a kernel keeping its own value would carry the sign bit."""
    from dcops.cluster.compiled_window import telemetry_arrays, telemetry_kernel

    episode = _faulty_episode(monkeypatch, jit=False)
    arrays, z = telemetry_arrays(episode), episode.plant.n_zones
    out = episode.last_outputs
    last_zone, last_plant = np.array(out[:8]), np.array([float(v) for v in out[8:]])
    telemetry, it_row = np.empty(5 * z + 11), np.full(z, -0.0)
    compiled(telemetry_kernel)(5, arrays.zone_noise, arrays.inlet_drift, arrays.zone_constants, arrays.step_values,
                               arrays.chw_noise, arrays.scalars, arrays.low, arrays.high, last_zone, last_plant,
                               episode.last_control.fan_speed, it_row, telemetry)
    python = np.array(episode.telemetry_values(5, it_row))
    assert not np.signbit(python[2]) and not np.signbit(telemetry[2])  # load: -0.0 clipped to its bound +0.0
    assert _bytes(telemetry) == _bytes(python)


def test_a_controller_with_replaced_parts_or_many_zones_has_no_compiled_form():
    """The kernels copy the stock arithmetic (and numpy's summation order up to 7 zones): a controller whose
    parts are other classes, or a plant of 8 zones, is stepped through act_values."""
    from dcops.agents.cooling.ppo import FeatureBuilder, ZoneAirflowTrim
    from dcops.physics.plant import PlantConfig

    def controller(n_zones: int = 4, **parts) -> PPOController:
        c = PPOController()
        for name, value in parts.items():
            setattr(c, name, value)
        c.reset(ControllerContext.from_plant(PlantConfig.default(n_zones=n_zones), [1.0] * n_zones, 300.0))
        return c

    class Features(FeatureBuilder):
        pass

    class Trim(ZoneAirflowTrim):
        pass

    class Custom(PPOController):
        def act_values(self, telemetry):
            return super().act_values(telemetry)

    assert controller().compiled() is not None and controller(7).compiled() is not None
    assert controller(8).compiled() is None
    assert controller(features=Features()).compiled() is None
    stock = controller()
    stock.layer.trim = Trim()
    stock.reset(stock.context)
    assert stock.compiled() is None
    custom = Custom()
    custom.reset(stock.context)
    assert custom.compiled() is None


def test_import_dcops_does_not_import_numba():
    """numba loads at the first cluster reset, never with the package."""
    import subprocess
    import sys

    code = "import sys, dcops, dcops.env, dcops.vector_env, dcops.cluster.episode; print('numba' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
