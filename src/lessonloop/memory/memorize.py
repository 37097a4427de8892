"""Memorize: turn one session's captures and transcript into memories, through admission.

Runs at session end and before a compaction, never after every turn. With consent only.
Deterministic first — recurring errors and the fix that followed (``pattern``), explicit
choices (``decision``), stated preferences and rules (``preference``, the personal ones also in
the user root), single notable fixes (``observation``), and what the agent stated it found or
set up (``conclusions``) — each summary stating the lesson, not the words that triggered it. A
configured model (``LESSONLOOP_AUTOMEM_MODEL``) may word those lessons anew, from redacted,
capped extracts; any failure keeps the deterministic result.
Idempotent per session: what a session already stored is not proposed again.

What the model does
    It is sent the lessons the deterministic pass found in the session's normalized events
    (numbered, each with its evidence: the user's words, the error and the change that fixed
    it, the runs of a command), and answers, per lesson, one sentence. A sentence replaces the
    lesson's summary only when ``rewrite.problem`` finds it keeps the lesson's commands, paths
    and words, adds no command, name or word the evidence does not hold, turns no negation and
    is whole; the lesson keeps its kind, scope, content and evidence either way, so the model
    can neither drop a lesson nor add one, and its memories go through the same admission and
    dedupe. A small model copies the evidence, drops the error or invents a purpose; those
    wordings are refused and counted. A lesson the model worded in an earlier session keeps that
    wording (found by ``WORDED`` in its why) and is not sent again. Each run is one line in the
    session's ``model.jsonl``: used or why not, and each refused wording with its reason.

The model and its time limit
    One request, no retries, no wait for a loopback server that refuses connections; an answer
    off the memory schema gets the provider's one repair round (a second request). Each
    request may take ``LESSONLOOP_AUTOMEM_TIMEOUT`` seconds (default ``MODEL_SECONDS``, 120:
    a 0.5B model on a CPU reads ~40 and writes ~10 tokens a second), so memorize with a model
    may take ``longest_seconds()`` = two requests plus ``SETTLE_SECONDS``. The prompt is kept
    small enough for such a model: the task, the numbered lessons with their evidence, the
    answer's form; the answer is a lesson's number and a sentence per memory, at most one per
    lesson sent (``answer_schema``, at most MAX_MODEL_MEMORIES lessons a request), through the
    endpoint's structured output, at temperature 0.

The session-end hook's deadline (see ``hooks.session_end``)
    Claude Code gives session-end and pre-compact 60 s (``hooks.MEMORIZE_DEADLINE``). When
    ``longest_seconds()`` fits in it, the hook memorizes in its own process, as before. When it
    does not (the default with a model: 2 x 120 + 10 s), the hook starts ``lessonloop hook
    memorize`` as a detached process (its own session, standard streams closed; the hook uses
    ``subprocess`` only and returns at once) that memorizes later under the session's lock and
    stores through admission like the hook would; its one line is shown at the next session
    start. Nothing is stored twice: the deterministic candidates are not stored first, so a
    model's rewrite of them cannot become a duplicate beside them.

Fallbacks and the ledger
    A timeout, a refused connection, an answer that fails the schema after the repair round
    (no memories at all is off the schema), a bad setting or a missing SDK or key: the
    deterministic candidates are stored and ``Result.model`` says why (``not used: ...``); the
    hooks write that reason as one line to ``logs/hooks.log``. Every answered request of the
    route is put in the usage ledger (``provider_calls``) with role ``memorize``, no run, and
    the session's id in ``session_id`` (migration 7) — including the requests of an answer
    that then failed the schema (``OffSchemaError.completion``). A request that timed out was
    not answered: nothing to count.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..knowledge import admission
from ..knowledge.entries import fingerprint
from ..safety import cap, redact
from . import capture, consent, events
from .recall import MEMORY_KINDS, PROJECT, USER

RECURRING = 2  # the same normalized error this often makes a pattern
MODEL_SECONDS = 120.0  # per request, unless LESSONLOOP_AUTOMEM_TIMEOUT says otherwise
MODEL_REQUESTS = 2  # the request, and the provider's one repair round for an answer off the schema
SETTLE_SECONDS = 10.0  # start-up, reading the transcript, admission: memorize besides the model
MODEL_MAX_TOKENS = 1000  # a small model writes ~10 tokens a second
EXTRACT_CHARS = 8000  # what a model may see, at most, after redaction
MAX_MODEL_MEMORIES = 10
MESSAGE_SHOWN = 6  # lessons named in the one line (each at most SUMMARY_MAX characters)
KIND_OF_FEEDBACK = {
    "decision": "decision",
    "preference": "preference",
    "rule": "preference",
    "fact": "observation",
    "correction": "preference",
}
HOW_TO_APPLY = {
    "pattern": "When this error shows up again, apply the fix first.",
    "decision": "Follow this decision in this project unless the user revisits it.",
    "preference": "Apply it whenever it is relevant, without being asked again.",
    "observation": "Keep it in mind when working on the same part of the project.",
}
# What a model answers: for a lesson it was sent (by its number), the lesson worded as one
# sentence; no kind, scope, content or evidence. A 0.5B model given room for those fills them
# with prose it invents; a lesson keeps its own kind, scope, content and evidence, and the
# model's sentence replaces its summary only when ``rewrite.problem`` finds nothing wrong with
# it. The summary may run past SUMMARY_MAX here so that a sentence too long is seen whole (and
# refused) rather than cut by the endpoint's grammar. Each request narrows maxItems to the
# lessons it sends (answer_schema): a small model that starts repeating itself is stopped there.
MEMORY_SCHEMA = {
    "type": "object",
    "required": ["memories"],
    "properties": {
        "memories": {
            "type": "array",
            "maxItems": MAX_MODEL_MEMORIES,
            "minItems": 1,  # the model is asked only when there are lessons: none is no answer
            "items": {
                "type": "object",
                "required": ["lesson", "summary"],
                "properties": {
                    # (no bounds: an endpoint's grammar does not hold numbers to them, and one
                    # lesson number out of range is one wording lost, not the whole answer)
                    "lesson": {"type": "integer"},
                    "summary": {"type": "string", "minLength": 3, "maxLength": 160},
                },
            },
        }
    },
}
# Short enough for a 0.5B model to follow: the task, the rules the guards hold it to, the
# answer's form. The JSON Schema itself goes through the endpoint's structured output.
MODEL_SYSTEM = (
    "You reword lessons from a coding session as memories for later sessions. Rewrite each "
    "numbered lesson as one clear sentence of at most 120 characters: an instruction or a "
    "fact. The evidence is only there to check the lesson: do not copy it. Keep every "
    "command, file and name of the lesson, and keep the text in backticks exactly as it "
    "is, in backticks. Add no command, file or tool. Answer with JSON only, one memory per "
    "lesson."
)


@dataclass
class Candidate:
    kind: str
    summary: str
    content: str = ""
    why: str = ""
    how_to_apply: str = ""
    tags: list[str] = field(default_factory=list)
    user_scope: bool = False

    def proposal(self, scope: str, session: str) -> admission.Proposal:
        return admission.Proposal(
            kind=self.kind,
            scope=scope,
            summary=self.summary,
            content=self.content,
            why=self.why,
            how_to_apply=self.how_to_apply or HOW_TO_APPLY[self.kind],
            tags=["auto-memorize", self.kind, *self.tags],
            source="session",
            approved_by="consent",
            session_id=session,
            detail=self.why,
        )


@dataclass
class Result:
    stored: list[str] = field(default_factory=list)
    reinforced: int = 0
    skipped: str | None = None  # why nothing was synthesized (consent)
    model: str | None = None  # "used", or why the model's answer was not ("not used: ...")
    route: str | None = None  # the model route asked (provider:model), when one was

    @property
    def message(self) -> str | None:
        """``Stored N new memories: a, b, c``, each lesson whole (a cut one hides its fix), the
        first MESSAGE_SHOWN of them; None when nothing new was stored."""
        if not self.stored:
            return None
        names = ", ".join(self.stored[:MESSAGE_SHOWN])
        if len(self.stored) > MESSAGE_SHOWN:
            names += f", and {len(self.stored) - MESSAGE_SHOWN} more (`lessonloop memory list`)"
        noun = "memory" if len(self.stored) == 1 else "memories"
        return f"Stored {len(self.stored)} new {noun}: {names}"


# -------------------------------------------------------------------------------------------
# deterministic candidates


def _from_errors(signals: list[dict], transcript) -> list[Candidate]:
    """Each error with the evidence of its fix (``transcript.error_lessons``): the change
    between the failure and the next run of the same step without it, or nothing when the
    evidence is ambiguous. How often it happened is counted in the transcript, the session's
    one record (hook captures of a replayed session are appended twice; without a transcript
    there is no fix to pair, so ``signals`` give nothing alone)."""
    fixes = transcript.error_lessons() if transcript is not None else []
    found, handled = [], set()
    for fix in fixes:
        lesson = fix.lesson.strip()
        key = fix.normalized  # one lesson per error: its first evidenced fix
        if not lesson or key in handled:
            continue
        handled.add(key)
        times = fix.times
        found.append(
            Candidate(
                kind="pattern" if times >= RECURRING else "observation",
                summary=lesson,
                content=f"Error: {fix.line[:300]}\nFixed by: {fix.detail}",
                why=f"Hit {times} time{'s' if times != 1 else ''} in one session, then fixed.",
                tags=["error"],
            )
        )
    if transcript is None:
        return found
    from .error_lessons import fit, readable_line

    for call, line, times, before in transcript.unresolved_errors():
        head = f"Unresolved: `{call.name}` kept failing with `"
        shown = fit(readable_line(line), 120 - len(head) - 1)
        if not shown:
            continue
        after = f" It first failed on `{_one_line(call.subject, 200)}`" + (
            f", after `{_one_line(before.subject, 120)}`." if before is not None else "."
        )
        found.append(
            Candidate(
                kind="observation",
                summary=f"{head}{shown}`",
                content=f"Error: {line[:300]}\nFailed {times} times; the tool never worked again in "
                f"the session.{after}",
                why="An error the session never got past: an open problem, no fix known.",
                tags=["error", "open-problem"],
            )
        )
    return found


def _feedback_stream(captured: list[dict], transcript) -> list[dict]:
    """The session's feedback as one stream: what the capture hooks found in the prompts they
    saw, then what the transcript's prompts that no hook saw say (see events.unseen_prompts)."""
    items = [f for f in captured if f.get("type") == "feedback"]
    unseen = events.unseen_prompts(transcript, captured)
    if unseen is None:  # the captures cannot tell which prompts they saw: all or none
        unseen = [p for p in transcript.prompts if not p.sidechain] if not items else []
    if unseen:
        from .feedback import prompt_feedback

        items += [
            {
                "type": "feedback",
                "kind": f.kind,
                "lesson": f.lesson,
                "text": f.text,
                "user_scope": f.user_scope,
            }
            for p in unseen
            for f in prompt_feedback(p.text)
        ]
    return items


def _from_feedback(feedback: list[dict], transcript) -> list[Candidate]:
    items = [f for f in feedback if f.get("type") == "feedback"]
    corrected = {}
    if transcript is not None:
        for correction in transcript.corrections():
            if correction.corrected is not None:
                corrected[correction.feedback.lesson.lower()] = correction.corrected.subject
    found, lessons = [], set()
    for n, item in enumerate(items):
        kind = KIND_OF_FEEDBACK.get(str(item.get("kind")))
        lesson = str(item.get("lesson") or "").strip()
        if kind is None or not lesson or lesson.lower() in lessons:
            continue
        if lesson.startswith(OPEN_PROBLEM) and any(
            later.get("kind") == "confirmation" for later in items[n + 1 :]
        ):
            continue  # the user confirmed something later: the problem may be solved
        lessons.add(lesson.lower())
        why = f'The user said: "{str(item.get("text") or lesson)[:300]}"'
        if lesson.lower() in corrected:
            why += f" (correcting: {corrected[lesson.lower()][:200]})"
        content = str(item.get("text") or "")
        context = str(item.get("prompt") or "")
        if context and content not in context[: len(content) + 1]:
            content += f"\nSaid in: {context}"
        about = _pasted_about(transcript, content) if kind in ("decision", "preference") else ""
        if about:
            content += f"\n{about}"
        found.append(
            Candidate(
                kind=kind,
                summary=lesson,
                content=content,
                why=why,
                tags=[str(item.get("kind"))],
                user_scope=bool(item.get("user_scope")) and kind == "preference",
            )
        )
    if transcript is not None:
        for candidate in (
            _from_said(transcript)
            + _from_refusals(transcript)
            + _project_facts(transcript)
            + _recipe_facts(transcript)
            + _project_hooks(transcript)
            + _permission_facts(transcript)
            + _from_conclusions(transcript)
            + _dropped_plans(transcript)
            + _from_reports(transcript)
        ):
            if candidate.summary.lower() not in lessons:
                lessons.add(candidate.summary.lower())
                found.append(candidate)
    return found


_DIFF_FILE = re.compile(r"^\+\+\+ (?:[^/\s]*/)?(\S+)", re.M)
_DEFINED = re.compile(
    r"^[ +-]?\s*(?:export\s+)?(?:pub\s+)?(?:async\s+)?(?:def|function|fn|func|"
    r"class|defp?|defmodule)\s+([\w.]+)",
    re.M,
)


def _pasted_about(transcript, said: str) -> str:
    """What a decision stated above a pasted diff is about: "About the diff pasted with it:
    `claude_code_log/renderer.py` (`get_project_display_name`)" — its files and the functions
    it defines or shows; "" when the prompt that says it holds no diff. Without it, "take the
    least nested path first" names nothing the next session can find."""
    if transcript is None or not said.strip():
        return ""
    head = " ".join(said.split())[:80]
    for prompt in transcript.prompts:
        if prompt.sidechain or head not in " ".join(prompt.text.split()):
            continue
        files = [f for f in dict.fromkeys(_DIFF_FILE.findall(prompt.text)) if f != "dev/null"][:3]
        if not files:
            return ""
        names = list(dict.fromkeys(_DEFINED.findall(prompt.text)))[:3]
        shown = ", ".join(f"`{f}`" for f in files)
        if names:
            shown += " (" + ", ".join(f"`{n}`" for n in names) + ")"
        return f"About the diff pasted with it: {shown}"
    return ""


def _from_conclusions(transcript) -> list[Candidate]:
    """What the agent said it found, advised or set up (see conclusions): findings after
    research, an overview of a code base a subagent explored, how to install the project from
    its source, a configuration file it created. A heuristic over free text: should it ever
    fail, the session's other lessons are stored all the same."""
    from .conclusions import conclusions

    try:
        found = conclusions(transcript)
    except Exception:  # noqa: BLE001 - no shape of the agent's text may lose the session
        return []
    return [
        Candidate(
            kind=c.kind, summary=c.summary, content=c.content, why=c.why, tags=["conclusion", c.tag]
        )
        for c in found
    ]


def _from_reports(transcript) -> list[Candidate]:
    """What the user reported from their own runs (see reported): the command they say they
    run the project with, and a pasted error the agent's edits fixed by the user's next paste.
    A heuristic over free text: should it ever fail, the session's other lessons stand."""
    from .reported import reported_fixes, run_commands

    try:
        found = run_commands(transcript) + reported_fixes(transcript)
    except Exception:  # noqa: BLE001 - no shape of a prompt may lose the session
        return []
    whys = {
        "command": "A command the user said they run, in their own words.",
        "error": "An error the user pasted, and the edits after which their next run got past it.",
    }
    return [
        Candidate(
            kind=r.kind,
            summary=r.summary,
            content=r.content,
            why=whys[r.tags[-1] if r.tags[-1] in whys else r.tags[0]],
            tags=list(r.tags),
        )
        for r in found
    ]


# the user's next words after refusing a plan drop the idea itself, not only this plan
_DROPPED = re.compile(
    r"^\W*(?:never\s?mind|forget (?:it|that|about it)|scratch that|"
    r"let'?s not(?: do (?:it|that))?|don'?t bother)\b",
    re.I,
)


def _dropped_plans(transcript) -> list[Candidate]:
    """A plan the agent proposed (``ExitPlanMode``), refused by the user, whose next words drop
    the idea ("Never mind! But ..."): "The user dropped the plan: Web Worker Analysis &
    Alternative Solutions", so the next session does not propose it again. A plan refused
    without such words is only not approved as written: no lesson."""
    from .conclusions import blocks, plain

    main = sorted(
        [(c.index, "call", c) for c in transcript.calls if not c.sidechain]
        + [(p.index, "prompt", p) for p in transcript.prompts if not p.sidechain],
        key=lambda x: x[0],
    )
    found = []
    for n, (_, what, call) in enumerate(main):
        if what != "call" or call.name != "ExitPlanMode" or not call.rejected:
            continue
        after = next((p for _, w, p in main[n + 1 :] if w == "prompt"), None)
        plan = call.input.get("plan")
        if after is None or not isinstance(plan, str) or not _DROPPED.match(after.text):
            continue
        title = next((plain(b.text) for b in blocks(plan) if b.kind == "heading"), "")
        asked = next((p.text for _, w, p in reversed(main[:n]) if w == "prompt"), "")
        summary = f"The user dropped the plan: {title.rstrip('.:')}"
        words = re.match(r"[^.!?\n]*[.!?]?", after.text.strip()).group(0)  # (not the next ask)
        if not title or len(summary) > 120:
            continue
        found.append(
            Candidate(
                kind="decision",
                summary=summary,
                tags=["rejection", "dropped"],
                content=f'Asked: "{_one_line(asked, 200)}" The agent proposed: '
                f"{_one_line(plan, 300)} The user refused it and said: "
                f'"{_one_line(words, 120)}"',
                why="A plan the user refused and then dropped: do not propose it again unasked.",
            )
        )
    return found


def _from_said(transcript) -> list[Candidate]:
    """What the user said outside prompts (read from the transcript only: no hook sees it):
    a refused call's reason, as a correction of that call ("use pnpm" when `npm install` was
    refused: "Use pnpm"), and the answers to the agent's questions, as decisions."""
    from .feedback import prompt_feedback

    found = []
    for said in transcript.said:
        if said.sidechain:
            continue
        if said.kind == "rejection":
            for fb in prompt_feedback(said.text, corrected=True):
                kind = KIND_OF_FEEDBACK.get(fb.kind)
                if kind is None or not fb.lesson:
                    continue
                refused = f"`{_one_line(said.about, 200)}`" if said.about else "a tool call"
                found.append(
                    Candidate(
                        kind=kind,
                        summary=fb.lesson,
                        tags=["rejection"],
                        content=f'The user refused {refused} and said: "{said.text}"',
                        why=f'The user\'s reason for refusing {refused}: "{said.text}"',
                        user_scope=fb.user_scope and kind == "preference",
                    )
                )
        elif said.kind == "command":
            summary = _project_command(said.text)
            if summary:
                found.append(
                    Candidate(
                        kind="observation",
                        summary=summary,
                        tags=["project-fact", "command"],
                        content=f"The user ran `{_one_line(said.text, 200)}` in this project.",
                        why="A command the user ran themselves in the session.",
                    )
                )
        elif said.kind == "answer":
            summary = _answer_summary(said)
            if not summary:
                continue
            chose = f"{said.text} ({said.detail})" if said.detail else said.text
            found.append(
                Candidate(
                    kind="decision",
                    summary=summary,
                    tags=["answer"],
                    content=f'Asked "{said.about}", the user chose: {chose}',
                    why="The user's answer to the agent's question.",
                )
            )
    return found


# what a project command does, by the words of its head (``uv run ty check`` type-checks)
_COMMAND_ROLES = (
    (
        "Type-check",
        {"ty check", "mypy", "pyright", "tsc", "dialyzer", "cargo check", "basedpyright", "pyre"},
    ),
    (
        "Lint",
        {
            "ruff check",
            "ruff",
            "eslint",
            "credo",
            "clippy",
            "flake8",
            "pylint",
            "golangci-lint",
            "biome lint",
            "biome check",
            "lint",
        },
    ),
    ("Format", {"ruff format", "black", "prettier", "cargo fmt", "gofmt", "format", "fmt"}),
    ("Run the tests", {"pytest", "test", "tox", "nox", "jest", "vitest"}),
    ("Build", {"build", "compile"}),
    ("Start the app", {"phx.server", "runserver", "dev", "serve", "start"}),
)


_NOT_PROJECT_COMMANDS = frozenset(
    """rm cp mv cat echo printf ls ll find grep rg git cd mkdir
touch curl wget head tail less more sed awk chmod chown kill pkill sleep which open tee""".split()
)


def _project_command(command: str) -> str:
    """ "Type-check with `uv run ty check`" for a command that builds, tests, type-checks,
    lints, formats or runs the project; "" for anything else (``ls``, ``git status``)."""
    from .commands import command_core, command_head, command_key

    core = command_key(command_core(command)).strip()
    head = command_head(command)
    if not core or not head or len(core) > 80 or "\n" in core or "|" in core or "&&" in core:
        return ""
    # the command without the files it was given: the project's command, not this run's
    shown = " ".join(w for w in core.split() if "/" not in w and not re.search(r"test\w*\.\w+$", w))
    words = shown.split()
    if not words or words[0] in _NOT_PROJECT_COMMANDS:
        return ""
    words = words[:4]  # the command's own words, not a late argument that happens to say "build"
    names = {head, *words, *(" ".join(p) for p in zip(words, words[1:]))}
    for role, known in _COMMAND_ROLES:
        if names & known:
            return f"{role} with `{shown}`"
    return ""


def _from_refusals(transcript) -> list[Candidate]:
    """A command the user refused and the one that replaced it and worked: "Use `uv tool upgrade
    --reinstall X`, not `uv tool install --reinstall .`" (a correction, whether or not the user
    gave a reason)."""
    found = []
    for new, old, refused, _ in transcript.refused_alternatives():
        summary = f"Use `{new}`, not `{old}`"
        if len(summary) > 120 or "\n" in summary:
            continue
        found.append(
            Candidate(
                kind="preference",
                summary=summary,
                tags=["correction", "rejection"],
                content=f"The user refused `{_one_line(refused.subject, 200)}`; `{new}` then worked.",
                why="A refused command, and the one that replaced it and worked.",
            )
        )
    return found


FACT_RUNS = 2  # successful runs of a project command that make it a fact
# roles learned from the agent's own runs: a bare `mix test` or `cargo build` is every project's
# default and teaches nothing; how this project type-checks, lints, formats and starts does
_LEARNED_ROLES = ("Type-check", "Lint", "Format", "Start the app")


def _project_facts(transcript) -> list[Candidate]:
    """The commands that type-check, lint, format or start this project, learned from their
    successful use in the session (main chain): run FACT_RUNS times or more, or a server
    started in the background once. Stored once; another session reinforces them."""
    runs: dict[str, int] = {}
    commands: dict[str, str] = {}
    for call in transcript.calls:
        if (
            call.sidechain
            or call.rejected
            or not call.completed
            or call.is_error
            or call.name.lower() != "bash"
        ):
            continue
        command = call.input.get("command")
        summary = _project_command(command) if isinstance(command, str) else ""
        if not summary.startswith(_LEARNED_ROLES):
            continue
        background = call.input.get("run_in_background") is True
        runs[summary] = runs.get(summary, 0) + (
            FACT_RUNS if background and summary.startswith("Start the app") else 1
        )
        commands.setdefault(summary, command)
    return [
        Candidate(
            kind="observation",
            summary=summary,
            tags=["project-fact", "command"],
            content=f"Ran successfully {min(n, 99)} time(s) in the session: "
            f"`{_one_line(commands[summary], 200)}`",
            why="Learned from the project's own successful runs.",
        )
        for summary, n in runs.items()
        if n >= FACT_RUNS
    ]


# the first line a task runner printed is the command its recipe ran when it reads as one
_ECHOED_COMMAND = re.compile(r"^[a-z][\w.+-]*(?: [^\n]{0,100})?$")
_NOT_ECHOED = re.compile(
    r"^(?:make(?:\[\d+\])?|error|warning|info|note|running|nothing|"
    r"usage)\b|:\s|^\w+:$",
    re.I,
)


def _recipe_facts(transcript) -> list[Candidate]:
    """What this project's task runner recipes run, learned from their successful use: `just
    check` printed `cargo llvm-cov --fail-under-lines 100` before running it. One memory per
    runner, its recipes in the order first run."""
    from .commands import command_core, command_key

    recipes: dict[str, dict[str, str]] = {}
    for call in transcript.calls:
        if call.sidechain or call.is_error or not call.echoed:
            continue
        invoked = command_key(command_core(call.input.get("command", ""))).strip()
        words = invoked.split()
        first = call.echoed.strip().split("\n", 1)[0].strip()
        if (
            len(words) != 2
            or not _ECHOED_COMMAND.match(first)
            or _NOT_ECHOED.search(first)
            or first.split()[0] == words[0]
        ):
            continue
        recipes.setdefault(words[0], {}).setdefault(words[1], first)
    found = []
    for runner, ran in recipes.items():
        pairs = [f"{runner} {name}` runs `{command}" for name, command in ran.items()]
        summary = f"This project's {runner} recipes: `" + "`; `".join(pairs) + "`"
        while len(summary) > 120 and len(pairs) > 1:
            pairs.pop()
            summary = f"This project's {runner} recipes: `" + "`; `".join(pairs) + "`"
        if len(summary) > 120:
            continue
        found.append(
            Candidate(
                kind="observation",
                summary=summary,
                tags=["project-fact", "command"],
                content="; ".join(
                    f"`{runner} {name}` runs `{_one_line(command, 200)}`"
                    for name, command in ran.items()
                ),
                why=f"Each ran successfully in the session and {runner} printed the command first.",
            )
        )
    return found


_WHEN_HOOK = {
    "Stop": "When the agent stops",
    "SubagentStop": "When a subagent stops",
    "PreCompact": "Before a compaction",
    "SessionStart": "At session start",
    "UserPromptSubmit": "On each prompt",
}
_EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit"}
_SAYS_NOTHING = {"echo", "printf", "tee", "true", ":", "cat"}


def _hook_command(command: str) -> str:
    """What a hook command does, for a summary: `uv run pytest 2>&1` → `uv run pytest`; a
    script → its file name; `bash -c '...; uv run pyright | tee ...'` → `uv run pyright`."""
    import shlex

    from .commands import command_key

    text = command.strip()
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    if len(words) >= 3 and os.path.basename(words[0]) in ("bash", "sh", "zsh") and words[1] == "-c":
        for stage in re.split(r"\s*(?:;|&&|\|\||\|)\s*", words[2]):
            head = stage.split()[0] if stage.split() else ""
            if head and head not in _SAYS_NOTHING and not head.startswith(("/dev/", ">")):
                text = stage
                break
    key = command_key(text) or text
    first = key.split()[0] if key.split() else ""
    if "/" in first and len(key.split()) == 1:
        key = os.path.basename(first)
    return _one_line(key, 60)


def _hook_reason(feedback: str) -> str:
    """The first sentence of a hook's feedback that says why it blocked (not a heading)."""
    for line in feedback.replace("\\n", "\n").splitlines():
        line = line.strip()
        if (
            line
            and not line.startswith(("#", "-", "*", "`"))
            and not line.endswith((":", "..."))
            and len(line) <= 80
        ):
            return line.rstrip(".")
    return ""


def _hook_when(event: str) -> str:
    """When a hook runs, in words: "PostToolUse:Edit" (or MultiEdit, Write) → "After each edit"."""
    name, _, matcher = event.partition(":")
    if name == "PostToolUse" and matcher in _EDIT_TOOLS:
        return "After each edit"
    if name in ("PostToolUse", "PreToolUse") and matcher:
        return f"{'After' if name == 'PostToolUse' else 'Before'} each `{matcher}` call"
    return _WHEN_HOOK.get(name, f"On {name}")


def _project_hooks(transcript) -> list[Candidate]:
    """The project's own Claude Code hooks, from what Claude Code reported of them: what runs
    after edits and when the agent stops (so the agent need not run it again), and what a hook
    blocked the agent for (so it does that first next time)."""
    from .commands import command_key

    runs: dict[str, list[str]] = {}  # when it runs -> the commands
    blocks: dict[tuple[str, str, str], list[str]] = {}
    last: dict[tuple[str, str, str], int] = {}  # where each block's last time stands
    for hook in transcript.hooks:
        shown = _hook_command(hook.command)
        if not shown:
            continue
        if hook.feedback:
            reason = _hook_reason(hook.feedback)
            what = "the agent"
            if hook.blocked is not None:  # a PreToolUse hook refused this call
                command = hook.blocked.input.get("command")
                stage = (
                    re.split(r"\s*(?:&&|;|\|\|?)\s*", command)[-1]
                    if isinstance(command, str)
                    else ""
                )
                words = command_key(stage).split()
                what = f"`{' '.join(words[:2])}`" if words else f"`{hook.blocked.name}`"
            reasons = blocks.setdefault((hook.event, shown, what), [])
            if reason and reason not in reasons:
                reasons.append(reason)
            last[(hook.event, shown, what)] = hook.index
        elif shown not in runs.setdefault(_hook_when(hook.event), []):
            runs[_hook_when(hook.event)].append(shown)
    found = []
    for when, commands in runs.items():
        shown_list: list[str] = []
        for command in commands:
            trial = shown_list + [f"`{command}`"]
            if len(f"{when}, project hooks run {', '.join(trial)}") > 120:
                break
            shown_list = trial
        if not shown_list:
            continue
        verb = "a project hook runs" if len(shown_list) == 1 else "project hooks run"
        found.append(
            Candidate(
                kind="observation",
                summary=f"{when}, {verb} {', '.join(shown_list)}",
                tags=["project-fact", "hook"],
                content=f"{when}, Claude Code ran these project hooks successfully in the session: "
                + ", ".join(f"`{c}`" for c in commands),
                why="Reported by Claude Code as the project's own hooks.",
            )
        )
    for (event, shown, what), reasons in blocks.items():
        summary = f"The {event} hook `{shown}` blocks {what}"
        for reason in reasons:
            trial = summary + ("; " if ": " in summary else ": ") + reason
            if len(trial) > 120:
                break
            summary = trial
        after = _after_block(transcript, last.get((event, shown, what), -1))
        found.append(
            Candidate(
                kind="observation",
                summary=summary,
                tags=["project-fact", "hook"],
                content=f"The {event} hook `{shown}` blocked {what}: " + "; ".join(reasons) + after,
                why="The project's hook refused to let the agent go on until this was done.",
            )
        )
    return found


def _after_block(transcript, index: int) -> str:
    """What satisfied a hook after it last blocked the agent, for a memory's content: the
    files the agent then edited (at most two, with their changed lines) before the user spoke
    again; "" when it edited none or more (no clear evidence). The hook never blocked again."""
    from .error_lessons import changed_lines

    if index < 0:
        return ""
    following = [p.index for p in transcript.prompts if not p.sidechain and p.index > index]
    end = min(following) if following else float("inf")
    edits = [
        c
        for c in transcript.calls
        if not c.sidechain
        and index < c.index < end
        and c.completed
        and not c.is_error
        and not c.rejected
        and c.name.lower() in ("edit", "write", "multiedit")
    ]
    files = list(dict.fromkeys(str(c.input.get("file_path") or "") for c in edits))
    if not edits or len(files) > 2 or not all(files):
        return ""
    shown = []
    for f in files:
        lines = " | ".join(changed_lines(c, 160) for c in edits if c.input.get("file_path") == f)
        shown.append(f"`{os.path.basename(f)}`" + (f" ({_one_line(lines, 200)})" if lines else ""))
    shown = "; ".join(shown)
    return f". After its last block the agent edited {shown}, and it did not block again."


def _permission_facts(transcript) -> list[Candidate]:
    """What this project's permission settings refused (they outlast the session): commands
    that need approval, tools or paths not granted, directories blocked."""
    from .commands import command_key

    refused: dict[str, list[str]] = {}
    for why, call in transcript.permission_refusals():
        place = re.search(r"(\w+) in '([^']{1,60})' was blocked", call.result)
        if why == "blocked" and place:
            what = f"{place.group(1)} {place.group(2)}"
        elif call.name.lower() == "bash":
            words = command_key(str(call.input.get("command") or "")).split()
            what = " ".join(words[:2] if len(words) > 1 and words[1].startswith("-") else words[:1])
        else:
            path = call.input.get("file_path") or call.input.get("path")
            what = f"{call.name} {path}" if isinstance(path, str) and path else call.name
        if what and what not in refused.setdefault(why, []):
            refused[why].append(_one_line(what, 40))
    heads = {
        "approval": ("needs", "need", "approval here (refused without it)"),
        "not granted": ("needs", "need", "a permission not granted here"),
        "blocked": ("was", "were", "blocked: outside the allowed working directories"),
    }
    found = []
    for why, items in refused.items():
        one, many, rest = heads[why]
        shown: list[str] = []
        for item in items:
            trial = shown + [f"`{item}`"]
            if len(", ".join(trial)) + len(many) + len(rest) + 2 > 120:
                break
            shown = trial
        if not shown:
            continue
        verb = one if len(shown) == 1 else many
        found.append(
            Candidate(
                kind="observation",
                summary=f"{', '.join(shown)} {verb} {rest}",
                tags=["project-fact", "permission"],
                content="Refused by Claude Code's permission settings in this session: "
                + ", ".join(f"`{i}`" for i in items),
                why="Permission settings outlast the session: do not try again without asking.",
            )
        )
    return found


def _one_line(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word to ``limit`` characters (for content, not summaries)."""
    line = " ".join(str(text).split())
    if len(line) <= limit:
        return line
    cut = line.rfind(" ", 0, limit)
    return line[: cut if cut > limit // 2 else limit].rstrip(" ,;:") + " ..."


OPEN_PROBLEM = "Open problem:"
# a question about the next step of the task, not a choice for the project
_STEP_QUESTION = re.compile(
    r"\b(?:proceed|continue|go ahead|next|now|first|start with|ready|"
    r"this time|shall i|should i (?:run|start|commit|push))\b",
    re.I,
)


def _answer_summary(said) -> str:
    """ "Rig prefix: No rig (Don't use a rig prefix)" — the question's label (or the question)
    and the answer, with the chosen option's description when it fits in 120 characters."""
    label = said.header or said.about.rstrip("?")
    if not label or len(label) > 80 or _STEP_QUESTION.search(said.about):
        return ""
    if re.fullmatch(r"\s*\[REDACTED:[\w-]+\]\s*", said.text):
        return ""  # the choice was a secret: nothing to remember but the secret's marker
    base = f"{label}: {said.text}"
    if len(base) > 120:
        return ""
    detail = f"{base} ({said.detail.rstrip('.')})" if said.detail else base
    return detail if len(detail) <= 120 else base


# -------------------------------------------------------------------------------------------
# the optional model


def model_route(environ: Mapping[str, str]):
    """The route ``LESSONLOOP_AUTOMEM_MODEL`` names, or None for ``off``/unset."""
    from ..config import Route, default_base_url, route_url
    from ..errors import UsageError
    from ..providers import catalog

    value = (environ.get("LESSONLOOP_AUTOMEM_MODEL") or "").strip()
    if value in ("", "off"):
        return None
    if value.startswith("claude-"):
        value = f"anthropic:{value}"
    kind, _, model = value.partition(":")
    served = [name for name in catalog.names() if catalog.is_remote(name)]
    if kind not in served or not model:
        raise UsageError(
            f"LESSONLOOP_AUTOMEM_MODEL={value!r}: use off, claude-haiku-*, or <provider>:<model> "
            f"with a provider of {', '.join(served)}"
        )
    # LESSONLOOP_BASE_URL is the openai route's; every route follows its provider's own
    # variable (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, OLLAMA_HOST) otherwise
    base_url = environ.get("LESSONLOOP_BASE_URL") if kind == "openai" else None
    return Route(kind, model, route_url(kind, base_url or default_base_url(kind, environ)))


def model_seconds(environ: Mapping[str, str]) -> float:
    """Seconds one request to the model may take: ``LESSONLOOP_AUTOMEM_TIMEOUT`` or
    MODEL_SECONDS."""
    from ..errors import UsageError

    text = (environ.get("LESSONLOOP_AUTOMEM_TIMEOUT") or "").strip()
    if not text:
        return float(MODEL_SECONDS)
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 1 <= value <= 3600:  # also false for NaN
        raise UsageError(
            f"LESSONLOOP_AUTOMEM_TIMEOUT must be a number of seconds between 1 and "
            f"3600, not {text!r}"
        )
    return value


def longest_seconds(environ: Mapping[str, str]) -> float | None:
    """How long memorize may take with its model (every request at its limit), or None when no
    model is routed. Raises UsageError for a bad setting."""
    if model_route(environ) is None:
        return None
    return MODEL_REQUESTS * model_seconds(environ) + SETTLE_SECONDS


def answer_schema(limit: int) -> dict:
    """MEMORY_SCHEMA with at most ``limit`` memories (between 1 and MAX_MODEL_MEMORIES)."""
    schema = json.loads(json.dumps(MEMORY_SCHEMA))
    schema["properties"]["memories"]["maxItems"] = max(1, min(MAX_MODEL_MEMORIES, limit))
    return schema


def _line(text: object, limit: int) -> str:
    return " ".join(str(text or "").split())[:limit]


def _evidence(candidate: Candidate) -> str:
    """What a lesson rests on, on one line: its content (the user's words and where they were
    said, the error and the change that fixed it, the runs of a command). Its ``why`` is said
    by memorize itself ("Hit 2 times in one session, then fixed.") or repeats the content: a
    model sent it writes it into the lesson."""
    return (candidate.content.strip() or candidate.why.strip()).replace("\n", "; ")


def _extracts(candidates: list[Candidate]) -> str:
    """What the model may see: the numbered lessons of the session, each with its kind and
    evidence, redacted and capped — never raw transcript text. The lessons are what the
    deterministic pass made of the session's normalized events (the user's statements, the
    errors with the change that fixed them, the project's commands); an error with no evidence
    of its fix, or words of the user that state no lasting rule, are no lesson, and a model
    that is sent them makes memories of them."""
    lines = ["Lessons:"]
    for n, c in enumerate(candidates, 1):
        lines.append(f"{n}. {_line(c.summary, 300)}")
        lines.append(f"   evidence: {_line(_evidence(c), 300)}")
    # the answer's form, one memory per lesson by its number: a small model shown one example
    # memory answers one memory
    form = ", ".join(
        f'{{"lesson": {n}, "summary": <lesson {n} as one sentence>}}'
        for n in range(1, len(candidates) + 1)
    )
    lines.append(f'Answer: {{"memories": [{form}]}}')
    return cap(redact("\n".join(lines)), EXTRACT_CHARS)


# the start of ``why`` for a lesson the model worded: the lesson as the deterministic pass
# found it, so that another session's lesson finds this wording again (see _worded_before)
WORDED = 'Worded by the memorize model from "{}". '


def _worded_before(store, summary: str) -> tuple[str, str] | None:
    """The kind and summary of the active project memory the model worded from this lesson in
    an earlier session, if any: the lesson keeps that wording (and admission reinforces the
    memory) instead of a new one from another answer, which would be a duplicate."""
    row = store.query(
        "SELECT kind, summary FROM knowledge WHERE scope = ? AND status = 'active' "
        "AND instr(why, ?) = 1 ORDER BY id LIMIT 1",
        (PROJECT, WORDED.format(summary)),
    )
    return (row[0]["kind"], row[0]["summary"]) if row else None


def _worded(candidate: Candidate, summary: str) -> Candidate:
    """The lesson with the model's wording as its summary; kind, scope, content and evidence
    stay the lesson's."""
    from dataclasses import replace

    return replace(candidate, summary=summary, why=WORDED.format(candidate.summary) + candidate.why)


@dataclass
class ModelRun:
    """What one memorize did with its model: the record in the session's ``model.jsonl``."""

    route: str
    model: str = ""  # "used", or "not used: ..."
    lessons: int = 0  # lessons found
    sent: int = 0  # lessons sent to the model (not worded before; MAX_MODEL_MEMORIES)
    answered: int = 0  # memories in its answer
    rewritten: int = 0  # the model's wording accepted
    kept: int = 0  # lessons kept as found (no wording, the same words, or refused)
    reused: int = 0  # lessons worded in an earlier session, that wording again
    rejected: dict[str, int] = field(default_factory=dict)  # refusals by category
    refused: list[dict] = field(default_factory=list)  # each refused wording, and why
    seconds: float = 0.0

    def refuse(self, lesson: int, wording: str, why: str) -> None:
        category = why.split(":", 1)[0]
        self.rejected[category] = self.rejected.get(category, 0) + 1
        self.refused.append(
            {"lesson": lesson, "wording": redact(wording[:200]), "why": redact(why[:200])}
        )

    def record(self) -> dict:
        return dict(vars(self))


def _worded_earlier(
    store, found: list[Candidate], run: ModelRun
) -> tuple[list[Candidate], list[int]]:
    """The lessons with the wording an earlier session's model gave them, where one did (and
    kept the lesson's kind), and the indexes of the others: those the model is asked about,
    at most MAX_MODEL_MEMORIES. Done before the model is asked, so that a model that then
    fails leaves the earlier wordings (and no duplicate of them) all the same."""
    result, ask = list(found), []
    for n, c in enumerate(found):
        before = _worded_before(store, c.summary)
        if before is not None and before[0] == c.kind:
            result[n] = _worded(c, before[1])
            run.reused += 1
        elif len(ask) < MAX_MODEL_MEMORIES:
            ask.append(n)
    return result, ask


def _synthesize(
    route,
    found: list[Candidate],
    ask: list[int],
    record,
    environ: Mapping[str, str],
    root: Path | None,
    run: ModelRun,
) -> list[Candidate]:
    """The session's lessons, each of those at the indexes ``ask`` worded by the model where
    its wording passes the guards (``rewrite.problem``) and as found otherwise: never fewer
    lessons, never another kind, scope, content or evidence. Raises on any failure of the route
    (memorize then keeps the lessons as they were)."""
    import time

    from .. import config
    from ..errors import ProviderError
    from ..providers.base import Request
    from ..providers.registry import build
    from ..scenarios.base import schema_problems
    from . import rewrite

    started = time.monotonic()
    result = list(found)
    run.sent = len(ask)
    if ask:
        timeout = model_seconds(environ)
        # one attempt: no retry, no wait for a loopback server that is down (CONNECT_WAIT)
        settings = config.load(
            flags={"MAX_RETRIES": "0", "CONNECT_WAIT": "0"}, environ=environ, root=root
        )
        provider = build(route, settings)
        schema = answer_schema(len(ask))
        sent = [found[n] for n in ask]
        # temperature 0: a wording is no creative writing, and the same lessons get the same
        # words from the same model
        request = Request(
            role="memorize",
            max_tokens=MODEL_MAX_TOKENS,
            temperature=0.0,
            json_schema=schema,
            timeout=timeout,
            system=MODEL_SYSTEM,
            messages=[{"role": "user", "content": _extracts(sent)}],
        )
        try:
            completion = provider.complete(request)
        except ProviderError as exc:  # what was answered before it failed counts too
            if exc.completion is not None:
                record(provider.name, exc.completion)
            raise
        record(provider.name, completion)
        value = completion.parsed
        if value is None:
            value = json.loads(completion.text)
        problems = schema_problems(value, schema, "reply")
        if problems:
            raise ValueError(f"the model's memories do not match the schema: {problems[0]}")
        run.answered = len(value["memories"])
        done = set()
        for m in value["memories"]:
            number = m["lesson"]
            if not 1 <= number <= len(ask) or number in done:
                # a lesson named twice, or one never sent: the model's slip, not a memory
                run.refuse(number, str(m["summary"]), "number: no such lesson, or named twice")
                continue
            done.add(number)
            lesson = sent[number - 1]
            summary = rewrite.restore_spans(lesson.summary, " ".join(m["summary"].split()))
            if summary.rstrip(".") == lesson.summary.rstrip("."):
                continue  # the lesson as found
            why = rewrite.problem(lesson.summary, _evidence(lesson), summary)
            if why is not None:
                run.refuse(number, summary, why)
                continue
            result[ask[number - 1]] = _worded(lesson, summary)
            run.rewritten += 1
    run.kept = len(found) - run.rewritten - run.reused
    run.seconds = round(time.monotonic() - started, 1)
    return result


def _record_run(folder: Path, run: ModelRun) -> None:
    """One line per memorize with a model in the session's ``model.jsonl``: whether the
    model's answer was used, and what the guards did with it (``bench/memory_quality.py`` reads
    it; so may a person who wonders why a lesson kept its first wording)."""
    from ..timeutil import utc_now

    try:
        folder.mkdir(parents=True, exist_ok=True)
        capture.append(folder / "model.jsonl", {"at": utc_now(), **run.record()})
    except OSError:
        pass  # a record that cannot be written changes nothing that was stored


def _why_not(exc: Exception, environ: Mapping[str, str]) -> str:
    """Why the model's answer was not used, on one line: ``not used: Kind: reason``."""
    detail = " ".join(redact(str(exc)).split())[:300]
    if "timed out" in detail:
        try:
            limit = f"{model_seconds(environ):g} s"
        except Exception:  # noqa: BLE001 - the setting was fine enough to time out with
            limit = "its time limit"
        detail = f"no answer within {limit} (LESSONLOOP_AUTOMEM_TIMEOUT): {detail}"
    return f"not used: {exc.__class__.__name__}: {detail}"


# -------------------------------------------------------------------------------------------


def _key(candidate: Candidate) -> str:
    """What makes two candidates of a session the same memory (for idempotency)."""
    return fingerprint(candidate.kind, candidate.summary, "", [])


def _transcript_path(session_dir: Path, given: str | None) -> str | None:
    remembered = session_dir / "transcript_path"
    if given:
        return given
    try:
        return remembered.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def memorize(
    session: str,
    root: Path,
    transcript: str | None = None,
    user_root: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Result:
    """Memorize ``session`` of the project at ``root``; see the module docstring."""
    environ = os.environ if environ is None else environ
    state = consent.state(root)
    if state != "yes":
        return Result(skipped=f"consent is {state}")
    folder = paths.session_dir(session, root)
    with capture.locked(folder / "memorize.lock"):  # hooks of one session may end together
        with _known_secrets(folder, transcript):
            return _memorize(session, folder, root, transcript, user_root, environ)


def _known_secrets(folder: Path, transcript: str | None):
    """Secrets seen anywhere in the session, redacted everywhere in it: every value the whole
    transcript shows under a secret's name (or the hooks saw) is a marker wherever it stands
    bare in what memorize reads and stores, and in the session's captures, rewritten first
    (see known_secrets)."""
    from . import known_secrets

    return known_secrets.watching(
        folder, transcript=_transcript_path(folder, transcript), rewrite=True
    )


def has_new_lessons(session: str, root: Path, transcript: str | None = None) -> bool:
    """Whether memorizing ``session`` now would propose anything (consent aside): the hook
    asks before it starts a detached memorize."""
    return bool(_candidates(paths.session_dir(session, root), transcript)[0])


def _candidates(folder: Path, transcript: str | None):
    """The session's new candidates, its signals and feedback, and the keys already done.
    The hooks' captures and the transcript are read as one stream of normalized events (see
    events): error events deduplicated by tool_use_id, feedback from every prompt once."""
    from . import transcript as transcripts

    path = _transcript_path(folder, transcript)
    read = transcripts.read(path) if path else None
    signals = events.merge_errors(read, capture.read(folder / "signals.jsonl"))
    feedback = _feedback_stream(capture.read(folder / "feedback.jsonl"), read)
    try:
        done = set(json.loads((folder / "memorized.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        done = set()
    # what an earlier memorize of this session (a compaction, say) handled is not proposed
    # again, nor sent to a model again
    found = [
        c
        for c in _from_errors(signals, read) + _from_feedback(feedback, read)
        if _key(c) not in done
    ]
    return found, signals, feedback, done


def _memorize(
    session: str,
    folder: Path,
    root: Path,
    transcript: str | None,
    user_root: Path | None,
    environ: Mapping[str, str],
) -> Result:
    from ..knowledge.entries import get
    from ..store import open_store
    from ..store import runs as run_store

    found, signals, feedback, done = _candidates(folder, transcript)
    done_path = folder / "memorized.json"
    result = Result()
    if not found:
        return result
    candidates = found
    with open_store(root) as store:
        run = None
        try:
            route = model_route(environ)
            if route is not None:
                result.route = f"{route.provider}:{route.model}"
                run = ModelRun(route=result.route, lessons=len(found))
                candidates, ask = _worded_earlier(store, found, run)
                candidates = _synthesize(
                    route,
                    candidates,
                    ask,
                    lambda name, c: run_store.record_call(
                        store, None, None, None, "memorize", name, c, session_id=session
                    ),
                    environ,
                    root,
                    run,
                )
                result.model = "used"
        except Exception as exc:  # noqa: BLE001 - any failure keeps the deterministic result
            result.model = _why_not(exc, environ)
        if run is not None:
            run.model = result.model or ""
            _record_run(folder, run)
        fresh = []
        for c in candidates:
            if _key(c) not in done and c.kind in MEMORY_KINDS:
                fresh.append(c)
                done.add(_key(c))
        done.update(_key(c) for c in found)
        outcomes = admission.admit(store, [c.proposal(PROJECT, session) for c in fresh], root)
        for outcome in outcomes:
            if outcome.action == "added":  # as stored: redacted (a model may echo a secret)
                result.stored.append(get(store, outcome.entry_id).summary)
            elif outcome.action == "reinforced":
                result.reinforced += 1
    personal = [c for c in fresh if c.user_scope]
    if personal:
        user_root = user_root or paths.user_home()
        with open_store(user_root) as store:
            admission.admit(store, [c.proposal(USER, session) for c in personal], user_root)
    folder.mkdir(parents=True, exist_ok=True)
    done_path.write_text(json.dumps(sorted(done)), encoding="utf-8")
    return result
