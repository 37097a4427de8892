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
from .lexicon import BLANKS, TEMPLATE_START, placeholder
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


def vendor_pairs(scan: Scan, out: list[Span]) -> None:
    """Twilio SIDs with their secrets, Mailgun's newer keys."""
    prio = PRIO["twilio-key"]
    for found in scan.matches(TWILIO_AC):
        if found.group("secret"):
            out.append((found.start("secret"), found.end("secret"), prio))
    for found in scan.matches(TWILIO_SK):
        out.append((found.start(), found.end(), prio))
    for found in scan.matches(MAILGUN):
        out.append((found.start() - 32, found.end(), PRIO["mailgun-key"]))


def token_rules(scan: Scan, out: list[Span]) -> None:
    text = scan.text
    skip = scan.skip
    for trigger, rule in _RULE_TRIGGERS:
        if trigger in skip:
            continue
        left, regex = rule.left, rule.regex
        prev_end = -1  # a token right after another one of the same kind is not "inside a word"
        hits: list[int] | list[re.Match]
        hits = scan.matches(regex) if rule.needle is None else scan.hits(rule.needle)
        for hit in hits:
            start = hit if isinstance(hit, int) else hit.start()
            if (
                left is not None
                and start
                and start != prev_end
                and text[start - 1] in left
                and not escape_ends_at(text, start)
            ):
                continue  # (checked before matching: keeps a text of repeated needles linear)
            found = regex.match(text, start) if isinstance(hit, int) else hit
            if found is None:
                continue
            family = rule.family
            if rule.judge is not None:
                verdict = rule.judge(found)
                if not verdict:
                    continue
                if verdict is not True:
                    family = verdict  # (the judge named another family)
            if placeholder(found.group()):  # ghp_XXXX…, sk-...
                continue
            prev_end = found.end()
            span_start, span_end = found.span(rule.group)
            if rule.lead:  # sk_live_ / rk_test_ ...
                if (
                    span_start < 1
                    or text[span_start - 1] not in rule.lead
                    or (
                        span_start >= 2
                        and text[span_start - 2] in ALNUM
                        and not escape_ends_at(text, span_start - 1)
                    )
                ):
                    continue
                span_start -= 1
            if rule.url_back:
                span_start = back_over_url(text, span_start)
            out.append((span_start, span_end, PRIO[family]))
    for start in scan.hits(".com/webhook"):
        window_start = max(0, start - 90)
        for found in _TEAMS.finditer(text, window_start, min(len(text), start + 700)):
            if found.start() <= start < found.end():
                out.append((back_over_url(text, found.start()), found.end(), PRIO["teams-webhook"]))
                break


# --------------------------------------------------------------------------------------------
# PEM private keys: the whole block; from BEGIN to the end when END was cut off

_PEM_BEGIN = lazy(r"-----BEGIN[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = lazy(r"-----END[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = ALNUM | set("+/=\\")


def pem(scan: Scan, out: list[Span]) -> None:
    text = scan.text
    prio = PRIO["private-key"]
    covered = -1
    ends: list[re.Match] = []
    for hit in scan.hits("-----"):
        if hit < covered:
            continue
        if text.startswith("BEGIN", hit + 5):
            marker = _PEM_BEGIN.match(text, hit)
            if marker:
                end_marker = _PEM_END.search(text, marker.end())
                covered = end_marker.end() if end_marker else len(text)
                out.append((hit, covered, prio))
        elif text.startswith("END", hit + 5):
            marker = _PEM_END.match(text, hit)
            if marker:
                ends.append(marker)
                covered = marker.end()
    # An END whose BEGIN line was cut off (text truncated from the front): the key body before it.
    for marker in ends:
        out.append((_pem_body_start(text, marker.start()), marker.end(), prio))


def _pem_body_start(text: str, end: int) -> int:
    """Start of the base64 lines (or one JSON-escaped line) that end at ``end``."""
    start, lim = end, max(0, end - 20000)
    while start > lim and text[start - 1] in _PEM_BODY:  # this line, "\\n" escapes included
        start -= 1
    while start > lim and text[start - 1] == "\n":  # whole base64 lines above it
        line_start = text.rfind("\n", 0, start - 1) + 1
        line = text[line_start : start - 1].rstrip("\r")
        if len(line) < 4 or any(c not in _PEM_BODY for c in line):
            break
        start = line_start
    return start


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


def putty(scan: Scan, out: list[Span]) -> None:
    text = scan.text
    prio = PRIO["private-key"]
    covered = 0
    for hit in scan.hits("Private-"):
        if hit < covered or not _PUTTY_PRIVATE.match(text, hit):
            continue
        head = text.rfind(_PUTTY_HEAD, max(covered, hit - _PUTTY_REACH), hit)
        mac = text.find("Private-MAC", hit, hit + _PUTTY_REACH)
        covered = _PUTTY_MAC.match(text, mac).end() if mac != -1 else len(text)
        out.append((hit if head == -1 else head, covered, prio))


# --------------------------------------------------------------------------------------------
# URLs with credentials (any scheme), Sentry DSNs, credentials cut off at the end of the text

_AUTHORITY = lazy(r"[^\s/?#\"'<>\\]{0,1024}+")
_HEX32 = lazy(r"[0-9a-f]{32}")


def _mask_markers(text: str) -> str:
    return MARKER_RE.sub(lambda m: "\0" * len(m.group()), text) if MARKER_PREFIX in text else text


def urls(scan: Scan, out: list[Span]) -> None:
    text = scan.text
    text_len = len(text)
    for scheme_end in scan.hits("://"):
        if scheme_end == 0 or text[scheme_end - 1] not in SCHEMECH:
            continue
        auth_start = scheme_end + 3
        auth_end = _AUTHORITY.match(text, auth_start).end()
        authority = text[auth_start:auth_end]
        at_sign = authority.rfind("@")
        if at_sign < 0:
            # "scheme://user:pass" cut off at the end of the text: what follows ':' is no port.
            port_colon = _mask_markers(authority).find(":")
            if auth_end == text_len and port_colon > 0:
                rest = authority[port_colon + 1 :]
                if rest and not rest.isdigit() and not rest.startswith(MARKER_PREFIX):
                    out.append((auth_start + port_colon + 1, auth_end, PRIO["url-credentials"]))
            continue
        userinfo = authority[:at_sign]
        if (
            not userinfo
            or userinfo.startswith(MARKER_PREFIX)
            and ":" not in _mask_markers(userinfo)
        ):
            continue
        colon = _mask_markers(userinfo).find(":")
        if colon >= 0:
            user, password = userinfo[:colon], userinfo[colon + 1 :]
            if _HEX32.fullmatch(user):
                out.append(
                    (auth_start, auth_start + at_sign, PRIO["sentry-dsn"])
                )  # legacy DSN public:secret
            elif password and not placeholder(password):
                out.append((auth_start + colon + 1, auth_start + at_sign, PRIO["url-credentials"]))
        elif _HEX32.fullmatch(userinfo):
            out.append((auth_start, auth_start + at_sign, PRIO["sentry-dsn"]))
        elif len(userinfo) >= 20 and has_digit(userinfo) and any(c in LETTERS for c in userinfo):
            out.append(
                (auth_start, auth_start + at_sign, PRIO["url-credentials"])
            )  # https://<token>@host


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


def _user_group_flag(text: str, flag: int) -> bool:
    """Whether the -u at ``flag`` belongs to a command whose -u takes user:group."""
    stage = last_stage(text[logical_line_start(text, flag, 300) : flag], plain=True)
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
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


def schemes(scan: Scan, out: list[Span]) -> None:
    text = scan.text
    for hit in scan.hits(b"bearer"):
        if hit and text[hit - 1] in LETTERS:
            continue
        found = _BEARER.match(text, hit)
        if found:
            tok = found.group(1)
            if (len(tok) >= 20 or has_digit(tok)) and not placeholder(tok):
                out.append((found.start(1), found.end(1), PRIO["bearer-token"]))
    for hit in scan.hits(b"basic"):
        if hit and text[hit - 1] in LETTERS:
            continue
        found = _BASIC.match(text, hit)
        if found and _decodes_to_userpass(found.group(1)):
            out.append((found.start(1), found.end(1), PRIO["basic-auth"]))
    user_group = any(p in text for p in _USER_GROUP_PROGRAMS)
    for hit in scan.hits("-u"):
        if hit and text[hit - 1] == "-":
            hit -= 1  # --user
            if not text.startswith("--user", hit):
                continue
        if hit and not text[hit - 1].isspace():
            continue
        found = _CURL_USER.match(text, hit)
        if found:
            user, password = found.group(2), esc_cut(found.group(3))
            if text.startswith(MARKER_PREFIX, found.start(2)):
                continue  # (a user already redacted)
            if user.startswith("+"):
                continue  # date -u +%H:%M:%S: a format
            if "@" in user and not _CURL_WORDS.search(
                text, logical_line_start(text, hit, 300), hit
            ):
                continue  # git push -u git@host:repo, rsync -u u@h:/p
            if not password and not found.group(1) and looks_random(user):
                out.append(
                    (found.start(2), found.end(2), PRIO["basic-auth"])
                )  # -u sk_live_...: (Stripe)
            elif (
                password
                and not (user.isdigit() and password.isdigit())
                and not placeholder(password)
                and not (user_group and _user_group_flag(text, hit))
            ):
                out.append((found.start(3), found.start(3) + len(password), PRIO["basic-auth"]))
    # Signed URLs: Azure SAS sig=, X-Amz-Signature=, X-Goog-Signature=
    for needle in (b"sig=", b"signature="):
        for hit in scan.hits(needle):
            param_start = hit
            if needle == b"signature=":
                while param_start > 0 and text[param_start - 1] in TOKCH and hit - param_start < 20:
                    param_start -= 1
            if param_start == 0 or text[param_start - 1] not in "?&;":
                continue
            found = _SIGNATURE.match(text, param_start)
            if found:
                out.append((found.start(1), found.end(1), PRIO["url-signature"]))


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


def password_flags(scan: Scan, out: list[Span]) -> None:
    text = scan.text
    programs = list(_FLAG_PROGRAMS.finditer(text))  # (found once: a text of flags stays linear)
    if not programs:
        return
    from bisect import bisect_right  # (here: a hook that finds no flag loads no bisect)

    ends = [m.end() for m in programs]
    for flag in (m.start() for m in _PASSWORD_FLAG.finditer(text)):
        program_index = bisect_right(ends, flag) - 1
        if program_index < 0:
            continue
        program = programs[program_index]  # the last one before the flag, on its line
        if program.start() < logical_line_start(text, flag, 300) or any(
            c in text[program.end() : flag] for c in ";|&"
        ):
            continue
        letter = program.lastgroup
        if letter[0] != text[flag + 1]:
            continue  # redis-cli: -a is the password, -p the port
        value_pos = flag + 2
        space = BLANKS.match(text, value_pos)
        if letter == "p_attached":
            if space or value_pos >= len(text):
                continue  # mysql -p: it will prompt
        elif space:
            value_pos = space.end()
        elif program.group() != "sshpass":  # (sshpass -pSECRET works too)
            continue
        found = _FLAG_VALUE.match(text, value_pos)
        if not found:
            continue
        value = found.group(2)
        if value.startswith(("-", "$", *TEMPLATE_START)) or placeholder(value):
            continue
        out.append((found.start(2), found.end(2), PRIO["password"]))


# Cookie headers: a session's cookie is its credential. In ``Cookie: a=1; sid=x`` every pair is
# a cookie, in ``Set-Cookie: sid=x; Path=/`` the first; a value goes when its name says session,
# token or auth, or when it looks random (analytics' _ga=GA1.2.123.456 stays).
_COOKIE_HEADER = lazy(r"(set-)?cookie\\?[\"']?[ \t]*:[ \t]*\\?[\"']?")
_COOKIE_PAIR = lazy(r"[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}+)=([^;,\s\"'\\]{1,4096}+)")
_SESSION_NAME = lazy(r"(?i:sess|sid|token|auth|jwt|login|remember|csrf|xsrf)")


def cookies(scan: Scan, out: list[Span]) -> None:
    text, low = scan.text, scan.low
    done = -1
    for hit in scan.hits(b"cookie"):
        if hit < done:
            continue  # (inside pairs already read)
        header = _COOKIE_HEADER.match(low if low.__class__ is str else text.lower(), hit)
        if not header or (hit and text[hit - 1] in ALNUM):
            continue
        pos = done = header.end()
        while True:
            pair = _COOKIE_PAIR.match(text, pos)
            if not pair:
                break
            value = pair.group(2)
            done = pair.end()
            if (
                (
                    _SESSION_NAME.search(pair.group(1))
                    and len(value) >= 8
                    and not value.isdigit()
                    or len(value) >= 24
                    and looks_random(value)
                )
                and not placeholder(value)
                and not value.startswith(TEMPLATE_START)
            ):
                out.append((pair.start(2), pair.end(2), PRIO["generic-secret"]))
            if header.group(1) or not text.startswith(";", pair.end()):
                break  # Set-Cookie: one cookie, then attributes
            pos = pair.end() + 1


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


def piped_passwords(scan: Scan, out: list[Span]) -> None:
    text, low = scan.text, scan.low
    lines = set()  # (the lines where a reader is named)
    for needle in ("stdin", "chpasswd", " -s"):
        lit = needle if low.__class__ is str else needle.encode()
        pos = low.find(lit)
        while pos != -1:
            lines.add(text.rfind("\n", 0, pos) + 1)
            pos = low.find(lit, line_end(text, pos))
    for echo in (
        m for ls in sorted(lines) for m in _ECHO_PIPE.finditer(text, ls, line_end(text, ls))
    ):
        value = echo.group(2)
        if value.startswith(("$", *TEMPLATE_START)) or placeholder(value):
            continue
        if _READS_STDIN.match(echo.group(3)):
            value_start = echo.start(2)
            if "chpasswd" in echo.group(3) and ":" in value:
                value_start += value.index(":") + 1  # user:password
            out.append((value_start, echo.end(2), PRIO["password"]))


# A login call's password as its second argument: smtplib's, ftplib's and imaplib's
# ``server.login("me@corp.io", "pw")`` or ``server.login(user, "pw")``.
_LOGIN_CALL = lazy(
    r"login\([ \t]*(?:\\?[\"'][^\"'\n]{0,200}+\\?[\"']|[\w.\[\]]{1,100}+)[ \t]*,[ \t]*"
    r"(\\?[\"'])((?:[^\"'\n\\]|\\[^\"'\n]){1,200}+)\1[ \t]*\)"
)


def login_calls(scan: Scan, out: list[Span]) -> None:
    for hit in scan.hits("login("):
        call = _LOGIN_CALL.match(scan.text, hit)
        if call and not placeholder(call.group(2)) and not call.group(2).startswith(TEMPLATE_START):
            out.append((call.start(2), call.end(2), PRIO["password"]))


# MySQL/MariaDB: CREATE USER 'u'@'h' IDENTIFIED BY 'secret' (also WITH ... BY, BY PASSWORD).
_IDENTIFIED_BY = lazy(
    r"identified(?:[ \t]+with[ \t]+\w{1,40})?[ \t]+by[ \t]+"
    r"(?:password[ \t]+)?(\\?['\"])",
    re.I,
)


def sql_identified(scan: Scan, out: list[Span]) -> None:
    for hit in scan.hits(b"identified"):
        found = _IDENTIFIED_BY.match(scan.text, hit)
        span = quoted_span(scan.text, found.start(1)) if found else None
        if span:
            out.append((span[0], span[1], PRIO["password"]))


# "-p" (or another letter of _FLAG_PROGRAMS) as a flag of its own, not inside a word or
# "--password" (as password_flags wants it): the "-p" trigger stands for them all.
FLAG_LETTERS = "paPwk"  # (the groups of _FLAG_PROGRAMS)
_PASSWORD_FLAG = lazy(r"-(?<=(?<!\S)-)[%s]" % FLAG_LETTERS)
assert {name[0] for name in _FLAG_PROGRAMS.pattern.split("(?P<")[1:]} == set(FLAG_LETTERS)
