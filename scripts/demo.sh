#!/usr/bin/env bash
# Set up (idempotent), then run the demo: the bundled humanoid in the simulator, with progress
# printed; exits by itself after --duration seconds of simulated time (default below), or on
# Ctrl-C, cleanly. Extra arguments go to the demo (see --help).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
# shellcheck source=env.sh
source "$ROOT/scripts/env.sh"
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( (RANDOM % 100) + 101 ))}"
cd "$ROOT"
# -P: the copy setup.sh installed and compiled, not the source tree beside it (numba keeps
# compiled kernels per folder: the source tree's would compile again, ~6 min on 2 cores).
exec python -P -m humanoid_sim.ros.demo "$@"
