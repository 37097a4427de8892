"""Every family of secret in one table, most specific first, with the rules that recognise a
token of the family by its shape alone.

A family is one ``family(name, *rules)`` entry of ``TABLE``. Its place in the table decides
which family an overlap of findings keeps (``PRIO``: lower is more specific). Each rule is
data: the literal it is anchored on, the pattern matched there, the context that refuses a hit
(``left``), a judge for what the pattern cannot say, and how the prefilter looks for it
(``presence``: by default the literal, searched from its rarest character). The scan
(``shaped.token_rules``) and the prefilter (``prefilter``) are built from the table, so a new
token family is one entry here, with its true and false positives in
``tests/safety/test_families.py``. Families found by code of their own (private-key blocks,
credentials in URLs, secrets under secret-looking names, ...) have entries without rules; the
module named beside them finds them.
"""

from __future__ import annotations

import re
from collections import namedtuple

from ...lazyre import lazy
from .text import ALNUM, TOKCH, WORD, has_digit, has_upper_and_lower

# (named tuples made by collections, not typing.NamedTuple: typing costs a hook 3 ms)
TokenRule = namedtuple(
    "TokenRule",
    "needle regex left judge group url_back lead presence family",
    defaults=(None, None, 0, False, "", None, None),
)
# needle: str | None      str.find() this literal; None: scan with regex.finditer
# regex: LazyPattern      matched at each hit (must start with the needle)
# left: frozenset | None  refuse a hit preceded by one of these characters
# judge: Callable[[re.Match], bool | str] | None   refuses a match (False), or names the
#                         family it found (a str) when that is not the entry's own
# group: int | str        the part of the match that is redacted
# url_back: bool          extend the span back over host and scheme
# lead: str               one of these characters must precede the needle, and belongs to the
#                         token (Stripe's sk_live_/rk_live_: the needle starts one character in)
# presence: tuple | None  how the prefilter looks for the rule: search(), within(), after()
#                         below (None: the needle, searched from its rarest character)
# family: str             the entry's name (filled in by ``family``)
# How the prefilter looks for a rule, when not by its needle alone (tagged tuples: a named
# tuple class costs a hook process a tenth of a millisecond to make):


def search(pattern: str, literals: tuple[str, ...] | None) -> tuple:
    """A pattern starting with a literal character, searched together with the other patterns
    that start with that character; one of ``literals`` is in every match (None: not so)."""
    return ("search", pattern, literals)


def within(literal: str) -> tuple:
    """The needle, looked for only in a text that holds ``literal`` (".com/" for webhooks)."""
    return ("within", literal)


def after(trigger: bytes) -> tuple:
    """The needle (from its rarest character), looked for only when ``trigger`` was found."""
    return ("after", trigger)


def family(name: str, *rules: TokenRule) -> tuple[str, tuple[TokenRule, ...]]:
    """One entry of TABLE: a family's name and its token rules."""
    return name, tuple(rule._replace(family=name) for rule in rules)


def _sk_family(found: re.Match) -> str | None:
    if found.group("ant"):
        return "anthropic-api-key"
    body = found.group("body")
    if found.group("sub") or (has_upper_and_lower(body) and (has_digit(body) or len(body) >= 32)):
        return "openai-api-key"
    return None  # kebab-case words such as sk-learn-compat-layer


def _b64_private_key(found: re.Match) -> bool:
    """Whether base64 text (wrapped or not) holds a PEM private key's BEGIN line."""
    import base64  # (on first use: most processes never decode)
    import binascii

    flat = re.sub(r"\\[rn]|\s", "", found.group()).rstrip("=")
    try:
        return b"PRIVATE KEY-----" in base64.b64decode(flat[: len(flat) - len(flat) % 4])
    except (binascii.Error, ValueError):
        return False


def _mixed_body(found: re.Match) -> bool:
    """A body with a digit or both cases: a token, not a word (npm_install_hook)."""
    body = found.group("body")
    return has_digit(body) or has_upper_and_lower(body)


GL_KINDS = ("pat", "ptt", "dt", "rt", "cbt", "ft", "soat", "oas", "imt", "agent", "ffct", "wt")

# Most specific first: when findings overlap, the merged span takes the earliest family here.
TABLE: tuple[tuple[str, tuple[TokenRule, ...]], ...] = (
    # (also PEM and PuTTY blocks: shaped.pem, shaped.putty) A PEM block in base64
    # ("-----BEGIN" is LS0tLS1CRUdJTi): Kubernetes secrets, kubeconfig's client-key-data,
    # `base64 key.pem` wrapped at 76 columns (whole lines that follow, indented in a YAML block
    # too). Only one that holds a private key (certificates are public).
    family(
        "private-key",
        TokenRule(
            "LS0tLS1CRUdJTi",
            lazy(
                r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,100000}+"
                r"(?:(?:\r?\n|\\[rn]){1,2}+[ \t]*+[A-Za-z0-9+/]{4,100000}+(?=[=\r\n\\\"']|$))*+={0,2}+"
            ),
            left=ALNUM | {"+", "/"},
            judge=_b64_private_key,
        ),
    ),
    # sk-ant-... and OpenAI's sk-... (the judge tells them apart)
    family(
        "anthropic-api-key",
        TokenRule(
            "sk-",
            lazy(
                r"sk-(?:(?P<ant>ant-)[A-Za-z0-9_-]{8,1000}+"
                r"|(?P<sub>(?:proj|svcacct|admin|None)-)?+(?P<body>[A-Za-z0-9_-]{8,1000}+))"
            ),
            left=TOKCH,
            judge=_sk_family,
        ),
    ),
    family("openai-api-key"),  # (anthropic-api-key's sk- rule)
    family(
        "github-token",
        TokenRule(
            None,
            lazy(r"gh[pousr]_[A-Za-z0-9]{16,255}+"),
            left=ALNUM,
            presence=search("gh[pousr]_", tuple(f"gh{c}_" for c in "pousr")),
        ),
        TokenRule(
            "github_pat_",
            lazy(r"github_pat_[A-Za-z0-9_]{20,255}+"),
            left=ALNUM,
            presence=search("github_pat_", ("github_pat_",)),
        ),
    ),
    family(
        "gitlab-token",
        TokenRule(
            None,
            lazy(
                r"gl(?:%s)-" % "|".join(GL_KINDS)
                + r"[A-Za-z0-9_-]{16,255}+(?:\.[A-Za-z0-9_-]{1,255}+){0,3}+"
            ),
            left=ALNUM,
            presence=search(r"gl(?:%s)-" % "|".join(GL_KINDS), tuple(f"gl{k}-" for k in GL_KINDS)),
        ),
        TokenRule(
            "GR1348941",
            lazy(r"GR1348941[A-Za-z0-9_-]{20,255}+"),
            left=ALNUM,
            presence=search("GR1348941", ("GR1348941",)),
        ),
    ),
    family(
        "slack-webhook",
        TokenRule(
            "hooks.slack.com/",
            lazy(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{8,400}+"),
            url_back=True,
            presence=within(".com/"),
        ),
    ),
    family(
        "discord-webhook",
        TokenRule(
            "discord",
            lazy(
                r"discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/\d{5,30}+/[A-Za-z0-9_-]{8,200}+"
            ),
            url_back=True,
            presence=within(".com/"),
        ),
    ),
    family("teams-webhook"),  # (shaped.teams_webhooks)
    family(
        "slack-token",
        TokenRule(
            "xox",
            lazy(r"xox(?:[abeoprs]|e\.xox[bp])-[A-Za-z0-9-]{10,300}+"),
            left=ALNUM,
            presence=search("xox", ("xox",)),
        ),
        TokenRule(
            "xapp-",
            lazy(r"xapp-\d-[A-Za-z0-9-]{10,300}+"),
            left=ALNUM,
            presence=search("xapp-", ("xapp-",)),
        ),
    ),
    family(
        "stripe-key",
        TokenRule(
            "k_live_",
            lazy(r"k_live_[A-Za-z0-9]{10,255}+"),
            lead="sr",
            presence=search("k_live_", ("k_live_",)),
        ),
        TokenRule(
            "k_test_",
            lazy(r"k_test_[A-Za-z0-9]{10,255}+"),
            lead="sr",
            presence=search("k_test_", ("k_test_",)),
        ),
        TokenRule("whsec_", lazy(r"whsec_[A-Za-z0-9+/=]{10,255}+"), left=ALNUM),
    ),
    # SendGrid: SG.<22>.<43> (base64url); a cut-off second part still counts from 8 characters.
    family(
        "sendgrid-key",
        TokenRule(
            "SG.",
            lazy(r"SG\.(?P<body>[A-Za-z0-9_-]{16,32}+\.[A-Za-z0-9_-]{8,80}+)"),
            left=TOKCH | {"."},
            judge=_mixed_body,
            presence=search(r"SG\.", ("SG.",)),
        ),
    ),
    # Mailgun: key-<32 hex> (pubkey-... is the public validation key: not matched); the newer
    # <32 hex>-<8 hex>-<8 hex> keys: shaped.vendor_pairs.
    family(
        "mailgun-key",
        TokenRule(
            "key-", lazy(r"key-[0-9a-f]{32}(?![0-9A-Za-z])"), left=ALNUM, presence=after(b"key")
        ),
    ),
    family("twilio-key"),  # (shaped.vendor_pairs)
    family(
        "npm-token",
        TokenRule(
            "npm_",
            lazy(r"npm_(?P<body>[A-Za-z0-9]{20,255}+)(?![_-])"),
            left=ALNUM,
            judge=_mixed_body,
        ),
    ),
    family(
        "pypi-token", TokenRule("pypi-AgE", lazy(r"pypi-AgE[A-Za-z0-9_-]{16,1000}+"), left=ALNUM)
    ),
    family(
        "huggingface-token",
        TokenRule(
            "hf_", lazy(r"hf_(?P<body>[A-Za-z0-9]{20,255}+)(?![_-])"), left=WORD, judge=_mixed_body
        ),
        TokenRule(
            "api_org_",
            lazy(r"api_org_(?P<body>[A-Za-z0-9]{30,255}+)(?![_-])"),
            left=WORD,
            judge=_mixed_body,
        ),
    ),
    family(
        "google-api-key",
        TokenRule(
            "AIza",
            lazy(r"AIza[0-9A-Za-z_-]{20,255}+"),
            left=ALNUM,
            presence=search("AIza", ("AIza",)),
        ),
    ),
    family(
        "google-oauth",
        TokenRule(
            "GOCSPX-",
            lazy(r"GOCSPX-[A-Za-z0-9_-]{16,255}+"),
            left=ALNUM,
            presence=search("GOCSPX-", ("GOCSPX-",)),
        ),
        TokenRule("ya29.", lazy(r"ya29\.[A-Za-z0-9_-]{20,4000}+"), left=ALNUM),
    ),
    family(
        "aws-access-key",
        TokenRule(
            None,
            lazy(r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{12,16}+"),
            left=ALNUM,
            presence=search("A(?:KIA|SIA|BIA|CCA)", ("AKIA", "ASIA", "ABIA", "ACCA")),
        ),
    ),
    family("aws-secret-key"),  # (named: a name's family)
    family("azure-storage-key"),  # (named)
    family("sentry-dsn"),  # (shaped.urls, named)
    family("cloudflare-token"),  # (named)
    # JWT: header.payload.signature (JWE: up to five parts), or header.payload when cut off.
    family(
        "jwt",
        TokenRule(
            "eyJ",
            lazy(
                r"eyJ[A-Za-z0-9_-]{6,8000}+\.(?:eyJ[A-Za-z0-9_-]{0,8000}+(?:\.[A-Za-z0-9_-]{0,8000}+)?+"
                r"|[A-Za-z0-9_-]{4,8000}+\.[A-Za-z0-9_-]{0,8000}+)(?:\.[A-Za-z0-9_-]{1,8000}+){0,2}+"
            ),
            left=TOKCH | {"."},
        ),
    ),
    family("url-signature"),  # (shaped.schemes)
    family("url-credentials"),  # (shaped.urls)
    family("bearer-token"),  # (shaped.schemes, named)
    family("basic-auth"),  # (shaped.schemes, named)
    family("authorization-header"),  # (named.authorization_header)
    family("password"),  # (named, shaped)
    family(
        "generic-secret",  # (also named, entropy, shaped)
        TokenRule("dckr_pat_", lazy(r"dckr_pat_[A-Za-z0-9_-]{20,200}+"), left=ALNUM),
        TokenRule("pplx-", lazy(r"pplx-[A-Za-z0-9]{32,100}+"), left=ALNUM),
        # Alibaba Cloud AccessKey IDs: LTAI and 12-20 letters and digits
        TokenRule(
            "LTAI",
            lazy(r"LTAI(?P<body>[A-Za-z0-9]{12,20}+)(?![A-Za-z0-9])"),
            left=ALNUM,
            judge=_mixed_body,
        ),
        TokenRule(
            "xai-",
            lazy(r"xai-[A-Za-z0-9]{48,120}+"),
            left=ALNUM,
            presence=search("xai-", ("xai-",)),
        ),
    ),
)

FAMILIES: tuple[str, ...] = tuple(name for name, _ in TABLE)
PRIO = {name: i for i, name in enumerate(FAMILIES)}
RULES: tuple[TokenRule, ...] = tuple(rule for _, rules in TABLE for rule in rules)

MARKER_PREFIX = "[REDACTED:"
MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]{1,40}\]")

Span = tuple[int, int, int]  # start, end, family priority


def marker(name: str) -> str:
    return f"[REDACTED:{name}]"
