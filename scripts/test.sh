#!/usr/bin/env bash
# Set up (idempotent), then run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
# shellcheck source=env.sh
source "$ROOT/scripts/env.sh"
# A private DDS domain per run, so concurrent runs on one machine do not hear each other.
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( (RANDOM % 100) + 1 ))}"
cd "$ROOT"
exec python -m pytest "$@"
