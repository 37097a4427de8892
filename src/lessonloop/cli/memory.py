"""Session memory commands: ``hook``, ``memorize``, ``memory ...``, ``install``/``uninstall``."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .help_format import WholeSentences
from .memory_views import list_command, search_command, show
from .output import print_json

memory_app = typer.Typer(
    help="Memories from coding-agent sessions: search, review, correct.",
    no_args_is_help=True,
    add_completion=False,
    cls=WholeSentences,
)


@memory_app.command()
def consent(
    answer: str = typer.Argument(..., help="yes, no or ask"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Allow (yes), refuse (no) or postpone (ask) automatic memories for this project."""
    from .. import paths
    from ..errors import UsageError
    from ..memory import consent as consent_file

    if answer not in consent_file.ANSWERS:
        raise UsageError(f"answer yes, no or ask, not {answer!r}")
    path = consent_file.record(paths.ensure_home(), answer)
    if as_json:
        print_json({"consent": answer, "path": str(path)})
    else:
        sys.stdout.write(f"automatic memories: {answer} (saved in {path})\n")


@memory_app.command()
def search(
    query: str = typer.Argument(...),
    limit: int = typer.Option(10, "--limit"),
    scope: str = typer.Option("all", "--scope", help="project, user or all"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Memories matching QUERY, best first (BM25, nudged by evidence)."""
    search_command(query, limit, scope, as_json)


@memory_app.command("list")
def list_(
    scope: str = typer.Option("all", "--scope", help="project, user or all"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Every active memory, most useful first."""
    list_command(scope, as_json)


@memory_app.command()
def audit(
    limit: int = typer.Option(50, "--limit"),
    scope: str = typer.Option("all", "--scope", help="project, user or all"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Recent automatic memories, newest first, to review (then `why` or `forget`)."""
    from ..memory.service import recent_memories

    show(recent_memories(scope, limit, automatic_only=True), as_json, "no automatic memories")


@memory_app.command()
def why(
    entry_id: int = typer.Argument(...),
    scope: str = typer.Option("project", "--scope", help="project or user"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Where a memory came from: its provenance (sessions, runs) and its history."""
    from ..memory.service import memory_history

    value = memory_history(entry_id, scope)
    if as_json:
        print_json(value)
        return
    sys.stdout.write(f"[{scope} {entry_id}] ({value['type']}) {value['summary']}\n")
    for field in ("content", "why", "how_to_apply"):
        if value[field]:
            sys.stdout.write(f"{field}: {value[field]}\n")
    for p in value["provenance"]:
        origin = (
            f"session {p['session_id']}"
            if p["session_id"]
            else f"run {p['run_id']}"
            if p["run_id"]
            else ""
        )
        sys.stdout.write(f"- {p['created_at']} {p['source']} {origin}\n")


@memory_app.command()
def forget(
    entry_id: int = typer.Argument(...),
    scope: str = typer.Option("project", "--scope", help="project or user"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Delete one memory for good (and its line in the Markdown views)."""
    from ..memory.service import forget_memory

    gone = forget_memory(entry_id, scope)
    if as_json:
        print_json(gone)
    else:
        sys.stdout.write(f"forgot [{scope} {entry_id}] {gone['summary']}\n")


@memory_app.command()
def add(
    type_: str = typer.Option(..., "--type", help="pattern, decision, preference or observation"),
    summary: str = typer.Option(..., "--summary"),
    content: str = typer.Option("", "--content"),
    why_: str = typer.Option("", "--why"),
    how: str = typer.Option("", "--how"),
    tags: str = typer.Option("", "--tags", help="comma-separated"),
    scope: str = typer.Option("project", "--scope", help="project or user"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Add a memory you wrote yourself (it goes through the same admission: redaction, caps,
    dedupe)."""
    from ..memory.service import store_memory

    entry = store_memory(
        type_,
        summary,
        content,
        why_,
        how,
        [t.strip() for t in tags.split(",") if t.strip()],
        scope,
        author="user",
        source="user",
    )
    if as_json:
        print_json(entry)
    else:
        sys.stdout.write(f"{entry['action']} [{scope} {entry['id']}] {entry['summary']}\n")


@memory_app.command()
def recall(as_json: bool = typer.Option(False, "--json")) -> None:
    """The block a new session starts with (what `hook session-start` injects)."""
    from ..memory.service import recall_text

    text = recall_text()
    if as_json:
        print_json({"additionalContext": text})
    elif text:
        sys.stdout.write(text + "\n")


@memory_app.command()
def prune(
    older_than: float | None = typer.Option(None, "--older-than", help="Days without use."),
    keep: int = typer.Option(2000, "--keep", help="At most this many memories per scope."),
    scope: str = typer.Option("all", "--scope", help="project, user or all"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Drop stale automatic memories (user-authored ones stay), cap each scope, VACUUM."""
    from ..errors import UsageError
    from ..memory.service import prune_memories

    if (older_than is not None and older_than < 0) or keep < 0:
        raise UsageError("--older-than and --keep must not be negative")
    report = prune_memories(scope, older_than, keep)
    if as_json:
        print_json({"pruned": report})
    else:
        sys.stdout.write(
            (", ".join(f"{n}: {c} pruned" for n, c in report.items()) or "no memories yet") + "\n"
        )


def register(app: typer.Typer) -> None:
    app.add_typer(memory_app, name="memory")

    @app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def hook(
        event: str = typer.Argument(
            ...,
            help="session-start, user-prompt-submit, "
            "pre-tool-use, post-tool-use, stop, "
            "session-end or pre-compact",
        ),
    ) -> None:
        """Claude Code hook entry: reads the hook payload on stdin; always exits 0."""
        from ..memory.hooks import main

        main([event])

    @app.command()
    def mcp() -> None:
        """Serve memories, scenarios, runs, playbooks and the judge over MCP (stdio)."""
        from ..mcp.server import serve

        serve()

    @app.command()
    def memorize(
        session_id: str | None = typer.Option(None, "--session-id"),
        transcript: Path | None = typer.Option(None, "--transcript"),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Turn a session's captures and transcript into memories (session-end does this)."""
        from .. import paths
        from ..errors import UsageError
        from ..memory.memorize import memorize as run

        if session_id is None and transcript is None:
            raise UsageError("give --session-id (captured by the hooks) or --transcript FILE")
        if transcript is not None and transcript.is_dir():
            raise UsageError(
                f"--transcript takes a session's .jsonl file; {transcript} is a directory"
            )
        if transcript is not None and not transcript.is_file():
            raise UsageError(f"transcript not found: {transcript}")
        if transcript is None and not paths.session_dir(session_id).is_dir():
            from ..errors import NotFoundError

            raise NotFoundError(
                f"no session {session_id!r}: the hooks captured nothing under "
                f"{paths.session_dir(session_id)} (check the id, or give --transcript FILE)"
            )
        session = session_id or transcript.stem
        result = run(session, paths.home(), transcript=str(transcript) if transcript else None)
        if as_json:
            print_json(
                {
                    "stored": result.stored,
                    "reinforced": result.reinforced,
                    "skipped": result.skipped,
                    "model": result.model,
                }
            )
        elif result.message:
            sys.stdout.write(result.message + "\n")
        elif result.skipped:
            from ..memory.consent import HOW_TO_ANSWER

            sys.stderr.write(f"nothing memorized: {result.skipped}. {HOW_TO_ANSWER}\n")

    @app.command()
    def install(
        target: str = typer.Argument(..., help="claude-code"),
        scope: str = typer.Option("project", "--scope", help="project or user"),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Add lessonloop's hooks to Claude Code's settings (idempotent, backed up first)."""
        from ..integrations import claude_code

        _check_target(target)
        result = claude_code.install(claude_code.settings_path(scope), claude_code.mcp_path(scope))
        if as_json:
            print_json(result)
        else:
            sys.stdout.write(
                f"installed hooks for {', '.join(result['events'])} in "
                f"{result['settings']}"
                + (f" (backup: {result['backup']})" if result["backup"] else "")
                + f"\nMCP server: {result['mcp']}"
                + "\nnext: `lessonloop memory consent yes` to allow automatic "
                "memories\n"
            )

    @app.command()
    def uninstall(
        target: str = typer.Argument(..., help="claude-code"),
        scope: str = typer.Option("project", "--scope", help="project or user"),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Remove only lessonloop's hooks from Claude Code's settings; memories stay."""
        from ..integrations import claude_code

        _check_target(target)
        result = claude_code.uninstall(
            claude_code.settings_path(scope), claude_code.mcp_path(scope)
        )
        if as_json:
            print_json(result)
        else:
            sys.stdout.write(
                (
                    f"removed lessonloop from {', '.join(result['removed'])} in "
                    f"{result['settings']}"
                    if result["removed"]
                    else f"nothing of lessonloop in {result['settings']}"
                )
                + "\n"
            )


def _check_target(target: str) -> None:
    from ..errors import UsageError

    if target != "claude-code":
        raise UsageError(f"unknown integration {target!r}; available: claude-code")
