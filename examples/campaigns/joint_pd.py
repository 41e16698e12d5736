"""A user controller for campaigns (the interface of humanoid_sim/campaign/controllers.py):
a joint PD around the posture it was reset in, with the joint part of the gravity torques
g(q) as feed-forward. It knows nothing of contacts, so it sags a little under the weight:
an example of the interface, not a good controller."""

import numpy as np

from humanoid_sim.dynamics import gravity_forces


class JointPD:
    """kp [N m/rad], kd [N m s/rad]: the same for every joint; control_dt [s]."""

    control_dt = 0.002

    def __init__(self, model, kp: float = 800.0, kd: float = 20.0) -> None:
        self.model = model
        self.kp, self.kd = float(kp), float(kd)
        self.q0 = np.zeros(model.nj)

    def reset(self, q, v, t):
        self.q0 = np.array(q[self.model.nq - self.model.nj:])

    def update(self, t, q, v, contact_info):
        nj = self.model.nj
        g = gravity_forces(self.model, q)[self.model.nv - nj:]
        return g + self.kp * (self.q0 - q[self.model.nq - nj:]) - self.kd * v[self.model.nv - nj:]
