"""Every test runs compiled steps' guards checked in full (runtime/compile/guards.py's
VERIFY): a guard that skips its checks of modules and tensors because nothing counted a
change (runtime/changes.py) raises if those checks fail. Set in the environment, so that the
programs the tests run as scripts check too."""

import os

os.environ["GRADGEN_VERIFY_GUARDS"] = "1"
