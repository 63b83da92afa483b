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
