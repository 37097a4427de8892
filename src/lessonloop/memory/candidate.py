"""A lesson memorize proposes (``Candidate``): its kind, summary, content, why and how to
apply it, and the admission proposal it becomes in a scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..knowledge import admission

HOW_TO_APPLY = {
    "pattern": "When this error shows up again, apply the fix first.",
    "decision": "Follow this decision in this project unless the user revisits it.",
    "preference": "Apply it whenever it is relevant, without being asked again.",
    "observation": "Keep it in mind when working on the same part of the project.",
}


@dataclass
class Candidate:
    kind: str
    summary: str
    content: str = ""
    why: str = ""
    how_to_apply: str = ""
    tags: list[str] = field(default_factory=list)
    user_scope: bool = False

    def proposal(self, scope: str, session: str) -> admission.Proposal:
        return admission.Proposal(
            kind=self.kind,
            scope=scope,
            summary=self.summary,
            content=self.content,
            why=self.why,
            how_to_apply=self.how_to_apply or HOW_TO_APPLY[self.kind],
            tags=["auto-memorize", self.kind, *self.tags],
            source="session",
            approved_by="consent",
            session_id=session,
            detail=self.why,
        )
