#!/usr/bin/env bash
# One-command setup on a fresh Debian 12 machine with Python 3.11 (or any machine with
# CPython 3.11): creates .venv, installs the pinned ROS 2 wheels and Python dependencies
# from PyPI, builds the tf2_msgs and simulation_interfaces interface packages into the venv
# when they are not importable and the project's own humanoid_sim_interfaces when it changes,
# installs humanoid_sim itself (registered in the ament index inside the venv), then
# compiles its numba kernels for that installed copy.
# Idempotent: a second run with nothing changed only checks stamps and takes seconds.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
cd "$ROOT"

log() { printf '[setup] %s\n' "$*"; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

APT_UPDATED=0
apt_install() {
  command -v apt-get >/dev/null 2>&1 || { log "missing $*, and no apt-get to install it"; exit 1; }
  if [ "$APT_UPDATED" -eq 0 ]; then as_root apt-get update -qq; APT_UPDATED=1; fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

pick_python() {
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

hash_of() { cat "$@" 2>/dev/null | sha256sum | cut -d' ' -f1; }

# 1. The virtual environment (CPython 3.11: the ROS 2 wheels are built for cp311).
if [ ! -x "$VENV/bin/python" ]; then
  PY="$(pick_python)" || { log "CPython 3.11 is required (python3.11 or python3)"; exit 1; }
  if ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then apt_install python3-venv; fi
  log "creating $VENV with $PY"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
fi
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)

# 2. Pinned dependencies, reinstalled only when the requirement files change.
REQ_STAMP="$VENV/.stamp-requirements"
req_hash="$(hash_of requirements.txt requirements-test.txt)"
if [ "$(cat "$REQ_STAMP" 2>/dev/null)" != "$req_hash" ]; then
  log "installing pinned dependencies (first run: a few minutes)"
  "${PIP[@]}" -r requirements.txt -r requirements-test.txt
  echo "$req_hash" > "$REQ_STAMP"
fi

# 3. Interface packages no registry ships, built into the venv with the rosidl wheels:
#    the stand-ins tools/tf2_msgs and tools/simulation_interfaces when the package is not
#    importable; the project's own interfaces/humanoid_sim_interfaces whenever its files change.
build_interfaces() {
  local name="$1" check="$2" source="${3:-tools/$1}"  # check: a module the package must provide
  local stamp="$VENV/.stamp-interfaces-$name" source_hash=""
  if [ "$source" = "tools/$name" ]; then
    "$VENV/bin/python" -c "import $check" >/dev/null 2>&1 && return 0
  else
    source_hash="$(git ls-files -co --exclude-standard "$source" 2>/dev/null | sort | xargs -r sha256sum | sha256sum | cut -d' ' -f1)"
    [ "$(cat "$stamp" 2>/dev/null)" = "$source_hash" ] &&
      "$VENV/bin/python" -c "import $check" >/dev/null 2>&1 && return 0
  fi
  log "building the $name interface package into the venv"
  command -v cmake >/dev/null 2>&1 || apt_install cmake
  command -v g++ >/dev/null 2>&1 || apt_install g++ make
  local py_include build_dir
  py_include="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  [ -f "$py_include/Python.h" ] || apt_install python3-dev
  build_dir="$ROOT/build/$name"
  rm -rf "$build_dir"; mkdir -p "$build_dir"
  (
    cd "$build_dir"
    export CMAKE_PREFIX_PATH="$VENV" AMENT_PREFIX_PATH="$VENV"
    PATH="$VENV/bin:$PATH" cmake "$ROOT/$source" -DCMAKE_INSTALL_PREFIX="$VENV" \
      -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF >cmake.log 2>&1 &&
    PATH="$VENV/bin:$PATH" make -j"$(nproc)" >make.log 2>&1 && make install >install.log 2>&1
  ) || { log "$name build failed; see $build_dir/*.log"; tail -30 "$build_dir"/*.log; exit 1; }
  "$VENV/bin/python" -c "import $check" || { log "$name still not importable"; exit 1; }
  [ -z "$source_hash" ] || echo "$source_hash" > "$stamp"
}
# The rosidl wheels' exported CMake targets name the paths they were built in (a CPython under
# /opt/python): links there point them at this venv's headers. They are machine-wide, so they are
# checked on every run: another checkout's setup may have pointed them at its own venv, since
# removed (colcon builds of the interfaces then fail with "includes non-existent path").
link_wheel_paths() {
  local wheel_py=/opt/python/cp311-cp311 py_include np_include
  py_include="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  np_include="$("$VENV/bin/python" -c 'import numpy; print(numpy.get_include())')"
  as_root mkdir -p "$wheel_py/include" "$wheel_py/lib/python3.11/site-packages/numpy/_core"
  [ -e "$wheel_py/include/python3.11" ] || as_root ln -sfn "$py_include" "$wheel_py/include/python3.11"
  local np_link="$wheel_py/lib/python3.11/site-packages/numpy/_core/include"
  [ "$(readlink "$np_link")" = "$np_include" ] || as_root ln -sfn "$np_include" "$np_link"
}
link_wheel_paths
build_interfaces tf2_msgs tf2_msgs.msg
build_interfaces simulation_interfaces simulation_interfaces.srv._spawn_entity
build_interfaces humanoid_sim_interfaces humanoid_sim_interfaces.msg interfaces/humanoid_sim_interfaces

# 3b. Chromium, headless: the browser view's test screenshots the scene with it (skipped without).
if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then apt_install chromium; else log "no chromium and no apt-get: the browser view's test will be skipped"; fi
fi

# 4. humanoid_sim itself (with its share/ files and ament index entry), when its files change.
PKG_STAMP="$VENV/.stamp-package"
pkg_hash="$(git ls-files -co --exclude-standard setup.py setup.cfg package.xml resource \
  humanoid_sim launch urdf config 2>/dev/null | sort | xargs -r sha256sum | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$PKG_STAMP" 2>/dev/null)" != "$pkg_hash" ]; then
  log "installing humanoid_sim into the venv"
  "${PIP[@]}" --no-deps --no-build-isolation . >/dev/null
  rm -rf "$ROOT/build/lib" "$ROOT/build/bdist."* "$ROOT"/*.egg-info
  # pip puts console scripts in bin/; ros2 run and launch_ros look in lib/<package>/.
  mkdir -p "$VENV/lib/humanoid_sim"
  for exe in $("$VENV/bin/python" -c 'from importlib.metadata import entry_points
print(" ".join(e.name for e in entry_points(group="console_scripts") if e.value.startswith("humanoid_sim.")))'); do
    ln -sfn "$VENV/bin/$exe" "$VENV/lib/humanoid_sim/$exe"
  done
  echo "$pkg_hash" > "$PKG_STAMP"
fi

# 5. The numba kernels of the installed copy (what ros2 run / ros2 launch start), compiled once
#    per install or kernel change: the first start then loads them in seconds. Run from / so
#    that the installed copy is imported, not the source tree.
if ! (cd / && "$VENV/bin/python" -P -c 'import sys; from humanoid_sim.numba_cache import kernels_cached
sys.exit(0 if kernels_cached() else 1)') >/dev/null 2>&1; then
  log "compiling the physics and controller kernels of the installed package (once per install; ~6 min on 2 cores)"
  # shellcheck source=env.sh
  if ! (source "$ROOT/scripts/env.sh" && cd / && python -P -m humanoid_sim.ros.warm_kernels | sed 's/^/[setup] /'); then
    log "warning: the kernels could not be compiled now; the first start of the node compiles them"
  fi
fi
log "ready: source scripts/env.sh to use $VENV"
