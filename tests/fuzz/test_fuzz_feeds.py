"""Fuzz target: `Session.run` on hostile feeds, on the numpy and the C backend (harness.py states the property).

Feeds are anything: None, numbers, strings, lists, a dict whose keys are the model's input names, other names or
not strings, and whose values are arrays of any dtype (complex, strings, objects, float16 ...) and shape, strided
views, nested lists, scalars, None. Those that fit (a float32 array of the input's shape, NaN and infinities too)
must run; the rest must be refused with an InputError or another burnedge error.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import burnedge

from .harness import CORPUS, FUZZ, Tally, holds

TALLY = Tally("feeds")
DTYPES = ["float32", "float64", "float16", "int8", "int32", "int64", "uint8", "bool", "complex64", "<U3", "object"]


@pytest.fixture(scope="module")
def sessions() -> dict[str, burnedge.Session]:
    model = burnedge.load(CORPUS / "onnx" / "mlp.onnx")
    out = {"numpy": burnedge.Session(model, backend="numpy")}
    if "cffi" in sys.modules or _has_cffi():
        out["c"] = burnedge.Session(model, backend="c")
    return out


def _has_cffi() -> bool:
    try:
        import cffi  # noqa: F401
    except ImportError:
        return False
    return True


arrays = st.sampled_from(DTYPES).flatmap(
    lambda dt: hnp.arrays(
        np.dtype(dt),
        hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
        elements=None if dt != "object" else st.none() | st.integers() | st.text(max_size=3),
    )
)
fitting = hnp.arrays(np.float32, (1, 4), elements=st.floats(width=32, allow_nan=True, allow_infinity=True))
strided = hnp.arrays(np.float32, (1, 8)).map(lambda a: a[:, ::2])
values = st.one_of(
    fitting,
    fitting,
    strided,
    arrays,
    st.none(),
    st.integers(),
    st.floats(),
    st.text(max_size=4),
    st.binary(max_size=8),
    st.lists(st.floats(width=32) | st.none(), max_size=5),
    st.lists(st.lists(st.floats(width=32), min_size=4, max_size=4), min_size=1, max_size=1),
)
keys = st.sampled_from(["x", "x", "x", "y", "", "X"]) | st.text(max_size=3) | st.integers() | st.none()
feeds = st.one_of(
    st.dictionaries(keys, values, max_size=3),
    st.dictionaries(st.just("x"), values, min_size=1, max_size=1),
    st.none(),
    st.integers(),
    st.text(max_size=3),
    st.lists(values, max_size=2),
    fitting,
)


@FUZZ
@given(feed=feeds, backend=st.sampled_from(["numpy", "c"]))
def test_run_refuses_or_runs_every_feed(sessions, feed, backend):
    sess = sessions.get(backend) or sessions["numpy"]
    out = holds(TALLY, lambda: sess.run(feed))
    if out is not None:
        assert set(out) == {"y"} and out["y"].shape == (1, 3) and out["y"].dtype == np.float32


def test_a_fitting_feed_runs(sessions):
    """The target can fail: a feed of the right name, dtype and shape must give the output, not a refusal."""
    x = np.ones((1, 4), np.float32)
    for sess in sessions.values():
        assert sess.run({"x": x})["y"].shape == (1, 3)


def teardown_module(module) -> None:
    TALLY.write()
