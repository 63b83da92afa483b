// set_queue_alpha, set_guaranteed_min and `show queues` on a switch's command table.
#include <gtest/gtest.h>

#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::SwitchHarness;

SwitchConfig L2l3() {
  SwitchConfig config;
  config.program = "l2l3";
  config.tm.shared_buffer_bytes = 100'000;
  return config;
}

TEST(TmBufferCommandsTest, SetQueueAlphaTakesEverySpellingAndAll) {
  SwitchHarness h(L2l3());
  ASSERT_TRUE(h.ok()) << h.error();
  h.MustCmd("set_queue_alpha 1 2 1/8");
  EXPECT_EQ(h.sw().tm().QueueAlpha(1, 2), 0.125);
  h.MustCmd("set_queue_alpha 1 all 2^-2");
  EXPECT_EQ(h.sw().tm().QueueAlpha(1, 7), 0.25);
  h.MustCmd("set_queue_alpha all 3 0.5");
  EXPECT_EQ(h.sw().tm().QueueAlpha(0, 3), 0.5);
  EXPECT_EQ(h.sw().tm().QueueAlpha(1, 2), 0.25);
  h.MustCmd("set_queue_alpha all all 0");
  EXPECT_EQ(h.sw().tm().QueueAlpha(1, 7), 0.0);
  for (const char* bad : {"set_queue_alpha 1 2 lots", "set_queue_alpha 1 2 2^20",
                          "set_queue_alpha 9 2 1/8", "set_queue_alpha 1 8 1/8",
                          "set_queue_alpha 1 2 -1"}) {
    Result<std::string> r = h.Cmd(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.message().find('\n'), std::string::npos) << r.message();
  }
  EXPECT_EQ(h.sw().tm().QueueAlpha(1, 2), 0.0);
}

TEST(TmBufferCommandsTest, GuaranteedMinThatDoesNotFitChangesNothing) {
  SwitchHarness h(L2l3());
  ASSERT_TRUE(h.ok()) << h.error();
  h.MustCmd("set_guaranteed_min 0 0 10KB");
  EXPECT_EQ(h.sw().tm().GuaranteedMin(0, 0), 10'000u);
  EXPECT_EQ(h.sw().tm().PoolBytes(), 90'000u);
  // 4 ports x 8 queues x 4000 B = 128000 B > 100000 B: refused, nothing set.
  Result<std::string> r = h.Cmd("set_guaranteed_min all all 4000");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(h.sw().tm().GuaranteedMin(1, 1), 0u);
  EXPECT_EQ(h.sw().tm().PoolBytes(), 90'000u);
  h.MustCmd("set_guaranteed_min all all 3000");  // 96000 B
  EXPECT_EQ(h.sw().tm().PoolBytes(), 4'000u);
}

TEST(TmBufferCommandsTest, ShowQueuesShowsAlphaAndTheCurrentLimit) {
  SwitchHarness h(L2l3());
  ASSERT_TRUE(h.ok()) << h.error();
  h.MustCmd("set_queue_alpha 1 0 1/4");
  h.MustCmd("set_guaranteed_min 1 0 1000");
  Result<std::string> shown = h.Cmd("show queues");
  ASSERT_TRUE(shown.ok()) << shown.message();
  // Shown though idle. Limit: its minimum + (100000 - 1000 reserved) / 4.
  EXPECT_NE(shown->find("port 1 queue 0: depth 0/1024 pkts 0 B, max 0 pkts 0 B, enq 0 deq 0 drop 0 "
                        "mark 0, ecn 0 B drop-thr 0 B rate 0 pps, alpha 1/4 min 1000 B limit "
                        "25750 B\n"),
            std::string::npos)
      << *shown;
  EXPECT_EQ(shown->find("queue 1:"), std::string::npos) << *shown;  // idle, static: not shown
}

}  // namespace
}  // namespace swemu
