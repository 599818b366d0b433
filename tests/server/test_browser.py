"""The web console in a real headless browser (Debian's ``chromium`` driven by Playwright): load the page, start
an episode, play one window by hand and one with the baseline, check that the view updated, save a screenshot.

``.ci/run`` installs chromium; the test skips (saying why) only where the browser is genuinely absent.
Set ``DCOPS_SCREENSHOT_DIR`` to keep the screenshots.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import dcops

pytest.importorskip("playwright", reason="install the server-test extra: pip install -e '.[server-test]'")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed (apt-get install chromium)")


@pytest.fixture
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            yield context.new_page()
        finally:
            browser.close()


def _save(page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    page.screenshot(path=str(path), full_page=True)
    keep = os.environ.get("DCOPS_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / name)
    return path


def test_a_person_plays_a_cooling_window_in_the_console(live_server, page, tmp_path):
    page.goto(live_server.url + "/")  # redirects to /web/
    assert page.url.endswith("/web/")
    page.wait_for_selector("#task-select option[value='cooling/cascading_chiller_failure']", state="attached")
    page.select_option("#task-select", "cooling/cascading_chiller_failure")
    page.fill("#seed", "7")
    page.click("[data-testid=reset]")
    page.wait_for_selector("[data-testid=zone]")
    assert page.locator("[data-testid=zone]").count() == 4
    assert page.inner_text("[data-testid=step-counter]") == "0"
    before = page.inner_text("#zones")

    page.fill("#fan-0", "0.9")
    page.click("[data-testid=step]")  # one window by hand
    page.wait_for_function("document.querySelector('[data-testid=step-counter]').textContent === '1'")
    page.click("[data-testid=baseline]")  # and one by the baseline
    page.wait_for_function("document.querySelector('[data-testid=step-counter]').textContent === '2'")

    assert page.locator("#reward-chart rect.reward-bar").count() == 2
    assert page.inner_text("#zones") != before
    assert "PUE" in page.inner_text("[data-testid=view]")
    assert page.locator("#log li.error").count() == 0
    shot = _save(page, tmp_path, "console-cooling.png")
    assert shot.stat().st_size > 10_000


def test_the_console_shows_the_gpu_lanes_and_queue_of_a_placement_task(live_server, page, tmp_path):
    page.goto(live_server.url + "/web/")
    page.wait_for_selector("#task-select option[value='placement/deadline_crunch']", state="attached")
    page.select_option("#task-select", "placement/deadline_crunch")
    page.click("[data-testid=reset]")
    page.wait_for_selector("[data-testid=lanes]")
    page.click("[data-testid=baseline]")
    page.wait_for_function("document.querySelector('[data-testid=step-counter]').textContent === '1'")
    assert "EDF" in page.inner_text("[data-testid=view]")  # the baseline's rationale is in the history
    assert page.locator("[data-testid=lanes] .job").count() >= 1
    _save(page, tmp_path, "console-placement.png")


@pytest.mark.skipif("cluster/operations" not in dcops.tasks(), reason="the cluster task is not registered yet")
def test_the_console_decides_a_cluster_window_by_hand_and_by_baseline(live_server, page, tmp_path):
    page.goto(live_server.url + "/web/")
    page.wait_for_selector("#task-select option[value='cluster/operations']", state="attached")
    page.select_option("#task-select", "cluster/operations")
    page.click("[data-testid=reset]")
    page.wait_for_selector("[data-testid=requests]")
    assert page.locator("select.decision").count() >= 1  # one ACCEPT/REJECT/DEFER control per pending request
    page.locator("select.decision").first.select_option("REJECT")
    page.click("[data-testid=step]")
    page.wait_for_function("document.querySelector('[data-testid=step-counter]').textContent === '1'")
    page.click("[data-testid=baseline]")
    page.wait_for_function("document.querySelector('[data-testid=step-counter]').textContent === '2'")
    assert page.locator("#reward-chart rect.reward-bar").count() == 2
    assert page.locator("#log li.error").count() == 0
    _save(page, tmp_path, "console-cluster.png")


def test_a_cluster_episode_ends_with_a_scorecard_and_charts_and_the_carbon_of_its_own_window(live_server, page,
                                                                                             tmp_path):
    page.goto(live_server.url + "/web/")
    page.wait_for_selector("#task-select option[value='cluster/operations']", state="attached")
    page.select_option("#task-select", "cluster/operations")
    page.fill("#seed", "11")
    page.click("[data-testid=reset]")
    page.wait_for_selector("[data-testid=requests]")
    # Before any window is played there is no power reading (the plant's planning probe is not one).
    assert page.locator(".kpi").first.locator(".value").inner_text() == "–"
    page.click("[data-testid=baseline]")
    page.wait_for_function("document.querySelector('[data-testid=step-counter]').textContent === '1'")
    state = page.evaluate("S.obs.view")
    carbon = page.locator(".kpi", has_text="Carbon now").locator(".value").inner_text()
    assert carbon == f"{round(state['carbon_forecast_g_per_kwh'][state['window']])} g/kWh"  # window 1, not 0
    assert page.locator("[data-testid=chart-power] polyline.series").count() == 1
    page.click("[data-testid=autoplay]")
    page.wait_for_selector("[data-testid=scorecard]", timeout=60_000)
    card = page.inner_text("[data-testid=scorecard]")
    assert "score" in card.lower() and "team kinds" in card  # the truth, revealed once the episode is over
    page.wait_for_selector("[data-testid=scorecard] .kpi:has-text('Fraction of bound')", timeout=60_000)
    assert "baseline, same episode" in page.inner_text("[data-testid=scorecard]").lower()
    windows = page.evaluate("S.history.length")
    assert windows == page.evaluate("S.obs.view.n_windows")
    assert page.locator("[data-testid=chart-terms] polyline.series").count() == 4
    assert page.locator("#log li.error").count() == 0
    _save(page, tmp_path, "console-cluster-scorecard.png")


def test_a_cooling_episode_shows_its_chiller_timeline_and_true_inlets_when_over(live_server, page, tmp_path):
    page.goto(live_server.url + "/web/")
    page.wait_for_selector("#task-select option[value='cooling/single_zone_recovery']", state="attached")
    page.select_option("#task-select", "cooling/single_zone_recovery")  # 24 steps, one zone
    page.click("[data-testid=reset]")
    page.wait_for_selector("[data-testid=plant-timeline]")
    assert page.locator("polyline.true-inlet").count() == 0  # the truth stays hidden while the episode runs
    page.click("[data-testid=autoplay]")
    page.wait_for_selector("#done-chip:not(.hidden)", timeout=120_000)
    assert page.locator("polyline.true-inlet").count() == 1  # one per zone, after the episode
    assert page.evaluate("S.plantSeries.length") == 25
    _save(page, tmp_path, "console-cooling-over.png")


def test_the_operator_replays_a_stored_episode(tmp_path, server_starter, page):
    server = server_starter(tmp_path / "episodes.db", tmp_path / "server.log", env={"DCOPS_OPERATOR_TOKEN": "op"})
    try:
        from dcops.client import DcopsClient

        with DcopsClient(server.url) as client:
            result = client.reset(task="cluster/operations", seed=5, n_windows=3)
            while not result.done:
                result = client.step(client.suggest())
        page.goto(server.url + "/web/")
        page.fill("[data-testid=operator-token]", "wrong")
        page.click("[data-testid=list-episodes]")
        page.wait_for_selector("[data-testid=episodes] .error")
        assert "X-Operator-Token" in page.inner_text("[data-testid=episodes]")
        page.fill("[data-testid=operator-token]", "op")
        page.click("[data-testid=list-episodes]")
        page.wait_for_selector("[data-testid=episodes] button[data-uid]")
        page.locator("[data-testid=episodes] button[data-uid]").first.click()
        page.wait_for_selector("[data-testid=replay-bar]:not(.hidden)")
        assert page.inner_text("[data-testid=step-counter]") == "0"
        recorded = {d["request_id"]: d["decision"] for d in page.evaluate("S.replay.steps[1].action.decisions")}
        first = page.locator("select.decision").first
        assert first.input_value() == recorded[first.get_attribute("data-request")]  # what the player decided
        page.click("[data-testid=replay-play]")
        page.wait_for_selector("[data-testid=scorecard]", timeout=30_000)
        assert page.inner_text("[data-testid=step-counter]") == "3"
        assert page.evaluate("S.sessionId") is None  # a replay opens no session
        _save(page, tmp_path, "console-replay.png")
    finally:
        server.stop()


def test_the_console_replays_an_episode_played_on_the_arrays_alone(tmp_path, server_starter, page):
    """A learner's episode (reset option ``observation='arrays'``) has no structured view to draw: the replay says
    so at every step instead of failing, and still ends with the scorecard."""
    server = server_starter(tmp_path / "episodes.db", tmp_path / "server.log", env={"DCOPS_OPERATOR_TOKEN": "op"})
    try:
        from dcops.client import DcopsClient

        with DcopsClient(server.url) as client:
            result = client.reset(task="cluster/operations", seed=5, n_windows=2, observation="arrays")
            while not result.done:
                assert "view" not in result.observation
                result = client.step({"codes": [0] * len(result.observation["arrays"]["request_mask"])})
        page.goto(server.url + "/web/")
        page.fill("[data-testid=operator-token]", "op")
        page.click("[data-testid=list-episodes]")
        page.wait_for_selector("[data-testid=episodes] button[data-uid]")
        page.locator("[data-testid=episodes] button[data-uid]").first.click()
        page.wait_for_selector("[data-testid=replay-bar]:not(.hidden)")
        assert "observation='arrays'" in page.inner_text("[data-testid=view]")
        page.click("[data-testid=replay-play]")
        page.wait_for_selector("[data-testid=scorecard]", timeout=30_000)
        assert page.inner_text("[data-testid=step-counter]") == "2"
        assert "observation='arrays'" in page.inner_text("[data-testid=view]")
    finally:
        server.stop()


def test_the_api_docs_render_without_network(live_server, page):
    requests = []
    page.on("request", lambda r: requests.append((r.url, r.resource_type)))
    page.goto(live_server.url + "/docs")
    page.wait_for_selector(".opblock-summary-path[data-path='/reset']", timeout=30_000)
    assert all(url.startswith(live_server.url) for url, _ in requests)  # no CDN
    requests.clear()
    page.goto(live_server.url + "/redoc")
    page.wait_for_selector("text=/reset", timeout=30_000)
    # Everything ReDoc needs comes from this server; only its "powered by" logo points at its CDN (an image that
    # simply does not load offline).
    needed = [url for url, kind in requests if kind in ("document", "script", "stylesheet", "fetch", "xhr")]
    assert needed and all(url.startswith((live_server.url, "blob:" + live_server.url)) for url in needed)
