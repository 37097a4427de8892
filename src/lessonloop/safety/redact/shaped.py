"""Secrets recognised by their own shape: vendor tokens (``sk-ant-…``, ``ghp_…``, ``AKIA…``, JWTs,
webhook URLs) as a table of rules each anchored on a literal, Twilio and Mailgun key pairs,
and private-key blocks (PEM, also cut off at either end; PuTTY .ppk files, whole).
"""

from __future__ import annotations

import re
from collections import namedtuple

from ...lazyre import lazy
from .families import PRIO, Span
from .lexicon import placeholder
from .text import (ALNUM, TOKCH, WORD, Scan, back_over_url, escape_ends_at, has_digit,
    has_upper_and_lower)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from typing import Callable


# --------------------------------------------------------------------------------------------
# Token rules anchored on a literal


# (a named tuple made by collections, not typing.NamedTuple: typing costs a hook 3 ms)
_Rule = namedtuple("_Rule", "needle regex family left group url_back",
                   defaults=(None, 0, False))
# needle: str | None     str.find() this literal; None: scan with regex.finditer
# regex: LazyPattern     matched at each hit (must start with the needle)
# family: str | Callable[[re.Match], str | None]   or a judge naming it (None rejects)
# left: frozenset | None  reject a hit preceded by one of these characters
# group: int | str        the part of the match that is redacted
# url_back: bool          extend the span back over host and scheme


def _sk_family(m: re.Match) -> str | None:
    if m.group("ant"):
        return "anthropic-api-key"
    body = m.group("body")
    if m.group("sub") or (has_upper_and_lower(body) and (has_digit(body) or len(body) >= 32)):
        return "openai-api-key"
    return None        # kebab-case words such as sk-learn-compat-layer


def _b64_private_key(b64: str) -> bool:
    """Whether base64 text (wrapped or not) holds a PEM private key's BEGIN line."""
    import base64  # (on first use: most processes never decode)
    import binascii

    flat = re.sub(r"\\[rn]|\s", "", b64).rstrip("=")
    try:
        return b"PRIVATE KEY-----" in base64.b64decode(flat[:len(flat) - len(flat) % 4])
    except (binascii.Error, ValueError):
        return False


def _mixed_body(family: str) -> Callable[[re.Match], str | None]:
    def judge(m: re.Match) -> str | None:
        body = m.group("body")
        return family if has_digit(body) or has_upper_and_lower(body) else None
    return judge


GL_KINDS = ("pat", "ptt", "dt", "rt", "cbt", "ft", "soat", "oas", "imt", "agent", "ffct", "wt")
RULES: tuple[_Rule, ...] = (
    _Rule("sk-", lazy(
        r"sk-(?:(?P<ant>ant-)[A-Za-z0-9_-]{8,1000}+"
        r"|(?P<sub>(?:proj|svcacct|admin|None)-)?+(?P<body>[A-Za-z0-9_-]{8,1000}+))"),
        _sk_family, left=TOKCH),
    _Rule(None, lazy(r"gh[pousr]_[A-Za-z0-9]{16,255}+"), "github-token", left=ALNUM),
    _Rule("github_pat_", lazy(r"github_pat_[A-Za-z0-9_]{20,255}+"), "github-token",
          left=ALNUM),
    _Rule(None, lazy(r"gl(?:%s)-" % "|".join(GL_KINDS) +
                           r"[A-Za-z0-9_-]{16,255}+(?:\.[A-Za-z0-9_-]{1,255}+){0,3}+"),
          "gitlab-token", left=ALNUM),
    _Rule("GR1348941", lazy(r"GR1348941[A-Za-z0-9_-]{20,255}+"), "gitlab-token", left=ALNUM),
    _Rule("hooks.slack.com/", lazy(
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{8,400}+"),
        "slack-webhook", url_back=True),
    _Rule("discord", lazy(
        r"discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/\d{5,30}+/[A-Za-z0-9_-]{8,200}+"),
        "discord-webhook", url_back=True),
    _Rule("xox", lazy(r"xox(?:[abeoprs]|e\.xox[bp])-[A-Za-z0-9-]{10,300}+"), "slack-token",
          left=ALNUM),
    _Rule("xapp-", lazy(r"xapp-\d-[A-Za-z0-9-]{10,300}+"), "slack-token", left=ALNUM),
    _Rule("k_live_", lazy(r"k_live_[A-Za-z0-9]{10,255}+"), "stripe-key"),
    _Rule("k_test_", lazy(r"k_test_[A-Za-z0-9]{10,255}+"), "stripe-key"),
    _Rule("whsec_", lazy(r"whsec_[A-Za-z0-9+/=]{10,255}+"), "stripe-key", left=ALNUM),
    # SendGrid: SG.<22>.<43> (base64url); a cut-off second part still counts from 8 characters.
    _Rule("SG.", lazy(r"SG\.(?P<body>[A-Za-z0-9_-]{16,32}+\.[A-Za-z0-9_-]{8,80}+)"),
          _mixed_body("sendgrid-key"), left=TOKCH | {"."}),
    # Mailgun: key-<32 hex> (pubkey-... is the public validation key: not matched); the newer
    # <32 hex>-<8 hex>-<8 hex> keys are matched by MAILGUN below.
    _Rule("key-", lazy(r"key-[0-9a-f]{32}(?![0-9A-Za-z])"), "mailgun-key", left=ALNUM),
    _Rule("npm_", lazy(r"npm_(?P<body>[A-Za-z0-9]{20,255}+)(?![_-])"),
          _mixed_body("npm-token"), left=ALNUM),
    _Rule("dckr_pat_", lazy(r"dckr_pat_[A-Za-z0-9_-]{20,200}+"), "generic-secret",
          left=ALNUM),
    _Rule("pplx-", lazy(r"pplx-[A-Za-z0-9]{32,100}+"), "generic-secret", left=ALNUM),
    # Alibaba Cloud AccessKey IDs: LTAI and 12-20 letters and digits
    _Rule("LTAI", lazy(r"LTAI(?P<body>[A-Za-z0-9]{12,20}+)(?![A-Za-z0-9])"),
          _mixed_body("generic-secret"), left=ALNUM),
    _Rule("xai-", lazy(r"xai-[A-Za-z0-9]{48,120}+"), "generic-secret", left=ALNUM),
    _Rule("pypi-AgE", lazy(r"pypi-AgE[A-Za-z0-9_-]{16,1000}+"), "pypi-token", left=ALNUM),
    _Rule("hf_", lazy(r"hf_(?P<body>[A-Za-z0-9]{20,255}+)(?![_-])"),
          _mixed_body("huggingface-token"), left=WORD),
    _Rule("api_org_", lazy(r"api_org_(?P<body>[A-Za-z0-9]{30,255}+)(?![_-])"),
          _mixed_body("huggingface-token"), left=WORD),
    _Rule("AIza", lazy(r"AIza[0-9A-Za-z_-]{20,255}+"), "google-api-key", left=ALNUM),
    _Rule("GOCSPX-", lazy(r"GOCSPX-[A-Za-z0-9_-]{16,255}+"), "google-oauth", left=ALNUM),
    _Rule("ya29.", lazy(r"ya29\.[A-Za-z0-9_-]{20,4000}+"), "google-oauth", left=ALNUM),
    _Rule(None, lazy(r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{12,16}+"), "aws-access-key", left=ALNUM),
    # JWT: header.payload.signature (JWE: up to five parts), or header.payload when cut off.
    _Rule("eyJ", lazy(
        r"eyJ[A-Za-z0-9_-]{6,8000}+\.(?:eyJ[A-Za-z0-9_-]{0,8000}+(?:\.[A-Za-z0-9_-]{0,8000}+)?+"
        r"|[A-Za-z0-9_-]{4,8000}+\.[A-Za-z0-9_-]{0,8000}+)(?:\.[A-Za-z0-9_-]{1,8000}+){0,2}+"),
        "jwt", left=TOKCH | {"."}),
    # A PEM block in base64 ("-----BEGIN" is LS0tLS1CRUdJTi): Kubernetes secrets, kubeconfig's
    # client-key-data, `base64 key.pem` wrapped at 76 columns (whole lines that follow, indented
    # in a YAML block too). Only one that holds a private key (certificates are public).
    _Rule("LS0tLS1CRUdJTi", lazy(
        r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,100000}+"
        r"(?:(?:\r?\n|\\[rn]){1,2}+[ \t]*+[A-Za-z0-9+/]{4,100000}+(?=[=\r\n\\\"']|$))*+={0,2}+"),
        lambda m: "private-key" if _b64_private_key(m.group()) else None, left=ALNUM | {"+", "/"}),
)

_RULE_TRIGGERS = tuple((rule.needle or rule.regex, rule) for rule in RULES)

# Stripe keys are sk_/rk_ + live_/test_: the needle starts one character in.
_STRIPE_NEEDLES = ("k_live_", "k_test_")

# Teams incoming webhooks: <tenant>.webhook.office.com/webhookb2/..., outlook.office(365).com/webhook/...
_TEAMS = lazy(r"(?:[A-Za-z0-9-]{1,63}\.)?(?:webhook\.office|outlook\.office(?:365)?)\.com"
                    r"/webhook(?:b2)?/[A-Za-z0-9@._/-]{8,600}+")


# Mailgun's newer private API keys, <32 hex>-<8 hex>-<8 hex>. Anchored on the "-" that ends the
# 32 hex digits (a leading hex class would be tried at every hex digit of the text).
MAILGUN = lazy(r"-[0-9a-f]{8}-[0-9a-f]{8}(?![0-9A-Za-z])"
                      r"(?<=(?<![0-9A-Za-z-])[0-9a-f]{32}-.{17})")

# Twilio. An account SID (AC + 32 hex) identifies an account and is not a secret by itself; the
# 32-hex auth token written right after it (Client("AC...", "<token>"), AC...:<token>) is. An
# API key SID (SK + 32 hex) is half of a credential pair and only ever written next to its
# secret, so it is redacted together with a 32-character secret that follows it. Auth tokens
# and API secrets under their own names (TWILIO_AUTH_TOKEN=...) are caught by the key name.
_TWILIO_PAIR = (r"(?![0-9A-Za-z])(?:(?:\\?[\"'`])?+[ \t]*+(?:[,:][ \t]*+)?+(?:\\?[\"'`])?+"
                r"(?P<secret>%s)(?![0-9A-Za-z]))?")
TWILIO_AC = lazy(r"AC(?<![0-9A-Za-z]..)[0-9a-f]{32}" + _TWILIO_PAIR % "[0-9a-f]{32}")
TWILIO_SK = lazy(r"SK(?<![0-9A-Za-z]..)[0-9a-f]{32}" + _TWILIO_PAIR % "[A-Za-z0-9]{32}")


def vendor_pairs(sc: Scan, out: list[Span]) -> None:
    """Twilio SIDs with their secrets, Mailgun's newer keys."""
    prio = PRIO["twilio-key"]
    for m in sc.matches(TWILIO_AC):
        if m.group("secret"):
            out.append((m.start("secret"), m.end("secret"), prio))
    for m in sc.matches(TWILIO_SK):
        out.append((m.start(), m.end(), prio))
    for m in sc.matches(MAILGUN):
        out.append((m.start() - 32, m.end(), PRIO["mailgun-key"]))


def token_rules(sc: Scan, out: list[Span]) -> None:
    text = sc.text
    skip = sc.skip
    for trigger, rule in _RULE_TRIGGERS:
        if trigger in skip:
            continue
        left, regex = rule.left, rule.regex
        prev_end = -1       # a token right after another one of the same kind is not "inside a word"
        hits: list[int] | list[re.Match]
        hits = sc.matches(regex) if rule.needle is None else sc.hits(rule.needle)
        for hit in hits:
            h = hit if isinstance(hit, int) else hit.start()
            if left is not None and h and h != prev_end and text[h - 1] in left \
                    and not escape_ends_at(text, h):
                continue    # (checked before matching: keeps a text of repeated needles linear)
            m = regex.match(text, h) if isinstance(hit, int) else hit
            if m is None:
                continue
            family = rule.family if isinstance(rule.family, str) else rule.family(m)
            if family is None or placeholder(m.group()):   # ghp_XXXX…, sk-...
                continue
            prev_end = m.end()
            s, e = m.span(rule.group)
            if rule.needle in _STRIPE_NEEDLES:           # sk_live_ / rk_test_ ...
                if s < 1 or text[s - 1] not in "sr" or (
                        s >= 2 and text[s - 2] in ALNUM and not escape_ends_at(text, s - 1)):
                    continue
                s -= 1
            if rule.url_back:
                s = back_over_url(text, s)
            out.append((s, e, PRIO[family]))
    for h in sc.hits(".com/webhook"):
        lo = max(0, h - 90)
        for m in _TEAMS.finditer(text, lo, min(len(text), h + 700)):
            if m.start() <= h < m.end():
                out.append((back_over_url(text, m.start()), m.end(), PRIO["teams-webhook"]))
                break


# --------------------------------------------------------------------------------------------
# PEM private keys: the whole block; from BEGIN to the end when END was cut off

_PEM_BEGIN = lazy(r"-----BEGIN[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = lazy(r"-----END[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = ALNUM | set("+/=\\")


def pem(sc: Scan, out: list[Span]) -> None:
    text = sc.text
    prio = PRIO["private-key"]
    covered = -1
    ends: list[re.Match] = []
    for i in sc.hits("-----"):
        if i < covered:
            continue
        if text.startswith("BEGIN", i + 5):
            m = _PEM_BEGIN.match(text, i)
            if m:
                e = _PEM_END.search(text, m.end())
                covered = e.end() if e else len(text)
                out.append((i, covered, prio))
        elif text.startswith("END", i + 5):
            m = _PEM_END.match(text, i)
            if m:
                ends.append(m)
                covered = m.end()
    # An END whose BEGIN line was cut off (text truncated from the front): the key body before it.
    for m in ends:
        out.append((_pem_body_start(text, m.start()), m.end(), prio))


def _pem_body_start(text: str, i: int) -> int:
    """Start of the base64 lines (or one JSON-escaped line) that end at ``i``."""
    j, lim = i, max(0, i - 20000)
    while j > lim and text[j - 1] in _PEM_BODY:           # this line, "\\n" escapes included
        j -= 1
    while j > lim and text[j - 1] == "\n":                # whole base64 lines above it
        k = text.rfind("\n", 0, j - 1) + 1
        line = text[k:j - 1].rstrip("\r")
        if len(line) < 4 or any(c not in _PEM_BODY for c in line):
            break
        j = k
    return j


# --------------------------------------------------------------------------------------------
# PuTTY private-key files (.ppk, versions 2 and 3): the whole file from its first line through
# the Private-MAC; from Private-Lines when the first lines were cut off, to the end when the MAC
# was. (Public-Lines are public, but a .ppk is one secret: it goes whole.)

_PUTTY_HEAD = "PuTTY-User-Key-File-"
_PUTTY_PRIVATE = lazy(r"Private-(?:Lines[ \t]*+:[ \t]*+\d{1,5}+|MAC[ \t]*+:[ \t]*+"
                            r"[0-9A-Fa-f]{16,256}+)")
_PUTTY_MAC = lazy(r"Private-MAC[ \t]*+:[ \t]*+[0-9A-Fa-f]{0,256}+")
_PUTTY_REACH = 200_000    # characters between a file's first line, its private lines and MAC


def putty(sc: Scan, out: list[Span]) -> None:
    text = sc.text
    prio = PRIO["private-key"]
    covered = 0
    for i in sc.hits("Private-"):
        if i < covered or not _PUTTY_PRIVATE.match(text, i):
            continue
        head = text.rfind(_PUTTY_HEAD, max(covered, i - _PUTTY_REACH), i)
        mac = text.find("Private-MAC", i, i + _PUTTY_REACH)
        covered = _PUTTY_MAC.match(text, mac).end() if mac != -1 else len(text)
        out.append((i if head == -1 else head, covered, prio))
