"""A cache of one derived object per RobotModel, dropped when the model is.

RobotModel holds numpy arrays, so it is not hashable; entries are keyed by ``id(model)`` and
guarded by a weak reference, so a new model that happens to reuse a dead model's id never
gets the dead model's entry.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from humanoid_sim.model.robot_model import RobotModel

T = TypeVar("T")


class PerModelCache(Generic[T]):
    """``cache.get(model)`` builds ``build(model)`` once per live model object."""

    def __init__(self, build: Callable[[RobotModel], T]) -> None:
        self._build = build
        self._entries: dict[int, tuple[weakref.ref[RobotModel], T]] = {}

    def get(self, model: RobotModel) -> T:
        key = id(model)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is model:
            return entry[1]
        value = self._build(model)
        self._entries[key] = (weakref.ref(model), value)
        weakref.finalize(model, self._entries.pop, key, None)
        return value
