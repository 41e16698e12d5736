"""humanoid_sim: rigid-contact humanoid simulation (seed 000 virtual links) with a ROS 2 node."""

from humanoid_sim.numba_cache import configure_numba_cache_dir

configure_numba_cache_dir()
