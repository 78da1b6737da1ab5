"""Module: the base of burnedge.nn models, finding submodules, Parameters and Buffers by attribute and naming
them as PyTorch does (``features.0.weight``), with state dicts, safetensors in and out, and train/eval flags.

Calling a module runs its `forward` inside the active trace, under its path (which names its nodes and errors).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..errors import BurnedgeError
from ._state import current
from .tensor import Buffer, Parameter, Stored
from .weights import IncompatibleKeys, load_into, read_checkpoint, remap_keys, write_safetensors

__all__ = ["Module"]


class Module:
    """Base class of layers and models: set submodules and Parameters as attributes in `__init__` (after
    ``super().__init__()``), register non-learnable arrays with `register_buffer`, and write `forward`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    # -- attributes ------------------------------------------------------------------------------------------
    def _dicts(self, name: str) -> tuple[dict, dict, dict]:
        try:
            return self.__dict__["_parameters"], self.__dict__["_buffers"], self.__dict__["_modules"]
        except KeyError:
            raise BurnedgeError(f"{type(self).__name__}: call super().__init__() before assigning {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        params, buffers, modules = self._dicts(name)
        if isinstance(value, (Parameter, Module)) or (value is None and (name in params or name in modules)):
            target = params if isinstance(value, Parameter) or (value is None and name in params) else modules
            for d in (params, buffers, modules):
                d.pop(name, None)
            self.__dict__.pop(name, None)
            target[name] = value
        elif name in buffers or isinstance(value, Buffer):
            params.pop(name, None), modules.pop(name, None), self.__dict__.pop(name, None)
            if value is not None and not isinstance(value, Buffer):
                value = Buffer(value, persistent=buffers[name].persistent if buffers[name] is not None else True)
            buffers[name] = value
        elif name in params:
            raise BurnedgeError(
                f"{type(self).__name__}: cannot assign a {type(value).__name__} to parameter {name!r} "
                "(a burnedge.nn.Parameter or None is expected)"
            )
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            if key in d and name in d[key]:
                return d[key][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for key in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(key, {}):
                del self.__dict__[key][name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name: str, tensor: Any, persistent: bool = True) -> None:
        """A named non-learnable array (None allowed); persistent buffers are part of the state dict."""
        params, buffers, modules = self._dicts(name)
        if "." in name or not name or name in params or name in modules:
            raise BurnedgeError(f"{type(self).__name__}: bad or taken buffer name {name!r}")
        self.__dict__.pop(name, None)
        data = tensor.data if isinstance(tensor, Stored) else tensor
        buffers[name] = None if tensor is None else Buffer(data, persistent=persistent)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is not None and not isinstance(param, Parameter):
            raise BurnedgeError(f"{type(self).__name__}: register_parameter({name!r}) needs a Parameter or None")
        self._dicts(name)[0][name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise BurnedgeError(f"{type(self).__name__}: add_module({name!r}) needs a Module, not {type(module)}")
        self._dicts(name)[2][str(name)] = module

    register_module = add_module

    # -- the tree --------------------------------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        """(path, module) for this module and every submodule, depth first, each module once."""
        memo = set() if memo is None else memo
        if remove_duplicate and id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, sub in self._modules.items():
            if sub is not None:
                yield from sub.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        return (m for _, m in self.named_modules())

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, sub in self._modules.items():
            if sub is not None and id(sub) not in seen:
                seen.add(id(sub))
                yield name, sub

    def children(self) -> Iterator[Module]:
        return (m for _, m in self.named_children())

    def _named(self, key: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for path, mod in mods:
            for name, item in mod.__dict__[key].items():
                if item is None or (remove_duplicate and id(item) in seen):
                    continue
                seen.add(id(item))
                yield (f"{path}.{name}" if path else name), item

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        return self._named("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        return self._named("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Buffer]:
        return (b for _, b in self.named_buffers(recurse=recurse))

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- state -----------------------------------------------------------------------------------------------
    def _slots(self, prefix: str = "") -> dict[str, Stored]:
        """State-dict name -> Parameter or persistent Buffer, in torch's order (own parameters, own buffers,
        then each child's); a shared weight appears under each of its names, as in torch."""
        out: dict[str, Stored] = {}
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p
        for name, b in self._buffers.items():
            if b is not None and b.persistent:
                out[prefix + name] = b
        for name, sub in self._modules.items():
            if sub is not None:
                out.update(sub._slots(f"{prefix}{name}."))
        return out

    def state_dict(self, prefix: str = "") -> dict[str, np.ndarray]:
        """{PyTorch name: numpy array} of every parameter and persistent buffer (the arrays themselves)."""
        return {k: v.data for k, v in self._slots(prefix).items()}

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, *, source: str = "state_dict"):
        """Copies arrays (numpy or torch tensors) into the parameters and buffers by name; every missing key,
        unexpected key (when `strict`) and shape mismatch is reported in one WeightsError. Returns
        (missing_keys, unexpected_keys), as torch does."""
        return load_into(self._slots(), state_dict, strict, source, type(self).__name__)

    def load_safetensors(
        self,
        path: str | os.PathLike[str],
        strict: bool = True,
        remap: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    ) -> IncompatibleKeys:
        """Loads a .safetensors file (or a .pt/.pth state dict, through torch); `remap` rewrites its keys first:
        (regex, replacement) pairs or a dict of them, applied in order (``{r"^model\\.": ""}``)."""
        state = remap_keys(read_checkpoint(path), remap, str(path))
        return self.load_state_dict(state, strict, source=str(path))

    def save_safetensors(self, path: str | os.PathLike[str]) -> None:
        """Writes `state_dict()` as safetensors (atomically): torch's `load_state_dict` reads it back."""
        write_safetensors(path, self.state_dict())

    # -- modes -----------------------------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Accepted for PyTorch code's sake (`.to(device)`); burnedge places nothing."""
        return self

    # -- running ---------------------------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise current().error("has no forward(); define forward(self, ...) in the subclass")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tracer = current()
        with tracer.scope(self):
            return self.forward(*args, **kwargs)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + ")" if not lines else head + "\n  " + "\n  ".join(lines) + "\n)"
