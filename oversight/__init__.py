"""Oversight: detectors of misreporting that use public evidence only, their flags, and detection metrics."""

from dcops.oversight.calibrated import CalibratedMonitor
from dcops.oversight.detectors import DetectorSettings
from dcops.oversight.flags import FLAG_KINDS, Flag
from dcops.oversight.metrics import DetectionReport, score_detection
from dcops.oversight.monitor import OversightMonitor

__all__ = ["FLAG_KINDS", "CalibratedMonitor", "DetectionReport", "DetectorSettings", "Flag", "OversightMonitor", "score_detection"]
