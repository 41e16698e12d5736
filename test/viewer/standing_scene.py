"""Helpers of the view's tests: the bundled robot's files and a stepping loop."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
URDF = REPO / "urdf" / "humanoid.urdf"


def run_steps(sim, controller, viewer, steps: int) -> list:
    """Step the standing robot, feeding every result to the viewer; returns the results."""
    results = []
    for _ in range(steps):
        result = sim.step(controller.update(sim.t, sim.q, sim.v))
        viewer.update(result)
        results.append(result)
    return results
