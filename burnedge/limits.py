"""The limits that bound the work a model, bundle or job file can ask of burnedge: one table, each one overridable.

A hostile or runaway input (a 99-byte model that folds into 13 GiB, a function bomb, a 10**9-trip Loop, a bundle
that inflates to GiBs) is refused with a LimitError that names the limit, the value asked for and how to raise it,
instead of hanging or exhausting memory.

The limits (name, environment variable, default):

=====================  ===============================  =========  ==============================================
name                   environment variable             default    what it bounds
=====================  ===============================  =========  ==============================================
max_nodes              BURNEDGE_MAX_NODES               250000     nodes of an imported graph, after functions
                                                                   are inlined and loops unrolled
max_unrolled_trips     BURNEDGE_MAX_UNROLLED_TRIPS      16384      Loop iterations unrolled into one graph, all
                                                                   loops (nested ones multiply) together
max_function_depth     BURNEDGE_MAX_FUNCTION_DEPTH      64         nesting of local functions calling functions
max_folded_bytes       BURNEDGE_MAX_FOLDED_BYTES        1 GiB      one tensor computed at import (constant
                                                                   folding or shape inference)
max_fold_trips         BURNEDGE_MAX_FOLD_TRIPS          65536      Loop and Scan iterations run at import (to
                                                                   fold constants or infer the shapes inside a
                                                                   branch or body), all together; a Loop with
                                                                   more trips is kept, never run
max_source_bytes       BURNEDGE_MAX_SOURCE_BYTES        256 MiB    generated source handed to a compiler
max_member_bytes       BURNEDGE_MAX_MEMBER_BYTES        4 GiB      one member of a bundle, read into memory
max_bundle_bytes       BURNEDGE_MAX_BUNDLE_BYTES        8 GiB      all members of a bundle together
max_arena_bytes        BURNEDGE_MAX_ARENA_BYTES         64 GiB     the arena a bundle asks to be allocated
max_threads            BURNEDGE_MAX_THREADS             256        threads one session's runs may use (the C
                                                                   runtime's workers; never more than the CPUs)
=====================  ===============================  =========  ==============================================

Raise one for a run with the environment variable (``BURNEDGE_MAX_NODES=1000000 burnedge export ...``), or in code
with ``with burnedge.limits.raised(max_nodes=10**6): ...`` (keyword arguments, for this thread or task only).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import BurnedgeError

__all__ = ["LIMITS", "Limit", "LimitError", "check", "counting_trips", "get", "raised", "spend_trip"]


class LimitError(BurnedgeError):
    """An input asks for more than a limit allows; the message names the limit and how to raise it."""


@dataclass(frozen=True)
class Limit:
    name: str
    default: int
    what: str  # what it bounds, for the error message

    @property
    def env(self) -> str:
        return "BURNEDGE_" + self.name.upper()


LIMITS: dict[str, Limit] = {
    lim.name: lim
    for lim in (
        Limit("max_nodes", 250_000, "graph nodes"),
        Limit("max_unrolled_trips", 16_384, "Loop iterations unrolled"),
        Limit("max_function_depth", 64, "nested function calls"),
        Limit("max_folded_bytes", 1 << 30, "bytes of one tensor computed at import"),
        Limit("max_fold_trips", 65536, "Loop and Scan iterations run at import"),
        Limit("max_source_bytes", 256 << 20, "bytes of generated source"),
        Limit("max_member_bytes", 4 << 30, "bytes of one bundle member"),
        Limit("max_bundle_bytes", 8 << 30, "bytes of all bundle members"),
        Limit("max_arena_bytes", 64 << 30, "arena bytes"),
        Limit("max_threads", 256, "threads"),
    )
}

_TRIPS: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("burnedge_trips", default=None)
_OVERRIDES: contextvars.ContextVar[tuple[tuple[str, int], ...]] = contextvars.ContextVar("burnedge_limits", default=())


def _known(name: str) -> Limit:
    try:
        return LIMITS[name]
    except KeyError:
        raise KeyError(f"no limit named {name!r}; the limits are {', '.join(LIMITS)}") from None


def get(name: str) -> int:
    """The limit's value: a `raised` override, else its environment variable, else the default."""
    lim = _known(name)
    overrides = dict(_OVERRIDES.get())
    if name in overrides:
        return overrides[name]
    text = os.environ.get(lim.env)
    if text is None:
        return lim.default
    try:
        value = int(text.replace("_", ""))
        if value < 0:
            raise ValueError
    except ValueError:
        raise LimitError(f"{lim.env}={text!r}: expected a whole number >= 0") from None
    return value


@contextlib.contextmanager
def raised(**values: int) -> Iterator[None]:
    """Overrides limits by keyword for the code inside the `with` block (this thread or task only)."""
    for name, value in values.items():
        _known(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise LimitError(f"limit {name}={value!r}: expected a whole number >= 0")
    token = _OVERRIDES.set(tuple({**dict(_OVERRIDES.get()), **values}.items()))
    try:
        yield
    finally:
        _OVERRIDES.reset(token)


def check(name: str, value: int, where: str) -> None:
    """Raises a LimitError when `value` exceeds the limit `name`; `where` says what asked (a file, a node)."""
    limit = get(name)
    if value > limit:
        lim = LIMITS[name]
        raise LimitError(
            f"{where}: {value} {lim.what}, over the limit {name} = {limit}; if the input is trusted, raise it "
            f"with the environment variable {lim.env}=N or burnedge.limits.raised({name}=N)"
        )


@contextlib.contextmanager
def counting_trips() -> Iterator[None]:
    """Counts the Loop and Scan iterations the code inside runs (`spend_trip`) against max_fold_trips: the
    importer runs subgraphs only inside this block; at run time nothing counts."""
    token = _TRIPS.set([0])
    try:
        yield
    finally:
        _TRIPS.reset(token)


def spend_trip() -> None:
    """One Loop or Scan iteration; a LimitError past max_fold_trips inside `counting_trips`, else nothing."""
    spent = _TRIPS.get()
    if spent is not None:
        spent[0] += 1
        if spent[0] > get("max_fold_trips"):
            check("max_fold_trips", spent[0], "a Loop or Scan run at import to fold it or infer its shapes")
