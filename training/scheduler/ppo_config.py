"""Hyperparameters of the RL scheduler's training (:mod:`dcops.training.scheduler.ppo`), in a module of their own
so that ``dcops train-scheduler-ppo --help`` lists them without importing torch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SchedulerPPOConfig:
    """Hyperparameters of :func:`train_scheduler_ppo` (the defaults are the shipped run's; it was trained to 100k
    steps and resumed to 160k, README's *RL scheduler*).

    :param seed: seeds torch, the environments and the cloning's batch order.
    :param family: the scenario family (``dcops.cluster.scenarios``) every episode, validation and reference
        plays, with the family's validation seeds; ``""``: the evaluation matrix's scenarios (the shipped
        ``ppo``). The teacher data must be of the same family (``dcops scheduler-teacher --family``).
    :param teacher: teacher whose decisions are cloned (``priority_threshold``, ``truth_planner``, or with a
        family ``searched``).
    :param hidden: hidden units H of the slot network.
    :param bc_epochs: passes over the teacher's training split.
    :param bc_batch_size: windows per cloning batch.
    :param bc_learning_rate: Adam learning rate of the cloning.
    :param dagger_rounds: rounds of DAgger after the cloning (``priority_threshold`` only: a public teacher can
        be asked about any window): the cloned policy plays ``dagger_episodes`` fresh episodes, the teacher
        labels every window it visited, and the policy is cloned again on everything so far for
        ``dagger_epochs``; it corrects the states a pure clone never saw its teacher in, where its errors
        compound.
    :param dagger_episodes: episodes played per DAgger round (seeds ``3000 …``, disjoint from every split).
    :param dagger_epochs: cloning passes after each DAgger round.
    :param warm_start_temperature: the cloned logits are divided by this before PPO (step 2).
    :param timesteps: PPO environment steps (admission windows) after the cloning.
    :param n_envs: environments stepped in turn (``DummyVecEnv``).
    :param n_steps: steps per environment per rollout.
    :param batch_size: PPO minibatch size.
    :param n_epochs: PPO epochs per rollout.
    :param learning_rate: PPO Adam learning rate.
    :param gamma: discount per window (the episode score is the mean window reward: 1 weighs windows equally).
    :param gae_lambda: GAE lambda.
    :param clip_range: PPO clip range.
    :param ent_coef: entropy bonus.
    :param target_kl: early stop of PPO epochs beyond this KL (the log-probability sums 48 slots, so a small
        change per slot is a large one per action; None: no early stop).
    :param eval_every: PPO steps between validation evaluations.
    :param n_validation_seeds: validation seeds ``2000 …`` (every 42 consecutive seeds cover every scenario); a
        family's: its first ladder seed + 700 … (``dcops.training.scheduler.search.validation_seeds``).
    :param team_posterior: the network reads each team's ``gaming_posterior`` as a 16th team feature (the
        environment's ``team_posterior=True``; the teacher data must be recorded with it,
        ``dcops scheduler-teacher --team-posterior``).
    """

    seed: int = 0
    family: str = ""
    teacher: str = "priority_threshold"
    hidden: int = 64
    bc_epochs: int = 30
    bc_batch_size: int = 64
    bc_learning_rate: float = 1e-3
    dagger_rounds: int = 0
    dagger_episodes: int = 200
    dagger_epochs: int = 6
    warm_start_temperature: float = 2.0
    timesteps: int = 160_000
    n_envs: int = 8
    n_steps: int = 256
    batch_size: int = 256
    n_epochs: int = 4
    learning_rate: float = 1e-4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_range: float = 0.1
    ent_coef: float = 0.0
    target_kl: float | None = 0.03
    eval_every: int = 10_000
    n_validation_seeds: int = 84
    team_posterior: bool = False

    def __post_init__(self) -> None:
        """Refuse settings that would fail late (after minutes of cloning or training), naming the field."""
        from dcops.training.scheduler.search import MAX_FAMILY_VALIDATION_SEEDS
        from dcops.training.scheduler.teacher import FAMILY_TEACHERS, MATRIX, TEACHERS, check_family

        on_family = check_family(self.family) != MATRIX
        if on_family and self.dagger_rounds:
            raise ValueError("dagger_rounds: DAgger plays the matrix's seeds 3000 ...; it is not offered with a "
                             "family (family='')")
        teachers = FAMILY_TEACHERS if on_family else TEACHERS
        if self.teacher not in teachers:
            raise ValueError(f"teacher: must be one of {teachers}, got {self.teacher!r}")
        if on_family and self.n_validation_seeds > MAX_FAMILY_VALIDATION_SEEDS:
            raise ValueError(f"n_validation_seeds: a family has {MAX_FAMILY_VALIDATION_SEEDS} validation seeds, "
                             f"got {self.n_validation_seeds}")
        if self.dagger_rounds and self.team_posterior:
            raise ValueError("dagger_rounds: DAgger's visited windows are recorded without the team posterior; "
                             "it is not offered with team_posterior")
        if self.dagger_rounds and self.teacher != "priority_threshold":
            raise ValueError("dagger_rounds: DAgger needs a public teacher that can label any window "
                             "(teacher='priority_threshold')")
        for name in ("hidden", "bc_batch_size", "n_envs", "n_steps", "batch_size", "n_epochs", "eval_every",
                     "n_validation_seeds", "dagger_episodes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: must be at least 1, got {getattr(self, name)}")
        for name in ("bc_epochs", "dagger_rounds", "dagger_epochs", "timesteps"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: must be at least 0, got {getattr(self, name)}")
        for name in ("warm_start_temperature", "bc_learning_rate", "learning_rate", "clip_range"):
            value = getattr(self, name)
            if not value > 0 or value == float("inf"):
                raise ValueError(f"{name}: must be a finite number above 0, got {value}")
        if not 0.0 <= self.gamma <= 1.0 or not 0.0 <= self.gae_lambda <= 1.0:
            raise ValueError(f"gamma and gae_lambda: must be in [0, 1], got {self.gamma} and {self.gae_lambda}")
        if not isinstance(self.team_posterior, bool):
            raise ValueError(f"team_posterior: must be True or False, got {self.team_posterior!r}")
        if self.target_kl is not None and not self.target_kl > 0:
            raise ValueError(f"target_kl: must be above 0 or None, got {self.target_kl}")
