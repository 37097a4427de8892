"""The project's one secret redactor.

Where things live: ``families`` (every family, most specific first, and the token rules that
recognise one by its shape: a new token family is one entry there), ``shaped`` (secrets with a
shape or syntax of their own: the token rules' scan, key pairs, private-key blocks, URLs,
headers, flags, cookies, piped passwords), ``named`` (secrets under secret-looking names),
``entropy`` (random-looking tokens), ``lexicon`` and ``text`` (the words and the text helpers
they judge by), ``prefilter`` (which detectors can find anything in a text) and ``engine`` (the
passes, the public functions and a session's known secrets).

``redact(text)`` replaces every secret it recognises with ``[REDACTED:<family>]``. It is the
first step of admission (``knowledge/admission.py``) and runs before anything is persisted, always
*before* truncation, so a secret cut short later can never leave a readable prefix behind.

Families: provider and vendor tokens by their shape (Anthropic, OpenAI, GitHub, GitLab, Slack,
Stripe, SendGrid, Mailgun, Twilio, npm, PyPI, Hugging Face, Google, AWS, Alibaba), webhooks
(Slack, Discord, Teams), Sentry DSNs, JWTs, private-key blocks (PEM, OpenSSH, EC, PGP; also
inside one JSON line; in base64 as Kubernetes stores them), PuTTY key files (.ppk, whole),
credentials in URLs, Authorization/Bearer/Basic/curl -u credentials, password flags (mysql -p,
mongosh -p, redis-cli -a), signed URLs, secrets under secret-looking names (``password: x``,
``"api_key": "x"``, ``--token x``, ``api_key   <random>``, SQL ``PASSWORD 'x'``), a secret's name
given as a field's or an argument's value with its value next to it (``{"name": "DB_PASSWORD",
"value": "x"}``, ``os.environ.get("DB_PASSWORD", "x")``, ``process.env.API_KEY || "x"``) and a
high-entropy fallback: a random-looking token assigned under any other name (see entropy.looks_random
for what counts, and what never does: ids, digests, UUIDs, paths, code). A token right after an
escape (``\\n``, ``\\u003d``, ``%3D``) is a token, not the tail of a word.

How it stays fast and linear:
- every rule is anchored on a literal ("needle") or a regex that starts with one; a prefilter
  finds which needles occur at all (about 30 C-speed searches of the text, each from its
  needles' rarest character; with ahocorasick-rs installed, two Aho-Corasick passes find the
  literals and only the patterns whose literals occur are searched) and the full pass skips
  every rule whose needles do not, so ordinary text costs little and text without any needle
  is returned as it is; lines seen again (prompts repeat theirs) cost a dictionary lookup;
- a regex is only ``match``-ed at needle positions; case-insensitive needles are searched in a
  lowered copy of the text whose positions map 1:1 onto the text;
- every repetition is bounded or possessive, and rules whose regions can be long (PEM blocks,
  key names, values) skip hits inside a region already examined, so no input is quadratic.

Overlapping findings are merged into one span named after the most specific family (the order
of ``FAMILIES``). A pass is repeated until nothing changes (normally one extra pass, over the
lines that hold new markers only), so ``redact(redact(x)) == redact(x)`` holds even when one
secret hid the boundary of the next.

Within one session a secret found once is a secret everywhere: inside ``with known:`` (a
session's ``KnownSecrets``) ``redact`` remembers the values it replaced and replaces their bare
occurrences too (``DB_PASSWORD=x`` in one command, ``x`` alone in a later log line); a session
keeps only salted digests of them between processes (see ``KnownSecrets``).

Generic ``name = value`` secrets keep the name and lose the value. Values that are clearly not
secrets are left: empty, null/None/true/false, placeholders (``<your-token>``, ``${VAR}``,
``***``), code (``get_password()``, ``os.environ["X"]``, ``settings.token``, a variable passed
on as ``token=token``), type annotations (``password: str``) and markers already in place.
Transcripts are JSON lines, so a value also ends at a ``\\n``, ``\\t`` or ``\\"`` escape and
at the quote closing its JSON string: the other lines of the string survive and the JSON line
stays valid.
"""

from __future__ import annotations

from .engine import KnownSecrets, bare_worthy, find_secrets, redact, redact_obj
from .families import FAMILIES, MARKER_RE, marker

__all__ = [
    "FAMILIES",
    "MARKER_RE",
    "KnownSecrets",
    "bare_worthy",
    "find_secrets",
    "marker",
    "redact",
    "redact_obj",
]
