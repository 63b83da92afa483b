#!/bin/bash
# DLCP over kernel UDP through a real-time swemu: one network namespace per host, each attached
# to swemu running the dlcp program (configs/dlcp_netns.ini: net_af_packet ports on veths), all
# made by swemu's namespace back end from a topology this script writes.
# Up to 3 senders (swemu-dlcp send) each send 7 tensors, one per DLCP class (tensor k of a
# sender is layer k of 7: tag k, switch queue 6 - k), at once, to one receiver (swemu-dlcp recv)
# behind a port shaped to --receiver-rate: an incast that the switch's strict priority and
# selective dropping sort out. Prints each class's completion times, the receiver's summary and
# the switch's drops. Cleans up every namespace, link and process it made, also when
# interrupted. Needs root and ethtool.
#
#   tools/dlcp_netns.sh [--out DIR] [--build DIR] [--senders N] [--bytes BYTES] [--rate BPS]
#       [--receiver-rate BPS] [--bound P]
# Defaults: 3 senders x 7 tensors of 500KB at 200 Mbit/s each into 100 Mbit/s, bound 10%.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
out=/tmp/dlcp-netns
senders=3 bytes=500KB rate=200M receiver_rate=100M bound=10%

die() { echo "dlcp_netns: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n $2 ]] || die "$1: needs a value"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --out) need_value "$@"; out=$2; shift 2 ;;
    --build) need_value "$@"; build=$2; shift 2 ;;
    --senders) need_value "$@"; senders=$2; shift 2 ;;
    --bytes) need_value "$@"; bytes=$2; shift 2 ;;
    --rate) need_value "$@"; rate=$2; shift 2 ;;
    --receiver-rate) need_value "$@"; receiver_rate=$2; shift 2 ;;
    --bound) need_value "$@"; bound=$2; shift 2 ;;
    -h|--help) sed -n 2,14p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (--help lists them)" ;;
  esac
done
[[ $senders =~ ^[1-3]$ ]] || die "--senders $senders: 1, 2 or 3"
[[ $receiver_rate =~ ^[1-9][0-9]*[KMG]?$ ]] || die "--receiver-rate $receiver_rate: a rate such as 100M"
[[ $rate =~ ^[1-9][0-9]*[KMG]?$ ]] || die "--rate $rate: a rate such as 200M"
[[ $bytes =~ ^[1-9][0-9]*(B|KB|MB|KiB|MiB)?$ ]] || die "--bytes $bytes: a size such as 500KB"
[[ $bound =~ ^([0-9]|[1-9][0-9])(\.[0-9]+)?%$ ]] || die "--bound $bound: a share below 100%, such as 10%"
[[ $(id -u) == 0 ]] || die "needs root (network namespaces)"
for b in swemu/swemu tools/swemu-dlcp tools/swemu-cli; do
  [[ -x $build/$b ]] || die "$build/$b is missing: build first (cmake --build $build)"
done
for t in ethtool ip; do command -v $t >/dev/null || die "$t is not installed"; done
[[ ! -e $out || -d $out ]] || die "--out $out exists and is not a directory"
case $out in /*) ;; *) out=$PWD/$out ;; esac
dlcp=$build/tools/swemu-dlcp cli=$build/tools/swemu-cli
rx_ip=10.78.0.100
# The network is one topology file for swemu's namespace back end (swemu --topology FILE
# --backend netns, docs/cli.md): it makes the namespaces, veths and the switch, runs the hosts'
# commands, and removes everything when they end, on an error or on a signal. Written aside
# (mktemp) so that a run refused before it starts leaves --out untouched.
topo=$(mktemp /tmp/dlcp-netns-XXXXXX.topo)
trap 'rm -f "$topo" "$topo.ini"' EXIT
sock=$out/dlcp-control.sock
# The bundled switch with the receiver's port (0) shaped to --receiver-rate from the switch's
# creation (its startup script named by an absolute path, as the file moves).
{
  sed "s|^cli = |cli = $root/configs/|" "$root/configs/dlcp_netns.ini"
  printf '\n[port.0]\nrate = %s\n' "$receiver_rate"
} >"$topo.ini"
{
  echo "[topology]"
  echo "switch = dlcp $topo.ini"
  echo "host = dlcp:0 name=dlcp-rx ip=$rx_ip/24 mac=02:78:00:00:00:10"
  for s in $(seq "$senders"); do
    echo "host = dlcp:$s name=dlcp-s$s ip=10.78.0.1$s/24 mac=02:78:00:00:00:1$s"
  done
  # The switch's tables are read once every tensor has arrived, while the switch still runs.
  echo "run = dlcp-rx $dlcp recv --bind $rx_ip --tensors $((7 * senders)) --timeout 60s" \
    "--json $out/recv.json >$out/recv.log 2>&1; status=\$?;" \
    "for t in dlcp drops queues; do $cli --socket $sock show \$t >$out/\$t.txt 2>&1; done;" \
    "exit \$status"
  for s in $(seq "$senders"); do
    echo "run = dlcp-s$s sleep 0.5; $dlcp send --bind 10.78.0.1$s --to $rx_ip --tensors 7" \
      "--first-tensor $((100 * s)) --bytes $bytes --rate $rate --bound $bound --seed $s" \
      "--timeout 60s --json $out/send$s.json >$out/send$s.log 2>&1"
  done
} >"$topo"
[[ -d $out ]] && rm -f "$out"/*.log "$out"/*.json "$out"/*.txt
# swemu in the background so that INT/TERM reach this script at once; they stop swemu, which
# cleans up.
"$build/swemu/swemu" --topology "$topo" --backend netns --out-dir "$out" --run-for 120s \
  >/dev/null 2>"$topo.err" &
swemu_pid=$!
trap 'kill -TERM $swemu_pid 2>/dev/null; wait $swemu_pid; rm -f "$topo" "$topo.ini" "$topo.err"; exit 130' INT TERM
status=0
wait $swemu_pid || status=$?
trap - INT TERM
err=$(cat "$topo.err"); rm -f "$topo.err"
if [[ $status == 2 ]]; then
  echo "dlcp_netns: ${err#swemu: }" >&2
  exit 2
fi
if [[ $status != 0 ]]; then
  tail -n 3 "$out"/send*.log "$out/recv.log" >&2 2>/dev/null || true
  echo "dlcp_netns: a sender or the receiver failed ($out): ${err#swemu: }" >&2
  exit 1
fi

echo "DLCP over kernel UDP through swemu (configs/dlcp_netns.ini, net_af_packet on veths):"
echo "  $senders senders x 7 tensors of $bytes at $rate each into $receiver_rate, bound $bound"
echo "completion time per class (tag 0 = front layers, switch queue 6; tag 6 = back layers, queue 0):"
for tag in 0 1 2 3 4 5 6; do
  line="  tag $tag:"
  for s in $(seq "$senders"); do
    ms=$(awk -v t="tensor $((100 * s + tag)):" '$1" "$2 == t {print $3}' "$out/send$s.log")
    line+=" ${ms:-?} ms"
  done
  echo "$line"
done
grep '^recv:' "$out/recv.log" | sed 's/^/  /'
grep -h '^send:' "$out"/send*.log | sed 's/^/  /'
echo "  switch drops: $(grep -E 'tm_red_not_ect|tm_queue_full' "$out/drops.txt" | tr -s ' \n' ' ')"
echo "files: $out (send*.json, recv.json, dlcp.txt, drops.txt, queues.txt)"
