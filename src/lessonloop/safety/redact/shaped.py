"""Secrets recognised by their own shape or syntax: vendor tokens (``sk-ant-…``, ``ghp_…``,
``AKIA…``, JWTs, webhook URLs) by the token rules of families.TABLE, Twilio and Mailgun key
pairs, private-key blocks (PEM, also cut off at either end; PuTTY .ppk files, whole), and
credentials written in a syntax of their own: in URLs (and Sentry DSNs), Bearer and Basic
values, curl -u, signed URLs, password flags (mysql -p …), cookies, passwords piped to a command
that reads stdin, login calls and SQL ``IDENTIFIED BY``.
"""

from __future__ import annotations

import re

from ...lazyre import lazy
from ...shell import last_stage
from .entropy import looks_random
from .families import MARKER_PREFIX, MARKER_RE, PRIO, RULES, Span
from .lexicon import TEMPLATE_START, WS, placeholder
from .named import quoted_span
from .text import (
    ALNUM,
    LETTERS,
    SCHEMECH,
    TOKCH,
    Scan,
    back_over_url,
    esc_cut,
    escape_ends_at,
    has_digit,
    line_end,
    logical_line_start,
)

# --------------------------------------------------------------------------------------------
# Token rules anchored on a literal (the table: families.TABLE)

_RULE_TRIGGERS = tuple((rule.needle or rule.regex, rule) for rule in RULES)

# Teams incoming webhooks: <tenant>.webhook.office.com/webhookb2/..., outlook.office(365).com/webhook/...
_TEAMS = lazy(
    r"(?:[A-Za-z0-9-]{1,63}\.)?(?:webhook\.office|outlook\.office(?:365)?)\.com"
    r"/webhook(?:b2)?/[A-Za-z0-9@._/-]{8,600}+"
)


# Mailgun's newer private API keys, <32 hex>-<8 hex>-<8 hex>. Anchored on the "-" that ends the
# 32 hex digits (a leading hex class would be tried at every hex digit of the text).
MAILGUN = lazy(
    r"-[0-9a-f]{8}-[0-9a-f]{8}(?![0-9A-Za-z])"
    r"(?<=(?<![0-9A-Za-z-])[0-9a-f]{32}-.{17})"
)

# Twilio. An account SID (AC + 32 hex) identifies an account and is not a secret by itself; the
# 32-hex auth token written right after it (Client("AC...", "<token>"), AC...:<token>) is. An
# API key SID (SK + 32 hex) is half of a credential pair and only ever written next to its
# secret, so it is redacted together with a 32-character secret that follows it. Auth tokens
# and API secrets under their own names (TWILIO_AUTH_TOKEN=...) are caught by the key name.
_TWILIO_PAIR = (
    r"(?![0-9A-Za-z])(?:(?:\\?[\"'`])?+[ \t]*+(?:[,:][ \t]*+)?+(?:\\?[\"'`])?+"
    r"(?P<secret>%s)(?![0-9A-Za-z]))?"
)
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
        prev_end = -1  # a token right after another one of the same kind is not "inside a word"
        hits: list[int] | list[re.Match]
        hits = sc.matches(regex) if rule.needle is None else sc.hits(rule.needle)
        for hit in hits:
            h = hit if isinstance(hit, int) else hit.start()
            if (
                left is not None
                and h
                and h != prev_end
                and text[h - 1] in left
                and not escape_ends_at(text, h)
            ):
                continue  # (checked before matching: keeps a text of repeated needles linear)
            m = regex.match(text, h) if isinstance(hit, int) else hit
            if m is None:
                continue
            family = rule.family
            if rule.judge is not None:
                verdict = rule.judge(m)
                if not verdict:
                    continue
                if verdict is not True:
                    family = verdict  # (the judge named another family)
            if placeholder(m.group()):  # ghp_XXXX…, sk-...
                continue
            prev_end = m.end()
            s, e = m.span(rule.group)
            if rule.lead:  # sk_live_ / rk_test_ ...
                if (
                    s < 1
                    or text[s - 1] not in rule.lead
                    or (s >= 2 and text[s - 2] in ALNUM and not escape_ends_at(text, s - 1))
                ):
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
    while j > lim and text[j - 1] in _PEM_BODY:  # this line, "\\n" escapes included
        j -= 1
    while j > lim and text[j - 1] == "\n":  # whole base64 lines above it
        k = text.rfind("\n", 0, j - 1) + 1
        line = text[k : j - 1].rstrip("\r")
        if len(line) < 4 or any(c not in _PEM_BODY for c in line):
            break
        j = k
    return j


# --------------------------------------------------------------------------------------------
# PuTTY private-key files (.ppk, versions 2 and 3): the whole file from its first line through
# the Private-MAC; from Private-Lines when the first lines were cut off, to the end when the MAC
# was. (Public-Lines are public, but a .ppk is one secret: it goes whole.)

_PUTTY_HEAD = "PuTTY-User-Key-File-"
_PUTTY_PRIVATE = lazy(
    r"Private-(?:Lines[ \t]*+:[ \t]*+\d{1,5}+|MAC[ \t]*+:[ \t]*+"
    r"[0-9A-Fa-f]{16,256}+)"
)
_PUTTY_MAC = lazy(r"Private-MAC[ \t]*+:[ \t]*+[0-9A-Fa-f]{0,256}+")
_PUTTY_REACH = 200_000  # characters between a file's first line, its private lines and MAC


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


# --------------------------------------------------------------------------------------------
# URLs with credentials (any scheme), Sentry DSNs, credentials cut off at the end of the text

_AUTHORITY = lazy(r"[^\s/?#\"'<>\\]{0,1024}+")
_HEX32 = lazy(r"[0-9a-f]{32}")


def _mask_markers(s: str) -> str:
    return MARKER_RE.sub(lambda m: "\0" * len(m.group()), s) if MARKER_PREFIX in s else s


def urls(sc: Scan, out: list[Span]) -> None:
    text = sc.text
    n = len(text)
    for p in sc.hits("://"):
        if p == 0 or text[p - 1] not in SCHEMECH:
            continue
        a = p + 3
        auth_end = _AUTHORITY.match(text, a).end()
        authority = text[a:auth_end]
        at = authority.rfind("@")
        if at < 0:
            # "scheme://user:pass" cut off at the end of the text: what follows ':' is no port.
            c = _mask_markers(authority).find(":")
            if auth_end == n and c > 0:
                rest = authority[c + 1 :]
                if rest and not rest.isdigit() and not rest.startswith(MARKER_PREFIX):
                    out.append((a + c + 1, auth_end, PRIO["url-credentials"]))
            continue
        userinfo = authority[:at]
        if (
            not userinfo
            or userinfo.startswith(MARKER_PREFIX)
            and ":" not in _mask_markers(userinfo)
        ):
            continue
        colon = _mask_markers(userinfo).find(":")
        if colon >= 0:
            user, pw = userinfo[:colon], userinfo[colon + 1 :]
            if _HEX32.fullmatch(user):
                out.append((a, a + at, PRIO["sentry-dsn"]))  # legacy DSN public:secret
            elif pw and not placeholder(pw):
                out.append((a + colon + 1, a + at, PRIO["url-credentials"]))
        elif _HEX32.fullmatch(userinfo):
            out.append((a, a + at, PRIO["sentry-dsn"]))
        elif len(userinfo) >= 20 and has_digit(userinfo) and any(c in LETTERS for c in userinfo):
            out.append((a, a + at, PRIO["url-credentials"]))  # https://<token>@host


# --------------------------------------------------------------------------------------------
# Bearer and Basic credentials, curl -u user:pass, signed URLs (an Authorization header's
# value: named._authorization)

_BEARER = lazy(r"bearer[ \t]+([A-Za-z0-9._~+/-]{8,8192}+=*+)", re.I)
_BASIC = lazy(r"basic[ \t]+([A-Za-z0-9+/]{6,4096}+={0,2}+)(?![A-Za-z0-9+/=])", re.I)
_CURL_USER = lazy(
    r"(?:-u|--user)(?:[ \t]+|=)?(\\?[\"']|)((?:[^\s:\"'\\]|\\[^\s\"']){1,256}+):"
    r"((?:[^\s\"'\\]|\\[^\s\"']){0,1024}+)\1"
)  # (\" in JSON too)
# Programs whose -u takes user:group, not user:password: the command a flag belongs to is the
# first word after the last ;, | or & before it (docker exec es01 curl -u ... is curl's), read
# plain (lessonloop.shell): a quote here may be a JSON-escaped one.
_CURL_WORDS = lazy(r"(?<![\w.-])(?:curl|wget|http|https|xh)(?![\w.-])")
_USER_GROUP_PROGRAMS = frozenset({"docker", "podman", "nerdctl", "chown", "chgrp", "runuser"})


def _user_group_flag(text: str, h: int) -> bool:
    """Whether the -u at ``h`` belongs to a command whose -u takes user:group."""
    stage = last_stage(text[logical_line_start(text, h, 300) : h], plain=True)
    words = [word.rsplit("/", 1)[-1] for word in stage.split()]
    if any(w in ("curl", "wget", "http", "https") for w in words):
        return False  # docker exec x curl -u: curl's
    return next((w for w in words if w != "sudo"), None) in _USER_GROUP_PROGRAMS


_SIGNATURE = lazy(r"(?:sig|[a-z0-9-]{0,20}signature)=([A-Za-z0-9%+/=._-]{16,4000}+)", re.I)


def _decodes_to_userpass(b64: str) -> bool:
    import base64  # (on first use: most processes never decode)
    import binascii

    try:
        raw = base64.b64decode(b64 + "=" * (-len(b64) % 4), validate=True)
        s = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return ":" in s and s.isprintable()


def schemes(sc: Scan, out: list[Span]) -> None:
    text = sc.text
    for h in sc.hits(b"bearer"):
        if h and text[h - 1] in LETTERS:
            continue
        m = _BEARER.match(text, h)
        if m:
            tok = m.group(1)
            if (len(tok) >= 20 or has_digit(tok)) and not placeholder(tok):
                out.append((m.start(1), m.end(1), PRIO["bearer-token"]))
    for h in sc.hits(b"basic"):
        if h and text[h - 1] in LETTERS:
            continue
        m = _BASIC.match(text, h)
        if m and _decodes_to_userpass(m.group(1)):
            out.append((m.start(1), m.end(1), PRIO["basic-auth"]))
    user_group = any(p in text for p in _USER_GROUP_PROGRAMS)
    for h in sc.hits("-u"):
        if h and text[h - 1] == "-":
            h -= 1  # --user
            if not text.startswith("--user", h):
                continue
        if h and not text[h - 1].isspace():
            continue
        m = _CURL_USER.match(text, h)
        if m:
            user, pw = m.group(2), esc_cut(m.group(3))
            if text.startswith(MARKER_PREFIX, m.start(2)):
                continue  # (a user already redacted)
            if user.startswith("+"):
                continue  # date -u +%H:%M:%S: a format
            if "@" in user and not _CURL_WORDS.search(text, logical_line_start(text, h, 300), h):
                continue  # git push -u git@host:repo, rsync -u u@h:/p
            if not pw and not m.group(1) and looks_random(user):
                out.append((m.start(2), m.end(2), PRIO["basic-auth"]))  # -u sk_live_...: (Stripe)
            elif (
                pw
                and not (user.isdigit() and pw.isdigit())
                and not placeholder(pw)
                and not (user_group and _user_group_flag(text, h))
            ):
                out.append((m.start(3), m.start(3) + len(pw), PRIO["basic-auth"]))
    # Signed URLs: Azure SAS sig=, X-Amz-Signature=, X-Goog-Signature=
    for needle in (b"sig=", b"signature="):
        for h in sc.hits(needle):
            q = h
            if needle == b"signature=":
                while q > 0 and text[q - 1] in TOKCH and h - q < 20:
                    q -= 1
            if q == 0 or text[q - 1] not in "?&;":
                continue
            m = _SIGNATURE.match(text, q)
            if m:
                out.append((m.start(1), m.end(1), PRIO["url-signature"]))


# Passwords given as a short flag: ``mysql -pSECRET`` and ``7z a -pSECRET`` (attached: ``-p
# SECRET`` would be mysql's prompt and its database name), ``sshpass -p SECRET``, ``docker login
# -u me -p SECRET``, ``mongosh``/``twine``/``az login``/``psexec -p SECRET``, ``redis-cli -a
# SECRET``, ``zip``/``unzip``/``sqlcmd -P SECRET``, ``ldapsearch -w SECRET``, ``openssl enc -k
# SECRET``. Each group names the flag's letter its programs take.
_FLAG_PROGRAMS = lazy(
    r"(?<![\w.-])(?:(?P<p_attached>mysql\w*|mariadb\w*|7z[az]?)|(?P<a>redis-cli)|(?P<p>sshpass"
    r"|mongosh|mongo|mongodump|mongorestore|mongoexport|mongoimport|twine|psexec(?:64)?"
    r"|(?:docker|podman|nerdctl|buildah|skopeo|helm(?:[ \t]+registry)?|oras|az)[ \t]+"
    r"(?:\S+[ \t]+){0,3}?login)|(?P<P>zip|unzip|sqlcmd|bcp)|(?P<w>ldap(?:search|add|modify|delete"
    r"|passwd|whoami|compare|modrdn|exop))|(?P<k>openssl))"
    r"(?![\w.-])"
)
_FLAG_VALUE = lazy(r"(\\?[\"'])?((?:[^\s\"'\\]|\\[^\s\"'nrt]){1,256}+)")


def password_flags(sc: Scan, out: list[Span]) -> None:
    text = sc.text
    programs = list(_FLAG_PROGRAMS.finditer(text))  # (found once: a text of flags stays linear)
    if not programs:
        return
    from bisect import bisect_right  # (here: a hook that finds no flag loads no bisect)

    ends = [m.end() for m in programs]
    for h in (m.start() for m in _PASSWORD_FLAG.finditer(text)):
        k = bisect_right(ends, h) - 1
        if k < 0:
            continue
        program = programs[k]  # the last one before the flag, on its line
        if program.start() < logical_line_start(text, h, 300) or any(
            c in text[program.end() : h] for c in ";|&"
        ):
            continue
        letter = program.lastgroup
        if letter[0] != text[h + 1]:
            continue  # redis-cli: -a is the password, -p the port
        j = h + 2
        space = WS.match(text, j)
        if letter == "p_attached":
            if space or j >= len(text):
                continue  # mysql -p: it will prompt
        elif space:
            j = space.end()
        elif program.group() != "sshpass":  # (sshpass -pSECRET works too)
            continue
        m = _FLAG_VALUE.match(text, j)
        if not m:
            continue
        value = m.group(2)
        if value.startswith(("-", "$", *TEMPLATE_START)) or placeholder(value):
            continue
        out.append((m.start(2), m.end(2), PRIO["password"]))


# Cookie headers: a session's cookie is its credential. In ``Cookie: a=1; sid=x`` every pair is
# a cookie, in ``Set-Cookie: sid=x; Path=/`` the first; a value goes when its name says session,
# token or auth, or when it looks random (analytics' _ga=GA1.2.123.456 stays).
_COOKIE_HEADER = lazy(r"(set-)?cookie\\?[\"']?[ \t]*:[ \t]*\\?[\"']?")
_COOKIE_PAIR = lazy(r"[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}+)=([^;,\s\"'\\]{1,4096}+)")
_SESSION_NAME = lazy(r"(?i:sess|sid|token|auth|jwt|login|remember|csrf|xsrf)")


def cookies(sc: Scan, out: list[Span]) -> None:
    text, low = sc.text, sc.low
    done = -1
    for h in sc.hits(b"cookie"):
        if h < done:
            continue  # (inside pairs already read)
        m = _COOKIE_HEADER.match(low if low.__class__ is str else text.lower(), h)
        if not m or (h and text[h - 1] in ALNUM):
            continue
        i = done = m.end()
        while True:
            pair = _COOKIE_PAIR.match(text, i)
            if not pair:
                break
            v = pair.group(2)
            done = pair.end()
            if (
                (
                    _SESSION_NAME.search(pair.group(1))
                    and len(v) >= 8
                    and not v.isdigit()
                    or len(v) >= 24
                    and looks_random(v)
                )
                and not placeholder(v)
                and not v.startswith(TEMPLATE_START)
            ):
                out.append((pair.start(2), pair.end(2), PRIO["generic-secret"]))
            if m.group(1) or not text.startswith(";", pair.end()):
                break  # Set-Cookie: one cookie, then attributes
            i = pair.end() + 1


# A password echoed into a command that reads it from stdin: ``echo 'pw' | sudo -S ...``,
# ``echo "$tok" | docker login -u me --password-stdin``, ``echo 'user:pw' | sudo chpasswd``,
# ``echo pw | passwd --stdin user``. (The "stdin" trigger stands for all of them.)
_ECHO_PIPE = lazy(
    r"(?:echo|printf)(?:[ \t]+-[neE]{1,3})*[ \t]+(?:'%s(?:\\n)?'[ \t]+)?"
    r"(\\?[\"']?)([^\s\"'|;&\\]{1,256}+)\1[ \t]*\|[ \t]*((?:[^\n|;&\\]|\\[^nr]){0,300})"
)
_READS_STDIN = lazy(
    r"sudo\b.*?[ \t]-[A-Za-z]*S\b|(?:sudo[ \t]+)?\S*chpasswd|.*(?:--password-stdin"
    r"|passwd[ \t].*--stdin)"
)


def piped_passwords(sc: Scan, out: list[Span]) -> None:
    text, low = sc.text, sc.low
    lines = set()  # (the lines where a reader is named)
    for needle in ("stdin", "chpasswd", " -s"):
        lit = needle if low.__class__ is str else needle.encode()
        i = low.find(lit)
        while i != -1:
            lines.add(text.rfind("\n", 0, i) + 1)
            i = low.find(lit, line_end(text, i))
    for m in (m for ls in sorted(lines) for m in _ECHO_PIPE.finditer(text, ls, line_end(text, ls))):
        value = m.group(2)
        if value.startswith(("$", *TEMPLATE_START)) or placeholder(value):
            continue
        if _READS_STDIN.match(m.group(3)):
            s = m.start(2)
            if "chpasswd" in m.group(3) and ":" in value:
                s += value.index(":") + 1  # user:password
            out.append((s, m.end(2), PRIO["password"]))


# A login call's password as its second argument: smtplib's, ftplib's and imaplib's
# ``server.login("me@corp.io", "pw")`` or ``server.login(user, "pw")``.
_LOGIN_CALL = lazy(
    r"login\([ \t]*(?:\\?[\"'][^\"'\n]{0,200}+\\?[\"']|[\w.\[\]]{1,100}+)[ \t]*,[ \t]*"
    r"(\\?[\"'])((?:[^\"'\n\\]|\\[^\"'\n]){1,200}+)\1[ \t]*\)"
)


def login_calls(sc: Scan, out: list[Span]) -> None:
    for h in sc.hits("login("):
        m = _LOGIN_CALL.match(sc.text, h)
        if m and not placeholder(m.group(2)) and not m.group(2).startswith(TEMPLATE_START):
            out.append((m.start(2), m.end(2), PRIO["password"]))


# MySQL/MariaDB: CREATE USER 'u'@'h' IDENTIFIED BY 'secret' (also WITH ... BY, BY PASSWORD).
_IDENTIFIED_BY = lazy(
    r"identified(?:[ \t]+with[ \t]+\w{1,40})?[ \t]+by[ \t]+"
    r"(?:password[ \t]+)?(\\?['\"])",
    re.I,
)


def sql_identified(sc: Scan, out: list[Span]) -> None:
    for h in sc.hits(b"identified"):
        m = _IDENTIFIED_BY.match(sc.text, h)
        span = quoted_span(sc.text, m.start(1)) if m else None
        if span:
            out.append((span[0], span[1], PRIO["password"]))


# "-p" (or another letter of _FLAG_PROGRAMS) as a flag of its own, not inside a word or
# "--password" (as password_flags wants it): the "-p" trigger stands for them all.
FLAG_LETTERS = "paPwk"  # (the groups of _FLAG_PROGRAMS)
_PASSWORD_FLAG = lazy(r"-(?<=(?<!\S)-)[%s]" % FLAG_LETTERS)
assert {name[0] for name in _FLAG_PROGRAMS.pattern.split("(?P<")[1:]} == set(FLAG_LETTERS)
