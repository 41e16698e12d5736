"""Errors raised while turning a URDF into a RobotModel."""

from __future__ import annotations


class UrdfError(ValueError):
    """A URDF that cannot be turned into a RobotModel.

    The message names the offending element (``joint 'l_knee': ...``,
    ``link 'pelvis': ...``) and says what is wrong with it.
    """
