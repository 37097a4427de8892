"""Data flows one way (DESIGN §3): CLI → loop/tasks/memory/mcp → knowledge/store. The MCP
server and the engine share code through the engine's modules, never through the CLI's."""

from __future__ import annotations

import ast
from pathlib import Path

import lessonloop

ROOT = Path(lessonloop.__file__).parent
LOWER = {"knowledge", "store", "safety", "scenarios", "providers"}
UPPER = {"cli", "loop", "tasks", "memory", "mcp", "integrations"}


def _imports() -> list[tuple[str, str]]:
    """(importing package or top-level module, imported lessonloop package) for every import."""
    found = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        here = ["lessonloop", *rel.parent.parts]
        where = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = here[:len(here) - node.level + 1] if node.level else []
                names = [".".join(base + [node.module] if node.module else base)]
                if node.module is None:  # from .. import cli
                    names = [f"{names[0]}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "lessonloop" and len(parts) > 1:
                    found.append((where, parts[1]))
    return found


def test_the_import_scan_sees_the_entry_point_importing_the_cli():
    assert ("__main__", "cli") in _imports()


def test_only_the_entry_point_imports_the_cli():
    offenders = sorted({w for w, target in _imports() if target == "cli" and w not in ("cli", "__main__")})
    assert offenders == []


def test_knowledge_store_and_plugins_never_import_the_layers_above_them():
    offenders = sorted({(w, t) for w, t in _imports() if w in LOWER and t in UPPER})
    assert offenders == []
