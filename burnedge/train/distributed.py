"""Data-parallel training through torch.distributed: the process group from torchrun's environment, the module
wrapped in DDP, each process's share of the data, and sums reduced over the processes.

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT; with WORLD_SIZE above 1 the Learner
joins the group (nccl on CUDA, gloo on the CPU), trains on its share and averages gradients with DDP. Without
them it is one process and none of this runs.

The share: global step k of a run with W processes sees the samples that step k of one process with a W times
larger batch sees (no shuffling), so the same code gives the same weights either way:

- a torch DataLoader over a dataset is rebuilt with a DistributedSampler (rank r: samples r, r+W, ...; shuffled
  with the epoch as seed when the loader shuffles), each process keeping the loader's batch size;
- any other iterable of batches is dealt out: batch i goes to process i mod W, and a last round that cannot give
  every process a batch is left out (the processes must take the same number of steps).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, RandomSampler, SequentialSampler

__all__ = ["SINGLE", "Group", "join", "shard", "steps", "wrap"]


@dataclass(frozen=True)
class Group:
    """This process's place in a data-parallel run."""

    rank: int
    world: int
    local_rank: int

    @property
    def main(self) -> bool:
        """Rank 0: the one process that writes checkpoints, logs and the dashboard."""
        return self.rank == 0

    def sum(self, tensor: torch.Tensor) -> torch.Tensor:
        """`tensor` summed over every process (in place; one process: as it is)."""
        if self.world > 1:
            dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return tensor

    def any(self, flag: bool, device: torch.device) -> bool:
        """True on every process when `flag` is true on any (a stop that all must take together)."""
        if self.world == 1:
            return flag
        t = torch.tensor([1.0 if flag else 0.0], device=device)
        return bool(self.sum(t).item() > 0)


SINGLE = Group(0, 1, 0)


def join(device: torch.device | None) -> tuple[Group, torch.device]:
    """The group torchrun's environment describes (joined once), and this process's device.

    One process (no WORLD_SIZE, or 1): SINGLE and `device` (default: cuda when available, else cpu). Several: each
    takes cuda:LOCAL_RANK on a GPU machine (or the cpu), and the process group over nccl or gloo."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return SINGLE, device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
    rank, local = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", os.environ.get("RANK", "0")))
    if device is None:
        device = torch.device(f"cuda:{local}" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=rank, world_size=world)
    return Group(rank, world, local), device


def wrap(module: torch.nn.Module, group: Group, device: torch.device) -> torch.nn.Module:
    """`module` in DistributedDataParallel when there are several processes (gradients averaged), else as is."""
    if group.world == 1:
        return module
    ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(module, device_ids=ids)


def _rebuilt(loader: Any, group: Group, epoch: int) -> Any | None:
    """A DataLoader like `loader` whose sampler is this process's DistributedSampler; None when it is not one
    that can be rebuilt (an iterable dataset, a custom batch sampler)."""
    if not isinstance(loader, DataLoader) or loader.batch_size is None:
        return None
    sampler = loader.sampler
    if isinstance(sampler, DistributedSampler):
        sampler.set_epoch(epoch)
        return loader
    if type(loader.batch_sampler) is not BatchSampler or not isinstance(sampler, (RandomSampler, SequentialSampler)):
        return None
    mine = DistributedSampler(
        loader.dataset,
        num_replicas=group.world,
        rank=group.rank,
        shuffle=isinstance(sampler, RandomSampler),
        seed=0,
        drop_last=loader.drop_last,
    )
    mine.set_epoch(epoch)
    return DataLoader(
        loader.dataset,
        batch_size=loader.batch_size,
        sampler=mine,
        num_workers=loader.num_workers,
        collate_fn=loader.collate_fn,
        pin_memory=loader.pin_memory,
        drop_last=loader.drop_last,
        persistent_workers=loader.persistent_workers if loader.num_workers else False,
    )


def _dealt(batches: Iterable[Any], group: Group) -> Iterator[Any]:
    round_: list[Any] = []
    for batch in batches:
        round_.append(batch)
        if len(round_) == group.world:
            yield round_[group.rank]
            round_ = []


def shard(loader: Iterable[Any], group: Group, epoch: int) -> Iterable[Any]:
    """This process's batches of `loader` for `epoch` (see the module's docstring); one process: `loader`."""
    if group.world == 1:
        return loader
    rebuilt = _rebuilt(loader, group, epoch)
    return rebuilt if rebuilt is not None else _dealt(loader, group)


def steps(loader: Iterable[Any], group: Group) -> int | None:
    """How many batches this process takes from `loader` per epoch, when it has a length."""
    try:
        n = len(loader)  # type: ignore[arg-type]
    except TypeError:
        return None
    if group.world == 1:
        return n
    rebuilt = _rebuilt(loader, group, 0)
    return len(rebuilt) if rebuilt is not None else n // group.world
