"""The route ``trained:<checkpoint id>``: a registered checkpoint as a run's competitor.

The competitor answers each call from the checkpoint, by its backend: a ``surrogate``
checkpoint with the strategy its model ranks best (``surrogate.propose``, deterministic per
the call's seed); a ``lora`` checkpoint by local inference of its base with the adapter
loaded (``lora.Generator``, on a GPU when torch sees one), asked the prompt as its training
records hold it, its answer read by the runner as any model's (no playable strategy: the
attempt fails). Every other role (analyst, coach, curator, translator) is the offline
agent's, as with ``local``. A scenario's runs take the
route by default once the checkpoint has won its promotion trials and is the scope's active
``competitor`` (``served_competitor``, called when a run is created); naming it with
``--provider trained:ID`` serves it by hand. Registered in ``providers/catalog.py``.
"""

from __future__ import annotations

from typing import Any

from .. import canonical
from ..errors import UsageError
from ..providers.base import Request
from ..providers.local.agent import LocalProvider
from . import surrogate

NAME = "trained"
ROLE = "competitor"  # the promotion role a checkpoint serves


def provider_for(route: Any, settings: Any) -> TrainedProvider:
    """The provider for ``trained:ID`` (the registry's factory): the checkpoint, read now."""
    from .. import paths
    from ..store import open_store
    from . import registry

    ident = route.provider.partition(":")[2]
    if not ident:
        raise UsageError(
            "the trained provider needs a checkpoint id: --provider trained:ID "
            "(see `lessonloop models list`)"
        )
    with open_store(paths.home(), readonly=True) as store:
        checkpoint = registry.get(store.conn, ident)
    if checkpoint is None:
        raise UsageError(f"unknown checkpoint {ident!r} (see `lessonloop models list`)")
    if checkpoint["backend"] == "lora":
        return LoraProvider(checkpoint)
    return TrainedProvider(checkpoint)


class TrainedProvider(LocalProvider):
    """The offline agent, with a checkpoint's surrogate as its competitor."""

    name = NAME

    def __init__(self, checkpoint: dict[str, Any]):
        super().__init__()
        self.checkpoint = checkpoint

    def _competitor(self, state: dict[str, Any], request: Request) -> str:
        incumbent = state.get("incumbent") or {}
        around = incumbent.get("strategy") if isinstance(incumbent, dict) else None
        strategy = surrogate.propose(
            self.checkpoint["params"],
            state["strategy_schema"],
            request.seed or 0,
            played=played_strategies(state),
            around=around if isinstance(around, dict) else None,
        )
        return (  # (the competitor's answer: a reason, then the strategy as a JSON block)
            f"The strategy checkpoint {self.checkpoint['id']} ranks best for this call.\n\n"
            f"```json\n{canonical.dumps(strategy)}\n```\n"
        )


def played_strategies(state: dict[str, Any]) -> list[dict]:
    """What the run has played (its incumbent, this generation's tries, every played attempt
    of its history), from the competitor's request state."""
    rows = [state.get("incumbent"), *(state.get("tried") or []), *(state.get("history") or [])]
    return [
        row["strategy"]
        for row in rows
        if isinstance(row, dict) and isinstance(row.get("strategy"), dict)
    ]


class LoraProvider(TrainedProvider):
    """The offline agent, with a lora checkpoint's model as its competitor (loaded on the
    first competitor call: a run that fails before it loads nothing)."""

    def __init__(self, checkpoint: dict[str, Any]):
        super().__init__(checkpoint)
        self.generator: Any = None

    def _competitor(self, state: dict[str, Any], request: Request) -> str:
        from .. import paths
        from . import lora

        if self.generator is None:
            self.generator = lora.Generator(self.checkpoint, paths.home())
        return str(
            self.generator.generate(
                lora.prompt_text(request),
                request.seed or 0,
                request.max_tokens,
                request.temperature,
            )
        )


def served_competitor(conn: Any, scenario_name: str) -> str | None:
    """The route of the checkpoint the scenario's scope serves as its competitor (it won its
    promotion trials, or a user activated it), or None: the offline agent."""
    from ..knowledge.entries import scenario_scope
    from ..promotion import records

    pointer = records.active(conn, scenario_scope(scenario_name), ROLE)
    return f"{NAME}:{pointer['ref']}" if pointer else None


def check_serves(provider: Any, scenario_name: str) -> None:
    """Refuse a checkpoint trained for another scenario."""
    from ..knowledge.entries import scenario_scope

    checkpoint, scope = provider.checkpoint, scenario_scope(scenario_name)
    if checkpoint["scope"] != scope:
        raise UsageError(
            f"checkpoint {checkpoint['id']} was trained for {checkpoint['scope']}, not {scope}"
        )
