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
