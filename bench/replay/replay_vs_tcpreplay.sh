#!/usr/bin/env bash
# swemu-replay against tcpreplay, into the same veth (as root). A network namespace holds one end
# of a veth pair; both tools send a swemu-gen trace into the other end at 10 kpps, 100 kpps,
# 1 Mpps and top speed, and a capture on the far end (tcpdump, or dumpcap from tshark, with
# nanosecond timestamps) measures what arrived: achieved pps and the error of the gaps between
# frames against the intended gap (p50, p99, max; at top speed the intended gap is 0, so the
# "error" is the gap itself). Then swemu-replay's DPDK speed: --topspeed into net_null and
# net_ring. Prints a table of medians over the rounds; takes about 100 s at 5 rounds.
#
#   bench/replay/replay_vs_tcpreplay.sh [--build DIR] [--reps N] [--keep]
#
# --build DIR  the build with tools/swemu-gen and tools/swemu-replay (default: build)
# --reps N     rounds; each runs every rate with both tools, alternating (default: 5)
# --keep       keep the work directory (traces, captures, each tool's own report)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build"
keep=0
reps=5
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --keep) keep=1; shift ;;
    --reps) reps="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "replay_vs_tcpreplay.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

die() { echo "replay_vs_tcpreplay.sh: $*" >&2; exit 2; }
[[ "$reps" =~ ^[1-9][0-9]?$ ]] || die "--reps $reps: give 1 to 99"
[ "$(id -u)" = 0 ] || die "run as root (network namespaces, veth, raw sockets)"
gen="$build/tools/swemu-gen"
replay="$build/tools/swemu-replay"
[ -x "$gen" ] && [ -x "$replay" ] || die "$build/tools has no swemu-gen or swemu-replay (build them)"
command -v tcpreplay >/dev/null || die "tcpreplay is not installed (apt-get install tcpreplay)"
python=/usr/bin/python3
[ -x "$python" ] || die "$python is missing"
if command -v tcpdump >/dev/null; then
  capturer=tcpdump
elif command -v dumpcap >/dev/null; then
  capturer=dumpcap
else
  die "neither tcpdump nor dumpcap (tshark) is installed"
fi

tag=$$
ns="swemu-rb-$tag"
a="srbA$tag"   # our end, in the root namespace
b="srbB$tag"   # the capture end, in $ns
work="$(mktemp -d /tmp/swemu-replay-bench.XXXXXX)"
capture_pid=""
cleanup() {
  if [ -n "$capture_pid" ]; then kill -INT "$capture_pid" 2>/dev/null || true; wait "$capture_pid" 2>/dev/null || true; fi
  ip link del "$a" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "/var/run/dpdk/rb-$tag"
  if [ "$keep" = 1 ]; then echo "work directory: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

ip netns add "$ns"
ip link add "$a" type veth peer name "$b" netns "$ns"
sysctl -qw "net.ipv6.conf.$a.disable_ipv6=1"   # no router solicitations in the capture
ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$b.disable_ipv6=1"
ip link set "$a" up
ip -n "$ns" link set "$b" up
ip -n "$ns" link set lo up

# 20000 UDP frames of 128 bytes; each run loops it for about a second of traffic or 500k frames.
trace="$work/trace.pcap"
"$gen" -o "$trace" -n 20000 --size 128 --rate 1G >/dev/null

# What else the machine is doing, at the start and the end: another build (compilers), other
# tests or switches (swemu*, *_tests, ctest, dpdk-*), and the load.
activity() {
  local compilers others
  compilers=$(ps -e -o comm= | grep -c -E '^(cc1plus|cc1|c\+\+|g\+\+|clang.*|ninja|make|ld)$' || true)
  others=$(ps -e -o comm= | grep -c -E '^(swemu.*|.*_tests|ctest|dpdk-.*|tcpreplay)$' || true)
  echo "$compilers compiler and $others swemu/test processes, load $(cut -d' ' -f1-3 /proc/loadavg)"
}
activity_start="$(activity)"

cpus=$(nproc)
send_cpu=$((cpus > 1 ? 1 : 0))   # the sender on one core, the capture on the other
capture_cpu=0

start_capture() {
  local file="$1"
  : >"$work/capture.err"
  if [ "$capturer" = tcpdump ]; then
    local stamp=()
    if ip netns exec "$ns" tcpdump -J -i "$b" 2>/dev/null | grep -q adapter_unsynced; then
      stamp=(-j adapter_unsynced)
    fi
    taskset -c "$capture_cpu" ip netns exec "$ns" tcpdump -i "$b" "${stamp[@]}" \
      --time-stamp-precision nano -B 65536 -w "$file" udp 2>"$work/capture.err" &
  else
    taskset -c "$capture_cpu" ip netns exec "$ns" dumpcap -q -i "$b" -B 64 -f udp -w "$file" \
      2>"$work/capture.err" &
  fi
  capture_pid=$!
  for _ in $(seq 100); do   # up to 5 s for the capture to start
    grep -qiE "listening on|capturing on" "$work/capture.err" && break
    sleep 0.05
  done
  sleep 0.2
}

stop_capture() {
  sleep 0.3
  kill -INT "$capture_pid"
  wait "$capture_pid" 2>/dev/null || true
  capture_pid=""
}

# run TOOL RATE: RATE is packets/s or "top"; appends a line to $results
results="$work/results.txt"
: >"$results"
run() {
  local tool="$1" rate="$2" loops gap pace_tcpreplay pace_swemu
  case "$rate" in
    10000) loops=1 ;;     # 20000 frames, 2 s
    100000) loops=5 ;;    # 100000 frames, 1 s
    *) loops=25 ;;        # 500000 frames
  esac
  if [ "$rate" = top ]; then
    gap=0; pace_tcpreplay=(--topspeed); pace_swemu=(--topspeed)
  else
    gap=$((1000000000 / rate)); pace_tcpreplay=(--pps="$rate"); pace_swemu=(--pps "$rate")
  fi
  local cap="$work/$tool-$rate.pcap" out="$work/$tool-$rate-$round.out"
  start_capture "$cap"
  if [ "$tool" = tcpreplay ]; then
    taskset -c "$send_cpu" tcpreplay -i "$a" "${pace_tcpreplay[@]}" --loop="$loops" "$trace" \
      >"$out" 2>&1
  else
    taskset -c "$send_cpu" "$replay" --iface "$a" --in "$trace" "${pace_swemu[@]}" \
      --loop "$loops" --wait 0 >"$out" 2>&1
  fi
  stop_capture
  [ -s "$cap" ] || die "the capture wrote nothing: $(tr '\n' ' ' <"$work/capture.err")"
  local own="- -"
  if [ "$tool" = swemu-replay ]; then   # its own measurement, at the hand-over to the socket
    own=$(sed -n 's/^gap error.* p50 \([0-9.]*\) us, p99 \([0-9.]*\) us.*/\1 \2/p' "$out")
  fi
  echo "$rate $tool $((20000 * loops)) $("$python" "$here/capture_gaps.py" "$cap" "$gap") $own" \
    >>"$results"
  rm -f "$cap"
}

for round in $(seq "$reps"); do
  for rate in 10000 100000 1000000 top; do
    run tcpreplay "$rate"
    run swemu-replay "$rate"
  done
done

echo "swemu-replay against tcpreplay: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $reps rounds"
echo "machine: at the start $activity_start; at the end $(activity)"
echo "capture: $capturer on the veth peer in a netns ($(grep -qs adapter_unsynced "$work/capture.err" && echo adapter_unsynced || echo host) timestamps, ns); 128-byte UDP frames"
echo "tcpreplay $(tcpreplay --version 2>&1 | sed -n '1s/^tcpreplay version: //p')"
echo
"$python" - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    rate, tool, sent, frames, pps, p50, p99, mx, own50, own99 = line.split()
    rows.setdefault((rate, tool), []).append((sent, frames, pps, p50, p99, mx, own50, own99))
def med(values):
    values = [float(v) for v in values if v not in ("-", "inf")]
    return statistics.median(values) if values else float("nan")
print("| rate pps | tool | frames sent | captured (min) | achieved pps | gap error p50 (us) "
      "| p99 (us) | max (us) | own p50 / p99 (us) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|")
for (rate, tool), runs in rows.items():
    col = list(zip(*runs))
    own = "-" if tool == "tcpreplay" else "%.3f / %.3f" % (med(col[6]), med(col[7]))
    print("| %s | %s | %s | %d | %.0f | %.2f | %.2f | %.1f (%s) | %s |" % (
        rate, tool, col[0][0], min(int(v) for v in col[1]), med(col[2]), med(col[3]),
        med(col[4]), max(float(v) for v in col[5]), ", ".join(col[5]), own))
PY
echo
echo "medians over the rounds; max: the largest, then each round's. gap error = |gap between"
echo "consecutive captured frames - intended gap| (intended 0 at top speed). own = swemu-replay's"
echo "own report, timed when each frame (or burst) is handed to the socket."

# DPDK: how fast swemu-replay hands frames to a PMD (no hugepages needed).
dpdk() {
  local devargs="$1"
  taskset -c "$send_cpu" "$replay" --port "$devargs" --in "$trace" --topspeed --preload --loop 0 \
    --duration 2 --wait 0 -- -l "$send_cpu" --no-pci --no-huge -m 256 --file-prefix "rb-$tag" \
    >"$work/dpdk.out" 2>&1 || { echo "$devargs: failed: $(tail -1 "$work/dpdk.out")"; return; }
  local achieved
  achieved=$(sed -n 's/.*; achieved \([0-9.]*\) pps.*/\1/p' "$work/dpdk.out")
  printf '%s: %s Mpps (128-byte frames, --topspeed --preload, 2 s)\n' "$devargs" \
    "$("$python" -c "print('%.2f' % ($achieved / 1e6))")"
}
echo
dpdk net_null0
dpdk net_ring0
