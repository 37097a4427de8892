"""``lessonloop hook <event>``: the Claude Code hook entry point.

Reads the hook's JSON payload on stdin, answers (``ANSWERS``: the hook JSON output, printed
only when it has something to say), then captures what the event teaches (``CAPTURES``): after
the process has exited, in a forked child (``deferred``), when run as ``lessonloop hook``. It
always exits 0 — a hook never blocks or breaks the agent — and its own errors go to
``logs/hooks.log``. The capture paths import the
standard library and lessonloop's stdlib-only modules, never the CLI stack, and work with
plain path strings (no pathlib); only session-end and pre-compact (memorize) and session-start
(recall) open the store through the store module. user-prompt-submit and pre-tool-use read it
with ``sqlite3`` directly, read-only, to give the memories a prompt or a command is about
(``prompt_recall``); ``LESSONLOOP_RECALL=off`` turns every recall off.

Session-end and pre-compact have ``MEMORIZE_DEADLINE`` seconds. When memorize's model may
take longer (``memorize.longest_seconds``), the hook starts ``lessonloop hook memorize`` as a
detached process (``subprocess`` with its own session and no standard streams: the hook stays
on the standard library and returns at once) that memorizes the session later; what it stored
is shown at the next session start. Why a model's answer was not used, and a session not
memorized for want of consent, are written as one line to ``logs/hooks.log``.
"""

from __future__ import annotations

import os
import sys

from .. import fastjson, paths
from ..timeutil import utc_now
from . import capture, consent, privacy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a hook's start-up)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    Later = Callable[[], None]  # a capture's work, done once the hook has answered

EVENTS = (
    "session-start",
    "user-prompt-submit",
    "pre-tool-use",
    "post-tool-use",
    "post-tool-use-failure",
    "stop",
    "session-end",
    "pre-compact",
)
LOG_MAX = 1024 * 1024  # logs/hooks.log is cut back to its newest half beyond this
# seconds Claude Code gives session-end and pre-compact (what `lessonloop install` writes,
# integrations.claude_code.HOOKS): memorize with a model that may take longer runs detached
MEMORIZE_DEADLINE = 60
DETACHED = "memorize"  # the event of the detached memorize process (not a Claude Code event)
NOTICES = "memorize-notices.jsonl"  # lines of detached memorizes, for the next session start


def _payload() -> dict:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    # read in full: a payload cut at a limit is no JSON, and its signal (often at the end of a
    # long output) would be lost; tool_errors scans a huge output's head and tail only
    raw = sys.stdin.buffer.read()
    try:
        value = fastjson.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
    except ValueError:
        raise ValueError(f"the hook payload is not JSON ({len(raw)} bytes)") from None
    return value if isinstance(value, dict) else {}


def _session(payload: dict) -> str:
    value = payload.get("session_id")
    return value if isinstance(value, str) and value else "unknown"


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _in_session(root: str, payload: dict, name: str) -> str:
    return os.path.join(root, "sessions", paths.session_name(_session(payload)), name)


def _consent_notice(root: str, payload: dict) -> str | None:
    """The how-to-answer line, once per session, while consent is missing or ``ask`` (each
    time, where the home cannot be written to keep the mark)."""
    if consent.state(root) not in ("missing", "ask"):
        return None
    try:
        first = capture.mark_once(_in_session(root, payload, "consent-notice"))
    except OSError:
        first = True
    return consent.HOW_TO_ANSWER if first else None


def _remember_transcript(payload: dict, root: str) -> None:
    """Keep the transcript's path, so ``lessonloop memorize --session-id`` can find it later."""
    path = _text(payload.get("transcript_path"))
    target = _in_session(root, payload, "transcript_path")
    if path and not os.path.exists(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(path)


def session_start(payload: dict, root: str) -> dict | None:
    from pathlib import Path

    from . import prompt_recall, recall

    output: dict = {}
    message = " ".join(m for m in (_consent_notice(root, payload), _pending_notices(root)) if m)
    if message:
        output["systemMessage"] = message
    if prompt_recall.enabled():
        block, given = recall.chosen_block(Path(root), paths.user_home())
        if block:
            output["hookSpecificOutput"] = {
                "hookEventName": "SessionStart",
                "additionalContext": block,
            }
            _log_given(root, payload, given)
    return output or None


def _log_given(root: str, payload: dict, given: list) -> None:
    """The session-start block's memories in the session's injection log."""
    from . import injections

    source = _text(payload.get("source")) or "startup"
    injections.record(
        root,
        _session(payload),
        "session-start",
        [
            {
                "scope": entry.scope,
                "id": entry.id,
                "number": entry.number,
                "summary": entry.summary,
                "reason": f"session {source}: among the {entry.scope}'s most useful memories "
                f"(evidence {entry.helpful - entry.harmful:+d}, seen {entry.seen})",
                "score": None,
            }
            for entry in given
        ],
    )


def _known_secrets(root: str, payload: dict, *seen: object):
    """The session's known secrets while a capture redacts (``known_secrets.watching``): a
    value this event or an earlier one saw under a secret's name is redacted where it stands
    bare. Only the capture paths, which load the redactor anyway, enter it."""
    if privacy.memory_off(os.environ):  # capture is off: nothing learned, nothing saved
        return _Nothing()
    # learned from the text as it came, private spans included (only salted digests are kept):
    # a secret shown once inside a span is then redacted where the session repeats it bare
    seen = tuple(privacy.untagged(v) if isinstance(v, str) else v for v in seen)
    folder = os.path.dirname(_in_session(root, payload, "-"))
    if _nothing_to_watch(folder, seen):
        return _Nothing()
    from . import known_secrets

    return known_secrets.watching(folder, seen)


def _nothing_to_watch(folder: str, seen: tuple) -> bool:
    """Whether watching would learn nothing and scrub nothing, so the redactor need not load:
    the session saved no known secret yet and what the event saw is text the redactor finds no
    trigger in (``secret_free``; its captures then redact through ``secret_free.redact``)."""
    from . import known_secrets, secret_free

    return not os.path.exists(os.path.join(folder, known_secrets.FILE)) and all(
        isinstance(v, str) and not secret_free.may_hold_secret(v) for v in seen
    )


class _Nothing:
    """A ``with`` block that does nothing (contextlib costs a hook its start-up time)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info) -> None:
        return None


def prompt_capture(payload: dict, root: str) -> Later | None:
    """What the prompt teaches (with consent), captured after the answer."""
    if consent.state(root) == "no" or _memory_off(root, payload):
        return None

    def work() -> None:
        with _known_secrets(root, payload, payload.get("prompt")):
            _prompt_captures(payload, root)

    return work


def prompt_recall(payload: dict, root: str) -> dict | None:
    """The memories the prompt is about (its answer; what it teaches is captured after)."""
    from . import prompt_recall

    if not prompt_recall.enabled():
        return None
    text = prompt_recall.for_prompt(_text(payload.get("prompt")), root, _session(payload))
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}


def pre_tool_use(payload: dict, root: str) -> dict | None:
    """PreToolUse: before a Bash command runs, the known failure of that command and its fix
    (a ``pattern`` memory naming it), once per session. Nothing else is learned here."""
    tool_input = payload.get("tool_input")
    if payload.get("tool_name") != "Bash" or not isinstance(tool_input, dict):
        return None
    command = _text(tool_input.get("command"))
    from . import prompt_recall

    if not command.strip() or not prompt_recall.enabled():
        return None
    text = prompt_recall.for_command(command, root, _session(payload))
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}


def _prompt_captures(payload: dict, root: str) -> None:
    from .feedback import prompt_feedback
    from .prompt_check import prompt_check

    _remember_transcript(payload, root)
    prompt = privacy.strip(_text(payload.get("prompt")))  # private sentences: never written
    path = _in_session(root, payload, "feedback.jsonl")
    at = utc_now()
    context = None
    for found in prompt_feedback(prompt):
        if context is None:  # the prompt's start: what a lesson was said about (redacted)
            from .secret_free import redact

            context = " ".join(redact(prompt[:2000]).split())[:300]
        capture.append(
            path,
            {
                "type": "feedback",
                "kind": found.kind,
                "lesson": found.lesson,
                "text": found.text,
                "user_scope": found.user_scope,
                "prompt": context,
                "at": at,
            },
        )
    if prompt.strip():  # (its key: memorize reads the transcript's other prompts)
        from .events import prompt_key, prompt_text
        from .secret_free import redact

        capture.append(
            path,
            {
                "type": "prompt_check",
                **prompt_check(prompt),
                "at": at,
                "prompt_key": prompt_key(redact(prompt_text(prompt))),
            },
        )
    return None


def _memory_off(root: str, payload: dict, say: bool = False) -> bool:
    """Whether ``LESSONLOOP_MEMORY=off`` keeps this session out of memory (the capture hooks
    write nothing, memorize stores nothing); ``say``: one line in the log that it did."""
    if not privacy.memory_off(os.environ):
        return False
    if say:
        log(root, DETACHED, f"session {_session(payload)}: {privacy.SWITCH}=off: nothing memorized")
    return True


def _failed(response: object) -> bool:
    """Whether a PostToolUse response says, by its own status, that the call failed (an
    ``is_error`` flag or a non-zero exit code): Claude Code sends failures to
    PostToolUseFailure, so a PostToolUse response is a success unless it says otherwise, and a
    word like "error" or "warning" in a success's output is no failure."""
    if not isinstance(response, dict):
        return False
    if response.get("is_error") is True or response.get("isError") is True:
        return True
    for key in ("exit_code", "exitCode", "returncode"):  # ("code" is WebFetch's HTTP status)
        value = response.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value != 0:
            return True
    return False


def post_tool_use(payload: dict, root: str) -> Later | None:
    """PostToolUse: a call that succeeded; captured only when its own status says it failed
    (older Claude Code versions sent failures here too)."""
    if consent.state(root) == "no" or _memory_off(root, payload):
        return None
    _remember_transcript(payload, root)
    response = payload.get("tool_response")
    if response is None and payload.get("error"):  # a failure's payload sent to this event
        return post_tool_use_failure(payload, root)
    if not _failed(response):
        return None
    return lambda: _capture_errors(payload, root, response)


def post_tool_use_failure(payload: dict, root: str) -> Later | None:
    """PostToolUseFailure: a call that failed, with ``error`` (the failure text) and
    ``is_interrupt``. A user's interruption or refusal is no error to learn a fix for (judged
    as the transcript reader judges it: events.outcome)."""
    if consent.state(root) == "no" or _memory_off(root, payload):
        return None
    _remember_transcript(payload, root)

    def work() -> None:
        from . import events

        error = payload.get("error")
        text = (
            error if isinstance(error, str) else fastjson.dumps(error) if error is not None else ""
        )
        if events.outcome(text, True, payload.get("is_interrupt") is True) != "failed":
            return
        # the shape the transcript reader gives a failed result: the text, flagged (a Bash
        # failure's text starts with "Exit code N")
        _capture_errors(payload, root, events.response(False, text, True))

    return work


def _capture_errors(payload: dict, root: str, response: object) -> None:
    with _known_secrets(root, payload, payload.get("tool_input"), response):
        _capture_error_lines(payload, root, response)


def _capture_error_lines(payload: dict, root: str, response: object) -> None:
    """Error events, in the shape memorize merges with the transcript's (keyed by the call's
    tool_use_id)."""
    from .tool_errors import tool_errors

    found = tool_errors(_text(payload.get("tool_name")), payload.get("tool_input"), response)
    path = _in_session(root, payload, "signals.jsonl")
    at = utc_now()
    call = _text(payload.get("tool_use_id"))
    private = privacy.transcript_echoes(_text(payload.get("transcript_path"))) if found else []
    for signal in found:
        if private:  # what the call repeats of a private span (the agent's own words)
            signal = signal._replace(
                line=privacy.strip(signal.line, private),
                normalized=privacy.strip(signal.normalized, private),
                subject=privacy.strip(signal.subject, private),
            )
            if not signal.line:
                continue
        capture.append(
            path,
            {
                "type": "error",
                "tool": signal.tool,
                "line": signal.line,
                "normalized": signal.normalized,
                "subject": signal.subject,
                "tool_use_id": call,
                "at": at,
                "source": "hook",
            },
        )
    return None


def session_end(payload: dict, root: str) -> dict | None:
    """Memorize the session (session-end and pre-compact): one line when memories were stored,
    or, when the model may outlast the hook's deadline, one line that it goes on detached."""
    if _memory_off(root, payload, say=True):
        return None
    from pathlib import Path

    from . import memorize

    output: dict = {}
    session, transcript = _session(payload), _text(payload.get("transcript_path"))
    notice = _consent_notice(root, payload)
    environ: Mapping[str, str] = os.environ
    longest = _model_outlasts_deadline(memorize) if consent.state(root) == "yes" else None
    if longest is not None and not memorize.has_new_lessons(
        session, Path(root), transcript or None
    ):
        return None  # nothing new to memorize: no process to start, nothing to say
    if longest is not None:
        try:
            _detach(payload, root)
        except OSError as exc:  # no process to be had: the deterministic memories, now
            log(
                root,
                DETACHED,
                f"session {session}: the detached memorize did not start "
                f"({exc}); memorizing without the model",
            )
            environ = {**os.environ, "LESSONLOOP_AUTOMEM_MODEL": "off"}
        else:
            route = memorize.model_route(os.environ)
            output["systemMessage"] = (
                f"lessonloop is memorizing this session in the background with "
                f"{route.provider}:{route.model} (up to {longest:.0f} s); what it stores is "
                "shown at the next session start."
            )
            return output
    result = memorize.memorize(session, Path(root), transcript=transcript, environ=environ)
    _log_outcome(root, session, result)
    message = result.message or notice
    if message:
        output["systemMessage"] = message
    return output or None


def memorize_detached(payload: dict, root: str) -> None:
    """The detached memorize ``session_end`` started: no deadline but the model's own; its line
    waits in NOTICES for the next session start."""
    if _memory_off(root, payload, say=True):
        return None
    from pathlib import Path

    from . import memorize

    session = _session(payload)
    result = memorize.memorize(
        session, Path(root), transcript=_text(payload.get("transcript_path"))
    )
    _log_outcome(root, session, result)
    line = result.message
    if result.model and result.model != "used":  # (the reason itself is in the log)
        line = f"{line or 'nothing new stored'} (without the model: see logs/hooks.log)"
    if line:
        capture.append(
            os.path.join(root, NOTICES), {"session": session, "message": line, "at": utc_now()}
        )
    return None


def _model_outlasts_deadline(memorize) -> float | None:
    """Seconds memorize with its model may take, when that is more than the hook has; None
    when it fits or no model is routed (a bad setting: memorize falls back at once, here)."""
    try:
        longest = memorize.longest_seconds(os.environ)
    except Exception:  # noqa: BLE001 - memorize itself reports the bad setting
        return None
    return longest if longest is not None and longest > MEMORIZE_DEADLINE else None


def _detach(payload: dict, root: str) -> None:
    """Start ``lessonloop hook memorize`` for this session in its own session, with no
    standard streams to hold the hook's caller, and return without waiting for it."""
    import subprocess

    body = fastjson.dumps(
        {
            "session_id": _session(payload),
            "cwd": _text(payload.get("cwd")),
            "transcript_path": _text(payload.get("transcript_path")),
            "hook_event_name": "Memorize",
        }
    ).encode()
    child = subprocess.Popen(
        [sys.executable, "-m", "lessonloop", "hook", DETACHED],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "LESSONLOOP_HOME": root},
    )  # the same project home, whatever the cwd
    stdin = child.stdin
    assert stdin is not None  # (stdin=PIPE)
    try:
        stdin.write(body)
    finally:
        stdin.close()


def _log_outcome(root: str, session: str, result) -> None:
    """One line in ``logs/hooks.log`` when the model's answer was not used, or the session was
    not memorized because consent is missing; one more when a capture was left out (still
    being written)."""
    if result.unsettled:
        log(root, DETACHED, result.unsettled)
    if result.model and result.model != "used":
        route = result.route or os.environ.get("LESSONLOOP_AUTOMEM_MODEL")
        log(
            root,
            DETACHED,
            f"session {session}: model {route} "
            f"{result.model}; the deterministic memories stand "
            f"({len(result.stored)} new)",
        )
    elif result.skipped in ("consent is missing", "consent is ask"):
        log(
            root,
            DETACHED,
            f"session {session}: nothing memorized: {result.skipped} (answer "
            "with `lessonloop memory consent yes|no`)",
        )


def _pending_notices(root: str) -> str | None:
    """The lines detached memorizes left, taken once (by one session start)."""
    path = os.path.join(root, NOTICES)
    taken = f"{path}.{os.getpid()}"
    try:
        os.replace(path, taken)
    except OSError:
        return None
    try:
        lines = [r["message"] for r in capture.read(taken) if isinstance(r.get("message"), str)]
    finally:
        os.unlink(taken)
    return " ".join(f"Memorized in the background: {line}" for line in lines) or None


# what each event answers (its hook output, or None)
ANSWERS: dict[str, Callable[[dict, str], dict | None]] = {
    "session-start": session_start,
    "user-prompt-submit": prompt_recall,
    "pre-tool-use": pre_tool_use,
    "session-end": session_end,
    "pre-compact": session_end,
    DETACHED: memorize_detached,  # started by session_end, never by Claude Code
}
# what each event learns: the work to do once the hook has answered (None: nothing to learn)
CAPTURES: dict[str, Callable[[dict, str], Later | None]] = {
    "user-prompt-submit": prompt_capture,
    "post-tool-use": post_tool_use,
    "post-tool-use-failure": post_tool_use_failure,
}


def log(root: str | None, event: str, message: str) -> None:
    """One redacted line in ``logs/hooks.log``; the log never grows without bound."""
    try:
        from ..safety.redact import redact

        folder = os.path.join(root or paths.project_root(None), "logs")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "hooks.log")
        line = f"{utc_now()} {event or '-'} {redact(message)}\n".encode("utf-8", "replace")
        if os.path.exists(path) and os.path.getsize(path) > LOG_MAX:
            with open(path, "rb") as handle:
                data = handle.read()
            with open(path, "wb") as handle:
                handle.write(data[len(data) // 2 :])
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except Exception:  # a hook that cannot log still must not fail the agent
        pass


def main(argv: list[str], defer: bool = False) -> int:
    """Run one hook; always 0. ``defer`` (the ``lessonloop hook`` command): what the event
    learns is captured after this process has exited (``deferred``), so Claude Code waits for
    the answer only; in-process callers capture before returning."""
    event = argv[0] if argv else ""
    root = None
    try:
        if event in ("-h", "--help", ""):
            sys.stdout.write(
                "usage: lessonloop hook <event>   (events: "
                + ", ".join(EVENTS)
                + "); reads the Claude Code hook payload on stdin\n"
            )
            return 0
        payload = _payload()
        root = paths.project_root(_text(payload.get("cwd")) or None)
        if event not in EVENTS and event != DETACHED:
            log(root, event, f"unknown hook event {event!r}; known: {', '.join(EVENTS)}")
            return 0
        answer = ANSWERS.get(event)
        output = answer(payload, root) if answer is not None else None
        if output:
            sys.stdout.write(fastjson.dumps(output) + "\n")
            sys.stdout.flush()
        capture_for = CAPTURES.get(event)
        later = capture_for(payload, root) if capture_for is not None else None
        if later is not None:
            work = _logged(root, event, later)
            if defer:
                from . import deferred

                deferred.after_exit(os.path.dirname(_in_session(root, payload, "-")), work)
            else:
                work()
    except BaseException as exc:  # noqa: BLE001 - the agent must never see a hook fail
        _log_failure(root, event, exc)
    return 0


def _logged(root: str, event: str, work: Later) -> Later:
    """``work`` with its failure written to the log, never raised."""

    def logged() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - the agent must never see a hook fail
            _log_failure(root, event, exc)

    return logged


def _log_failure(root: str | None, event: str, exc: BaseException) -> None:
    import traceback

    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    at = f" at {os.path.basename(where[0].filename)}:{where[0].lineno}" if where else ""
    log(root, event, f"{detail}{at}")
