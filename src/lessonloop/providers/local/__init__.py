"""The offline agent: a real player for every role, with no model and no network.

It reads the structured input of each request (``Request.state``: the facts a model gets in
words) and answers as the role asks. One module per concept:

- ``agent``: the provider (one handler per role) with the translator, analyst, coach and
  curator, which are short.
- ``competitor``: the competitor's proposals within a run (a batch to screen, a race of
  screened candidates, a local step) from the run's history.
- ``optimizers``: the two libraries behind the batch, Optuna's TPE and ``cmaes``'s CMA-ES,
  each kept between calls and rebuilt from the history (resume == uninterrupted).
- ``steps``: local moves around the incumbent (step size, mirrors, boolean/enum sweeps,
  dead ends).
- ``prior``: the playbook as a prior, both ways: reading ``target:``/``direction:`` tags
  into guidance, and the coach's edits that write them.
"""

from .agent import LocalProvider, provider_for

__all__ = ["LocalProvider", "provider_for"]
