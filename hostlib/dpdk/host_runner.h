#pragma once
// Runs host endpoints on DPDK ports in real time, all on the calling lcore (run to completion):
//   loop { poll every port and hand its frames to its endpoint; fire due timers; Pump; flush TX }
// until the caller's predicate holds or a deadline passes. When a round finds nothing to do the
// loop pauses a few rounds, then sleeps 10 us doubling to 200 us (never past the next timer), so
// hosts share a small machine; busy_poll keeps it spinning for latency measurements.
//
// Timers and scheduling delay. An endpoint's timer fires only once its port's receive ring is
// empty, so a timeout never gives up on an answer that is already here. Every millisecond the
// loop compares wall time with its thread's CPU time (less its own sleeps): the difference is
// time it was runnable but off the CPU (a busy machine). After such a stall (> 1 ms), timers are
// held for as long as the stall lasted, since the switch and the links were likely starved too
// and the answers are on their way: scheduling delay alone does not time packets out.
//
// The switch may lose its CPU instead: on a machine it shares with the hosts, any other runnable
// thread takes a slice of a few ms from one of the two pollers, and its answers are then late,
// not lost. busy_peers names threads that busy-poll a core for these hosts (the switch's lcore):
// in a check where one ran less than half the interval it was off its CPU, and timers are held
// for as long as that stall has lasted, as after the runner's own. A peer stalled for longer than
// max_timer_hold_ns (or gone) no longer holds them: its packets may really be lost.
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/dpdk/dpdk_host.h"
#include "hostlib/dpdk/thread_cpu_clock.h"
#include "pipeline/core/status.h"
#include "swemu/dpdk/tsc_clock.h"

namespace swemu {

struct HostRunnerOptions {
  bool busy_poll = false;
  uint32_t idle_spins = 64;  // idle rounds of rte_pause before the first sleep
  TimeNs min_sleep_ns = 10'000;
  TimeNs max_sleep_ns = 200'000;
  uint32_t rx_budget = DpdkPortTransport::kBurst;  // frames per port per round
  TimeNs stall_ns = 1'000'000;            // lost CPU time in one check interval that is a stall
  TimeNs max_timer_hold_ns = 64'000'000;  // timers are held at most this long after a stall
  // Thread ids of busy-polling peers (a process's main thread has its pid), watched through
  // ThreadCpuClock; one that cannot be watched is named by unwatched_peers().
  std::vector<pid_t> busy_peers;
};

struct HostRunnerStats {
  uint64_t rounds = 0;
  uint64_t idle_sleeps = 0;
  uint64_t idle_rounds = 0;  // rounds that found nothing to do
  TimeNs busy_ns = 0;        // wall time in rounds that did something
  uint64_t frames = 0;       // delivered to endpoints
  uint64_t timers = 0;       // OnTimer calls
  uint64_t timers_held = 0;  // due timers deferred: frames still waiting, or after a stall
  uint64_t stalls = 0;       // check intervals that lost more than stall_ns of CPU
  TimeNs lost_ns = 0;        // wall time off the CPU while not sleeping (contention)
  uint64_t peer_stalls = 0;  // checks in which a busy peer ran less than half the interval
  TimeNs peer_lost_ns = 0;   // the time those checks' peers did not run
  TimeNs slept_ns = 0;       // idle back-off sleeps
  TimeNs wall_ns = 0;        // time inside RunUntil/RunFor
};

// One line for a demo's output: "hosts' lcore: N stalls, X ms of CPU lost to other processes".
// With peers_watched (busy_peers set), also the busy peers' stalls: "; swemu's lcore: ...".
std::string HostContentionLine(const HostRunnerStats& stats, bool peers_watched = false);

class HostRunner {
 public:
  explicit HostRunner(HostRunnerOptions options = {});

  // The endpoint receives the port's frames and sends through it (wired by the caller). Both
  // must outlive the runner's runs.
  void Add(Endpoint& endpoint, DpdkPortTransport& port);

  // Runs until done() (checked after every round) or until timeout_ns has passed. On timeout:
  // "host run timed out after 2.5 s: <unfinished()>" (unfinished names what was left to do).
  Status RunUntil(const std::function<bool()>& done, TimeNs timeout_ns,
                  const std::function<std::string()>& unfinished);
  // Runs for duration_ns, whatever happens.
  void RunFor(TimeNs duration_ns);

  // The clock endpoints see: nanoseconds since the runner was made.
  TimeNs NowNs() const noexcept { return clock_.NowNs(); }
  const HostRunnerStats& stats() const noexcept { return stats_; }
  // Why busy peers are not watched ("thread 123: perf_event_open: Permission denied"), one
  // line each; empty when all are.
  const std::vector<std::string>& unwatched_peers() const noexcept { return unwatched_peers_; }

 private:
  struct Pair {
    Endpoint* endpoint;
    DpdkPortTransport* port;
  };

  // One round at `now`; returns whether it did anything (frames in or out, timers).
  bool Round(TimeNs now) noexcept;
  // Backs off after an idle round, but never past the earliest timer or the deadline.
  void Idle(TimeNs now, TimeNs deadline) noexcept;
  bool RunRounds(const std::function<bool()>& done, TimeNs deadline);
  // Every millisecond: CPU time lost to other processes since the last check.
  void CheckContention(TimeNs now) noexcept;
  // The same for busy_peers over the last `interval`: holds timers while one is off its CPU.
  void CheckPeers(TimeNs now, TimeNs interval) noexcept;

  HostRunnerOptions options_;
  TscClock clock_;
  std::vector<Pair> pairs_;
  HostRunnerStats stats_;
  uint32_t idle_rounds_ = 0;
  TimeNs sleep_ns_ = 0;
  TimeNs timers_held_until_ = 0;
  TimeNs check_wall_ = 0;  // at the last contention check: wall, thread CPU and slept time
  TimeNs check_cpu_ = 0;
  TimeNs check_slept_ = 0;
  std::vector<ThreadCpuClock> peers_;
  std::vector<std::string> unwatched_peers_;
  std::vector<TimeNs> peer_cpu_;  // each watched peer's CPU time at the last check
  TimeNs peer_stall_start_ = kNever;
};

}  // namespace swemu
