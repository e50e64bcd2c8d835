"""Shared fixtures: a fresh namespace and the seed's np.interp cell."""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import leapp_notebook as ln

SEED_INTERP_CELL = '''\
state = annotate.input_tensors("node", {"state": raw_state})
# np.interp has no torch equivalent, so this line is not recorded.
calibrated = np.interp(state, CALIB_IN, CALIB_OUT)
result = state * 0.1 + calibrated
annotate.output_tensors("node", {"result": result}, export_with="jit")
'''


@pytest.fixture
def seed_namespace():
    return {
        "np": np,
        "raw_state": np.array([0.1, 0.4, 0.7, 0.9], np.float32),
        "CALIB_IN": np.array([0.0, 0.5, 1.0]),
        "CALIB_OUT": np.array([0.0, 2.0, 10.0]),
    }


@pytest.fixture(autouse=True)
def _no_trace_left_running():
    yield
    from leapp_notebook.tracing import session

    assert session.ACTIVE is None, "a test left a trace running"


def trace(source, profile="leapp", **arrays):
    """Trace ``source`` with ``arrays`` as inputs and ``y`` as the output."""
    namespace = {"np": np, **arrays}
    return ln.trace_cell(source, namespace, inputs=list(arrays), outputs=["y"], profile=profile)


DOCS_IMAGES = Path(__file__).resolve().parent.parent / "docs" / "images"


def screenshot(target, directory, name, **options):
    """Screenshot a Playwright page or element into ``directory``; with LEAPP_UPDATE_SCREENSHOTS=1 also
    into docs/images, where the README and docs show it."""
    path = directory / name
    target.screenshot(path=str(path), **options)
    if os.environ.get("LEAPP_UPDATE_SCREENSHOTS") == "1":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_IMAGES / name)
    return path
