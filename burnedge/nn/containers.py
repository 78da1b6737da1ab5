"""Containers: Sequential, ModuleList and ModuleDict, whose members are named by position or key (``features.3``),
as in torch."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..errors import BurnedgeError
from .module import Module

__all__ = ["ModuleDict", "ModuleList", "Sequential"]


class Sequential(Module):
    """Runs its modules in order, each on the previous one's output; members are named 0, 1, ... (or by the keys
    of an OrderedDict given alone)."""

    def __init__(self, *args: Module | Mapping[str, Module]):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], Mapping):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, idx: int | slice) -> Any:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(items[idx]))
        return items[_index(idx, len(items))][1]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input: Any) -> Any:
        for m in self:
            input = m(input)
        return input


class ModuleList(Module):
    """A list of modules named by position (``layers.0.weight``); it has no forward of its own."""

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        self.extend(modules or [])

    def __getitem__(self, idx: int | slice) -> Any:
        values = list(self._modules.values())
        if isinstance(idx, slice):
            return ModuleList(values[idx])
        return values[_index(idx, len(values))]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self))), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        values = list(self._modules.values())
        values.insert(index, module)
        self._modules.clear()
        self.extend(values)


class ModuleDict(Module):
    """A dict of modules named by key (``heads.cls.weight``); it has no forward of its own."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, m in pairs:
            self.add_module(key, m)


def _index(idx: int, n: int) -> int:
    if not -n <= idx < n:
        raise BurnedgeError(f"index {idx} is out of range for a container of {n} modules")
    return idx % n
