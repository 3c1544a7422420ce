"""The start-up benchmark's breakdown drives the early phase directly (its
`receive` and `hand_over`, outside a server process): it must keep working as
that phase changes, or the figures docs/performance.md quotes can no longer be
measured."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_the_start_up_breakdown_runs_on_the_current_early_phase():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "server_start.py"), "--breakdown", "--runs", "1"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    parts = [line for line in out.stdout.splitlines() if "ms CPU" in line]
    assert any("the first session answered" in line for line in parts), out.stdout
    assert any(line.strip().startswith("total") for line in parts), out.stdout
