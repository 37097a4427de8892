"""The one promotion gate (issue 23): every candidate — a context bundle, a trained model —
earns its place against the active incumbent by matched trials before it is served.

- ``gate``: the staged trials (screen, confirm, holdout) and the decision, with the generation
  gate's statistics (``loop/gate.py``).
- ``bundles``: context bundles, addressed by their content.
- ``records``: candidates, trials, decisions and the active pointer per scope and role, with
  its rollback target.
"""
