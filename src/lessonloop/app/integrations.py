"""Integrations: add lessonloop's hooks and MCP server to a coding agent's settings, or take
them out again. Claude Code is the one agent so far."""

from __future__ import annotations

from typing import Any

from ..errors import UsageError

TARGETS = ("claude-code",)


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise UsageError(f"unknown integration {target!r}; available: {', '.join(TARGETS)}")


def install(target: str, scope: str = "project") -> dict[str, Any]:
    """Add the hooks and the MCP server (idempotent, the settings backed up first): the events
    hooked, the settings file, its backup and the MCP file."""
    from ..integrations import claude_code

    _check_target(target)
    return claude_code.install(claude_code.settings_path(scope), claude_code.mcp_path(scope))


def uninstall(target: str, scope: str = "project") -> dict[str, Any]:
    """Remove only lessonloop's hooks and server; the memories stay."""
    from ..integrations import claude_code

    _check_target(target)
    return claude_code.uninstall(claude_code.settings_path(scope), claude_code.mcp_path(scope))
