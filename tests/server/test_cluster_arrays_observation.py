"""``cluster/operations`` served with ``observation='arrays'``: the Gymnasium arrays alone, for a learner that acts
by slot codes. The game is the same (same rewards and scores for the same codes), the reply carries no view and
is much smaller, the baseline's suggestions (which read the view) are refused naming the option, and the end of
episode scorecard still plays the baseline on the same episode."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dcops.models import ClusterObservation

TASK = "cluster/operations"


def _play(client, observation: str | None, seed: int = 5, n_windows: int = 8) -> tuple[list[dict], int, dict]:
    options = {"n_windows": n_windows, "cooling": "rule"}
    if observation is not None:
        options["observation"] = observation
    reply = client.post("/reset", json={"task": TASK, "seed": seed, "options": options}).json()
    headers = {"X-Session-Id": reply["session_id"]}
    replies, size = [reply], 0
    rng = np.random.default_rng(seed)
    while not replies[-1]["done"]:
        n_slots = len(replies[-1]["observation"]["arrays"]["request_mask"])
        codes = rng.integers(0, 3, size=n_slots).tolist()
        response = client.post("/step", json={"action": {"codes": codes}}, headers=headers)
        assert response.status_code == 200, response.text
        size += len(response.content)
        replies.append(response.json())
    return replies, size, headers


def test_the_same_codes_give_the_same_game_with_a_fraction_of_the_reply(client):
    full, full_bytes, _ = _play(client, None)
    arrays, arrays_bytes, _ = _play(client, "arrays")
    assert all("view" not in r["observation"] for r in arrays) and all("view" in r["observation"] for r in full)
    for a, f in zip(arrays, full, strict=True):
        assert a["observation"]["arrays"] == f["observation"]["arrays"]
        assert (a["observation"]["window"], a["observation"]["n_windows"]) == (
            f["observation"]["window"], f["observation"]["n_windows"])
        assert a["reward"] == f["reward"] and a["done"] == f["done"]
    assert arrays[-1]["metadata"]["info"]["episode"]["score"] == full[-1]["metadata"]["info"]["episode"]["score"]
    assert arrays_bytes < full_bytes / 2  # an 8-window episode: 76 kB of replies against 212 kB
    for reply in (arrays[0], arrays[-1]):  # the published observation schema (/schema) describes them
        assert ClusterObservation.model_validate(reply["observation"]).view is None


def test_suggestions_are_refused_naming_the_option_and_the_episode_goes_on(client):
    reply = client.post("/reset", json={"task": TASK, "seed": 1, "options": {"n_windows": 2, "observation": "arrays"}}
                        ).json()
    headers = {"X-Session-Id": reply["session_id"]}
    refused = client.get("/suggest", headers=headers)
    assert refused.status_code == 422 and refused.json()["field"] == "observation"
    n_slots = len(reply["observation"]["arrays"]["request_mask"])
    assert client.post("/step", json={"action": {"codes": [0] * n_slots}}, headers=headers).status_code == 200


def test_the_scorecard_plays_the_baseline_with_its_view(client):
    *_, arrays = _play(client, "arrays", seed=9, n_windows=2)
    *_, full = _play(client, None, seed=9, n_windows=2)
    card_arrays = client.get("/scorecard", headers=arrays).json()
    card_full = client.get("/scorecard", headers=full).json()
    assert card_arrays["baseline_score"] == card_full["baseline_score"]
    assert card_arrays["score"] == card_full["score"] and card_arrays["fraction_of_bound"] > 0


@pytest.mark.parametrize("value", ["view", "", 1, None])
def test_an_unknown_observation_form_is_refused_naming_the_field(client, value):
    body = {"task": TASK, "options": {"observation": value}}
    response = client.post("/reset", json=body)
    if value is None:  # null means the default
        assert response.status_code == 200 and "view" in response.json()["observation"]
        return
    assert response.status_code == 422
    assert json.loads(response.text)["field"] == "options.observation"
