"""Contacts between two moving bodies of one robot (self-collision) in the compiled step.

Models are built in code: a fixed torso with an arm of two links (shoulder about y, elbow
about z) whose forearm is driven into the torso's side, and the bundled humanoid hanging
with its legs pressed together. Truths: the forearm comes to rest at the torso's surface;
in equilibrium the contact wrench balances the joint torques (virtual work: the applied
torques equal -J^T of the contact wrench, joint by joint); without self-collision the
forearm passes through the torso; the contact is reported with both bodies.
"""

import numpy as np
import pytest

from humanoid_sim.contact.environment import Environment
from humanoid_sim.dynamics import forward_kinematics
from humanoid_sim.model import load_urdf
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig

INERTIA = '<inertial><origin xyz="{c}"/><mass value="{m}"/><inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial>'


def box_link(name: str, size: str, center: str, mass: float = 1.0) -> str:
    inertia = INERTIA.format(c=center, m=mass, i=mass * 0.01)
    return f'<link name="{name}">{inertia}<collision><origin xyz="{center}"/><geometry><box size="{size}"/></geometry></collision></link>'


def revolute(name: str, parent: str, child: str, xyz: str, axis: str) -> str:
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/><origin xyz="{xyz}"/>'
            f'<axis xyz="{axis}"/><limit lower="-3" upper="3" effort="100" velocity="100"/></joint>')  # fmt: skip


# torso: x in [-0.4, 0.4], y in [-0.2, 0.2]; the upper arm points forward (+x) from the
# shoulder at y = 0.3, clear of the torso; the forearm continues it from the elbow at
# x = 0.2 and, turned about -z, swings into the torso's side face y = 0.2
ARM = (
    '<robot name="arm">'
    + box_link("torso", "0.8 0.4 0.6", "0 0 0", 10.0)
    + box_link("upper_arm", "0.2 0.05 0.05", "0.1 0 0")
    + box_link("forearm", "0.3 0.05 0.05", "0.15 0 0")
    + revolute("shoulder", "torso", "upper_arm", "0 0.3 0.2", "0 1 0")
    + revolute("elbow", "upper_arm", "forearm", "0.2 0 0", "0 0 1")
    + "</robot>"
)
TAU_ELBOW = -5.0  # [N m] about z: the forearm turns toward -y, into the torso


def arm_simulator(self_collision: bool) -> Simulator:
    model = load_urdf(ARM, floating_base=False)
    config = SimulatorConfig(environment=Environment(ground=None), gravity=np.zeros(3), self_collision=self_collision)
    return Simulator(model, config)


def run(sim: Simulator, tau: np.ndarray, steps: int):
    result = None
    for _ in range(steps):
        result = sim.step(tau)
    return result


def test_forearm_driven_into_the_torso_stops_at_its_surface():
    sim = arm_simulator(True)
    model = sim.model
    tau = np.zeros(model.nj)
    tau[model.joint_names.index("elbow")] = TAU_ELBOW
    worst = 0.0
    for _ in range(1500):
        r = sim.step(tau)
        worst = max(worst, r.max_penetration)
    assert worst <= 1e-3
    assert np.max(np.abs(r.v)) < 1e-6  # at rest against the torso
    # two joints against a line contact's rows: the rows are dependent, the bounded solve
    # (valid by construction) gives the forces
    torso, forearm = model.frame("torso").body, model.frame("forearm").body
    touching = [c for c in r.contacts if c.other_body >= 0]
    assert touching and all(c.link == "forearm" and c.element == "torso" and c.other_body == torso for c in touching)
    assert all(c.body == forearm for c in touching)
    # the forearm's near face meets the torso's side face y = 0.2 (the torso's edge x = 0.4)
    points = np.concatenate([c.points for c in touching])
    assert np.all(np.abs(points[:, 1] - 0.2) < 1e-3)
    # equilibrium: the applied torques are balanced by the contact wrench through every joint
    # (virtual work: tau + J^T F = 0 with F the wrench on the forearm at the contact origin)
    X = forward_kinematics(model, r.q)
    balance = tau.copy()
    for c in touching:
        for joint, child, axis in (("shoulder", "upper_arm", 1), ("elbow", "forearm", 2)):
            X_joint = X[model.frame(child).body]
            a = X_joint[:3, axis]
            f, n = c.wrench_world[:3], c.wrench_world[3:]
            balance[model.joint_names.index(joint)] += a @ (n + np.cross(c.origin - X_joint[:3, 3], f))
    np.testing.assert_allclose(balance, 0.0, atol=1e-6 * abs(TAU_ELBOW))


def test_without_self_collision_the_forearm_passes_through_the_torso():
    sim = arm_simulator(False)
    tau = np.zeros(sim.model.nj)
    tau[sim.model.joint_names.index("elbow")] = TAU_ELBOW
    r = run(sim, tau, 100)  # about 0.8 rad at 5 N m
    assert not r.contacts
    X = forward_kinematics(sim.model, r.q)
    tip = X[sim.model.frame("forearm").body] @ np.array([0.3, 0.0, 0.0, 1.0])
    assert tip[1] < 0.2 - 0.05  # inside the torso's side face


def test_the_humanoid_legs_cannot_pass_through_each_other():
    """The bundled humanoid hangs (base welded, no gravity), every joint held at zero by a
    PD law except the hips' roll, driven inward at 100 N m: the legs meet and stop,
    penetration <= 1 mm on every step, the contact reported with the other leg as its
    second body; without self-collision the same torques cross the legs."""
    model = load_urdf("urdf/humanoid.urdf", floating_base=False)
    roll = [model.joint_names.index(n) for n in model.joint_names if "hip_roll" in n]
    assert len(roll) == 2
    drive = np.zeros(model.nj)
    for i in roll:  # adduction: the left leg turns toward -y, the right toward +y
        drive[i] = -100.0 if model.joint_names[i].startswith("l_") else 100.0
    held = np.ones(model.nj, dtype=bool)
    held[roll] = False

    def feet_y(self_collision: bool) -> tuple[bool, float, list]:
        sim = Simulator(model, SimulatorConfig(environment=Environment(ground=None), gravity=np.zeros(3),
                                               self_collision=self_collision))  # fmt: skip
        worst = 0.0
        last = []
        crossed = False
        for k in range(800):
            r = sim.step(drive + np.where(held, -300.0 * sim.q - 3.0 * sim.v, 0.0))
            worst = max(worst, r.max_penetration)
            X = forward_kinematics(model, r.q)
            crossed |= X[model.frame("l_foot").body][1, 3] < X[model.frame("r_foot").body][1, 3]
            if k >= 700:
                last.append(r)
        return crossed, worst, last

    crossed, worst, last = feet_y(True)
    assert worst <= 1e-3
    assert not crossed  # the legs stay apart
    legs = {"l_thigh", "l_shank", "l_foot", "r_thigh", "r_shank", "r_foot"}
    for r in last:  # pressed together over the last 0.1 s
        between = [c for c in r.contacts if c.other_body >= 0]
        assert between and all({c.link, c.element} <= legs and c.link[0] != c.element[0] for c in between)
        assert sum(abs(c.wrench_world[1]) for c in between) > 10.0  # [N] the legs push each other apart
    crossed, _, _ = feet_y(False)
    assert crossed
