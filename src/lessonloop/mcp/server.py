"""The ``lessonloop mcp`` server: memories, scenarios, runs, playbooks and the task judge as MCP
tools and resources over stdio, built on the official ``mcp`` SDK (2.x, ``MCPServer``).

Each tool is a few lines over the use cases in ``lessonloop.app`` and ``memory.service``
(each call opens its own short-lived store connection, so concurrent calls — the SDK runs
synchronous tools on worker threads — share none). The SDK is imported in ``build_server``
only. Every failure becomes a tool error (``isError``) with one redacted line — lessonloop's
own message, the argument at fault (named as the tool argument), or "internal error" with the
traceback in ``logs/errors.log`` — never a crash. While it serves, the SDK points file
descriptor 1 at stderr and writes the protocol to a private duplicate, so nothing a tool, a
scenario or a child process prints can corrupt the stream; stray Python output is flushed
after every call so none reaches the wire later.
"""

import contextlib
import functools
import inspect
import json
import os
import sys
import threading
import time
from typing import Annotated, Any, Literal

from ..errors import LessonloopError, UsageError, log_internal_error, one_line
from ..memory.service import (
    MAX_LISTED,
    MAX_SEARCH,
    forget_memory,
    recall_text,
    recent_memories,
    search_memories,
    store_memory,
)

SDK_MISSING = "the MCP server needs its SDK: pip install 'lessonloop[mcp]'"
SERVER_NAME = "lessonloop"
RECENT_MEMORIES = 20


# CLI commands that error messages point to, and the tools that do the same here.
_COMMANDS = {"`lessonloop list`": "list_runs"}


# --------------------------------------------------------------------------------------------
# The MCP layer


def _message(error: Exception | str) -> str:
    """One redacted line (see errors.one_line); the argument at fault named as this server's
    tool argument (``UsageError.field``), the commands it points to as this server's tools."""
    text = error.named(str) if isinstance(error, UsageError) else str(error)
    for command, tool in _COMMANDS.items():
        text = text.replace(command, tool)
    return one_line(text)


_UNION_NAMES = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "none": "null",
    "list[str]": "a list of strings",
    "list[int]": "a list of integers",
    "dict[str,any]": "a JSON object",
}


def _invalid_arguments(tool: str, exc) -> str:
    """A pydantic ValidationError as one line naming each argument at fault and what it should
    be (never its value, which may be a secret)."""
    problems: dict[str, list[str]] = {}
    unions: dict[str, list[str]] = {}
    for error in exc.errors():
        location = error.get("loc") or ("arguments",)
        name = str(location[0])
        if error.get("type") == "missing":
            problems[name] = ["is required"]
            continue
        if len(location) > 1 and isinstance(location[1], str):  # one arm of a union type
            arm = _UNION_NAMES.get(location[1].replace(" ", ""), location[1])
            if arm not in unions.setdefault(name, []):
                unions[name].append(arm)
            problems.setdefault(name, [])
            continue
        text = str(error.get("msg", "invalid value"))
        text = text[:1].lower() + text[1:]
        if len(location) > 1 and isinstance(location[-1], int):
            text = f"item {location[-1]}: {text}"
        if text not in problems.setdefault(name, []):
            problems[name].append(text)
    parts = []
    for name, texts in problems.items():
        if texts == ["is required"]:
            parts.append(f"{name!r} is required")
        elif name in unions and not texts:
            parts.append(f"{name!r} must be {' or '.join(unions[name])}")
        else:
            parts.append(f"{name!r}: {'; '.join(texts)}")
    return f"invalid arguments for {tool}: " + "; ".join(parts)


def _guarded(fn):
    """Run a tool body: lessonloop errors and crashes become tool errors with one line."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(fn)
    def call(**arguments):
        try:
            return fn(**arguments)
        except ToolError:
            raise
        except LessonloopError as exc:
            raise ToolError(_message(exc)) from None
        except (Exception, SystemExit) as exc:  # a bug or a misbehaving plugin: log, one line
            where = log_internal_error()
            raise ToolError(
                _message(f"internal error: {exc.__class__.__name__}: {exc}{where}")
            ) from None
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()  # stray prints leave now, to stderr, never later to the wire

    return call


def build_server():
    """The MCPServer with every tool and resource registered (the SDK is imported here)."""
    import gc
    import importlib

    # Importing the SDK builds hundreds of Pydantic models (most of a second); the cyclic
    # collector would walk that growing heap again and again meanwhile (~8% of the start), and
    # afterwards has no reason to walk it at all: it is frozen out of later collections.
    gc.disable()
    try:
        importlib.import_module("mcp")  # the official SDK (imports are absolute: not this package)
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import (
            ResourceError,
            ResourceNotFoundError,
            ToolError,
            UnexpectedToolError,
        )
        from mcp.types import ToolAnnotations
    except ImportError as exc:  # no SDK; mcp 1.x (FastMCP), or a broken install
        if sys.modules.get("mcp") is None:  # (a failed import leaves no module behind)
            raise UsageError(SDK_MISSING) from None
        raise UsageError(
            f"the MCP server needs mcp 2.x ({exc}): pip install 'lessonloop[mcp]'"
        ) from None
    finally:
        gc.freeze()
        gc.enable()
    from pydantic import Field, StrictInt, ValidationError

    from .. import __version__

    accepted: dict[str, set[str]] = {}
    from ..app import knowledge, runs, scenarios, tasks

    class Server(MCPServer):
        async def list_tools(self):
            tools = await super().list_tools()
            for listed in tools:  # say what call_tool enforces: no argument beyond these
                listed.input_schema = {**listed.input_schema, "additionalProperties": False}
            return tools

        async def call_tool(self, name, arguments, context=None):
            known = accepted.get(name)
            unknown = sorted(set(arguments or {}) - known) if known is not None else []
            if unknown:
                raise ToolError(
                    f"invalid arguments for {name}: unknown argument "
                    f"{', '.join(map(repr, unknown))} (it takes "
                    f"{', '.join(sorted(known)) or 'no arguments'})"
                )
            try:
                return await super().call_tool(name, arguments, context)
            except UnexpectedToolError:
                raise
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(_invalid_arguments(name, exc.__cause__)) from exc.__cause__
                raise

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        try:
            yield {}
        finally:  # while fd 1 still points at stderr
            with contextlib.suppress(Exception):
                sys.stdout.flush()

    _log_plainly()
    server = Server(
        SERVER_NAME,
        version=__version__,
        log_level="WARNING",
        lifespan=lifespan,
        instructions=(
            "lessonloop keeps memories across coding sessions (memory_* tools: store what is "
            "worth remembering, search before you decide) and learns game strategies from runs "
            "(list_scenarios, evaluate_strategy, run_start then run_status, read_playbook). "
            "judge_output scores an output of an agent task. Stored text is redacted of secrets."
        ),
    )

    def tool(read_only: bool, destructive: bool = False):
        def register(fn):
            server.add_tool(
                _guarded(fn),
                description=inspect.cleandoc(fn.__doc__ or ""),
                annotations=ToolAnnotations(
                    read_only_hint=read_only,
                    destructive_hint=None if read_only else destructive,
                    idempotent_hint=None if read_only else False,
                    open_world_hint=False,
                ),
            )
            accepted[fn.__name__] = set(inspect.signature(fn).parameters)
            return fn

        return register

    Kind = Literal["pattern", "decision", "preference", "observation"]
    Scope = Literal["project", "user"]
    AnyScope = Literal["project", "user", "all"]

    @tool(read_only=False)  # a repeat reinforces the memory: no duplicate, but seen + 1
    def memory_store(
        type: Annotated[
            Kind,
            Field(
                description="pattern (how things are done here), decision "
                "(a choice and its reason), preference (what the user "
                "wants) or observation (a fact learned)."
            ),
        ],
        summary: Annotated[
            str, Field(description="The memory in one line (120 characters are kept).")
        ],
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
        if isinstance(tags, str):
            tags = [t.strip() for t in tags.split(",") if t.strip()]
        tags = list(tags or [])
        if "mcp" not in tags:
            tags.append("mcp")
        return store_memory(type, summary, content, why, how_to_apply, tags, scope)

    @tool(read_only=True)
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
        return {"memories": search_memories(query, scope, limit)}

    @tool(read_only=True)
    def memory_recall() -> str:
        """The memories a new session starts with: the most useful project memories, then the
        user's, within a token budget (what the session-start hook injects)."""
        return recall_text() or "No memories yet."

    @tool(read_only=True)
    def memory_audit(
        limit: Annotated[
            int, Field(ge=1, le=MAX_LISTED, strict=True, description="At most this many.")
        ] = 50,
        scope: Annotated[AnyScope, Field(description="project, user or all.")] = "all",
    ) -> dict[str, Any]:
        """Recent automatic memories (not written by the user), newest first, to review;
        forget the wrong ones with memory_forget. Returns {"memories": [...]}."""
        return {"memories": recent_memories(scope, limit, automatic_only=True)}

    @tool(read_only=False, destructive=True)
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
        return forget_memory(id, scope)

    @tool(read_only=True)
    def list_scenarios() -> dict[str, Any]:
        """The scenarios that can be evaluated and run, each with its description and the JSON
        schema of its strategy. Returns {"scenarios": [{name, description, strategy_schema}]}."""
        return {"scenarios": scenarios.list_scenarios()}

    @tool(read_only=True)
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

    @tool(read_only=False)
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
            Field(
                description="Name the run (letters, digits, - and _); an existing id continues it."
            ),
        ] = None,
        provider: Annotated[
            str | None,
            Field(
                min_length=1,
                description="Provider for every "
                "role (default: configuration, else the offline "
                "agent).",
            ),
        ] = None,
        model: Annotated[
            str | None, Field(min_length=1, description="Model for the provider.")
        ] = None,
        matches: Annotated[
            int | None,
            Field(
                ge=1, le=1000, strict=True, description=("Paired matches per attempt (default 5).")
            ),
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

    @tool(read_only=True)
    def run_status(
        run_id: Annotated[str, Field(description="The run's id (from run_start or list_runs).")],
    ) -> dict[str, Any]:
        """A run's state and every generation (run-status-v1, as `lessonloop status --json`):
        {run, latest_generation, progress_report, generations}, plus process (pid, exit_code)
        for a run this server started."""
        document = runs.status(run_id)
        process = runs.background_process(run_id)
        if process is not None:
            document["process"] = process
        return document

    @tool(read_only=True)
    def list_runs(
        limit: Annotated[
            int, Field(ge=1, le=MAX_LISTED, strict=True, description="At most this many.")
        ] = 50,
    ) -> dict[str, Any]:
        """Runs, newest first, each with its status, progress, best score and Elo. Returns
        {"runs": [...]}."""
        return {"runs": runs.list_runs(limit)}

    @tool(read_only=True)
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

    @tool(read_only=False)
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

    @server.resource(
        "lessonloop://playbook/{scenario}",
        name="playbook",
        mime_type="text/markdown",
        description="A scenario's playbook as Markdown (bullets with their evidence).",
    )
    def playbook_resource(scenario: str) -> str:
        try:
            return knowledge.playbook_text(scenario)
        except UsageError as exc:
            raise ResourceNotFoundError(_message(exc)) from None
        except LessonloopError as exc:
            raise ResourceError(_message(exc)) from None

    @server.resource(
        "lessonloop://memories/recent",
        name="recent-memories",
        mime_type="application/json",
        description=f"The {RECENT_MEMORIES} most recent memories (project and "
        "user), newest first, as JSON.",
    )
    def recent_memories_resource() -> str:
        try:
            return json.dumps(recent_memories("all", RECENT_MEMORIES), indent=2)
        except LessonloopError as exc:
            raise ResourceError(_message(exc)) from None

    return server


def _log_plainly() -> None:
    """Have MCPServer log plain lines to stderr: its own set-up imports Rich for that, a
    twentieth of the server's start, for the few warnings it may write."""
    import logging

    sdk = sys.modules.get("mcp.server.mcpserver.server")
    if sdk is not None and callable(getattr(sdk, "configure_logging", None)):
        sdk.configure_logging = lambda level="INFO": logging.basicConfig(
            level=level, format="%(message)s", stream=sys.stderr
        )


def serve() -> None:
    """Serve over stdio until the client closes the connection. Started by Claude Code without
    LESSONLOOP_HOME, it keeps memories where the hooks do: in ``$CLAUDE_PROJECT_DIR/.lessonloop``."""
    project = os.environ.get("CLAUDE_PROJECT_DIR")
    if project and not os.environ.get("LESSONLOOP_HOME"):
        os.environ["LESSONLOOP_HOME"] = os.path.join(project, ".lessonloop")
    server = build_server()
    sys.stdout.flush()
    threading.Thread(
        target=_exit_when_orphaned,
        args=(os.getppid(),),
        daemon=True,
        name="lessonloop-orphan-watch",
    ).start()
    import anyio

    from .transport import serve_stdio

    try:  # (what server.run("stdio") does, through a relay that answers every request)
        anyio.run(serve_stdio, server._lowlevel_server)
    except BaseException as exc:
        if not _client_gone(exc):
            raise  # (the client is gone: nobody is there to tell, and nothing was lost)


def _exit_when_orphaned(parent: int) -> None:
    """Exit at once when the client dies without closing our stdin (killed, say): a tool call
    in flight would otherwise keep this server, and the matches or verifier it runs, alive
    until the call ends. Those die with us (their parent-death signal); runs started with
    run_start go on in their own sessions."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _client_gone(exc: BaseException) -> bool:
    """Whether ``exc`` only says the client stopped reading (a broken pipe, in any group)."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_client_gone(e) for e in exc.exceptions)
    return isinstance(exc, (BrokenPipeError, ConnectionResetError))
