"""Trainer callbacks the LLM scheduler's trainers share (GRPO, :mod:`.grpo`; SFT, :mod:`.sft`).

transformers is imported inside the functions, so importing this module stays light.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


def adapter_saver(out: Path) -> Any:
    """A callback that rewrites ``out/adapter/`` (and its ``STEP`` file) at each checkpoint: the latest adapter,
    usable while training goes on."""
    from transformers import TrainerCallback

    class AdapterSaver(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            if model is not None:
                model.save_pretrained(str(out / "adapter"))
                (out / "adapter" / "STEP").write_text(f"{state.global_step}\n")

    return AdapterSaver()


def wall_clock_budget(max_minutes: float | None) -> Any:
    """A callback that stops training after the step that passes ``max_minutes`` of wall time since it was made
    (the checkpoint and logs are still written); None or 0: no budget."""
    from transformers import TrainerCallback

    class Budget(TrainerCallback):
        def __init__(self) -> None:
            self.start = time.monotonic()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if max_minutes and time.monotonic() - self.start > 60.0 * max_minutes:
                control.should_training_stop = True
                control.should_save = True

    return Budget()
