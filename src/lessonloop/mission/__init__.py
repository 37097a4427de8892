"""Verifier-driven missions (``lessonloop mission``): a goal, a copy of the user's folder, one
model-proposed change per step, and a verifier that alone says when the goal is met. One module
per job:

- ``workspace``: the copy, its digest, what the model is shown of it, the final diff;
- ``patch``: a pure-Python unified-diff applier that refuses paths outside its folder;
- ``proposal``: the prompt, and the model's answer parsed into one change;
- ``store``: missions and their steps in the database (migration 18);
- ``runner``: the steps, the verifier between them, the outcome, resume.
"""
