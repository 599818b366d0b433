"""Fitting and measuring the team posterior (``dcops train-posterior``).

The posterior (``dcops.oversight.posterior``) is a logistic model per window index over public features of
each team at the decision time of that window. This command:

1. simulates :data:`TRAINING_SEEDS` episodes (:func:`episode_setting`: the team mix cycles over
   :data:`MIXES`, the scheduler over :data:`SCHEDULERS`, rule cooling, random faults, ``n_windows`` windows),
   reading every feature from the scheduler's public view (``PublicRecord.begin_window_from_view``) and the
   label (gaming: any kind but cooperative, detector_aware and slow_burn included) from the evaluator's truth at the episode's end
   (``infos["scheduler"]["episode"]["team_kinds"]``);
2. fits, per window index, an L2-regularised logistic regression (:func:`fit_logistic`, scipy L-BFGS on
   standardised features, intercept unpenalised; the penalty chosen per window from :data:`PENALTIES` by
   :data:`CV_FOLDS`-fold cross-validated log-loss, folds by episode) twice on the same rows: the **posterior**
   on every feature, and the **stated-fields baseline** (the review's classifier) on ``STATED_FEATURES``
   alone; both are written to ``oversight/data/team_posterior.json``;
3. measures, on :data:`FRESH_SEEDS` (never trained on; the same settings cycle), per window index: AUROC,
   accuracy at 0.5 and recall at 1 % FPR of (a) the stated-fields baseline, (b) the monitor's flags (a team
   counts as flagged at window w when any flag against it reached the scheduler by then, i.e. was raised at
   the end of windows 0..w−1), (b′) the monitor's strongest evidence z so far (the same flags' continuous
   score), and (c) the posterior; the Brier score and a reliability table of the two probabilistic models;
   and, on the fresh all-honest episodes, the share of honest teams the posterior puts above 0.5 at any window.

Units are (team, episode) pairs at a window index. AUROC is the Mann–Whitney statistic (ties one half,
``dcops.evaluation.oversight_calibration.auroc``); recall at 1 % FPR counts the positives scored strictly above
the 99th percentile of the negatives (so a yes/no score such as a flag gets its true-positive rate if it flags
at most 1 % of honest teams, else 0), as ``dcops eval-oversight`` does. Scikit-learn is not needed: the fit is
the same L2 logistic regression (lbfgs) and scipy is a core dependency.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dcops.command import Command, print_and_write

TRAINING_SEEDS = range(90_000, 91_200)
FRESH_SEEDS = range(92_000, 92_400)
N_WINDOWS = 8
MIXES: tuple[tuple[str, ...], ...] = (
    ("cooperative", "cooperative", "strategic", "adaptive"),  # the default mix
    ("cooperative",) * 4,
    ("cooperative", "strategic", "injecting", "adaptive"),
    ("cooperative", "cooperative", "cooperative", "strategic"),
    ("cooperative", "cooperative", "adaptive", "injecting"),
    ("cooperative", "cooperative", "cooperative", "detector_aware"),
    ("cooperative", "cooperative", "strategic", "slow_burn"),
)
MIX_NAMES = ("default", "all_honest", "three_gaming", "one_strategic", "adaptive_injecting", "detector_aware",
             "slow_burn")
SCHEDULERS = ("priority_threshold", "earliest_deadline", "carbon_greedy", "accept_all")
PENALTIES = (0.1, 1.0, 10.0, 100.0)
"""L2 penalties tried (λ of ``λ/2·‖β‖²`` against the summed log-loss, on standardised features)."""
CV_FOLDS = 5
RELIABILITY_BINS = 10


def episode_setting(seed: int) -> tuple[int, str]:
    """(index into :data:`MIXES`, scheduler name) of an episode: every mix meets every scheduler in 28 seeds."""
    return seed % len(MIXES), SCHEDULERS[(seed // len(MIXES)) % len(SCHEDULERS)]


# ---------------------------------------------------------------------------------------------- episodes
@dataclass
class Episodes:
    """Features and labels of simulated episodes. E episodes, W windows, T teams, F = len(FEATURE_NAMES)."""

    seeds: np.ndarray
    """(E,)"""
    mix: np.ndarray
    """(E,) index into :data:`MIXES`."""
    features: np.ndarray
    """(E, W, T, F): each team's features at the decision time of each window."""
    gaming: np.ndarray
    """(E, T) bool: the evaluator's label."""
    flagged: np.ndarray
    """(E, W, T) bool: a flag against the team had reached the scheduler by window w."""
    monitor_z: np.ndarray
    """(E, W, T): the monitor's strongest evidence against the team at the end of windows 0..w−1 (0 at w=0)."""
    seconds: np.ndarray
    """(E,): wall time of the posterior's work in each episode (view parsing, record, features, and the
    probabilities when a posterior was given), s."""
    kinds: np.ndarray | None = None
    """(E, T) str: each team's kind (the evaluator's truth; the environment shuffles the mix over the teams)."""

    @property
    def n_windows(self) -> int:
        return int(self.features.shape[1])

    def subset(self, keep: np.ndarray) -> Episodes:
        return Episodes(self.seeds[keep], self.mix[keep], self.features[keep], self.gaming[keep],
                        self.flagged[keep], self.monitor_z[keep], self.seconds[keep],
                        None if self.kinds is None else self.kinds[keep])


def simulate_episode(seed: int, n_windows: int = N_WINDOWS, scheduler: Any = None, team_factory: Any = None,
                     posterior: Any = None, catalogue: str = "classic") -> dict[str, np.ndarray]:
    """One episode of :func:`episode_setting` (``scheduler`` or ``team_factory`` replace its own): the
    features the posterior sees at every window (from the public view only), and, after the end, the labels.
    ``posterior``, if given, is asked for its probabilities every window (to time it). ``catalogue``: the
    public job catalogue (``ClusterConfig.catalogue``; the shipped posterior was trained on ``classic``)."""
    from dcops.agents.schedulers import BASELINES
    from dcops.env import parallel_env
    from dcops.oversight.flags import FLAG_KINDS
    from dcops.oversight.posterior import FEATURE_NAMES, HONEST_KINDS, PublicRecord

    mix, scheduler_name = episode_setting(seed)
    env = parallel_env(n_windows=n_windows, team_kinds=MIXES[mix], cooling="rule", structured_view=True,
                       catalogue=catalogue, **({"team_factory": team_factory} if team_factory is not None else {}))
    policy = scheduler if scheduler is not None else BASELINES[scheduler_name]()
    _, infos = env.reset(seed=seed)
    teams = list(env.team_ids)
    record = PublicRecord(teams, env.config.window_h, env.config.catalogue)
    features = np.zeros((n_windows, len(teams), len(FEATURE_NAMES)))
    flagged = np.zeros((n_windows, len(teams)), dtype=bool)
    seen: set[str] = set()
    seconds = 0.0
    while env.agents:
        view = infos["scheduler"]["view"]
        w = int(view["window"])
        start = time.perf_counter()
        record.begin_window_from_view(view)
        features[w] = record.feature_matrix()  # record.team_ids is ``teams``, in order
        if posterior is not None:
            posterior.probabilities(record)
        seconds += time.perf_counter() - start
        seen |= {f["team"] for f in view["flags"]}
        flagged[w] = [t in seen for t in teams]
        _, _, _, _, infos = env.step({"scheduler": policy.decide(view)})
    kinds = infos["scheduler"]["episode"]["team_kinds"]  # the evaluator's truth, after the end
    index = {t: i for i, t in enumerate(teams)}
    strongest = np.zeros((n_windows, len(teams)))
    for window, team, kind, z in env.monitor.strengths:
        if kind in FLAG_KINDS and window + 1 < n_windows:
            i = index[team]
            strongest[window + 1, i] = max(strongest[window + 1, i], z)
    monitor_z = np.maximum.accumulate(strongest, axis=0)
    return {"features": features, "gaming": np.array([kinds[t] not in HONEST_KINDS for t in teams]),
            "flagged": flagged, "monitor_z": monitor_z, "mix": np.array(mix), "seconds": np.array(seconds),
            "kinds": np.array([kinds[t] for t in teams])}


def simulate(seeds: Sequence[int], n_windows: int = N_WINDOWS, progress: bool = False,
             posterior: Any = None, catalogue: str = "classic") -> Episodes:
    """:func:`simulate_episode` for every seed (under ``catalogue``), stacked."""
    from tqdm import tqdm

    bar = tqdm(seeds, desc="episodes", unit="ep", disable=None if progress else True)  # None: off without a tty
    rows = [simulate_episode(s, n_windows, posterior=posterior, catalogue=catalogue) for s in bar]
    return Episodes(*(np.array(list(seeds)), *(np.stack([r[k] for r in rows]) for k in
                      ("mix", "features", "gaming", "flagged", "monitor_z", "seconds", "kinds"))))


# ---------------------------------------------------------------------------------------------- fitting
def fit_logistic(x: np.ndarray, y: np.ndarray, penalty: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """L2-regularised logistic regression: minimise ``Σ log(1 + exp(−s·z)) + penalty/2·‖β‖²`` over β and an
    unpenalised intercept, with ``z = b + β·(x − m)/s`` on standardised columns (a constant column keeps scale
    1 and weight 0). Returns (mean, scale, coef, intercept)."""
    from scipy.optimize import minimize

    mean = x.mean(axis=0)
    std = x.std(axis=0)
    scale = np.where(std > 1e-9, std, 1.0)
    xs = (x - mean) / scale
    sign = np.where(y, 1.0, -1.0)
    n_features = xs.shape[1]

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        b, beta = theta[0], theta[1:]
        margin = sign * (b + xs @ beta)
        value = float(np.logaddexp(0.0, -margin).sum() + 0.5 * penalty * beta @ beta)
        g = -sign * np.exp(-np.logaddexp(0.0, margin))  # d loss / d z
        return value, np.concatenate([[g.sum()], xs.T @ g + penalty * beta])

    prior = np.clip(y.mean(), 1e-3, 1 - 1e-3)
    start = np.concatenate([[math.log(prior / (1 - prior))], np.zeros(n_features)])
    result = minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 2000, "gtol": 1e-6})
    return mean, scale, result.x[1:], float(result.x[0])


def _log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def choose_penalty(x: np.ndarray, y: np.ndarray, groups: np.ndarray, penalties: Sequence[float] = PENALTIES,
                   folds: int = CV_FOLDS) -> float:
    """The penalty of lowest cross-validated log-loss, folds by ``groups`` (episode index mod ``folds``)."""
    from dcops.oversight.posterior import sigmoid

    best, best_loss = penalties[0], math.inf
    for penalty in penalties:
        losses = []
        for k in range(folds):
            test = groups % folds == k
            mean, scale, coef, b = fit_logistic(x[~test], y[~test], penalty)
            losses.append(_log_loss(sigmoid(b + ((x[test] - mean) / scale) @ coef), y[test]))
        if float(np.mean(losses)) < best_loss:
            best, best_loss = penalty, float(np.mean(losses))
    return best


def fit_posterior(data: Episodes, feature_names: Sequence[str], penalty: float | None = None) -> tuple[Any, list[float]]:
    """Per window index, a logistic model on ``feature_names`` (penalty by cross-validation unless given).
    Returns the ``TeamPosterior`` and the penalty of each window."""
    from dcops.oversight.posterior import FEATURE_NAMES, LogisticModel, TeamPosterior

    columns = [FEATURE_NAMES.index(n) for n in feature_names]
    n_episodes, _, n_teams, _ = data.features.shape
    y = data.gaming.reshape(-1)
    groups = np.repeat(np.arange(n_episodes), n_teams)
    models, penalties = [], []
    for w in range(data.n_windows):
        x = data.features[:, w][..., columns].reshape(-1, len(columns))
        chosen = penalty if penalty is not None else choose_penalty(x, y, groups)
        mean, scale, coef, b = fit_logistic(x, y, chosen)
        models.append(LogisticModel(tuple(feature_names), mean, scale, coef, b))
        penalties.append(chosen)
    return TeamPosterior(feature_names, models, float(y.mean())), penalties


def predict_all(posterior: Any, data: Episodes) -> np.ndarray:
    """(E, W, T) probabilities of ``posterior`` on every team and window of ``data``."""
    return np.stack([posterior.predict(data.features[:, w], w) for w in range(data.n_windows)], axis=1)


# ---------------------------------------------------------------------------------------------- measuring
def recall_at_fpr(positive: np.ndarray, negative: np.ndarray, fpr: float = 0.01) -> float:
    """Share of positives strictly above the ``1 − fpr`` quantile of the negatives (module docstring)."""
    if positive.size == 0 or negative.size == 0:
        return float("nan")
    return float((positive > np.quantile(negative, 1.0 - fpr)).mean())


def window_metrics(score: np.ndarray, label: np.ndarray, decision: np.ndarray) -> dict[str, float]:
    """AUROC, accuracy of ``decision`` and recall at 1 % FPR of ``score`` over one window's units."""
    from dcops.evaluation.oversight_calibration import auroc

    pos, neg = score[label], score[~label]
    return {"auroc": auroc(pos, neg), "accuracy": float((decision == label).mean()),
            "recall_at_1pct_fpr": recall_at_fpr(pos, neg)}


def reliability(p: np.ndarray, y: np.ndarray, bins: int = RELIABILITY_BINS) -> list[dict[str, float]]:
    """Equal-width bins of predicted probability: count, mean predicted, observed share gaming."""
    index = np.minimum((p * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        inside = index == b
        rows.append({"low": b / bins, "high": (b + 1) / bins, "count": int(inside.sum()),
                     "predicted": float(p[inside].mean()) if inside.any() else float("nan"),
                     "observed": float(y[inside].mean()) if inside.any() else float("nan")})
    return rows


def evaluate(posterior: Any, baseline: Any, data: Episodes) -> dict[str, Any]:
    """Every figure of the report (module docstring, step 3) on ``data``."""
    p_post, p_base = predict_all(posterior, data), predict_all(baseline, data)
    label = np.broadcast_to(data.gaming[:, None, :], p_post.shape)
    scorers = {
        "stated_fields_lr": (p_base, p_base >= 0.5),
        "monitor_flags": (data.flagged.astype(float), data.flagged),
        "monitor_max_z": (data.monitor_z, data.flagged),
        "posterior": (p_post, p_post >= 0.5),
    }
    per_window: dict[str, list[dict[str, float]]] = {name: [] for name in scorers}
    for w in range(data.n_windows):
        y = label[:, w].reshape(-1)
        for name, (score, decision) in scorers.items():
            per_window[name].append(window_metrics(score[:, w].reshape(-1), y, decision[:, w].reshape(-1)))
        for name, p in (("stated_fields_lr", p_base), ("posterior", p_post)):
            per_window[name][-1]["brier"] = float(((p[:, w].reshape(-1) - y) ** 2).mean())
            per_window[name][-1]["log_loss"] = _log_loss(p[:, w].reshape(-1), y)
    default = data.mix == 0
    by_mix_default = {name: [window_metrics(p[default, w].reshape(-1), label[default, w].reshape(-1),
                                            p[default, w].reshape(-1) >= 0.5) for w in range(data.n_windows)]
                      for name, p in (("stated_fields_lr", p_base), ("posterior", p_post))}
    honest_only = data.mix == MIX_NAMES.index("all_honest")
    above = {name: float((p[honest_only] >= 0.5).any(axis=1).mean()) if honest_only.any() else float("nan")
             for name, p in (("stated_fields_lr", p_base), ("posterior", p_post))}
    above["monitor_flags"] = float(data.flagged[honest_only].any(axis=1).mean()) if honest_only.any() else float("nan")
    flat_y = label.reshape(-1)
    kinds = data.kinds if data.kinds is not None else np.full(data.gaming.shape, "")
    by_kind = {kind: {name: [float((p[:, w][kinds == kind] >= 0.5).mean()) for w in range(data.n_windows)]
                      for name, p in (("stated_fields_lr", p_base), ("posterior", p_post))}
               for kind in dict.fromkeys(k for mix in MIXES for k in mix) if (kinds == kind).any()}
    for kind in by_kind:
        by_kind[kind]["monitor_flags"] = [float(data.flagged[:, w][kinds == kind].mean()) for w in range(data.n_windows)]
        by_kind[kind]["teams"] = int((kinds == kind).sum())
    return {
        "per_window": per_window,
        "by_kind": by_kind,
        "default_mix": by_mix_default,
        "honest_above_half_all_honest": above,
        "honest_teams_all_honest": int(honest_only.sum() * data.gaming.shape[1]),
        "reliability": {"posterior": reliability(p_post.reshape(-1), flat_y),
                        "stated_fields_lr": reliability(p_base.reshape(-1), flat_y)},
        "brier": {"posterior": float(((p_post.reshape(-1) - flat_y) ** 2).mean()),
                  "stated_fields_lr": float(((p_base.reshape(-1) - flat_y) ** 2).mean())},
        "units_per_window": int(label[:, 0].size), "gaming_per_window": int(label[:, 0].sum()),
    }


# ---------------------------------------------------------------------------------------------- report
def _f(x: float) -> str:
    return "n/a" if x != x else f"{x:.3f}"


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{100.0 * x:.1f} %"


def report(results: dict[str, Any], meta: dict[str, Any]) -> str:
    """The markdown of ``reports/oversight/posterior.md`` (every figure from ``results`` and ``meta``)."""
    pw = results["per_window"]
    n_windows = len(pw["posterior"])
    lines = [
        "# Team posterior P(gaming | public evidence): `dcops train-posterior`",
        "",
        "Made by `dcops train-posterior` (`dcops.evaluation.posterior_training`, whose docstring defines every",
        f"figure; the posterior is `dcops.oversight.posterior`). Trained on seeds {meta['training_seeds'][0]}–"
        f"{meta['training_seeds'][1]} ({meta['training_episodes']} episodes), measured on fresh seeds "
        f"{meta['fresh_seeds'][0]}–{meta['fresh_seeds'][1]} ({meta['fresh_episodes']} episodes, "
        f"{results['units_per_window']} teams per window, {results['gaming_per_window']} of them gaming).",
        f"Episodes: {n_windows} windows, rule cooling, random faults; team mixes cycle over "
        + ", ".join(f"{name} ({', '.join(mix)})" for name, mix in zip(MIX_NAMES, MIXES, strict=True))
        + "; schedulers over " + ", ".join(SCHEDULERS) + ".",
        "",
        "Window w is the decision time of window w: stated fields of requests of windows 0..w, audits and flags "
        "of windows 0..w−1 (window 0: the stated fields of window 0's requests alone).",
        f"Penalties chosen by {CV_FOLDS}-fold cross-validation per window: posterior {meta['penalties']['posterior']}, "
        f"stated-fields LR {meta['penalties']['stated_fields']}. Run time: simulation "
        f"{meta['seconds']['simulate_training']:.0f} s training + {meta['seconds']['simulate_fresh']:.0f} s fresh, "
        f"fitting {meta['seconds']['fit']:.0f} s (one core). The posterior's own cost in an episode (parsing the "
        f"view, its record and shadow monitor, features, probabilities for 4 teams): "
        f"{1e6 * meta['seconds']['posterior_per_window']:.0f} µs per window.",
        "",
    ]
    for metric, title in (("auroc", "AUROC"), ("accuracy", "Accuracy at 0.5 (flags: flagged or not)"),
                          ("recall_at_1pct_fpr", "Recall at 1 % FPR")):
        lines += [f"## {title}, per window", "",
                  "| scorer | " + " | ".join(f"w{w}" for w in range(n_windows)) + " |",
                  "|---|" + "---|" * n_windows]
        for name, label in (("stated_fields_lr", "(a) stated-fields LR"), ("monitor_flags", "(b) monitor, any flag so far"),
                            ("monitor_max_z", "(b′) monitor, strongest z so far"), ("posterior", "(c) posterior")):
            if metric == "accuracy" and name == "monitor_max_z":
                continue
            lines.append(f"| {label} | " + " | ".join(_f(r[metric]) for r in pw[name]) + " |")
        lines.append("")
    if "by_kind" in results:
        lines += ["## Per team kind: share at P(gaming) ≥ 0.5 (flags: flagged so far), per window", "",
                  "A row of a gaming kind is its recall at 0.5, the cooperative row its false-positive rate "
                  "(both pooled over every mix the kind is in).", "",
                  "| kind (teams) | scorer | " + " | ".join(f"w{w}" for w in range(n_windows)) + " |",
                  "|---|---|" + "---|" * n_windows]
        for kind, row in results["by_kind"].items():
            for name, label in (("stated_fields_lr", "stated-fields LR"), ("monitor_flags", "monitor flags"),
                                ("posterior", "posterior")):
                lines.append(f"| {kind} ({row['teams']}) | {label} | " + " | ".join(_f(x) for x in row[name]) + " |")
        lines.append("")
    lines += ["## Calibration on the fresh seeds", "",
              "| model | " + " | ".join(f"Brier w{w}" for w in range(n_windows)) + " | Brier, all |",
              "|---|" + "---|" * (n_windows + 1)]
    for name, label in (("stated_fields_lr", "stated-fields LR"), ("posterior", "posterior")):
        lines.append(f"| {label} | " + " | ".join(_f(r["brier"]) for r in pw[name]) + f" | {_f(results['brier'][name])} |")
    lines += ["", "Reliability (every window pooled): predicted probability bin, teams in it, mean predicted, "
              "observed share gaming.", "",
              "| bin | posterior: teams | predicted | observed | stated LR: teams | predicted | observed |",
              "|---|---|---|---|---|---|---|"]
    for a, b in zip(results["reliability"]["posterior"], results["reliability"]["stated_fields_lr"], strict=True):
        lines.append(f"| {a['low']:.1f}–{a['high']:.1f} | {a['count']} | {_f(a['predicted'])} | {_f(a['observed'])} | "
                     f"{b['count']} | {_f(b['predicted'])} | {_f(b['observed'])} |")
    lines += ["", "## Default mix only (AUROC / accuracy at 0.5)", "",
              "| model | " + " | ".join(f"w{w}" for w in range(n_windows)) + " |", "|---|" + "---|" * n_windows]
    for name, label in (("stated_fields_lr", "stated-fields LR"), ("posterior", "posterior")):
        lines.append(f"| {label} | " + " | ".join(f"{_f(r['auroc'])} / {_f(r['accuracy'])}"
                                                for r in results["default_mix"][name]) + " |")
    above = results["honest_above_half_all_honest"]
    lines += ["", f"## Honest teams in all-honest episodes ({results['honest_teams_all_honest']} teams)", "",
              "Share ever at P(gaming) ≥ 0.5 (flags: ever flagged) over the episode's windows: "
              f"posterior {_pct(above['posterior'])}, stated-fields LR {_pct(above['stated_fields_lr'])}, "
              f"monitor {_pct(above['monitor_flags'])}. The posterior is calibrated to the training mix "
              f"({_pct(meta['training_prior'])} of teams gaming); it is a probability, not a flag, and its 0.5 is "
              "not the monitor's 2 % false-positive budget.", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- the command
def train_and_report(n_training: int, n_fresh: int, n_windows: int, weights_path: Path | None,
                     evaluate_only: bool = False, progress: bool = True) -> tuple[str, dict[str, Any]]:
    """Steps 1–3 of the module docstring; writes the weights unless ``evaluate_only`` (which reads them)."""
    from dcops.oversight.posterior import FEATURE_NAMES, STATED_FEATURES, WEIGHTS_PATH, TeamPosterior

    path = weights_path or WEIGHTS_PATH
    seconds: dict[str, float] = {}
    training_seeds = range(TRAINING_SEEDS.start, TRAINING_SEEDS.start + n_training)
    fresh_seeds = range(FRESH_SEEDS.start, FRESH_SEEDS.start + n_fresh)
    if set(training_seeds) & set(fresh_seeds):
        raise ValueError("training and fresh seeds overlap: use fewer training seeds")
    if evaluate_only:
        posterior, baseline = TeamPosterior.load(path), TeamPosterior.load(path, "stated_fields")
        stored = json.loads(Path(path).read_text())["training"]
        penalties = stored["penalties"]
        seconds.update(simulate_training=stored["seconds"]["simulate_training"], fit=stored["seconds"]["fit"])
        training_seeds = range(stored["seeds"][0], stored["seeds"][1] + 1)
    else:
        t = time.perf_counter()
        training = simulate(training_seeds, n_windows, progress)
        seconds["simulate_training"] = time.perf_counter() - t
        t = time.perf_counter()
        posterior, post_penalties = fit_posterior(training, FEATURE_NAMES)
        baseline, base_penalties = fit_posterior(training, STATED_FEATURES)
        seconds["fit"] = time.perf_counter() - t
        penalties = {"posterior": post_penalties, "stated_fields": base_penalties}
    t = time.perf_counter()
    fresh = simulate(fresh_seeds, n_windows, progress, posterior)
    seconds["simulate_fresh"] = time.perf_counter() - t
    results = evaluate(posterior, baseline, fresh)
    seconds["posterior_per_window"] = float(fresh.seconds.sum() / (len(fresh_seeds) * n_windows))
    meta = {"training_seeds": [min(training_seeds), max(training_seeds)], "training_episodes": len(training_seeds),
            "fresh_seeds": [min(fresh_seeds), max(fresh_seeds)], "fresh_episodes": len(fresh_seeds),
            "penalties": penalties, "seconds": seconds, "training_prior": posterior.training_prior}
    if not evaluate_only:
        payload = {
            "description": "Team posterior P(gaming | public evidence) and the stated-fields baseline: per window "
                           "index, a logistic model over standardised features (dcops.oversight.posterior). "
                           "Made by `dcops train-posterior`.",
            "models": {"posterior": posterior.as_dict(), "stated_fields": baseline.as_dict()},
            "training": {"seeds": meta["training_seeds"], "windows": n_windows, "mixes": [list(m) for m in MIXES],
                         "schedulers": list(SCHEDULERS), "cooling": "rule", "penalties": penalties,
                         "cv_folds": CV_FOLDS, "seconds": seconds},
        }
        Path(path).write_text(json.dumps(payload, indent=1) + "\n")
    return report(results, meta), {"results": results, "meta": meta}


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=len(TRAINING_SEEDS),
                        help=f"training episodes (seeds from {TRAINING_SEEDS.start})")
    parser.add_argument("--eval-seeds", type=int, default=len(FRESH_SEEDS),
                        help=f"fresh evaluation episodes (seeds from {FRESH_SEEDS.start})")
    parser.add_argument("--windows", type=int, default=N_WINDOWS, help="windows per episode (one model per window)")
    parser.add_argument("--out", default="reports/oversight/posterior.md",
                        help="the report (markdown; its figures as JSON beside it)")
    parser.add_argument("--weights", default=None, help="weights file (default oversight/data/team_posterior.json)")
    parser.add_argument("--evaluate-only", action="store_true", help="measure the weights file without refitting")


def _run(args: argparse.Namespace) -> int:
    text, data = train_and_report(args.seeds, args.eval_seeds, args.windows,
                                  Path(args.weights) if args.weights else None, args.evaluate_only)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(data, indent=1, default=float) + "\n")
    print_and_write(text, out)
    return 0


COMMANDS = [Command("train-posterior", "fit the team posterior P(gaming | public evidence) and measure it on fresh seeds",
                    _arguments, _run)]
