"""What the local dashboard (``lessonloop serve``) reads that no other use case gave yet: the
knowledge per scope as data, a run's page as HTML without writing it, and a run's event log
to tail. The HTTP adapter (``web/``) calls these and the other use cases; it adds no logic.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import NotFoundError, UsageError
from ..knowledge.entries import STATUSES
from ..loop.options import MAX_ITERATIONS, MAX_MATCHES, MAX_SEED
from ..loop.request import RUN_ID
from ..promotion.records import ACTORS, KINDS, ROLES
from .stores import reading

KNOWLEDGE_LISTS = (("bullet", "playbook"), ("hint", "hints"), ("dead_end", "dead_ends"))
SCOPE_MAX = 200  # characters: a scope is a scenario's or a task's name with its kind
# What a scope may be, as the check below and the API's document (``web/openapi.py``) say it:
# no control characters and no ``/`` (a path segment), 1-200 characters.
# what a run request may ask, as `run` checks it (loop.options, loop.request): the API's
# document states the same bounds so a request it describes is never refused
RUN_LIMITS = {"iterations": MAX_ITERATIONS, "matches": MAX_MATCHES, "seed": MAX_SEED}
RUN_ID_PATTERN = RUN_ID.pattern
SCOPE_PATTERN = "^[^\\x00-\\x1f\\x7f/]{1,%d}$" % SCOPE_MAX


def redacted(value: Any) -> Any:
    """``value`` (text, or JSON-like data) with every secret the redactor knows replaced: for
    what the dashboard serves that does not come from the (already redacted) store."""
    from ..safety import redact_obj

    return redact_obj(value)


def knowledge_scope(name: str) -> str:
    """The store's scope for ``name``: a scope as stored (``scenario:grid_ctf``,
    ``task:fix-bug``) or a scenario's bare name (``grid_ctf``)."""
    from ..knowledge.entries import scenario_scope

    if re.fullmatch(SCOPE_PATTERN, name) is None:
        raise UsageError(
            f"is a scenario name or a scope such as scenario:grid_ctf (1-{SCOPE_MAX} characters, "
            "no control characters or /)",
            field="scope",
        )
    return name if ":" in name else scenario_scope(name)


def knowledge_scopes() -> list[dict[str, Any]]:
    """Every scope that holds run knowledge (playbook bullets, hints, dead ends), with how many
    active entries of each it holds, by scope name."""
    kinds = tuple(kind for kind, _ in KNOWLEDGE_LISTS)
    with reading(paths.home()) as store:
        if store is None:
            return []
        rows = store.query(
            "SELECT scope, kind, COUNT(*) AS entries FROM knowledge WHERE status = 'active' "
            f"AND kind IN ({','.join('?' * len(kinds))}) GROUP BY scope, kind ORDER BY scope",
            kinds,
        )
    scopes: dict[str, dict[str, Any]] = {}
    for row in rows:
        counts = scopes.setdefault(
            row["scope"], {"scope": row["scope"], **{name: 0 for _, name in KNOWLEDGE_LISTS}}
        )
        counts[dict(KNOWLEDGE_LISTS)[row["kind"]]] = row["entries"]
    return list(scopes.values())


def knowledge(name: str) -> dict[str, Any]:
    """A scope's active playbook bullets (most useful first), hints and dead ends (newest
    first), each with its evidence: ``{scope, playbook, hints, dead_ends}``. NotFoundError for
    a scope that holds nothing and is no scenario's."""
    from ..knowledge.entries import active, ranked
    from ..scenarios import registry

    scope = knowledge_scope(name)
    with reading(paths.home()) as store:
        entries = (
            ranked(active(store, scope, tuple(k for k, _ in KNOWLEDGE_LISTS))) if store else []
        )
    kind, _, scenario = scope.partition(":")
    if not entries and not (kind == "scenario" and scenario in registry.available_names()):
        raise NotFoundError(f"no knowledge in scope {scope!r}", listing="knowledge_scopes")
    lists: dict[str, Any] = {"scope": scope}
    for entry_kind, list_name in KNOWLEDGE_LISTS:
        chosen = [entry for entry in entries if entry.kind == entry_kind]
        if entry_kind == "dead_end":  # their evidence stays at zero: newest first
            chosen.sort(key=lambda entry: -entry.id)
        lists[list_name] = [
            {
                "id": entry.id,
                "summary": entry.summary,
                "content": entry.content,
                "tags": entry.tags,
                "helpful": entry.helpful,
                "harmful": entry.harmful,
                "seen": entry.seen,
                "author": entry.author,
                "created_at": entry.created_at,
            }
            for entry in chosen
        ]
    return lists


def known_scenario(name: str) -> None:
    """NotFoundError (pointing to the scenarios) for a name no scenario has and for a file
    reference whose file is not there: what the API answers 404 for, as for an unknown run
    id, before the use case checks the rest of the request."""
    from ..scenarios import registry

    if registry.is_file_reference(name):
        path = name.rpartition(":")[0]
        if not Path(path).is_file():
            raise NotFoundError(f"scenario file not found: {path}", listing="list_scenarios")
    elif name not in registry.available_names():
        raise NotFoundError(
            f"unknown scenario {name!r} (or path/to/file.py:ClassName)", listing="list_scenarios"
        )


def known_run(run_id: str) -> dict[str, Any]:
    """A run's row as its run-status-v1 run object's first fields (NotFoundError, pointing to
    the list of runs, for an unknown id): checked before anything reads its folder. A run
    marked running whose process is gone is ``interrupted``; see ``shown_status``."""
    from ..store import runs as run_store

    with reading(paths.home()) as store:
        row = run_store.find_run(store, run_id) if store is not None else None
    if row is None:
        raise NotFoundError(f"unknown run id {run_id!r}", listing="list_runs")
    return {"run_id": row["run_id"], "scenario": row["scenario"], "status": shown_status(row)}


def shown_status(run: Any) -> str:
    """The status a person should see now: a run marked running that no process plays is
    ``interrupted`` (as ``status`` says), and a stopped or finished run that a process plays
    again (resumed, extended: its lock is taken before its row says so) is ``running``."""
    if run_active(run["run_id"]):
        return "running"
    return "interrupted" if run["status"] == "running" else run["status"]


def run_interrupted(run_id: str) -> bool:
    """Whether the run's row says running while no process plays it (killed with -9): a
    stream of its events need not wait for it to take its lock. (A run marks itself running
    only once it holds its lock, and marks how it ended before it lets go of it.)"""
    return bool(known_run(run_id)["status"] == "interrupted")


GONE = "the process running it is gone; resume it to continue"  # as loop.status says


def run_page(run_id: str) -> str:
    """The run's HTML report (what ``lessonloop report`` writes), rendered from the store and
    returned, not written: the dashboard shows it live, with the status ``shown_status`` gives
    (interrupted when its process is gone, running while it is being resumed)."""
    from ..report.data import collect
    from ..report.page import run_page as render

    with reading(paths.home()) as store:
        if store is None:
            raise NotFoundError(f"unknown run id {run_id!r}", listing="list_runs")
        report = collect(store, run_id)
    status = shown_status({"run_id": run_id, "status": report.run["status"]})
    if status != report.run["status"]:  # killed with -9, or being resumed
        report.run.update(status=status, stop_reason=GONE if status == "interrupted" else None)
    return render(report)


def events_path(run_id: str) -> Path:
    """The run's event log (``runs/<id>/events.ndjson``), for a run the store knows."""
    known_run(run_id)
    return paths.run_dir(run_id) / "events.ndjson"


def read_events(path: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    """The complete events of a log after byte ``offset`` (redacted when written), and the
    offset to read on from."""
    from ..loop.events import read_events as read

    return read(path, offset)


TAIL_BYTES = 64 * 1024  # an event line is a few hundred bytes; a run's summary a few thousand


def event_before(path: Path, offset: int) -> dict[str, Any] | None:
    """The last complete event of a log before byte ``offset`` (None when there is none in
    its last ``TAIL_BYTES``): where a stream that starts at ``offset`` finds the run."""
    import json

    start = max(0, offset - TAIL_BYTES)
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read(offset - start)
    except OSError:
        return None
    lines = data[: data.rfind(b"\n") + 1].splitlines()
    for line in reversed(lines[1:] if start else lines):  # a cut first line is no event
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            return event
    return None


def run_active(run_id: str) -> bool:
    """Whether a process holds the run's lock now (it is being played)."""
    from ..loop.runlock import is_active

    return is_active(paths.run_dir(run_id))


# The memory page: each memory's evidence and whether it is still recalled ----------------------
MEMORY_EVIDENCE = ("helped", "misled", "injected", "last_used_at", "status", "stale")
MEMORY_STATUSES = STATUSES
HELD_SHOWN = 200  # memories out of recall the page lists (stale ones first, then newest)


def _evidence(store: Any, scope: str, numbers: list[int]) -> dict[int, dict[str, Any]]:
    """``MEMORY_EVIDENCE`` of the memories ``numbers`` of ``scope``, by number: helped and
    misled are the knowledge row's helpful and harmful counters."""
    found: dict[int, dict[str, Any]] = {}
    for start in range(0, len(numbers), 500):  # within SQLite's limit on query parameters
        chunk = numbers[start : start + 500]
        for row in store.query(
            f"SELECT * FROM knowledge WHERE scope = ? AND number IN ({','.join('?' * len(chunk))})",
            (scope, *chunk),
        ):
            keys = row.keys()
            found[row["number"]] = {
                "helped": row["helpful"],
                "misled": row["harmful"],
                "injected": row["injected"] if "injected" in keys else 0,
                "last_used_at": row["last_used_at"] if "last_used_at" in keys else None,
                "status": row["status"],
                "stale": row["status"] == "stale",
            }
    return found


def with_evidence(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Memory objects (``app.memory``) with ``MEMORY_EVIDENCE`` added: what the dashboard's
    memory page shows of each (``GET /api/memories``)."""
    scopes = {item["scope"] for item in items}
    evidence: dict[tuple[str, int], dict[str, Any]] = {}
    for scope in scopes:
        with reading(paths.home() if scope == "project" else paths.user_home()) as store:
            if store is not None:
                numbers = [item["id"] for item in items if item["scope"] == scope]
                for number, values in _evidence(store, scope, numbers).items():
                    evidence[(scope, number)] = values
    return [{**item, **evidence.get((item["scope"], item["id"]), {})} for item in items]


def held_memories(scope: str = "all") -> list[dict[str, Any]]:
    """Memories out of recall (stale, pending, retired, superseded, rejected) with their
    evidence: stale ones first (a confirmation brings them back), then the newest."""
    from ..knowledge.entries import MEMORY_KINDS, Entry
    from .memory import memory_objects

    if scope not in ("all", "project", "user"):
        raise UsageError(f"is project, user or all, not {scope!r}", field="scope")
    roots = (("project", paths.home()), ("user", paths.user_home()))
    items: list[dict[str, Any]] = []
    for name, root in (pair for pair in roots if scope in ("all", pair[0])):
        with reading(root) as store:
            if store is None:
                continue
            rows = store.query(
                f"SELECT * FROM knowledge WHERE scope = ? AND status <> 'active' AND kind IN "
                f"({','.join('?' * len(MEMORY_KINDS))}) ORDER BY status = 'stale' DESC, "
                "updated_at DESC, id DESC LIMIT ?",
                (name, *MEMORY_KINDS, HELD_SHOWN),
            )
            items += memory_objects(store, [Entry.from_row(row) for row in rows])
    return with_evidence(items)[:HELD_SHOWN]


def ago(stamp: str | None) -> str | None:
    """How long ago ``stamp`` was, as recall lines say it (``today``, ``3 days``)."""
    from ..memory.recall_lines import ago as words_ago

    return words_ago(stamp)


# The promotions page: the gate's record (app/promotion) with every trial -----------------------
# A scope the filter takes, as ``promotions --scope`` reads it (``playbook_scope``): a scenario's
# name, or ``scenario:NAME`` / ``task:NAME``; never project or user (memories), nothing blank
# at either end, no control characters. The API's document states this pattern.
_NAME = "[^\\s\\x00-\\x1f\\x7f](?:[^\\x00-\\x1f\\x7f]{0,190}[^\\s\\x00-\\x1f\\x7f])?"
_BARE = "[^\\s:\\x00-\\x1f\\x7f](?:[^:\\x00-\\x1f\\x7f]{0,190}[^\\s:\\x00-\\x1f\\x7f])?"
PROMOTION_SCOPE_PATTERN = f"^(?!(?:project|user)$)(?:(?:scenario|task):{_NAME}|{_BARE})$"
PROMOTIONS_SHOWN = 200  # candidates the page lists (newest first), each with its trials
# what a candidate is and who decides, as the promotion gate records them (for the API's document)
PROMOTION_ROLES, PROMOTION_KINDS, PROMOTION_ACTORS = ROLES, KINDS, ACTORS


def promotion_scope(name: str) -> str:
    """``name`` as the promotions filter takes it (UsageError naming ``scope`` otherwise)."""
    if re.fullmatch(PROMOTION_SCOPE_PATTERN, name) is None:
        raise UsageError(
            "is a scenario name, scenario:NAME or task:NAME (not project or user; no control "
            f"characters or blanks at either end), not {name!r}",
            field="scope",
        )
    return name


def promotions(name: str | None = None, limit: int | None = None) -> dict[str, Any]:
    """What ``promotions --json`` answers (``app.promotion.list_promotions``: the active
    pointers and the candidates, newest first, with their decisions), each candidate with its
    trials as ``export`` gives them (``trial_scores``), each trial with its delta; ``total``
    candidates in all, the first ``limit`` listed. Redacted: a rationale is a person's words."""
    from ..promotion import records
    from .promotion import list_promotions

    listed = list_promotions(promotion_scope(name) if name is not None else None)
    candidates = listed["candidates"]
    shown = candidates if limit is None else candidates[:limit]
    with reading(paths.home()) as store:
        for candidate in shown:
            played = records.trials(store.conn, candidate["id"]) if store is not None else []
            candidate["trial_scores"] = [
                {**trial, "delta": trial["candidate"] - trial["incumbent"]} for trial in played
            ]
    answer: dict[str, Any] = redacted(
        {"active": listed["active"], "candidates": shown, "total": len(candidates)}
    )
    return answer


def promotion_scopes() -> list[str]:
    """The scopes that hold promotion candidates or an active pointer, by name."""
    with reading(paths.home()) as store:
        if store is None:
            return []
        rows = store.query(
            "SELECT scope FROM promotion_candidates UNION SELECT scope FROM active_pointers "
            "ORDER BY scope"
        )
    return [row["scope"] for row in rows]


def promotion_count(scope: str) -> int:
    """How many promotion candidates ``scope`` (as stored: ``scenario:NAME``) holds."""
    with reading(paths.home()) as store:
        if store is None:
            return 0
        rows = store.query(
            "SELECT COUNT(*) AS n FROM promotion_candidates WHERE scope = ?", (scope,)
        )
    return int(rows[0]["n"])


def run_promotion_scope(run_id: str, scenario: str) -> str | None:
    """The scope whose candidates a run's page links to: the one the run proposed candidates
    in, else its scenario's when that scope holds any; None when there are none."""
    from ..knowledge.entries import scenario_scope

    with reading(paths.home()) as store:
        if store is None:
            return None
        rows = store.query(
            "SELECT scope FROM promotion_candidates WHERE run_id = ? ORDER BY id DESC LIMIT 1",
            (run_id,),
        )
    if rows:
        return str(rows[0]["scope"])
    scope = scenario_scope(scenario)
    return scope if promotion_count(scope) else None
