"""Configuration of ``dcops train-marl``: a YAML (or JSON) file with six sections, checked field by field.

Two files ship in ``training/marl/configs/``: ``marl_laptop.yaml`` (local Ray, a few env runners, CPU learner) and
``marl_cluster.yaml`` (an existing Ray cluster, many env runners, GPU learners). ``--config laptop`` and
``--config cluster`` name them; any other value is a path. Every field has a default here, so a file only lists
what it changes; an unknown section or field is an error that names it (no silent drop).

Sections: ``env`` (keyword arguments of :func:`dcops.parallel_env`, e.g. ``n_windows``, ``team_kinds``, plus
``scheduler``: ``"learner"`` or a scripted baseline name), ``ray``, ``env_runners``, ``learners``, ``training``
(PPO hyper-parameters), ``model`` and ``run`` (iterations, checkpoints, seed). Units: batch sizes count
environment steps (one step = one admission window, all agents acting); times are seconds.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
NAMED_CONFIGS = {"laptop": CONFIG_DIR / "marl_laptop.yaml", "cluster": CONFIG_DIR / "marl_cluster.yaml"}


@dataclass
class RaySection:
    """How to reach Ray: ``address`` None starts a new local instance even if a cluster runs on this machine
    (unless ``RAY_ADDRESS`` is set); ``"auto"``, ``"host:6379"`` or ``"ray://host:10001"`` join a cluster;
    ``num_cpus``/``num_gpus``/``object_store_memory_mb`` size a local instance only."""

    address: str | None = None
    num_cpus: int | None = None
    num_gpus: int | None = None
    object_store_memory_mb: int | None = None
    include_dashboard: bool = False


@dataclass
class EnvRunnersSection:
    """Sampling: ``num_env_runners`` Ray actors (0 samples in the driver), each stepping
    ``num_envs_per_env_runner`` environments; ``rollout_fragment_length`` env steps per runner per round."""

    num_env_runners: int = 2
    num_envs_per_env_runner: int = 1
    num_cpus_per_env_runner: int = 1
    rollout_fragment_length: int | str = "auto"
    sample_timeout_s: float = 300.0


@dataclass
class LearnersSection:
    """Updating: ``num_learners`` 0 learns in the driver (one GPU if ``num_gpus_per_learner`` is 1); more spreads
    data-parallel learners over the cluster, each with ``num_gpus_per_learner`` GPUs."""

    num_learners: int = 0
    num_gpus_per_learner: float = 0
    num_cpus_per_learner: int | str = "auto"


@dataclass
class TrainingSection:
    """PPO hyper-parameters (RLlib names; ``lambda_`` is GAE's λ)."""

    train_batch_size_per_learner: int = 512
    minibatch_size: int = 128
    num_epochs: int = 4
    lr: float = 3e-4
    gamma: float = 0.95
    lambda_: float = 0.95
    clip_param: float = 0.2
    entropy_coeff: float = 0.01
    vf_loss_coeff: float = 0.5
    grad_clip: float | None = 0.5


@dataclass
class ModelSection:
    """The MLP of every policy (hidden layer widths) and whether value and policy share layers."""

    fcnet_hiddens: list[int] = field(default_factory=lambda: [256, 256])
    vf_share_layers: bool = False


@dataclass
class RunSection:
    """Length and outputs: ``iterations`` training iterations, a checkpoint every ``checkpoint_every`` (0: only at
    the end), ``seed`` for RLlib, torch and the environments (each runner's env gets seed + its index)."""

    iterations: int = 20
    checkpoint_every: int = 10
    seed: int = 0


DEFAULT_ENV: dict[str, Any] = {
    "scheduler": "learner",
    "team_kinds": ["cooperative", "cooperative", "learner", "learner"],
}


@dataclass
class MarlConfig:
    """The whole configuration (module docstring)."""

    env: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_ENV))
    ray: RaySection = field(default_factory=RaySection)
    env_runners: EnvRunnersSection = field(default_factory=EnvRunnersSection)
    learners: LearnersSection = field(default_factory=LearnersSection)
    training: TrainingSection = field(default_factory=TrainingSection)
    model: ModelSection = field(default_factory=ModelSection)
    run: RunSection = field(default_factory=RunSection)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> MarlConfig:
        """Build from a mapping; unknown sections or fields raise ``ValueError`` naming them."""
        if not isinstance(data, dict):
            raise ValueError(f"{source}: expected a mapping of sections, got {type(data).__name__}")
        sections = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(sections))
        if unknown:
            raise ValueError(f"{source}: unknown section(s) {unknown}; known: {sorted(sections)}")
        kwargs: dict[str, Any] = {}
        for name, value in data.items():
            if name == "env":
                if not isinstance(value, dict):
                    raise ValueError(f"{source}: env must be a mapping, got {type(value).__name__}")
                kwargs["env"] = {**DEFAULT_ENV, **value}
                continue
            section_cls = type(getattr(cls(), name))
            kwargs[name] = _section(section_cls, value or {}, f"{source}: {name}")
        config = cls(**kwargs)
        config.validate(source)
        return config

    def validate(self, source: str = "config") -> None:
        """Check the fields that Ray would otherwise reject late or obscurely."""
        from dcops.cluster.config import ClusterConfig

        env = dict(self.env)
        env.pop("scheduler")
        try:
            cluster = ClusterConfig.from_kwargs(**env)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{source}: env: {error}") from error
        if cluster.cooling == "agent":
            raise ValueError(f"{source}: env.cooling: 'agent' is not supported by train-marl (use 'rule' or 'pid')")
        if self.env["scheduler"] != "learner" and "learner" not in cluster.team_kinds:
            raise ValueError(f"{source}: env: nothing to learn (scheduler is scripted and no 'learner' team_kinds)")
        t = self.training
        if t.minibatch_size > t.train_batch_size_per_learner:
            raise ValueError(f"{source}: training.minibatch_size ({t.minibatch_size}) exceeds "
                             f"train_batch_size_per_learner ({t.train_batch_size_per_learner})")
        for name, value in (("run.iterations", self.run.iterations), ("training.num_epochs", t.num_epochs),
                            ("env_runners.num_envs_per_env_runner", self.env_runners.num_envs_per_env_runner)):
            if value < 1:
                raise ValueError(f"{source}: {name} must be at least 1, got {value}")
        if self.env_runners.num_env_runners < 0 or self.learners.num_learners < 0:
            raise ValueError(f"{source}: env_runners.num_env_runners and learners.num_learners must be >= 0")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _section(section_cls: type, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a mapping, got {type(value).__name__}")
    known = {f.name for f in fields(section_cls)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}; known: {sorted(known)}")
    return section_cls(**value)


def load_config(name_or_path: str) -> MarlConfig:
    """Load ``laptop``, ``cluster`` or a YAML/JSON file (``.json`` is read as JSON, anything else as YAML)."""
    path = NAMED_CONFIGS.get(name_or_path, Path(name_or_path))
    if not path.is_file():
        raise FileNotFoundError(f"--config: no file {path} (use laptop, cluster or a path to a YAML/JSON file)")
    text = path.read_text()
    if path.suffix == ".json":
        data = json.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text)
    return MarlConfig.from_dict(data or {}, source=str(path))
