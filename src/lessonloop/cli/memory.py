"""The ``memory ...`` commands and ``memorize``: each prints what ``app/memory.py`` answers.
``fast.py`` calls ``memory list`` and ``memory search`` without Typer."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from .output import print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer

GROUP_HELP = "Memories from coding-agent sessions: search, review, correct."
SCOPE_HELP = "project, user or all"
ONE_SCOPE_HELP = "project or user"


def show(items: list[dict], as_json: bool, empty: str) -> None:
    """Memories one line each (or as JSON); ``empty`` when there are none."""
    if as_json:
        print_json(items)
        return
    if not items:
        sys.stdout.write(empty + "\n")
    for item in items:
        score = f" score {item['score']:.2f}" if "score" in item else ""
        held = f" [{item['status']}]" if item.get("status", "active") != "active" else ""
        sys.stdout.write(
            f"[{item['scope']} {item['id']}] ({item['type']}) {item['summary']}{held}"
            f"  — {item['author']}, seen {item['seen']}{score}\n"
        )


def consent_command(
    answer: Annotated[str, typer.Argument(help="yes, no or ask")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Allow (yes), refuse (no) or postpone (ask) automatic memories for this project."""
    from ..app.memory import record_consent

    path = record_consent(answer)
    if as_json:
        print_json({"consent": answer, "path": str(path)})
    else:
        sys.stdout.write(f"automatic memories: {answer} (saved in {path})\n")


def search_command(
    query: Annotated[str, typer.Argument()],
    limit: Annotated[int, typer.Option("--limit")] = 10,
    scope: Annotated[str, typer.Option("--scope", help=SCOPE_HELP)] = "all",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Memories matching QUERY, best first (BM25, nudged by evidence)."""
    from ..app.memory import search_memories

    show(search_memories(query, scope, limit), as_json, "no memory matches")


def list_command(
    scope: Annotated[str, typer.Option("--scope", help=SCOPE_HELP)] = "all",
    pending: Annotated[
        bool, typer.Option("--pending", help="Those held for review (`--review`) instead.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Every active memory, most useful first (or, with --pending, those held for review)."""
    from ..app.memory import useful_memories

    if pending:
        from ..app.memory_review import held_memories

        show(held_memories(scope), as_json, "no memories held for review")
        return
    show(useful_memories(scope), as_json, "no memories yet")


def audit_command(
    limit: Annotated[int, typer.Option("--limit")] = 50,
    scope: Annotated[str, typer.Option("--scope", help=SCOPE_HELP)] = "all",
    as_json: Annotated[bool, typer.Option("--json")] = False,
    stale: Annotated[
        bool,
        typer.Option("--stale", help="Project memories naming a file or command the project lost."),
    ] = False,
    project: Annotated[
        Path | None,
        typer.Option("--project", help="With --stale: the project folder to check against."),
    ] = None,
) -> None:
    """Memories held for review (approve or reject them), then recent automatic memories,
    newest first, to review (then `why`, `edit` or `forget`); those retired for misleading are
    marked. With --stale: the stale ones and what each names that is missing (checked again
    first)."""
    if stale:
        show_stale(scope, project, as_json)
        return
    from ..app.memory import recent_memories
    from ..app.memory_review import held_memories

    held = held_memories(scope)
    show(
        held + recent_memories(scope, limit, automatic_only=True, retired=True),
        as_json,
        "no automatic memories",
    )


def show_stale(scope: str, project: Path | None, as_json: bool) -> None:
    """``memory audit --stale``: one line per stale memory with its missing references."""
    from ..app.memory import stale_memories
    from ..errors import UsageError

    if scope not in ("project", "user", "all"):
        raise UsageError(f"--scope is project, user or all, not {scope!r}")
    items = [] if scope == "user" else stale_memories(project)  # (user memories: no project)
    if as_json:
        print_json(items)
        return
    if not items:
        sys.stdout.write("no stale memories\n")
    for item in items:
        missing = ", ".join(item["missing"]) or "?"
        sys.stdout.write(
            f"[project {item['id']}] ({item['type']}) {item['summary']}  — stale?: "
            f"missing {missing}\n"
        )


def why_command(
    entry_id: Annotated[int, typer.Argument()],
    scope: Annotated[str, typer.Option("--scope", help=ONE_SCOPE_HELP)] = "project",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Where a memory came from: its provenance (sessions, runs) and its history."""
    from ..app.memory import memory_history

    value = memory_history(entry_id, scope)
    if as_json:
        print_json(value)
        return
    state = "" if value["status"] == "active" else f" [{value['status']}]"
    if value["superseded_by"] is not None:
        state = f" [superseded by {scope} {value['superseded_by']}]"
    sys.stdout.write(f"[{scope} {entry_id}] ({value['type']}) {value['summary']}{state}\n")
    for field in ("content", "why", "how_to_apply"):
        if value[field]:
            sys.stdout.write(f"{field}: {value[field]}\n")
    for origin in value["provenance"]:
        where = (
            f"session {origin['session_id']}"
            if origin["session_id"]
            else f"run {origin['run_id']}"
            if origin["run_id"]
            else ""
        )
        sys.stdout.write(f"- {origin['created_at']} {origin['source']} {where}\n")
    for event in value["events"]:  # its history: added, edited, superseded by ..., approved
        sys.stdout.write(f"* {event['created_at']} {event['action']} {event['detail']}\n")


def forget_command(
    entry_id: Annotated[int, typer.Argument()],
    scope: Annotated[str, typer.Option("--scope", help=ONE_SCOPE_HELP)] = "project",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Delete one memory for good (and its line in the Markdown views)."""
    from ..app.memory import forget_memory

    gone = forget_memory(entry_id, scope)
    if as_json:
        print_json(gone)
    else:
        sys.stdout.write(f"forgot [{scope} {entry_id}] {gone['summary']}\n")


def add_command(
    type_: Annotated[
        str, typer.Option("--type", help="pattern, decision, preference or observation")
    ],
    summary: Annotated[str, typer.Option("--summary")],
    content: Annotated[str, typer.Option("--content")] = "",
    why_: Annotated[str, typer.Option("--why")] = "",
    how: Annotated[str, typer.Option("--how")] = "",
    tags: Annotated[str, typer.Option("--tags", help="comma-separated")] = "",
    scope: Annotated[str, typer.Option("--scope", help=ONE_SCOPE_HELP)] = "project",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Add a memory you wrote yourself (it goes through the same admission: redaction, caps,
    dedupe)."""
    from ..app.memory import split_tags, store_memory

    entry = store_memory(
        type_,
        summary,
        content,
        why_,
        how,
        split_tags(tags),
        scope,
        author="user",
        source="user",
    )
    if as_json:
        print_json(entry)
    else:
        sys.stdout.write(f"{entry['action']} [{scope} {entry['id']}] {entry['summary']}\n")


def recall_command(
    log: Annotated[
        str | None,
        typer.Option("--log", metavar="SESSION", help="What SESSION was given, when and why."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The block a new session starts with (what `hook session-start` injects); with --log,
    every memory a session was given."""
    if log is not None:
        from ..app.memory import recall_log

        given = recall_log(log)
        if as_json:
            print_json(given)
        elif not given:
            sys.stdout.write(f"no memory was given in session {log}\n")
        for item in [] if as_json else given:
            sys.stdout.write(
                f"{item['at']}  {item['event']:<18}  [{item['scope']} {item['id']}] "
                f"{item['summary']}\n    why: {item['reason']}\n"
            )
        return
    from ..app.memory import recall_text

    text = recall_text()
    if as_json:
        print_json({"additionalContext": text})
    elif text:
        sys.stdout.write(text + "\n")


def prune_command(
    older_than: Annotated[
        float | None, typer.Option("--older-than", help="Days without use.")
    ] = None,
    keep: Annotated[
        int, typer.Option("--keep", help="At most this many memories per scope.")
    ] = 2000,
    scope: Annotated[str, typer.Option("--scope", help=SCOPE_HELP)] = "all",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Drop stale automatic memories (user-authored ones stay), cap each scope, VACUUM."""
    from ..app.memory import prune_memories

    report = prune_memories(scope, older_than, keep)
    if as_json:
        print_json({"pruned": report})
    else:
        pruned = ", ".join(f"{name}: {count} pruned" for name, count in report.items())
        sys.stdout.write((pruned or "no memories yet") + "\n")


def memorize_command(
    session_id: Annotated[str | None, typer.Option("--session-id")] = None,
    transcript: Annotated[Path | None, typer.Option("--transcript")] = None,
    review: Annotated[
        bool,
        typer.Option(
            "--review", help="Hold new memories as pending until `memory approve` (or reject)."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Turn a session's captures and transcript into memories (session-end does this)."""
    from ..app.memory import memorize
    from ..errors import UsageError

    if session_id is None and transcript is None:
        raise UsageError("give --session-id (captured by the hooks) or --transcript FILE")
    result = memorize(session_id, transcript, review=review)
    if as_json:
        print_json(
            {
                "stored": result.stored,
                "reinforced": result.reinforced,
                "skipped": result.skipped,
                "model": result.model,
                "unsettled": result.unsettled,
            }
        )
    elif result.message:
        held = " (held for review: `lessonloop memory list --pending`)" if review else ""
        sys.stdout.write(result.message + held + "\n")
    elif result.skipped:
        from ..app.memory import consent_hint

        hint = f" {consent_hint()}" if result.skipped.startswith("consent") else ""
        sys.stderr.write(f"nothing memorized: {result.skipped}.{hint}\n")
