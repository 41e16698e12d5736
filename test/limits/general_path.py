"""A range-of-motion provider through the general provider protocol only, for tests of the
compiled rows (limits/step_limits.py) against it."""

import numpy as np

from humanoid_sim.contact.constraint_rows import OneSidedRows
from humanoid_sim.limits import RangeOfMotionProvider


class GeneralPath:
    """A range-of-motion provider through the general provider protocol only (no compiled_rows):
    the simulator asks it for rows and hands their forces back each step."""

    rows_checked = True

    def __init__(self, provider: RangeOfMotionProvider) -> None:
        self.provider = provider
        self.name = provider.name

    def rows(self, q: np.ndarray, v: np.ndarray) -> OneSidedRows:
        return self.provider.rows(q, v)

    def accept_forces(self, forces: np.ndarray) -> None:
        self.provider.accept_forces(forces)

    def report(self):
        return self.provider.report()
