"""The PPO cooling controller's batched compiled form: cluster windows of several episodes stepped at once.

Why: the per-episode compiled loop (``dcops.cluster.compiled_window``) steps one episode's window with five
kernel calls and the policy's numpy MLP (eight numpy calls) per physics step, about 27 µs a step on the
development machine, of which the arithmetic is a few microseconds: the rest is the calls. Here each physics step
of *every* episode given is three kernel calls and one numpy ``tanh`` per hidden layer over the episodes' block
of activations:

1. ``head``: for each episode, the telemetry (``compiled_window.telemetry_kernel``), the normalised features
   (``ppo_compiled.features_kernel``) and the first layer's affine map;
2. numpy's ``tanh`` over the (E, H) block; for each further hidden layer, ``hidden`` and ``tanh`` again;
3. ``tail``: for each episode, the action head, the supervisory layer and the decoding
   (``ppo_compiled.setpoints_kernel``) and the plant step (``compiled_plant.plant_kernel``).

:class:`BatchedPPO` is the compiled actor ``PPOController.compiled`` gives. The cluster layer, which does not
import this one, asks each episode's actor for a :meth:`~BatchedPPO.batch_key` and hands the episodes with equal
keys to :meth:`~BatchedPPO.step_windows` (``dcops.cluster.compiled_window.step_batches``):
``ClusterEpisode.step_compiled`` one episode, ``dcops.vector_env`` every episode of a vector environment that
shares the policy and the shapes, so the controller's MLP runs for all of them at once.

Exactness: every value is the one the per-episode path computes, and so the Python path's. The kernels called
are the same functions. The affine maps are numba's ``np.dot`` of a vector and a matrix (BLAS ``gemv``, the
routine numpy's 1-D ``@`` calls), then the bias added element by element, as ``NumpyPolicy.mean_action`` does
them; ``tanh`` stays numpy's (a compiled ``tanh`` is the C library's, which differs from numpy's in the last
bit), and numpy computes it element by element, so a block gives each row's bits. Because both rest on libraries
outside this code (two BLAS builds, numpy's ``tanh``), each policy is checked once per process on random inputs
against ``mean_action`` (:func:`agrees`); a policy whose bits differ is stepped the per-episode way.

A set-point vector that is not finite, and a plant step the kernel declines or that raises, are handed to the
Python code the per-episode loop uses for them. An error raised on the way (by the decoding of set-points that
are not finite, or by the controller's kernels) propagates as in the per-episode loop, which leaves its episode
with the steps done before it and the controller's state as far as it got; the other episodes of the batch are
left at the end of the last step they finished, the controller's state with them.
``tests/agents/test_ppo_batched.py`` compares batches of episodes with their Python paths byte for byte.
"""

from __future__ import annotations

import hashlib
import sys
import types
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.agents.cooling.ppo_compiled import (
    CompiledPPO,
    decode_not_finite,
    features_kernel,
    setpoints_kernel,
)
from dcops.cluster.compiled_window import hand_back_window, read_last_step, step_declined, telemetry_kernel
from dcops.physics.compiled_plant import PLANT_ROWS, compiled, jit_available, plant_kernel

_NOT_REACHED, _STARTED = -1, 0
_DONE, _SETPOINTS_NOT_FINITE, _DECLINED, _SETPOINTS_MADE, _HEAD_DONE = 1, 2, 3, 4, 5
"""A kernel's status per episode: not reached (an error raised before its turn), its turn begun (so an error
raised now is this episode's), then ``head``'s part done, or ``tail``'s outcome: the step done, its set-points
not finite or its plant step declined (both handed to :meth:`_Batch._python_step`); ``tail`` marks set-points
made before the plant step, so a plant that raises is told from a controller that raised."""


def affine_kernel(x: Any, w: Any, b: Any, out: Any) -> None:
    """``out = x @ w + b`` as numpy computes it for a vector ``x``: BLAS ``gemv``, then the bias by element."""
    y = np.dot(x, w)
    for j in range(out.shape[0]):
        out[j] = y[j] + b[j]


_CALLEES = (telemetry_kernel, features_kernel, setpoints_kernel, plant_kernel, affine_kernel)
# The names the batched kernels call them by. numba resolves a global when it compiles, so _kernels() binds
# these to the compiled forms first; in the interpreter the batched kernels are never called.
_telemetry, _features, _setpoints, _plant, _affine = _CALLEES


def _make_kernels(stamp: str) -> tuple[Any, Any, Any]:
    """The three batched kernels (module doc), as Python functions for numba to compile. ``stamp`` (a digest of
    the called kernels' modules) is a closure variable of each: numba's on-disk cache sees changes to this file
    only, and keys a closure's compiled code by its variables too, so an edit there compiles them afresh."""

    def head(i: int, status: Any, ks: Any, zone_noise: Any, inlet_drift: Any, zone_constants: Any,
             step_values: Any, chw_noise: Any, tel_scalars: Any, tel_low: Any, tel_high: Any, last_zone: Any,
             last_plant: Any, last_setpoints: Any, it: Any, telemetry: Any, state: Any, trims: Any,
             state_before: Any, trims_before: Any, mean: Any, scale: Any, clip: float, features: Any, w: Any, b: Any,
             h: Any) -> None:
        _ = stamp
        z = it.shape[2]
        for e in range(ks.shape[0]):
            status[e] = _NOT_REACHED
        for e in range(ks.shape[0]):
            status[e] = _STARTED
            state_before[e, :] = state[e]  # the controller's state before the step, should an error end it
            trims_before[e, :] = trims[e]
            _telemetry(ks[e] + i, zone_noise[e], inlet_drift[e], zone_constants[e], step_values[e], chw_noise[e],
                       tel_scalars[e], tel_low[e], tel_high[e], last_zone[e], last_plant[e], last_setpoints[e, :z],
                       it[e, i], telemetry[e])
            _features(telemetry[e], state[e], mean, scale, clip, features[e])
            _affine(features[e], w, b, h[e])
            status[e] = _HEAD_DONE

    def hidden(h_in: Any, w: Any, b: Any, h_out: Any) -> None:
        _ = stamp
        for e in range(h_in.shape[0]):
            _affine(h_in[e], w, b, h_out[e])

    def tail(i: int, start: int, h: Any, w: Any, b: Any, action_mean: Any, telemetry: Any, state: Any, trims: Any,
             constants: Any, design: Any, max_air: Any, sp_low: Any, sp_high: Any, setpoints: Any, zones: Any,
             plant_scalars: Any, ks: Any, alive: Any, dry: Any, wet: Any, chillers: Any, dt: float, last_zone: Any,
             last_plant: Any, last_setpoints: Any, it: Any, out_zone: Any, out_plant: Any, status: Any) -> int:
        _ = stamp
        z = trims.shape[1]
        for e in range(start, ks.shape[0]):
            status[e] = _NOT_REACHED
        undone = 0
        for e in range(start, ks.shape[0]):
            status[e] = _STARTED
            _affine(h[e], w, b, action_mean[e])
            sp = setpoints[e]
            if not _setpoints(action_mean[e], telemetry[e], state[e], trims[e], constants[e], design[e],
                              max_air[e], sp_low[e], sp_high[e], sp):
                status[e] = _SETPOINTS_NOT_FINITE
                undone += 1
                continue
            status[e] = _SETPOINTS_MADE
            k = ks[e] + i
            if _plant(zones[e], plant_scalars[e], last_zone[e, 3], last_plant[e, 0], sp[:z], sp[z:2 * z], sp[2 * z],
                      sp[2 * z + 1], it[e, i], alive[e, k], dry[e, k], wet[e, k], chillers[e, k], dt, out_zone[e, i],
                      out_plant[e, i]):
                last_zone[e, :, :] = out_zone[e, i]
                last_plant[e, :] = out_plant[e, i]
                last_setpoints[e, :] = sp
                status[e] = _DONE
            else:
                status[e] = _DECLINED
                undone += 1
        return undone

    return head, hidden, tail


@dataclass(frozen=True)
class _Kernels:
    head: Any
    hidden: Any
    tail: Any
    plant: Any


def _stamp() -> str:
    """A digest of the source files of the called kernels' modules (their functions and the module constants
    numba freezes into the compiled code); a fixed word where a file cannot be read (an install without
    sources), which leaves numba's cache keyed by this file alone."""
    digest = hashlib.sha256()
    for module in sorted({f.__module__ for f in _CALLEES}):
        try:
            digest.update(Path(sys.modules[module].__file__ or "").read_bytes())
        except OSError:
            return "sources-unavailable"
    return digest.hexdigest()


@cache
def _kernels() -> _Kernels:
    """The compiled kernels (once per process; numba's disk cache makes later processes' first call fast)."""
    global _telemetry, _features, _setpoints, _plant, _affine
    _telemetry, _features, _setpoints, _plant, _affine = (compiled(f) for f in _CALLEES)
    head, hidden, tail = _make_kernels(_stamp())
    return _Kernels(compiled(head), compiled(hidden), compiled(tail), _plant)


def kernels_calling(replacements: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The three batched kernels as Python functions whose calls named in ``replacements`` (``_plant``, …) go to
    other compiled functions, this module's globals untouched: tests compile them (never with numba's disk
    cache; their stamp names the replacements) to make a step decline or raise."""
    unknown = set(replacements) - {"_telemetry", "_features", "_setpoints", "_plant", "_affine"}
    if unknown:
        raise ValueError(f"replacements: no kernel calls {sorted(unknown)}")
    _kernels()
    stamp = "replaced:" + ",".join(f"{name}={id(f)}" for name, f in sorted(replacements.items()))
    made = []
    for function in _make_kernels(stamp):
        scope = {**function.__globals__, **replacements}
        made.append(types.FunctionType(function.__code__, scope, function.__name__, function.__defaults__,
                                       function.__closure__))
    return made[0], made[1], made[2]


def _policy_layers(policy: Any) -> tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]:
    """The policy's weights and biases as contiguous float64 arrays, made once and kept on the policy (a frozen
    dataclass: a private cache, as its ``_obs_scale``)."""
    layers = policy.__dict__.get("_batched_layers")
    if layers is None:
        layers = ([np.ascontiguousarray(w, dtype=np.float64) for w in policy.weights],
                  [np.ascontiguousarray(b, dtype=np.float64) for b in policy.biases])
        object.__setattr__(policy, "_batched_layers", layers)
    return layers


def agrees(policy: Any) -> bool:
    """Whether the batched kernels give ``policy.mean_action``'s bits on this machine: 200 random normalised
    feature vectors, in blocks of 1, 3 and 16 rows, through the arrays and kernels the steps use, each row against
    ``mean_action`` of that row alone. Once per policy and process (kept on the policy); a policy the kernels do
    not compile for (other dtypes, no hidden layer) does not agree."""
    known = policy.__dict__.get("_batched_agrees")
    if known is None:
        known = _check(policy)
        object.__setattr__(policy, "_batched_agrees", known)
    return known


def _check(policy: Any) -> bool:
    weights, biases = _policy_layers(policy)
    if len(weights) < 2:
        return False
    hidden = _kernels().hidden
    rng = np.random.default_rng(20261207)
    for rows in (1, 3, 16):
        for _ in range(200 // rows + 1):
            x = np.clip(rng.normal(0.0, rng.uniform(0.1, 4.0), (rows, weights[0].shape[0])), -policy.obs_clip,
                        policy.obs_clip)
            h = x
            for layer, (w, b) in enumerate(zip(weights, biases, strict=True)):
                out = np.empty((rows, w.shape[1]))
                try:
                    hidden(h, w, b, out)
                except Exception:  # noqa: BLE001 (numba's typing errors): the per-episode path takes this policy
                    return False
                h = out if layer == len(weights) - 1 else np.tanh(out, out=out)
            expected = np.stack([policy.mean_action(row) for row in x])
            if h.tobytes() != expected.tobytes():
                return False
    return True


class BatchedPPO(CompiledPPO):
    """:class:`CompiledPPO` that also steps whole windows of several episodes at once (module doc); a
    ``dcops.cluster.compiled_window.BatchedActor``."""

    def batch_key(self, episode: Any, window: Any) -> tuple[Any, ...] | None:
        """Episodes with equal keys step together (every array stacked has the same shape in each); None where
        this one cannot be stepped here (numba off, a plant without a packed form, a policy whose bits the
        kernels do not reproduce: :func:`agrees`)."""
        if episode._packed_plant is None or not jit_available() or not agrees(self._policy):
            return None
        timeline = episode.timeline
        return (type(self), id(self._policy), episode.plant.n_zones, episode.plant.n_chillers, len(window.rows),
                len(episode.dry_bulb), float(episode.dt_s), timeline.chiller_available.shape,
                timeline.chiller_available.dtype, timeline.fan_units_alive.dtype)

    def step_windows(self, episodes: list[Any], windows: list[Any]) -> None:
        """Step ``episodes`` (this actor's among them, all with this :meth:`batch_key`) through their begun
        ``windows`` (``ClusterEpisode.begin_window``) together."""
        _Batch(episodes, windows).run()


def _constants(episodes: list[Any], actors: list[Any]) -> dict[str, NDArray[Any]]:
    """The episodes' per-episode constant arrays stacked (E, ...): telemetry inputs, boundary series, packed
    plant and controller constants. Kept on the first actor (so it goes with that episode's reset) while the
    same actors and telemetry arrays come back, as they do window after window in a vector environment."""
    members = tuple(x for episode, actor in zip(episodes, actors, strict=True)
                    for x in (actor, episode.compiled_telemetry()))
    cached = actors[0].__dict__.get("_batch_constants")
    if cached is not None and len(cached[0]) == len(members) and all(a is b for a, b in zip(cached[0], members,
                                                                                          strict=True)):
        return cached[1]
    tels = [episode.compiled_telemetry() for episode in episodes]

    def stack(values: list[Any], dtype: Any = None) -> NDArray[Any]:
        return np.ascontiguousarray(np.stack([np.asarray(v) for v in values]), dtype=dtype)

    stacked = {
        **{name: stack([getattr(t, name) for t in tels], np.float64) for name in
           ("zone_noise", "inlet_drift", "zone_constants", "step_values", "chw_noise", "scalars", "low", "high")},
        "alive": stack([e.timeline.fan_units_alive for e in episodes]),
        "chillers": stack([e.timeline.chiller_available for e in episodes]),
        "dry": stack([e.dry_bulb for e in episodes], np.float64),
        "wet": stack([e.wet_bulb for e in episodes], np.float64),
        "zones": stack([e._packed_plant[0] for e in episodes], np.float64),
        "plant_scalars": stack([e._packed_plant[1] for e in episodes], np.float64),
        "constants": stack([a._constants for a in actors], np.float64),
        "design": stack([a._design for a in actors], np.float64),
        "max_air": stack([a._max_air for a in actors], np.float64),
        "sp_low": stack([a._low for a in actors], np.float64),
        "sp_high": stack([a._high for a in actors], np.float64),
    }
    actors[0]._batch_constants = (members, stacked)
    return stacked


class _Batch:
    """One window of several episodes, stepped together (:meth:`BatchedPPO.step_windows`)."""

    def __init__(self, episodes: list[Any], windows: list[Any]) -> None:
        self.episodes = episodes
        self.actors: list[BatchedPPO] = [episode.controller.compiled_actor for episode in episodes]
        n, z, steps = len(episodes), episodes[0].plant.n_zones, len(windows[0].rows)
        self.z, self.steps = z, steps
        self.ks = np.array([window.first_step for window in windows], dtype=np.int64)
        self.it = np.array([window.rows for window in windows], dtype=np.float64)
        # The last step in the kernels' layout, read from each episode's Python state (compiled_window's reader).
        self.last_zone = np.zeros((n, 8, z))
        self.last_plant = np.zeros((n, len(PLANT_ROWS)))
        self.last_setpoints = np.zeros((n, 2 * z + 2))
        for e, episode in enumerate(episodes):
            self.last_setpoints[e, :z] = read_last_step(episode, self.last_zone[e], self.last_plant[e])
        self.out_zone = np.empty((n, steps, 8, z))
        self.out_plant = np.empty((n, steps, len(PLANT_ROWS)))
        self.done: int | NDArray[np.int64] = 0  # steps finished: by all, or per episode after an error

    def run(self) -> None:
        actors = self.actors
        for actor in actors:
            actor.load_state()
        self.state = np.array([actor._state for actor in actors])
        self.trims = np.array([actor._trims for actor in actors])
        try:
            self._steps()
        finally:
            for e, (episode, actor) in enumerate(zip(self.episodes, actors, strict=True)):
                actor._state[:] = self.state[e]
                actor._trims[:] = self.trims[e]
                actor.store_state()
                done = self.done if isinstance(self.done, int) else int(self.done[e])
                hand_back_window(episode, self.out_zone[e], self.out_plant[e], self.last_setpoints[e].copy(), done)

    def _steps(self) -> None:
        kernels = _kernels()
        c = self.constants = _constants(self.episodes, self.actors)
        first = self.actors[0]
        weights, biases = _policy_layers(first._policy)
        n, z = len(self.episodes), self.z
        telemetry = np.empty((n, c["low"].shape[1]))
        layers = [np.empty((n, w.shape[1])) for w in weights[:-1]]
        setpoints = np.empty((n, 2 * z + 2))
        status = np.full(n, _NOT_REACHED, dtype=np.int64)
        last_zone, last_plant, last_setpoints = self.last_zone, self.last_plant, self.last_setpoints
        # Every argument but the step (and tail's first episode) is the same all window: bound once.
        state_before, trims_before = np.empty_like(self.state), np.empty_like(self.trims)
        head_args = (status, self.ks, c["zone_noise"], c["inlet_drift"], c["zone_constants"], c["step_values"],
                     c["chw_noise"], c["scalars"], c["low"], c["high"], last_zone, last_plant, last_setpoints,
                     self.it, telemetry, self.state, self.trims, state_before, trims_before, first._mean,
                     first._scale, first._clip,
                     np.empty((n, weights[0].shape[0])), weights[0], biases[0], layers[0])
        hidden_args = [(layers[j - 1], weights[j], biases[j], layers[j]) for j in range(1, len(layers))]
        tail_args = (layers[-1], weights[-1], biases[-1], np.empty((n, weights[-1].shape[1])), telemetry,
                     self.state, self.trims, c["constants"], c["design"], c["max_air"], c["sp_low"], c["sp_high"],
                     setpoints, c["zones"], c["plant_scalars"], self.ks, c["alive"], c["dry"], c["wet"],
                     c["chillers"], float(self.episodes[0].dt_s), last_zone, last_plant, last_setpoints, self.it,
                     self.out_zone, self.out_plant, status)
        head, hidden, tail, tanh = kernels.head, kernels.hidden, kernels.tail, np.tanh
        for i in range(self.steps):
            # Where an error ends the window, the episodes that did not finish this step go back to where they were
            # before it (head keeps a copy); the one whose kernel or Python step raised keeps its state as far as
            # it got, as in the per-episode loop.
            python_step = -1  # the episode in a Python step, while one is
            head_done = False
            finished: NDArray[np.bool_] | None = None
            try:
                head(i, *head_args)
                head_done = True
                tanh(layers[0], out=layers[0])
                for args in hidden_args:
                    hidden(*args)
                    tanh(args[3], out=args[3])
                try:
                    undone = tail(i, 0, *tail_args)
                except (ArithmeticError, ValueError) as error:
                    undone = self._tail_raised(i, tail, tail_args, status, error)
                if undone:
                    finished = status == _DONE
                    for python_step in np.flatnonzero(~finished).tolist():
                        self._python_step(python_step, i, setpoints[python_step],
                                          status[python_step] == _SETPOINTS_NOT_FINITE, kernels)
                        finished[python_step] = True
                    python_step = -1
                self.done = i + 1
            except BaseException as error:
                self._stop(i, error, status, finished, python_step, head_done, state_before, trims_before)
                raise

    def _stop(self, i: int, error: BaseException, status: NDArray[np.int64], finished: NDArray[np.bool_] | None,
              python_step: int, head_done: bool, state_before: NDArray[np.float64], trims_before: NDArray[np.float64]
              ) -> None:
        """After ``error`` in step ``i``: the episodes that finished it count it done; the others go back to the
        controller state before it, except the one that raised (its Python step, or the kernel turn it was in),
        which keeps its state as far as it got. An interrupt (not an ``Exception``) blames no episode."""
        n = status.shape[0]
        done_now = status == _DONE if head_done else np.zeros(n, dtype=bool)  # statuses from this step's tail
        finished = done_now if finished is None else finished | done_now
        raised = np.zeros(n, dtype=bool)
        if python_step >= 0:
            raised[python_step] = True
        elif isinstance(error, Exception):
            raised = status == _STARTED
        # head copied the state of every episode whose turn it reached (of all, once it returned)
        copied = np.ones(n, dtype=bool) if head_done else status != _NOT_REACHED
        back = copied & ~finished & ~raised
        self.state[back], self.trims[back] = state_before[back], trims_before[back]
        self.done = np.where(finished, i + 1, i)

    @staticmethod
    def _tail_raised(i: int, tail: Any, tail_args: tuple[Any, ...], status: NDArray[np.int64],
                     error: Exception) -> int:
        """Finish step ``i``'s tail after ``error``: where an episode's plant step raised it, the float path
        declines that step (it goes to the Python step) and the episodes after it are stepped; an error of the
        controller propagates, as in the per-episode loop. Returns the count of episodes not done."""
        n = status.shape[0]
        while True:
            raised = int(np.flatnonzero(status != _NOT_REACHED)[-1])  # the last episode whose turn began
            if status[raised] != _SETPOINTS_MADE:
                raise error
            status[raised] = _DECLINED
            if raised + 1 == n:
                return int((status != _DONE).sum())
            try:
                tail(i, raised + 1, *tail_args)
                return int((status != _DONE).sum())
            except (ArithmeticError, ValueError) as again:
                error = again

    def _python_step(self, e: int, i: int, setpoints: NDArray[np.float64], not_finite: bool, kernels: _Kernels
                     ) -> None:
        """Episode ``e``'s step ``i`` where the kernels handed it back: set-points that are not finite go through
        the float path's decoding (which raises its error, or decodes a sum that only overflowed) and the plant
        kernel; a step the plant kernel declines, through ``step_plant`` (both as the per-episode loop)."""
        episode = self.episodes[e]
        k = int(self.ks[e]) + i
        last_zone, last_plant = self.last_zone[e], self.last_plant[e]
        out_zone, out_plant = self.out_zone[e, i], self.out_plant[e, i]
        ok = False
        if not_finite:
            setpoints = decode_not_finite(setpoints, self.z)
            z, c = self.z, self.constants
            try:
                ok = kernels.plant(c["zones"][e], c["plant_scalars"][e], last_zone[3], last_plant[0], setpoints[:z],
                                   setpoints[z:2 * z], setpoints[2 * z], setpoints[2 * z + 1], self.it[e, i],
                                   c["alive"][e, k], c["dry"][e, k], c["wet"][e, k], c["chillers"][e, k],
                                   float(episode.dt_s), out_zone, out_plant)
            except (ArithmeticError, ValueError):
                ok = False
        if not ok:
            step_declined(episode, k, last_zone, last_plant, setpoints, self.it[e, i], out_zone, out_plant)
        last_zone[:] = out_zone
        last_plant[:] = out_plant
        self.last_setpoints[e] = setpoints
