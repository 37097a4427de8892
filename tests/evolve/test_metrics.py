"""The benchmark's other metrics on real tiny kernels in the sandbox: a C kernel (built by the
spec's build command, its parameters declared after ``//``) counted by callgrind, and a shell
kernel whose benchmark command prints a throughput (higher is better)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lessonloop import paths
from lessonloop.errors import UsageError
from lessonloop.evolve import campaign, harness, params, spec
from lessonloop.store import open_store

from ..conftest import copy_home, isolated_home

C_KERNEL = """\
#include <stdio.h>
#include <stdlib.h>

#define WORK 6 // lessonloop: param WORK int 1..6
static const int SLOPPY = 0; // lessonloop: param SLOPPY bool

/* The sum of the squares below n, computed WORK times over (1 is enough); SLOPPY skips
   every other term: fewer instructions, and wrong. */
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    volatile long long total = 0;
    for (int w = 0; w < WORK; w++) {
        total = 0;
        for (long i = 0; i < n; i += SLOPPY ? 2 : 1) total += (long long)i * i;
    }
    printf("%lld\\n", (long long)total);
    return 0;
}
"""
C_SPEC = """\
name: squares-c
source: kernel.c
build: cc -O1 -o kernel kernel.c
correctness:
  command: test "$(./kernel 1000)" = 332833500
benchmark:
  command: ./kernel 200000
  metric: instructions
  min_speedup: 1.2
limits: {time: 60}
budget: {generations: 4}
"""
SHELL_KERNEL = """\
# lessonloop: param BATCH int 1..8
BATCH=2
"""
BENCH = """\
#!/bin/sh
. ./kernel.sh
echo "batch $BATCH done; rate: $((BATCH * 1000)) items/s"
"""
SHELL_SPEC = """\
name: batches
source: kernel.sh
correctness:
  command: . ./kernel.sh && [ "$BATCH" -le 5 ]
benchmark:
  command: ./bench.sh
  files: [bench.sh]
  metric: printed
  pattern: 'rate: (\\d+)'
  direction: higher
  pairs: 3
  warmups: 0
  repeat: 1
limits: {time: 30}
budget: {generations: 8}
"""


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "kernel"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def _run(folder: Path, run_id: str, generations: int, seed: int = 0) -> dict:
    loaded = spec.read(folder / "spec.yaml")
    paths.ensure_home()
    with open_store() as store:
        return campaign.run(loaded, store, run_id, paths.run_dir(run_id), seed, generations)


@pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("valgrind") is None, reason="needs cc and valgrind"
)
def test_a_c_kernel_counted_by_callgrind(home, tmp_path):
    folder = _folder(tmp_path, {"kernel.c": C_KERNEL, "spec.yaml": C_SPEC})
    loaded = spec.read(folder / "spec.yaml")
    # the same source counted against itself: the counts agree to far better than 1.2x
    same = harness.time_pairs(loaded, loaded.source, loaded.source, 10)
    assert len(same) == harness.INSTRUCTION_PAIRS
    assert all(a > 100_000 and abs(a / b - 1) < 0.01 for a, b in same)
    # 3 generations: a champion (WORK 3), a sloppy candidate and one no faster than the champion
    summary = _run(folder, "c-kernel", 3)
    assert summary["metric"] == {"name": "instructions", "direction": "lower"}
    sloppy = [c for c in summary["candidates"] if c["params"]["SLOPPY"]]
    assert sloppy and all(c["status"] == "incorrect" for c in sloppy)
    champion = summary["champion"]
    assert not champion["params"]["SLOPPY"] and champion["params"]["WORK"] < 6
    assert champion["confirmed"] is True
    # a count is decided by its worst pair: the bound is that pair's ratio, no t statistic
    assert champion["confirmation"]["rule"] == "every pair"
    assert champion["speedup_lower_bound"] > 1.5
    source = Path(summary["artifacts"]["champion_source"])
    assert source.suffix == ".c"
    from lessonloop.app.run_kinds import evolve_details  # what status and export show

    with open_store(readonly=True) as store:
        assert evolve_details(store, "c-kernel")["artifacts"]["champion_source"] == str(source)
    assert f"#define WORK {champion['params']['WORK']} //" in source.read_text()
    assert "static const int SLOPPY = 0;" in source.read_text()


def _printed(tmp_path: Path) -> dict:
    folder = _folder(
        tmp_path, {"kernel.sh": SHELL_KERNEL, "bench.sh": BENCH, "spec.yaml": SHELL_SPEC}
    )
    (folder / "bench.sh").chmod(0o755)  # run as ./bench.sh, as here
    return _run(folder, "printed", 8)


@pytest.fixture(scope="module")
def printed_once(tmp_path_factory) -> tuple[Path, dict]:
    """The shell kernel's 8-generation run, made once for the tests that only read it: its home
    (a test that writes copies it) and its summary."""
    root = tmp_path_factory.mktemp("printed")
    with pytest.MonkeyPatch.context() as patch:
        made = isolated_home(patch, root)
        return made, _printed(root)


def test_a_printed_throughput_where_higher_is_better(printed_once):
    summary = printed_once[1]
    assert summary["metric"] == {"name": "printed", "direction": "higher"}
    by_batch = {c["params"]["BATCH"]: c for c in summary["candidates"]}
    # a batch above 5 prints a higher rate but fails the check: never champion
    assert all(c["status"] == "incorrect" for b, c in by_batch.items() if b > 5)
    champion = summary["champion"]
    assert 2 < champion["params"]["BATCH"] <= 5
    # the gain is candidate / baseline rate: exact here (the numbers do not vary)
    assert champion["speedup_vs_baseline"] == pytest.approx(champion["params"]["BATCH"] / 2)
    assert champion["confirmed"] is True
    lower = [c for b, c in by_batch.items() if b < 2]
    assert all(c["status"] == "not faster" for c in lower)


def test_status_and_the_report_read_a_higher_is_better_gain_as_the_run_did(home, cli, printed_once):
    made, summary = printed_once
    copy_home(made, home)
    champion = summary["champion"]
    status = cli("status", "printed", "--json").json()
    assert status["run"]["best_score"] == pytest.approx(champion["speedup_vs_baseline"])
    confirmation = status["evolve"]["champion"]["confirmation"]
    assert confirmation["faster"] is True and confirmation["direction"] == "higher"
    assert confirmation["speedup"] == pytest.approx(champion["speedup_vs_baseline"])
    won = [g for g in status["generations"] if g["gate_decision"] == "champion"]
    assert won and all(g["wins"] > 0 and g["losses"] == 0 for g in won)
    page = cli("report", "printed", "--json")
    assert page.code == 0, page.err
    html = Path(page.json()["path"]).read_text()
    assert "min 2000, median 2000" in html and " ms," not in html  # a rate is not a time


def test_the_cli_names_the_metric_not_a_speed_up(cli, tmp_path):
    folder = _folder(
        tmp_path, {"kernel.sh": SHELL_KERNEL, "bench.sh": BENCH, "spec.yaml": SHELL_SPEC}
    )
    (folder / "bench.sh").chmod(0o755)
    result = cli("evolve", folder / "spec.yaml", "--generations", "2", "--seed", "3")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    timed = [line for line in lines if line.startswith("gen ") and " vs gen 0 " in line]
    assert timed and all("gain in the printed number (higher is better)" in x for x in timed)
    assert "speed-up" not in result.out


def test_a_printed_metric_without_a_number_is_a_crashed_candidate(home, tmp_path):
    folder = _folder(
        tmp_path,
        {
            "kernel.sh": SHELL_KERNEL,
            "bench.sh": BENCH.replace("rate:", "speed:"),
            "spec.yaml": SHELL_SPEC,
        },
    )
    (folder / "bench.sh").chmod(0o755)
    loaded = spec.read(folder / "spec.yaml")
    with pytest.raises(harness.SandboxFailed, match="no match for 'rate:"):
        harness.time_pairs(loaded, loaded.source, loaded.source, 3)


def test_instructions_without_valgrind_are_refused_in_one_line(home, tmp_path, monkeypatch):
    folder = _folder(tmp_path, {"kernel.c": C_KERNEL, "spec.yaml": C_SPEC})
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UsageError, match="metric 'instructions' needs valgrind") as refused:
        spec.read(folder / "spec.yaml")
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("benchmark", "problem"),
    [
        ({"inputs": "r.py:f", "metric": "printed"}, "needs a 'command'"),
        ({"command": "x", "direction": "higher"}, "its direction is 'lower'"),
        ({"inputs": "r.py:f", "command": "x"}, "exactly one"),
        ({"command": "x", "metric": "printed", "pattern": "("}, "not a regular expression"),
        ({"inputs": "r.py:f", "build": "cc k.c"}, "'build' runs before a 'command'"),
    ],
)
def test_inconsistent_benchmarks_are_refused(benchmark, problem):
    build = benchmark.pop("build", None)
    data = {
        "name": "n",
        "source": "k.py",
        "entry": "f",
        "correctness": {"command": "true"}
        if build is None
        else {"reference": "r.py:f", "inputs": "r.py:g"},
        "benchmark": benchmark,
        **({"build": build} if build else {}),
    }
    with pytest.raises(UsageError, match=problem):
        spec.parse(data, "spec.yaml")


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_a_python_entry_point_counted_without_the_interpreters_start(home, kernel_dir):
    text = (kernel_dir / "spec.yaml").read_text()
    (kernel_dir / "spec.yaml").write_text(
        text.replace("  args: {n: 3000}\n", "  args: {n: 3000}\n  metric: instructions\n")
        # six interpreters under callgrind: slow on a loaded machine
        .replace("limits: {time: 30}", "limits: {time: 180}")
    )
    loaded = spec.read(kernel_dir / "spec.yaml")
    quarter = loaded.source.replace("WORK = 4", "WORK = 1")
    counted = harness.time_pairs(loaded, loaded.source, quarter, 10)
    # the interpreter's start (tens of millions of instructions) is subtracted: WORK=1 does
    # about a quarter of the counted work
    assert len(counted) == 2 and all(2.5 < a / b < 5 for a, b in counted)


SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def test_lessons_are_admitted_redacted_deduplicated_and_seed_the_next_run(home, tmp_path):
    from lessonloop.knowledge.entries import active

    folder = _folder(
        tmp_path,
        {
            "kernel.sh": SHELL_KERNEL,
            "bench.sh": BENCH,
            # a failing check that prints a secret: the dead end must not keep it
            "spec.yaml": SHELL_SPEC.replace(
                '[ "$BATCH" -le 5 ]',
                f'{{ [ "$BATCH" -le 5 ] || {{ echo "bad with {SECRET}"; exit 1; }}; }}',
            ),
        },
    )
    (folder / "bench.sh").chmod(0o755)
    first = _run(folder, "lessons-1", 8)
    assert {o["action"] for o in first["lessons"]} == {"added"}
    with open_store(readonly=True) as store:
        entries = active(store, "evolve:batches")
    by_kind = {kind: [e for e in entries if e.kind == kind] for kind in ("bullet", "dead_end")}
    (best,) = by_kind["bullet"]
    champion = first["champion"]["params"]["BATCH"]
    assert best.summary.startswith(f"BATCH={champion}: ") and "start from it" in best.summary
    assert "over the baseline" in best.why and "confirmed" in best.why
    assert best.content == f'params: {{"BATCH": {champion}}}'
    # BATCH 6..8 fail the check: one region, not one lesson per candidate
    region = [e for e in by_kind["dead_end"] if "region" in e.tags]
    assert len(region) == 1 and "BATCH > 5" in region[0].summary
    texts = " ".join(e.summary + e.content + e.why for e in entries)
    assert SECRET not in texts and "[REDACTED" in texts
    # the same run again: every lesson is reinforced, none added; it starts from the champion
    second = _run(folder, "lessons-2", 2, seed=7)
    assert second["candidates"][1]["params"] == {"BATCH": champion}
    assert {o["action"] for o in second["lessons"]} <= {"reinforced"}
    with open_store(readonly=True) as store:
        again = active(store, "evolve:batches")
    assert len(again) == len(entries)
    assert next(e for e in again if e.kind == "bullet").seen == 2


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs cc")
def test_the_c_example_builds_and_its_baseline_is_correct():
    from ..conftest import ROOT

    loaded = spec.read(ROOT / "examples" / "evolve-c" / "spec.yaml")
    assert [p.name for p in loaded.params] == ["STOP_AT_SQRT", "ODD_ONLY", "SLOPPY"]
    assert harness.check(loaded, loaded.source).ok
    sloppy = {"STOP_AT_SQRT": False, "ODD_ONLY": False, "SLOPPY": True}
    wrong = params.substitute(loaded.source, loaded.params, sloppy, python=False)
    assert "#define SLOPPY 1 //" in wrong and not harness.check(loaded, wrong).ok


def test_a_command_timed_by_wall_clock(home, tmp_path):
    folder = _folder(
        tmp_path,
        {
            "kernel.sh": "DELAY=0.3  # lessonloop: param DELAY choice 0.3,0.05\n",
            "spec.yaml": (
                "name: naps\nsource: kernel.sh\ncorrectness: {command: '. ./kernel.sh'}\n"
                "benchmark: {command: '. ./kernel.sh && sleep $DELAY', pairs: 3, repeat: 1, "
                "warmups: 1}\n"
            ),
        },
    )
    loaded = spec.read(folder / "spec.yaml")
    assert loaded.spec.benchmark.metric == "wall"
    short = params.substitute(loaded.source, loaded.params, {"DELAY": 0.05}, python=False)
    timed = harness.time_pairs(loaded, loaded.source, short, 3)
    assert len(timed) == 3 and all(a >= 0.3 > 0.2 > b >= 0.05 for a, b in timed)
