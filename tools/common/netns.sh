# Hosts in network namespaces on a real-time swemu, for the experiment scripts
# (tools/pcn_experiment.sh, tools/dlcp_netns.sh). Source it, set the arrays, then call:
#   NETNS_NAMES=(ns0 ns1 ...)  one namespace per swemu port, port p = NETNS_NAMES[p]
#   NETNS_IPS=(ip0 ip1 ...)    each host's address (/24)
#   NETNS_LINK=prefix          the switch side of port p's veth is ${NETNS_LINK}p
#   NETNS_MAC=prefix           host p's MAC is ${NETNS_MAC}p (e.g. 02:77:00:00:00:1)
#   NETNS_PIDS=()              processes to stop at cleanup (add yours)
#   NETNS_TAG=name             prefix of the scripts' messages
# netns_lock (call it before touching anything) makes sure no other run of the same script holds
# the namespaces: a second run exits 2 with one line instead of tearing the first one down.
# netns_setup makes the namespaces (removing leftovers of an interrupted run first) and traps
# EXIT, INT and TERM so that netns_cleanup always runs: it stops NETNS_PIDS and every process
# left in the namespaces, and deletes the namespaces and links.

netns_lock() {
  mkdir -p /run/lock
  exec {NETNS_LOCK_FD}>"/run/lock/swemu-${NETNS_TAG}.lock"
  flock -n "$NETNS_LOCK_FD" || {
    echo "$NETNS_TAG: another run holds its namespaces (/run/lock/swemu-${NETNS_TAG}.lock); wait for it to end" >&2
    exit 2
  }
}

netns_cleanup() {
  trap - EXIT INT TERM
  local pid p
  for pid in "${NETNS_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${NETNS_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for p in "${!NETNS_NAMES[@]}"; do
    ip netns pids "${NETNS_NAMES[$p]}" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "${NETNS_NAMES[$p]}" 2>/dev/null || true
    ip link del "${NETNS_LINK}$p" 2>/dev/null || true
  done
}

netns_trap() {
  trap netns_cleanup EXIT
  trap 'echo "$NETNS_TAG: interrupted, cleaning up" >&2; exit 130' INT TERM
}

netns_setup() {
  netns_cleanup  # leftovers of an interrupted run
  netns_trap
  local p q ns
  for p in "${!NETNS_NAMES[@]}"; do
    ns=${NETNS_NAMES[$p]}
    ip netns add "$ns"
    ip link add "${NETNS_LINK}$p" type veth peer name eth0 netns "$ns"
    ip -n "$ns" link set eth0 address "${NETNS_MAC}$p"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$ns" addr add "${NETNS_IPS[$p]}/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip link set "${NETNS_LINK}$p" up
    sysctl -qw "net.ipv6.conf.${NETNS_LINK}$p.disable_ipv6=1"
    # Queued packets must be MTU-sized (no TSO/GSO/GRO), and frames leave with full checksums
    # (af_packet reads what the veth carries).
    ip netns exec "$ns" ethtool -K eth0 tx off tso off gso off gro off >/dev/null 2>&1 || true
    ethtool -K "${NETNS_LINK}$p" tx off tso off gso off gro off >/dev/null 2>&1 || true
    for q in "${!NETNS_NAMES[@]}"; do
      [[ $q == "$p" ]] && continue
      ip -n "$ns" neigh add "${NETNS_IPS[$q]}" lladdr "${NETNS_MAC}$q" dev eth0 nud permanent
    done
  done
}

# netns_swemu CONFIG SOCKET LOG [swemu options...]: starts swemu in the background (its pid
# added to NETNS_PIDS) and waits until its control socket answers; exits 1 when it does not.
netns_swemu() {
  local config=$1 sock=$2 log=$3
  shift 3
  "$NETNS_SWEMU" --config "$config" --control-socket "$sock" "$@" -- -l 0 --no-huge -m 512 \
    >"$log" 2>&1 &
  local pid=$!
  NETNS_PIDS+=("$pid")
  for _ in $(seq 100); do
    "$NETNS_CLI" --socket "$sock" show ports >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  cat "$log" >&2
  echo "$NETNS_TAG: swemu did not come up" >&2
  exit 1
}
