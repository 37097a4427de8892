"""Benchmark-gated evolution of a source file (``lessonloop evolve``): a baseline, candidates
with receipts, correctness against a reference in the sandbox, interleaved timing pairs, and a
champion only when faster at a stated confidence. One module per job:

- ``params``: the parameters a source declares, and a candidate's source with them substituted;
- ``spec``: the evolve spec (YAML), validated field by field;
- ``harness``: what runs in the sandbox (the correctness check, the timing pairs);
- ``measure``: the paired statistic and the noise summary;
- ``proposer``: the offline proposer (optuna's TPE over the declared parameters);
- ``store``: runs, candidates (with receipts) and pairs in the database;
- ``campaign``: the generations, the champion, resume and the artifacts.
"""
