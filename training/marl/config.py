"""Configuration of ``dcops train-marl``: a YAML (or JSON) file with seven sections, validated by pydantic models.

Two files ship in ``training/marl/configs/``: ``marl_laptop.yaml`` (local Ray, a few env runners, CPU learner) and
``marl_cluster.yaml`` (an existing Ray cluster, many env runners, GPU learners). ``--config laptop`` and
``--config cluster`` name them; any other value is a path. Every field has a default here, so a file only lists
what it changes; an unknown section or field, a value of the wrong type or out of its range is an error that
names it (``extra="forbid"``: no silent drop; ``strict``: no coercion either, so ``iterations: "5"`` or
``num_env_runners: true`` is refused, not read as 5 or 1).

Sections: ``env`` (keyword arguments of :func:`dcops.parallel_env`, e.g. ``n_windows``, ``team_kinds``, plus
``scheduler``: ``"learner"`` or a scripted baseline name; checked by :meth:`dcops.cluster.config.ClusterConfig.
from_kwargs`), ``ray``, ``env_runners``, ``learners``, ``training`` (PPO hyper-parameters), ``model`` and ``run``
(iterations, checkpoints, seed). Units: batch sizes count environment steps (one step = one admission window, all
agents acting); times are seconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
NAMED_CONFIGS = {"laptop": CONFIG_DIR / "marl_laptop.yaml", "cluster": CONFIG_DIR / "marl_cluster.yaml"}


class _Section(BaseModel):
    # Unknown fields are errors. Assignments (the CLI's overrides) are not checked on the spot:
    # MarlConfig.revalidate checks the whole configuration after them, cross-field rules included.
    model_config = ConfigDict(extra="forbid", strict=True)


class RaySection(_Section):
    """How to reach Ray: ``address`` None starts a new local instance even if a cluster runs on this machine
    (unless ``RAY_ADDRESS`` is set); ``"auto"``, ``"host:6379"`` or ``"ray://host:10001"`` join a cluster;
    ``num_cpus``/``num_gpus``/``object_store_memory_mb`` size a local instance only (None: Ray's default)."""

    address: str | None = None
    num_cpus: int | None = Field(None, ge=1)
    num_gpus: int | None = Field(None, ge=0)
    object_store_memory_mb: int | None = Field(None, ge=1)
    include_dashboard: bool = False


class EnvRunnersSection(_Section):
    """Sampling: ``num_env_runners`` Ray actors (0 samples in the driver), each stepping
    ``num_envs_per_env_runner`` environments; ``rollout_fragment_length`` env steps per runner per round."""

    num_env_runners: int = Field(2, ge=0)
    num_envs_per_env_runner: int = Field(1, ge=1)
    num_cpus_per_env_runner: int = Field(1, ge=0)
    rollout_fragment_length: Annotated[int, Field(ge=1)] | Literal["auto"] = "auto"
    sample_timeout_s: float = Field(300.0, gt=0)


class LearnersSection(_Section):
    """Updating: ``num_learners`` 0 learns in the driver (one GPU if ``num_gpus_per_learner`` is 1); more spreads
    data-parallel learners over the cluster, each with ``num_gpus_per_learner`` GPUs."""

    num_learners: int = Field(0, ge=0)
    num_gpus_per_learner: float = Field(0, ge=0)
    num_cpus_per_learner: Annotated[int, Field(ge=1)] | Literal["auto"] = "auto"


class TrainingSection(_Section):
    """PPO hyper-parameters (RLlib names; ``lambda_`` is GAE's λ). ``minibatch_size`` may not exceed
    ``train_batch_size_per_learner``."""

    train_batch_size_per_learner: int = Field(512, ge=1)
    minibatch_size: int = Field(128, ge=1)
    num_epochs: int = Field(4, ge=1)
    lr: float = Field(3e-4, gt=0)
    gamma: float = Field(0.95, ge=0, le=1)
    lambda_: float = Field(0.95, ge=0, le=1)
    clip_param: float = Field(0.2, gt=0)
    entropy_coeff: float = Field(0.01, ge=0)
    vf_loss_coeff: float = Field(0.5, ge=0)
    grad_clip: float | None = Field(0.5, gt=0)

    @model_validator(mode="after")
    def _minibatch_fits_in_batch(self) -> TrainingSection:
        if self.minibatch_size > self.train_batch_size_per_learner:
            raise ValueError(f"minibatch_size ({self.minibatch_size}) exceeds train_batch_size_per_learner "
                             f"({self.train_batch_size_per_learner})")
        return self


class ModelSection(_Section):
    """The MLP of every policy (hidden layer widths) and whether value and policy share layers."""

    fcnet_hiddens: list[Annotated[int, Field(ge=1)]] = Field(default_factory=lambda: [256, 256])
    vf_share_layers: bool = False


class RunSection(_Section):
    """Length and outputs: ``iterations`` training iterations, a checkpoint every ``checkpoint_every`` (0: only at
    the end), ``seed`` for RLlib, torch and the environments (each runner's env gets seed + its index)."""

    iterations: int = Field(20, ge=1)
    checkpoint_every: int = Field(10, ge=0)
    seed: int = Field(0, ge=0)


DEFAULT_ENV: dict[str, Any] = {
    "scheduler": "learner",
    "team_kinds": ["cooperative", "cooperative", "learner", "learner"],
}


class MarlConfig(_Section):
    """The whole configuration (module docstring)."""

    env: dict[str, Any] = Field(default_factory=lambda: dict(DEFAULT_ENV))
    ray: RaySection = Field(default_factory=RaySection)
    env_runners: EnvRunnersSection = Field(default_factory=EnvRunnersSection)
    learners: LearnersSection = Field(default_factory=LearnersSection)
    training: TrainingSection = Field(default_factory=TrainingSection)
    model: ModelSection = Field(default_factory=ModelSection)
    run: RunSection = Field(default_factory=RunSection)

    @field_validator("env", mode="before")
    @classmethod
    def _env_over_defaults(cls, value: Any) -> Any:
        return {**DEFAULT_ENV, **value} if isinstance(value, dict) else value

    @field_validator("ray", "env_runners", "learners", "training", "model", "run", mode="before")
    @classmethod
    def _empty_section_is_defaults(cls, value: Any) -> Any:
        return {} if value is None else value  # a YAML section with every field commented out

    @model_validator(mode="after")
    def _env_builds_a_cluster(self) -> MarlConfig:
        from dcops.agents.schedulers import BASELINES
        from dcops.cluster.config import ClusterConfig

        scheduler = self.env.get("scheduler")
        if scheduler != "learner" and scheduler not in BASELINES:
            raise ValueError(f"env.scheduler: 'learner' or a scripted baseline of {sorted(BASELINES)}, "
                             f"got {scheduler!r}")
        cluster_kwargs = {k: v for k, v in self.env.items() if k != "scheduler"}
        try:
            cluster = ClusterConfig.from_kwargs(**cluster_kwargs)
        except (TypeError, ValueError) as error:  # an unknown option or a bad value: the message names it
            raise ValueError(f"env: {error}") from error
        if cluster.cooling == "agent":
            raise ValueError("env.cooling: 'agent' is not supported by train-marl (use 'rule' or 'pid')")
        if self.env["scheduler"] != "learner" and "learner" not in cluster.team_kinds:
            raise ValueError("env: nothing to learn (scheduler is scripted and no 'learner' team_kinds)")
        return self

    @classmethod
    def from_dict(cls, data: Any, source: str = "config") -> MarlConfig:
        """Build from a mapping; any error raises ``ValueError`` naming ``source``, the field and the problem."""
        if not isinstance(data, dict):
            raise ValueError(f"{source}: expected a mapping of sections, got {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            raise ValueError(_describe(error, source)) from None

    def revalidate(self, source: str = "config") -> None:
        """Check the whole configuration again after fields were assigned (``dcops train-marl``'s overrides);
        raises ``ValueError`` as :meth:`from_dict` does. (Not pydantic's deprecated ``validate`` classmethod.)"""
        type(self).from_dict(self.as_dict(), source)

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump()


def _describe(error: ValidationError, source: str) -> str:
    """``source: section.field: problem (got value)``, one per field; unknown names list the known ones."""
    problems: dict[str, list[str]] = {}
    for problem in error.errors(include_url=False):
        path, model = _field_path(problem["loc"])  # without a union's member tags ("constrained-int", ...)
        message = problem["msg"].removeprefix("Value error, ")
        if problem["type"] == "extra_forbidden":
            message = f"unknown {'section' if model is MarlConfig else 'field'}; known: {sorted(model.model_fields)}"
        elif problem["type"] != "value_error":
            message += f" (got {problem['input']!r})"
        problems.setdefault(".".join(path), []).append(message)
    return f"{source}: " + "; ".join(f"{where}: {' or '.join(messages)}" if where else " or ".join(messages)
                                     for where, messages in problems.items())


def _field_path(loc: tuple[Any, ...]) -> tuple[list[str], type[BaseModel]]:
    """The names in ``loc`` that are sections or fields (not list indices nor a union's member tags such as
    ``constrained-int``), and the model that holds the last of them."""
    path: list[str] = []
    holder: type[BaseModel] = MarlConfig
    model: Any = MarlConfig
    for part in loc:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            break
        holder = model
        path.append(str(part))
        model = holder.model_fields[part].annotation if part in holder.model_fields else None
    return path, holder


def load_config(name_or_path: str) -> MarlConfig:
    """Load ``laptop``, ``cluster`` or a YAML/JSON file (``.json`` is read as JSON, anything else as YAML)."""
    path = NAMED_CONFIGS.get(name_or_path, Path(name_or_path))
    if not path.is_file():
        raise FileNotFoundError(f"--config: no file {path} (use laptop, cluster or a path to a YAML/JSON file)")
    text = path.read_text()
    if path.suffix == ".json":
        data = json.loads(text)
    else:
        import yaml  # pyyaml: the marl extra

        data = yaml.safe_load(text)
    return MarlConfig.from_dict(data or {}, source=str(path))
