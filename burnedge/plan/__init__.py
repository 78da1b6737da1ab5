"""Planning: node order and tensor lifetimes (schedule), arena offsets (planners), the Plan they make."""

from .arena import Plan, lower_bound, make_plan
from .planner import PLANNERS, GreedyBySize, Linear, Planner, best_plan
from .schedule import Buffer, lifetimes

__all__ = [
    "PLANNERS",
    "Buffer",
    "GreedyBySize",
    "Linear",
    "Plan",
    "Planner",
    "best_plan",
    "lifetimes",
    "lower_bound",
    "make_plan",
]
