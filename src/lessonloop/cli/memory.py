"""Session memory commands: ``hook``, ``memorize``, ``memory ...``, ``install``/``uninstall``."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer

from .output import print_json

memory_app = typer.Typer(help="Memories from coding-agent sessions: search, review, correct.",
                         no_args_is_help=True, add_completion=False)
SCOPES = ("project", "user")


def _roots(scope: str) -> list[tuple[str, Path]]:
    from .. import paths
    from ..errors import UsageError

    choices = {"project": [("project", paths.home())], "user": [("user", paths.user_home())]}
    choices["all"] = choices["project"] + choices["user"]
    if scope not in choices:
        raise UsageError(f"--scope is project, user or all, not {scope!r}")
    return choices[scope]


def _stores(scope: str, writable: bool = False):
    """(scope, root, open store) for each existing store of ``scope``."""
    from .. import paths
    from ..store import open_store

    for name, root in _roots(scope):
        if writable or paths.db_path(root).exists():
            with open_store(root, readonly=not writable) as store:
                yield name, root, store


def _entry(store, entry, score: float | None = None) -> dict:
    from ..knowledge.entries import provenance

    origin = provenance(store, entry.id)
    value = {"id": entry.id, "type": entry.kind, "scope": entry.scope, "summary": entry.summary,
             "content": entry.content, "why": entry.why, "how_to_apply": entry.how_to_apply,
             "tags": entry.tags, "author": entry.author,
             "source": origin[0]["source"] if origin else None, "seen": entry.seen,
             "created_at": entry.created_at}
    if score is not None:
        value["score"] = round(score, 4)
    return value


def _show(items: list[dict], as_json: bool, empty: str) -> None:
    if as_json:
        print_json(items)
        return
    if not items:
        sys.stdout.write(empty + "\n")
    for item in items:
        score = f" score {item['score']:.2f}" if "score" in item else ""
        sys.stdout.write(f"[{item['scope']} {item['id']}] ({item['type']}) {item['summary']}"
                         f"  — {item['author']}, seen {item['seen']}{score}\n")


@contextmanager
def _one(scope: str, entry_id: int, writable: bool = False):
    """The root, open store and entry ``entry_id`` of ``scope`` (project or user)."""
    from .. import paths
    from ..errors import NotFoundError, UsageError
    from ..knowledge.entries import get
    from ..store import open_store

    if scope not in SCOPES:
        raise UsageError(f"--scope is project or user, not {scope!r}")
    root = paths.home() if scope == "project" else paths.user_home()
    if not paths.db_path(root).exists():
        raise NotFoundError(f"no {scope} memories yet")
    with open_store(root, readonly=not writable) as store:
        entry = get(store, entry_id)
        if entry is None or entry.scope != scope:
            raise NotFoundError(f"no {scope} memory with id {entry_id} (see `lessonloop memory list`)")
        yield root, store, entry


@memory_app.command()
def consent(answer: str = typer.Argument(..., help="yes, no or ask"),
            as_json: bool = typer.Option(False, "--json")) -> None:
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
def search(query: str = typer.Argument(...), limit: int = typer.Option(10, "--limit"),
           scope: str = typer.Option("all", "--scope", help="project, user or all"),
           as_json: bool = typer.Option(False, "--json")) -> None:
    """Memories matching QUERY, best first (BM25, nudged by evidence)."""
    from ..knowledge.search import search as bm25
    from ..memory.recall import MEMORY_KINDS

    found = []
    for name, _, store in _stores(scope):
        found += [_entry(store, e, s) for e, s in bm25(store, query, scope=name,
                                                       kinds=MEMORY_KINDS, limit=limit)]
    found.sort(key=lambda item: -item["score"])
    _show(found[:limit], as_json, "no memory matches")


@memory_app.command("list")
def list_(scope: str = typer.Option("all", "--scope", help="project, user or all"),
          as_json: bool = typer.Option(False, "--json")) -> None:
    """Every active memory, most useful first."""
    from ..knowledge.entries import active
    from ..memory.recall import MEMORY_KINDS, ranked

    items = []
    for name, _, store in _stores(scope):
        items += [_entry(store, e) for e in ranked(active(store, name, MEMORY_KINDS))]
    _show(items, as_json, "no memories yet")


@memory_app.command()
def audit(limit: int = typer.Option(50, "--limit"),
          scope: str = typer.Option("all", "--scope", help="project, user or all"),
          as_json: bool = typer.Option(False, "--json")) -> None:
    """Recent automatic memories, newest first, to review (then `why` or `forget`)."""
    from ..knowledge.entries import active
    from ..memory.recall import MEMORY_KINDS

    items = []
    for name, _, store in _stores(scope):
        items += [_entry(store, e) for e in active(store, name, MEMORY_KINDS) if e.author == "auto"]
    items.sort(key=lambda item: item["created_at"], reverse=True)
    _show(items[:limit], as_json, "no automatic memories")


@memory_app.command()
def why(entry_id: int = typer.Argument(...),
        scope: str = typer.Option("project", "--scope", help="project or user"),
        as_json: bool = typer.Option(False, "--json")) -> None:
    """Where a memory came from: its provenance (sessions, runs) and its history."""
    from ..knowledge.entries import provenance

    with _one(scope, entry_id) as (_, store, entry):
        value = {**_entry(store, entry), "provenance": provenance(store, entry_id),
                 "events": [dict(r) for r in store.query(
                     "SELECT action, detail, created_at FROM knowledge_events WHERE "
                     "knowledge_id = ? ORDER BY id", (entry_id,))]}
    if as_json:
        print_json(value)
        return
    sys.stdout.write(f"[{scope} {entry_id}] ({entry.kind}) {entry.summary}\n")
    for field in ("content", "why", "how_to_apply"):
        if value[field]:
            sys.stdout.write(f"{field}: {value[field]}\n")
    for p in value["provenance"]:
        origin = p["session_id"] and f"session {p['session_id']}" or p["run_id"] and f"run {p['run_id']}"
        sys.stdout.write(f"- {p['created_at']} {p['source']} {origin or ''}\n")


@memory_app.command()
def forget(entry_id: int = typer.Argument(...),
           scope: str = typer.Option("project", "--scope", help="project or user"),
           as_json: bool = typer.Option(False, "--json")) -> None:
    """Delete one memory for good (and its line in the Markdown views)."""
    from ..knowledge import admission

    with _one(scope, entry_id, writable=True) as (root, store, entry):
        admission.forget(store, entry_id, root)
    if as_json:
        print_json({"forgotten": entry_id, "scope": scope, "summary": entry.summary})
    else:
        sys.stdout.write(f"forgot [{scope} {entry_id}] {entry.summary}\n")


@memory_app.command()
def add(type_: str = typer.Option(..., "--type", help="pattern, decision, preference or observation"),
        summary: str = typer.Option(..., "--summary"), content: str = typer.Option("", "--content"),
        why_: str = typer.Option("", "--why"), how: str = typer.Option("", "--how"),
        tags: str = typer.Option("", "--tags", help="comma-separated"),
        scope: str = typer.Option("project", "--scope", help="project or user"),
        as_json: bool = typer.Option(False, "--json")) -> None:
    """Add a memory you wrote yourself (it goes through the same admission: redaction, caps,
    dedupe)."""
    from ..errors import UsageError
    from ..knowledge import admission
    from ..knowledge.entries import get
    from ..memory.recall import MEMORY_KINDS

    if type_ not in MEMORY_KINDS:
        raise UsageError(f"--type is one of {', '.join(MEMORY_KINDS)}, not {type_!r}")
    if scope not in SCOPES:
        raise UsageError(f"--scope is project or user, not {scope!r}")
    proposal = admission.Proposal(
        kind=type_, scope=scope, summary=summary, content=content, why=why_, how_to_apply=how,
        tags=[t.strip() for t in tags.split(",") if t.strip()], author="user", source="user")
    for name, root, store in _stores(scope, writable=True):
        outcome = admission.admit(store, [proposal], root)[0]
        if outcome.action == "rejected":
            raise UsageError(f"not stored: {outcome.reason}")
        entry = get(store, outcome.entry_id)
        if as_json:
            print_json({**_entry(store, entry), "action": outcome.action})
        else:
            sys.stdout.write(f"{outcome.action} [{name} {entry.id}] {entry.summary}\n")


@memory_app.command()
def recall(as_json: bool = typer.Option(False, "--json")) -> None:
    """The block a new session starts with (what `hook session-start` injects)."""
    from .. import paths
    from ..memory.recall import block

    text = block(paths.home(), paths.user_home())
    if as_json:
        print_json({"additionalContext": text})
    elif text:
        sys.stdout.write(text + "\n")


@memory_app.command()
def prune(older_than: Optional[float] = typer.Option(None, "--older-than", help="Days without use."),
          keep: int = typer.Option(2000, "--keep", help="At most this many memories per scope."),
          scope: str = typer.Option("all", "--scope", help="project, user or all"),
          as_json: bool = typer.Option(False, "--json")) -> None:
    """Drop stale automatic memories (user-authored ones stay), cap each scope, VACUUM."""
    from .. import paths
    from ..errors import UsageError
    from ..knowledge import admission
    from ..memory.recall import MEMORY_KINDS

    if (older_than is not None and older_than < 0) or keep < 0:
        raise UsageError("--older-than and --keep must not be negative")
    report = {}
    for name, root in _roots(scope):
        if not paths.db_path(root).exists():
            continue
        for _, _, store in _stores(name, writable=True):
            report[name] = admission.prune(store, name, MEMORY_KINDS, older_than_days=older_than,
                                           keep_at_most=keep, root=root)
            store.vacuum()
    if as_json:
        print_json({"pruned": report})
    else:
        sys.stdout.write((", ".join(f"{n}: {c} pruned" for n, c in report.items())
                          or "no memories yet") + "\n")


def register(app: typer.Typer) -> None:
    app.add_typer(memory_app, name="memory")

    @app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def hook(event: str = typer.Argument(..., help="session-start, user-prompt-submit, "
                                                   "pre-tool-use, post-tool-use, stop, "
                                                   "session-end or pre-compact")) -> None:
        """Claude Code hook entry: reads the hook payload on stdin; always exits 0."""
        from ..memory.hooks import main

        main([event])

    @app.command()
    def memorize(session_id: Optional[str] = typer.Option(None, "--session-id"),
                 transcript: Optional[Path] = typer.Option(None, "--transcript"),
                 as_json: bool = typer.Option(False, "--json")) -> None:
        """Turn a session's captures and transcript into memories (session-end does this)."""
        from .. import paths
        from ..errors import UsageError
        from ..memory.memorize import memorize as run

        if session_id is None and transcript is None:
            raise UsageError("give --session-id (captured by the hooks) or --transcript FILE")
        if transcript is not None and not transcript.is_file():
            raise UsageError(f"transcript not found: {transcript}")
        session = session_id or transcript.stem
        result = run(session, paths.home(), transcript=str(transcript) if transcript else None)
        if as_json:
            print_json({"stored": result.stored, "reinforced": result.reinforced,
                        "skipped": result.skipped, "model": result.model})
        elif result.message:
            sys.stdout.write(result.message + "\n")
        elif result.skipped:
            from ..memory.consent import HOW_TO_ANSWER

            sys.stderr.write(f"nothing memorized: {result.skipped}. {HOW_TO_ANSWER}\n")

    @app.command()
    def install(target: str = typer.Argument(..., help="claude-code"),
                scope: str = typer.Option("project", "--scope", help="project or user"),
                as_json: bool = typer.Option(False, "--json")) -> None:
        """Add lessonloop's hooks to Claude Code's settings (idempotent, backed up first)."""
        from ..integrations import claude_code

        _check_target(target)
        result = claude_code.install(claude_code.settings_path(scope))
        if as_json:
            print_json(result)
        else:
            sys.stdout.write(f"installed hooks for {', '.join(result['events'])} in "
                             f"{result['settings']}"
                             + (f" (backup: {result['backup']})" if result["backup"] else "")
                             + "\nnext: `lessonloop memory consent yes` to allow automatic "
                               "memories\n")

    @app.command()
    def uninstall(target: str = typer.Argument(..., help="claude-code"),
                  scope: str = typer.Option("project", "--scope", help="project or user"),
                  as_json: bool = typer.Option(False, "--json")) -> None:
        """Remove only lessonloop's hooks from Claude Code's settings; memories stay."""
        from ..integrations import claude_code

        _check_target(target)
        result = claude_code.uninstall(claude_code.settings_path(scope))
        if as_json:
            print_json(result)
        else:
            sys.stdout.write((f"removed lessonloop from {', '.join(result['removed'])} in "
                              f"{result['settings']}" if result["removed"]
                              else f"nothing of lessonloop in {result['settings']}") + "\n")


def _check_target(target: str) -> None:
    from ..errors import UsageError

    if target != "claude-code":
        raise UsageError(f"unknown integration {target!r}; available: claude-code")

