"""A tiny end-to-end training run: imitation warm start, a few hundred PPO steps, export to numpy."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from dcops.cluster.queue.env import make_queue_env  # noqa: E402
from dcops.cluster.queue.jobs import streaming_instance  # noqa: E402
from dcops.cluster.queue.scoring_policy import ScoringPolicy, forward_logits  # noqa: E402
from dcops.cluster.queue.simulator import simulate  # noqa: E402
from dcops.training.queue.ppo import QueueScoringPolicy, QueueTrainConfig, train_queue_policy  # noqa: E402
from dcops.training.sb3_logging import sb3_logger  # noqa: E402

TINY = QueueTrainConfig(
    seed=3,
    timesteps=512,
    atc_k=1.0,
    imitation_episodes=3,
    imitation_epochs=1,
    n_envs=2,
    n_steps=128,
    batch_size=64,
    n_epochs=1,
    eval_every=256,
    n_validation_seeds=2,
    hidden=8,
)


def test_tiny_training_run_writes_finite_weights_and_a_learning_curve(tmp_path):
    record = train_queue_policy(TINY, out=tmp_path, log_dir=None, progress_bar=False, verbose=False)
    policy = ScoringPolicy.load(tmp_path / "queue_policy.npz")
    assert all(np.all(np.isfinite(v)) for v in policy.params.values())
    assert policy.params["W1"].shape == (17, 8)
    assert np.isfinite(record["validation_mean_wt"])
    curve = (tmp_path / "learning_curve.csv").read_text().splitlines()
    assert curve[0].startswith("timesteps,") and len(curve) >= 3  # warm start + at least two PPO evaluations
    assert np.isfinite(simulate(streaming_instance(5), policy).weighted_tardiness)


def test_ppo_updates_change_the_actor_weights(tmp_path):
    from sb3_contrib import MaskablePPO

    torch.manual_seed(0)
    env = make_queue_env(n_jobs=60, max_slots=8)
    model = MaskablePPO(
        QueueScoringPolicy,
        env,
        n_steps=128,
        batch_size=64,
        n_epochs=2,
        learning_rate=1e-3,
        policy_kwargs={"max_slots": 8, "hidden": 8},
        seed=0,
        device="cpu",
    )
    model.set_logger(sb3_logger(tmp_path / "tb", "queue_ppo"))
    actor = model.policy.mlp_extractor.actor
    before = {k: v.copy() for k, v in actor.numpy_params().items()}
    model.learn(256)
    after = actor.numpy_params()
    assert any(not np.allclose(before[k], after[k]) for k in before)
    assert all(np.all(np.isfinite(v)) for v in after.values())


def test_numpy_forward_pass_matches_the_torch_actor():
    env = make_queue_env(max_slots=8)
    from sb3_contrib import MaskablePPO

    model = MaskablePPO(
        QueueScoringPolicy, env, policy_kwargs={"max_slots": 8, "hidden": 16}, seed=1, device="cpu"
    )
    actor = model.policy.mlp_extractor.actor
    with torch.no_grad():
        actor.lin3.weight.normal_()  # a non-trivial correction
    obs, _ = env.reset(seed=0)
    jobs = torch.as_tensor(obs["jobs"][None])
    with torch.no_grad():
        torch_logits = actor(jobs)[0].numpy()
    occupied = obs["action_mask"].astype(bool)
    numpy_logits = forward_logits(actor.numpy_params(), obs["jobs"][occupied, 1:])
    assert np.allclose(torch_logits[occupied], numpy_logits, atol=1e-4)
