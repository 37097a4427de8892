"""Memory quality on real Claude Code sessions (issue 17): replay each session of a development
set through the hooks `lessonloop install claude-code` registers, exactly as Claude Code sends
them, memorize, and compare what was stored with the lessons a careful engineer would keep.

For each session, in a fresh project (its own LESSONLOOP_HOME, LESSONLOOP_USER_HOME and
`.claude/settings.json` written by `lessonloop install claude-code`, consent yes), in transcript
order: SessionStart; UserPromptSubmit for each prompt the user typed (not sidechain prompts, not
the "This session is being continued..." message, not tool results or interrupts); PreToolUse,
then PostToolUse for a call that succeeded or PostToolUseFailure (`error`, `is_interrupt`) for one
that failed (a call the user rejected gets neither: it never ran); Stop after each assistant turn;
PreCompact where the session was compacted; SessionEnd at the end. `transcript_path` is a copy
that grows as the replay goes, so every hook sees the file as it stood at that moment. Only the
events the installed settings register are sent, to the commands they name (matchers honoured):
an event `install` leaves out is an event lessonloop never sees.

Measures, per session and in total:
  stored    memories in the project and user stores after the session
  correct   stored memories matching an expected lesson (`must_contain`, see the set's README)
  wrong     stored memories matching a not-lesson rule of NOT_LESSONS below (judged by hand from
            `not_lessons`), outside what the memory names only to reject ("..., not `npm
            install`", "The user refused `...`"); unmatched memories are neither: check them in
            the listing
  recall    expected lessons matched by at least one memory; `user` the user-stated ones
  dups      memories added by replaying the session a second time (under a new session id)
  block     characters (and ~tokens) of the recall block the next session starts with

The model route (``--model SPEC``, as LESSONLOOP_AUTOMEM_MODEL takes it: ``openai:<model>``
with ``--base-url``, ``ollama:<model>``, ``anthropic:<model>``): the same replay with the model
routed. When the model may outlast the hook's 60 s, session-end and pre-compact start a detached
``lessonloop hook memorize``, as they would for a user; the replay waits for that process to end
before it goes on (so a pre-compact memorize reads the transcript as it stood, and the table
counts what the model route stored, not what was stored before it finished). Below the table:
how many memorize runs used the model's answer and how many fell back (and why, from
logs/hooks.log), what the guards did with the model's wordings and its own lessons (each
session's model.jsonl: proposed, kept, refused by why), how many of the stored memories the
model proposed (marked "model" in the listing) and how they were judged, and the calls and
tokens of the usage ledger.

Usage: python bench/memory_quality.py [--set DIR] [--only NAME] [--in-process] [--once] [-q]
                                      [--model SPEC [--base-url URL] [--timeout S]]
  --in-process  call the hook entry point (lessonloop.memory.hooks.main) in this process
                instead of a subprocess per event: the same code and payloads, ~50x faster,
                for iterating; report numbers from the default (subprocess) mode
  --once        skip the second replay (no duplicate count)
  --model       route memorize to this model (LESSONLOOP_AUTOMEM_MODEL); off by default
  --base-url    LESSONLOOP_BASE_URL for an openai route (a local OpenAI-compatible server)
  --timeout     LESSONLOOP_AUTOMEM_TIMEOUT, seconds per request (memorize's default otherwise)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SET = ROOT.parent / "shared" / "fixtures" / "real-sessions"

# Not-lessons of the set, as rules (judged by hand from each session's `not_lessons`): a stored
# memory whose summary + content (lower-cased) matches one of these regexes is wrong.
NOT_LESSONS = {
    "ccl-JSSoundRecorder-7acd37a8": [
        r"rackup|http\.server|npx serve",
        r"(?<!p)npm (install|run)(?!.*\bpnpm\b)",
        r"doesn't want to (proceed|take)|re-?read .*claude\.md",
        r"shell \w+ is not running|killshell",
        r"string to replace not found",
    ],
    "ccl-danieldemmel-me-next-f852ad25": [
        r"(upgrade|update) to transformers\.js v3|add the github link",
        r"re-?read the file|file (has )?changed",
    ],
    "ccl-claude-code-log-sample-326189cf": [
        r"pre-release software|\bwarn ty\b",
        r"new pyright version",
        r"ruff linting fixes|timestamp caching",
        r"inline `?import pytest",
    ],
    "ccl-coderabbit-review-helper-cb2e607c": [
        r"uv cache clean|rm -rf \.venv|__pycache__|\.pyc\b",
        r"uv tool install --reinstall",
        r"coderabbit_review_extractor\.py",
        r"no pr found",
        r"no such tool available",
        r"has not been read yet",
    ],
    "ccl-experiments-ideas-03eb5929": [
        r"(likes?|dislikes?|prefers?) the dev-docs",
        r"strengths|weak points|balanced",
    ],
    "spotter-tool_heavy": [
        r"refused join",
        r"#1343|#2388|bubbl",
    ],
    "spotter-subagent": [
        r"request interrupted|plan (was )?rejected",
    ],
    "spotter-8463c716-a2ea-4c14-9efa-87158ebd9f20": [
        r"sibling tool call errored",
        r"jsondecodeerror|expecting .* delimiter|unterminated string",
        r"charlist|deprecat",
        r"retry(ing)? (the )?read|rerunning it worked",
    ],
    "spotter-ae4a77f8-aedd-4bc1-888f-c94edc91af04": [
        r"false positive|dialyzerignore|dialyzer:ignore|--no-verify",
        r"\[warning\]|heatmapcalculator|gitlogreader|sessions-index",
        r"run `git (add|commit)[^`]*` first",
        r"total errors: 0",
        r"conn_case\.ex",
    ],
    # tests/fixtures/real-sessions-2 and -3: held out at first, development data since (their
    # `not_lessons`, as rules)
    "drmaciver-coverage-test-fix": [
        r"nothing to commit",
        r"the user (said|wants|asked)[^.]*(cannot exit|stage your changes)",
        r"multiply_numbers",
    ],
    "ccl-danieldemmel-me-next-b25638d7": [
        r"no matches found",
        r"(verified|checked|tested|works) in chrome",
        r"approved your plan|exitplanmode",
    ],
    "ccl-danieldemmel-me-next-5ed31c36": [
        r"no files found",
        r"(build|errors?) (is|are|were|was) (now )?fixed",
        r"reload (your |the )?ide",
    ],
    "ccl-claude-code-log-sample-71c9afe9": [
        r"(take|use|pick) the most recent working directory",
        r"revert(ing)? (the )?renderer",
        r"/clear|local-command",
    ],
    "ccl-claude-p-experiment-2b4ed4c0": [
        r"fix (the )?(permission|refus)",
        r"claude -p (listed|lists|printed|showed)",
        r"no files found|\*\*/\*claude\*",
    ],
    "ccl-claude-p-experiment-256ba646": [
        r"(was|were|is) (verified|tested|confirmed)|verified to work",
        r"tool search|web_search_2025|max_uses|allowed_domains|blocked_domains",
        r"deploy scripts|(user|you) prefers? haiku",
    ],
    "ccl-claude-p-experiment-29ccd257": [
        r"always use (the )?explore|prefers? explore",
        r"\b31 python files|10,600|50 test files|v1\.0\.0",
        r"/src/experiments/claude_p[^.]*(parser\.py|renderer\.py|cache\.py)",
    ],
    "pmsynapse-2e90adc4": [
        r"(was|were|been) (re)?(built|installed|verified)|rebuilt",
        r"57 tests|clippy clean",
        r"session_x+\.jsonl",
        r"cmd_claude_",
    ],
    # tests/fixtures/real-sessions-4: held out at first, development data since (its
    # `not_lessons`, as rules)
    "ccl-claude-code-log-sample-b45ad5d8": [
        r"else entry\.last_timestamp",
        r"docs/cache/",
        r"protocol or base class",
        r"(unresolved|open problem)[^.]*has not been read",
    ],
    "pmsynapse-117458c8": [
        r"snps ui`? (now )?(starts|runs|works)|starts cleanly|no longer (panics|fails)",
        r"requireliteralleadingdot`?:? ?`?false`? (is )?(needed|required)",
        r"document(s|ing)? only|spawn(ing)? (parallel )?sub-?agents|no recommendations|"
        r"thoughts/shared/research",
        r"app\.security\.capabilities",
        r"#1927|linux bug",
        r"request interrupted",
    ],
    "drmaciver-python-to-rust-port": [
        r"coverage is 100% on (all|every)|100% (region|branch)",
        r"(delete|remove)[sd]? (the )?(pyproject\.toml|uv\.lock)",
        r"the user (said|wants|asked)[^.]*(unstaged|untracked|cannot exit)",
        r"/tmp/tmp\w+",
        r"\[(pending|in_progress)\]|todowrite",
    ],
}


# -------------------------------------------------------------------------------------------
# the replay


def _settings_hooks(project: Path, env: dict) -> dict:
    """Install as a user would, and read back which command each Claude Code event runs."""
    done = subprocess.run(
        [*_lessonloop(env), "install", "claude-code"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise SystemExit(f"install claude-code failed: {done.stderr or done.stdout}")
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    return settings.get("hooks", {})


def _lessonloop(env: dict) -> list[str]:
    script = Path(sys.executable).parent / "lessonloop"
    return [str(script)] if script.exists() else [sys.executable, "-m", "lessonloop"]


def _matches(matcher: object, tool: str | None) -> bool:
    if tool is None or matcher in (None, "", "*"):
        return True
    try:
        return re.fullmatch(str(matcher), tool) is not None
    except re.error:
        return matcher == tool


class Replay:
    """Sends one session's hook events to the installed commands."""

    def __init__(self, project: Path, env: dict, hooks: dict, in_process: bool):
        self.project, self.env, self.hooks, self.in_process = project, env, hooks, in_process
        self.sent: dict[str, int] = {}
        self.outputs: list[dict] = []
        self.detached = 0  # memorizes that ran detached (a model that may outlast the hook)
        self.waited = 0.0  # seconds spent waiting for them

    def fire(self, event: str, payload: dict, tool: str | None = None) -> None:
        for group in self.hooks.get(event, []):
            if not _matches(group.get("matcher"), tool):
                continue
            for hook in group.get("hooks", []):
                command = hook.get("command", "")
                body = json.dumps({**payload, "hook_event_name": event}).encode()
                self.sent[event] = self.sent.get(event, 0) + 1
                out = self._run(command, body)
                if out.strip():
                    try:
                        self.outputs.append({"event": event, **json.loads(out)})
                    except ValueError:
                        self.outputs.append({"event": event, "text": out.decode(errors="replace")})
                if b"in the background" in out:
                    self.detached += 1
                    started = time.perf_counter()
                    _wait_detached(self.env["LESSONLOOP_HOME"])
                    self.waited += time.perf_counter() - started

    def _run(self, command: str, body: bytes) -> bytes:
        argv = shlex.split(command)
        if self.in_process and "hook" in argv:
            from lessonloop.memory import hooks

            event = argv[argv.index("hook") + 1 :]
            saved = sys.stdin, sys.stdout, dict(os.environ)
            sys.stdin = io.TextIOWrapper(io.BytesIO(body))
            sys.stdout = io.StringIO()
            os.environ.clear()
            os.environ.update(self.env)
            try:
                hooks.main(event)
                return sys.stdout.getvalue().encode()
            finally:
                out = sys.stdout
                sys.stdin, sys.stdout = saved[0], saved[1]
                os.environ.clear()
                os.environ.update(saved[2])
                del out
        if argv and argv[0] == "lessonloop":
            argv = _lessonloop(self.env) + argv[1:]
        done = subprocess.run(
            argv, input=body, capture_output=True, env=self.env, cwd=self.project, timeout=300
        )
        if done.returncode != 0 or done.stderr:
            print(
                f"  ! hook {command!r} exited {done.returncode}: "
                f"{done.stderr.decode(errors='replace')[:300]}",
                file=sys.stderr,
            )
        return done.stdout


def _detached_memorizes(home: str) -> list[int]:
    """The pids of the detached ``lessonloop hook memorize`` processes of this project home
    (their command line and LESSONLOOP_HOME, read from /proc; a process that ended, or a zombie,
    has neither)."""
    found = []
    marker = f"LESSONLOOP_HOME={home}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"hook" not in argv or b"memorize" not in argv:
                continue
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


APPEAR_SECONDS = 10.0  # how long a detached memorize may take to show in /proc


def _wait_detached(home: str, seconds: float = 3600.0) -> None:
    """Wait until the detached memorize the hook just started has ended. Right after its exec
    a process may show an empty command line or environment for a moment (the kernel has not
    set them yet), so it is looked for until it shows, for at most APPEAR_SECONDS (one that
    never shows ended before it could be seen), then waited for."""
    started = time.monotonic()
    while not _detached_memorizes(home):
        if time.monotonic() - started > APPEAR_SECONDS:
            return
        time.sleep(0.05)
    while _detached_memorizes(home):
        if time.monotonic() - started > seconds:
            raise SystemExit(f"a detached memorize of {home} still runs after {seconds:.0f} s")
        time.sleep(0.5)


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
    return "\n".join(parts)


_META = (
    "Caveat:",
    "[Request interrupted",
    "This session is being continued from a previous",
    "Stop hook feedback:",
    "SubagentStop hook feedback:",
    "<local-command",
    "<bash-",
    "<task-notification",
    "[Image",
)
_REJECTED = "The user doesn't want to proceed with this tool use"


def _typed_prompt(event: dict) -> str | None:
    """The prompt the user typed, as UserPromptSubmit gets it, or None for anything else."""
    if (
        event.get("type") != "user"
        or event.get("isSidechain")
        or event.get("isMeta")
        or event.get("isCompactSummary")
        or event.get("toolUseResult") is not None
    ):
        return None
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        return None
    text = _text_of(content).strip()
    if not text or text.startswith(_META):
        return None
    name = re.search(r"<command-name>(.*?)</command-name>", text, re.S)
    if name:  # a slash command: the prompt as typed
        args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
        return f"{name.group(1).strip()} {args.group(1).strip() if args else ''}".strip()
    return text


def replay(transcript: Path, session_id: str, replayer: Replay, work: Path) -> None:
    live = work / f"{session_id}.jsonl"
    live.write_bytes(b"")
    common = {
        "session_id": session_id,
        "transcript_path": str(live),
        "cwd": str(replayer.project),
        "permission_mode": "default",
    }
    calls: dict[str, tuple[str, object]] = {}
    replayer.fire("SessionStart", {**common, "source": "startup"})
    in_turn = False
    with open(transcript, "rb") as source, open(live, "ab") as sink:
        for raw in source:
            try:
                event = json.loads(raw)
            except ValueError:
                event = None
            if (
                isinstance(event, dict)
                and event.get("type") == "system"
                and event.get("subtype") == "compact_boundary"
            ):
                sink.flush()
                replayer.fire(
                    "PreCompact", {**common, "trigger": "auto", "custom_instructions": ""}
                )
            if isinstance(event, dict):
                prompt = _typed_prompt(event)
                if prompt is not None:
                    sink.flush()
                    if in_turn:
                        replayer.fire("Stop", {**common, "stop_hook_active": False})
                    replayer.fire("UserPromptSubmit", {**common, "prompt": prompt})
                    in_turn = True
            sink.write(raw if raw.endswith(b"\n") else raw + b"\n")
            if not isinstance(event, dict):
                continue
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if event.get("type") == "assistant" and block.get("type") == "tool_use":
                    sink.flush()
                    name, tool_input = str(block.get("name", "")), block.get("input") or {}
                    calls[str(block.get("id"))] = (name, tool_input)
                    replayer.fire(
                        "PreToolUse",
                        {
                            **common,
                            "tool_name": name,
                            "tool_input": tool_input,
                            "tool_use_id": block.get("id"),
                        },
                        tool=name,
                    )
                elif event.get("type") == "user" and block.get("type") == "tool_result":
                    call_id = str(block.get("tool_use_id"))
                    if call_id not in calls:
                        continue
                    sink.flush()
                    name, tool_input = calls.pop(call_id)
                    text = _text_of(block.get("content"))
                    base = {
                        **common,
                        "tool_name": name,
                        "tool_input": tool_input,
                        "tool_use_id": call_id,
                    }
                    if text.startswith(_REJECTED):
                        continue  # refused: the tool never ran
                    if block.get("is_error") is True:
                        replayer.fire(
                            "PostToolUseFailure",
                            {
                                **base,
                                "error": text,
                                "is_interrupt": "[Request interrupted by user" in text,
                            },
                            tool=name,
                        )
                    else:
                        response = event.get("toolUseResult")
                        replayer.fire(
                            "PostToolUse",
                            {**base, "tool_response": response if response is not None else text},
                            tool=name,
                        )
    if in_turn:
        replayer.fire("Stop", {**common, "stop_hook_active": False})
    replayer.fire("SessionEnd", {**common, "reason": "prompt_input_exit"})


# -------------------------------------------------------------------------------------------
# measuring


def _memories(env: dict, project: Path) -> list[dict]:
    done = subprocess.run(
        [*_lessonloop(env), "memory", "list", "--json", "--scope", "all"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise SystemExit(f"memory list failed: {done.stderr}")
    value = json.loads(done.stdout or "[]")
    return value if isinstance(value, list) else value.get("entries", [])


# what a memory names only to reject it: a not-lesson found there is no wrong memory
_NEGATED = re.compile(r"(?:,?\s*not|instead of|rather than|refused|rejected)\s+`[^`]*`", re.I)


def _text(memory: dict) -> str:
    return f"{memory.get('summary', '')} {memory.get('content', '')}".lower()


def _matches_lesson(text: str, lesson: dict) -> bool:
    return all(any(alt.lower() in text for alt in group) for group in lesson["must_contain"])


def _recall_block(env: dict, project: Path) -> str:
    done = subprocess.run(
        [*_lessonloop(env), "memory", "recall"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout.strip()


def _model_outcome(env: dict, project: Path) -> dict:
    """What the model route did in this project: each memorize run's record (the sessions'
    model.jsonl), the fallback lines of logs/hooks.log, and the usage ledger's memorize calls."""
    home = Path(env["LESSONLOOP_HOME"])
    runs = []
    for path in sorted(home.glob("sessions/*/model.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                runs.append(json.loads(line))
            except ValueError:
                continue
    log = home / "logs" / "hooks.log"
    fallbacks = [
        line.split(" not used: ", 1)[1]
        for line in (log.read_text(encoding="utf-8").splitlines() if log.exists() else [])
        if " not used: " in line
    ]
    done = subprocess.run(
        [*_lessonloop(env), "usage", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    usage = (
        json.loads(done.stdout).get("by_role", {}).get("memorize", {})
        if done.returncode == 0 and done.stdout.strip()
        else {}
    )
    return {
        "runs": runs,
        "fallbacks": fallbacks,
        "calls": usage.get("calls", 0),
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": usage.get("output_tokens", 0),
    }


def measure(
    entry: dict,
    sessions: Path,
    in_process: bool,
    twice: bool,
    quiet: bool,
    model: dict | None = None,
) -> dict:
    name = entry["session"]
    transcript = sessions / f"{name}.jsonl"
    with tempfile.TemporaryDirectory(prefix="lessonloop-mq-") as tmp:
        tmp_path = Path(tmp)
        project = tmp_path / "project"
        project.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LESSONLOOP_", "CLAUDE_"))}
        env.update(
            {
                "LESSONLOOP_HOME": str(project / ".lessonloop"),
                "LESSONLOOP_USER_HOME": str(tmp_path / "user-home"),
                "LESSONLOOP_AUTOMEM_MODEL": "off",
                "HOME": str(tmp_path),
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
                "PYTHONPATH": str(ROOT / "src"),
            }
        )
        env.update(model or {})
        hooks = _settings_hooks(project, env)
        subprocess.run(
            [*_lessonloop(env), "memory", "consent", "yes"],
            cwd=project,
            env=env,
            capture_output=True,
            check=True,
            timeout=120,
        )
        started = time.perf_counter()
        replayer = Replay(project, env, hooks, in_process)
        replay(transcript, name, replayer, tmp_path)
        seconds = time.perf_counter() - started
        stored = _memories(env, project)
        dups: list[dict] = []
        if twice:
            replay(transcript, f"{name}-again", Replay(project, env, hooks, in_process), tmp_path)
            again = _memories(env, project)
            before = {(m.get("scope"), m.get("id")) for m in stored}
            dups = [m for m in again if (m.get("scope"), m.get("id")) not in before]
        block = _recall_block(env, project)
        outcome = _model_outcome(env, project) if model else None
    lessons = entry["lessons"]
    rules = [re.compile(r, re.I) for r in NOT_LESSONS.get(name, [])]
    rows, matched = [], set()
    correct = wrong = 0
    proposed = {"stored": 0, "correct": 0, "wrong": 0, "new_recall": 0}
    for m in stored:
        text = _text(m)
        hits = [lesson["id"] for lesson in lessons if _matches_lesson(text, lesson)]
        positive = _NEGATED.sub(" ", text)  # "..., not `npm install`" does not recommend it
        bad = [r.pattern for r in rules if r.search(positive)]
        matched.update(hits)
        if bad:
            wrong += 1
        elif hits:
            correct += 1
        if _proposed(m):  # the model's own lesson (memory/model_lessons.py)
            proposed["stored"] += 1
            proposed["wrong" if bad else "correct"] += 1 if bad or hits else 0
        rows.append((m, hits, bad))
    # expected lessons only the model's own memories match
    by_rest = {
        lesson["id"]
        for m, hits, bad in rows
        if not _proposed(m)
        for lesson in lessons
        if lesson["id"] in hits
    }
    proposed["new_recall"] = len(matched - by_rest)
    user_ids = {lesson["id"] for lesson in lessons if lesson.get("user_stated")}
    result = {
        "session": name,
        "stored": len(stored),
        "correct": correct,
        "wrong": wrong,
        "unmatched": len(stored) - correct - wrong,
        "lessons": len(lessons),
        "recalled": len(matched),
        "user_lessons": len(user_ids),
        "user_recalled": len(matched & user_ids),
        "dups": len(dups) if twice else None,
        "block_chars": len(block),
        "seconds": seconds,
        "sent": replayer.sent,
        "outputs": replayer.outputs,
        "model": outcome,
        "proposed": proposed,
        "detached": replayer.detached,
        "waited": replayer.waited,
    }
    if not quiet:
        print(
            f"\n=== {name}  ({seconds:.1f} s; events sent: "
            + ", ".join(f"{k} {v}" for k, v in replayer.sent.items())
            + ")"
        )
        for m, hits, bad in rows:
            mark = (
                "WRONG " + "|".join(bad)
                if bad
                else ("ok " + ",".join(hits) if hits else "unmatched")
            )
            origin = " model" if _proposed(m) else ""
            print(
                f"  [{m.get('scope', '?')[:4]} {m.get('type', '?')[:4]}{origin}] {m.get('summary')}"
            )
            content = " ".join(str(m.get("content", "")).split())
            if content:
                print(f"        content: {content[:200]}")
                cause = content.partition("Cause (as the agent found it): ")[2]
                if cause:  # the diagnosis decides many matches: show it whole
                    print(f"        cause: {cause}")
            print(f"        -> {mark}")
        missed = [lesson for lesson in lessons if lesson["id"] not in matched]
        for lesson in missed:
            who = "user" if lesson.get("user_stated") else "work"
            print(f"  missed {lesson['id']} ({lesson['kind']}, {who}): {lesson['lesson'][:110]}")
        for m in dups:
            print(f"  DUPLICATE on second replay: {m.get('summary')}")
        if outcome is not None:
            print(
                f"  model: {replayer.detached} detached memorize(s), {replayer.waited:.0f} s "
                f"waited; {outcome['calls']} calls, {outcome['input_tokens']} tokens in, "
                f"{outcome['output_tokens']} out"
            )
            for run in outcome["runs"]:
                print(f"    {_run_line(run)}")
                for refused in run.get("refused", []):
                    print(
                        f"      refused for lesson {refused.get('lesson')}: "
                        f"{refused.get('wording')!r} ({refused.get('why')})"
                    )
                for refused in run.get("proposal_refused", []):
                    print(
                        f"      proposal {refused.get('memory')} refused: "
                        f"{refused.get('summary')!r} ({refused.get('why')})"
                    )
    return result


def _run_line(run: dict) -> str:
    """One memorize run of the model route, as its model.jsonl record tells it."""
    if run.get("model") != "used":
        return f"{run.get('model')}"
    rejected = ", ".join(f"{n} {why}" for why, n in sorted(run.get("rejected", {}).items()))
    return (
        f"used: {run.get('lessons', 0)} lessons, {run.get('answered', 0)} answered, "
        f"{run.get('rewritten', 0)} reworded, {run.get('kept', 0)} kept as found, "
        f"{run.get('reused', 0)} worded as in an earlier session"
        + (f"; rejected: {rejected}" if rejected else "")
        + f" ({run.get('seconds', 0):.0f} s)"
        + (
            f"; proposed {run.get('proposed', 0)}, {run.get('proposals_kept', 0)} kept"
            f" ({run.get('proposal_seconds', 0):.0f} s)"
            if "proposed" in run and run.get("proposal_seconds")
            else ""
        )
    )


PROPOSED_WHY = "Proposed by the memorize model"  # (memory/model_lessons.py: PROPOSED)


def _proposed(memory: dict) -> bool:
    return str(memory.get("why") or "").startswith(PROPOSED_WHY)


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f}%" if b else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default=str(DEFAULT_SET), help="folder with expected.json")
    parser.add_argument("--only", action="append", help="session name (substring), repeatable")
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--once", action="store_true", help="no second replay")
    parser.add_argument("-q", "--quiet", action="store_true", help="the table only")
    parser.add_argument(
        "--model",
        help="LESSONLOOP_AUTOMEM_MODEL for the replay (the model "
        "route), e.g. openai:qwen2.5-coder-0.5b-instruct-q4_k_m",
    )
    parser.add_argument("--base-url", help="LESSONLOOP_BASE_URL (an openai route's server)")
    parser.add_argument("--timeout", help="LESSONLOOP_AUTOMEM_TIMEOUT, seconds per request")
    args = parser.parse_args()
    model = None
    if args.model:
        model = {"LESSONLOOP_AUTOMEM_MODEL": args.model}
        if args.base_url:
            model["LESSONLOOP_BASE_URL"] = args.base_url
        if args.timeout:
            model["LESSONLOOP_AUTOMEM_TIMEOUT"] = args.timeout
    elif args.base_url or args.timeout:
        parser.error("--base-url and --timeout go with --model")
    sessions = Path(args.set)
    expected = json.loads((sessions / "expected.json").read_text())
    if args.only:
        expected = [e for e in expected if any(o in e["session"] for o in args.only)]
    if args.in_process:
        sys.path.insert(0, str(ROOT / "src"))
    results = [
        measure(e, sessions, args.in_process, not args.once, args.quiet, model) for e in expected
    ]
    route = f"model route {args.model}" if model else "deterministic route"
    print(f"\n{route}" + (f" at {args.base_url}" if args.base_url else ""))
    print(
        f"\n{'session':45} {'stored':>6} {'corr':>5} {'wrong':>5} {'unm':>4} "
        f"{'recall':>9} {'user':>7} {'dups':>4} {'block':>6}"
    )
    for r in results:
        print(
            f"{r['session'][:45]:45} {r['stored']:>6} {r['correct']:>5} {r['wrong']:>5} "
            f"{r['unmatched']:>4} {r['recalled']:>4}/{r['lessons']:<4} "
            f"{r['user_recalled']:>3}/{r['user_lessons']:<3} "
            f"{'-' if r['dups'] is None else r['dups']:>4} {r['block_chars']:>6}"
        )
    total = {
        k: sum(r[k] for r in results)
        for k in (
            "stored",
            "correct",
            "wrong",
            "unmatched",
            "lessons",
            "recalled",
            "user_lessons",
            "user_recalled",
            "block_chars",
        )
    }
    dups = None if args.once else sum(r["dups"] for r in results)
    print(
        f"{'TOTAL':45} {total['stored']:>6} {total['correct']:>5} {total['wrong']:>5} "
        f"{total['unmatched']:>4} {total['recalled']:>4}/{total['lessons']:<4} "
        f"{total['user_recalled']:>3}/{total['user_lessons']:<3} "
        f"{'-' if dups is None else dups:>4} {total['block_chars']:>6}"
    )
    largest = max((r["block_chars"] for r in results), default=0)
    print(
        f"\ncorrect/stored {_pct(total['correct'], total['stored'])} (target >= 85%), "
        f"wrong {total['wrong']} (target 0), recall {_pct(total['recalled'], total['lessons'])}"
        f" (target >= 50%), user-stated recall "
        f"{_pct(total['user_recalled'], total['user_lessons'])} (target >= 80%), duplicates "
        f"{'-' if dups is None else dups} (target 0); largest recall block {largest} chars "
        f"(~{largest // 4} tokens, budget 1500)"
    )
    if model:
        _model_summary(results)


def _model_summary(results: list[dict]) -> None:
    """How often the model's answer was used, why it was not, what the guards did, the cost."""
    runs = [run for r in results for run in r["model"]["runs"]]
    used = [run for run in runs if run.get("model") == "used"]
    why: dict[str, int] = {}
    for run in runs:
        if run.get("model") != "used":
            reason = re.sub(r"\d+(\.\d+)?", "N", str(run.get("model")))[:90]
            why[reason] = why.get(reason, 0) + 1
    sessions_used = sum(
        1 for r in results if any(run.get("model") == "used" for run in r["model"]["runs"])
    )
    count = {
        k: sum(run.get(k, 0) for run in used)
        for k in ("lessons", "sent", "answered", "rewritten", "kept", "reused")
    }
    rejected: dict[str, int] = {}
    for run in used:
        for reason, n in run.get("rejected", {}).items():
            rejected[reason] = rejected.get(reason, 0) + n
    calls = sum(r["model"]["calls"] for r in results)
    tokens_in = sum(r["model"]["input_tokens"] for r in results)
    tokens_out = sum(r["model"]["output_tokens"] for r in results)
    detached = sum(r["detached"] for r in results)
    waited = sum(r["waited"] for r in results)
    print(
        f"model route: {len(runs)} memorize runs ({detached} detached, {waited:.0f} s waited "
        f"for them); {len(used)} used the model's answer ({sessions_used} of {len(results)} "
        f"sessions), {len(runs) - len(used)} fell back"
    )
    for reason, n in sorted(why.items(), key=lambda kv: -kv[1]):
        print(f"  fell back {n}x: {reason}")
    print(
        f"  in the runs that used it: {count['lessons']} lessons, {count['sent']} sent, "
        f"{count['answered']} memories answered; {count['rewritten']} lessons reworded by the "
        f"model (its wording passed the guards), {count['reused']} worded as in an earlier "
        f"session, {count['kept']} kept as the deterministic pass found them"
    )
    for reason, n in sorted(rejected.items(), key=lambda kv: -kv[1]):
        print(f"  wording refused {n}x: {reason}")
    proposals = {k: sum(run.get(k, 0) for run in used) for k in ("proposed", "proposals_kept")}
    refusals: dict[str, int] = {}
    for run in used:
        for reason, n in run.get("proposal_rejected", {}).items():
            refusals[reason] = refusals.get(reason, 0) + n
    stored = {k: sum(r["proposed"][k] for r in results) for k in ("stored", "correct", "wrong")}
    new = sum(r["proposed"]["new_recall"] for r in results)
    print(
        f"  the model's own lessons: {proposals['proposed']} proposed, "
        f"{proposals['proposals_kept']} passed the checks, "
        + ", ".join(f"{n} {why}" for why, n in sorted(refusals.items(), key=lambda kv: -kv[1]))
        + f"; stored {stored['stored']} ({stored['correct']} correct, {stored['wrong']} wrong, "
        f"{stored['stored'] - stored['correct'] - stored['wrong']} unmatched); "
        f"{new} expected lessons recalled by them alone"
    )
    print(f"  {calls} calls, {tokens_in} tokens in, {tokens_out} out")


if __name__ == "__main__":
    main()
