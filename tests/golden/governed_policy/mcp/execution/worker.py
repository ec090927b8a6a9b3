"""Worker template entry of a governed bundle for module ``governed_policy`` (svcc 0.1.0).

Started by the server with the policy's clean environment; never run it by hand.
"""

import importlib
import sys
from pathlib import Path

BUNDLE = Path(__file__).resolve().parent.parent
sys.path[:1] = [str(BUNDLE)]  # the bundle, not execution/, is where the runtime lives
importlib.import_module("svc_runtime.governed.template").main(BUNDLE, int(sys.argv[1]))
