"""Op tags: the facts other stages ask about ops live on the registry, agree across an op's versions, and agree with
the backends and rules that act on them (the C backend has an expression for every fusable op)."""

from __future__ import annotations

from collections import defaultdict

import pytest

from burnedge import ops
from burnedge.backends.c.lower import elementwise as c_elementwise
from burnedge.backends.c.lower import supported
from burnedge.ops import fixedpoint
from burnedge.quantize import qparams
from burnedge.quantize.rules import RULES
from burnedge.quantize.rules import add_multipliers as rules_add_multipliers
from burnedge.quantize.rules.elementwise import lut
from burnedge.quantize.rules.movement import passthrough


def test_every_version_of_an_op_has_the_same_tags():
    versions: dict[tuple[str, str], set[frozenset[str]]] = defaultdict(set)
    for op in ops.all_ops():
        versions[(op.domain, op.name)].add(op.tags)
    assert {k: v for k, v in versions.items() if len(v) > 1} == {}


def test_tags_are_known_and_listed():
    used = {t for op in ops.all_ops() for t in op.tags}
    assert used <= set(ops.TAGS)
    with pytest.raises(KeyError, match="tags: elementwise"):
        ops.tagged("fusible")
    with pytest.raises(RuntimeError, match="unknown tag"):
        ops.register("NoSuchOp", tags=("fusible",))


def test_every_fusable_op_has_a_c_expression():
    """fuse_elementwise fuses the ops tagged fusable; the C loop generator must have an expression for each."""
    fusable = ops.tagged("fusable")
    assert {"Add", "Relu", "Cast", "Where", "Clip"} <= fusable
    assert fusable <= set(c_elementwise.SIMPLE)
    assert {("", name) for name in fusable} <= supported()


def test_c_views_are_the_view_ops():
    assert {("", name) for name in ops.tagged("view")} <= supported()
    assert ops.tagged("view") == {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}


def test_int8_rules_follow_the_tags():
    for name in ops.tagged("int8_passthrough"):
        assert RULES[name] is passthrough, name
    for name in ops.tagged("int8_lut"):
        assert RULES[name] is lut, name
    assert RULES["burnedge.Elementwise"] is lut


def test_qdq_movement_is_passthrough_and_concat():
    """QDQ import moves int8 through fewer ops than quantization does (Gather, Expand, Tile, Split, Pad, Resize and
    the reductions stay float there); every one of them is an int8 pass-through op, or Concat."""
    assert ops.tagged("qdq_movement") <= ops.tagged("int8_passthrough") | {"Concat"}
    assert "Concat" in ops.tagged("qdq_movement") and "Gather" not in ops.tagged("qdq_movement")


def test_one_fixed_point_rule():
    assert qparams.requantize is fixedpoint.requantize
    assert qparams.quantize_multiplier is fixedpoint.quantize_multiplier
    assert qparams.requant_multiplier is fixedpoint.requant_multiplier
    assert rules_add_multipliers is fixedpoint.add_multipliers  # the rules re-export the one definition
