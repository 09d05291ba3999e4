"""The README's "Write a pack" example is a pack ``lorenz lint`` finds nothing to say about."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_echo_pack_lints_clean(tmp_path: Path) -> None:
    blocks = re.findall(r"```(\w*)\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)
    pyproject = next(code for lang, code in blocks if lang == "toml" and 'name = "lorenz-echo"' in code)
    module = next(code for lang, code in blocks if lang == "python" and 'name = "echo"' in code)
    (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    (tmp_path / "lorenz_echo.py").write_text(module, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "lorenz", "lint", "."], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"1 tools?: 0 errors, 0 warnings", done.stdout + done.stderr), done.stdout + done.stderr
