"""Benchmark: the simulation node under a flood of malformed commands, the robot standing.

The bundled humanoid stands in a real-time node under a holding controller that answers every
joint_states message (``--rate``, 500 Hz by default) with a command (bench/standing_node.py).
After ``--window`` wall seconds, a second process publishes ``--count`` malformed commands
(10,000 by default) as fast as its publishers take them, round robin over both command topics:
wrong lengths, NaN, +-inf, +-1e308, unknown and duplicate names, an empty effort field, and,
every ``--huge-every``-th command, an array (or a name list) of a million elements. Prints, for
before, during and ``--window`` seconds after the flood: the joint_states rate received here,
the controller's commands the node accepted per second (both asked: ``--rate``), the node's
resident memory (RSS), each beside the machine's load (``uptime``: the 2 cores may be shared,
and rates measured under load are not those of an idle machine); then the commands the node
counted per rejection kind against those sent, whether it renewed its command readers, and
the robot's base height before and after (whether it stood).

    source scripts/env.sh && python bench/command_flood.py [--count 10000] [--rate 500]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import rclpy

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from standing_node import REPO, StandingNode  # noqa: E402

HUGE = 1_000_000  # elements of the largest commands


def malformed_commands(joint_names: list[str], huge_every: int) -> list[tuple[str, bytes, str]]:
    """(topic, serialized message, the rejection kind the node must count) of each malformed
    command, in publishing order of one round: the huge ones once per ``huge_every`` commands
    (1: only huge ones; 0: none)."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    nj = len(joint_names)
    named = "joint_commands"
    array = "effort_controller/commands"

    def state(names: list[str], effort: list[float]) -> bytes:
        return serialize_message(JointState(name=names, effort=effort))

    def values(data: list[float]) -> bytes:
        return serialize_message(Float64MultiArray(data=data))

    def with_value(value: float) -> list[float]:
        return [0.0] * (nj - 1) + [value]

    small = [
        (named, state(joint_names, [0.0] * (nj - 1)), "wrong_length"),
        (named, state(joint_names, with_value(math.nan)), "non_finite"),
        (named, state(joint_names, with_value(math.inf)), "non_finite"),
        (named, state(joint_names, with_value(-math.inf)), "non_finite"),
        (named, state(joint_names, with_value(1e308)), "out_of_range"),
        (named, state(joint_names, with_value(-1e308)), "out_of_range"),
        (named, state(["no_such_joint", *joint_names[1:]], [0.0] * nj), "unknown_joint"),
        (named, state([joint_names[0], *joint_names[:-1]], [0.0] * nj), "duplicate_joint"),
        (named, serialize_message(JointState(name=joint_names, position=[0.0] * nj)), "effort_missing"),
        (array, values([0.0] * (nj + 1)), "wrong_length"),
        (array, values(with_value(math.nan)), "non_finite"),
        (array, values(with_value(-math.inf)), "non_finite"),
        (array, values(with_value(1e308)), "out_of_range"),
        (array, values(with_value(-1e308)), "out_of_range"),
    ]
    huge = [
        (array, values([0.0] * HUGE), "wrong_length"),
        (named, state([f"j{k}" for k in range(HUGE)], [0.0] * HUGE), "wrong_length"),
    ]
    if huge_every <= 0:
        return small
    rounds: list[tuple[str, bytes, str]] = []
    k = 0
    for position in range(huge_every * len(huge)):
        if position % huge_every == huge_every - 1:
            rounds.append(huge[k % len(huge)])
            k += 1
        else:
            rounds.append(small[position % len(small)])
    return rounds


def flood(namespace: str, count: int, huge_every: int) -> int:
    """The flooding process: publish ``count`` malformed commands; print the kinds sent (JSON)."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from humanoid_sim.model import load_urdf

    rclpy.init()
    node = rclpy.create_node(f"command_flood_{os.getpid()}")
    publishers = {
        "joint_commands": node.create_publisher(JointState, f"{namespace}/joint_commands", 10),
        "effort_controller/commands": node.create_publisher(Float64MultiArray, f"{namespace}/effort_controller/commands", 10),
    }
    commands = malformed_commands(list(load_urdf(REPO / "urdf" / "humanoid.urdf").joint_names), huge_every)
    deadline = time.monotonic() + 30.0
    while any(p.get_subscription_count() == 0 for p in publishers.values()) and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
    sent: Counter[str] = Counter()
    start = time.monotonic()
    for k in range(count):
        topic, data, kind = commands[k % len(commands)]
        publishers[topic].publish(data)
        sent[kind] += 1
    elapsed = time.monotonic() - start
    print(json.dumps({"sent": dict(sent), "seconds": elapsed}), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="malformed commands to send")
    parser.add_argument("--rate", type=float, default=500.0, help="joint_states rate = controller rate [Hz]")
    parser.add_argument("--huge-every", type=int, default=50,
                        help="every N-th command has a million elements (1: all of them, 0: none)")
    parser.add_argument("--node-env", action="append", default=[], metavar="NAME=VALUE",
                        help="environment of the node process (e.g. RMW_FASTRTPS_USE_QOS_FROM_XML=0: rmw's own"
                             " Fast DDS memory policies instead of the package's profile)")
    parser.add_argument("--window", type=float, default=10.0, help="wall seconds measured before and after the flood")
    parser.add_argument("--loop-mode", default="realtime", choices=("realtime", "fast"))
    parser.add_argument("--flood", metavar="NAMESPACE", help=argparse.SUPPRESS)  # the flooding process
    options = parser.parse_args()
    if options.flood:
        return flood(options.flood, options.count, options.huge_every)

    flooder_env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for setting in options.node_env:
        name, _, value = setting.partition("=")
        os.environ[name] = value  # the node process inherits it
    rclpy.init()
    namespace = f"/flood_{os.getpid()}"
    bench = StandingNode(namespace, options.rate, parameters={"loop_mode": options.loop_mode, "rejection_log_period": "2.0"})
    phases: dict[str, Phase] = {}
    try:
        bench.start()
        bench.spin_for(2.0)  # settle after resuming
        first = bench.last_values()
        phases["before"] = measure_phase(bench, lambda: bench.spin_for(options.window))
        maps_before = resident_by_mapping(bench.process.pid)
        flooder_errors = tempfile.TemporaryFile(mode="w+")
        flooder = subprocess.Popen(
            [sys.executable, __file__, "--flood", namespace, "--count", str(options.count), "--huge-every", str(options.huge_every)],
            env=flooder_env, stdout=subprocess.PIPE, stderr=flooder_errors, text=True,
        )
        peak = [bench.rss_mb()]

        def until_flooder_exits() -> None:
            while flooder.poll() is None:
                bench.spin_for(0.25)
                peak.append(bench.rss_mb())

        phases["during"] = measure_phase(bench, until_flooder_exits)
        output = flooder.stdout.read()
        if flooder.returncode != 0 or not output.strip():
            flooder_errors.seek(0)
            raise RuntimeError(f"the flooding process failed ({flooder.returncode}):\n{flooder_errors.read()[-3000:]}")
        report = json.loads(output.strip().splitlines()[-1])
        phases["after"] = measure_phase(bench, lambda: bench.spin_for(options.window))
        maps_after = resident_by_mapping(bench.process.pid)
        bench.spin_for(1.5)  # one more diagnostics message after the last command
        last = bench.last_values()
    finally:
        bench.close()
        rclpy.try_shutdown()

    sent: dict[str, int] = report["sent"]
    print(f"command flood bench: {options.loop_mode} node, bundled humanoid standing under a controller answering"
          f" joint_states at {options.rate:g} Hz (asked rate of joint_states and of commands)")
    print(f"  flood: {sum(sent.values())} malformed commands in {report['seconds']:.2f} s of publishing"
          f" ({phases['during'].seconds:.2f} s until the flooder exited), every {options.huge_every}th of {HUGE} elements")
    print("  (rates measured on a shared machine are those of its load, printed beside them: not idle-machine figures)")
    for name, phase in phases.items():
        extra = f", peak {max(peak):.1f} MB" if name == "during" else ""
        print(f"  {name:6s} joint_states {phase.joint_states_hz:6.1f} Hz, commands accepted {phase.accepted_hz:6.1f} Hz"
              f" (asked {options.rate:g}), node RSS {phase.rss_mb:.1f} MB{extra}  | {phase.uptime}")
    print(f"  node RSS {options.window:g} s after the flood: {phases['after'].rss_mb - phases['before'].rss_mb:+.1f} MB"
          f" against before (target: within 20 MB); command readers renewed {last.get('command_reader_renewals', '?')} time(s)")
    growth = {kind: maps_after.get(kind, 0.0) - maps_before.get(kind, 0.0) for kind in set(maps_before) | set(maps_after)}
    print("  RSS change by mapping: " + ", ".join(f"{kind} {mb:+.1f} MB" for kind, mb in sorted(growth.items()) if abs(mb) >= 0.1))
    if options.node_env:
        print(f"  node environment: {' '.join(options.node_env)}")
    print("  rejected by kind (counted by the node / sent; the node keeps only the newest commands,"
          " so DDS drops what arrives while it is busy):")
    for kind in sorted(set(sent) | {k[len('rejected_'):] for k in last if k.startswith("rejected_") and k != "rejected_commands"}):
        counted = int(last.get(f"rejected_{kind}", 0)) - int(first.get(f"rejected_{kind}", 0))
        print(f"    {kind:16s} {counted:6d} / {sent.get(kind, 0)}")
    heights = bench.base_height
    timeout_ticks = int(last["command_timeout_ticks"]) - int(first["command_timeout_ticks"])
    print(f"  late ticks {last['late_ticks']} of {last['ticks']} ticks, real-time factor {last['real_time_factor']};"
          f" ticks without a command for command_timeout: {timeout_ticks}")
    low = [t for t, _, z in bench.trace if z < bench.q0[2] - 0.05]
    if low:
        flood_start = phases["before"].sim_end
        print(f"  the robot fell {low[0] - flood_start:+.2f} s (sim time) after the flood started"
              f" (it ended {phases['during'].sim_end - flood_start:.2f} s after it started)")
    print(f"  base height: start {bench.q0[2]:.4f} m, before the flood {phases['before'].base_height:.4f} m,"
          f" after {heights[-1]:.4f} m, lowest {min(heights):.4f} m"
          f" ({'stood' if min(heights) > bench.q0[2] - 0.05 else 'FELL'})")
    return 0


def resident_by_mapping(pid: int) -> dict[str, float]:
    """Resident memory [MB] of a process by kind of mapping (/proc/<pid>/smaps): the main heap
    ([heap]: the main thread's malloc arena), anonymous mappings (other threads' arenas, large
    malloc blocks, thread stacks), shared memory (/dev/shm: Fast DDS's transport), files."""
    totals: dict[str, float] = {}
    kind = "anonymous"
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if fields and "-" in fields[0] and len(fields) >= 5 and not fields[0].endswith(":"):
                path = fields[5] if len(fields) > 5 else ""
                kind = ("heap" if path == "[heap]" else "anonymous" if not path or path.startswith("[")
                        else "shared memory" if path.startswith("/dev/shm") else "files")
            elif fields and fields[0] == "Rss:":
                totals[kind] = totals.get(kind, 0.0) + int(fields[1]) / 1024.0
    return totals


class Phase(NamedTuple):
    """Figures of one phase of the bench: rates [Hz] over its wall time, RSS [MB] at its end."""

    seconds: float
    sim_end: float  # [s of sim time] at the end of the phase
    joint_states_hz: float
    accepted_hz: float
    rss_mb: float
    base_height: float
    uptime: str


def measure_phase(bench: StandingNode, run: Callable[[], None]) -> Phase:
    """Run the controller through ``run()``; the joint_states received and the commands the node
    accepted (from its /diagnostics, between the last messages before and after) per second."""
    bench.counts["joint_states"] = 0
    start_values, start_wall = bench.last_values(), bench.diagnostics_wall[-1]
    t0 = time.monotonic()
    run()
    seconds = time.monotonic() - t0
    end_values, end_wall = bench.last_values(), bench.diagnostics_wall[-1]
    accepted = int(end_values["commands_accepted"]) - int(start_values["commands_accepted"])
    accepted_hz = accepted / (end_wall - start_wall) if end_wall > start_wall else float("nan")
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return Phase(seconds, bench.trace[-1][0], bench.counts["joint_states"] / seconds, accepted_hz, bench.rss_mb(), bench.base_height[-1], uptime)


if __name__ == "__main__":
    sys.exit(main())
