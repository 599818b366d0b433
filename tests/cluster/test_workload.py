"""The trace workload: derived from the CSVs as documented, its shape reaches the arrivals, and nothing else moves."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dcops
from dcops.agents.schedulers import RejectAllScheduler
from dcops.cluster import workload as wl
from dcops.evaluation.ladder import family_env
from dcops.evaluation.play import run_episode


def test_the_derivation_counts_bins_and_takes_log_token_quantiles(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                    "2023-11-16 18:00:00.0000000,10,1\n"
                    "2023-11-16 18:00:01.0000000,10,10\n"
                    "2023-11-16 18:00:02.5000000,10,100\n"
                    "2023-11-16 18:00:10.0000000,10,1000\n")
    data = wl.derive([path], bins=2, quantiles=3)
    # Times 0, 0.1, 0.25, 1.0 of the span: three in the first half, one in the second; mean 2.
    assert data["intensity"] == [1.5, 0.5]
    assert data["requests"] == 4
    q = data["runtime_quantiles"]
    assert q[0] == 0.0 and q[-1] == 1.0 and 0.0 < q[1] < 1.0  # log tokens scaled between the 1st and 99th pct
    with pytest.raises(ValueError, match="no requests"):
        (tmp_path / "empty.csv").write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n")
        wl.derive([tmp_path / "empty.csv"])


def test_the_shipped_file_names_its_source_and_licence_and_is_well_formed():
    data = json.loads((wl._DATA / "azure_llm_2023.json").read_text())
    assert "CC BY 4.0" in data["licence"] and "AzurePublicDataset" in data["source"]
    assert (wl._DATA / "AZURE_LLM_2023_LICENSE.md").exists()
    assert len(data["intensity"]) == wl.BINS and np.mean(data["intensity"]) == pytest.approx(1.0, abs=1e-4)
    q = np.array(data["runtime_quantiles"])
    assert len(q) == wl.QUANTILES and q[0] == 0.0 and q[-1] == 1.0 and (np.diff(q) >= 0).all()


def test_the_runtime_position_interpolates_the_quantiles():
    w = wl.Workload("x", (1.0,), (0.0, 0.2, 1.0))
    assert w.runtime_position(0.0) == 0.0 and w.runtime_position(1.0) == 1.0
    assert w.runtime_position(0.25) == pytest.approx(0.1) and w.runtime_position(0.75) == pytest.approx(0.6)


def test_the_trace_shapes_arrivals_and_the_synthetic_one_does_not_follow_it():
    """(That the synthetic default is unchanged bit for bit is guarded by the ladder tests that replay the
    committed report's priority_threshold episodes, made before the trace workload existed.)"""
    trace = wl.workload("azure_llm_2023")
    factors = np.array([trace.rate_factor(w, 8) for w in range(8)])
    counts = {}
    for name in ("synthetic", "azure_llm_2023"):
        env = dcops.parallel_env(workload=name, team_kinds=("cooperative",) * 4)
        per_window = np.zeros(8)
        for seed in range(20):
            run_episode(RejectAllScheduler(), seed, env=env)
            for row in env.episode_truth():
                per_window[row["submitted_window"]] += 1
        counts[name] = per_window
    assert np.corrcoef(counts["azure_llm_2023"], factors)[0, 1] > 0.9
    assert abs(np.corrcoef(counts["synthetic"], factors)[0, 1]) < 0.9


def test_an_honest_twin_draws_the_same_jobs_under_the_trace():
    env = family_env("classic", workload="azure_llm_2023")
    run_episode(RejectAllScheduler(), 5, env=env)
    gaming = [agent for agent, team in env.teams.items() if team.kind != "cooperative"]
    key = run_episode(RejectAllScheduler(), 5, env=env)["arrivals_key"]
    twin = family_env("classic", frozenset(gaming[:1]), workload="azure_llm_2023")
    assert run_episode(RejectAllScheduler(), 5, env=twin)["arrivals_key"] == key


def test_an_unknown_workload_is_refused_naming_the_field():
    with pytest.raises(ValueError, match="workload: unknown 'nope'"):
        dcops.parallel_env(workload="nope")
