#!/usr/bin/env bash
# One forwarding lcore against two ([dpdk] workers = 1 on -l 1, workers = 2 on -l 0,1) for the
# `wire`, `l2l3` and `atp` programs on vdevs that need no traffic process. Prints Mpps and the
# 2/1 ratio, with the load average at each run's start, and writes the table to
# BUILD/scaling.txt (logs and configs in BUILD/scaling/). See docs/performance.md, "More than one
# lcore".
#
#   bench/realtime/scaling.sh [--build DIR] [--quick] [--reps N]     (as root; needs /usr/bin/python3)
#
#   --build DIR  Release build directory with swemu and swemu-gen (default build-rel)
#   --quick      one round (default 3)
#   --reps N     N rounds
#
# Setups (64-byte frames unless said; unshaped ports, --busy-poll):
#   wire null   net_null (copy=1): all-zero frames, both ports; wire patches 0 <-> 1.
#   l2l3 null   the same frames, bridged to port 1 (l2l3.cli): a 2:1 fan-in.
#   l2l3 pcap   net_pcap, infinite_rx: 1024 UDP frames of 16 flows each way (swemu-gen).
#   atp  pcap   net_pcap, infinite_rx on ports 0 and 1: swemu-gen's gradients of a 4-worker job
#               (configs/atp_rack.cli), each seq's 4 gradients followed by the first of them
#               again with the resend flag, all in one port's file (seqs split by (seq >> 1) & 1).
#               Each pass of a seq claims its aggregator, adds twice, completes (the sum goes to
#               the PS, port 4) and the resend frees it, so the replay aggregates forever without
#               a PS. Port 4 is net_pcap with an empty rx file and no tx file (the PMD frees tx).
# Figure: wire and l2l3, forwarded Mpps (tx of every port); atp, received Mpps (rx of every
# port: 3 of each 5 frames are consumed by design). The median of three 1-second
# --stats-interval lines after a 1-second warm-up; over rounds, the median of the figures and of
# the rounds' ratios. Rounds alternate which lcore count runs first. Beside them, each lcore's
# share of a CPU over 2 of those seconds (/proc: on a shared machine an lcore gets what the
# other jobs leave) and CPU ns per packet (the shares summed over Mpps: with one lcore, its cost
# per packet whatever the load; with two, it also counts an lcore spinning while its peer is
# descheduled). No hugepages are assumed: --no-huge -m 512 unless 1 GiB of hugepages is free.
# With fewer than 3 free CPUs (the CPUs less the load average at the start) the table says in
# one line that it cannot show scaling: the two lcores then share CPUs with everything else.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/bench/realtime
BUILD=$ROOT/build-rel
REPS=3
WARMUP=1
INTERVALS=3

SCRIPT=scaling.sh
# shellcheck source=bench/realtime/options.sh
source "$ROOT/bench/realtime/options.sh"

while [[ $# -gt 0 ]]; do
  case $1 in
    --build) BUILD=$(value "$@") || exit 2; BUILD=$(realpath -m "$BUILD"); shift 2 ;;
    --quick) REPS=1; shift ;;
    --reps) REPS=$(value "$@") || exit 2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^set -u/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "scaling.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

OUT=$BUILD/scaling
SWEMU=$BUILD/swemu/swemu
GEN=$BUILD/tools/swemu-gen
TAG=scl$$
for bin in "$SWEMU" "$GEN"; do
  [[ -x $bin ]] ||
    { echo "scaling.sh: no $bin (cmake --build $BUILD --target swemu swemu-gen)" >&2; exit 2; }
done
mkdir -p "$OUT"
cd "$OUT" || exit 1

note() { echo "scaling.sh: $*" >&2; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'; }
median_of() {
  printf '%s\n' "$@" | grep -v '^-*$' | median | { read -r m && echo "$m" || echo "-"; }
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {
  if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.3f", a / b }'; }
load1() { awk '{print $1}' /proc/loadavg; }
# DPDK leaves its runtime directory and, with hugepages, its page files (<prefix>map_N) behind.
cleanup_prefix() {
  rm -rf "/var/run/dpdk/$1"
  local mnt
  for mnt in $(awk '$3 == "hugetlbfs" {print $2}' /proc/mounts); do rm -f "$mnt/$1"map_*; done
}

EAL_MEM="--no-huge -m 512"
MEM_NOTE="4 KiB pages (--no-huge)"
if awk '/HugePages_Free/ {f = $2} /Hugepagesize/ {s = $2} END {exit !(f * s >= 1048576)}' \
    /proc/meminfo; then
  EAL_MEM="-m 512"
  MEM_NOTE="hugepages"
fi

# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

# Writes atp0.pcap and atp1.pcap from swemu-gen's merged pcap $1 (see the header): per seq its
# gradients in file order, then the first of them again with the resend flag (ATP header byte 0,
# bit 4; the parser does not check UDP checksums); and empty.pcap, no frames. Prints how many
# frames it wrote.
atp_cycles() {
  /usr/bin/python3 - "$1" atp0.pcap atp1.pcap <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
end = '<' if data[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
seqs = {}
at = 24
while at < len(data):
    incl = struct.unpack_from(end + 'I', data, at + 8)[0]
    frame = data[at + 16:at + 16 + incl]
    at += 16 + incl
    if len(frame) >= 58 and frame[23] == 17 and frame[36:38] == b'\x23\x28':  # UDP to 9000
        seqs.setdefault(struct.unpack_from('>I', frame, 50)[0], []).append(frame)
outs = [open(name, 'wb') for name in sys.argv[2:4] + ['empty.pcap']]
for out in outs:
    out.write(data[:24])
for seq, frames in seqs.items():
    resend = bytearray(frames[0])
    resend[42] |= 0x10
    for frame in frames + [bytes(resend)]:
        outs[(seq >> 1) & 1].write(struct.pack(end + 'IIII', 0, 0, len(frame), len(frame)) + frame)
print(sum(len(frames) + 1 for frames in seqs.values()))
EOF
}

"$GEN" --out udp0.pcap --count 1024 --size 64 --flows 16 --src-mac 00:00:00:00:00:03 \
  --dst-mac 00:00:00:00:00:02 >/dev/null &&
"$GEN" --out udp1.pcap --count 1024 --size 64 --flows 16 --src-mac 00:00:00:00:00:02 \
  --dst-mac 00:00:00:00:00:03 --src-ip 10.0.0.2 --dst-ip 10.0.0.1 >/dev/null &&
"$GEN" --workload atp --layers 3 --out atp_all.pcap >/dev/null &&
ATP_FRAMES=$(atp_cycles atp_all.pcap) ||
  { note "could not write the input pcaps"; exit 1; }

# name program ports metric "devargs..." (port i gets the i-th; "-" leaves it without a device)
NULL="net_null0,copy=1,size=64 net_null1,copy=1,size=64"
PCAP0=net_pcap0,infinite_rx=1,rx_pcap
PCAP1=net_pcap1,infinite_rx=1,rx_pcap
SETUPS=(
  "wire-null wire 2 tx $NULL"
  "l2l3-null l2l3 2 tx $NULL"
  "l2l3-pcap l2l3 2 tx $PCAP0=udp0.pcap $PCAP1=udp1.pcap"
  "atp-pcap atp 5 rx $PCAP0=atp0.pcap $PCAP1=atp1.pcap - - net_pcap4,rx_pcap=empty.pcap"
)

# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------

# Arguments: setup line, workers. Writes the config; prints its path.
write_ini() {
  local name prog ports metric devs workers=$2 ini
  read -r name prog ports metric devs <<<"$1"
  ini=$OUT/$name-w$workers.ini
  {
    printf '[switch]\nname = scaling\nports = %s\nprogram = %s\n' "$ports" "$prog"
    [[ $prog == l2l3 ]] && printf 'cli = %s\n' "$HERE/l2l3.cli"
    [[ $prog == atp ]] && printf 'cli = %s\n' "$ROOT/configs/atp_rack.cli"
    printf '[eal]\nargs = --no-pci\n'
    printf '[tm]\nport_rate = 0\n[dpdk]\nmbufs = 16383\nmbuf_cache = 256\nworkers = %s\n' "$workers"
    local p=0 dev
    for dev in $devs; do
      [[ $dev != - ]] && printf '[port.%s]\ndevargs = %s\n' "$p" "$dev"
      p=$((p + 1))
    done
  } >"$ini"
  echo "$ini"
}

# CPU time (utime + stime, clock ticks) of each lcore thread of process $1 (the main thread and
# rte-worker-N), one "tid ticks" line each.
lcore_ticks() {
  local t
  for t in /proc/"$1"/task/*; do
    [[ ${t##*/} == "$1" || $(cat "$t/comm" 2>/dev/null) == rte-worker-* ]] || continue
    awk -v tid="${t##*/}" '{print tid, $14 + $15}' "$t/stat" 2>/dev/null
  done
}

# Arguments: two lcore_ticks snapshots, seconds between them. Prints each lcore's share of a
# CPU, "0.62" or "0.33+0.31" (the main lcore first).
cpu_shares() {
  awk -v hz="$(getconf CLK_TCK)" -v s="$3" 'NR == FNR {t[$1] = $2; next}
    ($1 in t) {out = out (out == "" ? "" : "+") sprintf("%.2f", ($2 - t[$1]) / hz / s)}
    END {print (out == "" ? "-" : out)}' <(echo "$1") <(echo "$2")
}

# Arguments: setup line, workers. Prints "Mpps load shares" (Mpps "-" on failure): the shares
# are each lcore's CPU over 2 seconds in the middle of the measured intervals.
run_swemu() {
  local name prog ports metric devs workers=$2 lcores=1 prefix=$TAG
  read -r name prog ports metric devs <<<"$1"
  [[ $workers -eq 2 ]] && lcores=0,1
  local ini log=$OUT/$name-w$workers.log load before after
  ini=$(write_ini "$1" "$workers")
  load=$(load1)
  echo "$SWEMU --config $ini --busy-poll --run-for $((WARMUP + INTERVALS + 1))s" \
    "--stats-interval 1 --control-socket none -- -l $lcores $EAL_MEM --file-prefix $prefix" >"$log"
  "$SWEMU" --config "$ini" --busy-poll --run-for $((WARMUP + INTERVALS + 1))s \
    --stats-interval 1 --control-socket none -- -l "$lcores" $EAL_MEM --file-prefix "$prefix" \
    </dev/null >>"$log" 2>&1 &
  local pid=$!
  sleep $((WARMUP + 1))
  before=$(lcore_ticks "$pid")
  sleep 2
  after=$(lcore_ticks "$pid")
  wait "$pid"
  cleanup_prefix "$prefix"
  note "$name, $workers lcore(s):" \
    "$(grep -m1 '^  drops:' "$log" || echo "no summary (see $log)")"
  local mpps
  mpps=$(awk -v n="$INTERVALS" -v m="$metric" '/^stats:/ {
        s = 0; for (i = 1; i < NF; i++) if ($i == m) s += $(i + 1)
        if (!on) { on = s > 0; next }
        if (++k <= n) print s }' "$log" | median)
  echo "${mpps:--} $load $(cpu_shares "$before" "$after" 2)"
}

# CPU nanoseconds per packet: the lcores' shares summed, over Mpps ("-" when either is missing).
# With two lcores this counts the time one spins while its peer is descheduled.
cpu_ns() { awk -v c="$1" -v m="$2" 'BEGIN {
  n = split(c, s, "+"); t = 0; for (i = 1; i <= n; i++) t += s[i]
  if (c == "-" || m == "-" || m + 0 == 0) print "-"; else printf "%.1f", t * 1000 / m }'; }

START=$(date +%s)
UPTIME_START=$(uptime)
# Two busy-polling lcores need a CPU each and one more for everything else (the kernel, the EAL's
# other threads, this script's sampling); free CPUs: those we may use less the load average.
CPUS=$(nproc)
FREE=$(awk -v n="$CPUS" '{f = n - $1; print (f > 0 ? int(f + 0.5) : 0)}' /proc/loadavg)
ROWS=()
for s in "${SETUPS[@]}"; do
  read -r name prog ports metric devs <<<"$s"
  runs1="" runs2="" rounds="" loads="" ns1="" ns2="" cpu1="" cpu2=""
  for ((round = 0; round < REPS; round++)); do
    order="1 2"
    [[ $((round % 2)) -eq 1 ]] && order="2 1"
    for w in $order; do
      read -r mpps load cpu <<<"$(run_swemu "$s" "$w")"
      printf -v "m$w" '%s' "$mpps"
      printf -v "c$w" '%s' "$cpu"
      loads+="$load "
    done
    runs1+="$m1 " runs2+="$m2 " rounds+="$(ratio "$m2" "$m1") "
    cpu1+="$c1 " cpu2+="$c2 " ns1+="$(cpu_ns "$c1" "$m1") " ns2+="$(cpu_ns "$c2" "$m2") "
    note "$name round $((round + 1)): 1 lcore $m1 Mpps (CPU $c1), 2 lcores $m2 Mpps (CPU $c2)," \
         "$metric"
  done
  ROWS+=("$(printf '%-9s %-3s %7s %7s %7s %6s %6s  %-14s %-24s %s' "$name" "$metric" \
    "$(median_of $runs1)" "$(median_of $runs2)" "$(median_of $rounds)" "$(median_of $ns1)" \
    "$(median_of $ns2)" "$cpu1" "$cpu2" "$loads")")
done

{
  echo "swemu one vs two forwarding lcores, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs," \
       "$MEM_NOTE, $REPS round(s); workers = 1 on -l 1, workers = 2 on -l 0,1; --busy-poll;" \
       "unshaped ports"
  echo "Mpps: median of ${INTERVALS} 1-s intervals, then of rounds (fig tx: forwarded; rx:" \
       "received; atp: $ATP_FRAMES frames replayed, 3 of 5 consumed); 2/1: median of the" \
       "rounds' ratios; ns/pkt: CPU ns per packet (lcores' CPU shares summed / Mpps), median" \
       "of rounds; CPU: each round's lcore CPU shares; load: 1-min load average at each run's" \
       "start"
  printf '%-9s %-3s %7s %7s %7s %6s %6s  %-14s %-24s %s\n' setup fig 1-lcore 2-lcore 2/1 \
    ns/p1 ns/p2 "CPU (1)" "CPU (2)" load
  printf '%s\n' "${ROWS[@]}"
  [[ $FREE -lt 3 ]] &&
    echo "cannot show scaling here: $CPUS CPUs, about $FREE free at the start, fewer than the" \
         "3 that 2 busy-polling lcores and the rest of the machine (kernel, EAL threads, this" \
         "script) need, so the 2-lcore runs share CPUs and 2/1 measures that contention"
  echo "uptime before: $UPTIME_START"
  echo "uptime after:  $(uptime)"
  echo "total $(($(date +%s) - START)) s; logs and configs in $OUT"
} | tee "$BUILD/scaling.txt"
