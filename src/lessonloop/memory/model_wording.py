"""Memorize's optional model step: a configured model words the lessons anew (``synthesize``).

The route and its time limits (``model_route``, ``model_seconds``, ``longest_seconds``), the
answer's schema (``answer_schema``), the redacted, capped extracts the model sees
(``extracts``), the wordings kept from earlier sessions (``worded_earlier``, by ``WORDED`` in a
lesson's why), and the one line per run in the session's ``model.jsonl`` (``record_run``,
``why_not_used``). See ``memorize``'s docstring for what the model may and may not change.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..safety import cap, redact
from . import capture
from .candidate import Candidate
from .recall import PROJECT

MODEL_SECONDS = 120.0  # per request, unless LESSONLOOP_AUTOMEM_TIMEOUT says otherwise
MODEL_REQUESTS = 2  # the request, and the provider's one repair round for an answer off the schema
SETTLE_SECONDS = 10.0  # start-up, reading the transcript, admission: memorize besides the model
MODEL_MAX_TOKENS = 1000  # a small model writes ~10 tokens a second
EXTRACT_CHARS = 8000  # what a model may see, at most, after redaction
MAX_MODEL_MEMORIES = 10

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


def proposing(environ: Mapping[str, str]) -> bool:
    """Whether the model also proposes lessons of its own from the session's events
    (``model_lessons``): ``LESSONLOOP_AUTOMEM_PROPOSE`` = ``on`` (the default) or ``off``
    (the model only words the lessons the deterministic pass found)."""
    from ..errors import UsageError

    text = (environ.get("LESSONLOOP_AUTOMEM_PROPOSE") or "on").strip().lower()
    if text not in ("on", "off"):
        raise UsageError(f"LESSONLOOP_AUTOMEM_PROPOSE must be on or off, not {text!r}")
    return text == "on"


def longest_seconds(environ: Mapping[str, str]) -> float | None:
    """How long memorize may take with its model (every request at its limit: the wording, and
    the proposal when ``proposing``), or None when no model is routed. Raises UsageError for a
    bad setting."""
    if model_route(environ) is None:
        return None
    steps = 2 if proposing(environ) else 1
    return steps * MODEL_REQUESTS * model_seconds(environ) + SETTLE_SECONDS


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


def extracts(candidates: list[Candidate]) -> str:
    """What the model may see: the numbered lessons of the session, each with its kind and
    evidence, redacted and capped — never raw transcript text. The lessons are what the
    deterministic pass made of the session's normalized events (the user's statements, the
    errors with the change that fixed them, the project's commands); an error with no evidence
    of its fix, or words of the user that state no lasting rule, are no lesson, and a model
    that is sent them makes memories of them."""
    lines = ["Lessons:"]
    for index, candidate in enumerate(candidates, 1):
        lines.append(f"{index}. {_line(candidate.summary, 300)}")
        lines.append(f"   evidence: {_line(_evidence(candidate), 300)}")
    # the answer's form, one memory per lesson by its number: a small model shown one example
    # memory answers one memory
    form = ", ".join(
        f'{{"lesson": {index}, "summary": <lesson {index} as one sentence>}}'
        for index in range(1, len(candidates) + 1)
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
    # the model's own lessons (model_lessons), when it proposes: how many it answered, how many
    # passed the checks, and each refused one with why (form, ungrounded, merged)
    proposed: int = 0
    proposals_kept: int = 0
    proposal_rejected: dict[str, int] = field(default_factory=dict)
    proposal_refused: list[dict] = field(default_factory=list)
    proposal_seconds: float = 0.0

    def refuse(self, lesson: int, wording: str, why: str) -> None:
        category = why.split(":", 1)[0]
        self.rejected[category] = self.rejected.get(category, 0) + 1
        self.refused.append(
            {"lesson": lesson, "wording": redact(wording[:200]), "why": redact(why[:200])}
        )

    def refuse_proposal(self, number: int, summary: str, why: str) -> None:
        category = why.split(":", 1)[0]
        self.proposal_rejected[category] = self.proposal_rejected.get(category, 0) + 1
        self.proposal_refused.append(
            {"memory": number, "summary": redact(summary[:200]), "why": redact(why[:200])}
        )

    def record(self) -> dict:
        return dict(vars(self))


def worded_earlier(
    store, found: list[Candidate], run: ModelRun
) -> tuple[list[Candidate], list[int]]:
    """The lessons with the wording an earlier session's model gave them, where one did (and
    kept the lesson's kind), and the indexes of the others: those the model is asked about,
    at most MAX_MODEL_MEMORIES. Done before the model is asked, so that a model that then
    fails leaves the earlier wordings (and no duplicate of them) all the same."""
    result = list(found)
    ask: list[int] = []
    for index, candidate in enumerate(found):
        before = _worded_before(store, candidate.summary)
        if before is not None and before[0] == candidate.kind:
            result[index] = _worded(candidate, before[1])
            run.reused += 1
        elif len(ask) < MAX_MODEL_MEMORIES:
            ask.append(index)
    return result, ask


def synthesize(
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
    from ..providers.base import Request
    from ..providers.registry import build
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
            messages=[{"role": "user", "content": extracts(sent)}],
        )
        value = structured_answer(provider, request, record, "memories")
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


def structured_answer(provider, request, record, what: str) -> dict:
    """The answer to one structured-output ``request``, parsed and checked against its schema
    (ValueError naming ``what`` when it does not match); the usage of what was answered is
    ``record``-ed even when the call then fails."""
    from ..errors import ProviderError
    from ..scenarios.base import schema_problems

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
    problems = schema_problems(value, request.json_schema, "reply")
    if problems:
        raise ValueError(f"the model's {what} do not match the schema: {problems[0]}")
    return value


def record_run(folder: Path, run: ModelRun) -> None:
    """One line per memorize with a model in the session's ``model.jsonl``: whether the
    model's answer was used, and what the guards did with it (``bench/memory_quality.py`` reads
    it; so may a person who wonders why a lesson kept its first wording)."""
    from ..timeutil import utc_now

    try:
        folder.mkdir(parents=True, exist_ok=True)
        capture.append(folder / "model.jsonl", {"at": utc_now(), **run.record()})
    except OSError:
        pass  # a record that cannot be written changes nothing that was stored


def why_not_used(exc: Exception, environ: Mapping[str, str]) -> str:
    """Why the model's answer was not used, on one line: ``not used: Kind: reason``."""
    detail = " ".join(redact(str(exc)).split())[:300]
    if "timed out" in detail:
        try:
            limit = f"{model_seconds(environ):g} s"
        except Exception:  # noqa: BLE001 - the setting was fine enough to time out with
            limit = "its time limit"
        detail = f"no answer within {limit} (LESSONLOOP_AUTOMEM_TIMEOUT): {detail}"
    return f"not used: {exc.__class__.__name__}: {detail}"
