"""``GET /api/openapi.json``: the API described by hand (OpenAPI 3.1), the one place that says
which parameters and bodies each route takes and what it answers."""

from __future__ import annotations

from typing import Any

from .. import __version__
from ..app.dashboard import (
    MEMORY_STATUSES,
    PROMOTION_ACTORS,
    PROMOTION_KINDS,
    PROMOTION_ROLES,
    PROMOTION_SCOPE_PATTERN,
    RUN_ID_PATTERN,
    RUN_LIMITS,
    SCOPE_PATTERN,
)
from .guard import TOKEN_HEADER

ERROR = {"$ref": "#/components/schemas/Error"}


def answer(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def errors(*statuses: int) -> dict[str, Any]:
    words = {
        400: "the request is wrong (a parameter, the body)",
        403: "refused: a Host that is not this server, or a change without the token",
        404: "no such run, memory, scope or scenario",
    }
    return {str(status): answer(words[status], ERROR) for status in statuses}


def query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


def path(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": schema,
        "description": description,
    }


RUN_ID = path("run_id", {"type": "string", "minLength": 1}, "The run's id (see GET /api/runs).")
MEMORY_ID = path("memory_id", {"type": "integer"}, "The memory's id within its scope.")
ONE_SCOPE = query(
    "scope", {"type": "string", "enum": ["project", "user"]}, "The memory's scope (project)."
)
TOKEN = {"name": TOKEN_HEADER, "in": "header", "required": True, "schema": {"type": "string"},
         "description": "The token `lessonloop serve` printed when it started."}  # fmt: skip

# One server-sent event as read by a client (OpenAPI 3.1: a text/event-stream's schema is each
# event's): its name, its data (one JSON object), and the log's offset after it as its id.
SSE_EVENT = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string"},
        "data": {"type": "string", "contentMediaType": "application/json"},
        "id": {"type": "string", "pattern": "^[0-9]+$"},
        "retry": {"type": "integer", "minimum": 0},
    },
}

START_BODY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["scenario"],
    "properties": {
        "scenario": {
            "type": "string",
            "minLength": 1,
            "pattern": "^[^\\s]+$",
            "description": "A scenario name (see GET /api/scenarios) or path/to/file.py:Class.",
        },
        "iterations": {
            "type": "integer",
            "minimum": 1,
            "maximum": RUN_LIMITS["iterations"],
            "default": 10,
        },
        "run_id": {
            "type": ["string", "null"],
            "pattern": RUN_ID_PATTERN,
            "description": "An existing id continues it.",
        },
        "provider": {"type": ["string", "null"]},
        "model": {"type": ["string", "null"]},
        "matches": {"type": ["integer", "null"], "minimum": 1, "maximum": RUN_LIMITS["matches"]},
        "seed": {"type": ["integer", "null"], "minimum": 0, "maximum": RUN_LIMITS["seed"]},
    },
}


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def array_of(name: str) -> dict[str, Any]:
    return {"type": "array", "items": ref(name)}


def fields(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    """An object with these fields (each a JSON schema), the first ones always present; more
    fields may come (a newer lessonloop adds, never renames)."""
    return {
        "type": "object",
        "required": list(required),
        "properties": {**required, **(optional or {})},
    }


TEXT: dict[str, Any] = {"type": "string"}
TEXT_OR_NULL: dict[str, Any] = {"type": ["string", "null"]}
COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}
NUMBER_OR_NULL: dict[str, Any] = {"type": ["number", "null"]}
INTEGER_OR_NULL: dict[str, Any] = {"type": ["integer", "null"]}

# The answers' shapes: what app/ returns (loop/status.py's run-status-v1 objects, app/memory's
# memory objects, app/dashboard's knowledge), checked against real answers by tests/web.
SCHEMAS: dict[str, Any] = {
    "Error": fields({"error": TEXT}),
    "Run": fields(
        {
            "run_id": TEXT,
            "scenario": TEXT,
            "target_generations": COUNT,
            "executor_mode": TEXT,
            "status": TEXT,
            "agent_provider": TEXT_OR_NULL,
            "created_at": TEXT,
            "updated_at": TEXT,
            "scenario_ref": TEXT_OR_NULL,
            "seed": INTEGER_OR_NULL,
            "stop_reason": TEXT_OR_NULL,
            "generations_completed": COUNT,
            "best_score": NUMBER_OR_NULL,
            "tournament_score": NUMBER_OR_NULL,
            "current_elo": NUMBER_OR_NULL,
        },
        {"kind": {"enum": ["scenario", "task", "evolve", "mission"]}},
    ),
    "Generation": fields(
        {
            "generation_index": COUNT,
            "mean_score": NUMBER_OR_NULL,
            "best_score": NUMBER_OR_NULL,
            "elo": NUMBER_OR_NULL,
            "wins": COUNT,
            "losses": COUNT,
            "ties": COUNT,
            "attempts": COUNT,
            "gate_decision": TEXT_OR_NULL,
            "status": TEXT,
            "duration_seconds": NUMBER_OR_NULL,
            "incumbent_score": NUMBER_OR_NULL,
            "mean_delta": NUMBER_OR_NULL,
            "validated_score": NUMBER_OR_NULL,
            "dimensions": {"type": ["object", "null"]},
            "created_at": TEXT,
            "updated_at": TEXT,
        },
        {"evaluator_epoch": TEXT_OR_NULL, "quarantined": {"type": ["integer", "boolean"]}},
    ),
    "RunStatus": fields(
        {
            "run": ref("Run"),
            "latest_generation": {"anyOf": [ref("Generation"), {"type": "null"}]},
            "runtime_session": {"type": ["object", "null"]},
            "progress_report": fields(
                {
                    "generations_completed": COUNT,
                    "target_generations": COUNT,
                    "percent": {"type": "number", "minimum": 0},
                    "best_score": NUMBER_OR_NULL,
                    "tournament_score": NUMBER_OR_NULL,
                    "current_elo": NUMBER_OR_NULL,
                }
            ),
            "generations": array_of("Generation"),
        }
    ),
    "Started": fields(
        {
            "run_id": TEXT,
            "status": TEXT,
            "started": {"type": "boolean"},
            "scenario": TEXT,
            "target_generations": COUNT,
        },
        {"pid": {"type": "integer"}, "detail": TEXT},
    ),
    "Scenario": fields({"name": TEXT, "description": TEXT, "strategy_schema": {"type": "object"}}),
    "KnowledgeScope": fields(
        {"scope": TEXT, "playbook": COUNT, "hints": COUNT, "dead_ends": COUNT}
    ),
    "KnowledgeEntry": fields(
        {
            "id": {"type": "integer"},
            "summary": TEXT,
            "content": TEXT,
            "tags": {"type": "array", "items": TEXT},
            "helpful": COUNT,
            "harmful": COUNT,
            "seen": COUNT,
            "author": TEXT,
            "created_at": TEXT,
        }
    ),
    "Knowledge": fields(
        {
            "scope": TEXT,
            "playbook": array_of("KnowledgeEntry"),
            "hints": array_of("KnowledgeEntry"),
            "dead_ends": array_of("KnowledgeEntry"),
        }
    ),
    "Memory": fields(
        {
            "id": {"type": "integer"},
            "type": TEXT,
            "scope": {"type": "string", "enum": ["project", "user"]},
            "summary": TEXT,
            "content": TEXT,
            "why": TEXT,
            "how_to_apply": TEXT,
            "tags": {"type": "array", "items": TEXT},
            "author": TEXT,
            "source": TEXT_OR_NULL,
            "seen": COUNT,
            "created_at": TEXT,
        },
        {
            "score": {"type": "number"},
            # GET /api/memories adds each memory's evidence (dashboard.with_evidence)
            "helped": COUNT,
            "misled": COUNT,
            "injected": COUNT,
            "last_used_at": TEXT_OR_NULL,
            "status": {"type": "string", "enum": list(MEMORY_STATUSES)},
            "stale": {"type": "boolean"},
        },
    ),
    "MemoryHistory": {
        "allOf": [
            ref("Memory"),
            fields(
                {
                    "provenance": {
                        "type": "array",
                        "items": fields({"source": TEXT, "created_at": TEXT}),
                    },
                    "events": {
                        "type": "array",
                        "items": fields(
                            {"action": TEXT, "detail": TEXT_OR_NULL, "created_at": TEXT}
                        ),
                    },
                }
            ),
        ]
    },
    # GET /api/promotions: app/promotion's list_promotions (promotions --json), each candidate
    # with its trials (trial_scores, as export gives them, with each delta)
    "PromotionDecision": fields(
        {
            "action": TEXT,
            "stage": TEXT_OR_NULL,
            "statistic": TEXT_OR_NULL,
            "rationale": TEXT,
            "actor": {"type": "string", "enum": list(PROMOTION_ACTORS)},
            "at": TEXT,
        }
    ),
    "PromotionTrial": fields(
        {
            "stage": TEXT,
            "seed": {"type": "integer"},
            "candidate": {"type": "number"},
            "incumbent": {"type": "number"},
            "delta": {"type": "number"},
        }
    ),
    "PromotionCandidate": fields(
        {
            "id": {"type": "integer"},
            "scope": TEXT,
            "role": {"type": "string", "enum": list(PROMOTION_ROLES)},
            "kind": {"type": "string", "enum": list(PROMOTION_KINDS)},
            "ref": TEXT,
            "source": TEXT,
            "run_id": TEXT_OR_NULL,
            "generation_index": INTEGER_OR_NULL,
            "status": TEXT,
            "created_at": TEXT,
            "incumbent_ref": TEXT_OR_NULL,
            "trials": {"type": "object", "additionalProperties": COUNT},
            "decisions": array_of("PromotionDecision"),
            "trial_scores": array_of("PromotionTrial"),
        }
    ),
    "ActivePointer": fields(
        {
            "scope": TEXT,
            "role": {"type": "string", "enum": list(PROMOTION_ROLES)},
            "ref": TEXT,
            "candidate_id": INTEGER_OR_NULL,
            "previous_ref": TEXT_OR_NULL,
            "previous_candidate_id": INTEGER_OR_NULL,
            "switched_at": TEXT,
            # generations of probation left (promotion/probation.py); null: not on probation
            "probation_left": INTEGER_OR_NULL,
        },
        # a context pointer: the bundle served now, as trials name it (the active one grown)
        {"served_ref": TEXT},
    ),
    "Promotions": fields(
        {
            "active": array_of("ActivePointer"),
            "candidates": array_of("PromotionCandidate"),
            "total": COUNT,
        }
    ),
    "Forgotten": fields(
        {
            "forgotten": {"type": "integer"},
            "scope": {"type": "string", "enum": ["project", "user"]},
            "summary": TEXT,
        }
    ),
}


def document() -> dict[str, Any]:
    """The OpenAPI document of the JSON API."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "lessonloop",
            "version": __version__,
            "description": "The local dashboard's API: the same answers as the CLI's --json. "
            f"POST and DELETE need the {TOKEN_HEADER} header.",
        },
        "paths": {
            "/api/runs": {
                "get": {
                    "summary": "Runs, newest first (lessonloop list --json).",
                    "parameters": [
                        query(
                            "limit",
                            {"type": "integer", "minimum": 1, "maximum": 500},
                            "At most this many.",
                        )
                    ],
                    "responses": {"200": answer("the runs", array_of("Run")), **errors(400)},
                },
                "post": {
                    "summary": "Start a run in the background (as the MCP tool run_start).",
                    "parameters": [TOKEN],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": START_BODY}},
                    },
                    "responses": {
                        "202": answer("started", ref("Started")),
                        "200": answer("nothing to start (running, or done)", ref("Started")),
                        **errors(400, 403, 404),
                    },
                },
            },
            "/api/runs/{run_id}": {
                "get": {
                    "summary": "A run's status and every generation (lessonloop status ID --json).",
                    "parameters": [RUN_ID],
                    "responses": {
                        "200": answer("run-status-v1", ref("RunStatus")),
                        **errors(404),
                    },
                }
            },
            "/api/runs/{run_id}/events": {
                "get": {
                    "summary": "The run's events as server-sent events (events.ndjson, tailed).",
                    "parameters": [
                        RUN_ID,
                        query(
                            "from",
                            {"type": "string", "pattern": "^([0-9]{1,15}|end)$"},
                            "A byte offset of the log, or end.",
                        ),  # fmt: skip
                    ],
                    "responses": {
                        "200": {
                            "description": "one event per log line (its data the line's JSON, "
                            "its event the line's event name), then event: end once the run is "
                            "not played; the pages ask with follow=1 for a stream that outlives "
                            "the run (event: idle, then the events of a resume), and read "
                            "/api/runs-live (event: run, a Run per change) for the list: both "
                            "never end, so they are left out of this document",
                            "content": {"text/event-stream": {"schema": SSE_EVENT}},
                        },
                        **errors(400, 404),
                    },
                }
            },
            "/api/scenarios": {
                "get": {
                    "summary": "The scenarios (lessonloop scenarios --json).",
                    "responses": {"200": answer("the scenarios", array_of("Scenario"))},
                }
            },
            "/api/knowledge": {
                "get": {
                    "summary": "The scopes that hold run knowledge, with their counts.",
                    "responses": {"200": answer("the scopes", array_of("KnowledgeScope"))},
                }
            },
            "/api/knowledge/{scope}": {
                "get": {
                    "summary": "A scope's playbook, hints and dead ends with their evidence.",
                    "parameters": [
                        path(
                            "scope",
                            {"type": "string", "pattern": SCOPE_PATTERN},
                            "A scenario name or a scope (scenario:NAME, task:SLUG).",
                        ),  # fmt: skip
                    ],
                    "responses": {
                        "200": answer("the lists", ref("Knowledge")),
                        **errors(400, 404),
                    },
                }
            },
            "/api/promotions": {
                "get": {
                    "summary": "Promotion candidates, newest first, with their decisions and "
                    "trials, and what is served per scope and role (promotions --json).",
                    "parameters": [
                        query(
                            "scope",
                            {"type": "string", "pattern": PROMOTION_SCOPE_PATTERN},
                            "A scenario name, scenario:NAME or task:NAME (all when left out).",
                        )
                    ],
                    "responses": {
                        "200": answer("the promotions", ref("Promotions")),
                        **errors(400),
                    },
                }
            },
            "/api/memories": {
                "get": {
                    "summary": "Memories matching q (memory search --json), else all (memory list --json), with their evidence.",
                    "parameters": [
                        query("q", {"type": "string"}, "Words to search for."),
                        query(
                            "scope", {"type": "string", "enum": ["all", "project", "user"]}, "all"
                        ),
                        query(
                            "limit", {"type": "integer", "minimum": 1, "maximum": 100}, "With q."
                        ),
                        query(
                            "status",
                            {"type": "string", "enum": ["active", "held"]},
                            "held: the memories out of recall (stale, retired, superseded).",
                        ),
                    ],
                    "responses": {"200": answer("the memories", array_of("Memory")), **errors(400)},
                }
            },
            "/api/memories/{memory_id}": {
                "get": {
                    "summary": "A memory with its provenance and history (memory why --json).",
                    "parameters": [MEMORY_ID, ONE_SCOPE],
                    "responses": {
                        "200": answer("the memory", ref("MemoryHistory")),
                        **errors(400, 404),
                    },
                },
                "delete": {
                    "summary": "Forget a memory for good (memory forget --json).",
                    "parameters": [MEMORY_ID, ONE_SCOPE, TOKEN],
                    "responses": {
                        "200": answer("what was forgotten", ref("Forgotten")),
                        **errors(400, 403, 404),
                    },
                },
            },
        },
        "components": {"schemas": SCHEMAS},
    }
