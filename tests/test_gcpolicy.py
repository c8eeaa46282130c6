"""tablehost.gcpolicy: a bot-job process freezes what it loaded and raises its collector thresholds, once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RUNTIME = Path(__file__).resolve().parent.parent / "runtime"

PROBE = """
import gc
from tablehost.gcpolicy import BOT_JOB_GC_THRESHOLDS, tune_for_bot_jobs
assert gc.get_threshold() != BOT_JOB_GC_THRESHOLDS
assert tune_for_bot_jobs() is True
assert gc.get_threshold() == BOT_JOB_GC_THRESHOLDS
frozen = gc.get_freeze_count()
assert frozen > 1000, frozen
junk = [[i] for i in range(50_000)]
assert tune_for_bot_jobs() is False  # once per process: no second freeze
assert gc.get_freeze_count() == frozen
print("ok")
"""


def test_tune_for_bot_jobs_freezes_and_sets_thresholds_once() -> None:
    # In a child process: the collector settings of the test process stay as they are.
    env = dict(os.environ, PYTHONPATH=str(RUNTIME))
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
