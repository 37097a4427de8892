"""The ``lessonloop mcp`` server: memories, scenarios, runs, playbooks and the task judge as MCP
tools and resources over stdio, built on the official ``mcp`` SDK (2.x, ``MCPServer``).

Two layers:

- plain operations (no SDK): each opens its own short-lived store connection, so concurrent
  calls (the SDK runs synchronous tools on worker threads) share no connection; writes that
  render Markdown views are serialized by one lock so the views never go stale. Memories go
  through admission (redaction, sanitizing, caps, dedupe) like everything else;
- the MCP layer (``build_server``, ``serve``): the SDK is imported there only. Every failure
  becomes a tool error (``isError``) with one redacted line — lessonloop's own message, the
  argument at fault, or "internal error" with the traceback in ``logs/errors.log`` — never a
  crash. While it serves, the SDK points file descriptor 1 at stderr and writes the protocol
  to a private duplicate, so nothing a tool, a scenario or a child process prints can corrupt
  the stream; stray Python output is flushed after every call so none reaches the wire later.
"""

import contextlib
import functools
import inspect
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any, Literal

from .. import paths
from ..errors import LessonloopError, NotFoundError, UsageError, log_internal_error, one_line
from ..memory.service import (MAX_LISTED, MAX_SEARCH, check_limit, reading, writing,
                              forget_memory, recall_text, recent_memories, search_memories,
                              store_memory)

SDK_MISSING = "the MCP server needs its SDK: pip install 'lessonloop[mcp]'"
SERVER_NAME = "lessonloop"
RECENT_MEMORIES = 20
VIEWS = ("playbook", "hints", "dead_ends")
_CHILDREN: dict[str, dict] = {}  # run id -> {"pid", "exit_code"} of runs this server started
_CHILDREN_LOCK = threading.Lock()
_FLAGS = re.compile(r"--(seeds|iterations|matches|seed|match-timeout|scope|type|run-id|provider|"
                    r"model)\b")


# --------------------------------------------------------------------------------------------
# Scenarios, runs, playbooks, judge


def scenario_list() -> list[dict]:
    """What `lessonloop scenarios --json` prints: name, description, strategy schema."""
    from ..scenarios import registry

    items = []
    for name in registry.available_names():
        scenario = registry.load(name)
        items.append({"name": name, "description": scenario.description,
                      "strategy_schema": scenario.strategy_schema})
    return items


def evaluate_strategy(scenario: str, strategy: dict | str, seeds: str | list[int] = "1..5",
                      match_timeout: float = 10.0) -> dict:
    """One strategy scored on ``seeds`` (as `lessonloop evaluate --json`); an invalid strategy
    is a usage error naming its problems."""
    from ..loop.scoring import evaluate_strategies, parse_seeds, parse_strategy
    from ..scenarios import registry

    registry.load(scenario)  # an unknown scenario fails first, with the valid names
    if isinstance(strategy, str):
        strategy = parse_strategy(strategy, "strategy")
    if not isinstance(strategy, dict):
        raise UsageError("strategy must be a JSON object")
    if isinstance(seeds, list):
        if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
            raise UsageError("seeds must be A..B, A,B,C or a non-empty list of integers")
        seeds = ",".join(str(s) for s in seeds)
    seed_list = parse_seeds(seeds)
    if not (math.isfinite(match_timeout) and 0 < match_timeout <= 3600):
        raise UsageError("match_timeout must be between 0 and 3600 seconds")
    report = evaluate_strategies(scenario, [strategy], seed_list, match_timeout)[0]
    if not report["valid"]:
        raise UsageError(f"the strategy is not valid for {scenario}: "
                         f"{'; '.join(report['problems'])}")
    return report


def _child_env() -> dict:
    """This process's environment with the home made explicit and, when lessonloop is not
    installed in site-packages (a checkout on PYTHONPATH), its source folder on the path."""
    import site

    env = dict(os.environ, LESSONLOOP_HOME=str(paths.home()))
    source = str(Path(__file__).resolve().parents[2])
    installed = {str(Path(p).resolve()) for p in site.getsitepackages() + [site.getusersitepackages()]}
    if source not in installed and source not in env.get("PYTHONPATH", "").split(os.pathsep):
        env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    return env


def _spawn(run_id: str, args: list[str]) -> int:
    """Start ``python -m lessonloop ARGS`` detached (own session, no terminal, no pipes); a
    daemon thread reaps it and keeps its exit code for ``run_status``. (The caller holds
    _CHILDREN_LOCK.)"""
    proc = subprocess.Popen([sys.executable, "-m", "lessonloop", *args], env=_child_env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    record = {"pid": proc.pid, "exit_code": None}
    _CHILDREN[run_id] = record

    def reap() -> None:
        record["exit_code"] = proc.wait()

    threading.Thread(target=reap, name=f"lessonloop-reap-{run_id}", daemon=True).start()
    return proc.pid


def start_run(scenario: str, iterations: int = 10, run_id: str | None = None,
              overrides: dict | None = None) -> dict:
    """Create the run (or reuse ``run_id``) and execute it in a detached child process; returns
    at once with the run's id and status."""
    from ..loop.runner import RunOptions, check_iterations, create_or_reuse, is_active
    from ..scenarios import registry
    from ..store import runs as run_store

    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    check_iterations(iterations)
    RunOptions(**overrides).check()
    registry.load(scenario)  # an unknown scenario fails before anything is written
    with writing() as store:  # (racing calls for one run id must not both create it)
        rid = create_or_reuse(store, scenario, iterations, dict(overrides), run_id)
        run = run_store.get_run(store, rid)
        done = len(run_store.generations(store, rid))
    if done > iterations:
        raise UsageError(f"run {rid} already has {done} generations; iterations cannot be lower")
    if done == iterations and run["status"] == "completed":
        return {"run_id": rid, "status": "completed", "started": False,
                "scenario": run["scenario"], "target_generations": iterations,
                "detail": f"it already has its {done} generations: ask for more to continue it"}
    with _CHILDREN_LOCK:  # one child per run, however many calls race
        ours = _CHILDREN.get(rid)
        if (ours and ours["exit_code"] is None) or is_active(paths.run_dir(rid)):
            return {"run_id": rid, "status": "running", "started": False,
                    "scenario": run["scenario"], "target_generations": run["target_generations"],
                    "detail": "already running in another process"}
        pid = _spawn(rid, ["run", run["scenario_ref"], "--run-id", rid,
                           "--iterations", str(iterations)])
    return {"run_id": rid, "status": run["status"], "started": True, "scenario": run["scenario"],
            "target_generations": iterations, "pid": pid}


def run_status(run_id: str) -> dict:
    """What `lessonloop status RUN_ID --json` prints (run-status-v1 plus every generation)."""
    from ..loop.status import load_run, status_document

    with reading(paths.home()) as store:
        if store is None:
            raise NotFoundError(f"unknown run id {run_id!r} (no lessonloop database here yet)")
        run, gens = load_run(store, run_id)
    return status_document(run, gens)


def run_list(limit: int | None = None) -> list[dict]:
    """What `lessonloop list --json` prints: runs, newest first (the first ``limit``)."""
    from ..loop.status import run_object
    from ..store import runs as run_store

    check_limit(limit)
    with reading(paths.home()) as store:
        if store is None:
            return []
        return [run_object(r, run_store.generations(store, r["run_id"]))
                for r in run_store.list_runs(store)[:limit]]


def playbook_text(scenario: str, view: str = "playbook") -> str:
    """A scenario's playbook (or hints, dead ends, or all three) as Markdown, rendered from the
    store exactly as ``knowledge/<scenario>/*.md``."""
    from ..knowledge.entries import active, scenario_scope
    from ..knowledge.render import view_texts
    from ..scenarios import registry

    if view not in (*VIEWS, "all"):
        raise UsageError(f"view is {', '.join(VIEWS)} or all, not {view!r}")
    scope = scenario_scope(registry.load(scenario).name)
    root = paths.home()
    with reading(root) as store:
        entries = active(store, scope) if store is not None else []
    texts = {path.stem: text for path, text in view_texts(scope, entries, root).items()}
    return "\n".join(texts[v] for v in VIEWS) if view == "all" else texts[view]


def judge_output(task: str, output: str, provider: str | None = None,
                 model: str | None = None) -> dict:
    """Score one output of a task (verifier offline; a rubric needs a judge model), as
    `lessonloop judge TASK --output FILE --json` does."""
    from ..tasks import evaluate
    from ..tasks import spec as task_spec

    spec, path = task_spec.read(task)
    return evaluate.judge_once(spec, path.parent, output, lambda: writing(exclusive=False),
                               provider, model).to_dict()


# CLI commands that error messages point to, and the tools that do the same here.
_COMMANDS = {"`lessonloop list`": "list_runs"}


# --------------------------------------------------------------------------------------------
# The MCP layer


def _message(text: str) -> str:
    """One redacted line (see errors.one_line), CLI flags named as this server's arguments."""
    text = _FLAGS.sub(lambda m: m.group(1).replace("-", "_"), str(text))
    for command, tool in _COMMANDS.items():
        text = text.replace(command, tool)
    return one_line(text)


_UNION_NAMES = {"str": "a string", "int": "an integer", "float": "a number", "none": "null",
                "list[str]": "a list of strings", "list[int]": "a list of integers",
                "dict[str,any]": "a JSON object"}


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
            raise ToolError(_message(exc.message)) from None
        except (Exception, SystemExit) as exc:  # a bug or a misbehaving plugin: log, one line
            where = log_internal_error()
            raise ToolError(_message(f"internal error: {exc.__class__.__name__}: {exc}{where}")) from None
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
        from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
        from mcp.server.mcpserver.exceptions import UnexpectedToolError
        from mcp.types import ToolAnnotations
    except ImportError as exc:  # no SDK; mcp 1.x (FastMCP), or a broken install
        if sys.modules.get("mcp") is None:  # (a failed import leaves no module behind)
            raise UsageError(SDK_MISSING) from None
        raise UsageError(f"the MCP server needs mcp 2.x ({exc}): pip install "
                         "'lessonloop[mcp]'") from None
    finally:
        gc.freeze()
        gc.enable()
    from pydantic import Field, StrictInt, ValidationError

    from .. import __version__

    accepted: dict[str, set[str]] = {}
    ops = sys.modules[__name__]  # the plain operations, some named like the tools below

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
                raise ToolError(f"invalid arguments for {name}: unknown argument "
                                f"{', '.join(map(repr, unknown))} (it takes "
                                f"{', '.join(sorted(known)) or 'no arguments'})")
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
        SERVER_NAME, version=__version__, log_level="WARNING", lifespan=lifespan,
        instructions=(
            "lessonloop keeps memories across coding sessions (memory_* tools: store what is "
            "worth remembering, search before you decide) and learns game strategies from runs "
            "(list_scenarios, evaluate_strategy, run_start then run_status, read_playbook). "
            "judge_output scores an output of an agent task. Stored text is redacted of secrets."),
    )

    def tool(read_only: bool, destructive: bool = False):
        def register(fn):
            server.add_tool(_guarded(fn), description=inspect.cleandoc(fn.__doc__ or ""),
                            annotations=ToolAnnotations(
                                read_only_hint=read_only,
                                destructive_hint=None if read_only else destructive,
                                idempotent_hint=None if read_only else False,
                                open_world_hint=False))
            accepted[fn.__name__] = set(inspect.signature(fn).parameters)
            return fn
        return register

    Kind = Literal["pattern", "decision", "preference", "observation"]
    Scope = Literal["project", "user"]
    AnyScope = Literal["project", "user", "all"]

    @tool(read_only=False)  # a repeat reinforces the memory: no duplicate, but seen + 1
    def memory_store(
        type: Annotated[Kind, Field(description="pattern (how things are done here), decision "
                                    "(a choice and its reason), preference (what the user "
                                    "wants) or observation (a fact learned).")],
        summary: Annotated[str, Field(description="The memory in one line (120 characters "
                                      "are kept).")],
        content: Annotated[str, Field(description="Details (4096 characters are kept).")] = "",
        why: Annotated[str, Field(description="Why it holds or matters.")] = "",
        how_to_apply: Annotated[str, Field(description="When and how to use it.")] = "",
        tags: Annotated[list[str] | str | None, Field(
            description="Tags: a list, or one comma-separated string. 'mcp' is added.")] = None,
        scope: Annotated[Scope, Field(description="project (this project's store) or user "
                                      "(across projects).")] = "project",
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
        limit: Annotated[int, Field(ge=1, le=MAX_SEARCH, strict=True,
                                     description="At most this many.")] = 10,
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
        limit: Annotated[int, Field(ge=1, le=MAX_LISTED, strict=True,
                                     description="At most this many.")] = 50,
        scope: Annotated[AnyScope, Field(description="project, user or all.")] = "all",
    ) -> dict[str, Any]:
        """Recent automatic memories (not written by the user), newest first, to review;
        forget the wrong ones with memory_forget. Returns {"memories": [...]}."""
        return {"memories": recent_memories(scope, limit, automatic_only=True)}

    @tool(read_only=False, destructive=True)
    def memory_forget(
        id: Annotated[int, Field(strict=True, description="The memory's id (from "
                                 "memory_search or memory_audit).")],
        scope: Annotated[Scope, Field(description="The scope the id belongs to: pass the "
                                      "'scope' of the search or audit result, since ids are "
                                      "numbered per scope (project 1 and user 1 are two "
                                      "memories).")] = "project",
    ) -> dict[str, Any]:
        """Delete one memory for good, with its provenance and its line in the Markdown view.
        Returns {"forgotten", "scope", "summary"}: check the summary is the one you meant."""
        return forget_memory(id, scope)

    @tool(read_only=True)
    def list_scenarios() -> dict[str, Any]:
        """The scenarios that can be evaluated and run, each with its description and the JSON
        schema of its strategy. Returns {"scenarios": [{name, description, strategy_schema}]}."""
        return {"scenarios": scenario_list()}

    @tool(read_only=True)
    def evaluate_strategy(
        scenario: Annotated[str, Field(description="A scenario name (see list_scenarios) or "
                                       "path/to/file.py:ClassName.")],
        strategy: Annotated[dict[str, Any] | str, Field(
            description="The strategy: a JSON object matching the scenario's strategy_schema "
                        "(or that object as a JSON string).")],
        seeds: Annotated[str | list[StrictInt], Field(
            description="Seeds to play: 'A..B' (inclusive), 'A,B,C', or a list of integers.")] = "1..5",
        match_timeout: Annotated[float, Field(gt=0, le=3600, strict=True, description=(
            "Seconds before a match is killed."))] = 10.0,
    ) -> dict[str, Any]:
        """Score one strategy on chosen seeds (deterministic per strategy and seeds). Returns
        {strategy, seeds, scores, mean_score, dimensions, valid, problems} plus errors for
        matches that failed (their score is null)."""
        return ops.evaluate_strategy(scenario, strategy, seeds, match_timeout)

    @tool(read_only=False)
    def run_start(
        scenario: Annotated[str, Field(description="A scenario name (see list_scenarios) or "
                                       "path/to/file.py:ClassName.")],
        iterations: Annotated[int, Field(ge=1, le=100_000, strict=True,
                                         description="Generations to run.")] = 10,
        run_id: Annotated[str | None, Field(description="Name the run (letters, digits, - and "
                                            "_); an existing id continues it.")] = None,
        provider: Annotated[str | None, Field(min_length=1, description="Provider for every "
                                              "role (default: configuration, else the offline "
                                              "agent).")] = None,
        model: Annotated[str | None, Field(min_length=1,
                                           description="Model for the provider.")] = None,
        matches: Annotated[int | None, Field(ge=1, le=1000, strict=True, description=(
            "Paired matches per attempt (default 5)."))] = None,
        seed: Annotated[int | None, Field(ge=0, strict=True,
                                          description="Run seed (default 0).")] = None,
    ) -> dict[str, Any]:
        """Start a run of a scenario in the background and return at once with its run_id;
        poll run_status until its status is completed, stopped or failed."""
        return start_run(scenario, iterations, run_id,
                         {"provider": provider, "model": model, "matches": matches, "seed": seed})

    @tool(read_only=True)
    def run_status(
        run_id: Annotated[str, Field(description="The run's id (from run_start or list_runs).")],
    ) -> dict[str, Any]:
        """A run's state and every generation (run-status-v1, as `lessonloop status --json`):
        {run, latest_generation, progress_report, generations}, plus process (pid, exit_code)
        for a run this server started."""
        document = ops.run_status(run_id)
        with _CHILDREN_LOCK:
            record = _CHILDREN.get(run_id)
        if record is not None:
            document["process"] = {**record, "running": record["exit_code"] is None}
        return document

    @tool(read_only=True)
    def list_runs(
        limit: Annotated[int, Field(ge=1, le=MAX_LISTED, strict=True,
                                     description="At most this many.")] = 50,
    ) -> dict[str, Any]:
        """Runs, newest first, each with its status, progress, best score and Elo. Returns
        {"runs": [...]}."""
        return {"runs": run_list(limit)}

    @tool(read_only=True)
    def read_playbook(
        scenario: Annotated[str, Field(description="A scenario name (see list_scenarios).")],
        view: Annotated[Literal["playbook", "hints", "dead_ends", "all"], Field(
            description="playbook (lessons ranked by evidence), hints, dead_ends or all.")] = "playbook",
    ) -> str:
        """What lessonloop has learned about a scenario, as Markdown: playbook bullets with
        their evidence (+helpful/-harmful, seen n) and tags, hints and dead ends."""
        return playbook_text(scenario, view)

    @tool(read_only=False)
    def judge_output(
        task: Annotated[str, Field(description="Path of a task file (YAML or JSON), absolute or "
                                   "relative to the server's working directory.")],
        output: Annotated[str, Field(description="The output to score.")],
        provider: Annotated[str | None, Field(min_length=1, description="Judge provider, for a "
                                              "task with a rubric (default: the judge "
                                              "route).")] = None,
        model: Annotated[str | None, Field(min_length=1, description="Judge model.")] = None,
    ) -> dict[str, Any]:
        """Score one output of an agent task: required strings, format, the verifier in the
        sandbox (offline), then for a task with a rubric the judge model. Returns {score,
        passed_verifier, dimensions, reasoning, epoch}."""
        return ops.judge_output(task, output, provider, model)

    @server.resource("lessonloop://playbook/{scenario}", name="playbook", mime_type="text/markdown",
                     description="A scenario's playbook as Markdown (bullets with their evidence).")
    def playbook_resource(scenario: str) -> str:
        try:
            return playbook_text(scenario)
        except UsageError as exc:
            raise ResourceNotFoundError(_message(exc.message)) from None
        except LessonloopError as exc:
            raise ResourceError(_message(exc.message)) from None

    @server.resource("lessonloop://memories/recent", name="recent-memories",
                     mime_type="application/json",
                     description=f"The {RECENT_MEMORIES} most recent memories (project and "
                                 "user), newest first, as JSON.")
    def recent_memories_resource() -> str:
        try:
            return json.dumps(recent_memories("all", RECENT_MEMORIES), indent=2)
        except LessonloopError as exc:
            raise ResourceError(_message(exc.message)) from None

    return server


def _log_plainly() -> None:
    """Have MCPServer log plain lines to stderr: its own set-up imports Rich for that, a
    twentieth of the server's start, for the few warnings it may write."""
    import logging

    sdk = sys.modules.get("mcp.server.mcpserver.server")
    if sdk is not None and callable(getattr(sdk, "configure_logging", None)):
        sdk.configure_logging = lambda level="INFO": logging.basicConfig(
            level=level, format="%(message)s", stream=sys.stderr)


def serve() -> None:
    """Serve over stdio until the client closes the connection. Started by Claude Code without
    LESSONLOOP_HOME, it keeps memories where the hooks do: in ``$CLAUDE_PROJECT_DIR/.lessonloop``."""
    project = os.environ.get("CLAUDE_PROJECT_DIR")
    if project and not os.environ.get("LESSONLOOP_HOME"):
        os.environ["LESSONLOOP_HOME"] = os.path.join(project, ".lessonloop")
    server = build_server()
    sys.stdout.flush()
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True,
                     name="lessonloop-orphan-watch").start()
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
