"""The summary `python3 .ci/dev.py test` ends with: per part counts and skip
reasons read from a real pytest run's JUnit XML, and the closing total line CI
reads."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _dev():
    spec = importlib.util.spec_from_file_location("dev", ROOT / ".ci" / "dev.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["dev"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_parts_and_reasons_from_a_pytest_run(tmp_path: Path):
    tests = tmp_path / "tests"
    for folder in ("neovim", "editors"):
        (tests / folder).mkdir(parents=True)
    (tests / "test_core.py").write_text("def test_ok():\n    pass\n\ndef test_broken():\n    assert 1 == 2\n")
    (tests / "neovim" / "test_plugin.py").write_text("def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    (tests / "editors" / "test_eglot.py").write_text(
        "import pytest\n\n@pytest.mark.skip(reason='needs Emacs with eglot')\ndef test_c():\n    pass\n")
    junit = tmp_path / "out.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
                    "--rootdir", tmp_path, tests], cwd=tmp_path, capture_output=True, timeout=120)
    python, neovim, emacs = _dev()._pytest_parts(junit)
    assert python.line().split(None, 1)[1] == "1 passed, 1 failed"
    assert neovim.line().split(None, 1)[1] == "2 passed, 0 failed"
    assert emacs.line().split(None, 1)[1] == "skipped: needs Emacs with eglot"
