#!/bin/sh
# The engine against ns-3 (bench/engine/README.md): runs swemu's side, then ns-3's, each alone
# and pinned to one core, on the same leaf-spine and flows; prints both result lines and the
# ratio of their packet-hops per wall second. Arguments go to both (--quick, --duration-ms N, ...).
# BUILD names the build directory (default: build beside bench/), CORE the core (default 1).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../../build}
core=${CORE:-1}
swemu_bin=$build/bench/swemu_engine_bench
ns3_bin=$build/bench/ns3_engine_bench
if [ ! -x "$swemu_bin" ]; then
  echo "compare.sh: $swemu_bin not built (ninja -C $build swemu_engine_bench)" >&2
  exit 2
fi
if [ ! -x "$ns3_bin" ]; then
  echo "compare.sh: ns-3 side not built: apt-get install -y --no-install-recommends libns3-dev, then cmake $build && ninja -C $build ns3_engine_bench" >&2
  exit 2
fi
swemu_line=$(taskset -c "$core" "$swemu_bin" "$@")
echo "$swemu_line"
ns3_line=$(taskset -c "$core" "$ns3_bin" "$@")
echo "$ns3_line"
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
awk -v a="$(field "$swemu_line" hops_per_s)" -v b="$(field "$ns3_line" hops_per_s)" \
  'BEGIN { printf "ratio swemu/ns-3 packet-hops per wall second: %.1f\n", a / b }'
