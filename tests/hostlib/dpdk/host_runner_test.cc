// HostRunner on a net_ring port (it loops what it sends back to itself): frames reach the
// endpoint, timers fire no earlier than asked, a timeout names what was left, and idle rounds
// back off to sleeps unless busy polling was asked for.
#include "hostlib/dpdk/host_runner.h"

#include <gtest/gtest.h>

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
  HostRunner runner(HostRunnerOptions{.busy_poll = true});
  runner.Add(pinger, host_->port(0));
  runner.RunFor(2'000'000);
  EXPECT_EQ(runner.stats().idle_sleeps, 0u);
  EXPECT_GT(runner.stats().rounds, 0u);
}

}  // namespace
}  // namespace swemu
