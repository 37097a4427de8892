"""A session's known secrets in the redactor: a value found once (under a key, a flag, a
header, or by its shape) is redacted wherever it stands bare while the session is active, from
the values themselves or from their salted digests alone."""

from __future__ import annotations

import json

import pytest

from lessonloop.safety import redact, redact_obj
from lessonloop.safety.redact import KnownSecrets, bare_worthy

SALT = bytes(range(16))
VALUE = "Zq7f0b-4e1b9c2d8a31"  # no rule finds it by its shape
LOG = f"2026-11-30 DEBUG pool: connecting as app with {VALUE} to db:5432"


def test_outside_a_session_a_bare_value_is_no_secret():
    assert redact(LOG) == LOG


def test_a_value_found_under_a_key_is_redacted_bare_afterwards():
    known = KnownSecrets(SALT)
    with known:
        assert redact(f"export DB_PASSWORD={VALUE}") == "export DB_PASSWORD=[REDACTED:password]"
        assert redact(LOG) == LOG.replace(VALUE, "[REDACTED:password]")
        assert redact(f"Always log in with {VALUE}.") == "Always log in with [REDACTED:password]."
    assert redact(LOG) == LOG, "only inside the session"
    assert len(known) == 1 and VALUE.encode() not in b"".join(d for _, _, d in known.new)


@pytest.mark.parametrize(
    "found",
    [
        {"env": {"API_TOKEN": VALUE}},  # a structure's key
        {"headers": {"Authorization": f"Bearer {VALUE}"}},  # a header
        f"mysql -u root -p{VALUE} app",  # a password flag
        f"deploy --token {VALUE}",  # a token flag
        f"postgres://app:{VALUE}@db/app",  # a URL's credentials
    ],
)
def test_every_kind_of_key_teaches_the_value(found):
    known = KnownSecrets(SALT)
    with known:
        redact_obj(found)
        assert VALUE not in redact(LOG)


def test_the_digests_alone_find_it_in_another_process():
    """What the capture hooks keep between processes: the salt and digests, no value."""
    first = KnownSecrets(SALT)
    with first:
        redact(f"PGPASSWORD={VALUE} psql")
    later = KnownSecrets(SALT, first.new)
    with later:
        assert redact(LOG) == LOG.replace(VALUE, "[REDACTED:password]")
        assert redact(json.dumps({"line": LOG})) == json.dumps({"line": LOG}).replace(
            VALUE, "[REDACTED:password]"
        )
        assert redact("see\\n" + VALUE + " end") == "see\\n[REDACTED:password] end"
    with KnownSecrets(bytes(16), first.new):  # another session's salt: unknown
        assert redact(LOG) == LOG


@pytest.mark.parametrize("digests_only", [False, True])
def test_a_value_inside_a_longer_word_is_not_cut(digests_only):
    first = KnownSecrets(SALT)
    with first:
        redact(f"PGPASSWORD={VALUE} psql")
    known = KnownSecrets(SALT, first.new) if digests_only else first
    with known:
        for text in (f"x{VALUE}", f"{VALUE}9", f"id_{VALUE}_2"):
            assert redact(text) == text
        for text, out in (
            (f"'{VALUE}'", "'[REDACTED:password]'"),
            (f"--pw={VALUE};", "--pw=[REDACTED:password];"),
            (f"[{VALUE}]", "[[REDACTED:password]]"),
        ):
            assert redact(text) == out


@pytest.mark.parametrize(
    "value, kept",
    [
        ("postgres", True),
        ("changeme", True),
        ("Password", True),
        ("letmeinnow", True),
        ("12345678", True),
        ("20261130", True),
        ("pw-12", True),
        ("two words", True),
        ("hunter22", False),
        ("pw-5f3a9c01", False),
        ("Zq7f0b-4e1b9c2d8a31", False),
        ("correcthorsebatterystaple", False),
        ("602214076000", False),
    ],
)
def test_short_values_words_and_numbers_are_not_looked_for_bare(value, kept):
    assert bare_worthy(value) is not kept
    known = KnownSecrets(SALT)
    with known:
        assert "[REDACTED:" in redact(f"DB_PASSWORD={value}")
        text = f"use {value} for the test database"
        assert (redact(text) == text) is kept


def test_a_private_key_is_redacted_whole_but_its_lines_are_not_looked_for():
    body = "MIIEowIBAAKCAQEA" + "q7Z" * 16
    known = KnownSecrets(SALT)
    with known:
        out = redact(f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----")
    assert out == "[REDACTED:private-key]" and len(known) == 0
