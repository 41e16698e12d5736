"""Benchmark: the simulation node in real-time mode under a 1 kHz client: late ticks.

Starts ``python -m humanoid_sim.ros.sim_node`` in its own process (loop_mode realtime,
physics_dt 1 ms, real_time_factor 1, joint_states at ``--rate``, 1000 Hz by default, tf at
200 Hz) with the bundled humanoid in its stand pose, and runs in this process a holding
controller that reads every joint_states message and answers it with a command on
effort_controller/commands (bench/standing_node.py): a client publishing commands and reading
joint_states at 1 kHz. After ``--duration`` wall seconds it prints what the node's
/diagnostics report: the share of late ticks, the achieved real-time factor, mean step time,
mean and p99 tick cost (step + publishing); the joint_states / tf rates received here; the
lowest base height (the robot must stand for the whole run) and the load average at start and
end (the machine may be shared: the figures hold for that load).

    source scripts/env.sh && python bench/node_realtime.py [--duration 60] [--rate 1000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import rclpy

from standing_node import StandingNode, load_line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="wall seconds to run after start-up [s]")
    parser.add_argument("--rtf", type=float, default=1.0, help="target real-time factor")
    parser.add_argument("--rate", type=float, default=1000.0, help="joint_states rate = command rate [Hz]")
    options = parser.parse_args()

    rclpy.init()
    bench = StandingNode(f"/bench_{os.getpid()}", options.rate, options.rtf)
    try:
        bench.start()
        first, first_wall = bench.last_values(), bench.diagnostics_wall[-1]
        bench.counts.update(joint_states=0, tf=0)
        bench.base_height.clear()
        load_start = load_line()
        t0 = time.monotonic()
        bench.spin_for(options.duration)
        wall = time.monotonic() - t0
        last = bench.last_values()
        diagnostics_span = bench.diagnostics_wall[-1] - first_wall  # the wall time the two messages bracket
        load_end = load_line()
    finally:
        bench.close()
        rclpy.try_shutdown()

    ticks = int(last["ticks"]) - int(first["ticks"])
    late = int(last["late_ticks"]) - int(first["late_ticks"])
    sim_seconds = float(last["sim_time_s"]) - float(first["sim_time_s"])
    height0, heights = bench.q0[2], bench.base_height
    print(f"node realtime bench: physics_dt 1 ms, target RTF {options.rtf}, a client reading joint_states and"
          f" publishing a command for each at {options.rate:g} Hz, tf at 200 Hz (sim time)")
    print(f"  measured over {diagnostics_span:.2f} s of wall time (between the arrivals of two diagnostics messages)")
    print(f"  LATE TICKS: {late} of {ticks} ({100.0 * late / max(ticks, 1):.2f} %), schedule resets:"
          f" {int(last['schedule_resets']) - int(first['schedule_resets'])}; physics thread: {last['physics_thread_scheduling']}")
    print(f"  simulated {sim_seconds:.3f} s -> real-time factor {sim_seconds / diagnostics_span:.3f}")
    print(f"  mean step time {last['step_time_mean_ms']} ms, max {last['step_time_max_ms']} ms (whole run)")
    print(f"  tick cost (step + publishing) over the node's last 4096 ticks: "
          f"mean {last['tick_time_mean_ms']} ms, p99 {last['tick_time_p99_ms']} ms")
    print(f"  received here: joint_states {bench.counts['joint_states'] / wall:.1f} Hz, tf {bench.counts['tf'] / wall:.1f} Hz (wall)")
    print(f"  base height: start {height0:.4f} m, min {min(heights):.4f} m, end {heights[-1]:.4f} m"
          f" ({'stood' if min(heights) > height0 - 0.05 else 'FELL'} the whole run)")
    print(f"  contacts at the end: {last['contacts']}, ZMP margin {last['zmp_margin_m']} m, rejected commands {last['rejected_commands']}")
    print(f"  commands accepted {last['commands_accepted']}, ticks under the command-timeout behaviour {last['command_timeout_ticks']}")
    print(f"  at start: {load_start}")
    print(f"  at end:   {load_end}")
    if os.environ.get("BENCH_TRACE"):
        for t, x, z in bench.trace[::50]:
            print(f"    t {t:7.3f} s  base x {x:+.4f} m  z {z:.4f} m")
    return 0


if __name__ == "__main__":
    sys.exit(main())
