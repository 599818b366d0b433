"""The trainer callbacks the GRPO and SFT trainers share: the wall-clock budget and the adapter saver."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

pytest.importorskip("transformers")

from dcops.training.scheduler.callbacks import adapter_saver, wall_clock_budget  # noqa: E402


def _control():
    return SimpleNamespace(should_training_stop=False, should_save=False)


def test_the_budget_stops_after_the_step_that_passes_it_and_saves():
    spent = wall_clock_budget(1e-6)  # 60 µs
    time.sleep(0.01)
    control = _control()
    spent.on_step_end(None, None, control)
    assert control.should_training_stop and control.should_save
    for unlimited in (wall_clock_budget(None), wall_clock_budget(0.0), wall_clock_budget(60.0)):
        control = _control()
        unlimited.on_step_end(None, None, control)
        assert not control.should_training_stop and not control.should_save


def test_the_adapter_saver_writes_the_adapter_and_its_step(tmp_path):
    saved = []

    class Model:
        def save_pretrained(self, folder):
            saved.append(folder)
            (tmp_path / "adapter").mkdir(exist_ok=True)

    saver = adapter_saver(tmp_path)
    saver.on_save(None, SimpleNamespace(global_step=7), None, model=Model())
    assert saved == [str(tmp_path / "adapter")]
    assert (tmp_path / "adapter" / "STEP").read_text() == "7\n"
    saver.on_save(None, SimpleNamespace(global_step=8), None, model=None)  # no model: nothing written
    assert saved == [str(tmp_path / "adapter")] and (tmp_path / "adapter" / "STEP").read_text() == "7\n"
