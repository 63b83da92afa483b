#!/bin/sh
# The engine benchmark's network in partitions (docs/performance.md, "The engine in partitions"):
# ROUNDS rounds (default 3) of one agenda, --partitions 1, --partitions 2 on threads and two MPI
# ranks (mpirun -np 2), one after another, each run's result line and windows' lines; then each
# run's median wall time. Arguments go to every run (--quick, --duration-ms N, ...). BUILD
# names the build directory (default: build beside bench/).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../../build}
rounds=${ROUNDS:-3}
bin=$build/bench/swemu_engine_bench
if [ ! -x "$bin" ]; then
  echo "partitions.sh: $bin not built (ninja -C $build swemu_engine_bench)" >&2
  exit 2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
walls=$(mktemp)
trap 'rm -f "$walls"' EXIT
run() {
  name=$1
  shift
  out=$("$@")
  echo "$out" | sed "s/^/$name: /"
  echo "$out" | tr ' ' '\n' | sed -n "s/^wall_s=/$name /p" >>"$walls"
}
i=1
while [ "$i" -le "$rounds" ]; do
  run agenda "$bin" "$@"
  run partitions1 "$bin" --partitions 1 "$@"
  run threads2 "$bin" --partitions 2 "$@"
  run ranks2 mpirun -q --oversubscribe -np 2 "$bin" "$@"
  i=$((i + 1))
done
for name in agenda partitions1 threads2 ranks2; do
  sed -n "s/^$name //p" "$walls" | sort -n |
    awk -v n="$name" '{ w[NR] = $1 } END { printf "%s median wall_s %.3f\n", n, w[int((NR + 1) / 2)] }'
done
