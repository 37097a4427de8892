"""Redaction throughput on transcript-like text (target: at least 20 MB/s).

Builds about 20 MB of Claude-Code-JSONL-like lines (prose, code, tool calls and their outputs:
test runs, tracebacks, git logs, lockfiles, ids, digests, UUIDs everywhere) with a few planted
fake secrets, then times ``redact`` over it line by line and as whole 1 MB chunks, on both of
the prefilter's paths: with the accelerator (ahocorasick-rs, installed with lessonloop and used
by every process but the hooks) and on the standard library alone (the hooks' path). Each is
run three times; the median wall-clock rate is reported against the target (with the median
CPU-time rate beside it: on a shared machine the two differ). It also checks that every planted
secret is gone, that nothing else changed, and that every mode and path gives the same output.

Usage: PYTHONPATH=src python bench/redaction.py [MEGABYTES]
"""

from __future__ import annotations

import importlib
import json
import random
import statistics
import string
import sys
import time
import uuid

from common import machine_speed

from lessonloop.safety import redact

_redact_module = importlib.import_module("lessonloop.safety.redact.prefilter")

TARGET_MB_S = 20.0
CHUNK_BYTES = 1 << 20

WORDS = (
    "the a of to and in that is for it with as was on be by this are from at or an but not "
    "which have has had were can will would should could one all there their so if when "
    "about into than then them these some what only other more also use used using test "
    "tests file files function class method module value values result results error "
    "errors run running build install package version config configuration server client "
    "request response handler loop lesson lessons strategy score scores match matches step "
    "cache line lines output input string list dict key keys token tokens budget retry "
    "model provider prompt transcript session write read path directory change changes "
    "fix fixed bug issue check checks pass passed fail failed now next first last new old "
    "because however instead still just again data schema field fields type types "
    "look looks like make makes made see seen show shows need needs want get gets got "
    "work works worked time first second last next each every both few many most much "
    "where why how who after before while until since during through over under about "
    "into onto upon within without between against along around across behind beyond "
    "good better best small large long short high low right left same different own "
    "plan plans idea ideas reason reasons question answer example examples case cases "
    "number numbers count counts point points part parts place way ways end start state "
    "call calls called return returns returned pass passes passing add adds added remove "
    "user users team people system systems process program programs memory disk network "
    "update updates updated current previous default option options setting settings "
    "simple simpler clear clearly likely probably usually often sometimes always never "
    "think thought know known expect expected seems seemed means meant keep kept"
).split()
IDENTS = (
    "handler load_config parse_args run_match score_strategy LessonStore TranscriptWriter "
    "retry_after build_prompt tokens_used max_tokens api_client session_id render_table "
    "compute_delta apply_patch read_lines ProviderError RateLimited admission_gate "
    "sanitize_text cap_length evaluate_pool worker_count seed_everything"
).split()
B62 = string.ascii_letters + string.digits
B64URL = B62 + "-_"
HEX = "0123456789abcdef"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def prose(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    out, i = [], 0
    while i < len(words):
        k = rng.randint(6, 18)
        sentence = " ".join(words[i : i + k])
        out.append(sentence[:1].upper() + sentence[1:] + rng.choice(".....?!"))
        i += k
    return " ".join(out)


def code(rng: random.Random) -> str:
    a, b, c = (rng.choice(IDENTS) for _ in range(3))
    return rng.choice(
        [
            f"def {a}(path: str, token: str | None = None) -> dict:\n    data = json.loads(open(path).read())\n"
            f"    if not token:\n        token = os.environ.get(\"API_TOKEN\")\n    return {{'status': 200, '{b}': [x.id for x in data]}}\n",
            f"class {a.title().replace('_', '')}:\n    def __init__(self, client, password: str) -> None:\n"
            f"        self.client = client\n        self.password = password\n        self.{b} = {{}}\n",
            f"for i, item in enumerate(items):\n    if item.score > best:\n        best, {c} = item.score, i\n"
            f'    logger.debug("step %d score %.3f", i, item.score)\n',
            f"const {b} = async (req, res) => {{\n  const token = req.headers.authorization;\n"
            f"  const result = await db.query('SELECT * FROM users WHERE id = $1', [req.params.id]);\n"
            f"  res.json({{ ok: true, count: result.rows.length }});\n}};\n",
            f"import os\nimport json\nfrom pathlib import Path\n\nMAX_TOKENS = 4096\nTIMEOUT_S = 30\n"
            f'{a.upper()}_PATH = Path(__file__).parent / "data" / "{b}.json"\n',
            "  - name: Run tests\n    run: pytest -q\n    env:\n      API_KEY: ${{ secrets.API_KEY }}\n"
            "      PYTHONPATH: src\n",
            f".{b.replace('_', '-')} {{\n  color: #{_r(rng, HEX, 6)};\n  margin: 0 auto;\n  max-width: 72rem;\n}}\n",
            f'def test_{a}(tmp_path):\n    path = tmp_path / "{b}.json"\n    path.write_text(json.dumps({{"n": 3}}))\n'
            f"    result = {a}(path)\n    assert result.n == 3\n    assert len(result.items) == 0\n",
            "SELECT u.id, u.email, count(o.id) AS orders\nFROM users u\nLEFT JOIN orders o ON o.user_id = u.id\n"
            "WHERE u.created_at > now() - interval '30 days'\nGROUP BY u.id\nORDER BY orders DESC\nLIMIT 50;\n",
            f"export function {b.title().replace('_', '')}({{ items, onSelect }}) {{\n  const [open, setOpen] = useState(false);\n"
            f'  return (\n    <ul className="list">\n      {{items.map((item) => (\n        <li key={{item.id}} onClick={{() => onSelect(item)}}>{{item.name}}</li>\n'
            f"      ))}}\n    </ul>\n  );\n}}\n",
            f"FROM python:3.11-slim\nWORKDIR /app\nCOPY pyproject.toml .\nRUN pip install --no-cache-dir .\n"
            f'COPY src/ src/\nCMD ["python", "-m", "{b}"]\n',
            f"def {a}(values: list[float], window: int = 5) -> list[float]:\n    out = []\n"
            f"    for i in range(len(values) - window + 1):\n        chunk = values[i:i + window]\n"
            f"        out.append(sum(chunk) / window)\n    return out\n",
        ]
    )


def tool_output(rng: random.Random) -> str:
    kind = rng.randrange(9)
    if kind == 8:  # a Read: a source file, numbered like `cat -n`
        body = "".join(code(rng) + "\n" for _ in range(rng.randint(3, 30)))
        return "".join(f"{i:6d}\t{line}" for i, line in enumerate(body.splitlines(True), 1))
    if kind == 0:
        return (
            "".join(
                f"tests/test_{rng.choice(IDENTS)}.py {'.' * rng.randint(3, 40)} [{p:3d}%]\n"
                for p in range(0, 101, rng.choice((10, 20, 25)))
            )
            + f"{rng.randint(50, 400)} passed in {rng.random() * 20:.2f}s\n"
        )
    if kind == 1:
        return "".join(
            f"commit {_r(rng, HEX, 40)}\nAuthor: Dev <dev@example.com>\nDate:   Mon Aug 4 "
            f"12:{rng.randint(10, 59)}:00 2025 +0200\n\n    {prose(rng, 8)}\n\n"
            for _ in range(rng.randint(1, 4))
        )
    if kind == 2:
        return (
            "Traceback (most recent call last):\n"
            f'  File "/home/dev/project/src/app/{rng.choice(IDENTS)}.py", line {rng.randint(1, 900)}, in {rng.choice(IDENTS)}\n'
            f"    result = {rng.choice(IDENTS)}(config, token=token)\n"
            f'  File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode\n'
            f'    raise JSONDecodeError("Expecting value", s, err.value) from None\n'
            f"json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n"
        )
    if kind == 3:
        return "".join(
            f"-rw-r--r--  1 dev dev {rng.randint(100, 99999):6d} Aug  4 12:00 {rng.choice(IDENTS)}.py\n"
            for _ in range(rng.randint(3, 12))
        )
    if kind == 4:
        name = rng.choice(IDENTS).replace("_", "-")
        return (
            f'    "node_modules/{name}": {{\n      "version": "{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",\n'
            f'      "resolved": "https://registry.npmjs.org/{name}/-/{name}-1.2.3.tgz",\n'
            f'      "integrity": "sha512-{_r(rng, B62 + "+/", 86)}==",\n      "dev": true\n    }},\n'
        )
    if kind == 5:
        return (
            f"Step 3/9 : RUN pip install -r requirements.txt\n ---> Running in {_r(rng, HEX, 12)}\n"
            f"Successfully built {_r(rng, HEX, 12)}\nlatest: digest: sha256:{_r(rng, HEX, 64)} size: 1788\n"
            f"request {uuid.UUID(int=rng.getrandbits(128))} took {rng.randint(3, 900)}ms\n"
        )
    if kind == 6:
        return "".join(f"{i:6d}\t{line}" for i, line in enumerate(code(rng).splitlines(True), 1))
    return (
        f"2025-08-04T12:{rng.randint(10, 59)}:{rng.randint(10, 59)}.123Z INFO  [{rng.choice(IDENTS)}] "
        f"{prose(rng, 10)} request_id={uuid.UUID(int=rng.getrandbits(128))} elapsed_ms={rng.randint(1, 999)}\n"
    )


def planted_secrets(rng: random.Random) -> list[str]:
    """Fake secrets of several families, assembled at run time."""
    mixed = lambda n, al=B62: "Q7" + _r(rng, al, n - 3) + "x"  # noqa: E731
    return [
        "sk-" + "ant-api03-" + mixed(93, B64URL) + "AA",
        "gh" + "p_" + mixed(36),
        "AK" + "IA" + _r(rng, string.ascii_uppercase + string.digits, 16),
        "xox" + "b-" + _r(rng, string.digits, 12) + "-" + mixed(24),
        "SG" + "." + mixed(22, B64URL) + "." + mixed(43, B64URL),
        "key" + "-" + _r(rng, HEX, 32),
        "postgres://app:" + mixed(16) + "@db.internal:5432/app",
        mixed(40),  # planted as an assignment value: the entropy fallback
    ]


def plant(rng: random.Random, secret: str) -> str:
    return (
        rng.choice(
            [
                f"export TOKEN_VALUE={secret}",
                f"config.yaml: upstream: {secret}",
                f"found {secret} in logs",
            ]
        )
        if not secret.startswith("Q7")
        else rng.choice(
            [
                f"BUILD_SEED={secret}",
                f'"upstream": "{secret}"',
                f"session: {secret}",
            ]
        )
    )


def usage(rng: random.Random) -> dict:
    return {
        "input_tokens": rng.randint(1, 9),
        "cache_creation_input_tokens": rng.randint(0, 9000),
        "cache_read_input_tokens": rng.randint(0, 90000),
        "output_tokens": rng.randint(1, 900),
        "service_tier": "standard",
    }


def transcript_line(rng: random.Random, session: str, cwd: str) -> dict:
    base = {
        "parentUuid": str(uuid.UUID(int=rng.getrandbits(128))),
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session,
        "version": "1.0.83",
        "gitBranch": "main",
        "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
        "timestamp": f"2025-08-04T12:{rng.randint(10, 59)}:{rng.randint(10, 59)}.{rng.randint(100, 999)}Z",
    }
    kind = rng.random()
    if kind < 0.3:
        content = [{"type": "text", "text": prose(rng, rng.randint(20, 200))}]
        if rng.random() < 0.5:
            content.append({"type": "text", "text": "```python\n" + code(rng) + "```"})
        if rng.random() < 0.02:  # a screenshot: base64 image data survives
            content.append(
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": _r(rng, B62 + "+/", rng.randint(2000, 9000)) + "==",
                    },
                }
            )
        base.update(
            type="assistant",
            requestId="req_011C" + _r(rng, B62, 20),
            message={
                "id": "msg_01" + _r(rng, B62, 22),
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-20250514",
                "content": content,
                "stop_reason": None,
                "usage": usage(rng),
            },
        )
    elif kind < 0.6:
        tool = rng.choice(["Bash", "Read", "Edit", "Grep"])
        inp = {
            "Bash": {
                "command": rng.choice(
                    ["pytest -q tests", "git log -3", "ls -la src", "npm install", "docker build ."]
                ),
                "description": prose(rng, 6),
            },
            "Read": {"file_path": f"{cwd}/src/{rng.choice(IDENTS)}.py"},
            "Edit": {
                "file_path": f"{cwd}/src/{rng.choice(IDENTS)}.py",
                "old_string": code(rng),
                "new_string": code(rng),
            },
            "Grep": {"pattern": rng.choice(IDENTS), "path": cwd},
        }[tool]
        base.update(
            type="assistant",
            requestId="req_011C" + _r(rng, B62, 20),
            message={
                "id": "msg_01" + _r(rng, B62, 22),
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-20250514",
                "stop_reason": "tool_use",
                "usage": usage(rng),
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_01" + _r(rng, B62, 22),
                        "name": tool,
                        "input": inp,
                    }
                ],
            },
        )
    else:
        out = "".join(tool_output(rng) for _ in range(rng.randint(1, 6)))
        base.update(
            type="user",
            message={
                "role": "user",
                "content": [
                    {
                        "tool_use_id": "toolu_01" + _r(rng, B62, 22),
                        "type": "tool_result",
                        "content": out,
                        "is_error": False,
                    }
                ],
            },
        )
    return base


def build(megabytes: float, seed: int = 7) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    session, cwd = str(uuid.UUID(int=rng.getrandbits(128))), "/home/dev/projects/lessonloop"
    lines, size, secrets = [], 0, []
    target = int(megabytes * 1_000_000)
    every = max(1, int(target / 2000 / 40))  # about 40 planted secrets (lines ~2 kB)
    while size < target:
        obj = transcript_line(rng, session, cwd)
        if len(lines) % every == every - 1:
            secret = rng.choice(planted_secrets(rng))
            secrets.append(secret)
            obj["message"]["content"].append({"type": "text", "text": plant(rng, secret)})
        line = json.dumps(obj)
        lines.append(line)
        size += len(line) + 1
    return lines, secrets


def chunks(lines: list[str], limit: int) -> list[str]:
    out, cur, n = [], [], 0
    for line in lines:
        cur.append(line)
        n += len(line) + 1
        if n >= limit:
            out.append("\n".join(cur))
            cur, n = [], 0
    if cur:
        out.append("\n".join(cur))
    return out


def timed(fn) -> tuple[float, float, object]:
    """Wall and CPU seconds of ``fn()``, and its result."""
    w0, c0 = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - w0, time.process_time() - c0, result


def main() -> None:
    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    print(machine_speed())
    lines, secrets = build(megabytes)
    total_mb = sum(len(x) + 1 for x in lines) / 1e6
    blocks = chunks(lines, CHUNK_BYTES)
    sizes = sorted(len(x) for x in lines)
    print(
        f"corpus: {total_mb:.1f} MB, {len(lines):,} JSON lines (median {sizes[len(sizes) // 2]:,} "
        f"chars, mean {sum(sizes) // len(sizes):,}, max {sizes[-1]:,}), {len(blocks)} chunks of "
        f"~1 MB, {len(secrets)} planted secrets"
    )

    results = {}
    outputs = {}
    accelerator = _redact_module._load_accelerator
    for path, prefilter in (("accelerated", accelerator), ("standard library", None)):
        _redact_module._accelerator = prefilter
        for mode, fn in (
            ("line by line", lambda: [redact(x) for x in lines]),
            ("1 MB chunks", lambda: [redact(b) for b in blocks]),
        ):
            times, cpu = [], []
            for _ in range(3):
                _redact_module._forget_lines()  # no help from earlier runs
                elapsed, used, out = timed(fn)
                times.append(elapsed)
                cpu.append(used)
            if path == "accelerated" and _redact_module._accelerator is None:
                print("(ahocorasick-rs is not installed: both paths are the standard one)")
            outputs[path, mode] = "\n".join(out)
            rate = total_mb / statistics.median(times)
            results[path, mode] = rate
            print(
                f"{path:>16}, {mode:>12}: median {rate:6.1f} MB/s  (runs: "
                + ", ".join(f"{total_mb / t:.1f}" for t in times)
                + f"; CPU time: "
                f"{total_mb / statistics.median(cpu):.1f} MB/s)  target >= {TARGET_MB_S:.0f} MB/s: "
                + ("OK" if rate >= TARGET_MB_S else "MISSED")
            )
    _redact_module._accelerator = accelerator

    joined = outputs["accelerated", "line by line"]
    leaked = [x for x in secrets if any(x in out for out in outputs.values())]
    planted_lines = [i for i, line in enumerate(lines) if any(x in line for x in secrets)]
    unexpected = [
        b for a, b in zip(lines, joined.split("\n")) if a != b and not any(x in a for x in secrets)
    ]
    same = len(set(outputs.values())) == 1
    print(
        f"planted secrets removed: {len(secrets) - len(leaked)}/{len(secrets)}; other lines changed "
        f"(false positives): {len(unexpected)} of {len(lines) - len(planted_lines):,}; "
        f"output identical in every mode and path: {same}"
    )
    for b in unexpected[:3]:
        i = b.index("[REDACTED:")
        print("  e.g.", repr(b[max(0, i - 60) : i + 40]))
    ok = all(r >= TARGET_MB_S for r in results.values()) and not leaked and not unexpected and same
    print("OK" if ok else "MISSED")


if __name__ == "__main__":
    main()
    print(machine_speed("after"))
