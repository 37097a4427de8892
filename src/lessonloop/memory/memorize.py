"""Memorize: turn one session's captures and transcript into memories, through admission.

Runs at session end and before a compaction, never after every turn. With consent only.
Deterministic first — recurring errors and the fix that followed (``pattern``), explicit
choices (``decision``), stated preferences and rules (``preference``, the personal ones also in
the user root), single notable fixes (``observation``) — each summary stating the lesson, not
the words that triggered it. A configured model (``LESSONLOOP_AUTOMEM_MODEL``) may rewrite
them from redacted, capped extracts; any failure keeps the deterministic result. Idempotent per
session: what a session already stored is not proposed again.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .. import paths
from ..knowledge import admission
from ..knowledge.entries import fingerprint
from ..safety import cap, redact
from . import capture, consent
from .recall import MEMORY_KINDS, PROJECT, USER

RECURRING = 2  # the same normalized error this often makes a pattern
MODEL_SECONDS = 25  # one attempt at the model, no retries: the session-end hook has 60 s in all
EXTRACT_CHARS = 8000  # what a model may see, at most, after redaction
MAX_MODEL_MEMORIES = 10
MESSAGE_SHOWN = 6  # lessons named in the one line (each at most SUMMARY_MAX characters)
KIND_OF_FEEDBACK = {"decision": "decision", "preference": "preference", "rule": "preference",
                    "correction": "preference"}
HOW_TO_APPLY = {
    "pattern": "When this error shows up again, apply the fix first.",
    "decision": "Follow this decision in this project unless the user revisits it.",
    "preference": "Apply it whenever it is relevant, without being asked again.",
    "observation": "Keep it in mind when working on the same part of the project.",
}
MEMORY_SCHEMA = {
    "type": "object", "required": ["memories"],
    "properties": {"memories": {"type": "array", "maxItems": MAX_MODEL_MEMORIES, "items": {
        "type": "object", "required": ["type", "summary"],
        "properties": {
            "type": {"enum": list(MEMORY_KINDS)},
            "summary": {"type": "string", "minLength": 3, "maxLength": 120},
            "content": {"type": "string", "maxLength": 4000},
            "why": {"type": "string", "maxLength": 1000},
            "how_to_apply": {"type": "string", "maxLength": 1000},
            "scope": {"enum": ["project", "user"]},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 64}, "maxItems": 8},
        }}}}}


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
            kind=self.kind, scope=scope, summary=self.summary, content=self.content,
            why=self.why, how_to_apply=self.how_to_apply or HOW_TO_APPLY[self.kind],
            tags=["auto-memorize", self.kind, *self.tags], source="session",
            approved_by="consent", session_id=session, detail=self.why)


@dataclass
class Result:
    stored: list[str] = field(default_factory=list)
    reinforced: int = 0
    skipped: str | None = None  # why nothing was synthesized (consent)
    model: str | None = None  # "used", or why the model's answer was not

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
    counts: Counter = Counter(s.get("normalized") for s in signals if s.get("type") == "error")
    fixes = transcript.error_fixes() if transcript is not None else []
    if transcript is not None:  # the transcript saw the same errors: count the larger number
        seen = Counter(e.normalized for call in transcript.calls for e in call.errors)
        counts = Counter({k: max(counts.get(k, 0), seen.get(k, 0)) for k in counts | seen})
    found, handled = [], set()
    for fix in fixes:
        lesson = fix.lesson.strip()
        key = (fix.normalized, fix.fixed_by)  # one lesson per error and fix: the lesson text
        if not lesson or key in handled:      # quotes the first error line, paths and all
            continue
        handled.add(key)
        times = counts.get(fix.normalized, 1)
        first = fix.error.errors[0].line if fix.error.errors else fix.error.result[:300]
        found.append(Candidate(
            kind="pattern" if times >= RECURRING else "observation", summary=lesson,
            content=f"Error: {first}\nFixed by: {fix.fixed_by}",
            why=f"Hit {times} time{'s' if times != 1 else ''} in one session, then fixed.",
            tags=["error"]))
    return found


def _from_feedback(feedback: list[dict], transcript) -> list[Candidate]:
    items = [f for f in feedback if f.get("type") == "feedback"]
    if not items and transcript is not None:  # no capture hooks ran: read the prompts instead
        from .signals import prompt_feedback

        items = [{"kind": f.kind, "lesson": f.lesson, "text": f.text, "user_scope": f.user_scope}
                 for p in transcript.prompts if not p.sidechain for f in prompt_feedback(p.text)]
    corrected = {}
    if transcript is not None:
        for correction in transcript.corrections():
            if correction.corrected is not None:
                corrected[correction.feedback.lesson.lower()] = correction.corrected.subject
    found, lessons = [], set()
    for item in items:
        kind = KIND_OF_FEEDBACK.get(str(item.get("kind")))
        lesson = str(item.get("lesson") or "").strip()
        if kind is None or not lesson or lesson.lower() in lessons:
            continue
        lessons.add(lesson.lower())
        why = f"The user said: \"{str(item.get('text') or lesson)[:300]}\""
        if lesson.lower() in corrected:
            why += f" (correcting: {corrected[lesson.lower()][:200]})"
        found.append(Candidate(kind=kind, summary=lesson, content=str(item.get("text") or ""),
                               why=why, tags=[str(item.get("kind"))],
                               user_scope=bool(item.get("user_scope")) and kind == "preference"))
    return found


# -------------------------------------------------------------------------------------------
# the optional model

def model_route(environ: Mapping[str, str]):
    """The route ``LESSONLOOP_AUTOMEM_MODEL`` names, or None for ``off``/unset."""
    from ..config import Route, default_base_url, route_url
    from ..errors import UsageError

    value = (environ.get("LESSONLOOP_AUTOMEM_MODEL") or "").strip()
    if value in ("", "off"):
        return None
    if value.startswith("claude-"):
        value = f"anthropic:{value}"
    kind, _, model = value.partition(":")
    if kind not in ("anthropic", "ollama", "openai") or not model:
        raise UsageError(f"LESSONLOOP_AUTOMEM_MODEL={value!r}: use off, anthropic:<model>, "
                         "claude-haiku-*, ollama:<model> or openai:<model>")
    # LESSONLOOP_BASE_URL is the openai route's; every route follows its provider's own
    # variable (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, OLLAMA_HOST) otherwise
    base_url = environ.get("LESSONLOOP_BASE_URL") if kind == "openai" else None
    return Route(kind, model, route_url(kind, base_url or default_base_url(kind, environ)))


def _extracts(candidates: list[Candidate], signals: list[dict], feedback: list[dict]) -> str:
    """What the model may see: redacted, capped lines — never raw transcript text."""
    lines = ["Candidate memories:"]
    lines += [f"- [{c.kind}] {c.summary} | {c.content[:300]} | {c.why[:200]}" for c in candidates]
    lines.append("Error lines seen:")
    lines += [f"- {s.get('line', '')[:300]}" for s in signals if s.get("type") == "error"][:20]
    lines.append("What the user said:")
    lines += [f"- ({f.get('kind')}) {f.get('text', '')[:300]}" for f in feedback
              if f.get("type") == "feedback"][:20]
    return cap(redact("\n".join(lines)), EXTRACT_CHARS)


def _synthesize(route, extracts: str, record, environ: Mapping[str, str]) -> list[Candidate]:
    from .. import config
    from ..providers.base import Request
    from ..providers.registry import build
    from ..scenarios.base import schema_problems

    provider = build(route, config.load(flags={"MAX_RETRIES": "0"}, environ=environ))
    completion = provider.complete(Request(
        role="memorize", max_tokens=1500, temperature=0.2, json_schema=MEMORY_SCHEMA,
        timeout=MODEL_SECONDS,
        system=("You turn a coding session's signals into durable memories. Each summary states "
                "the lesson itself as an instruction or fact (<= 120 characters), never the "
                "user's trigger words. Types: pattern (a recurring error and its fix), decision "
                "(an explicit project choice), preference (how the user wants things done), "
                "observation (a single notable fact). Keep only what the signals support. Reply "
                'with JSON {"memories": [{"type", "summary", "content", "why", "how_to_apply", '
                '"scope": "project"|"user", "tags"}]}.'),
        messages=[{"role": "user", "content": extracts}]))
    record(provider.name, completion)
    value = completion.parsed
    if value is None:
        value = json.loads(completion.text)
    problems = schema_problems(value, MEMORY_SCHEMA, "reply")
    if problems:
        raise ValueError(f"the model's memories do not match the schema: {problems[0]}")
    return [Candidate(kind=m["type"], summary=m["summary"].strip(), content=m.get("content", ""),
                      why=m.get("why", ""), how_to_apply=m.get("how_to_apply", ""),
                      tags=[t for t in m.get("tags", []) if isinstance(t, str)][:5],
                      user_scope=m.get("scope") == "user" and m["type"] == "preference")
            for m in value["memories"] if m["summary"].strip()]


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


def memorize(session: str, root: Path, transcript: str | None = None,
             user_root: Path | None = None,
             environ: Mapping[str, str] | None = None) -> Result:
    """Memorize ``session`` of the project at ``root``; see the module docstring."""
    environ = os.environ if environ is None else environ
    state = consent.state(root)
    if state != "yes":
        return Result(skipped=f"consent is {state}")
    folder = paths.session_dir(session, root)
    with capture.locked(folder / "memorize.lock"):  # hooks of one session may end together
        return _memorize(session, folder, root, transcript, user_root, environ)


def _memorize(session: str, folder: Path, root: Path, transcript: str | None,
              user_root: Path | None, environ: Mapping[str, str]) -> Result:
    from ..knowledge.entries import get
    from ..store import open_store
    from ..store import runs as run_store
    from . import transcript as transcripts

    signals = capture.read(folder / "signals.jsonl")
    feedback = capture.read(folder / "feedback.jsonl")
    path = _transcript_path(folder, transcript)
    read = transcripts.read(path) if path else None
    done_path = folder / "memorized.json"
    try:
        done = set(json.loads(done_path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        done = set()
    # what an earlier memorize of this session (a compaction, say) handled is not proposed
    # again, nor sent to a model again
    found = [c for c in _from_errors(signals, read) + _from_feedback(feedback, read)
             if _key(c) not in done]
    result = Result()
    if not found:
        return result
    candidates = found
    with open_store(root) as store:
        try:
            route = model_route(environ)
            if route is not None:
                candidates = _synthesize(route, _extracts(found, signals, feedback),
                                         lambda name, c: run_store.record_call(
                                             store, None, None, None, "memorize", name, c),
                                         environ)
                result.model = "used"
        except Exception as exc:  # noqa: BLE001 - any failure keeps the deterministic result
            result.model = f"not used: {exc.__class__.__name__}: {redact(str(exc))[:200]}"
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
