"""Memorize's first step: the lessons a session holds, collected without a model.

Each error with the evidence of its fix, and the errors the session never got past
(``from_errors``); what the user said in prompts, refusals and answers (``feedback_stream``,
``from_feedback``, ``from_said``, ``from_refusals``); what the agent concluded
(``from_conclusions``); what the user reported from their own runs (``from_reports``); plans the
user dropped (``dropped_plans``). Each gives ``Candidate`` lessons stated as lessons, not as the
words that triggered them.
"""

from __future__ import annotations

import re

from . import events
from .candidate import Candidate
from .facts import (
    check_routine,
    line_within,
    permission_facts,
    project_command,
    project_facts,
    project_hooks,
    recipe_facts,
    script_facts,
    timeout_note,
)

RECURRING = 2  # the same normalized error this often makes a pattern

KIND_OF_FEEDBACK = {
    "decision": "decision",
    "preference": "preference",
    "rule": "preference",
    "fact": "observation",
    "correction": "preference",
}


def failing_tests(call) -> str:
    """ " (failing: `test/a.py::test_x`)" for the tests a pytest run reported FAILED (up to
    three): which test the error and its fix are about."""
    from .error_lessons import failed_tests

    shown = ", ".join(f"`{name}`" for name in failed_tests(call)[:3])
    return f" (failing: {shown})" if shown else ""


def from_errors(signals: list[dict], transcript) -> list[Candidate]:
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
        if not fix.fix:  # the agent's diagnosis, no single fix
            found.append(
                Candidate(
                    kind="observation",
                    summary=lesson,
                    content=f"Error: {fix.line[:300]}\nCause (as the agent found it): "
                    f"{fix.cause}\nNo single change was clearly its fix.",
                    why="An error and what the agent found its cause to be; the evidence "
                    "singled out no one fix.",
                    tags=["error", "diagnosis"],
                )
            )
            continue
        found.append(
            Candidate(
                kind="pattern" if times >= RECURRING else "observation",
                summary=lesson,
                content=f"Error: {fix.line[:300]}{failing_tests(fix.error)}\nFixed by: {fix.detail}"
                + (f"\nCause (as the agent found it): {fix.cause}" if fix.cause else ""),
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
        after = f" It first failed on `{line_within(call.subject, 200)}`" + (
            f", after `{line_within(before.subject, 120)}`." if before is not None else "."
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
    from .diagnosed import diagnosed_changes
    from .shell_state import kept_directory

    return (
        found
        + diagnosed_changes(transcript, {fix.cause for fix in fixes if fix.cause})
        + kept_directory(transcript)
    )


def feedback_stream(captured: list[dict], transcript) -> list[dict]:
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


def from_feedback(feedback: list[dict], transcript) -> list[Candidate]:
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
            from_said(transcript)
            + from_refusals(transcript)
            + project_facts(transcript)
            + recipe_facts(transcript)
            + check_routine(transcript)
            + script_facts(transcript)
            + project_hooks(transcript)
            + permission_facts(transcript)
            + from_conclusions(transcript)
            + dropped_plans(transcript)
            + from_reports(transcript)
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


def from_conclusions(transcript) -> list[Candidate]:
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


def from_reports(transcript) -> list[Candidate]:
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


def dropped_plans(transcript) -> list[Candidate]:
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
        first = re.match(r"[^.!?\n]*[.!?]?", after.text.strip())  # (not the next ask)
        words = first.group(0) if first else ""
        if not title or len(summary) > 120:
            continue
        found.append(
            Candidate(
                kind="decision",
                summary=summary,
                tags=["rejection", "dropped"],
                content=f'Asked: "{line_within(asked, 200)}" The agent proposed: '
                f"{line_within(plan, 300)} The user refused it and said: "
                f'"{line_within(words, 120)}"',
                why="A plan the user refused and then dropped: do not propose it again unasked.",
            )
        )
    return found


def from_said(transcript) -> list[Candidate]:
    """What the user said outside prompts (read from the transcript only: no hook sees it):
    a refused call's reason, as a correction of that call ("use pnpm" when `npm install` was
    refused: "Use pnpm"), and the answers to the agent's questions, as decisions."""
    from .feedback import prompt_feedback

    found = []
    answers = [s for s in transcript.said if s.kind == "answer" and not s.sidechain]
    for said in transcript.said:
        if said.sidechain:
            continue
        if said.kind == "rejection":
            for said_feedback in prompt_feedback(said.text, corrected=True):
                kind = KIND_OF_FEEDBACK.get(said_feedback.kind)
                if kind is None or not said_feedback.lesson:
                    continue
                refused = f"`{line_within(said.about, 200)}`" if said.about else "a tool call"
                found.append(
                    Candidate(
                        kind=kind,
                        summary=said_feedback.lesson,
                        tags=["rejection"],
                        content=f'The user refused {refused} and said: "{said.text}"',
                        why=f'The user\'s reason for refusing {refused}: "{said.text}"',
                        user_scope=said_feedback.user_scope and kind == "preference",
                    )
                )
        elif said.kind == "command":
            # a run that failed ("No test files found, exiting with code 1") shows no way to run
            summary = "" if said.detail else project_command(said.text)
            if summary:
                found.append(
                    Candidate(
                        kind="observation",
                        summary=summary,
                        tags=["project-fact", "command"],
                        content=f"The user ran `{line_within(said.text, 200)}` in this project."
                        + timeout_note(transcript, summary),
                        why="A command the user ran themselves in the session.",
                    )
                )
        elif said.kind == "answer":
            later = answers[answers.index(said) + 1 :]
            if said.header and any(
                a.header == said.header and _CHANGED_MIND.search(a.text) for a in later
            ):
                continue  # the user took it back ("I changed my mind. We don't need ...")
            # an answer in the user's own words is read as they would say it in a prompt
            stated = [
                f for f in prompt_feedback(said.text) if f.lesson and f.kind in KIND_OF_FEEDBACK
            ]
            for feedback in stated:
                found.append(
                    Candidate(
                        kind=KIND_OF_FEEDBACK[feedback.kind],
                        summary=feedback.lesson,
                        tags=["answer"],
                        content=f'Asked "{said.about}", the user answered: "{said.text}"',
                        why="The user's answer to the agent's question, in their own words.",
                        user_scope=feedback.user_scope
                        and KIND_OF_FEEDBACK[feedback.kind] == "preference",
                    )
                )
            summary = "" if stated else _answer_summary(said)
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


def from_refusals(transcript) -> list[Candidate]:
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
                content=f"The user refused `{line_within(refused.subject, 200)}`; `{new}` then worked.",
                why="A refused command, and the one that replaced it and worked.",
            )
        )
    return found


OPEN_PROBLEM = "Open problem:"
# a question about the next step of the task, not a choice for the project ("which to fix
# first?"; "your first checkpoint" is a choice)
_STEP_QUESTION = re.compile(
    r"\b(?:proceed|continue (?:discussing|with the next)|go ahead|next|now|start with|ready|"
    r"(?:do|tackle|fix|handle|address|start)(?:\s+\w+){0,3}\s+first|first(?=\s*\?)|"
    r"this time|shall i|should i (?:run|start|commit|push)|more questions|are we done|"
    r"what do you want to do|move (?:on )?to)\b",
    re.I,
)
_CHANGED_MIND = re.compile(
    r"\b(?:changed my mind|scratch that|never ?mind|on second thought)\b", re.I
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
