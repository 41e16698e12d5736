"""The contact methods a Simulator can step with, by name (SimulatorConfig.contact_method).

- ``virtual_link`` (seed 000, the default): every contact a virtual link with constrained
  DOFs, solved with the validity checks of 4.4-4.5 and the bounded solve behind them
  (contact/step_kernel.py);
- ``relaxed_qp`` (seed 002): per-vertex contact rows solved at the velocity level as a
  regularised bounded QP with error compensation and continuous friction
  (contact/relaxed_qp.py);
- ``penalty_volume`` (seed 004): a spring-damper force per area element of the
  penetration volume with distributed Coulomb friction, the dynamics by the
  articulated-body algorithm with those external forces (contact/penalty_volume.py).

Every method takes the same detected contacts and fills the same contact table and step
output, so StepResult, the node and the benchmarks are the same for all three.
"""

from __future__ import annotations

from humanoid_sim.errors import UnknownNameError

__all__ = [
    "CAPACITY",
    "CONTACT_METHODS",
    "NONFINITE",
    "OK",
    "PENALTY_VOLUME",
    "RELAXED_QP",
    "SINGULAR",
    "VIRTUAL_LINK",
    "method_index",
]

CONTACT_METHODS: tuple[str, ...] = ("virtual_link", "relaxed_qp", "penalty_volume")
VIRTUAL_LINK, RELAXED_QP, PENALTY_VOLUME = 0, 1, 2  # StepParams.method
# statuses of step_nb and of a method's kernel: OK; CAPACITY: a table was too small (the caller
# grows it and repeats the step); SINGULAR: M not positive definite; NONFINITE: the new state
# is not finite
OK, CAPACITY, SINGULAR, NONFINITE = 0, 1, 2, 3


def method_index(name: str) -> int:
    """The StepParams.method of a contact method's name; UnknownNameError lists the names."""
    try:
        return CONTACT_METHODS.index(name)
    except ValueError:
        raise UnknownNameError("contact method", name, CONTACT_METHODS) from None
