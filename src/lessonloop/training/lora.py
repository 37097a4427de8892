"""The ``lora`` backend: a LoRA adapter fine-tuned on the prompt/completion records of kept
generations (``completions.py``, what ``export --format training-jsonl`` writes), and the
local inference that serves it as the route ``trained:<id>`` and proposes in its trials.

torch, transformers and peft are the optional extra ``lessonloop[lora]``: imported inside the
functions here, never when lessonloop is imported. The base is any causal language model
``AutoModelForCausalLM`` loads (a local directory or a Hub id); training runs on a GPU when
torch sees one, otherwise on the CPU. The loss counts the completion's tokens only; a prompt
longer than the window is cut from its start (its end holds the answer template and the
state). The adapter is written under ``<home>/models/<checkpoint id>/`` through a temporary
directory renamed into place, and its files' sha256 is registered with the checkpoint, so a
changed adapter is refused rather than served.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import statistics
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import LessonloopError, NotFoundError, UsageError

BACKEND = "lora"
DEFAULT_BASE = "Qwen/Qwen2.5-0.5B-Instruct"  # small, instruction-tuned, Apache-2.0
EXTRA_HINT = (
    "the lora backend needs torch, transformers and peft: pip install 'lessonloop[lora]' "
    "(see README: Training a LoRA adapter)"
)
MODELS_DIR = "models"  # under the home: one adapter folder per checkpoint
HELDOUT_EVERY = 5  # every fifth record is held out (the last one when there are 2 to 4)
LOSS_WINDOW = 5  # first/last train loss: the mean of this many steps
MAX_NEW_TOKENS = 512  # a served answer's cap, whatever the request asks


@dataclass(frozen=True)
class Options:
    """The fine-tune's settings; they and the data name the checkpoint (same data, same
    settings: the same checkpoint, not trained again)."""

    steps: int = 60
    learning_rate: float = 2e-4
    rank: int = 8
    max_length: int = 1024  # tokens of prompt + completion seen per example
    seed: int = 0

    def check(self) -> Options:
        for name, low in (("steps", 1), ("rank", 1), ("max_length", 64)):
            if getattr(self, name) < low:
                raise UsageError(f"must be at least {low}", field=name)
        if not 0 < self.learning_rate < 1:
            raise UsageError("must be between 0 and 1", field="learning_rate")
        return self

    def identity(self) -> dict[str, Any]:
        return asdict(self)


def require() -> tuple[Any, Any, Any]:
    """(torch, transformers, peft), or the one-line install hint."""
    try:
        import peft
        import torch
        import transformers
    except ImportError:
        raise LessonloopError(EXTRA_HINT) from None
    # loading bars, advice and deprecation notices would bury the one result on the terminal;
    # a Hub download keeps its progress bar (on stderr): it can take minutes
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    from huggingface_hub.utils import enable_progress_bars

    enable_progress_bars()
    warnings.filterwarnings("ignore", category=FutureWarning, module="(transformers|peft)")
    return torch, transformers, peft


def resolve_base(base: str) -> str:
    """A local directory as its absolute path (what the registry records), else the Hub id."""
    text = base.strip()
    if not text:
        raise UsageError("must name a model: a local directory or a Hub id", field="base")
    local = Path(text).expanduser()
    return str(local.resolve()) if local.exists() else text


def _device(torch: Any) -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _load_base(base: str) -> tuple[Any, Any]:
    """(tokenizer, model) of ``base`` in float32, or a one-line error saying what base is."""
    torch, transformers, _ = require()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(base)
        model = transformers.AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    except Exception as exc:  # a missing folder, no network, an unknown architecture ...
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise NotFoundError(
            f"cannot load the base model {base!r} ({first[:200]}): --base takes a local "
            "directory holding a causal language model and its tokenizer, or a Hub id "
            "(downloaded once, needs the network)"
        ) from None
    return tokenizer, model


def _prompt_ids(tokenizer: Any, prompt: str) -> list[int]:
    """The prompt as the model reads it: through its chat template when it has one."""
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])
    return list(tokenizer(prompt + "\n\n")["input_ids"])


def _example(
    tokenizer: Any, prompt: str, completion: str, max_length: int
) -> tuple[list[int], list[int]]:
    """(input ids, labels): the completion's tokens learned, the prompt's masked (-100); the
    prompt cut from its start to fit ``max_length``."""
    answer = list(tokenizer(completion, add_special_tokens=False)["input_ids"])
    if tokenizer.eos_token_id is not None:
        answer.append(tokenizer.eos_token_id)
    answer = answer[: max_length * 3 // 4]
    question = _prompt_ids(tokenizer, prompt)[-(max_length - len(answer)) :]
    return question + answer, [-100] * len(question) + answer


def _split(records: list[dict[str, Any]]) -> tuple[list[int], list[int]]:
    """(train, held-out) record indexes."""
    count = len(records)
    if count < 2:
        return list(range(count)), []
    if count < HELDOUT_EVERY:
        return list(range(count - 1)), [count - 1]
    held = [i for i in range(count) if i % HELDOUT_EVERY == HELDOUT_EVERY - 1]
    return [i for i in range(count) if i not in held], held


def fit(records: list[dict[str, Any]], base: str, options: Options, target: Path) -> dict[str, Any]:
    """Fine-tune a LoRA adapter of ``base`` on ``records`` and write it to ``target`` (through
    a temporary sibling renamed into place); returns the metrics."""
    torch, _, peft = require()
    started = time.perf_counter()
    torch.manual_seed(options.seed)
    tokenizer, model = _load_base(base)
    device = _device(torch)
    config = peft.LoraConfig(
        r=options.rank,
        lora_alpha=2 * options.rank,
        lora_dropout=0.0,  # a few steps on few records: no dropout, and a repeatable fit
        target_modules="all-linear",  # every linear layer but the output head, any architecture
        task_type="CAUSAL_LM",
    )
    try:
        model = peft.get_peft_model(model, config)
    except ValueError as exc:
        raise UsageError(f"cannot put a LoRA adapter on {base!r}: {exc}", field="base") from None
    model.to(device)
    examples = [
        _example(tokenizer, r["prompt"], r["completion"], options.max_length) for r in records
    ]
    train_ids, held_ids = _split(records)

    def loss_of(index: int) -> Any:
        ids, labels = examples[index]
        return model(
            input_ids=torch.tensor([ids], device=device),
            labels=torch.tensor([labels], device=device),
        ).loss

    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=options.learning_rate
    )
    order = list(train_ids)
    shuffle = random.Random(options.seed)
    losses: list[float] = []
    model.train()
    for step in range(options.steps):
        if step % len(order) == 0:
            shuffle.shuffle(order)
        loss = loss_of(order[step % len(order)])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(float(loss.detach()))
    model.eval()
    with torch.no_grad():
        held = [float(loss_of(i)) for i in held_ids]
        with model.disable_adapter():
            held_base = [float(loss_of(i)) for i in held_ids]
    _write_atomic(target, model.save_pretrained)
    return {
        "records": len(records),
        "train_records": len(train_ids),
        "heldout_records": len(held_ids),
        "steps": options.steps,
        "train_loss_first": round(statistics.fmean(losses[:LOSS_WINDOW]), 6),
        "train_loss_last": round(statistics.fmean(losses[-LOSS_WINDOW:]), 6),
        "heldout_loss": round(statistics.fmean(held), 6) if held else None,
        "heldout_loss_base": round(statistics.fmean(held_base), 6) if held_base else None,
        "trainable_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "device": device,
        "seconds": round(time.perf_counter() - started, 3),
    }


def _write_atomic(target: Path, write: Callable[[str], None]) -> None:
    """``write(folder)`` into a temporary sibling of ``target``, then rename it into place:
    a kill leaves either no adapter or a whole one (a leftover temporary folder is ignored)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.parent / f".{target.name}.{os.getpid()}.tmp"
    shutil.rmtree(temporary, ignore_errors=True)
    write(str(temporary))
    if target.exists():  # an adapter of this checkpoint whose files do not match: replaced
        shutil.rmtree(target)
    os.replace(temporary, target)


def adapter_path(home: Path, ident: str) -> Path:
    return home / MODELS_DIR / ident


def digest(folder: Path) -> str:
    """sha256 over the adapter's files (relative names and bytes, in name order)."""
    hashed = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        hashed.update(path.relative_to(folder).as_posix().encode() + b"\0")
        hashed.update(hashlib.sha256(path.read_bytes()).digest())
    return hashed.hexdigest()


def intact(home: Path, checkpoint: dict[str, Any]) -> bool:
    """Whether the checkpoint's adapter is on disk with the files it was registered with."""
    folder = home / checkpoint["params"]["adapter"]
    return folder.is_dir() and digest(folder) == checkpoint["params"]["sha256"]


class Generator:
    """A checkpoint's base with its adapter loaded, answering prompts (one per route)."""

    def __init__(self, checkpoint: dict[str, Any], home: Path):
        torch, _, peft = require()
        params = checkpoint["params"]
        if not intact(home, checkpoint):
            raise NotFoundError(
                f"the adapter of {checkpoint['id']} is missing or changed under "
                f"{home / params['adapter']}: train it again (`lessonloop train ... --backend "
                "lora`)"
            )
        self.torch = torch
        self.max_length = int(params["options"]["max_length"])
        self.tokenizer, model = _load_base(checkpoint["base"])
        self.device = _device(torch)
        self.model = peft.PeftModel.from_pretrained(model, str(home / params["adapter"]))
        self.model.to(self.device).eval()

    def generate(self, prompt: str, seed: int, max_new_tokens: int, temperature: float) -> str:
        """The model's answer to ``prompt``, sampled under ``seed`` (greedy at temperature 0)."""
        torch = self.torch
        new = max(1, min(max_new_tokens, MAX_NEW_TOKENS, self.max_length // 2))
        ids = _prompt_ids(self.tokenizer, prompt)[-(self.max_length - new) :]
        torch.manual_seed(seed % (2**63 - 1))
        sampled = temperature > 0
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id or 0
        with torch.no_grad():
            out = self.model.generate(
                input_ids=torch.tensor([ids], device=self.device),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long, device=self.device),
                max_new_tokens=new,
                do_sample=sampled,
                temperature=temperature if sampled else None,
                top_p=0.95 if sampled else None,
                top_k=None,
                pad_token_id=pad,
            )
        return str(self.tokenizer.decode(out[0][len(ids) :], skip_special_tokens=True))


def prompt_text(request: Any) -> str:
    """A competitor request as the runner stores the prompt of a state-reading agent (what
    the records hold, so the model is asked as it was trained): system, user and follow-up
    messages, then the state block (``loop/answers.Answers._call``)."""
    from .. import state_block

    parts = [request.system, *(m.get("content", "") for m in request.messages)]
    shown = "\n\n".join(parts)
    return f"{shown}\n\n{state_block.render(request.state)}" if request.state else shown


def fresh_request(scenario: Any, entries: Iterable[Any]) -> Any:
    """The competitor's request of a fresh run's first attempt under the scope's served
    knowledge (``entries``): what a trial asks the model on each seed."""
    from ..knowledge.entries import ranked
    from ..loop import prompts
    from ..loop.context import Context
    from ..providers.base import Request
    from ..providers.local.trial import DEAD_ENDS_IN_CONTEXT, HINTS_IN_CONTEXT

    served = list(entries)
    ctx = Context(
        scenario=scenario.name,
        description=scenario.description,
        strategy_schema=scenario.strategy_schema,
        generation=1,
        attempt=0,
        incumbent=None,
        trajectory=[],
        playbook=ranked([e for e in served if e.kind == "bullet"]),
        hints=ranked([e for e in served if e.kind == "hint"])[:HINTS_IN_CONTEXT],
        dead_ends=[e for e in served if e.kind == "dead_end"][-DEAD_ENDS_IN_CONTEXT:],
    )
    prompt = prompts.competitor(ctx)
    return Request(
        role="competitor",
        system=prompt.system,
        messages=[{"role": "user", "content": prompt.user}],
        temperature=prompt.temperature,
        max_tokens=prompt.max_tokens,
        state={**prompt.state, "history": []},  # a fresh run's (runner.SearchContext)
    )


def strategy_in(text: str, scenario: Any) -> dict | None:
    """The first strategy in an answer the scenario accepts (numbers just past a bound set to
    it, as the runner reads answers), or None: an answer without one."""
    from ..json_blocks import json_objects
    from ..loop.answers import clamp_to_bounds
    from ..scenarios import code

    for candidate in json_objects(text):
        candidate, _ = clamp_to_bounds(candidate, scenario.strategy_schema)
        if not code.problems(scenario, candidate):
            return candidate
    return None


def proposer(
    checkpoint: dict[str, Any], scenario: Any, entries: Iterable[Any], home: Path
) -> Callable[[int], dict | None]:
    """What the checkpoint's model proposes for a trial seed (None: nothing playable); the
    model is loaded on the first proposal."""
    request = fresh_request(scenario, entries)
    prompt = prompt_text(request)
    loaded: list[Generator] = []

    def propose(seed: int) -> dict | None:
        if not loaded:
            loaded.append(Generator(checkpoint, home))
        text = loaded[0].generate(prompt, seed, request.max_tokens, request.temperature)
        return strategy_in(text, scenario)

    return propose
