"""What the Emacs tests share: whether this machine has Emacs with eglot, and
the buggy file they have the agent fix."""

from __future__ import annotations

import functools
import shutil
import subprocess

import pytest

EMACS = shutil.which("emacs")

# stats.py as the tests start it, and the scripted model's edit that fixes it.
BUGGY = "def mean(values):\n    return sum(values) / (len(values) - 1)\n"
FIXED_LINE = "return sum(values) / len(values)"
EDIT = {
    "name": "edit_file",
    "arguments": {"path": "stats.py",
                  "edits": [{"oldText": "return sum(values) / (len(values) - 1)", "newText": FIXED_LINE}]},
}


@functools.cache
def eglot_available() -> bool:
    if EMACS is None:
        return False
    probe = subprocess.run(
        [EMACS, "--batch", "--eval", "(progn (package-initialize) (require 'eglot))"],
        capture_output=True, timeout=60,
    )
    return probe.returncode == 0


needs_eglot = pytest.mark.skipif(
    not eglot_available(),
    reason="needs Emacs with eglot (Debian: apt-get install emacs-nox elpa-eglot)",
)
