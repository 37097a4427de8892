"""The families a finding is named after, most specific first, and the marker that replaces it.

The order decides which family an overlap of findings keeps (``PRIO``: lower is more specific).
"""

from __future__ import annotations

import re


# Most specific first: when findings overlap, the merged span takes the earliest family here.
FAMILIES: tuple[str, ...] = (
    "private-key",
    "anthropic-api-key",
    "openai-api-key",
    "github-token",
    "gitlab-token",
    "slack-webhook",
    "discord-webhook",
    "teams-webhook",
    "slack-token",
    "stripe-key",
    "sendgrid-key",
    "mailgun-key",
    "twilio-key",
    "npm-token",
    "pypi-token",
    "huggingface-token",
    "google-api-key",
    "google-oauth",
    "aws-access-key",
    "aws-secret-key",
    "azure-storage-key",
    "sentry-dsn",
    "cloudflare-token",
    "jwt",
    "url-signature",
    "url-credentials",
    "bearer-token",
    "basic-auth",
    "authorization-header",
    "password",
    "generic-secret",
)
PRIO = {family: i for i, family in enumerate(FAMILIES)}

MARKER_PREFIX = "[REDACTED:"
MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]{1,40}\]")

Span = tuple[int, int, int]          # start, end, family priority


def marker(family: str) -> str:
    return f"[REDACTED:{family}]"
