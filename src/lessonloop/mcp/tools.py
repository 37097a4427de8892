"""The MCP tools: each a top-level function over the use cases in ``lessonloop.app``, its
docstring the tool's description and its annotated parameters the tool's input schema (the
SDK reads both). ``TOOLS`` is what ``server.py`` registers, with each tool's hints.

Imported by ``server.build_server`` once the SDK is there: the schemas need Pydantic.
"""

import json
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import Field, StrictInt

from ..app import (
    inspection,
    knowledge,
    knowledge_share,
    memory,
    memory_evidence,
    memory_review,
    runs,
    scenarios,
    tasks,
)
from ..app.limits import MAX_LISTED
from ..app.memory import MAX_SEARCH, split_tags
from ..errors import UsageError

RECENT_MEMORIES = 20

Kind = Literal["pattern", "decision", "preference", "observation"]
Scope = Literal["project", "user"]
AnyScope = Literal["project", "user", "all"]


def memory_store(
    type: Annotated[
        Kind,
        Field(
            description="pattern (how things are done here), decision "
            "(a choice and its reason), preference (what the user "
            "wants) or observation (a fact learned)."
        ),
    ],
    summary: Annotated[str, Field(description="The memory in one line (120 characters are kept).")],
    content: Annotated[str, Field(description="Details (4096 characters are kept).")] = "",
    why: Annotated[str, Field(description="Why it holds or matters.")] = "",
    how_to_apply: Annotated[str, Field(description="When and how to use it.")] = "",
    tags: Annotated[
        list[str] | str | None,
        Field(description="Tags: a list, or one comma-separated string. 'mcp' is added."),
    ] = None,
    scope: Annotated[
        Scope, Field(description="project (this project's store) or user (across projects).")
    ] = "project",
) -> dict[str, Any]:
    """Remember something for later sessions. It goes through lessonloop's admission gate:
    secrets are redacted, control characters stripped, sizes capped, and a duplicate
    reinforces the existing memory instead of adding one. Returns the stored memory and
    the action (added or reinforced)."""
    tag_list = split_tags(tags)
    if "mcp" not in tag_list:  # where it came from
        tag_list.append("mcp")
    return memory.store_memory(type, summary, content, why, how_to_apply, tag_list, scope)


def memory_edit(
    id: Annotated[
        int,
        Field(strict=True, description="The memory's id (from memory_search or memory_audit)."),
    ],
    summary: Annotated[
        str | None, Field(description="The new one-line summary (120 characters are kept).")
    ] = None,
    content: Annotated[
        str | None, Field(description="The new details (4096 characters are kept).")
    ] = None,
    scope: Annotated[
        Scope, Field(description="The scope the id belongs to (ids are numbered per scope).")
    ] = "project",
) -> dict[str, Any]:
    """Correct a memory's summary and/or content. The new text goes through the admission
    gate (secrets redacted, sizes capped); a text that repeats another memory is refused,
    naming it. The memory counts as written by the user afterwards (never overwritten
    automatically) and is confirmed now. Returns the memory with its action (edited or
    unchanged)."""
    return memory_review.edit_memory(id, summary, content, scope)


def memory_supersede(
    old: Annotated[int, Field(strict=True, description="The id of the memory to replace.")],
    new: Annotated[
        int,
        Field(strict=True, description="The id of the active memory that replaces it."),
    ],
    scope: Annotated[
        Scope, Field(description="The scope of both memories (ids are numbered per scope).")
    ] = "project",
) -> dict[str, Any]:
    """Replace an outdated memory by a newer one of the same scope: the old one is no longer
    recalled or found by memory_search, but keeps its history, which names its replacement.
    Returns {"superseded": old memory, "by": new memory}."""
    return memory_review.supersede_memory(old, new, scope)


def memory_search(
    query: Annotated[str, Field(description="Words to look for (BM25 full-text search).")],
    limit: Annotated[
        int, Field(ge=1, le=MAX_SEARCH, strict=True, description="At most this many.")
    ] = 10,
    scope: Annotated[AnyScope, Field(description="project, user or all.")] = "all",
) -> dict[str, Any]:
    """Search memories, best match first (BM25, nudged by evidence). Returns
    {"memories": [{id, type, scope, summary, content, why, how_to_apply, tags, author,
    source, seen, created_at, score}]}."""
    return {"memories": memory.search_memories(query, scope, limit)}


def memory_recall() -> str:
    """The memories a new session starts with: the most useful project memories, then the
    user's, within a token budget (what the session-start hook injects)."""
    return memory.recall_text() or "No memories yet."


def memory_audit(
    limit: Annotated[
        int, Field(ge=1, le=MAX_LISTED, strict=True, description="At most this many.")
    ] = 50,
    scope: Annotated[AnyScope, Field(description="project, user or all.")] = "all",
) -> dict[str, Any]:
    """Recent automatic memories (not written by the user), newest first, to review;
    forget the wrong ones with memory_forget. Returns {"memories": [...]}."""
    return {"memories": memory.recent_memories(scope, limit, automatic_only=True)}


def memory_forget(
    id: Annotated[
        int,
        Field(strict=True, description="The memory's id (from memory_search or memory_audit)."),
    ],
    scope: Annotated[
        Scope,
        Field(
            description="The scope the id belongs to: pass the "
            "'scope' of the search or audit result, since ids are "
            "numbered per scope (project 1 and user 1 are two "
            "memories)."
        ),
    ] = "project",
) -> dict[str, Any]:
    """Delete one memory for good, with its provenance and its line in the Markdown view.
    Returns {"forgotten", "scope", "summary"}: check the summary is the one you meant."""
    return memory.forget_memory(id, scope)


def memory_feedback(
    id: Annotated[
        int,
        Field(strict=True, description="The memory's id (from memory_search or memory_audit)."),
    ],
    verdict: Annotated[
        Literal["helped", "misled"],
        Field(description="helped (following it worked) or misled (it led you wrong)."),
    ],
    note: Annotated[
        str, Field(description="Why, in a sentence (kept in its history, redacted).")
    ] = "",
    scope: Annotated[
        Scope, Field(description="The scope the id belongs to (ids are numbered per scope).")
    ] = "project",
) -> dict[str, Any]:
    """Say whether a memory you were given helped or misled. Recall ranks memories by this
    evidence; one that mostly misleads (misled at least twice, and more often than it helped)
    leaves recall. Returns {id, scope, kind, summary, injected, helped, misled, last_used_at,
    status, pinned, verdict, retired}."""
    return memory_evidence.give_feedback(id, verdict, note, scope, source="mcp")


def list_scenarios() -> dict[str, Any]:
    """The scenarios that can be evaluated and run, each with its description and the JSON
    schema of its strategy. Returns {"scenarios": [{name, description, strategy_schema}]}."""
    return {"scenarios": scenarios.list_scenarios()}


def evaluate_strategy(
    scenario: Annotated[
        str,
        Field(description="A scenario name (see list_scenarios) or path/to/file.py:ClassName."),
    ],
    strategy: Annotated[
        dict[str, Any] | str,
        Field(
            description="The strategy: a JSON object matching the scenario's strategy_schema "
            "(or that object as a JSON string)."
        ),
    ],
    seeds: Annotated[
        str | list[StrictInt],
        Field(description="Seeds to play: 'A..B' (inclusive), 'A,B,C', or a list of integers."),
    ] = "1..5",
    match_timeout: Annotated[
        float,
        Field(gt=0, le=3600, strict=True, description=("Seconds before a match is killed.")),
    ] = 10.0,
) -> dict[str, Any]:
    """Score one strategy on chosen seeds (deterministic per strategy and seeds). Returns
    {strategy, seeds, scores, mean_score, dimensions, valid, problems} plus errors for
    matches that failed (their score is null)."""
    report = scenarios.evaluate(scenario, [strategy], seeds, match_timeout)[0]
    if not report["valid"]:
        raise UsageError(
            f"the strategy is not valid for {scenario}: {'; '.join(report['problems'])}"
        )
    return report


def run_start(
    scenario: Annotated[
        str,
        Field(description="A scenario name (see list_scenarios) or path/to/file.py:ClassName."),
    ],
    iterations: Annotated[
        int, Field(ge=1, le=100_000, strict=True, description="Generations to run.")
    ] = 10,
    run_id: Annotated[
        str | None,
        Field(description="Name the run (letters, digits, - and _); an existing id continues it."),
    ] = None,
    provider: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Provider for every role (default: configuration, else the offline agent).",
        ),
    ] = None,
    model: Annotated[str | None, Field(min_length=1, description="Model for the provider.")] = None,
    matches: Annotated[
        int | None,
        Field(ge=1, le=1000, strict=True, description=("Paired matches per attempt (default 5).")),
    ] = None,
    seed: Annotated[
        int | None, Field(ge=0, strict=True, description="Run seed (default 0).")
    ] = None,
) -> dict[str, Any]:
    """Start a run of a scenario in the background and return at once with its run_id;
    poll run_status until its status is completed, stopped or failed."""
    return runs.start_in_background(
        scenario,
        iterations,
        run_id,
        {"provider": provider, "model": model, "matches": matches, "seed": seed},
    )


def run_status(
    run_id: Annotated[str, Field(description="The run's id (from run_start or list_runs).")],
) -> dict[str, Any]:
    """A run's state and every generation (run-status-v1, as `lessonloop status --json`):
    {run, latest_generation, progress_report, generations}, plus process (pid, exit_code)
    for a run this server started."""
    document = inspection.status(run_id)
    process = runs.background_process(run_id)
    if process is not None:
        document["process"] = process
    return document


def list_runs(
    limit: Annotated[
        int, Field(ge=1, le=MAX_LISTED, strict=True, description="At most this many.")
    ] = 50,
) -> dict[str, Any]:
    """Runs, newest first, each with its status, progress, best score and Elo. Returns
    {"runs": [...]}."""
    return {"runs": inspection.list_runs(limit)}


def read_playbook(
    scenario: Annotated[str, Field(description="A scenario name (see list_scenarios).")],
    view: Annotated[
        Literal["playbook", "hints", "dead_ends", "all"],
        Field(description="playbook (lessons ranked by evidence), hints, dead_ends or all."),
    ] = "playbook",
) -> str:
    """What lessonloop has learned about a scenario, as Markdown: playbook bullets with
    their evidence (+helpful/-harmful, seen n) and tags, hints and dead ends."""
    return knowledge.playbook_text(scenario, view)


def knowledge_export(
    scope: Annotated[
        str,
        Field(
            min_length=1,
            description="all (every scope of the project's store), project, user (the "
            "user's store), a scenario name, scenario:NAME or task:NAME.",
        ),
    ] = "all",
) -> str:
    """Knowledge entries with their evidence (helpful, harmful, seen) and provenance as
    versioned JSONL, secrets redacted: a header line {"format": "lessonloop-knowledge",
    "version": 1, ...}, then one JSON object per entry. `lessonloop knowledge import FILE`
    brings such a file into another store."""
    return knowledge_share.export_text(scope)


def judge_output(
    task: Annotated[
        str,
        Field(
            description="Path of a task file (YAML or JSON), absolute or "
            "relative to the server's working directory."
        ),
    ],
    output: Annotated[str, Field(description="The output to score.")],
    provider: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Judge provider, for a task with a rubric (default: the judge route).",
        ),
    ] = None,
    model: Annotated[str | None, Field(min_length=1, description="Judge model.")] = None,
) -> dict[str, Any]:
    """Score one output of an agent task: required strings, format, the verifier in the
    sandbox (offline), then for a task with a rubric the judge model. Returns {score,
    passed_verifier, dimensions, reasoning, epoch}."""
    return tasks.judge_output(task, output, provider, model)


def playbook_resource(scenario: str) -> str:
    """A scenario's playbook as Markdown (bullets with their evidence)."""
    return knowledge.playbook_text(scenario)


def recent_memories_resource() -> str:
    """The 20 most recent memories (project and user), newest first, as JSON."""
    return json.dumps(memory.recent_memories("all", RECENT_MEMORIES), indent=2)


class Hints(NamedTuple):
    """What a client may assume of a tool (the MCP tool annotations)."""

    read_only: bool
    destructive: bool = False


class Served(NamedTuple):
    """Where a resource is served (a URI or URI template), its name and media type."""

    uri: str
    name: str
    mime_type: str


RESOURCES = (
    (playbook_resource, Served("lessonloop://playbook/{scenario}", "playbook", "text/markdown")),
    (
        recent_memories_resource,
        Served("lessonloop://memories/recent", "recent-memories", "application/json"),
    ),
)
TOOLS = (
    (memory_store, Hints(read_only=False)),  # a repeat reinforces the memory: seen + 1
    (memory_edit, Hints(read_only=False)),
    (memory_supersede, Hints(read_only=False)),
    (memory_search, Hints(read_only=True)),
    (memory_recall, Hints(read_only=True)),
    (memory_audit, Hints(read_only=True)),
    (memory_forget, Hints(read_only=False, destructive=True)),
    (memory_feedback, Hints(read_only=False)),
    (list_scenarios, Hints(read_only=True)),
    (evaluate_strategy, Hints(read_only=True)),
    (run_start, Hints(read_only=False)),
    (run_status, Hints(read_only=True)),
    (list_runs, Hints(read_only=True)),
    (read_playbook, Hints(read_only=True)),
    (knowledge_export, Hints(read_only=True)),
    (judge_output, Hints(read_only=False)),
)
