#!/usr/bin/env bash
# Install autocontext 0.18.0 into bench/.peer (a separate venv) for side-by-side benchmarks.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .peer
.peer/bin/pip install --quiet 'autocontext==0.18.0'
echo "installed: $(.peer/bin/autoctx --version 2>/dev/null || echo autocontext 0.18.0)"
