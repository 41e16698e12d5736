"""The seed 002 benchmark scene on the simulator: ten box links hinged 0.55 m above the
ground, released at 60 degrees, strike the floor and fold onto it (5 s at dt = 1 ms)."""

import math

import numpy as np

from humanoid_sim.contact.environment import Environment, GroundPlane, Material
from humanoid_sim.dynamics.kernels import center_of_mass_nb
from humanoid_sim.dynamics.workspace import DynamicsWorkspace
from humanoid_sim.model.box_pendulum import BoxPendulum, box_pendulum
from humanoid_sim.simulator.simulator import Simulator, SimulatorConfig


def test_the_ten_link_pendulum_strikes_the_floor_and_runs_5_s_finite_without_sinking_or_gaining_energy():
    spec = BoxPendulum(links=10, pivot_height=0.55)
    model = box_pendulum(spec)
    env = Environment(ground=GroundPlane(material=Material(mu_s=1.0, mu_d=0.4)))
    sim = Simulator(model, SimulatorConfig(dt=1e-3, environment=env), poses={})
    sim.set_state(spec.initial_configuration(math.radians(60.0)), np.zeros(model.nv))
    ws = DynamicsWorkspace(model)
    armature = sim.armature
    mass = np.ascontiguousarray(model.mass, dtype=float)
    com_local = np.ascontiguousarray(model.com, dtype=float)
    com = np.zeros(3)

    def energy(q, v):
        """T + U [J] with the simulator's armature; U = -m g . c."""
        ws.update(q, v)
        m = center_of_mass_nb(mass, com_local, ws.R, ws.p, com)
        return 0.5 * float(v @ ws.M @ v + armature @ (v * v)) - m * float(model.gravity @ com)

    initial = previous = energy(sim.q, sim.v)
    worst_gain = worst_penetration = 0.0
    touching: set[str] = set()
    for _ in range(5000):
        r = sim.step()
        assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v)), f"non-finite state at t = {r.t:.3f} s"
        worst_penetration = max(worst_penetration, r.max_penetration)
        e = energy(r.q, r.v)
        worst_gain = max(worst_gain, e - previous)
        previous = e
        touching.update(c.link for c in r.contacts)
    print(f"penetration {worst_penetration:.2e} m, largest gain {worst_gain:.2e} J/step, links touching {sorted(touching)}")
    assert abs(sim.t - 5.0) < 1e-9
    assert worst_penetration <= 1e-3
    assert worst_gain <= 0.1
    assert {"link8", "link9", "link10"} <= touching  # the chain's far end lies on the floor
    assert {c.link for c in r.contacts} >= {"link9", "link10"}  # and still does at the end
    assert previous < initial - 1.0  # plastic impacts and friction dissipated the fall
