#!/bin/bash
# tools/dlcp_netns.sh as a user runs it, shortened: DLCP over kernel UDP through a real-time
# swemu running the dlcp program. Every flow meets its bound and is confirmed; strict priority
# shows (the front layers' class finishes before the back layers' for every sender); the switch
# dropped unimportant packets above S_i; bad options end with one line (exit 2) before anything
# is made, and so does a second run while one holds the namespaces; an interrupted run and a
# finished one leave no namespace, veth or process behind.
#   dlcp_netns_test.sh SOURCE_DIR BUILD_DIR TMP_DIR
set -uo pipefail
src=$1 build=$2 tmp=$3
script=$src/tools/dlcp_netns.sh
fail() { echo "FAIL: $*" >&2; exit 1; }
leftovers() {
  ip netns list | grep -qE '^swemu-(sw-dlcp|dlcp-)' && return 0
  pgrep -f "swemu-dlcp (send|recv)" >/dev/null && return 0
  return 1
}
rm -rf "$tmp"; mkdir -p "$tmp"

for args in "--senders 4" "--rate x" "--bytes 0" "--bound 100%" "--receiver-rate" "--bogus"; do
  # shellcheck disable=SC2086
  out=$("$script" --build "$build" --out "$tmp/bad" $args 2>&1); rc=$?
  [[ $rc == 2 ]] || fail "'$args': exit $rc, want 2 ($out)"
  [[ $(wc -l <<<"$out") == 1 ]] || fail "'$args': more than one line: $out"
  [[ ! -e $tmp/bad ]] || fail "'$args' made $tmp/bad"
done
touch "$tmp/file"
out=$("$script" --build "$build" --out "$tmp/file" 2>&1); rc=$?
[[ $rc == 2 && $out == *"not a directory"* ]] || fail "--out FILE: exit $rc: $out"

# Stopped (SIGTERM) while the hosts run: everything it made is gone.
"$script" --build "$build" --out "$tmp/int" --bytes 5MB --receiver-rate 20M >"$tmp/int.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -s $tmp/int/recv.log || -e $tmp/int/send1.log ]] && break; sleep 0.1; done
sleep 0.5
# A second run while this one holds the namespaces: one line, exit 2, the first untouched.
out=$("$script" --build "$build" --out "$tmp/second" 2>&1); rc=$?
[[ $rc == 2 && $(wc -l <<<"$out") == 1 && $out == *"another run"* ]] || fail "second run: exit $rc: $out"
[[ ! -e $tmp/second ]] || fail "the second run made $tmp/second"
ip netns list | grep -q '^swemu-dlcp-rx' || fail "the second run tore the first one's namespaces down"
kill -TERM "$pid"
wait "$pid"; rc=$?
[[ $rc != 0 ]] || fail "an interrupted run exited 0"
sleep 1
leftovers && fail "an interrupted run left namespaces, links or processes: $(ip netns list)"

"$script" --build "$build" --out "$tmp/run" --bytes 300KB >"$tmp/run.log" 2>&1 ||
  { cat "$tmp/run.log"; fail "the run failed"; }
cat "$tmp/run.log"
grep -q "recv: 21 of 21 flows confirmed (21 met their bound)" "$tmp/run.log" || fail "flows missing"
# Per sender: tag 0 (queue 6, served first) before tag 6 (queue 0).
for s in 1 2 3; do
  first=$(awk -v t="tensor $((100 * s)):" '$1" "$2 == t {print $3}' "$tmp/run/send$s.log")
  last=$(awk -v t="tensor $((100 * s + 6)):" '$1" "$2 == t {print $3}' "$tmp/run/send$s.log")
  awk -v a="$first" -v b="$last" 'BEGIN {exit !(a < b)}' ||
    fail "sender $s: the front layers' tensor took $first ms, the back layers' $last ms"
done
red=$(awk '$1 == "tm_red_not_ect" {print $2}' "$tmp/run/drops.txt")
[[ ${red:-0} -gt 0 ]] || fail "no selective drops: $(cat "$tmp/run/drops.txt")"
leftovers && fail "a finished run left namespaces, links or processes"
echo "PASS"
