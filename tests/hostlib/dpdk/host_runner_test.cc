// HostRunner on a net_ring port (it loops what it sends back to itself): frames reach the
// endpoint, timers fire no earlier than asked, a timeout names what was left, and idle rounds
// back off to sleeps unless busy polling was asked for, and a watched busy peer (the switch)
// that is off its CPU holds the timers.
#include "hostlib/dpdk/host_runner.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/wire/frame_builder.h"
#include "tests/hostlib/dpdk/eal_environment.h"
#include "tests/hostlib/dpdk/test_endpoints.h"

namespace swemu {
namespace {

using testing::EalStatus;
using testing::Frames;
using testing::Pinger;

Frames MakeFrames(uint16_t count) {
  Frames frames;
  for (uint16_t id = 0; id < count; ++id) {
    frames.push_back(FrameBuilder()
                         .Eth(MacAddr::FromU64(0xb), MacAddr::FromU64(0xa))
                         .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
                         .Identification(id)
                         .Udp(1000, 2000)
                         .Payload(18 + id % 100)
                         .Build());
  }
  return frames;
}

class HostRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(EalStatus().ok()) << EalStatus().message();
    DpdkHostConfig config;
    config.ports = {"net_ring9"};
    config.mbufs = 1023;
    config.mbuf_cache = 32;
    auto host = DpdkHost::Open(config);
    ASSERT_TRUE(host.ok()) << host.message();
    host_ = std::move(*host);
  }
  void TearDown() override {
    if (host_ != nullptr) {
      EXPECT_TRUE(host_->Close().ok());
    }
  }

  std::unique_ptr<DpdkHost> host_;
};

TEST_F(HostRunnerTest, DeliversFramesAndFiresTimersNoEarlierThanAsked) {
  constexpr TimeNs kInterval = 50'000;
  const Frames frames = MakeFrames(200);
  Pinger pinger(host_->port(0), frames, 10, kInterval);
  HostRunner runner;
  runner.Add(pinger, host_->port(0));
  const TimeNs start = runner.NowNs() + 1'000'000;
  pinger.StartAt(start);
  Status run = runner.RunUntil([&] { return pinger.received().size() == frames.size(); },
                               5'000'000'000, [] { return std::string("echoes"); });
  ASSERT_TRUE(run.ok()) << run.message();
  EXPECT_EQ(pinger.received(), frames);
  ASSERT_EQ(pinger.fired_at().size(), 20u);
  EXPECT_GE(pinger.fired_at()[0], start);
  for (std::size_t i = 1; i < pinger.fired_at().size(); ++i) {
    EXPECT_GE(pinger.fired_at()[i] - pinger.fired_at()[i - 1], kInterval) << i;
  }
  EXPECT_EQ(runner.stats().timers, 20u);
  EXPECT_EQ(runner.stats().frames, 200u);
  EXPECT_EQ(host_->port(0).counters().tx_frames, 200u);
  EXPECT_EQ(host_->port(0).counters().rx_frames, 200u);
}

// Sends a burst on its first timer, then wants its timer again at once; records how many of
// the burst had come back each time the timer fired.
class BurstThenTimer final : public Endpoint {
 public:
  BurstThenTimer(Transport& port, Frames burst) : port_(port), burst_(std::move(burst)) {}
  void OnFrame(TimeNs, std::span<const uint8_t>) noexcept override { ++received_; }
  void OnTimer(TimeNs now) noexcept override {
    seen_at_timer_.push_back(received_);
    if (seen_at_timer_.size() == 1) {
      for (const auto& frame : burst_) (void)port_.Send(frame);
    }
    next_ = seen_at_timer_.size() < 3 ? now + 1 : kNever;
  }
  TimeNs NextTimer() const noexcept override { return next_; }
  void Pump(TimeNs) noexcept override {}
  const std::vector<uint64_t>& seen_at_timer() const { return seen_at_timer_; }
  uint64_t received() const { return received_; }

 private:
  Transport& port_;
  Frames burst_;
  TimeNs next_ = 0;
  uint64_t received_ = 0;
  std::vector<uint64_t> seen_at_timer_;
};

// A timer never gives up on an answer already in the receive ring: with 8 frames per round and
// 200 waiting, the due timer is held until the ring is empty (a timeout fired then would be
// spurious: the answers were here).
TEST_F(HostRunnerTest, ADueTimerWaitsUntilTheReceiveRingIsEmpty) {
  BurstThenTimer endpoint(host_->port(0), MakeFrames(200));
  HostRunnerOptions options;
  options.rx_budget = 8;
  options.busy_poll = true;
  HostRunner runner(options);
  runner.Add(endpoint, host_->port(0));
  Status run = runner.RunUntil([&] { return endpoint.seen_at_timer().size() == 3; }, 5'000'000'000,
                               [] { return std::string("timers"); });
  ASSERT_TRUE(run.ok()) << run.message();
  ASSERT_EQ(endpoint.seen_at_timer().size(), 3u);
  EXPECT_EQ(endpoint.seen_at_timer()[1], 200u);  // every frame was in before the timer fired
  EXPECT_GT(runner.stats().timers_held, 0u);
  EXPECT_GE(runner.stats().wall_ns, 1u);
}

TEST_F(HostRunnerTest, TimeoutNamesWhatIsUnfinishedAndIdleRoundsSleep) {
  Pinger pinger(host_->port(0), {}, 1, 1000);  // sends nothing, waits forever
  HostRunner runner;
  runner.Add(pinger, host_->port(0));
  Status run = runner.RunUntil([] { return false; }, 30'000'000,
                               [] { return std::string("pinger: 0 of 5 frames back"); });
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.message(), "host run timed out after 0.03 s: pinger: 0 of 5 frames back");
  EXPECT_GT(runner.stats().idle_sleeps, 0u);
  // Sleeps of 10 us and more: at most ~3000 rounds in 30 ms, where spinning makes millions.
  EXPECT_LT(runner.stats().rounds, 3'200u);
}

TEST_F(HostRunnerTest, BusyPollNeverSleeps) {
  Pinger pinger(host_->port(0), {}, 1, 1000);
  HostRunnerOptions options;
  options.busy_poll = true;
  HostRunner runner(options);
  runner.Add(pinger, host_->port(0));
  runner.RunFor(2'000'000);
  EXPECT_EQ(runner.stats().idle_sleeps, 0u);
  EXPECT_GT(runner.stats().rounds, 0u);
}

// Whether this process may count another thread's CPU time (perf_event_open); a machine whose
// perf_event_paranoid or seccomp forbids it cannot watch peers, and HostRunner says so.
std::string PeerWatchUnavailable() {
  Result<ThreadCpuClock> self = ThreadCpuClock::Open(getpid());
  return self.ok() ? std::string() : self.message();
}

// A child process standing in for a peer, running `body` (which never returns); killed and
// reaped when the test ends.
class ChildProcess {
 public:
  template <typename Body>
  explicit ChildProcess(Body body) : pid_(fork()) {
    if (pid_ == 0) {
      body();
      _exit(0);
    }
  }
  ~ChildProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};

// A timer that is due at a given time, once.
class OneTimer final : public Endpoint {
 public:
  explicit OneTimer(TimeNs at) : at_(at) {}
  void OnFrame(TimeNs, std::span<const uint8_t>) noexcept override {}
  void OnTimer(TimeNs now) noexcept override {
    fired_at_ = now;
    at_ = kNever;
  }
  TimeNs NextTimer() const noexcept override { return at_; }
  void Pump(TimeNs) noexcept override {}
  TimeNs fired_at() const { return fired_at_; }

 private:
  TimeNs at_;
  TimeNs fired_at_ = kNever;
};

// A busy-polling peer (a child spinning on a core, standing in for the switch) that loses its
// CPU (SIGSTOP: it is not running, as when another thread took its core) holds the hosts'
// timers: answers from a stalled switch are late, not lost. Without busy_peers the same timer
// fires on time; once the peer runs again, it fires too.
TEST_F(HostRunnerTest, TimersWaitWhileABusyPeerIsOffItsCpu) {
  if (const std::string why = PeerWatchUnavailable(); !why.empty()) GTEST_SKIP() << why;
  // The peer needs a CPU of its own, as the switch has: EAL pinned this thread to one, and a
  // child sharing it would get half of it and look stalled all the time.
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  cpu_set_t other;
  CPU_ZERO(&other);
  for (int cpu = 0; cpu < CPU_SETSIZE && cpu < get_nprocs(); ++cpu) {
    if (!CPU_ISSET(cpu, &mine)) CPU_SET(cpu, &other);
  }
  if (CPU_COUNT(&other) == 0) GTEST_SKIP() << "no CPU besides this thread's for the peer";
  const ChildProcess child([&other] {
    (void)sched_setaffinity(0, sizeof(other), &other);
    volatile uint64_t spin = 0;
    for (;;) spin = spin + 1;
  });
  const pid_t peer = child.pid();
  ASSERT_GT(peer, 0);
  ASSERT_EQ(kill(peer, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(waitpid(peer, &status, WUNTRACED), peer);  // stopped now

  for (bool watched : {false, true}) {
    HostRunnerOptions options;
    options.busy_poll = true;
    // Only the peer's stall is under test. This thread's own (a loaded machine takes its CPU
    // for a millisecond or more, as the CI's other tests do) would hold the timer too and let
    // the unwatched run end before it fired: a stall is counted here from a second lost.
    options.stall_ns = 1'000'000'000;
    if (watched) options.busy_peers = {peer};
    HostRunner runner(options);
    ASSERT_TRUE(runner.unwatched_peers().empty()) << runner.unwatched_peers().front();
    OneTimer endpoint(runner.NowNs() + 5'000'000);
    runner.Add(endpoint, host_->port(0));
    runner.RunFor(30'000'000);
    if (!watched) {
      EXPECT_NE(endpoint.fired_at(), kNever) << "an unwatched stall does not hold timers";
      EXPECT_EQ(runner.stats().peer_stalls, 0u);
      continue;
    }
    EXPECT_EQ(endpoint.fired_at(), kNever) << "fired while the peer was stopped";
    // How many checks saw the stall depends on how often this thread ran (fewer under a
    // sanitizer on a busy machine); the time they lost does not.
    EXPECT_GT(runner.stats().peer_stalls, 0u);
    EXPECT_GT(runner.stats().peer_lost_ns, 20'000'000u);
    // The peer runs again: the hold ends (it lasts at most as long as the stall did).
    ASSERT_EQ(kill(peer, SIGCONT), 0);
    Status run = runner.RunUntil([&] { return endpoint.fired_at() != kNever; }, 5'000'000'000,
                                 [] { return std::string("the timer after the peer resumed"); });
    EXPECT_TRUE(run.ok()) << run.message();
  }
}

// A peer that stays off its CPU longer than max_timer_hold_ns (here it never runs; one that
// exited looks the same, its clock stops) holds the timers no longer: its packets may be lost.
// And one that cannot be watched is named.
TEST_F(HostRunnerTest, APeerStalledBeyondTheHoldNoLongerHoldsTimers) {
  if (const std::string why = PeerWatchUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const ChildProcess child([] {
    for (;;) pause();
  });
  const pid_t peer = child.pid();
  ASSERT_GT(peer, 0);
  HostRunnerOptions options;
  options.busy_poll = true;
  options.max_timer_hold_ns = 10'000'000;
  options.busy_peers = {peer, 0x3fffffff};  // the second: no such thread
  HostRunner runner(options);
  ASSERT_EQ(runner.unwatched_peers().size(), 1u);
  EXPECT_NE(runner.unwatched_peers()[0].find("thread 1073741823: perf_event_open"),
            std::string::npos)
      << runner.unwatched_peers()[0];
  OneTimer endpoint(runner.NowNs() + 2'000'000);
  runner.Add(endpoint, host_->port(0));
  Status run = runner.RunUntil([&] { return endpoint.fired_at() != kNever; }, 5'000'000'000,
                               [] { return std::string("the timer"); });
  ASSERT_TRUE(run.ok()) << run.message();
  // Held while the stall was shorter than the hold's bound, then fired: at most 2 x 10 ms late.
  EXPECT_GE(endpoint.fired_at(), 2'000'000u);
  EXPECT_LT(endpoint.fired_at(), 2'000'000u + 40'000'000u);
  EXPECT_GT(runner.stats().peer_stalls, 0u);
}

}  // namespace
}  // namespace swemu
