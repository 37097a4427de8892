"""Knowledge: a scenario's playbook, hints and dead ends as the Markdown views show them."""

from __future__ import annotations

from .. import paths
from ..errors import UsageError

VIEWS = ("playbook", "hints", "dead_ends")


def playbook_text(scenario: str, view: str = "playbook") -> str:
    """A scenario's playbook (or hints, dead ends, or all three) as Markdown, rendered from the
    store exactly as ``knowledge/<scenario>/*.md``."""
    from ..knowledge.entries import active, scenario_scope
    from ..knowledge.render import view_texts
    from ..scenarios import registry
    from .stores import reading

    if view not in (*VIEWS, "all"):
        raise UsageError(f"is {', '.join(VIEWS)} or all, not {view!r}", field="view")
    scope = scenario_scope(registry.load(scenario).name)
    root = paths.home()
    with reading(root) as store:
        entries = active(store, scope) if store is not None else []
    texts = {path.stem: text for path, text in view_texts(scope, entries, root).items()}
    return "\n".join(texts[v] for v in VIEWS) if view == "all" else texts[view]
