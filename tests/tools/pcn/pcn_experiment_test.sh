#!/bin/bash
# tools/pcn_experiment.sh as a user runs it, shortened: both runs complete with every burst, the
# report and plot are written, the switch saw every START and burst arrival; bad options end
# with one line (exit 2) before anything is made; an interrupted run leaves no namespace, veth
# or process behind. Real time: the figures are measured, not asserted.
#   pcn_experiment_test.sh SOURCE_DIR BUILD_DIR TMP_DIR
set -uo pipefail
src=$1 build=$2 tmp=$3
script=$src/tools/pcn_experiment.sh
fail() { echo "FAIL: $*" >&2; exit 1; }
leftovers() {
  ip netns list | grep -qE '^swemu-(sw-pcn|pcn-)' && return 0
  pgrep -f "swemu-pcn (ddl|ps)" >/dev/null && return 0
  return 1
}
rm -rf "$tmp"; mkdir -p "$tmp"

# Bad input: one line, exit 2, nothing made.
for args in "--iterations x" "--cc bbr2" "--duration 3 --ddl-start 5" "--bogus" "--out"; do
  # shellcheck disable=SC2086
  out=$("$script" --build "$build" --out "$tmp/bad" $args 2>&1); rc=$?
  [[ $rc == 2 ]] || fail "'$args': exit $rc, want 2 ($out)"
  [[ $(wc -l <<<"$out") == 1 ]] || fail "'$args': more than one line: $out"
  [[ ! -e $tmp/bad ]] || fail "'$args' made $tmp/bad"
done
touch "$tmp/file"
out=$("$script" --build "$build" --out "$tmp/file" 2>&1); rc=$?
[[ $rc == 2 && $out == *"not a directory"* ]] || fail "--out FILE: exit $rc: $out"

# Stopped (SIGTERM; Ctrl-C is SIGINT, trapped the same way) once swemu is up: everything it
# made is gone.
"$script" --build "$build" --out "$tmp/int" --duration 20 --ddl-start 2 --idle 1 \
  --iterations 2 >"$tmp/int.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -s $tmp/int/without/telemetry.csv ]] && break; sleep 0.2; done
[[ -s $tmp/int/without/telemetry.csv ]] || { cat "$tmp/int.log"; fail "the run did not start"; }
kill -TERM "$pid"  # a background job ignores SIGINT; the script traps both
wait "$pid"; rc=$?
[[ $rc != 0 ]] || fail "an interrupted run exited 0"
sleep 1
leftovers && fail "an interrupted run left namespaces, links or processes: $(ip netns list)"

# A short run of both: every burst done, report and plot written.
"$script" --build "$build" --out "$tmp/run" --duration 10 --ddl-start 2 --idle 1 \
  --iterations 2 >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail "the short run failed"; }
cat "$tmp/run.log"
grep -q "queue at burst start" "$tmp/run.log" || fail "no report"
[[ -s $tmp/run/queue.png ]] || fail "no plot"
for r in without with; do
  for w in 1 2; do
    n=$(grep -o '"done_ns": [1-9]' "$tmp/run/$r/worker$w.json" | wc -l)
    [[ $n == 2 ]] || fail "$r worker $w: $n of 2 bursts done"
  done
done
grep -q '"starts": 4' "$tmp/run/with/pcn_stats.json" || fail "with: $(cat "$tmp/run/with/pcn_stats.json")"
grep -q '"bursts_arrived": 4' "$tmp/run/with/pcn_stats.json" || fail "with: bursts not seen"
grep -q '"starts": 0' "$tmp/run/without/pcn_stats.json" || fail "without: STARTs were sent"
leftovers && fail "a finished run left namespaces, links or processes"
echo "PASS"
