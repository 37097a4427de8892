"""Secrets recognised by their own shape: vendor tokens (``sk-ant-…``, ``ghp_…``, ``AKIA…``, JWTs,
webhook URLs) as a table of rules each anchored on a literal, Twilio and Mailgun key pairs,
and private-key blocks (PEM, also cut off at either end; PuTTY .ppk files, whole).
"""

from __future__ import annotations

import re

from ...lazyre import lazy
from .families import PRIO, RULES, Span
from .lexicon import placeholder
from .text import ALNUM, Scan, back_over_url, escape_ends_at


# --------------------------------------------------------------------------------------------
# Token rules anchored on a literal (the table: families.TABLE)

_RULE_TRIGGERS = tuple((rule.needle or rule.regex, rule) for rule in RULES)

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
            family = rule.family
            if rule.judge is not None:
                verdict = rule.judge(m)
                if not verdict:
                    continue
                if verdict is not True:
                    family = verdict                     # (the judge named another family)
            if placeholder(m.group()):                   # ghp_XXXX…, sk-...
                continue
            prev_end = m.end()
            s, e = m.span(rule.group)
            if rule.lead:                                # sk_live_ / rk_test_ ...
                if s < 1 or text[s - 1] not in rule.lead or (
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
