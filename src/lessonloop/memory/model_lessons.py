"""Memorize's model route, second step: the model proposes lessons of its own from the
session's events (``propose``), where the deterministic pass needs understanding it does not
have — a fix's cause, a project fact, a decision the user stated in context.

What the model reads (``session_events``): the session's normalized events as the transcript
reader gives them (already redacted and capped per field), one line each, oldest first — the
user's prompts, refusal reasons, answers and own commands; the agent's commands with their
outcome and error line; its edits with the file and first changed line; the project's hooks; the
agent's own words — redacted again as a whole and capped to ``EVENT_CHARS``, so that the prompt
fits a small local model's context (the kit's 4,096 tokens by default). When a session holds
more, the user's words and the failures are kept first, then the commands and edits, then the
agent's words; the lines kept stay in session order.

What it answers: one structured-output request (``PROPOSAL_SCHEMA``, temperature 0): at most
``MAX_PROPOSED`` memories of {kind, summary, content, scope}. Each is checked before it may join
the deterministic lessons (``accepted``):

- form: a whole summary, 3 to 120 characters, no ellipsis, no JSON debris (``rewrite.form_problem``);
- grounding: every backticked span and technical token of its summary and content (paths,
  identifiers, commands, numbers) occurs in the events the model was sent
  (``rewrite.ungrounded``, the check a rewording is held to as well): a made-up path, command or
  count is refused;
- narration: a summary that tells what someone did in the session ("The user removed ...") or
  speaks the conversation's words ("we", "you", "let's") is no lesson;
- one-off: a preference or decision that opens with a task's verb ("Implement the refactoring
  plan.") and says nothing lasting ("always", "never", "instead", "keep", "don't") is a request
  for the task at hand;
- unsupported: a preference or decision must be in the user's words (most of its words are in
  what the user said), a pattern must rest on a failure of the session (a name or two words in
  common with a failed step);
- merged: a proposal that says what a deterministic lesson (or an earlier proposal) already says
  — a backticked span in common, or most of the same words — is that lesson, not a second one.

What passes becomes a ``Candidate`` of its kind whose ``why`` says the model proposed it, and
goes through the same admission and dedupe as every lesson. Any failure of the request (time
limit, refused connection, an answer off the schema) raises: memorize then keeps the
deterministic result. A session's events the model already proposed from are not sent again
(``events_key`` in the session's ``memorized.json``).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from pathlib import Path

from ..safety import cap, redact
from . import rewrite
from .candidate import Candidate
from .events import INTERRUPTED
from .model_wording import ModelRun, model_seconds, structured_answer
from .recall import MEMORY_KINDS

EVENT_CHARS = 6000  # ~1,700 tokens: with the answer, well inside a 4,096-token context
LINE_CHARS = 300  # one event's line, at most
PROPOSE_MAX_TOKENS = 700  # five memories of ~100 tokens, with the grammar's indentation
MAX_PROPOSED = 5
PROPOSED = "Proposed by the memorize model from the session's events (not a check it ran)."
# a proposal that shares this much of its words (of the shorter's) with a lesson already found
# is that lesson
SAME_WORDS = 0.5
# A lesson says what to do or what holds; a small model often narrates the session instead
# ("The user removed the unused import since we're no longer using ..."): a story of what
# happened, in the words of the conversation, is no memory.
CONVERSATION = frozenset(
    "i i'm i'd i've me my we we're we've our us you you're your let's lets please thanks "
    "successfully".split()
)
_NARRATION = re.compile(
    r"^(?:(?:the\s+)?(?:user|agent|assistant|claude|model)\s+(?:\w+\s+){0,2}?)?"
    r"(?!decided\b|chose\b|preferred\b|need\w*\b)[a-z]+ed\b",
    re.I,
)
# A request for the task at hand ("Implement the refactoring plan.") is no rule for later
# sessions: a preference or decision that opens with a task's verb and holds no word of a lasting
# rule is one.
TASK_VERBS = frozenset(
    "implement add create write fix update refactor remove delete rename move build make "
    "generate document finish complete continue start review test check".split()
)
LASTING = frozenset(
    "always never every each whenever instead rather only prefer prefers keep don't do not "
    "no without avoid".split()
)
# the lines of the events a kind of lesson rests on: what the user said, for a preference or a
# decision; a failure (or a refusal, an interruption, a hook's block), for a pattern
_SAID = ("USER",)
_FAILED = ("FAILED", "REFUSED", "INTERRUPTED", "HOOK")

PROPOSAL_SCHEMA = {
    "type": "object",
    "required": ["memories"],
    "properties": {
        "memories": {
            "type": "array",
            "minItems": 0,  # a session may teach nothing a model can add
            "maxItems": MAX_PROPOSED,
            "items": {
                "type": "object",
                "required": ["kind", "summary", "content", "scope"],
                "properties": {
                    "kind": {"type": "string", "enum": sorted(MEMORY_KINDS)},
                    # past 120 so that a sentence too long is seen whole (and refused)
                    "summary": {"type": "string", "minLength": 3, "maxLength": 160},
                    "content": {"type": "string", "maxLength": 400},
                    "scope": {"type": "string", "enum": ["project", "user"]},
                },
            },
        }
    },
}

PROPOSE_SYSTEM = (
    "You read the events of a coding session between a user and an AI agent, and write the "
    "lessons a careful engineer would keep for the next sessions in this project: a rule or "
    "preference the user stated (kind preference), a decision the user made (decision), the "
    "change that fixed a failing step and why it failed (pattern), a fact about the project: "
    "how to build, test, lint or run it, where things are (observation). Only what the events "
    "show. No lesson for a one-off request of the task at hand, none that repeats a lesson "
    "already kept, no lesson at all when there is none. summary: the lesson itself as one "
    "sentence of at most 120 characters, said as what to do or what holds, never as what "
    "happened (not 'The user asked ...'); for example 'Run the tests with `uv run pytest`.', "
    "'Use pnpm, not npm.', 'Keep `from .x import y` in `app.py`: `load` uses it.'. Write "
    "commands, paths and names in backticks exactly as the events have them. content: the "
    "evidence in one sentence. scope: user only for a "
    "personal preference that holds in every project, else project. Answer with JSON only."
)


def _line(text: object, limit: int = LINE_CHARS) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "~"


def _call_line(call) -> tuple[int, str] | None:
    """A tool call's line and its rank (0 first kept), or None for a call not worth a line."""
    from .transcript_model import command_of, error_line, failed, file_of, succeeded

    name = call.name
    command = command_of(call)
    subject = command or file_of(call) or call.subject
    if call.rejected:
        return 0, f"REFUSED by the user: {name} {_line(subject, 200)}"
    if call.result.lstrip().startswith(INTERRUPTED):
        return 1, f"INTERRUPTED by the user: {name} {_line(subject, 200)}"
    if failed(call):
        return 1, f"FAILED {name} {_line(subject, 160)}: {_line(error_line(call), 200)}"
    if not succeeded(call):
        return None
    if command:
        return 2, f"RAN {_line(command, 200)}"
    lowered = name.lower()
    if lowered in ("edit", "multiedit", "write", "notebookedit"):
        edit = call.input
        if isinstance(edit.get("edits"), list) and edit["edits"]:
            edit = edit["edits"][0] if isinstance(edit["edits"][0], dict) else {}
        changed = str(edit.get("new_string") or edit.get("content") or "")
        before = set(str(edit.get("old_string") or "").splitlines())
        # the first line the edit added (its context lines are in the old text too)
        first_line = next(
            (ln for ln in changed.splitlines() if ln.strip() and ln not in before), ""
        )
        return 2, f"EDITED {_line(file_of(call), 160)}: {_line(first_line, 120)}"
    return None  # reads, searches, todo lists: what the agent looked at teaches little


def session_events(transcript) -> str:
    """The session's events as the model reads them: main-chain lines, oldest first, the most
    telling kept when they do not all fit in EVENT_CHARS; redacted and capped. What a proposal
    must rest on (its grounds)."""
    ranked: list[tuple[int, int, str]] = []  # (rank, index, line)
    for prompt in transcript.prompts:
        if not prompt.sidechain:
            ranked.append((0, prompt.index, f"USER: {_line(prompt.text, 600)}"))
    for said in transcript.said:
        if said.sidechain:
            continue
        if said.kind == "rejection":
            line = f"USER refused {_line(said.about, 120)} because: {_line(said.text)}"
        elif said.kind == "answer":
            line = f"USER answered {_line(said.about, 160)}: {_line(said.text)}"
        else:
            line = f"USER ran: {_line(said.text)}"
        ranked.append((0, said.index, line))
    for call in transcript.calls:
        if call.sidechain:
            continue
        got = _call_line(call)
        if got is not None:
            ranked.append((got[0], call.index, got[1]))
    for hook in transcript.hooks:
        line = f"HOOK {hook.event} ran {_line(hook.command, 160)}"
        if hook.feedback:
            line += f": blocked: {_line(hook.feedback, 200)}"
        ranked.append((1, hook.index, line))
    for text in transcript.texts:
        if not text.sidechain:
            ranked.append((3, text.index, f"AGENT: {_line(text.text)}"))
    kept: list[tuple[int, str]] = []
    room, seen = EVENT_CHARS - 40, set()
    for _rank, index, line in sorted(ranked):
        if line in seen or len(line) + 1 > room:
            continue  # (a repeated line says nothing new; a longer one may not fit)
        seen.add(line)
        kept.append((index, line))
        room -= len(line) + 1
    if not kept:
        return ""
    lines = [line for _, line in sorted(kept)]
    return cap(redact("Session events, oldest first:\n" + "\n".join(lines)), EVENT_CHARS)


def events_key(events: str) -> str:
    """What marks a session's events as proposed from, in its ``memorized.json``."""
    return "model-proposed:%08x" % zlib.crc32(events.encode("utf-8", "replace"))


def _same_lesson(summary: str, other: str) -> bool:
    """Whether two summaries say the same lesson: a backticked span in common, or most of
    their words (by stem) the same."""
    if set(rewrite.spans(summary)) & set(rewrite.spans(other)):
        return True
    mine, theirs = rewrite._stems(summary, rewrite.FREE), rewrite._stems(other, rewrite.FREE)
    if not mine or not theirs:
        return False
    return len(mine & theirs) / min(len(mine), len(theirs)) >= SAME_WORDS


def _unsupported(kind: str, summary: str, content: str, events: str) -> str | None:
    """Why a proposal of ``kind`` lacks the evidence its kind needs (category ``unsupported``),
    or None: a preference or a decision is the user's, so most of its words are in what the
    user said; a pattern is an error and its fix, so it shares a name or two words with a
    failure of the session."""
    heads: tuple[str, ...]
    if kind in ("preference", "decision"):
        heads, need = _SAID, "what the user said"
    elif kind == "pattern":
        heads, need = _FAILED, "a failure of the session"
    else:
        return None
    lines = "\n".join(ln for ln in events.splitlines() if ln.startswith(heads))
    theirs = rewrite._stems(lines, rewrite.FREE)
    mine = rewrite._stems(summary, rewrite.FREE)
    if kind == "pattern":
        named = rewrite.technical(f"{summary} {content}") | set(
            rewrite.spans(f"{summary} {content}")
        )
        shared = any(token.lower() in lines.lower() for token in named)
        if shared or len(rewrite._stems(f"{summary} {content}", rewrite.FREE) & theirs) >= 2:
            return None
    elif mine and len(mine & theirs) * 2 >= len(mine):
        return None
    return f"unsupported: a {kind} with nothing of it in {need}"


def _one_off(kind: str, summary: str) -> str | None:
    """Why a preference or decision is a request for the task at hand (category ``one-off``),
    or None."""
    words = rewrite._words(summary)
    if kind in ("preference", "decision") and words and words[0] in TASK_VERBS:
        if not LASTING & set(words):
            return f"one-off: {words[0]!r} the task at hand, no lasting rule"
    return None


def _narration(summary: str) -> str | None:
    """Why ``summary`` tells the session rather than a lesson (category ``narration``), or
    None."""
    said = next((w for w in rewrite._words(summary) if w in CONVERSATION), None)
    if said is not None:
        return f"narration: the conversation's word {said!r}"
    if _NARRATION.match(summary):
        return "narration: what someone did in the session, not a lesson"
    return None


def accepted(
    memories: list[dict], events: str, known: list[Candidate], run: ModelRun
) -> list[Candidate]:
    """The proposals that pass the checks (see the module docstring), as candidates; each
    refusal is counted in ``run`` with its reason."""
    taken: list[str] = [c.summary for c in known]
    out: list[Candidate] = []
    for number, memory in enumerate(memories, 1):
        summary = " ".join(str(memory.get("summary", "")).split())
        content = " ".join(str(memory.get("content", "")).split())
        kind = str(memory.get("kind"))
        why = None
        if kind not in MEMORY_KINDS:
            why = f"form: no memory kind {kind!r}"
        else:
            why = rewrite.form_problem(summary) or _narration(summary) or _one_off(kind, summary)
        if why is None:
            missing = rewrite.ungrounded(f"{summary}\n{content}", events)
            if missing is not None:
                why = f"ungrounded: {missing} is not in the session's events"
        if why is None:
            why = _unsupported(kind, summary, content, events)
        if why is None:
            same = next((other for other in taken if _same_lesson(summary, other)), None)
            if same is not None:
                why = f"merged: the lesson {same!r}"
        if why is not None:
            run.refuse_proposal(number, summary, why)
            continue
        taken.append(summary)
        out.append(
            Candidate(
                kind=kind,
                summary=summary,
                content=content or summary,
                why=PROPOSED,
                user_scope=memory.get("scope") == "user" and kind == "preference",
            )
        )
    run.proposals_kept = len(out)
    return out


def propose(
    route,
    events: str,
    known: list[Candidate],
    record,
    environ: Mapping[str, str],
    root: Path | None,
    run: ModelRun,
) -> list[Candidate]:
    """The lessons the model proposes from ``events`` (``session_events``) that pass the checks.
    One request (and the provider's repair round for an answer off the schema); raises on any
    failure of it, so that memorize keeps the deterministic result."""
    import time

    from .. import config
    from ..providers.base import Request
    from ..providers.registry import build

    started = time.monotonic()
    settings = config.load(
        flags={"MAX_RETRIES": "0", "CONNECT_WAIT": "0"}, environ=environ, root=root
    )
    provider = build(route, settings)
    request = Request(
        role="memorize",
        max_tokens=PROPOSE_MAX_TOKENS,
        temperature=0.0,
        json_schema=PROPOSAL_SCHEMA,
        timeout=model_seconds(environ),
        system=PROPOSE_SYSTEM,
        messages=[{"role": "user", "content": events}],
    )
    value = structured_answer(provider, request, record, "proposed memories")
    run.proposed = len(value["memories"])
    found = accepted(value["memories"], events, known, run)
    run.proposal_seconds = round(time.monotonic() - started, 1)
    return found
