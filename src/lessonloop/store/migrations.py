"""Forward-only schema migrations, each a plain function, recorded in ``schema_migrations``.

Add a migration by appending a function to ``MIGRATIONS``; never edit or reorder old ones.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ..timeutil import utc_now


def _execute_script(conn: sqlite3.Connection, script: str) -> None:
    """Run DDL statement by statement: ``executescript`` would commit the open transaction."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _001_runs(conn: sqlite3.Connection) -> None:
    _execute_script(
        conn,
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            scenario TEXT NOT NULL,
            scenario_ref TEXT NOT NULL,
            target_generations INTEGER NOT NULL,
            status TEXT NOT NULL,
            provider TEXT NOT NULL,
            seed INTEGER NOT NULL,
            config_json TEXT NOT NULL,
            stop_reason TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE generations (
            run_id TEXT NOT NULL REFERENCES runs(run_id),
            generation_index INTEGER NOT NULL,
            status TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            strategy_json TEXT,
            mean_score REAL NOT NULL,
            incumbent_score REAL,
            mean_delta REAL,
            best_score REAL NOT NULL,
            elo REAL NOT NULL,
            wins INTEGER NOT NULL,
            losses INTEGER NOT NULL,
            ties INTEGER NOT NULL,
            quarantined INTEGER NOT NULL,
            gate_decision TEXT NOT NULL,
            evaluator_epoch TEXT,
            dimensions_json TEXT NOT NULL,
            context_json TEXT NOT NULL,
            analysis TEXT NOT NULL,
            duration_seconds REAL NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (run_id, generation_index)
        );
        CREATE TABLE matches (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            generation_index INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            phase TEXT NOT NULL,
            side TEXT NOT NULL,
            seed INTEGER NOT NULL,
            score REAL NOT NULL,
            dimensions_json TEXT NOT NULL,
            summary TEXT,
            error TEXT,
            duration_ms REAL NOT NULL
        );
        CREATE INDEX matches_by_generation ON matches (run_id, generation_index);
        CREATE TABLE role_outputs (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            generation_index INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            role TEXT NOT NULL,
            prompt TEXT NOT NULL,
            output TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX role_outputs_by_generation ON role_outputs (run_id, generation_index);
        CREATE TABLE role_metrics (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            generation_index INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            role TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT,
            input_tokens INTEGER,
            output_tokens INTEGER,
            latency_ms REAL NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX role_metrics_by_run ON role_metrics (run_id);
        CREATE TABLE gate_decisions (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            generation_index INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            decision TEXT NOT NULL,
            rationale TEXT NOT NULL,
            mean_delta REAL,
            wins INTEGER NOT NULL,
            losses INTEGER NOT NULL,
            holdout_delta REAL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX gate_decisions_by_generation ON gate_decisions (run_id, generation_index);
        """,
    )


def _002_knowledge(conn: sqlite3.Connection) -> None:
    """Knowledge entries, their provenance and audit trail, and an FTS5 index kept by triggers."""
    statements = [
        """CREATE TABLE knowledge (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            scope TEXT NOT NULL,
            summary TEXT NOT NULL,
            content TEXT NOT NULL DEFAULT '',
            why TEXT NOT NULL DEFAULT '',
            how_to_apply TEXT NOT NULL DEFAULT '',
            tags_json TEXT NOT NULL DEFAULT '[]',
            fingerprint TEXT NOT NULL,
            helpful INTEGER NOT NULL DEFAULT 0,
            harmful INTEGER NOT NULL DEFAULT 0,
            seen INTEGER NOT NULL DEFAULT 1,
            author TEXT NOT NULL DEFAULT 'auto',
            status TEXT NOT NULL DEFAULT 'active',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        "CREATE INDEX knowledge_by_scope ON knowledge (scope, kind, status)",
        "CREATE INDEX knowledge_by_fingerprint ON knowledge (scope, fingerprint)",
        """CREATE VIRTUAL TABLE knowledge_fts USING fts5(
            summary, content, tags_json, content='knowledge', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER knowledge_fts_insert AFTER INSERT ON knowledge BEGIN
            INSERT INTO knowledge_fts (rowid, summary, content, tags_json)
            VALUES (new.id, new.summary, new.content, new.tags_json);
        END""",
        """CREATE TRIGGER knowledge_fts_delete AFTER DELETE ON knowledge BEGIN
            INSERT INTO knowledge_fts (knowledge_fts, rowid, summary, content, tags_json)
            VALUES ('delete', old.id, old.summary, old.content, old.tags_json);
        END""",
        """CREATE TRIGGER knowledge_fts_update AFTER UPDATE OF summary, content, tags_json
        ON knowledge BEGIN
            INSERT INTO knowledge_fts (knowledge_fts, rowid, summary, content, tags_json)
            VALUES ('delete', old.id, old.summary, old.content, old.tags_json);
            INSERT INTO knowledge_fts (rowid, summary, content, tags_json)
            VALUES (new.id, new.summary, new.content, new.tags_json);
        END""",
        """CREATE TABLE knowledge_provenance (
            id INTEGER PRIMARY KEY,
            knowledge_id INTEGER NOT NULL REFERENCES knowledge(id) ON DELETE CASCADE,
            source TEXT NOT NULL,
            run_id TEXT,
            generation_index INTEGER,
            session_id TEXT,
            detail TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX knowledge_provenance_by_entry ON knowledge_provenance (knowledge_id)",
        """CREATE TABLE knowledge_events (
            id INTEGER PRIMARY KEY,
            knowledge_id INTEGER,
            action TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        )""",
    ]
    for statement in statements:
        conn.execute(statement)


def _003_provider_calls(conn: sqlite3.Connection) -> None:
    """The usage ledger: one row per provider call, written when the call returns (not with
    its generation), with cost; run and generation are empty for calls outside a run."""
    _execute_script(
        conn,
        """
        CREATE TABLE provider_calls (
            id INTEGER PRIMARY KEY,
            run_id TEXT,
            generation_index INTEGER,
            attempt INTEGER,
            role TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT,
            input_tokens INTEGER,
            output_tokens INTEGER,
            calls INTEGER NOT NULL DEFAULT 1,
            retries INTEGER NOT NULL DEFAULT 0,
            latency_ms REAL NOT NULL,
            cost REAL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX provider_calls_by_run ON provider_calls (run_id);
        INSERT INTO provider_calls (run_id, generation_index, attempt, role, provider, model,
            input_tokens, output_tokens, latency_ms, cost, created_at)
            SELECT run_id, generation_index, attempt, role, provider, model, input_tokens,
                   output_tokens, latency_ms, 0.0, created_at FROM role_metrics;
        DROP TABLE role_metrics
        """,
    )


def _004_verdicts(conn: sqlite3.Connection) -> None:
    """The judge's verdict cache: one per evaluator epoch and output."""
    _execute_script(
        conn,
        """
        CREATE TABLE verdicts (
            epoch TEXT NOT NULL,
            output_sha256 TEXT NOT NULL,
            score REAL NOT NULL,
            dimensions_json TEXT NOT NULL,
            reasoning TEXT NOT NULL,
            samples INTEGER NOT NULL,
            disagreement INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (epoch, output_sha256)
        )
        """,
    )


def _005_knowledge_vocab(conn: sqlite3.Connection) -> None:
    """Document frequencies of the FTS5 index (a view, no data): search drops query terms
    that most entries contain, which barely change BM25 but make it rank every row."""
    conn.execute("CREATE VIRTUAL TABLE knowledge_vocab USING fts5vocab(knowledge_fts, 'row')")


def _006_knowledge_orders(conn: sqlite3.Connection) -> None:
    """Indexes in the orders entries are listed in (see entries._ORDERS): a view or the
    SessionStart recall of a scope of 100,000 memories read and sorted every row (0.24 s for a
    view, ~1 s for recall), and now reads only what it shows. (Search no longer reads the
    vocabulary view of migration 5, which read a common word's whole posting list; it stays
    for processes of an older lessonloop that share the store.)"""
    _execute_script(
        conn,
        """
        CREATE INDEX knowledge_by_usefulness
            ON knowledge (scope, status, (helpful - harmful) DESC, seen DESC, id DESC);
        CREATE INDEX knowledge_for_recall
            ON knowledge (scope, status, (author <> 'user'), (helpful - harmful) DESC,
                          seen DESC, updated_at DESC, id DESC)
        """,
    )


def _007_provider_calls_by_session(conn: sqlite3.Connection) -> None:
    """A call made for a coding session rather than a run (session-end memorize): its run,
    generation and attempt stay empty and ``session_id`` names the session, so the ledger says
    whose call it was without a pseudo run id that no run table row backs."""
    _execute_script(
        conn,
        """
        ALTER TABLE provider_calls ADD COLUMN session_id TEXT;
        CREATE INDEX provider_calls_by_session ON provider_calls (session_id)
            WHERE session_id IS NOT NULL
        """,
    )


def _008_validated_scores(conn: sqlite3.Connection) -> None:
    """Scores that are true and gates that state their evidence: a generation's
    ``validated_score`` is its incumbent's mean on the fixed validation seeds (what
    ``best_score`` reports; the tournament mean stays in ``mean_score``), and each gate
    decision keeps the statistic it decided on: the pairs played, Student's t against the
    bar and the one-sided lower confidence bound, for training and holdout pairs, and the
    attempt's strategy (the offline agent's optimizer is rebuilt from every attempt on resume)."""
    _execute_script(
        conn,
        """
        ALTER TABLE generations ADD COLUMN validated_score REAL;
        ALTER TABLE gate_decisions ADD COLUMN pairs INTEGER;
        ALTER TABLE gate_decisions ADD COLUMN t_statistic REAL;
        ALTER TABLE gate_decisions ADD COLUMN lower_bound REAL;
        ALTER TABLE gate_decisions ADD COLUMN holdout_pairs INTEGER;
        ALTER TABLE gate_decisions ADD COLUMN holdout_lower_bound REAL;
        ALTER TABLE gate_decisions ADD COLUMN strategy_json TEXT
        """,
    )


def _009_screenings(conn: sqlite3.Connection) -> None:
    """Screened candidates: when an answer carries several strategies, each is played once on
    the attempt's screening seeds (its matches: phase ``screen``, side ``candidate:<index>``)
    and the best goes to the gate. Each row keeps the candidate, its mean paired delta against
    the incumbent on those seeds and whether it went to the gate (the offline agent's
    optimizer is told every screened candidate, and rebuilt from them on resume)."""
    _execute_script(
        conn,
        """
        CREATE TABLE screenings (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            generation_index INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            candidate INTEGER NOT NULL,
            strategy_json TEXT NOT NULL,
            mean_delta REAL,
            pairs INTEGER NOT NULL,
            chosen INTEGER NOT NULL
        );
        CREATE INDEX screenings_by_generation ON screenings (run_id, generation_index)
        """,
    )


def _010_knowledge_numbers(conn: sqlite3.Connection) -> None:
    """Entries numbered within their scope: a memory's id is its number among the project's
    (or the user's) knowledge, so a fresh home's first memory is 1 however many playbook
    bullets its runs wrote before it (they live in their scenarios' scopes)."""
    _execute_script(
        conn,
        """
        ALTER TABLE knowledge ADD COLUMN number INTEGER;
        UPDATE knowledge SET number = (SELECT COUNT(*) FROM knowledge AS earlier
                                       WHERE earlier.scope = knowledge.scope
                                       AND earlier.id <= knowledge.id);
        CREATE UNIQUE INDEX knowledge_by_number ON knowledge (scope, number)
        """,
    )


def _011_run_kinds(conn: sqlite3.Connection) -> None:
    """A run's kind as a column: a scenario run or an agent task's rounds (``improve``), which
    ``resume`` continues each its own way. (It was read from a ``task:`` prefix of the scenario
    name; the name keeps it for people.)"""
    _execute_script(
        conn,
        """
        ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'scenario';
        UPDATE runs SET kind = 'task' WHERE scenario LIKE 'task:%'
        """,
    )


def _012_memory_lifecycle(conn: sqlite3.Connection) -> None:
    """What a memory's life needs (issue 22): how often it was given to a session and when last,
        when it was last confirmed (seen again, helped, approved or edited by the user), whether the
        user pinned it, and which entry superseded it; the session-start recall order (pinned first)
    walks its own index, as migration 6's orders do. Statuses beside ``active`` are in
        ``knowledge.entries.STATUSES``; ``helpful``/``harmful`` count a memory's helped/misled."""
    _execute_script(
        conn,
        """
        ALTER TABLE knowledge ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE knowledge ADD COLUMN injected INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE knowledge ADD COLUMN last_used_at TEXT;
        ALTER TABLE knowledge ADD COLUMN confirmed_at TEXT;
        ALTER TABLE knowledge ADD COLUMN superseded_by INTEGER;
        CREATE INDEX knowledge_for_pinned_recall
            ON knowledge (scope, status, pinned DESC, (author <> 'user'), (helpful - harmful) DESC,
                          seen DESC, updated_at DESC, id DESC)
        """,
    )


def _013_promotion(conn: sqlite3.Connection) -> None:
    """The promotion gate (issue 23, ``promotion/``): context bundles by content address;
    candidates (a bundle or a trained checkpoint, for a scope and a role) with their matched
    trials and every decision (the gate's, a user's, probation's); and the active pointer per
    scope and role with the previous one kept as the rollback target."""
    _execute_script(
        conn,
        """
        CREATE TABLE context_bundles (
            id TEXT PRIMARY KEY,
            scope TEXT NOT NULL,
            entries_json TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE promotion_candidates (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            role TEXT NOT NULL,
            kind TEXT NOT NULL,
            ref TEXT NOT NULL,
            source TEXT NOT NULL,
            run_id TEXT,
            generation_index INTEGER,
            status TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX promotion_candidates_by_scope ON promotion_candidates (scope, role, id);
        CREATE TABLE promotion_trials (
            id INTEGER PRIMARY KEY,
            candidate_id INTEGER NOT NULL REFERENCES promotion_candidates (id),
            stage TEXT NOT NULL,
            seed INTEGER NOT NULL,
            candidate_score REAL NOT NULL,
            incumbent_score REAL NOT NULL
        );
        CREATE INDEX promotion_trials_by_candidate ON promotion_trials (candidate_id, id);
        CREATE TABLE promotion_decisions (
            id INTEGER PRIMARY KEY,
            candidate_id INTEGER REFERENCES promotion_candidates (id),
            scope TEXT NOT NULL,
            role TEXT NOT NULL,
            action TEXT NOT NULL,
            stage TEXT,
            statistic TEXT,
            rationale TEXT NOT NULL,
            actor TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX promotion_decisions_by_scope ON promotion_decisions (scope, role, id);
        CREATE TABLE active_pointers (
            scope TEXT NOT NULL,
            role TEXT NOT NULL,
            ref TEXT NOT NULL,
            candidate_id INTEGER,
            previous_ref TEXT,
            previous_candidate_id INTEGER,
            switched_at TEXT NOT NULL,
            PRIMARY KEY (scope, role)
        )
        """,
    )


def _014_model_registry(conn: sqlite3.Connection) -> None:
    """The model registry (issue 23, ``training/registry.py``): a trained checkpoint by its
    content-derived id, with its scope, backend, base, roles, data hash, metrics and fitted
    parameters; it is served only through the promotion gate (migration 13's tables)."""
    _execute_script(
        conn,
        """
        CREATE TABLE model_checkpoints (
            id TEXT PRIMARY KEY,
            scope TEXT NOT NULL,
            backend TEXT NOT NULL,
            base TEXT NOT NULL,
            roles_json TEXT NOT NULL,
            data_hash TEXT NOT NULL,
            metrics_json TEXT NOT NULL,
            params_json TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX model_checkpoints_by_scope ON model_checkpoints (scope, created_at)
        """,
    )


def _015_candidate_incumbents(conn: sqlite3.Connection) -> None:
    """What a promotion candidate was trialled against (a bundle id, a checkpoint id, or
    ``offline``): rolling back the first promotion of a scope restores it."""
    _execute_script(conn, "ALTER TABLE promotion_candidates ADD COLUMN incumbent_ref TEXT")


def _016_probation(conn: sqlite3.Connection) -> None:
    """Probation (``promotion/probation.py``): how many more generations watch an activated
    candidate against the one it replaced (NULL: not on probation)."""
    _execute_script(conn, "ALTER TABLE active_pointers ADD COLUMN probation_left INTEGER")


def _017_evolve(conn: sqlite3.Connection) -> None:
    """``lessonloop evolve``: its runs, each candidate with its receipt (stored before it is
    checked or timed), and every timing pair measured."""
    _execute_script(
        conn,
        """
        CREATE TABLE evolve_runs (
            run_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            spec_path TEXT NOT NULL,
            spec_digest TEXT NOT NULL,
            source_digest TEXT NOT NULL,
            seed INTEGER NOT NULL,
            target_generations INTEGER NOT NULL,
            status TEXT NOT NULL,
            stop_reason TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE evolve_candidates (
            run_id TEXT NOT NULL REFERENCES evolve_runs(run_id),
            candidate_index INTEGER NOT NULL,
            params_json TEXT NOT NULL,
            source_digest TEXT NOT NULL,
            spec_digest TEXT NOT NULL,
            source_path TEXT NOT NULL,
            status TEXT NOT NULL,
            correct INTEGER,
            message TEXT,
            against_index INTEGER,
            speedup REAL,
            speedup_lower_bound REAL,
            log_gain_vs_baseline REAL,
            champion INTEGER NOT NULL DEFAULT 0,
            stats_json TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (run_id, candidate_index)
        );
        CREATE TABLE evolve_pairs (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            candidate_index INTEGER NOT NULL,
            against_index INTEGER NOT NULL,
            phase TEXT NOT NULL,
            pair_index INTEGER NOT NULL,
            time_a REAL NOT NULL,
            time_b REAL NOT NULL
        );
        CREATE INDEX evolve_pairs_by_candidate ON evolve_pairs (run_id, candidate_index)
        """,
    )


def _018_missions(conn: sqlite3.Connection) -> None:
    """``lessonloop mission``: each mission (its goal, verifier, the user's folder and its
    digest at the start) and each step (the model's proposal, what was done, the verifier's
    redacted result, the calls it took)."""
    _execute_script(
        conn,
        """
        CREATE TABLE missions (
            run_id TEXT PRIMARY KEY,
            goal TEXT NOT NULL,
            verifier TEXT NOT NULL,
            source_dir TEXT NOT NULL,
            source_digest TEXT NOT NULL,
            allow_json TEXT NOT NULL,
            max_steps INTEGER NOT NULL,
            max_calls INTEGER,
            initial_exit INTEGER,
            initial_output TEXT,
            status TEXT NOT NULL,
            stop_reason TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE mission_steps (
            run_id TEXT NOT NULL REFERENCES missions(run_id),
            step_index INTEGER NOT NULL,
            kind TEXT NOT NULL,
            proposal TEXT NOT NULL,
            applied INTEGER NOT NULL,
            refused INTEGER NOT NULL,
            message TEXT NOT NULL,
            verifier_exit INTEGER,
            verifier_output TEXT,
            calls INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (run_id, step_index)
        )
        """,
    )


def _019_run_kinds_evolve_mission(conn: sqlite3.Connection) -> None:
    """Evolve runs and missions are runs like any other (issue 24): each has its ``runs`` row
    (kind ``evolve`` or ``mission``) and a generation per finished candidate or step, derived
    from migrations 17 and 18's tables (``store/run_kinds.py``, which their stores call with
    each write); here, for the ones stored before."""
    from .run_kinds import backfill

    backfill(conn)


MIGRATIONS: list[tuple[int, str, Callable[[sqlite3.Connection], None]]] = [
    (1, "runs, generations, matches, role outputs and metrics, gate decisions", _001_runs),
    (2, "knowledge entries, provenance, audit events and FTS5 index", _002_knowledge),
    (3, "provider call ledger with cost (replaces role_metrics)", _003_provider_calls),
    (4, "judge verdict cache per evaluator epoch", _004_verdicts),
    (5, "FTS5 vocabulary view for search", _005_knowledge_vocab),
    (6, "knowledge indexes in listing orders", _006_knowledge_orders),
    (7, "provider calls keyed by coding session", _007_provider_calls_by_session),
    (8, "validated scores and the gate's statistic", _008_validated_scores),
    (9, "screened candidates", _009_screenings),
    (10, "knowledge numbered within its scope (a memory's id)", _010_knowledge_numbers),
    (11, "a run's kind (scenario or task)", _011_run_kinds),
    (12, "memory lifecycle: injections, confirmation, pins, supersession", _012_memory_lifecycle),
    (13, "promotion: bundles, candidates, trials, decisions, active pointers", _013_promotion),
    (14, "model registry: trained checkpoints", _014_model_registry),
    (15, "what a promotion candidate was trialled against", _015_candidate_incumbents),
    (16, "probation of an activated candidate", _016_probation),
    (17, "evolve runs, candidates with receipts, timing pairs", _017_evolve),
    (18, "missions and their steps", _018_missions),
    (
        19,
        "evolve runs and missions as runs, their candidates and steps as generations",
        _019_run_kinds_evolve_mission,
    ),
]

LATEST_VERSION = MIGRATIONS[-1][0]


def current_version(conn: sqlite3.Connection) -> int:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return row[0] or 0


def migrate(conn: sqlite3.Connection, begin: Callable[[sqlite3.Connection], None]) -> list[int]:
    """Apply pending migrations, each in its own transaction; return the versions applied.

    ``begin`` opens a write transaction (the store passes its retrying ``BEGIN IMMEDIATE``).
    """
    applied: list[int] = []
    if current_version(conn) >= LATEST_VERSION:
        return applied
    for version, name, apply in MIGRATIONS:
        begin(conn)
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            if current_version(conn) >= version:
                conn.execute("ROLLBACK")
                continue
            apply(conn)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, utc_now()),
            )
            conn.execute("COMMIT")
        except BaseException:
            # (SQLite may have rolled back already, on a full disk: its error is the one to
            # report, not "cannot rollback - no transaction is active")
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise
        applied.append(version)
    return applied
