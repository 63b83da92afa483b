#include "hostlib/dpdk/host_runner.h"

#include <rte_pause.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>

namespace swemu {
namespace {

// Frames that left count as work; refused ones do not, so a dry pool cannot keep us spinning.
uint64_t TxActivity(const DpdkPortCounters& c) { return c.tx_frames; }

TimeNs ThreadCpuNs() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * 1'000'000'000ull + static_cast<TimeNs>(ts.tv_nsec);
}

constexpr TimeNs kCheckIntervalNs = 1'000'000;

}  // namespace

HostRunner::HostRunner(HostRunnerOptions options) : options_(std::move(options)) {
  for (pid_t tid : options_.busy_peers) {
    Result<ThreadCpuClock> clock = ThreadCpuClock::Open(tid);
    if (clock.ok()) {
      peers_.push_back(std::move(*clock));
    } else {
      unwatched_peers_.push_back(clock.message());
    }
  }
}

void HostRunner::Add(Endpoint& endpoint, DpdkPortTransport& port) {
  pairs_.push_back({&endpoint, &port});
}

bool HostRunner::Round(TimeNs now) noexcept {
  uint64_t tx_before = 0;
  for (const Pair& pair : pairs_) tx_before += TxActivity(pair.port->counters());
  uint64_t events = 0;
  for (const Pair& pair : pairs_) {
    Endpoint& endpoint = *pair.endpoint;
    // Pump after every frame, as the Endpoint contract asks: an ACK may open the window.
    const uint32_t frames = pair.port->Poll(
        [&](std::span<const uint8_t> frame) {
          endpoint.OnFrame(now, frame);
          endpoint.Pump(now);
        },
        options_.rx_budget);
    stats_.frames += frames;
    events += frames;
    // Once per round: an endpoint that stays due cannot starve the others. And only once its
    // receive ring is empty: a frame still waiting there may be the very answer the timer is
    // about to give up on (after the loop lost the CPU, say), so that timeout would be spurious.
    if (endpoint.NextTimer() <= now) {
      if (frames < options_.rx_budget && now >= timers_held_until_) {
        endpoint.OnTimer(now);
        ++stats_.timers;
      } else {
        ++stats_.timers_held;
      }
      ++events;
    }
    endpoint.Pump(now);
  }
  uint64_t tx_after = 0;
  for (const Pair& pair : pairs_) {
    pair.port->Flush();
    tx_after += TxActivity(pair.port->counters());
  }
  ++stats_.rounds;
  return events > 0 || tx_after != tx_before;
}

void HostRunner::Idle(TimeNs now, TimeNs deadline) noexcept {
  if (options_.busy_poll) return;
  if (++idle_rounds_ <= options_.idle_spins) {
    rte_pause();
    return;
  }
  TimeNs wake = deadline;
  for (const Pair& pair : pairs_) wake = std::min(wake, pair.endpoint->NextTimer());
  sleep_ns_ =
      sleep_ns_ == 0 ? options_.min_sleep_ns : std::min(sleep_ns_ * 2, options_.max_sleep_ns);
  const TimeNs sleep = std::min(sleep_ns_, wake > now ? wake - now : 0);
  if (sleep == 0) return;
  ++stats_.idle_sleeps;
  const TimeNs before = NowNs();
  std::this_thread::sleep_for(std::chrono::nanoseconds(sleep));
  stats_.slept_ns += NowNs() - before;
}

void HostRunner::CheckContention(TimeNs now) noexcept {
  if (now - check_wall_ < kCheckIntervalNs) return;
  const TimeNs cpu = ThreadCpuNs();
  const TimeNs busy = (now - check_wall_) - (stats_.slept_ns - check_slept_);
  const TimeNs ran = cpu - check_cpu_;
  const TimeNs lost = busy > ran ? busy - ran : 0;
  stats_.lost_ns += lost;
  if (lost > options_.stall_ns) {
    ++stats_.stalls;
    timers_held_until_ =
        std::max(timers_held_until_, now + std::min(lost, options_.max_timer_hold_ns));
  }
  CheckPeers(now, now - check_wall_);
  check_wall_ = now;
  check_cpu_ = cpu;
  check_slept_ = stats_.slept_ns;
}

void HostRunner::CheckPeers(TimeNs now, TimeNs interval) noexcept {
  TimeNs lost = 0;
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    const TimeNs cpu = peers_[i].ReadNs();
    const TimeNs before = peer_cpu_[i];
    peer_cpu_[i] = cpu;
    if (cpu == ThreadCpuClock::kUnreadable || before == ThreadCpuClock::kUnreadable) continue;
    const TimeNs ran = cpu > before ? cpu - before : 0;
    if (ran < interval / 2) lost = std::max(lost, interval - ran);
  }
  if (lost == 0) {
    peer_stall_start_ = kNever;
    return;
  }
  ++stats_.peer_stalls;
  stats_.peer_lost_ns += lost;
  if (peer_stall_start_ == kNever) peer_stall_start_ = now - lost;
  const TimeNs lasted = now - peer_stall_start_;
  // A peer off its CPU this long (or gone: its clock stops) is not merely late.
  if (lasted > options_.max_timer_hold_ns) return;
  timers_held_until_ = std::max(timers_held_until_, now + lasted);
}

bool HostRunner::RunRounds(const std::function<bool()>& done, TimeNs deadline) {
  TimeNs now = NowNs();
  const TimeNs start = now;
  check_wall_ = now;
  check_cpu_ = ThreadCpuNs();
  check_slept_ = stats_.slept_ns;
  peer_cpu_.clear();
  for (const ThreadCpuClock& peer : peers_) peer_cpu_.push_back(peer.ReadNs());
  peer_stall_start_ = kNever;
  struct WallTime {  // counted however the run ends
    HostRunner* runner;
    TimeNs start;
    ~WallTime() { runner->stats_.wall_ns += runner->NowNs() - start; }
  } wall{this, start};
  for (const Pair& pair : pairs_) pair.endpoint->Pump(now);
  while (true) {
    if (Round(now)) {
      idle_rounds_ = 0;
      sleep_ns_ = 0;
      stats_.busy_ns += NowNs() - now;
    } else {
      ++stats_.idle_rounds;
      Idle(now, deadline);
    }
    if (done && done()) return true;
    now = NowNs();
    CheckContention(now);
    if (now >= deadline) return false;
  }
}

Status HostRunner::RunUntil(const std::function<bool()>& done, TimeNs timeout_ns,
                            const std::function<std::string()>& unfinished) {
  if (RunRounds(done, NowNs() + timeout_ns)) return Status::Ok();
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", static_cast<double>(timeout_ns) / 1e9);
  return Status::Error(std::string("host run timed out after ") + seconds +
                       " s: " + (unfinished ? unfinished() : std::string("not done")));
}

void HostRunner::RunFor(TimeNs duration_ns) { (void)RunRounds(nullptr, NowNs() + duration_ns); }

std::string HostContentionLine(const HostRunnerStats& stats, bool peers_watched) {
  char line[300];
  int n = std::snprintf(line, sizeof(line),
                        "hosts' lcore: %llu stalls, %.0f ms of CPU lost to other processes",
                        static_cast<unsigned long long>(stats.stalls),
                        static_cast<double>(stats.lost_ns) / 1e6);
  if (peers_watched) {
    std::snprintf(line + n, sizeof(line) - n, "; swemu's lcore: %llu stalls, %.0f ms off its CPU",
                  static_cast<unsigned long long>(stats.peer_stalls),
                  static_cast<double>(stats.peer_lost_ns) / 1e6);
  }
  return std::string(line) + "\n";
}

}  // namespace swemu
