"""The Fast DDS memory profile the simulation node runs with when the user has set none.

rmw_fastrtps gives every DDS reader a history whose sample slots, once grown to the largest
sample they held, keep that size for the life of the process (PREALLOCATED_WITH_REALLOC). A
flood of commands of a million values (8-20 MB each) leaves the command readers tens of MB
larger for good, even when no such sample ever arrived whole. The package ships
``config/fastdds_profiles.xml``, whose readers allocate each sample at its size and free it
when it is taken or dropped (DYNAMIC), publishers unchanged. The node's launcher
(``sim_node.main``) points Fast DDS at it before rclpy starts, unless the user configured Fast
DDS (a profiles file through the environment or in the working directory, or
RMW_FASTRTPS_USE_QOS_FROM_XML) or runs another middleware: then nothing changes.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import NamedTuple

from humanoid_sim.package_data import package_file

__all__ = [
    "FASTDDS_2_DISTRIBUTIONS",
    "FASTDDS_IMPLEMENTATIONS",
    "PROFILE_FILE",
    "PROFILE_VARIABLES",
    "USE_QOS_FROM_XML",
    "WORKING_DIRECTORY_PROFILES",
    "ProfileChoice",
    "use_packaged_profile",
]

# The package's profiles file (a path inside its share directory, package_data.package_file).
PROFILE_FILE = "config/fastdds_profiles.xml"
# Where Fast DDS looks for a profiles file: the variable of Fast DDS 3 (Kilted on), that of Fast DDS 2.
PROFILE_VARIABLES = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")
# ROS 2 distributions built on Fast DDS 2, which reads only FASTRTPS_DEFAULT_PROFILES_FILE (Fast
# DDS 3 reads both, and warns that the second is deprecated).
FASTDDS_2_DISTRIBUTIONS = ("humble", "iron", "jazzy")
# rmw_fastrtps takes the history memory policy and publish mode from the XML only when this is 1.
USE_QOS_FROM_XML = "RMW_FASTRTPS_USE_QOS_FROM_XML"
# Profiles files Fast DDS loads from the working directory by themselves.
WORKING_DIRECTORY_PROFILES = ("DEFAULT_FASTDDS_PROFILES.xml", "DEFAULT_FASTRTPS_PROFILES.xml")
# RMW implementations built on Fast DDS (an unset RMW_IMPLEMENTATION means the default: Fast DDS).
FASTDDS_IMPLEMENTATIONS = ("rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")


class ProfileChoice(NamedTuple):
    """What ``use_packaged_profile`` did.

    applied: the environment now points Fast DDS at the package's profiles file.
    reason: one sentence for the node's log (which file, or why the user's setting stays).
    """

    applied: bool
    reason: str


def use_packaged_profile(environ: MutableMapping[str, str], working_directory: Path) -> ProfileChoice:
    """Point Fast DDS at the package's profiles file in ``environ`` (``os.environ`` for the node;
    call before rclpy.init) unless the user configured Fast DDS or runs another middleware.

    working_directory: where the process runs (Fast DDS reads a DEFAULT_*_PROFILES.xml there).
    Raises DataFileNotFoundError when the package's file is missing (a broken install).
    """
    rmw = environ.get("RMW_IMPLEMENTATION", "")
    if rmw and rmw not in FASTDDS_IMPLEMENTATIONS:
        return ProfileChoice(False, f"middleware {rmw}: no Fast DDS profile applies")
    given = [name for name in (*PROFILE_VARIABLES, USE_QOS_FROM_XML) if environ.get(name)]
    if given:
        return ProfileChoice(False, f"Fast DDS configured by the user ({', '.join(given)} set): kept as it is")
    local = [name for name in WORKING_DIRECTORY_PROFILES if (working_directory / name).is_file()]
    if local:
        return ProfileChoice(False, f"Fast DDS configured by the user ({local[0]} in {working_directory}): kept as it is")
    path = str(package_file(PROFILE_FILE))
    fastdds_2 = environ.get("ROS_DISTRO", "").lower() in FASTDDS_2_DISTRIBUTIONS
    environ[PROFILE_VARIABLES[1] if fastdds_2 else PROFILE_VARIABLES[0]] = path
    environ[USE_QOS_FROM_XML] = "1"
    return ProfileChoice(True, f"Fast DDS readers allocate each sample at its size and free it after use ({path})")
