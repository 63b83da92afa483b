// The wire program: a port patch that reads no header. With several lcores its ingress runs
// on the lcore that received the packet (shard key = ingress port, owned by port % N).
#include <gtest/gtest.h>

#include <algorithm>

#include "pipeline/wire/frame_builder.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu::testing {
namespace {

TEST(WireTest, PatchesPortPairsAndKeysShardsByIngressPort) {
  SwitchConfig config;
  config.num_ports = 5;
  config.program = "wire";
  SwitchHarness h(config);
  ASSERT_TRUE(h.ok()) << h.error();
  const std::vector<uint8_t> frame(64, 0);  // no header a parser would accept: none is read
  for (PortId port = 0; port < 5; ++port) {
    Packet* pkt = h.pool().FromBytes(frame.data(), static_cast<uint32_t>(frame.size()));
    ASSERT_NE(pkt, nullptr);
    EXPECT_EQ(h.sw().ShardKeyOf(*pkt, port), port);
    h.pool().Free(pkt);
    h.Send(port, frame);
  }
  std::vector<PortId> out;
  for (const SentFrame& f : h.Drain()) out.push_back(f.port);
  std::sort(out.begin(), out.end());
  EXPECT_EQ(out, (std::vector<PortId>{0, 1, 2, 3, 4}));  // 0<->1, 2<->3, 4 back to 4
}

}  // namespace
}  // namespace swemu::testing
