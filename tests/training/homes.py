"""A home holding finished offline runs of a scenario (real ``lessonloop run`` processes),
made once per test process and copied into each test's home."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import subprocess_env

_MADE: dict[tuple[str, int, int], Path] = {}


def with_runs(home: Path, scenario: str = "grid_ctf", runs: int = 3, generations: int = 3) -> Path:
    """Copy a home with ``runs`` finished runs (``run SCENARIO -n GENERATIONS --seed i``)."""
    key = (scenario, runs, generations)
    if key not in _MADE:
        folder = Path(tempfile.mkdtemp(prefix="lessonloop-training-"))
        atexit.register(shutil.rmtree, folder, True)
        root = folder / "home"
        for seed in range(1, runs + 1):
            subprocess.run(
                [sys.executable, "-m", "lessonloop", "run", scenario, "-n", str(generations),
                 "--seed", str(seed)],
                env=subprocess_env(root),
                check=True,
                capture_output=True,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        _MADE[key] = root
    shutil.copytree(_MADE[key], home, dirs_exist_ok=True)
    return home
