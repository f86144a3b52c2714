"""Every test runs compiled steps' guards checked in full (runtime/compile/guards.py's
VERIFY): a guard that skips its checks of modules and tensors because nothing counted a
change (runtime/changes.py) raises if those checks fail. Set in the environment, so that the
programs the tests run as scripts check too."""

import os
import sys
from pathlib import Path

import pytest

os.environ["GRADGEN_VERIFY_GUARDS"] = "1"


def pytest_addoption(parser):  # noqa: ANN001, ANN201 (pytest's hook)
    parser.addoption("--quick", action="store_true",
                     help="the development subset: the first case of every test (one "
                          "parameter set each), no test marked slow")


SLOW = {line.strip() for line in
        (Path(__file__).parent / "slow_tests.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")}


def pytest_collection_modifyitems(config, items):  # noqa: ANN001, ANN201 (pytest's hook)
    """The tests tests/slow_tests.txt names are marked slow. Under --quick, keep one case of
    each test function and leave out the slow ones."""
    for item in items:
        if item.nodeid.split("[", 1)[0] in SLOW:
            item.add_marker(pytest.mark.slow)
    if not config.getoption("--quick"):
        return
    seen: set[str] = set()
    kept, dropped = [], []
    for item in items:
        function = item.nodeid.split("[", 1)[0]
        if function in seen or item.get_closest_marker("slow"):
            dropped.append(item)
        else:
            seen.add(function)
            kept.append(item)
    config.hook.pytest_deselected(items=dropped)
    items[:] = kept


@pytest.fixture(autouse=True)
def _default_distribution_validation():  # noqa: ANN202 (a fixture)
    """torch.compile turns off distributions' default argument validation for the rest of
    the process, and gradgen's compile does as torch's: each test starts from the default,
    whatever a test before it compiled (the default is __debug__, as in both libraries)."""
    yield
    for name in ("torch.distributions.distribution", "runtime.distributions.distribution"):
        module = sys.modules.get(name)
        if module is not None:
            module.Distribution.set_default_validate_args(__debug__)
