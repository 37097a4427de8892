"""The ``lessonloop mcp`` server: memories, scenarios, runs, playbooks and the task judge as MCP
tools and resources over stdio, built on the official ``mcp`` SDK (2.x, ``MCPServer``).

The tools are top-level functions in ``tools.py``, a few lines each over the use cases in
``lessonloop.app`` (each call opens its own short-lived store connection, so concurrent calls —
the SDK runs synchronous tools on worker threads — share none); this module registers them and
words their failures. The SDK is imported in ``build_server`` only. Every failure becomes a
tool error (``isError``) with one redacted line — lessonloop's own message, with the argument at
fault named as the tool argument and the listing it points to as a tool, or "internal error"
with the traceback in ``logs/errors.log`` — never a crash. While it serves, the SDK points file
descriptor 1 at stderr and writes the protocol to a private duplicate, so nothing a tool, a
scenario or a child process prints can corrupt the stream; stray Python output is flushed
after every call so none reaches the wire later.
"""

import contextlib
import functools
import inspect
import os
import sys
import threading
import time
from typing import Any

from ..errors import LessonloopError, UsageError, log_internal_error, one_line

SDK_MISSING = "the MCP server needs its SDK: pip install 'lessonloop[mcp]'"
SERVER_NAME = "lessonloop"
INSTRUCTIONS = (
    "lessonloop keeps memories across coding sessions (memory_* tools: store what is "
    "worth remembering, search before you decide) and learns game strategies from runs "
    "(list_scenarios, evaluate_strategy, run_start then run_status, read_playbook). "
    "judge_output scores an output of an agent task. Stored text is redacted of secrets."
)
# The use cases that list what exists (``LessonloopError.listing``), as the tools that do it.
LISTING_TOOLS = {"list_runs": "list_runs", "list_memories": "memory_search"}


# --------------------------------------------------------------------------------------------
# The MCP layer


def _message(error: Exception | str) -> str:
    """One redacted line (see errors.one_line); the argument at fault named as this server's
    tool argument (``field``), the listing an unknown name points to as this server's tool."""
    if isinstance(error, LessonloopError):
        text = error.named(str, lambda use_case: LISTING_TOOLS.get(use_case, use_case))
    else:
        text = str(error)
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
        location: tuple[int | str, ...] = error.get("loc") or ("arguments",)
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


def _guarded(body):
    """Run a tool body: lessonloop errors and crashes become tool errors with one line."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(body)
    def call(**arguments):
        try:
            return body(**arguments)
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


def _resource(function):
    """Read a resource: a name that is not there (a usage error: an unknown scenario) becomes
    ResourceNotFoundError, any other lessonloop error ResourceError, each one line."""
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

    @functools.wraps(function)
    def read(**arguments):
        try:
            return function(**arguments)
        except UsageError as exc:
            raise ResourceNotFoundError(_message(exc)) from None
        except LessonloopError as exc:
            raise ResourceError(_message(exc)) from None

    return read


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
        from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
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
    from pydantic import ValidationError

    from .. import __version__
    from . import tools

    accepted: dict[str, set[str]] = {}

    class Server(MCPServer):
        async def list_tools(self):
            listed_tools = await super().list_tools()
            for listed in listed_tools:  # say what call_tool enforces: no argument beyond these
                listed.input_schema = {**listed.input_schema, "additionalProperties": False}
            return listed_tools

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
        instructions=INSTRUCTIONS,
    )
    for tool, hints in tools.TOOLS:
        server.add_tool(
            _guarded(tool),
            description=inspect.cleandoc(tool.__doc__ or ""),
            annotations=ToolAnnotations(
                read_only_hint=hints.read_only,
                destructive_hint=None if hints.read_only else hints.destructive,
                idempotent_hint=None if hints.read_only else False,
                open_world_hint=False,
            ),
        )
        accepted[tool.__name__] = set(inspect.signature(tool).parameters)

    for resource, served in tools.RESOURCES:
        server.resource(
            served.uri,
            name=served.name,
            mime_type=served.mime_type,
            description=inspect.cleandoc(resource.__doc__ or ""),
        )(_resource(resource))
    return server


def _log_plainly() -> None:
    """Have MCPServer log plain lines to stderr: its own set-up imports Rich for that, a
    twentieth of the server's start, for the few warnings it may write."""
    import logging

    sdk: Any = sys.modules.get("mcp.server.mcpserver.server")  # a module patched if present
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
