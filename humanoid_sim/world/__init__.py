"""The world of the simulator: ground, static shapes, free rigid objects and robots.

``load_world(path)`` reads a world YAML file (docs/world.md; config/environment.yaml is
one); ``World`` and its parts are frozen dataclasses validated where they are built.
``assemble_world_model(world, robot_model)`` makes the robots and the free objects one
model of several trees for the simulator (``Simulator.from_world``).
"""

from humanoid_sim.world.assembly import (
    ObjectBody,
    RobotTree,
    WorldModel,
    assemble_world_model,
    load_world_robot,
    load_world_robots,
)
from humanoid_sim.world.description import FreeObject, RobotEntry, StaticShape, World
from humanoid_sim.world.inertia import MassProperties
from humanoid_sim.world.loader import WorldConfigError, load_world, world_from_dict
from humanoid_sim.world.shape import Shape

__all__ = [
    "FreeObject",
    "MassProperties",
    "ObjectBody",
    "RobotEntry",
    "RobotTree",
    "Shape",
    "StaticShape",
    "World",
    "WorldConfigError",
    "WorldModel",
    "assemble_world_model",
    "load_world",
    "load_world_robot",
    "load_world_robots",
    "world_from_dict",
]
