"""Each token family of the redactor's table (safety/redact/families.py) with its true and false
positives, and a new family added as one entry of the table.

Fake secrets are assembled from pieces at run time so this file holds no secret-shaped string.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest

from lessonloop.safety.redact import FAMILIES, marker, redact
from lessonloop.safety.redact.families import TABLE

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
SRC = Path(__file__).resolve().parents[2] / "src"


def token(seed: int, n: int, alphabet: str = ALNUM) -> str:
    """A random body with a digit and both cases (as real keys have)."""
    rng = random.Random(seed)
    return "Q7" + "".join(rng.choice(alphabet) for _ in range(n - 3)) + "x"


def hexes(seed: int, n: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(HEX) for _ in range(n))


def pem_in_base64() -> str:
    block = (
        "-----BEGIN " + "PRIVATE KEY-----\n" + token(9, 64) + "\n-----END " + "PRIVATE KEY-----\n"
    )
    return base64.b64encode(block.encode()).decode()


# family: (texts whose token is that family's secret (the token follows "TOKEN "), texts left as
# they are). A family of the table with token rules must have an entry here.
EXAMPLES: dict[str, tuple[list[str], list[str]]] = {
    "private-key": (
        [pem_in_base64()],
        [base64.b64encode(b"-----BEGIN CERTIFICATE-----\n" + b"A" * 60).decode()],
    ),
    "anthropic-api-key": (["sk-" + "ant-api03-" + token(1, 40)], ["sk-learn-compat-layer"]),
    "openai-api-key": (
        ["sk-" + "proj-" + token(2, 40), "sk-" + token(3, 48)],
        ["pip install sk-video-tools"],
    ),
    "github-token": (
        ["gh" + "p_" + token(4, 36), "github" + "_pat_" + token(5, 60)],
        ["the ghp_ prefix marks a classic token", "ghp_XXXXXXXXXXXXXXXXXXXXXX"],
    ),
    "gitlab-token": (
        ["gl" + "pat-" + token(6, 20), "GR1348" + "941" + token(7, 24)],
        ["glpat-xxxx is a placeholder", "glpat-..."],
    ),
    "slack-webhook": (
        ["https://hooks." + "slack.com/services/T000/B000/" + token(8, 24)],
        ["https://hooks.slack.com/ is where webhooks live"],
    ),
    "discord-webhook": (
        ["https://discord" + ".com/api/webhooks/123456789/" + token(9, 60)],
        ["join us on discord.com/invite/abc"],
    ),
    "slack-token": (
        ["xox" + "b-1234-" + token(10, 24), "xap" + "p-1-" + token(11, 24)],
        ["xoxb-... is a bot token"],
    ),
    "stripe-key": (
        [
            "sk" + "_live_" + token(12, 24),
            "rk" + "_test_" + token(13, 24),
            "whs" + "ec_" + token(14, 32),
        ],
        ["pk_live_ keys are publishable", "desk_live_session"],
    ),
    "sendgrid-key": (["S" + "G." + token(15, 22) + "." + token(16, 43)], ["see SG.com for more"]),
    "mailgun-key": (["ke" + "y-" + hexes(17, 32)], ["pubkey-" + hexes(18, 32)]),
    "npm-token": (["np" + "m_" + token(19, 36)], ["npm_install_cache_directory_path"]),
    "pypi-token": (["pypi" + "-AgE" + token(20, 60)], ["pypi-AgE is how tokens start"]),
    "huggingface-token": (
        ["h" + "f_" + token(21, 34), "api" + "_org_" + token(22, 34)],
        ["hf_hub_download_function_name"],
    ),
    "google-api-key": (["AI" + "za" + token(23, 35)], ["AIza is Google's prefix"]),
    "google-oauth": (
        ["GOCS" + "PX-" + token(24, 28), "ya" + "29." + token(25, 60)],
        ["GOCSPX- starts a client secret"],
    ),
    "aws-access-key": (["AK" + "IA" + "Q7ZX3N4KD8WEMR2P"], ["AKIA is the prefix of key ids"]),
    "jwt": (
        ["ey" + "J" + token(26, 20) + ".ey" + "J" + token(27, 30) + "." + token(28, 43)],
        ["eyJ starts base64 JSON"],
    ),
    "generic-secret": (
        [
            "dckr" + "_pat_" + token(29, 27),
            "pp" + "lx-" + token(30, 48),
            "LT" + "AI" + token(31, 20),
            "xa" + "i-" + token(32, 80),
        ],
        ["LTAIxxxxxxxxxxxxxxxxx", "pplx-models-overview"],
    ),
}
TOKEN_FAMILIES = {name for name, rules in TABLE if rules} | {"openai-api-key"}


def test_every_token_family_of_the_table_has_true_and_false_positives_here():
    assert set(EXAMPLES) == TOKEN_FAMILIES
    assert all(secrets and others for secrets, others in EXAMPLES.values())


@pytest.mark.parametrize("family", sorted(EXAMPLES))
def test_a_family_finds_its_secrets_and_leaves_the_rest(family):
    secrets, others = EXAMPLES[family]
    for secret in secrets:
        text = f"TOKEN {secret} and more"
        assert redact(text) == f"TOKEN {marker(family)} and more", secret
    for other in others:
        assert redact(other) == other, other


def test_the_table_orders_the_families():
    assert FAMILIES[0] == "private-key" and FAMILIES[-1] == "generic-secret"
    assert len(FAMILIES) == len(set(FAMILIES)) == len(TABLE)


# One new family: the entry below, added to the table and nowhere else.
NEW_ENTRY = """    family("acme-token", TokenRule("acme_", lazy(r"acme_(?P<body>[A-Za-z0-9]{32,64}+)"),
                                   left=ALNUM, judge=_mixed_body)),
"""
PROBE = """
import json, sys
if sys.argv[1] == "standard":
    sys.modules["ahocorasick_rs"] = None     # (the capture hooks' path)
from lessonloop.safety.redact import FAMILIES, find_secrets, redact
texts = json.loads(sys.stdin.read())
print(json.dumps({"families": FAMILIES, "redacted": [redact(t) for t in texts],
                  "found": [find_secrets(t) for t in texts]}))
"""


@pytest.mark.parametrize("path", ["standard", "accelerated"])
def test_a_new_family_is_one_entry_of_the_table(tmp_path, path):
    tree = tmp_path / "src"
    shutil.copytree(
        SRC / "lessonloop", tree / "lessonloop", ignore=shutil.ignore_patterns("__pycache__")
    )
    table = tree / "lessonloop" / "safety" / "redact" / "families.py"
    source = table.read_text()
    anchor = '    family(\n        "generic-secret",'
    assert source.count(anchor) == 1
    table.write_text(source.replace(anchor, NEW_ENTRY + anchor))

    secret = "ac" + "me_" + token(40, 40)
    texts = [
        f"deploy with {secret} now",  # (no other trigger in the text)
        f'{{"key": "{secret}"}}',
        "acme_widgets_are_great",
        "acme_" + "x" * 40,  # a word; a placeholder
        "password = hunter2xyz",
    ]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, path],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tree)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["families"] == [*FAMILIES[:-1], "acme-token", "generic-secret"]
    assert result["redacted"] == [
        "deploy with [REDACTED:acme-token] now",
        '{"key": "[REDACTED:acme-token]"}',
        texts[2],
        texts[3],
        redact(texts[4]),
    ]
    assert result["found"][0] == [["acme-token", 12, 12 + len(secret)]]
