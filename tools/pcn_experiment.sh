#!/bin/bash
# PCN's experiment (paper section 4) in real time with real kernel TCP, without and with PCN:
# one network namespace per host, each attached to a real-time swemu running the pcn program
# (configs/pcn.ini: net_af_packet ports on veths; swemu's namespace back end makes them from a
# topology this script writes), iperf3 background flows toward the PS that
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
case $out in /*) ;; *) out=$PWD/$out ;; esac
# Each run is one topology file for swemu's namespace back end (swemu --topology FILE
# --backend netns, docs/cli.md): the switch, a namespace per host on swemu ports 0..5, and the
# hosts' commands; swemu makes and removes everything, also on an error or a signal.
topo=$(mktemp /tmp/pcn-experiment-XXXXXX.topo)
trap 'rm -f "$topo" "$topo.err"' EXIT
swemu_pid=
trap '[[ -n $swemu_pid ]] && kill -TERM $swemu_pid 2>/dev/null && wait $swemu_pid; exit 130' INT TERM
tcp="sysctl -qw net.ipv4.tcp_ecn=1 net.ipv4.tcp_congestion_control=$cc net.ipv4.tcp_no_metrics_save=1 >/dev/null || exit 97;"
# Sleeps until the absolute time $1 (ns since the epoch), in a host's shell.
until_ns() { echo "sleep \$(awk -v t=$1 -v n=\$(date +%s%N) 'BEGIN {d = (t - n) / 1e9; print (d > 0 ? d : 0)}');"; }

write_topology() {  # write_topology DIR T0 START_AT [--no-pcn]
  local dir=$1 t0=$2 start_at=$3 flag=${4:-} sock=$1/pcn-control.sock i w
  echo "[topology]"
  echo "switch = pcn $root/configs/pcn.ini"
  echo "host = pcn:0 name=pcn-ps ip=$ps_ip/24 mac=02:77:00:00:00:10"
  for w in 1 2; do echo "host = pcn:$w name=pcn-w$w ip=10.77.0.1$w/24 mac=02:77:00:00:00:1$w"; done
  for i in 1 2 3; do
    echo "host = pcn:$((i + 2)) name=pcn-bg$i ip=10.77.0.2$i/24 mac=02:77:00:00:00:1$((i + 2))"
  done
  # The PS outlives the flows; then the switch's PCN state is read while it still runs.
  echo "run = pcn-ps $tcp for p in 5201 5202 5203; do iperf3 -s -1 -p \$p >/dev/null 2>&1 & done;" \
    "$pcn ps --bind $ps_ip --duration $((duration + 4))s >$dir/ps.log 2>&1; status=\$?;" \
    "$cli --socket $sock pcn_stats >$dir/pcn_stats.json 2>&1;" \
    "$cli --socket $sock show queues >$dir/queues.txt 2>&1; exit \$status"
  for i in 1 2 3; do
    echo "run = pcn-bg$i $tcp $(until_ns "$t0") iperf3 -c $ps_ip -p 520$i -t $duration -i 0.5 -J" \
      ">$dir/bg$i.json 2>$dir/bg$i.err"
  done
  for w in 1 2; do
    echo "run = pcn-w$w $tcp $pcn ddl --ps $ps_ip --bind 10.77.0.1$w --start-at $start_at" \
      "--iterations $iterations --idle ${idle}s --burst $burst --rate $burst_rate --lead $lead" \
      "$flag --json $dir/worker$w.json >$dir/worker$w.log 2>&1"
  done
}

run() {  # run LABEL [--no-pcn]
  local dir=$out/$1 flag=${2:-} t0 status=0
  rm -rf "$dir"
  # Every host starts its flows at t0, once the switch and the PS are up (about 1.5 s).
  t0=$(( $(date +%s%N) + 3000000000 ))
  write_topology "$dir" "$t0" "$((t0 + ddl_start * 1000000000))" "$flag" >"$topo"
  "$swemu" --topology "$topo" --backend netns --out-dir "$dir" --telemetry "$dir/telemetry.csv" \
    --telemetry-period 200us --run-for "$((duration + 15))s" >/dev/null 2>"$topo.err" &
  swemu_pid=$!
  wait $swemu_pid || status=$?
  swemu_pid=
  if [[ $status == 2 ]]; then
    echo "pcn_experiment: $(sed 's/^swemu: //' "$topo.err")" >&2
    exit 2
  fi
  if [[ $status != 0 ]]; then
    tail -n 3 "$dir"/worker*.log "$dir"/bg*.err >&2 2>/dev/null || true
    echo "pcn_experiment: a worker or a background flow failed ($dir): $(sed 's/^swemu: //' "$topo.err")" >&2
    exit 1
  fi
  echo "$1: $(cat "$dir/ps.log"); switch: $(cat "$dir/pcn_stats.json")"
}

mkdir -p "$out"
echo "PCN in real time: swemu (configs/pcn.ini) on net_af_packet/veth, kernel TCP ($cc, ECN on),"
echo "  3 background iperf3 flows and 2 DDL workers to the PS behind 100 Mbit/s, 7.5 ms, 60 packets;"
echo "  ${duration} s of background, DDL from ${ddl_start} s: $iterations bursts of $burst per worker at $burst_rate, ${idle} s idle"
run without --no-pcn
run with
/usr/bin/python3 "$root/tools/pcn/pcn_report.py" --without "$out/without" --with "$out/with" \
  --rate 100M --plot "$out/queue.png"
