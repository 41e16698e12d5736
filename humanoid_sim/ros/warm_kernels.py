"""Compile every numba kernel the simulation node and the walking controller start with, into
the numba cache of this installed copy, so that the first ``ros2 launch`` after an install
loads them in seconds instead of compiling them (about a minute on 2 cores).

scripts/setup.sh runs it after it installs the package, from outside the source tree (the
cache belongs to the copy imported: numba keys it by the kernels' source folders):

    python -P -m humanoid_sim.ros.warm_kernels

It builds both nodes as a start does (in a namespace of its own, lock-step, nothing spinning),
so exactly the start-up path compiles: the simulator's warm-up steps, the first tf publication,
the controller's first update. Prints one line before (what compiles, roughly how long) and one
after (how long it took). Exit code 0; 1 when a node cannot be built (the reason printed).
"""

from __future__ import annotations

import os
import sys
import time

import rclpy
from rclpy.parameter import Parameter

from humanoid_sim.numba_cache import FIRST_COMPILE_ESTIMATE_S, configure_numba_cache_dir, kernels_cached

__all__ = ["main", "warm_kernels"]


def warm_kernels() -> float:
    """Build the simulation node (lock-step; its start publishes the initial state) and the
    walking controller node, then destroy them. Returns the wall time [s]. rclpy must be
    initialised; raises what the nodes' constructors raise."""
    from humanoid_sim.ros.sim_node import SimNode
    from humanoid_sim.ros.walking_controller_node import WalkingControllerNode

    start = time.monotonic()
    namespace = f"/humanoid_sim_warm_kernels_{os.getpid()}"
    sim = SimNode(namespace=namespace, parameter_overrides=[
        Parameter("loop_mode", value="lockstep"), Parameter("diagnostics_rate", value=0.0),
    ])
    try:
        sim.start()  # the initial state's publication: tf's kernel
    finally:
        sim.stop()
        sim.destroy_node()
    controller = WalkingControllerNode(namespace=namespace)
    controller.destroy_node()
    return time.monotonic() - start


def main() -> int:
    """Entry point (see the module docstring)."""
    cached = kernels_cached()
    what = "loading" if cached else f"compiling (~{FIRST_COMPILE_ESTIMATE_S // 60} min on 2 cores)"
    print(f"humanoid_sim: {what} the kernels of the simulation node and the walking controller"
          f" into {configure_numba_cache_dir()} ...", flush=True)
    rclpy.init(args=["--ros-args", "--log-level", "warn"])
    try:
        seconds = warm_kernels()
    except Exception as exc:  # noqa: BLE001 - one line, whatever the node's start-up raised
        print(f"humanoid_sim: warming the kernels failed: {exc}", file=sys.stderr)
        return 1
    finally:
        rclpy.try_shutdown()
    print(f"humanoid_sim: kernels ready in {seconds:.1f} s (cached: later starts load them)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
