"""The ``surrogate`` backend: a model of a match's score from the strategy played, and the
competitor that proposes the strategy it ranks best.

Features (``Encoder``): bounded numbers and integers scaled to [-1, 1], booleans 0/1, enums
one-hot, consts left out; then every square and pairwise product (a quadratic surface: a
score with one best region is what the built-in games and most plugins have). The fit is
closed-form ridge regression on standardized features (``RIDGE``), so the same data gives
the same parameters, bit for bit on one machine. Metrics come from a split by strategy (a
strategy's matches are all held out or all kept, so held-out R² is not flattered by the same
strategy's other seeds): about 1 in ``HOLDOUT_EVERY`` strategies, chosen by a hash of the
strategy. The registered parameters are then fitted on all the data.

The competitor (``propose``) ranks ``RANDOM_CANDIDATES`` uniform samples of the space and
``LOCAL_CANDIDATES`` perturbations of the best strategies seen (``anchors``) and returns the best by
the model, an anchor ranked by its measured mean score shrunk toward the model's guess
(``SHRINK``: a mean over a few matches that won their screening is mostly luck); deterministic
per seed.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import canonical
from ..scenarios import space
from .dataset import Dataset

BACKEND = "surrogate"
BASE = "quadratic-ridge"
RIDGE = 1.0
HOLDOUT_EVERY = 5
RANDOM_CANDIDATES = 1500
LOCAL_CANDIDATES = 1500
LOCAL_STEP = 0.08  # the perturbation step around an anchor, as a share of each range
ANCHORS = 5
ANCHOR_MIN_MATCHES = 3
MIN_EXAMPLES = 10
SHRINK = 50  # matches of prior: screened (so lucky) means over a few matches are not trusted


class NotEnoughData(ValueError):
    """Too few matches, or too few distinct strategies, to fit and measure a surrogate."""


class Encoder:
    """A strategy as the model's base features, from the scenario's strategy schema."""

    def __init__(self, schema: dict):
        self.schema = schema
        self.params = [p for p in space.parameters(schema) if p.kind != "const"]

    def base(self, strategy: dict) -> list[float]:
        row: list[float] = []
        for p in self.params:
            value = strategy.get(p.name)
            if p.kind in ("number", "integer"):
                span = p.high - p.low
                number = float(value) if isinstance(value, (int, float)) else p.low + span / 2
                row.append(2 * (number - p.low) / span - 1 if span else 0.0)
            elif p.kind == "boolean":
                row.append(1.0 if value is True else 0.0)
            else:
                row.extend(1.0 if value == choice else 0.0 for choice in p.choices)
        return row

    def features(self, strategies: Sequence[dict]) -> np.ndarray:
        """Base features with every square and pairwise product (one row per strategy)."""
        base = np.array([self.base(s) for s in strategies], dtype=float)
        if base.ndim == 1:
            base = base.reshape(len(strategies), 0)
        upper = np.triu_indices(base.shape[1])
        quadratic = base[:, upper[0]] * base[:, upper[1]]
        return np.hstack([base, quadratic])


@dataclass(frozen=True)
class Model:
    """Fitted parameters: feature means and scales, weights, intercept (JSON-able)."""

    mean: list[float]
    scale: list[float]
    weights: list[float]
    intercept: float

    def predict(self, features: np.ndarray) -> np.ndarray:
        standardized = (features - np.array(self.mean)) / np.array(self.scale)
        return np.asarray(standardized @ np.array(self.weights) + self.intercept)

    def to_json(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "scale": self.scale,
            "weights": self.weights,
            "intercept": self.intercept,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Model:
        return cls(
            [float(x) for x in value["mean"]],
            [float(x) for x in value["scale"]],
            [float(x) for x in value["weights"]],
            float(value["intercept"]),
        )


def fit(features: np.ndarray, scores: np.ndarray, ridge: float = RIDGE) -> Model:
    """Closed-form ridge on standardized features (a constant feature gets scale 1)."""
    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale < 1e-12] = 1.0
    x = (features - mean) / scale
    intercept = float(scores.mean())
    gram = x.T @ x + ridge * np.eye(x.shape[1])
    weights = np.linalg.solve(gram, x.T @ (scores - intercept))
    return Model(mean.tolist(), scale.tolist(), weights.tolist(), intercept)


def _held_out(strategy: dict) -> bool:
    digest = hashlib.sha256(canonical.dumps(strategy).encode()).digest()
    return digest[0] % HOLDOUT_EVERY == 0


def _r2_mae(truth: np.ndarray, predicted: np.ndarray) -> tuple[float, float]:
    residual = float(((truth - predicted) ** 2).sum())
    total = float(((truth - truth.mean()) ** 2).sum())
    r2 = 1 - residual / total if total > 0 else 0.0
    return r2, float(np.abs(truth - predicted).mean())


def train(dataset: Dataset, schema: dict) -> tuple[dict[str, Any], dict[str, Any]]:
    """Fit the surrogate on ``dataset``: (parameters to register, metrics)."""
    encoder = Encoder(schema)
    strategies = [e.strategy for e in dataset.examples]
    scores = np.array([e.score for e in dataset.examples], dtype=float)
    held = np.array([_held_out(s) for s in strategies], dtype=bool)
    if len(strategies) < MIN_EXAMPLES or held.all() or not held.any():
        raise NotEnoughData(
            f"{len(strategies)} usable matches of {dataset.scenario}: too few to fit and "
            "measure a surrogate"
        )
    features = encoder.features(strategies)
    split = fit(features[~held], scores[~held])
    r2, mae = _r2_mae(scores[held], split.predict(features[held]))
    baseline = np.full(int(held.sum()), scores[~held].mean())
    base_r2, base_mae = _r2_mae(scores[held], baseline)
    means_r2 = _means_r2(strategies, scores, held, split.predict(features))
    model = fit(features, scores)
    metrics = {
        "examples": len(strategies),
        "train_examples": int((~held).sum()),
        "heldout_examples": int(held.sum()),
        "heldout_r2": round(r2, 4),
        "heldout_mae": round(mae, 4),
        "mean_predictor_r2": round(base_r2, 4),
        "mean_predictor_mae": round(base_mae, 4),
        "heldout_strategy_means_r2": None if means_r2 is None else round(means_r2, 4),
        "features": int(features.shape[1]),
        "ridge": RIDGE,
    }
    best = anchors(dataset)
    parameters = {
        "model": model.to_json(),
        "anchors": [strategy for strategy, _, _ in best],
        "anchor_scores": [[round(mean, 6), count] for _, mean, count in best],
    }
    return parameters, metrics


def _means_r2(
    strategies: list[dict], scores: np.ndarray, held: np.ndarray, predicted: np.ndarray
) -> float | None:
    """R² on held-out strategies' mean scores (those played ``ANCHOR_MIN_MATCHES`` times or
    more): how well the model ranks strategies, with each match's own luck averaged out."""
    groups: dict[str, list[int]] = {}
    for position, strategy in enumerate(strategies):
        if held[position]:
            groups.setdefault(canonical.dumps(strategy), []).append(position)
    kept = [rows for rows in groups.values() if len(rows) >= ANCHOR_MIN_MATCHES]
    if len(kept) < 3:
        return None
    truth = np.array([scores[rows].mean() for rows in kept])
    guess = np.array([predicted[rows[0]] for rows in kept])
    return _r2_mae(truth, guess)[0]


def anchors(dataset: Dataset) -> list[tuple[dict, float, int]]:
    """The strategies seen with the best mean score shrunk toward the mean of all matches
    (``SHRINK`` matches' worth: three lucky matches do not outrank a thousand good ones),
    each with its raw mean and match count."""
    played: dict[str, list[float]] = {}
    by_key: dict[str, dict] = {}
    for example in dataset.examples:
        key = canonical.dumps(example.strategy)
        played.setdefault(key, []).append(example.score)
        by_key[key] = example.strategy
    overall = sum(e.score for e in dataset.examples) / max(len(dataset.examples), 1)

    def shrunk(key: str) -> float:
        scores = played[key]
        return (sum(scores) + SHRINK * overall) / (len(scores) + SHRINK)

    best = sorted(played, key=lambda k: (-shrunk(k), k))[:ANCHORS]
    return [(by_key[k], sum(played[k]) / len(played[k]), len(played[k])) for k in best]


def propose(
    parameters: dict[str, Any],
    schema: dict,
    seed: int,
    played: Iterable[dict] = (),
    around: dict | None = None,
) -> dict:
    """The strategy the surrogate ranks best among random candidates, candidates near its
    anchors and near ``around`` (a run's incumbent: model-based search around it), leaving
    out what the run has ``played`` already (the same strategy again teaches it nothing and
    the runner refuses an echo); when every candidate was played, the best of them."""
    rng = random.Random(f"surrogate:{seed}")
    encoder = Encoder(schema)
    model = Model.from_json(parameters["model"])
    candidates = [space.sample(schema, rng) for _ in range(RANDOM_CANDIDATES)]
    if around is not None:
        candidates += [
            space.perturb(around, schema, LOCAL_STEP, rng) for _ in range(LOCAL_CANDIDATES)
        ]
    seen = [a for a in parameters.get("anchors", []) if isinstance(a, dict)]
    if seen:
        candidates += [
            space.perturb(seen[i % len(seen)], schema, LOCAL_STEP, rng)
            for i in range(LOCAL_CANDIDATES)
        ]
        candidates += seen
    predicted = model.predict(encoder.features(candidates))
    measured = parameters.get("anchor_scores") or []
    if seen and len(measured) == len(seen):  # what was measured outweighs the model's guess
        for offset, (mean, count) in enumerate(measured):
            position = len(candidates) - len(seen) + offset
            guess = float(predicted[position])
            predicted[position] = (count * float(mean) + SHRINK * guess) / (count + SHRINK)
    done = {canonical.dumps(strategy) for strategy in played}
    fresh = [i for i, c in enumerate(candidates) if canonical.dumps(c) not in done]
    if not fresh:
        return candidates[int(np.argmax(predicted))]
    return candidates[max(fresh, key=lambda i: float(predicted[i]))]
