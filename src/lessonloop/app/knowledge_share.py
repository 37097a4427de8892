"""Sharing knowledge between stores: ``lessonloop knowledge export`` writes a store's entries,
with their evidence and provenance, as a versioned JSONL file; ``knowledge import`` brings such
a file in through admission (``admission.admit_imported``), so a team can merge what each of
its members' agents learned. The MCP tool ``knowledge_export`` answers the same text.

The file: a header line ``{"format": "lessonloop-knowledge", "version": 1, "exported_at",
"scope", "entries"}``, then one JSON object per entry (``ENTRY_FIELDS`` and its
``provenance``). Every text is redacted again on the way out, and again on the way in.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import NotFoundError, UsageError
from .stores import reading, writing

if TYPE_CHECKING:
    from ..knowledge.admission import Imported
    from ..store.db import Store

FORMAT = "lessonloop-knowledge"
VERSION = 1
ENTRY_FIELDS = (
    "kind",
    "scope",
    "summary",
    "content",
    "why",
    "how_to_apply",
    "tags",
    "author",
    "status",
    "helpful",
    "harmful",
    "seen",
    "pinned",
    "created_at",
    "updated_at",
    "confirmed_at",
    "fingerprint",
)
TEXT_FIELDS = ("summary", "content", "why", "how_to_apply")
PROVENANCE_FIELDS = ("source", "run_id", "generation_index", "session_id", "detail", "created_at")
PROVENANCE_KEPT = 10  # original provenance rows an imported entry records (the first ones)
NAMED_SCOPES = ("all", "project", "user")  # exported even when empty (a header line alone)
MAX_FILE_MB = 64
STORE_SCOPES = ("project", "user")  # the memories' scopes: the project's and the user's store
_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


def resolve(scope: str) -> tuple[Path, str | None]:
    """The store (its root) and the stored scope ``scope`` names: ``all`` (every scope of the
    project's store: None), ``project``, ``user`` (the user's store), a scenario's name,
    ``scenario:NAME`` or ``task:NAME``."""
    from .dashboard import knowledge_scope

    if scope == "all":
        return paths.home(), None
    if scope == "user":
        return paths.user_home(), "user"
    if scope == "project":
        return paths.home(), "project"
    return paths.home(), knowledge_scope(scope)


# --- export ----------------------------------------------------------------------------------


def _clean(text: str) -> str:
    from ..safety import clean

    return clean(text)


def _records(store: Store, scope: str | None) -> list[dict[str, Any]]:
    """The entries of ``scope`` (every scope when None), each as its export line's object."""
    from ..knowledge.entries import Entry
    from ..safety import redact_obj

    where, params = ("WHERE k.scope = ?", (scope,)) if scope else ("", ())
    origins: dict[int, list[dict[str, Any]]] = {}
    for row in store.query(
        f"SELECT p.* FROM knowledge_provenance p JOIN knowledge k ON k.id = p.knowledge_id "
        f"{where} ORDER BY p.id",
        params,
    ):
        origin = {name: row[name] for name in PROVENANCE_FIELDS}
        origins.setdefault(row["knowledge_id"], []).append(redact_obj(origin))
    records = []
    for row in store.query(f"SELECT * FROM knowledge k {where} ORDER BY scope, number, id", params):
        entry = Entry.from_row(row)
        record: dict[str, Any] = {name: getattr(entry, name, None) for name in ENTRY_FIELDS}
        record["fingerprint"] = row["fingerprint"]
        for name in TEXT_FIELDS:
            record[name] = _clean(record[name])
        record["tags"] = [_clean(tag) for tag in entry.tags]
        record["provenance"] = origins.get(entry.id, [])
        records.append(record)
    return records


def _scopes(store: Store | None) -> list[str]:
    """The scopes an export may name: all, project, user, then every scope ``store`` holds."""
    held = (
        [row["scope"] for row in store.query("SELECT DISTINCT scope FROM knowledge ORDER BY 1")]
        if store is not None
        else []
    )
    return [*NAMED_SCOPES, *(name for name in held if name not in NAMED_SCOPES)]


def export_text(scope: str = "all") -> str:
    """The export of ``scope`` as JSONL text (the header line, then one line per entry)."""
    from ..timeutil import utc_now

    root, stored = resolve(scope)
    with reading(root) as store:
        records = _records(store, stored) if store is not None else []
        if not records and scope not in NAMED_SCOPES:  # a typo must not pass for an empty store
            raise NotFoundError(
                f"no knowledge in scope {stored!r}: export one of {', '.join(_scopes(store))}"
            )
    header = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": utc_now(),
        "scope": scope,
        "entries": len(records),
    }
    lines = [json.dumps(header)] + [json.dumps(r, ensure_ascii=False) for r in records]
    return "\n".join(lines) + "\n"


def export_to_file(scope: str, output: Path) -> dict[str, Any]:
    """Write the export of ``scope`` to ``output`` (atomically: a failed write leaves no half
    file); what was written: ``{path, scope, entries}``."""
    from ..files import atomic_write

    if output.is_dir():
        raise UsageError(f"is a file to write, and {output} is a directory", field="output")
    if not output.parent.is_dir():  # a mistyped path must not grow folders
        raise UsageError(
            f"is a file in an existing folder, and {output.parent} does not exist", field="output"
        )
    text = export_text(scope)
    atomic_write(output, text)
    return {"path": str(output), "scope": scope, "entries": text.count("\n") - 1}


# --- import ----------------------------------------------------------------------------------


def _problem(record: Any) -> str | None:
    """What is wrong with one entry line's object, or None."""
    from ..app.dashboard import SCOPE_PATTERN
    from ..knowledge.entries import AUTHORS, KINDS, MEMORY_KINDS, STATUSES

    if not isinstance(record, dict):
        return "an entry is a JSON object"
    kind, scope = record.get("kind"), record.get("scope")
    if kind not in KINDS:
        return f"kind is one of {', '.join(KINDS)}, not {kind!r}"
    if not isinstance(scope, str) or re.fullmatch(SCOPE_PATTERN, scope) is None:
        return "scope is missing or not a scope (project, user, scenario:NAME, task:NAME)"
    if (kind in MEMORY_KINDS) != (scope in STORE_SCOPES):
        return f"a {kind} does not belong in scope {scope!r}"
    if not isinstance(record.get("summary"), str) or not record["summary"].strip():
        return "summary is missing or empty"
    for name in TEXT_FIELDS[1:]:
        if not isinstance(record.get(name, ""), str):
            return f"{name} is not a string"
    tags = record.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        return "tags is not a list of strings"
    if record.get("author", "auto") not in AUTHORS:
        return f"author is auto or user, not {record.get('author')!r}"
    if record.get("status", "active") not in STATUSES:
        return f"status is one of {', '.join(STATUSES)}, not {record.get('status')!r}"
    for name in ("helpful", "harmful", "seen"):
        value = record.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
            return f"{name} is not a count"
    if not isinstance(record.get("pinned", False), bool):
        return "pinned is not true or false"
    if not isinstance(record.get("provenance", []), list):
        return "provenance is not a list"
    return None


def parse(text: str, name: str) -> list[dict[str, Any]]:
    """The entry objects of an export's text; a UsageError naming the first bad line (1-based)
    otherwise, so nothing of a bad file is imported."""
    # lines end at "\n" only: a text may hold U+2028 or a form feed, which JSON leaves as is
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines and not lines[-1]:
        lines.pop()
    try:
        header = json.loads(lines[0]) if lines else None
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{name}: line 1 is not JSON ({exc.msg}): not a knowledge export"
        ) from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise UsageError(
            f"{name}: line 1 is not a {FORMAT} header (made by `lessonloop knowledge export`)"
        )
    if header.get("version") != VERSION:
        raise UsageError(
            f"{name}: line 1: version {header.get('version')!r} is not supported "
            f"(this lessonloop reads version {VERSION})"
        )
    records = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{name}: line {number} is not JSON ({exc.msg})") from None
        problem = _problem(record)
        if problem:
            raise UsageError(f"{name}: line {number}: {problem}")
        records.append(record)
    return records


def _stamp(value: Any) -> str | None:
    return value if isinstance(value, str) and _STAMP.match(value) else None


def _origins(provenance: list[Any]) -> tuple[list[dict[str, Any]], int]:
    """An entry line's original provenance (its first PROVENANCE_KEPT rows) and how many rows
    there were. A row an earlier import recorded is replaced by the provenance that import
    carried, so an entry that travels export, import, export, import... keeps its first
    origin once instead of nesting each hop's detail inside the next (which grew every line).
    An earlier import's origin met again (an entry that went to a teammate and came back)
    is counted once."""
    origins: list[dict[str, Any]] = []
    count = 0
    for origin in provenance:
        if not isinstance(origin, dict):
            continue
        earlier = _import_detail(origin)
        if earlier is None:
            origins.append({key: origin.get(key) for key in PROVENANCE_FIELDS})
            count += 1
            continue
        inner, inner_count = earlier
        fresh = [row for row in inner if row not in origins]
        origins.extend(fresh)
        count += inner_count - (len(inner) - len(fresh))
    return origins[:PROVENANCE_KEPT], count


def _import_detail(origin: dict[str, Any]) -> tuple[list[dict[str, Any]], int] | None:
    """The provenance an import's provenance row carried (as ``_imported`` wrote its detail),
    or None for any other row."""
    if origin.get("source") != "import" or not isinstance(origin.get("detail"), str):
        return None
    try:
        detail = json.loads(origin["detail"])
    except json.JSONDecodeError:
        return None
    inner = detail.get("provenance") if isinstance(detail, dict) else None
    if not isinstance(inner, list):
        return None
    count = detail.get("provenance_count")
    kept = [
        {key: row.get(key) for key in PROVENANCE_FIELDS} for row in inner if isinstance(row, dict)
    ]
    return kept, count if isinstance(count, int) and count >= len(kept) else len(kept)


def _imported(record: dict[str, Any], name: str) -> Imported:
    """One entry line as what admission imports: the file, the entry's fingerprint (what
    tells this line from the file's others: admission counts a line imported once per entry)
    and its original provenance (``_origins``) go in the import's detail."""
    from ..knowledge.admission import Imported, Proposal
    from ..knowledge.entries import fingerprint

    origins, count = _origins(record.get("provenance", []))
    detail = {
        "file": name,
        "entry": fingerprint(
            record["kind"],
            record["summary"],
            record.get("content", ""),
            list(record.get("tags", [])),
        ),
        "provenance": origins,
        "provenance_count": count,
    }
    return Imported(
        Proposal(
            kind=record["kind"],
            scope=record["scope"],
            summary=record["summary"],
            content=record.get("content", ""),
            why=record.get("why", ""),
            how_to_apply=record.get("how_to_apply", ""),
            tags=list(record.get("tags", [])),
            author=record.get("author", "auto"),
            source="import",
            detail=json.dumps(detail, ensure_ascii=False, default=str),
        ),
        helpful=record.get("helpful", 0),
        harmful=record.get("harmful", 0),
        seen=record.get("seen", 1),
        pinned=record.get("pinned", False),
        created_at=_stamp(record.get("created_at")),
        confirmed_at=_stamp(record.get("confirmed_at")),
    )


def import_file(path: Path) -> dict[str, Any]:
    """Bring an export in through admission: every line checked first (a bad one refuses the
    file), then each store's entries in one transaction. Entries that are not active
    (retired, superseded, pending, rejected, stale) are not revived: counted as skipped.
    Returns the counts: ``{file, added, reinforced, unchanged, rejected, skipped}``."""
    from ..files import MB, read_user_file
    from ..knowledge import admission

    text = read_user_file(path, "knowledge file", limit=MAX_FILE_MB * MB)
    records = parse(text, path.name)
    report: dict[str, Any] = {
        "file": str(path),
        "added": 0,
        "reinforced": 0,
        "unchanged": 0,
        "rejected": 0,
        "skipped": 0,
    }
    batches: dict[str, list[Imported]] = {"project": [], "user": []}
    for record in records:
        if record.get("status", "active") != "active":
            report["skipped"] += 1
            continue
        store_name = "user" if record["scope"] == "user" else "project"
        batches[store_name].append(_imported(record, path.name))
    for store_name, items in batches.items():
        if not items:
            continue
        root = paths.user_home() if store_name == "user" else paths.home()
        with writing(root) as store:
            for outcome in admission.admit_imported(store, items, root):
                report[outcome.action] += 1
    return report
