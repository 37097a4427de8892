"""The lora backend end to end on CPU: a tiny randomly initialised Llama and a byte-level BPE
tokenizer built here (no network) are the base; ``train grid_ctf --backend lora`` on real
offline runs builds the dataset from the training-jsonl records, fine-tunes, writes the
adapter, registers the checkpoint, trials it through the promotion gate (a random model
proposes nothing playable: rejected, not served) and serves it through ``trained:<id>``."""

from __future__ import annotations

import json
import os
from importlib.util import find_spec

import pytest

from lessonloop.scenarios import registry as scenarios
from lessonloop.store import open_store
from lessonloop.training import lora

# found, not imported: collecting the suite costs no torch import (CI installs the extra)
pytestmark = pytest.mark.skipif(
    any(find_spec(name) is None for name in ("torch", "transformers", "peft", "tokenizers")),
    reason="needs the lora extra: pip install 'lessonloop[lora]'",
)
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # read when the Hub client is imported: no network

WORDS = [
    '{"aggression": 0.42, "stealth": 0.88, "defense_radius": 6, "retreat_threshold": 0.3}',
    "No incumbent yet: 9 seeded random points, to screen.",
    "```json\n[\n {\n  }\n]\n```",
]


def _tiny_base(folder) -> None:
    """A 2-layer Llama with hidden size 32 and a 300-token byte-level BPE tokenizer."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.train_from_iterator(
        WORDS * 20,
        trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        bos_token_id=fast.eos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-llama")
    _tiny_base(folder)
    return folder


@pytest.fixture(autouse=True)
def one_thread(monkeypatch):
    """A model this small runs ten times faster on one thread than on cores other processes
    share (torch's threads wait for each other on every token)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a run's child process, if it starts one
    yield
    torch.set_num_threads(threads)


def _kept(cli, runs: int) -> None:
    """``runs`` fresh offline runs of grid_ctf: each keeps its first generation (a run that
    starts from the best known one rarely advances, and keeps nothing to learn from)."""
    for seed in range(1, runs + 1):
        done = cli("run", "grid_ctf", "-n", 2, "--seed", seed, "--fresh", "--json")
        assert done.code == 0, done.err


TRAIN = ("--backend", "lora", "--steps", 16, "--lr", 5e-3, "--rank", 4, "--max-length", 256)


def test_train_fine_tunes_registers_trials_and_serves_a_lora_checkpoint(home, cli, base):
    _kept(cli, 3)
    with open_store(home, readonly=True) as store:
        run_ids = [r["run_id"] for r in store.query("SELECT run_id FROM runs ORDER BY run_id")]
    exported = [
        json.loads(line)
        for run_id in run_ids
        for line in cli("export", run_id, "--format", "training-jsonl").out.splitlines()
    ]
    assert len(exported) >= 3  # the kept generations of 3 runs (one held out)

    done = cli("train", "grid_ctf", *TRAIN, "--base", base, "--json")
    assert done.code == 0, done.err
    result = done.json()
    checkpoint, metrics = result["checkpoint"], result["checkpoint"]["metrics"]
    assert result["dataset"]["records"] == len(exported) and result["dataset"]["runs"] == 3
    assert (checkpoint["backend"], checkpoint["base"], checkpoint["new"]) == (
        "lora",
        str(base.resolve()),
        True,
    )
    assert metrics["steps"] == 16 and metrics["heldout_records"] >= 1
    assert metrics["train_records"] + metrics["heldout_records"] == len(exported)
    assert metrics["train_loss_last"] < metrics["train_loss_first"]  # it learned something
    assert metrics["heldout_loss"] > 0 and metrics["heldout_loss_base"] > 0

    # the adapter: whole, registered with its digest, and it loads and generates
    ident = checkpoint["id"]
    shown = cli("models", "show", ident, "--json").json()
    params = shown["params"]
    folder = home / params["adapter"]
    assert folder == lora.adapter_path(home, ident)
    assert str(folder) == checkpoint["adapter"] == shown["adapter"]
    assert {"adapter_config.json", "adapter_model.safetensors"} <= {
        p.name for p in folder.iterdir()
    }
    assert lora.digest(folder) == params["sha256"] and lora.intact(home, shown)
    assert not [p for p in folder.parent.iterdir() if p.name.endswith(".tmp")]
    text = lora.Generator(shown, home).generate(exported[0]["prompt"], 7, 24, 1.0)
    assert isinstance(text, str) and text.strip()
    # a trial asks the model what a fresh run's first call asks (a record of the --fresh runs)
    fresh = lora.prompt_text(lora.fresh_request(scenarios.load("grid_ctf"), []))
    assert fresh in {record["prompt"] for record in exported}

    # its trial: a random model proposes nothing playable, loses every pair, is not served
    promotion = result["promotion"]
    assert (promotion["decision"], promotion["stage"], promotion["activated"]) == (
        "reject",
        "screen",
        False,
    )
    assert promotion["no_strategy"]["candidate"] == promotion["trials"] > 0
    [candidate] = cli("promotions", "--json").json()["candidates"]
    assert candidate["status"] != "active"
    assert (candidate["kind"], candidate["ref"]) == ("checkpoint", ident)
    assert [(d["action"], d["actor"]) for d in candidate["decisions"]] == [("reject", "gate")]
    listed = cli("models", "list", "--json").json()
    assert [c["id"] for c in listed["checkpoints"]] == [ident] and listed["active"] == []
    assert shown["active"] is False and shown["promotions"][0]["id"] == candidate["id"]
    assert f"{ident} scenario:grid_ctf lora" in cli("models", "list").out

    # the same data and settings: nothing new registered, nothing trained again
    again = cli("train", "grid_ctf", *TRAIN, "--base", base)
    assert again.code == 0, again.err
    assert f"checkpoint {ident} (lora on {base.resolve()}, already registered)" in again.out
    assert "not served" in again.out
    assert [c["id"] for c in cli("models", "list", "--json").json()["checkpoints"]] == [ident]
    assert lora.digest(folder) == params["sha256"]

    # served by hand through its route: the model answers the competitor's call, and an
    # answer without a playable strategy fails the attempt as any model's would
    served = cli("run", "grid_ctf", "-n", 1, "--provider", f"trained:{ident}", "--json")
    assert served.code != 0 and "no attempt produced a valid strategy" in served.error()["error"]
    with open_store(home, readonly=True) as store:
        run = store.query_one("SELECT run_id, provider FROM runs ORDER BY created_at DESC")
        answers = store.query(
            "SELECT output FROM role_outputs WHERE run_id = ? AND role = 'competitor'",
            (run["run_id"],),
        )
    assert run["provider"] == f"trained:{ident}" and answers
    assert not any("seeded random points" in a["output"] for a in answers)  # not the agent's

    # a changed adapter is refused before it is served, by hand too
    (folder / "adapter_config.json").write_text("{}")
    refused = cli("models", "activate", ident, "--json")
    assert refused.code == 1 and "missing or changed" in refused.error()["error"]
    assert cli("models", "list", "--json").json()["active"] == []


def test_a_base_that_does_not_load_is_one_line(home, cli, tmp_path):
    _kept(cli, 1)
    missing = tmp_path / "no-such-model"
    done = cli("train", "grid_ctf", "--backend", "lora", "--base", missing, "--json")
    assert done.code == 1 and done.out == ""
    assert f"cannot load the base model {str(missing)!r}" in done.error()["error"]
    assert cli("models", "list", "--json").json()["checkpoints"] == []


def test_the_missing_extra_is_one_line(home, cli, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "peft", None)  # import peft: ImportError
    done = cli("train", "grid_ctf", "--backend", "lora")
    assert done.code == 1 and "pip install 'lessonloop[lora]'" in done.err
    assert done.err.count("\n") == 1 and "Traceback" not in done.err


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("train", "task:fix-bug", "--backend", "lora"), 1, "no kept generations of task:fix-bug"),
        (("train", "grid_ctf", "--backend", "lora"), 1, "no kept generations of grid_ctf"),
        (("train", "grid_ctf", "--backend", "lora", "--steps", 0), 2, "--steps must be at least"),
        (("train", "grid_ctf", "--steps", 5), 2, "are for --backend lora"),
    ],
)
def test_lora_errors_are_one_line(cli, home, args, code, words):
    home.mkdir(parents=True, exist_ok=True)
    done = cli(*args, "--json")
    assert done.code == code and words in done.error()["error"] and done.out == ""


def test_a_task_checkpoint_is_registered_and_not_trialled_nor_served(home, cli, base, tmp_path):
    from tests.cli.test_task_commands import BAD_SQL, EXAMPLES, GOOD_SQL, fenced, script

    answers = script(tmp_path, "sql.json", competitor=[fenced(BAD_SQL), fenced(GOOD_SQL)])
    improved = cli("improve", EXAMPLES / "sql-top-customers.yaml", "--provider", answers)
    assert improved.code == 0, improved.err
    done = cli("train", "task:sql-top-customers", *TRAIN, "--base", base, "--json")
    assert done.code == 0, done.err
    result = done.json()
    assert result["dataset"]["records"] >= 1 and result["checkpoint"]["new"] is True
    assert result["checkpoint"]["scope"] == "task:sql-top-customers"
    assert result["checkpoint"]["metrics"]["trialled"] is False
    assert (result["promotion"]["decision"], result["promotion"]["activated"]) == (
        "not trialled",
        False,
    )
    assert result["active"] is None and cli("promotions", "--json").json()["candidates"] == []
    text = cli("train", "task:sql-top-customers", *TRAIN, "--base", base)
    assert "already registered" in text.out and "not trialled: " in text.out
