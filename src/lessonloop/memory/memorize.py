"""Memorize: turn one session's captures and transcript into memories, through admission.

Runs at session end and before a compaction, never after every turn. With consent only.
Deterministic first — recurring errors and the fix that followed (``pattern``), explicit
choices (``decision``), stated preferences and rules (``preference``, the personal ones also in
the user root), single notable fixes (``observation``), and what the agent stated it found or
set up (``conclusions``) — each summary stating the lesson, not the words that triggered it. A
configured model (``LESSONLOOP_AUTOMEM_MODEL``) may word those lessons anew, from redacted,
capped extracts, and propose lessons of its own from the session's redacted, capped events;
any failure keeps the deterministic result.
Idempotent per session: what a session already stored is not proposed again.

The steps, each in its module: collect the session's lessons (``session_lessons``: errors and
their fixes, what the user said, what the agent concluded; ``facts``: the project's commands,
recipes, hooks and permissions), as ``candidate.Candidate``; let a configured model word them
(``model_wording``) and add its own (``model_lessons``); store them through admission (here:
``memorize``, ``has_new_lessons``); then count and judge the memories the session was given,
helped or misled (``evidence``).

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

What the model adds (``model_lessons``; ``LESSONLOOP_AUTOMEM_PROPOSE``, on by default)
    A second request sends the session's normalized events (the transcript reader's redacted,
    capped records, one line each, the user's words and the failures kept first when they do
    not all fit) and asks for at most five memories {kind, summary, content, scope}. A proposal
    is kept only when it is a whole summary, no story of the session, grounded (every command,
    path, name and number of it occurs in the events sent: ``rewrite.ungrounded``, the check a
    wording is held to), supported by its kind's evidence (a preference or decision by the
    user's words, a pattern by a failure) and not a lesson already found (merged, not added
    twice); kept ones go through the same admission and dedupe. A failure of either request
    keeps the deterministic lessons. Events proposed from are marked in ``memorized.json``, so a
    second memorize of the same events asks nothing.

The model and its time limit
    One request per step (two when the model proposes), no retries, no wait for a loopback
    server that refuses connections; an answer
    off the memory schema gets the provider's one repair round (a second request). Each
    request may take ``LESSONLOOP_AUTOMEM_TIMEOUT`` seconds (default ``MODEL_SECONDS``, 120:
    a 0.5B model on a CPU reads ~40 and writes ~10 tokens a second), so memorize with a model
    may take ``longest_seconds()`` = two requests per step plus ``SETTLE_SECONDS``. The prompt is kept
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..knowledge import admission
from ..knowledge.entries import fingerprint
from ..timeutil import utc_now
from . import capture, consent, events, evidence, privacy
from .candidate import Candidate
from .model_wording import (
    MODEL_REQUESTS,
    ModelRun,
    longest_seconds,
    model_route,
    proposing,
    record_run,
    synthesize,
    why_not_used,
    worded_earlier,
)
from .recall import MEMORY_KINDS, PROJECT, USER
from .session_lessons import feedback_stream, from_errors, from_feedback

# (the model step's route and limits are part of memorize's interface: the hooks and the
# memory use cases read them here)
__all__ = [
    "MEMORY_KINDS",
    "MESSAGE_SHOWN",
    "MODEL_REQUESTS",
    "Result",
    "has_new_lessons",
    "longest_seconds",
    "memorize",
    "model_route",
]

MESSAGE_SHOWN = 6  # lessons named in the one line (each at most SUMMARY_MAX characters)


@dataclass
class Result:
    stored: list[str] = field(default_factory=list)
    reinforced: int = 0
    skipped: str | None = None  # why nothing was synthesized (consent)
    model: str | None = None  # "used", or why the model's answer was not ("not used: ...")
    route: str | None = None  # the model route asked (provider:model), when one was
    stale: list[str] = field(default_factory=list)  # memories marked stale (their summaries)
    # a hook's capture still being written when memorize had waited its time: not read
    unsettled: str | None = None

    @property
    def message(self) -> str | None:
        """``Stored N new memories: a, b, c``, each lesson whole (a cut one hides its fix), the
        first MESSAGE_SHOWN of them, and what was left out; None when there is neither."""
        lines = []
        if self.stored:
            names = ", ".join(self.stored[:MESSAGE_SHOWN])
            if len(self.stored) > MESSAGE_SHOWN:
                names += f", and {len(self.stored) - MESSAGE_SHOWN} more (`lessonloop memory list`)"
            noun = "memory" if len(self.stored) == 1 else "memories"
            lines.append(f"Stored {len(self.stored)} new {noun}: {names}")
        if self.unsettled:
            lines.append(self.unsettled)
        return ". ".join(lines) or None


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
    review: bool = False,
) -> Result:
    """Memorize ``session`` of the project at ``root``; see the module docstring. ``review``
    (``memorize --review``): new memories are held as pending until the user approves them."""
    environ = os.environ if environ is None else environ
    if privacy.memory_off(environ):
        return Result(skipped=f"{privacy.SWITCH} is off")
    state = consent.state(root)
    if state != "yes":
        return Result(skipped=f"consent is {state}")
    folder = paths.session_dir(session, root)
    from . import deferred

    # the hooks' captures still being written (each is a few milliseconds: one still running
    # after deferred.SETTLE_SECONDS is stuck, and is left for a later memorize)
    unsettled = None
    if not deferred.settled(folder):
        unsettled = (
            f"A capture of session {session} was still being written after "
            f"{deferred.SETTLE_SECONDS:.0f} s and was left out: run `lessonloop memorize "
            f"--session-id {session}` later to add it"
        )
    with capture.locked(folder / "memorize.lock"):  # hooks of one session may end together
        started = utc_now()
        with _known_secrets(folder, transcript):
            result = _memorize(session, folder, root, transcript, user_root, environ, review)
            # then what the session says of the memories it was given (helped, misled)
            evidence.judge_session(
                session, folder, root, user_root, _transcript_path(folder, transcript)
            )
        result.stale = _check_staleness(folder, root, transcript, environ, started)
    result.unsettled = unsettled
    return result


def _check_staleness(
    folder: Path, root: Path, transcript: str | None, environ: Mapping[str, str], started: str
) -> list[str]:
    """Once per session: mark the project memories that name a file or command the project no
    longer has (``staleness``); what this session stored (since ``started``) is only looked
    at, so that its loss later is seen. A failure here never costs the session its memories."""
    from . import staleness

    try:
        if not (paths.db_path(root).exists() and capture.mark_once(folder / "stale-checked")):
            return []
        cwd = _transcript_cwd(_transcript_path(folder, transcript))
        project = staleness.project_dir(root, cwd, environ)
        if project is None:
            return []
        from ..store import open_store

        with open_store(root) as store:
            found = staleness.check(store, root, project, fresh_since=started)
        return [f.summary for f in found if f.action == "marked"]
    except Exception:  # noqa: BLE001 - staleness is a side stage
        return []


def _transcript_cwd(path: str | None, lines: int = 50) -> str | None:
    """The session's working folder, from the first transcript events that carry one."""
    if not path:
        return None
    try:
        with open(path, "rb") as handle:
            for _ in range(lines):
                raw = handle.readline(1_000_000)
                if not raw:
                    break
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(event, dict) and isinstance(event.get("cwd"), str):
                    return event["cwd"]
    except OSError:
        pass
    return None


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
    from . import deferred

    folder = paths.session_dir(session, root)
    deferred.settled(folder)  # (memorize itself says when one is still being written)
    found, _, _, done, read = _candidates(folder, transcript)
    return bool(found) or _events_to_propose(read, done, os.environ) is not None


def _candidates(folder: Path, transcript: str | None):
    """The session's new candidates, its signals and feedback, and the keys already done.
    The hooks' captures and the transcript are read as one stream of normalized events (see
    events): error events deduplicated by tool_use_id, feedback from every prompt once."""
    from . import transcript as transcripts

    path = _transcript_path(folder, transcript)
    read = transcripts.read(path) if path else None
    if read is not None and read.private:  # what a capture hook took of a private span
        privacy.scrub_captures(folder, read.private)
    signals = events.merge_errors(read, capture.read(folder / "signals.jsonl"))
    feedback = feedback_stream(capture.read(folder / "feedback.jsonl"), read)
    try:
        done = set(json.loads((folder / "memorized.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        done = set()
    # what an earlier memorize of this session (a compaction, say) handled is not proposed
    # again, nor sent to a model again
    found = [
        c for c in from_errors(signals, read) + from_feedback(feedback, read) if _key(c) not in done
    ]
    return found, signals, feedback, done, read


def _events_to_propose(read, done: set, environ: Mapping[str, str]) -> str | None:
    """The session's events for the model to propose lessons from (``model_lessons``), or None:
    no model routed, proposing off, no transcript, or these events were proposed from before."""
    from . import model_lessons

    try:
        if read is None or model_route(environ) is None or not proposing(environ):
            return None
    except Exception:  # noqa: BLE001 - a bad setting: memorize reports it when it asks
        return None
    events = model_lessons.session_events(read)
    return events if events and model_lessons.events_key(events) not in done else None


def _memorize(
    session: str,
    folder: Path,
    root: Path,
    transcript: str | None,
    user_root: Path | None,
    environ: Mapping[str, str],
    review: bool = False,
) -> Result:
    from ..knowledge.entries import get
    from ..store import open_store
    from ..store import runs as run_store

    found, signals, feedback, done, read = _candidates(folder, transcript)
    done_path = folder / "memorized.json"
    result = Result()
    events = _events_to_propose(read, done, environ)
    if not found and events is None:
        return result
    candidates = found
    with open_store(root) as store:
        run = None
        try:
            route = model_route(environ)
            if route is not None:
                result.route = f"{route.provider}:{route.model}"
                run = ModelRun(route=result.route, lessons=len(found))
                candidates, ask = worded_earlier(store, found, run)

                def record(name, completion):
                    run_store.record_call(
                        store, None, None, None, "memorize", name, completion, session_id=session
                    )

                worded = synthesize(route, candidates, ask, record, environ, root, run)
                if events is not None:  # its own lessons, from the events (model_lessons)
                    from . import model_lessons

                    worded += model_lessons.propose(
                        route, events, worded, record, environ, root, run
                    )
                    done.add(model_lessons.events_key(events))
                candidates = worded  # (any failure above: the deterministic lessons stand)
                result.model = "used"
        except Exception as exc:  # noqa: BLE001 - any failure keeps the deterministic result
            result.model = why_not_used(exc, environ)
        if run is not None:
            run.model = result.model or ""
            record_run(folder, run)
        fresh = []
        for candidate in candidates:
            if _key(candidate) not in done and candidate.kind in MEMORY_KINDS:
                fresh.append(candidate)
                done.add(_key(candidate))
        done.update(_key(candidate) for candidate in found)
        outcomes = admission.admit(
            store,
            [candidate.proposal(PROJECT, session) for candidate in fresh],
            root,
            hold=review,
        )
        for outcome in outcomes:
            stored = get(store, outcome.entry_id) if outcome.entry_id is not None else None
            if outcome.action == "added" and stored is not None:  # as stored: redacted
                result.stored.append(stored.summary)  # (a model may echo a secret)
            elif outcome.action == "reinforced":
                result.reinforced += 1
    personal = [candidate for candidate in fresh if candidate.user_scope]
    if personal:
        user_root = user_root or paths.user_home()
        with open_store(user_root) as store:
            admission.admit(
                store,
                [candidate.proposal(USER, session) for candidate in personal],
                user_root,
                hold=review,
            )
    folder.mkdir(parents=True, exist_ok=True)
    done_path.write_text(json.dumps(sorted(done)), encoding="utf-8")
    return result
