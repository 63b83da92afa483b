#!/bin/sh
# The virtual-time engine at scale (docs/performance.md, "The engine at scale"): swemu-dlcp sim
# at a fixed load per host (jobs of 12 hosts, --job-hosts 12, each one PS iteration of ResNet-50
# / 64 with 3 PSs) on leaf-spines of 12 to 192 hosts, two ToR uplinks per four hosts. Prints one
# row per fabric: hosts, flows and packet-hops and events of both runs (DLCP + DCTCP), wall
# seconds, the process's CPU seconds (user + system: less sensitive to a busy machine), ns of CPU
# per packet-hop, max RSS, RSS per host and per flow.
# With MEASURE `instructions` each run goes under valgrind's cachegrind (no cache simulation,
# about 11x slower) and the row gives the instructions the process executed per packet-hop
# instead: a count that neither the machine's load nor its caches change, so one round settles
# whether the work per packet-hop grows with the fabric.
# usage: tools/engine_scale.sh [BUILD_DIR] [SHAPES] [cpu|instructions]
#        SHAPES: "TORSxHOSTSxSPINES ..."
set -eu
build=${1:-build}
shapes=${2:-"3x4x2 6x4x2 6x8x4 12x8x4 12x16x8"}
measure=${3:-cpu}
tool="$build/tools/swemu-dlcp"
[ -x "$tool" ] || { echo "engine_scale.sh: $tool not built (ninja -C $build swemu-dlcp)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "engine_scale.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
case "$measure" in
  cpu) ;;
  instructions)
    command -v valgrind >/dev/null ||
      { echo "engine_scale.sh: instructions needs valgrind (apt-get install valgrind)" >&2; exit 2; } ;;
  *) echo "engine_scale.sh: MEASURE must be cpu or instructions, not '$measure'" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$measure" = instructions ]; then
  printf '| hosts | fabric | flows | packet-hops | events | instructions | instructions per packet-hop |\n'
  printf '| ---: | --- | ---: | ---: | ---: | ---: | ---: |\n'
  for shape in $shapes; do
    tors=${shape%%x*}; rest=${shape#*x}; per=${rest%%x*}; spines=${rest#*x}
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null --log-file="$tmp/cg" \
      "$tool" sim --tors "$tors" --hosts-per-tor "$per" --spines "$spines" --job-hosts 12 \
      --engine-stats > "$tmp/out"
    refs=$(awk '/I +refs:/ { gsub(",", "", $NF); print $NF }' "$tmp/cg")
    awk -v hosts=$((tors * per)) -v shape="$tors x $per, $spines spines" -v refs="$refs" '
      /^engine / { flows += $3; events += $5; hops += $7 }
      END { printf "| %d | %s | %d | %d | %d | %.0f | %.0f |\n", hosts, shape, flows, hops, events,
                   refs, refs / hops }' "$tmp/out"
  done
  exit 0
fi
printf '| hosts | fabric | flows | packet-hops | events | wall s | CPU s | ns per packet-hop | max RSS MB | KB per host | KB per flow |\n'
printf '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n'
for shape in $shapes; do
  tors=${shape%%x*}; rest=${shape#*x}; per=${rest%%x*}; spines=${rest#*x}
  /usr/bin/time -f '%M %U %S' -o "$tmp/rss" "$tool" sim --tors "$tors" --hosts-per-tor "$per" \
    --spines "$spines" --job-hosts 12 --engine-stats > "$tmp/out"
  read -r rss user sys < "$tmp/rss"
  awk -v hosts=$((tors * per)) -v shape="$tors x $per, $spines spines" -v rss="$rss" \
    -v user="$user" -v sys="$sys" '
    /^engine / { flows += $3; events += $5; hops += $7; match($0, /[0-9.]+ s wall/);
                 wall += substr($0, RSTART, RLENGTH - 7) }
    END {
      cpu = user + sys
      printf "| %d | %s | %d | %d | %d | %.2f | %.2f | %.0f | %.0f | %.0f | %.1f |\n", hosts, shape,
             flows, hops, events, wall, cpu, cpu * 1e9 / hops, rss / 1024, rss / hosts, rss / flows
    }' "$tmp/out"
done
