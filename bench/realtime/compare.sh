#!/usr/bin/env bash
# Real-time comparison harness: swemu (`wire`, `l2l3`) against dpdk-testpmd (io, mac) and DPDK's
# SWX pipeline (examples/pipeline, P4-DPDK's data plane: an L2 spec and a PISA-like spec), each
# with one forwarding lcore on the same vdevs. Prints Mpps and ratios, then ns per packet and each
# tool's cost beyond testpmd io's, and writes the tables to BUILD/compare.txt. An earlier run's
# BUILD/compare.txt is never lost: the harness refuses to start (one line, exit 2, nothing
# touched) unless --force is given. See docs/performance.md, "Comparison harness".
#
#   bench/realtime/compare.sh [--reps N] [--quick] [--no-setup] [--no-huge] [--build DIR]
#                             [--only LIST] [--force]
#
#   --reps N     rounds per setup; default 3 for net_null 64 B, 1 for the other setups
#   --quick      one round per setup everywhere
#   --no-setup   do not install packages or fetch/build anything (skip what is missing)
#   --no-huge    4 KiB pages for everyone even when 1 GiB of hugepages is free (the default
#                then uses hugepages for every process)
#   --build DIR  Release build directory (default build-rel); the SWX cache is DIR/swx
#   --only LIST  run only these, comma-separated: null, pcap, ring (the forwarding setups),
#                atp, goat (the aggregation lines); default all of them
#   --force      overwrite BUILD/compare.txt when an earlier run left one
#
# Setups: net_null (copy=1) and net_pcap (1024 UDP frames replayed), 64 and 256 B; with
# hugepages also net_ring, two ring loops that ring_seed fills with the same UDP frames once.
# Each run: warm-up 1 s, then the rate of three 1-second intervals (their median). A round runs
# every tool once, one after the other (the two sides of each ratio next to each other, the
# order reversed every other round); a figure is the median over the rounds, a ratio the
# median of the rounds' ratios (a slow spell of a shared machine then hits both sides), printed
# to three decimals so that a ratio just below an aim does not round up to it. Setup (as root,
# idempotent) installs dpdk-dev and dpdk-doc, adds a deb-src entry, fetches `apt-get source dpdk`
# for the SWX pipeline's internal headers and builds examples/pipeline against the installed
# DPDK. A step that fails skips its comparison, with one line saying why.
#
# Aggregation lines (a third table): swemu `atp` against swx_atp.spec and swemu `goat` against
# swx_goat.spec, SWX specs written for this harness (each lists what it simplifies), at 64 int32
# elements, with the same table entries on both sides. On net_pcap only: the frames are a job's
# gradients (314 and 326 bytes), which net_null's all-zero frames are not, and a net_ring loop
# would drain (a consumed gradient never comes back). Each port replays its own job
# (bench/realtime/agg_frames.py): atp, per seq 4 workers' gradients from swemu-gen and the PS's
# parameter packet that frees the aggregator for the pcap's next pass (per 5 frames: 3 consumed,
# the completing one sent on to the PS, the parameter packet sent on to the group); goat, per
# fragment 4 workers' gradients in GOAT mode (3 consumed, 1 completing), two sub-models sharing
# slots so that each claim reclaims a completed slot, as a new round does. The figure is the rate
# of frames RECEIVED (both ports' rx summed), every one processed by the pipeline, consumed or
# not: the forwarded rate would count 2 of 5 (atp) or 1 of 4 (goat) of the work. swemu's from its
# --stats-interval rx, SWX's from the ethdevs' ipackets (ethstats_rx.py); one round by default,
# rounds, orders and ratios as above. Beside each line, l2l3 and swx_l2.spec bridging the same
# frames (every frame sent on by dmac), and each aggregator's ns per packet beyond its own
# bridging. No pcn or dlcp line: SWX cannot express them. DPDK 22.11's SWX pipeline has no
# queues and no traffic manager: `tx` hands a packet to the output port's ethdev TX burst, and no
# instruction, metadata or table gives a queue's depth (only a C extern added to the app could
# ask a TX ring, which on these vdevs never fills, and still with no priority queues). PCN marks
# CE by comparing the egress queue's depth with a per-port threshold that a PCN-START lowers,
# and sends STARTs through a strict-priority control queue; DLCP maps DSCP to 7 priority queues,
# each marking (ECT) or dropping (Not-ECT) above a threshold S_i on its depth, up to a capacity
# L_i. Without a depth, a spec would keep only the header reads and rewrites (a depth estimate in
# a register, as swx_pisa.spec has, is not a queue), so neither gets a line; their ns per packet
# are in docs/performance.md.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/bench/realtime
BUILD=$ROOT/build-rel
REPS=""
ONLY=""
SETUP=1
FORCE=0
FORCE_NO_HUGE=0
WARMUP=1
INTERVALS=3

SCRIPT=compare.sh
# shellcheck source=bench/realtime/options.sh
source "$ROOT/bench/realtime/options.sh"

while [[ $# -gt 0 ]]; do
  case $1 in
    --reps) REPS=$(value "$@") || exit 2; shift 2 ;;
    --quick) REPS=1; shift ;;
    --no-setup) SETUP=0; shift ;;
    --no-huge) FORCE_NO_HUGE=1; shift ;;
    --build) BUILD=$(value "$@") || exit 2; BUILD=$(realpath -m "$BUILD"); shift 2 ;;
    --only) ONLY=$(value "$@") || exit 2; shift 2 ;;
    --force) FORCE=1; shift ;;
    -h|--help) awk 'NR > 1 && /^set -u/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

for w in ${ONLY//,/ }; do
  case $w in
    null|pcap|ring|atp|goat) ;;
    *) echo "compare.sh: --only: unknown line $w (null, pcap, ring, atp, goat)" >&2; exit 2 ;;
  esac
done
# An earlier run's tables are not overwritten without --force; checked before anything is made.
if [[ -e $BUILD/compare.txt && $FORCE -eq 0 ]]; then
  echo "compare.sh: $BUILD/compare.txt holds an earlier run's tables: move it away, or give" \
       "--force to overwrite it" >&2
  exit 2
fi
# True when line $1 runs (--only not given, or it names $1).
want() { [[ -z $ONLY || ,$ONLY, == *,$1,* ]]; }

OUT=$BUILD/compare
SWX=$BUILD/swx
SWEMU=$BUILD/swemu/swemu
GEN=$BUILD/tools/swemu-gen
SEEDER=$BUILD/bench/ring_seed
TAG=cmp$$
mkdir -p "$OUT"
START=$(date +%s)

note() { echo "compare.sh: $*" >&2; }
skip() { echo "SKIPPED: $*" | tee -a "$OUT/skipped.txt" >&2; }
: > "$OUT/skipped.txt"

# ---------------------------------------------------------------------------------------------
# Setup
# ---------------------------------------------------------------------------------------------

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

setup_packages() {
  local missing=()
  for p in dpdk-dev dpdk-doc; do have_pkg "$p" || missing+=("$p"); done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if [[ $SETUP -eq 0 || $(id -u) -ne 0 ]]; then
    note "missing ${missing[*]} (run as root without --no-setup to install)"
    return 0
  fi
  note "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >"$OUT/apt-install.log" 2>&1 ||
    note "apt-get install ${missing[*]} failed (see $OUT/apt-install.log)"
}

setup_swemu() {
  [[ -x $SWEMU && -x $GEN && -x $SEEDER ]] && return 0
  [[ $SETUP -eq 0 ]] && { [[ -x $SWEMU && -x $GEN ]]; return; }
  note "building swemu, swemu-gen and ring_seed in $BUILD"
  { cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
      cmake --build "$BUILD" --target swemu swemu-gen ring_seed -j2; } >"$OUT/build-swemu.log" 2>&1
}

# Adds a deb-src entry for the configured Debian mirror unless one exists.
ensure_deb_src() {
  if grep -rqsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' \
      /etc/apt/sources.list /etc/apt/sources.list.d/; then
    return 0
  fi
  local uri codename
  uri=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources \
        2>/dev/null)
  [[ -z $uri ]] && uri=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' \
                         /etc/apt/sources.list 2>/dev/null)
  [[ -z $uri ]] && uri=http://deb.debian.org/debian
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  note "adding deb-src $uri $codename main (/etc/apt/sources.list.d/swemu-deb-src.sources)"
  cat >/etc/apt/sources.list.d/swemu-deb-src.sources <<EOF
# Added by swemu bench/realtime/compare.sh: source packages (apt-get source dpdk).
Types: deb-src
URIs: $uri
Suites: $codename
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update >"$OUT/apt-update.log" 2>&1
}

# Prints the DPDK source tree (with lib/pipeline and config/) for the installed version.
dpdk_source_tree() {
  local d
  for d in "$SWX"/dpdk-*/; do
    [[ -f $d/lib/pipeline/rte_swx_pipeline_internal.h && -f $d/config/rte_config.h ]] &&
      { echo "${d%/}"; return 0; }
  done
  return 1
}

# Sets SWX_APP and SWX_SRC, or prints why the SWX comparison is skipped and returns 1.
setup_swx() {
  SWX_APP=$SWX/app/build/pipeline
  SWX_SRC=$(dpdk_source_tree)
  if [[ -x $SWX_APP && -n $SWX_SRC ]]; then export RTE_INSTALL_DIR=$SWX_SRC; return 0; fi
  if [[ $SETUP -eq 0 ]]; then skip "SWX: not built and --no-setup given"; return 1; fi
  if [[ $(id -u) -ne 0 ]]; then skip "SWX: setup needs root (apt-get source dpdk)"; return 1; fi
  mkdir -p "$SWX"
  if [[ -z $SWX_SRC ]]; then
    local ver
    ver=$(dpkg-query -W -f='${Version}' libdpdk-dev 2>/dev/null)
    if ! ensure_deb_src; then
      skip "SWX: apt-get update with the deb-src entry failed (see $OUT/apt-update.log)"
      return 1
    fi
    note "fetching the dpdk source package ${ver:+(version $ver)} into $SWX"
    if ! (cd "$SWX" && apt-get source "dpdk${ver:+=$ver}") >"$OUT/apt-source.log" 2>&1 &&
       ! (cd "$SWX" && apt-get source dpdk) >>"$OUT/apt-source.log" 2>&1; then
      skip "SWX: apt-get source dpdk failed, no deb-src reachable? (see $OUT/apt-source.log)"
      return 1
    fi
    SWX_SRC=$(dpdk_source_tree) ||
      { skip "SWX: no lib/pipeline in the fetched dpdk source"; return 1; }
  fi
  # The app's `pipeline libbuild` compiles generated C with -I $RTE_INSTALL_DIR/{lib/...,config,
  # build}: the source tree has the internal headers, the installed DPDK has rte_build_config.h.
  local cfg
  cfg=$(find /usr/include -name rte_build_config.h -print -quit 2>/dev/null)
  [[ -z $cfg ]] && { skip "SWX: no rte_build_config.h (is libdpdk-dev installed?)"; return 1; }
  mkdir -p "$SWX_SRC/build" && ln -sf "$cfg" "$SWX_SRC/build/rte_build_config.h"
  local app_src=/usr/share/dpdk/examples/pipeline
  [[ -f $app_src/main.c ]] || app_src=$SWX_SRC/examples/pipeline
  [[ -f $app_src/main.c ]] || { skip "SWX: no examples/pipeline (dpdk-doc)"; return 1; }
  rm -rf "$SWX/app" && cp -r "$app_src" "$SWX/app"
  if ! make -C "$SWX/app" -j2 >"$OUT/swx-build.log" 2>&1; then
    skip "SWX: examples/pipeline did not build (see $OUT/swx-build.log)"
    return 1
  fi
  [[ -x $SWX_APP ]] || { skip "SWX: build produced no $SWX_APP"; return 1; }
  export RTE_INSTALL_DIR=$SWX_SRC
}

# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------

median() { sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'; }

EAL_MEM="--no-huge -m 512"
MEM_NOTE="4 KiB pages (--no-huge)"
if [[ $FORCE_NO_HUGE -eq 0 ]] &&
    awk '/HugePages_Free/ {f = $2} /Hugepagesize/ {s = $2} END {exit !(f * s >= 1048576)}' \
      /proc/meminfo; then
  EAL_MEM="-m 512"
  MEM_NOTE="hugepages"
fi

# Stops a process we started: SIGINT, then SIGTERM, then SIGKILL.
stop_pid() {
  local pid=$1 i
  kill -INT "$pid" 2>/dev/null
  for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.3; done
  kill -0 "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null && sleep 0.5
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

telemetry() { echo "/var/run/dpdk/$1/dpdk_telemetry.v2"; }
# DPDK leaves its runtime directory and, with hugepages, its page files (<prefix>map_N) behind.
cleanup_prefix() {
  rm -rf "/var/run/dpdk/$1"
  local mnt
  for mnt in $(awk '$3 == "hugetlbfs" {print $2}' /proc/mounts); do rm -f "$mnt/$1"map_*; done
}

# net_ring setups: puts frames into the loop of port net_ring0 of the forwarder running with
# file prefix $1, taking mbufs from its pool $2 (ring_seed, a DPDK secondary process, once the
# forwarder's EAL is up: its telemetry socket is made last); SEED_PCAPS empty: nothing to do.
SEED_PCAPS=""
seed_ring() {
  [[ -z $SEED_PCAPS ]] && return 0
  local pcaps=() f i
  for f in $SEED_PCAPS; do pcaps+=(--pcap "$f"); done
  for ((i = 0; i < 200; i++)); do [[ -S $(telemetry "$1") ]] && break; sleep 0.1; done
  "$SEEDER" --port net_ring0 --pool "$2" "${pcaps[@]}" --count 512 -- -l 0 --no-pci \
    --proc-type=secondary --file-prefix "$1" --log-level=notice
}

# Runs a DPDK app in the background (arguments: log, prefix, its mbuf pool's name, command...),
# reads its ports' tx rate (COUNT=rx: rx rate) through telemetry and prints the median Mpps
# (empty on failure).
measure_dpdk() {
  local log=$1 prefix=$2 pool=$3; shift 3
  local stats=$HERE/ethstats.py
  [[ ${COUNT:-tx} == rx ]] && stats=$HERE/ethstats_rx.py
  "$@" </dev/null >"$log" 2>&1 &
  local pid=$!
  seed_ring "$prefix" "$pool" >>"$log.seed" 2>&1
  /usr/bin/python3 "$stats" "$(telemetry "$prefix")" 0,1 "$WARMUP" "$INTERVALS" \
    >"$log.rates" 2>>"$log"
  stop_pid "$pid"
  cleanup_prefix "$prefix"
  median <"$log.rates"
}

# Arguments: setup name (for files), devargs 0, devargs 1, mode (io|mac).
run_testpmd() {
  local name=$1 dev0=$2 dev1=$3 mode=$4 prefix=$TAG-tp
  measure_dpdk "$OUT/testpmd-$mode-$name.log" "$prefix" mb_pool_0 \
    dpdk-testpmd -l 0,1 $EAL_MEM --no-pci --file-prefix "$prefix" --vdev "$dev0" --vdev "$dev1" \
    -- --nb-cores=1 --forward-mode="$mode" --auto-start --stats-period 1000 \
    --total-num-mbufs=16384 --rxd=1024 --txd=1024
}

fill() {  # template -> stdout, with the @...@ fields of this run
  sed -e "s|@HERE@|$HERE|g" -e "s|@OUT@|$OUT/$5|g" -e "s|@SPEC@|$HERE/$4|g" \
      -e "s|@TABLE@|$HERE/swx_dmac.txt|g" -e "s|@DEV0@|$2|g" -e "s|@DEV1@|$3|g" \
      -e "s|@PREFIX@|$6|g" "$1"
}

# Arguments: setup name, devargs 0, devargs 1, spec file[, app script template, ports template]
# (default swx.cli.in and swx.io.in). COUNT=rx: the rate received, not forwarded.
run_swx() {
  local name=$1 dev0=$2 dev1=$3 spec=$4 cli=${5:-swx.cli.in} io=${6:-swx.io.in} prefix=$TAG-swx
  local dir=swx-${spec%.spec}-$name
  mkdir -p "$OUT/$dir"
  # The SWX app's ethdev command takes the device name (devargs up to the first comma).
  fill "$HERE/$cli" "${dev0%%,*}" "${dev1%%,*}" "$spec" "$dir" "" >"$OUT/$dir/swx.cli"
  fill "$HERE/$io" "${dev0%%,*}" "${dev1%%,*}" "$spec" "$dir" "" >"$OUT/$dir/swx.io"
  rm -f "$OUT/$dir/swx.so"
  measure_dpdk "$OUT/$dir/run.log" "$prefix" MEMPOOL0 \
    "$SWX_APP" -l 0,1 $EAL_MEM --no-pci --file-prefix "$prefix" --vdev "$dev0" --vdev "$dev1" \
    -- -s "$OUT/$dir/swx.cli" -p $((20000 + $$ % 10000))
}

# Arguments: setup name, devargs 0, devargs 1, program (wire|l2l3|atp|goat). Prints the median
# of the intervals' summed tx Mpps (COUNT=rx: rx) from --stats-interval lines (the first, with
# the warm-up, skipped).
run_swemu() {
  local name=$1 dev0=$2 dev1=$3 prog=$4 prefix=$TAG-sw
  local ini=$OUT/swemu-$prog-$name.ini log=$OUT/swemu-$prog-$name.log
  fill "$HERE/swemu_$prog.ini.in" "$dev0" "$dev1" "" "" "$prefix" >"$ini"
  # A seeded loop starts when ring_seed is done (a second or two): two seconds more to run.
  "$SWEMU" --config "$ini" --busy-poll --run-for $((WARMUP + INTERVALS + 1 + 2))s \
    --stats-interval 1 --control-socket none -- -l 1 $EAL_MEM </dev/null >"$log" 2>&1 &
  local pid=$!
  seed_ring "$prefix" swemu_mbufs >>"$log.seed" 2>&1
  wait "$pid"
  cleanup_prefix "$prefix"
  # Intervals from the first with traffic on, which is the warm-up (WARMUP is 1 s).
  awk -v n="$INTERVALS" -v count="${COUNT:-tx}" '/^stats:/ {
        s = 0; for (i = 1; i < NF; i++) if ($i == count) s += $(i + 1)
        if (!on) { on = s > 0; next }
        if (++k <= n) print s }' "$log" | median
}

# Runs "$@" (a run_* call) and prints its figure, or "-" when it gave none.
or_dash() {
  local v
  v=$("$@")
  echo "${v:--}"
}

# The median of the arguments that are figures (not "-"), or "-" when there are none.
median_of() {
  printf '%s\n' "$@" | grep -v '^-*$' | median | { read -r m && echo "$m" || echo "-"; }
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {
  if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.3f", a / b }'; }
# Nanoseconds per packet of a figure in Mpps (one lcore forwards, so this is its time per packet).
ns() { awk -v a="$1" 'BEGIN { if (a == "-" || a + 0 == 0) print "-"; else printf "%.1f", 1000 / a }'; }
# What a tool adds per packet to testpmd io's forwarding on the same ports (arguments: the tool's
# Mpps, testpmd io's Mpps, of one round): its ns per packet minus io's. io does no more than
# receive and send, so this is the tool's own cost, without the driver's, which both pay.
beyond_io() { awk -v a="$1" -v b="$2" 'BEGIN {
  if (a == "-" || b == "-" || a + 0 == 0 || b + 0 == 0) print "-"
  else printf "%.1f", 1000 / a - 1000 / b }'; }
# True when a table's rows have a negative cost among the columns after their "|".
has_negative() {
  printf '%s\n' "$@" | awk -F'|' '{ n = split($2, f, " ")
    for (i = 1; i <= n; i++) if (f[i] ~ /^-[0-9]/) found = 1 } END { exit !found }'
}

# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

setup_packages
HAVE_TESTPMD=1
command -v dpdk-testpmd >/dev/null || { HAVE_TESTPMD=0; skip "testpmd: dpdk-testpmd not found (dpdk-dev)"; }
[[ -x /usr/bin/python3 ]] || { HAVE_TESTPMD=0; skip "testpmd and SWX: no python3 to read DPDK telemetry"; }
HAVE_SWEMU=1
setup_swemu || { HAVE_SWEMU=0; skip "swemu: $SWEMU or $GEN missing and could not be built (see $OUT/build-swemu.log)"; }
HAVE_SWX=0
if [[ -x /usr/bin/python3 ]]; then
  setup_swx && HAVE_SWX=1
fi
note "setup done in $(($(date +%s) - START)) s"

# Real UDP frames for net_pcap (infinite_rx replays them; with no tx_pcap the pcap PMD drops tx):
# port 0 receives frames to 00:00:00:00:00:02, which l2l3.cli and swx_dmac.txt send to port 1,
# port 1 frames to 00:00:00:00:00:03, sent to port 0: both directions, like wire and testpmd.
# ECT(0) (tos 2), so the ECN mark logic of l2l3 and swx_pisa.spec has work to do.
SETUPS=()
if want null; then
  SETUPS+=("null 64 net_null0,copy=1,size=64 net_null1,copy=1,size=64"
           "null 256 net_null0,copy=1,size=256 net_null1,copy=1,size=256")
fi
if ! want pcap && ! want ring; then
  :
elif [[ $HAVE_SWEMU -eq 1 || -x $GEN ]]; then
  for size in 64 256; do
    "$GEN" --out "$OUT/udp$size-0.pcap" --count 1024 --size "$size" --flows 16 --tos 2 \
      --src-mac 00:00:00:00:00:03 --dst-mac 00:00:00:00:00:02 >/dev/null &&
    "$GEN" --out "$OUT/udp$size-1.pcap" --count 1024 --size "$size" --flows 16 --tos 2 \
      --src-mac 00:00:00:00:00:02 --dst-mac 00:00:00:00:00:03 --src-ip 10.0.0.2 \
      --dst-ip 10.0.0.1 >/dev/null
  done
  for size in 64 256; do
    want pcap || continue
    SETUPS+=("pcap $size net_pcap0,rx_pcap=udp$size-0.pcap,infinite_rx=1 net_pcap1,rx_pcap=udp$size-1.pcap,infinite_rx=1")
  done
else
  skip "net_pcap: no swemu-gen to write the UDP frames"
fi
# net_ring: two vdevs without arguments, each transmitting into its own receive ring. Frames of
# both pcaps go into port 0's loop once (ring_seed), then circulate: wire and testpmd send them
# across, l2l3 and the SWX specs to the port of their destination MAC, so both loops carry some.
# io forwarding on a ring moves pointers only and touches no frame.
if ! want ring; then
  :
elif [[ $EAL_MEM == *--no-huge* ]]; then
  skip "net_ring: the loop is seeded by a DPDK secondary process (ring_seed), and DPDK has" \
       "secondary processes on hugepages only"
elif [[ ! -x $SEEDER ]]; then
  skip "net_ring: no $SEEDER to seed the loop (cmake --build $BUILD --target ring_seed)"
elif [[ -f $OUT/udp64-0.pcap && -f $OUT/udp256-0.pcap ]]; then
  for size in 64 256; do SETUPS+=("ring $size net_ring0 net_ring1"); done
else
  skip "net_ring: no swemu-gen frames to seed the loop with"
fi

cd "$OUT" || exit 1  # net_pcap's rx_pcap paths are relative to the current directory
ROWS=() NS_ROWS=()
for s in "${SETUPS[@]}"; do
  read -r kind size dev0 dev1 <<<"$s"
  name=$kind$size
  SEED_PCAPS=""
  [[ $kind == ring ]] && SEED_PCAPS="$OUT/udp$size-0.pcap $OUT/udp$size-1.pcap"
  reps=${REPS:-$([[ $name == null64 ]] && echo 3 || echo 1)}
  note "$kind $size B: $reps round(s)"
  # Rounds: each round runs every tool once, so a slow spell of a shared machine (they last
  # minutes here) hits all of them alike; a figure is the median over the rounds, and a ratio
  # the median of the rounds' ratios. The tools of a ratio run next to each other (testpmd io
  # and wire; l2l3 between the SWX PISA-like spec and wire), and every other round runs them in
  # the reverse order, so that a machine that speeds up or slows down during a round does not
  # favour whichever tool runs first.
  runs_io="" runs_mac="" runs_wire="" runs_l2l3="" runs_swxl2="" runs_swxpisa=""
  rounds_wire_io="" rounds_l2l3_pisa="" rounds_l2l3_l2=""
  own_mac="" own_wire="" own_l2l3="" own_swxl2="" own_swxpisa="" own_pisa_l2l3=""
  for ((round = 0; round < reps; round++)); do
    io=- mac=- wire=- l2l3=- swxl2=- swxpisa=-
    order="io wire l2l3 swxpisa swxl2 mac"
    [[ $((round % 2)) -eq 1 ]] && order="mac swxl2 swxpisa l2l3 wire io"
    for tool in $order; do
      case $tool in
        io|mac) [[ $HAVE_TESTPMD -eq 1 ]] || continue
          printf -v "$tool" '%s' "$(or_dash run_testpmd "$name" "$dev0" "$dev1" "$tool")" ;;
        wire|l2l3) [[ $HAVE_SWEMU -eq 1 ]] || continue
          printf -v "$tool" '%s' "$(or_dash run_swemu "$name" "$dev0" "$dev1" "$tool")" ;;
        swxl2|swxpisa) [[ $HAVE_SWX -eq 1 ]] || continue
          spec=swx_l2.spec
          [[ $tool == swxpisa ]] && spec=swx_pisa.spec
          printf -v "$tool" '%s' "$(or_dash run_swx "$name" "$dev0" "$dev1" "$spec")" ;;
      esac
    done
    runs_io+="$io " runs_mac+="$mac " runs_wire+="$wire " runs_l2l3+="$l2l3 "
    runs_swxl2+="$swxl2 " runs_swxpisa+="$swxpisa "
    rounds_wire_io+="$(ratio "$wire" "$io") "
    rounds_l2l3_pisa+="$(ratio "$l2l3" "$swxpisa") "
    rounds_l2l3_l2+="$(ratio "$l2l3" "$swxl2") "
    own_mac+="$(beyond_io "$mac" "$io") " own_wire+="$(beyond_io "$wire" "$io") "
    own_l2l3+="$(beyond_io "$l2l3" "$io") " own_swxl2+="$(beyond_io "$swxl2" "$io") "
    own_swxpisa+="$(beyond_io "$swxpisa" "$io") "
    own_pisa_l2l3+="$(ratio "$(beyond_io "$swxpisa" "$io")" "$(beyond_io "$l2l3" "$io")") "
    note "$kind $size B round $((round + 1)): io $io mac $mac wire $wire l2l3 $l2l3" \
         "swx-l2 $swxl2 swx-pisa $swxpisa"
  done
  io=$(median_of $runs_io) mac=$(median_of $runs_mac) wire=$(median_of $runs_wire)
  l2l3=$(median_of $runs_l2l3) swxl2=$(median_of $runs_swxl2) swxpisa=$(median_of $runs_swxpisa)
  ROWS+=("$(printf '%-9s %5s %6s %11s %11s %11s %11s %8s %9s %10s %10s %11s' \
    "net_$kind" "$size" "$reps" "$io" "$mac" "$wire" "$l2l3" "$swxl2" "$swxpisa" \
    "$(median_of $rounds_wire_io)" "$(median_of $rounds_l2l3_pisa)" \
    "$(median_of $rounds_l2l3_l2)")")
  NS_ROWS+=("$(printf '%-9s %5s %6s %6s %6s %6s %6s %6s | %6s %6s %6s %6s %6s %11s' \
    "net_$kind" "$size" "$(ns "$io")" "$(ns "$mac")" "$(ns "$wire")" "$(ns "$l2l3")" \
    "$(ns "$swxl2")" "$(ns "$swxpisa")" "$(median_of $own_mac)" "$(median_of $own_wire)" \
    "$(median_of $own_l2l3)" "$(median_of $own_swxl2)" "$(median_of $own_swxpisa)" \
    "$(median_of $own_pisa_l2l3)")")
done

# ---------------------------------------------------------------------------------------------
# Aggregation lines: swemu atp / goat against swx_atp.spec / swx_goat.spec (see the header)
# ---------------------------------------------------------------------------------------------

# Writes $OUT/$1-0.pcap and $OUT/$1-1.pcap: port p replays job p + 1, whose PS is
# 02:00:00:00:00:(p+1)0 (10.0.0.16 (p+1)) and whose group is 01:00:5e:01:00:0(p+1) (239.1.0.(p+1)).
agg_frames() {
  local prog=$1 p j
  for p in 0 1; do
    j=$((p + 1))
    if [[ $prog == atp ]]; then
      "$GEN" --workload atp --out "$OUT/atp-gen-$p.pcap" --workers 4 --layers 3 --elements 64 \
        --job "$j" --ps-mac "02:00:00:00:00:${j}0" --ps-ip "10.0.0.$((16 * j))" &&
      /usr/bin/python3 "$HERE/agg_frames.py" atp "$OUT/atp-gen-$p.pcap" "$OUT/atp-$p.pcap" --seqs 256 \
        --group-mac "01:00:5e:01:00:0$j" --group-ip "239.1.0.$j" || return 1
    else
      /usr/bin/python3 "$HERE/agg_frames.py" goat "$OUT/goat-$p.pcap" --job "$j" --node 7 \
        --fragments 128 --workers 4 --ps-mac "02:00:00:00:00:${j}0" \
        --ps-ip "10.0.0.$((16 * j))" || return 1
    fi
  done
}

AGG_ROWS=()
for prog in atp goat; do
  want "$prog" || continue
  if [[ $HAVE_SWEMU -eq 0 && $HAVE_SWX -eq 0 ]]; then
    skip "$prog: neither swemu nor SWX to run"
    continue
  fi
  if ! agg_frames "$prog" >"$OUT/$prog-frames.log" 2>&1; then
    skip "$prog: could not write its frames (see $OUT/$prog-frames.log)"
    continue
  fi
  [[ $HAVE_SWX -eq 1 ]] || skip "$prog: no SWX side (the SWX line above says why)"
  dev0="net_pcap0,rx_pcap=$prog-0.pcap,infinite_rx=1"
  dev1="net_pcap1,rx_pcap=$prog-1.pcap,infinite_rx=1"
  mix="3/5 consumed, 2/5 sent"
  [[ $prog == goat ]] && mix="3/4 consumed, 1/4 sent"
  reps=${REPS:-1}
  load=$(cut -d' ' -f1 /proc/loadavg)
  note "$prog: $reps round(s), load $load"
  # Each round: l2l3 bridging the same frames (every frame out, none aggregated), swemu's
  # aggregator, SWX's, and swx_l2.spec bridging them (the order reversed every other round, the
  # two sides of the ratio next to each other); +agg is a tool's ns per packet beyond its own
  # bridging of the same frames.
  runs_sw="" runs_swx="" runs_br="" runs_swxbr="" rounds_ratio="" own_sw="" own_swx=""
  for ((round = 0; round < reps; round++)); do
    sw=- swx=- br=- swxbr=-
    order="br sw swx swxbr"
    [[ $((round % 2)) -eq 1 ]] && order="swxbr swx sw br"
    for tool in $order; do
      case $tool in
        br|sw) [[ $HAVE_SWEMU -eq 1 ]] || continue
          p=$prog
          [[ $tool == br ]] && p=agg_l2l3
          printf -v "$tool" '%s' \
            "$(COUNT=rx or_dash run_swemu "pcap-$prog" "$dev0" "$dev1" "$p")" ;;
        swx|swxbr) [[ $HAVE_SWX -eq 1 ]] || continue
          spec=swx_$prog.spec cli=swx_$prog.cli.in
          [[ $tool == swxbr ]] && spec=swx_l2.spec cli=swx_agg_l2.cli.in
          printf -v "$tool" '%s' "$(COUNT=rx or_dash run_swx "pcap-$prog" "$dev0" "$dev1" "$spec" \
            "$cli" swx_agg.io.in)" ;;
      esac
    done
    runs_sw+="$sw " runs_swx+="$swx " runs_br+="$br " runs_swxbr+="$swxbr "
    rounds_ratio+="$(ratio "$sw" "$swx") "
    own_sw+="$(beyond_io "$sw" "$br") " own_swx+="$(beyond_io "$swx" "$swxbr") "
    note "$prog round $((round + 1)) (Mpps received): swemu $sw SWX $swx;" \
         "bridging the same frames: l2l3 $br SWX-L2 $swxbr"
  done
  [[ $HAVE_SWX -eq 1 && $(median_of $runs_swx) == - ]] &&
    skip "$prog: SWX gave no figure (see $OUT/swx-swx_$prog-pcap-$prog/)"
  sw=$(median_of $runs_sw) swx=$(median_of $runs_swx)
  br=$(median_of $runs_br) swxbr=$(median_of $runs_swxbr)
  AGG_ROWS+=("$(printf '%-5s %-22s %6s %7s %7s %9s %7s %7s | %7s %7s %7s %7s %5s' "$prog" "$mix" \
    "$reps" "$sw" "$swx" "$(median_of $rounds_ratio)" "$(ns "$sw")" "$(ns "$swx")" \
    "$(ns "$br")" "$(ns "$swxbr")" "$(median_of $own_sw)" "$(median_of $own_swx)" "$load")")
done

{
  if [[ ${#SETUPS[@]} -gt 0 ]]; then
  echo "swemu real-time comparison, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $MEM_NOTE," \
       "one forwarding lcore each, Mpps forwarded (sum of both ports' tx), median of rounds;" \
       "ratios: median of the rounds' ratios"
  printf '%-9s %5s %6s %11s %11s %11s %11s %8s %9s %10s %10s %11s\n' setup bytes rounds \
    testpmd-io testpmd-mac swemu-wire swemu-l2l3 SWX-L2 SWX-PISA wire/io l2l3/PISA l2l3/SWX-L2
  printf '%s\n' "${ROWS[@]}"
  echo
  echo "ns per packet (of the median Mpps), then beyond testpmd io: a tool's ns per packet minus" \
       "io's in the same round (its own cost, without the driver's), median of rounds;" \
       "PISA/l2l3: the SWX PISA-like spec's own cost over l2l3's"
  printf '%-9s %5s %6s %6s %6s %6s %6s %6s | %6s %6s %6s %6s %6s %11s\n' setup bytes io mac \
    wire l2l3 SWX-L2 PISA +mac +wire +l2l3 +L2 +PISA PISA/l2l3
  printf '%s\n' "${NS_ROWS[@]}"
  has_negative "${NS_ROWS[@]}" &&
    echo "negative: a cost beyond io is a difference of two noisy timings of one round (the" \
         "tool's ns per packet minus io's); below 0, the tool's own cost is smaller than that" \
         "noise on this machine, not faster than io, and PISA/l2l3 turns negative with it"
  fi
  if [[ ${#AGG_ROWS[@]} -gt 0 ]]; then
    [[ ${#SETUPS[@]} -gt 0 ]] && echo
    echo "aggregation lines, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $MEM_NOTE," \
         "net_pcap, 64 elements, one lcore each: Mpps RECEIVED and processed (both ports' rx;" \
         "consumed frames count), median of rounds; swemu/SWX: median of the rounds' ratios;" \
         "ns per packet of the medians; then ns per packet of l2l3 and swx_l2.spec bridging" \
         "the same frames, and each aggregator's ns beyond its own bridging (median of" \
         "rounds); load: 1-minute load average before the line"
    printf '%-5s %-22s %6s %7s %7s %9s %7s %7s | %7s %7s %7s %7s %5s\n' line mix rounds swemu \
      SWX swemu/SWX ns ns-SWX l2l3 SWX-L2 +agg +agg-SWX load
    printf '%s\n' "${AGG_ROWS[@]}"
    has_negative "${AGG_ROWS[@]}" &&
      echo "negative: +agg is a difference of two noisy timings of one round (the aggregator's" \
           "ns per packet minus its own bridging's); below 0, aggregating costs less than that" \
           "noise on this machine, not less than bridging"
    echo "pcn, dlcp: no line; SWX has no queues, so no queue depth to mark or drop on (see the" \
         "script's header)"
  fi
  [[ -s $OUT/skipped.txt ]] && { echo; cat "$OUT/skipped.txt"; }
  echo "total harness time $(($(date +%s) - START)) s; logs in $OUT"
} | tee "$BUILD/compare.txt"
