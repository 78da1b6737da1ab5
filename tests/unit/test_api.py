"""The public API: a small, sorted __all__ whose names all exist."""

import burnedge


def test_all_is_sorted_and_complete():
    assert burnedge.__all__ == sorted(burnedge.__all__)
    for name in burnedge.__all__:
        assert hasattr(burnedge, name), name
    public = {
        n for n in dir(burnedge) if not n.startswith("_") and not isinstance(getattr(burnedge, n), type(burnedge))
    }
    assert public <= set(burnedge.__all__), public - set(burnedge.__all__)
