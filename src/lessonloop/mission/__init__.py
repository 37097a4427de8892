"""Verifier-driven missions (``lessonloop mission``): a goal, a copy of the user's folder, one
model-proposed change per step, and a verifier that alone says when the goal is met. One module
per job:

- ``workspace``: the copy, its digest, what the model is shown of it, the final diff;
- ``patch``: a pure-Python unified-diff applier that refuses paths outside its folder;
- ``replace``, ``merge``: search/replace blocks, and a fragment merged by its definitions;
- ``proposal``: the prompt, and the model's answer parsed into one change;
- ``focus``: the workspace lines the verifier's output points at, numbered;
- ``verdict``: whether a step made the verifier's outcome worse (then it is undone);
- ``checkpoint``: the workspace kept aside during a step, so a step is all or nothing;
- ``lessons``: what a finished mission teaches, through admission, and recalled;
- ``store``: missions and their steps in the database (migration 18);
- ``runner``: the steps, the verifier between them, the outcome, resume.
"""
