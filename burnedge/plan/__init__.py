"""Planning: node order and tensor lifetimes (schedule), then arena offsets (planners)."""

from .planner import PLANNERS, GreedyBySize, Linear, Planner, best_plan
from .schedule import Buffer, lifetimes

__all__ = ["PLANNERS", "Buffer", "GreedyBySize", "Linear", "Planner", "best_plan", "lifetimes"]
