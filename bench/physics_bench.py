"""Physics and environment speed: steps per second, batch throughput, construction time.

Every figure is measured in the same process as a calibration workload (a fixed loop of small numpy operations),
so ratios stay comparable on noisy machines: ``steps_per_calibration_unit`` = physics steps per second divided by
calibration loops per second.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
"""``cpu``: seconds of CPU this process used (what one core does when the machine is shared: other work on the
cores barely moves it); ``wall``: elapsed seconds (what a user waits on a loaded machine)."""
CLOCK = "cpu"
STATISTIC = "best"
"""``best``: the fastest burst (``timeit``'s choice: interference only ever slows a burst down, so the fastest is
the closest to the machine's own speed); ``mean``: all items over all time."""


def _rate(work: Callable[[], int], min_seconds: float = 1.0) -> float:
    """Items per second of ``work`` (one burst: it returns how many items it did), over bursts repeated for at
    least ``min_seconds``, timed by :data:`CLOCK` and summarised by :data:`STATISTIC`."""
    clock = CLOCKS[CLOCK]
    work()  # warm-up
    done, total, best = 0, 0.0, 0.0
    while total < min_seconds:
        start = clock()
        items = work()
        elapsed = clock() - start
        if elapsed <= 0.0:  # a burst shorter than the clock's resolution: count it in the mean only
            done += items
            continue
        done, total, best = done + items, total + elapsed, max(best, items / elapsed)
    return best if STATISTIC == "best" else done / total


def calibration_rate() -> float:
    """Loops per second of a fixed numpy workload (20 elementwise operations on 4-element arrays)."""
    a = np.linspace(1.0, 2.0, 4)
    b = np.linspace(2.0, 3.0, 4)

    def work() -> int:
        for _ in range(2000):
            c = a * b
            c = c + a
            c = np.maximum(c, b)
            c = np.minimum(c, 5.0)
            c = c / b
            c = np.exp(-c)
            c = c.sum() + a
            c = c * 2.0
            c = np.where(c > 1.0, c, a)
            c = c - b
            c = c * c
            c = c + 1.0
            c = np.sqrt(c)
            c = c * b
            c = c / a
            c = c.sum(axis=-1)
            c = c + a
            c = np.maximum(c, 0.0)
            c = c * 0.5
            c = c - 1.0
        return 2000

    return _rate(work)


def plant_step_rate(batch: int | None, dt_s: float = 300.0) -> float:
    """Plant-steps per second for one 4-zone plant (``batch=None``) or a batch of plants."""
    from dcops.physics.plant import PlantBoundary, PlantConfig, PlantControl, initial_state, step_plant

    config = PlantConfig.default()
    z = config.n_zones
    shape: tuple[int, ...] = () if batch is None else (batch,)
    rng = np.random.default_rng(0)
    state = initial_state(config, 25.0, 12.0, batch_shape=shape)
    control = PlantControl(np.full((*shape, z), 0.7), np.full((*shape, z), 22.0), np.full(shape, 12.0), np.ones(shape))
    boundary = PlantBoundary(
        config.zone_design_it_kw * rng.uniform(0.5, 0.9, size=(*shape, z)), np.full(shape, 25.0),
        np.full(shape, 18.0), np.ones((*shape, config.n_chillers)), np.ones((*shape, z)),
    )
    plants = 1 if batch is None else batch

    def work() -> int:
        nonlocal state
        for _ in range(500):
            state, _ = step_plant(config, state, control, boundary, dt_s)
        return 500 * plants

    return _rate(work)


def compiled_plant_step_rate(dt_s: float = 300.0) -> float | None:
    """Steps per second of one 4-zone plant through the compiled kernel (``dcops.physics.compiled_plant``) with
    its buffers kept, as the cluster window loop calls it; None without numba (or with ``DCOPS_JIT=0``)."""
    from dcops.physics.compiled_plant import compiled, jit_available, pack_plant, plant_kernel
    from dcops.physics.plant import PlantConfig

    if not jit_available():
        return None
    config = PlantConfig.default()
    z = config.n_zones
    packed = pack_plant(config)
    assert packed is not None
    zones, scalars = packed
    kernel = compiled(plant_kernel)
    rng = np.random.default_rng(0)
    it = config.zone_design_it_kw * rng.uniform(0.5, 0.9, size=z)
    fans, supply, alive, chillers = np.full(z, 0.7), np.full(z, 22.0), np.ones(z), np.ones(config.n_chillers)
    out_zone, out_plant = np.empty((8, z)), np.empty(21)
    zone, chw = np.full(z, 25.0), 12.0

    def work() -> int:
        nonlocal chw
        for _ in range(500):
            kernel(zones, scalars, zone, chw, fans, supply, 12.0, 1.0, it, alive, 25.0, 18.0, chillers, dt_s,
                   out_zone, out_plant)
            zone[:] = out_zone[3]
            chw = float(out_plant[0])
        return 500

    work()  # compiles (or loads the cache) outside the timing
    return _rate(work)


def plant_v2_step_rate(batch: int | None, dt_s: float = 300.0, storage_minutes: float = 0.0) -> float:
    """Plant-steps per second of plant v2 (``dcops.physics.v2``) for one 4-zone plant or a batch, with the
    per-zone bypass every v1 task draws, and a storage tank charging where ``storage_minutes`` > 0."""
    from dcops.physics.plant_types import PlantBoundary
    from dcops.physics.v2.plant import step_plant_v2
    from dcops.physics.v2.types import PlantV2Config, PlantV2Control, initial_state_v2

    config = PlantV2Config.default(storage_minutes=storage_minutes, zone_bypass_fraction=[0.05, 0.1, 0.15, 0.2])
    z = config.n_zones
    shape: tuple[int, ...] = () if batch is None else (batch,)
    rng = np.random.default_rng(0)
    state = initial_state_v2(config, 25.0, 12.0, batch_shape=shape)
    full = lambda value: np.full(shape, value)  # noqa: E731
    control = PlantV2Control(np.full((*shape, z), 0.7), np.full((*shape, z), 22.0), full(12.0), full(1.0),
                             full(0.7), full(2.0), full(0.8), full(0.3))
    boundary = PlantBoundary(
        config.zone_design_it_kw * rng.uniform(0.5, 0.9, size=(*shape, z)), full(25.0), full(18.0),
        np.ones((*shape, config.n_chillers)), np.ones((*shape, z)),
    )
    plants = 1 if batch is None else batch

    def work() -> int:
        nonlocal state
        for _ in range(500):
            state, _ = step_plant_v2(config, state, control, boundary, dt_s)
        return 500 * plants

    return _rate(work)


def env_step_rate(task_id: str = "cooling/cascading_chiller_failure") -> float:
    """Full Gymnasium cooling-environment steps per second with a fixed action (observation, reward, info)."""
    import dcops

    env = dcops.make_env(task_id)
    action = (env.action_space.low + env.action_space.high) / 2.0
    env.reset(seed=0)
    seed = [0]

    def work() -> int:
        steps = 0
        done = False
        while not done:
            done = env.step(action)[2]
            steps += 1
        seed[0] += 1
        env.reset(seed=seed[0])
        return steps

    return _rate(work)


def construction_seconds(task_id: str = "cooling/cascading_chiller_failure") -> float:
    """Seconds to build and reset a cooling environment (profiles already cached: the median of 20)."""
    import dcops

    times = []
    for seed in range(20):
        start = time.perf_counter()
        dcops.make_env(task_id).reset(seed=seed)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def run_physics_bench() -> dict[str, Any]:
    """All physics figures, with the calibration baseline and targets."""
    calibration = calibration_rate()
    single = plant_step_rate(None)
    batched = plant_step_rate(64)
    single_v2 = plant_v2_step_rate(None)
    batched_v2 = plant_v2_step_rate(64)
    single_v2_tank = plant_v2_step_rate(None, storage_minutes=60.0)
    batched_v2_tank = plant_v2_step_rate(64, storage_minutes=60.0)
    env_rate = env_step_rate()
    construction = construction_seconds()
    compiled_single = compiled_plant_step_rate()
    return {
        "calibration_loops_per_s": calibration,
        "physics_steps_per_s_single_plant": single,
        **({} if compiled_single is None else {"physics_steps_per_s_single_plant_compiled": compiled_single}),
        "physics_plant_steps_per_s_batch_64": batched,
        "physics_v2_steps_per_s_single_plant": single_v2,
        "physics_v2_plant_steps_per_s_batch_64": batched_v2,
        "physics_v2_tank_steps_per_s_single_plant": single_v2_tank,
        "physics_v2_tank_plant_steps_per_s_batch_64": batched_v2_tank,
        "cooling_env_steps_per_s": env_rate,
        "env_construction_s": construction,
        "ratios": {
            "single_plant_steps_per_calibration_loop": single / calibration,
            "batch_speedup_over_single": batched / single,
            "v2_single_over_v0_single": single_v2 / single,
            "v2_batch_over_v0_batch": batched_v2 / batched,
            "v2_tank_single_over_v2_single": single_v2_tank / single_v2,
            "env_step_over_physics_step": env_rate / single,
            **({} if compiled_single is None else {"compiled_single_over_single": compiled_single / single}),
        },
        "targets": {
            "physics_steps_per_s_single_plant >= 10000": single >= 10_000,
            "physics_plant_steps_per_s_batch_64 >= 200000": batched >= 200_000,
            "physics_v2_steps_per_s_single_plant >= 30000": single_v2 >= 30_000,
            "physics_v2_plant_steps_per_s_batch_64 >= 300000": batched_v2 >= 300_000,
            "env_construction_s < 0.5": construction < 0.5,
        },
    }
