"""What the Emacs tests share: whether this machine has Emacs with eglot."""

from __future__ import annotations

import functools
import shutil
import subprocess

import pytest

EMACS = shutil.which("emacs")


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
