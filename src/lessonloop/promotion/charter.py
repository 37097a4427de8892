"""The promotion charter: what may be activated without a person, from config.toml.

```toml
[promotion]
auto_activate = ["scenario:*"]  # scopes (glob patterns) whose accepted candidates may be served
approve = "auto"                # or "manual": an accepted candidate waits for
                                # `lessonloop promotions approve ID`
min_trials = 38                 # fewer matched trials than this: not served until
                                # `lessonloop promote` has trialled it through every stage
                                # (at most 38: one pass through every stage)
```

Without the table every scope may auto-activate, approval is automatic and any verdict of the
gate counts (what a run with ``--context-trials`` did before the charter). The charter decides
whether an *accepted* candidate is served; it never lets a rejected one through.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from .gate import CONFIRM_PAIRS, HOLDOUT_PAIRS, SCREEN_PAIRS

# the trials of one pass through every stage (no close call): a charter asking for more could
# never be met by `promote`, which trials a candidate once
FULL_TRIAL = SCREEN_PAIRS + CONFIRM_PAIRS + HOLDOUT_PAIRS

AUTO, MANUAL = "auto", "manual"
KEYS = ("auto_activate", "approve", "min_trials")


@dataclass(frozen=True)
class Charter:
    auto_activate: tuple[str, ...] = ("*",)
    approve: str = AUTO
    min_trials: int = 0

    def may_activate(self, scope: str) -> bool:
        """Whether an accepted candidate of ``scope`` may be served without a person."""
        return self.approve == AUTO and any(
            fnmatch.fnmatchcase(scope, pattern) for pattern in self.auto_activate
        )

    def enough(self, trials: int) -> bool:
        return trials >= self.min_trials

    def hold_reason(self, scope: str, trials: int) -> str | None:
        """Why an accepted candidate of ``scope`` with ``trials`` trials is not served now (None:
        it may be)."""
        if not self.enough(trials):
            return (
                f"{trials} trials, the charter asks for {self.min_trials}: "
                "`lessonloop promote` trials it through every stage "
                "(`lessonloop promotions approve ID` serves it as it is)"
            )
        if self.approve == MANUAL:
            return "the charter asks for approval: `lessonloop promotions approve ID`"
        if not self.may_activate(scope):
            return (
                f"the charter does not let {scope} auto-activate: "
                "`lessonloop promotions approve ID` serves it"
            )
        return None


def from_table(table: dict[str, Any], where: str = "config.toml") -> Charter:
    """The charter a ``[promotion]`` table states, or a ``UsageError`` naming what is wrong."""
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise UsageError(f"{where}: [promotion] has no {unknown[0]!r}; known: {', '.join(KEYS)}")
    scopes = table.get("auto_activate", ["*"])
    if isinstance(scopes, str):
        scopes = [scopes]
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        raise UsageError(f"{where}: [promotion] auto_activate must be a list of scope patterns")
    approve = table.get("approve", AUTO)
    if approve not in (AUTO, MANUAL):
        raise UsageError(f'{where}: [promotion] approve must be "auto" or "manual"')
    minimum = table.get("min_trials", 0)
    if isinstance(minimum, bool) or not isinstance(minimum, int) or not 0 <= minimum <= FULL_TRIAL:
        raise UsageError(
            f"{where}: [promotion] min_trials must be an integer from 0 to {FULL_TRIAL} "
            "(the trials of one pass through every stage)"
        )
    return Charter(tuple(scopes), approve, minimum)


def load() -> Charter:
    """The charter of the home's config.toml."""
    from .. import config

    return from_table(dict(config.load().promotion), str(config.config_path()))
