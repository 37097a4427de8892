"""The one compact JSON form lessonloop stores, compares and hashes.

Same text as ``canonical.dumps(value)``; one shared encoder skips building a new
one per call, which matters where prompts and rows serialize hundreds of small values.
"""

from __future__ import annotations

import json

dumps = json.JSONEncoder(sort_keys=True).encode
