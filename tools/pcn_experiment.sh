#!/bin/bash
# PCN's experiment (paper section 4) in real time with real kernel TCP, without and with PCN:
# one network namespace per host, each attached to a real-time swemu running the pcn program
# (configs/pcn.ini: net_af_packet ports on veths), iperf3 background flows toward the PS that
# share its 100 Mbit/s port, then DDL workers (swemu-pcn ddl) sending announced, paced bursts
# over kernel TCP with network-idle periods between them. Prints the paper's metrics side by
# side (tools/pcn/pcn_report.py) and writes OUT/queue.png. Cleans up every namespace, link and
# process it made, also when interrupted. Needs root, iperf3 and ethtool.
#
#   tools/pcn_experiment.sh [--out DIR] [--build DIR] [--paper] [--duration S] [--ddl-start S]
#       [--idle S] [--iterations N] [--burst BYTES] [--burst-rate BPS] [--lead DURATION]
#       [--cc reno|cubic|dctcp]
# Defaults are the paper's setting scaled to 40 s (background 40 s, DDL from 5 s, 6 bursts of
# 500 KB per worker with 3 s idle); --paper runs its 100 s, DDL from 20 s, 7 s idle.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
out=/tmp/pcn-experiment
duration=40 ddl_start=5 idle=3 iterations=6 burst=500KB burst_rate=30M lead=40ms cc=reno

die() { echo "pcn_experiment: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n $2 ]] || die "$1: needs a value"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --out) need_value "$@"; out=$2; shift 2 ;;
    --build) need_value "$@"; build=$2; shift 2 ;;
    --paper) duration=100 ddl_start=20 idle=7; shift ;;
    --duration) need_value "$@"; duration=$2; shift 2 ;;
    --ddl-start) need_value "$@"; ddl_start=$2; shift 2 ;;
    --idle) need_value "$@"; idle=$2; shift 2 ;;
    --iterations) need_value "$@"; iterations=$2; shift 2 ;;
    --burst) need_value "$@"; burst=$2; shift 2 ;;
    --burst-rate) need_value "$@"; burst_rate=$2; shift 2 ;;
    --lead) need_value "$@"; lead=$2; shift 2 ;;
    --cc) need_value "$@"; cc=$2; shift 2 ;;
    -h|--help) sed -n 2,16p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (--help lists them)" ;;
  esac
done
for v in duration ddl_start idle iterations; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "--${v//_/-} ${!v}: a whole number of seconds (iterations: a count)"
done
(( duration > ddl_start )) || die "--ddl-start $ddl_start must be before the end (--duration $duration)"
(( iterations >= 1 )) || die "--iterations: at least 1"
[[ $cc =~ ^(cubic|reno|dctcp)$ ]] || die "--cc $cc: reno, cubic or dctcp"
[[ $(id -u) == 0 ]] || die "needs root (network namespaces)"
for b in swemu/swemu tools/swemu-pcn tools/swemu-cli; do
  [[ -x $build/$b ]] || die "$build/$b is missing: build first (cmake --build $build)"
done
for t in iperf3 ethtool ip; do command -v $t >/dev/null || die "$t is not installed"; done
[[ ! -e $out || -d $out ]] || die "--out $out exists and is not a directory"
if [[ $cc == dctcp ]]; then modprobe tcp_dctcp 2>/dev/null || die "--cc dctcp: no tcp_dctcp module"; fi
# A namespace may use only what the host allows (BBR, a common default, ignores ECN).
allowed=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
[[ " $allowed " == *" $cc "* ]] ||
  die "--cc $cc: not in net.ipv4.tcp_allowed_congestion_control ($allowed); add it there or pick one of those"

swemu=$build/swemu/swemu pcn=$build/tools/swemu-pcn cli=$build/tools/swemu-cli
ps_ip=10.77.0.100
source "$root/tools/common/netns.sh"
NETNS_NAMES=(pcn-ps pcn-w1 pcn-w2 pcn-bg1 pcn-bg2 pcn-bg3)   # on swemu ports 0..5
NETNS_IPS=($ps_ip 10.77.0.11 10.77.0.12 10.77.0.21 10.77.0.22 10.77.0.23)
NETNS_LINK=pcn-sw NETNS_MAC=02:77:00:00:00:1 NETNS_TAG=pcn_experiment
NETNS_SWEMU=$swemu NETNS_CLI=$cli
NETNS_PIDS=()
netns_lock
netns_trap

setup() {
  netns_setup
  for ns in "${NETNS_NAMES[@]}"; do
    ip netns exec "$ns" sysctl -qw net.ipv4.tcp_ecn=1 net.ipv4.tcp_congestion_control="$cc" \
      net.ipv4.tcp_no_metrics_save=1 >/dev/null ||
      { echo "pcn_experiment: cannot set TCP $cc with ECN in $ns" >&2; exit 1; }
  done
}

run() {  # run LABEL [--no-pcn]
  local dir=$out/$1 flag=${2:-}
  rm -rf "$dir"; mkdir -p "$dir"
  NETNS_PIDS=()
  local sock=$out/swemu.sock
  netns_swemu "$root/configs/pcn.ini" "$sock" "$dir/swemu.log" --telemetry "$dir/telemetry.csv" \
    --telemetry-period 200us --run-for "$((duration + 15))s"
  ip netns exec pcn-ps "$pcn" ps --bind $ps_ip --duration "$((duration + 8))s" >"$dir/ps.log" 2>&1 &
  NETNS_PIDS+=($!)
  for i in 1 2 3; do
    ip netns exec pcn-ps iperf3 -s -1 -p "520$i" >/dev/null 2>&1 &
    NETNS_PIDS+=($!)
  done
  sleep 0.5
  local t0 start_at
  t0=$(date +%s%N)
  start_at=$((t0 + ddl_start * 1000000000))
  local bg=() workers=()
  for i in 1 2 3; do
    ip netns exec "pcn-bg$i" iperf3 -c $ps_ip -p "520$i" -t "$duration" -i 0.5 -J \
      >"$dir/bg$i.json" 2>"$dir/bg$i.err" &
    bg+=($!); NETNS_PIDS+=($!)
  done
  for w in 1 2; do
    ip netns exec "pcn-w$w" "$pcn" ddl --ps $ps_ip --bind "10.77.0.1$w" --start-at "$start_at" \
      --iterations "$iterations" --idle "${idle}s" --burst "$burst" --rate "$burst_rate" \
      --lead "$lead" $flag --json "$dir/worker$w.json" >"$dir/worker$w.log" 2>&1 &
    workers+=($!); NETNS_PIDS+=($!)
  done
  local failed=0
  for pid in "${workers[@]}" "${bg[@]}"; do wait "$pid" || failed=1; done
  if [[ $failed == 1 ]]; then
    tail -n 3 "$dir"/worker*.log "$dir"/bg*.err >&2 || true
    echo "pcn_experiment: a worker or a background flow failed ($dir)" >&2
    exit 1
  fi
  "$cli" --socket "$sock" pcn_stats >"$dir/pcn_stats.json" 2>&1 || true
  "$cli" --socket "$sock" show queues >"$dir/queues.txt" 2>&1 || true
  for pid in "${NETNS_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  NETNS_PIDS=()
  echo "$1: $(cat "$dir/ps.log"); switch: $(cat "$dir/pcn_stats.json")"
}

mkdir -p "$out"
echo "PCN in real time: swemu (configs/pcn.ini) on net_af_packet/veth, kernel TCP ($cc, ECN on),"
echo "  3 background iperf3 flows and 2 DDL workers to the PS behind 100 Mbit/s, 7.5 ms, 60 packets;"
echo "  ${duration} s of background, DDL from ${ddl_start} s: $iterations bursts of $burst per worker at $burst_rate, ${idle} s idle"
setup
run without --no-pcn
run with
/usr/bin/python3 "$root/tools/pcn/pcn_report.py" --without "$out/without" --with "$out/with" \
  --rate 100M --plot "$out/queue.png"
