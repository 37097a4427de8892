"""Claude Code's side: ``hook`` (its hooks call it), ``mcp`` (its MCP client starts it),
``install`` and ``uninstall`` (what puts both into its settings)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

from .output import print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer

TARGET_HELP = "claude-code"
SCOPE_HELP = "project or user"


def hook_command(
    event: Annotated[
        str,
        typer.Argument(
            help="session-start, user-prompt-submit, "
            "pre-tool-use, post-tool-use, stop, "
            "session-end or pre-compact",
        ),
    ],
) -> None:
    """Claude Code hook entry: reads the hook payload on stdin; always exits 0."""
    # (__main__ sends `lessonloop hook ...` straight to memory/hooks.py, without the CLI stack:
    # this command lists it in --help and serves callers of cli.main)
    from ..memory.hooks import main

    main([event])


def mcp_command() -> None:
    """Serve memories, scenarios, runs, playbooks and the judge over MCP (stdio)."""
    from ..mcp.server import serve

    serve()


def install_command(
    target: Annotated[str, typer.Argument(help=TARGET_HELP)],
    scope: Annotated[str, typer.Option("--scope", help=SCOPE_HELP)] = "project",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Add lessonloop's hooks to Claude Code's settings (idempotent, backed up first)."""
    from ..app.integrations import install

    result = install(target, scope)
    if as_json:
        print_json(result)
        return
    backup = f" (backup: {result['backup']})" if result["backup"] else ""
    sys.stdout.write(
        f"installed hooks for {', '.join(result['events'])} in {result['settings']}{backup}"
        f"\nMCP server: {result['mcp']}"
        "\nnext: `lessonloop memory consent yes` to allow automatic memories\n"
    )


def uninstall_command(
    target: Annotated[str, typer.Argument(help=TARGET_HELP)],
    scope: Annotated[str, typer.Option("--scope", help=SCOPE_HELP)] = "project",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Remove only lessonloop's hooks from Claude Code's settings; memories stay."""
    from ..app.integrations import uninstall

    result = uninstall(target, scope)
    if as_json:
        print_json(result)
    elif result["removed"]:
        sys.stdout.write(
            f"removed lessonloop from {', '.join(result['removed'])} in {result['settings']}\n"
        )
    else:
        sys.stdout.write(f"nothing of lessonloop in {result['settings']}\n")
