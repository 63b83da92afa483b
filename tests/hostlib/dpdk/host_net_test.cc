#include "hostlib/dpdk/host_net.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/wire/frame_builder.h"
#include "tests/hostlib/dpdk/eal_environment.h"
#include "tests/hostlib/dpdk/test_endpoints.h"

namespace swemu {
namespace {

const MacAddr kMac = MacAddr::FromU64(0x020000000001ull);
const Ipv4Addr kLoopback = MakeIpv4Addr(127, 0, 0, 1);

struct Named {
  std::string name;
  MacAddr mac;
};

// Over kernel UDP, the endpoint sends through the socket and gets back, through the loop, the
// datagram it sent to its own port, on the loop's clock.
TEST(HostNetTest, OverKernelUdpAnEndpointSendsAndReceivesThroughTheLoop) {
  HostNet net;
  UdpSocketConfig config;
  config.bind_ip = kLoopback;
  config.local_mac = kMac;
  ASSERT_TRUE(net.OpenUdp(config).ok());
  ASSERT_FALSE(net.dpdk());
  ASSERT_NE(net.udp(), nullptr);
  EXPECT_EQ(net.transport(), net.udp());
  const std::vector<uint8_t> frame = FrameBuilder()
                                         .Eth(kMac, kMac)
                                         .Ipv4(kLoopback, kLoopback)
                                         .Udp(net.udp()->local_port(), net.udp()->local_port())
                                         .Payload(100)
                                         .Build();
  testing::Pinger pinger(*net.transport(), {frame}, 1, 1'000'000);
  pinger.StartAt(net.Now());
  net.Add(pinger);
  EXPECT_TRUE(net.RunUntil([&] { return !pinger.received().empty(); }, 2'000'000'000));
  ASSERT_EQ(pinger.received().size(), 1u);
  EXPECT_EQ(pinger.received()[0].size(), frame.size());
  EXPECT_FALSE(net.RunUntil([] { return false; }, 1'000'000));  // a timeout is false
}

TEST(HostNetTest, ABadSocketOrDevargsIsAnError) {
  HostNet udp;
  UdpSocketConfig config;
  config.bind_ip = MakeIpv4Addr(192, 0, 2, 1);  // TEST-NET-1: not this machine's
  EXPECT_FALSE(udp.OpenUdp(config).ok());
  ASSERT_TRUE(testing::EalStatus().ok()) << testing::EalStatus().message();
  HostNet dpdk;  // this process's EAL is up already: a second one is refused
  const Status opened = dpdk.OpenDpdk("net_bogus0", "swemu-test");
  EXPECT_FALSE(opened.ok());
  EXPECT_EQ(opened.message().rfind("--port", 0), 0u) << opened.message();
}

TEST(HostNetTest, ADpdkHostNeedsEveryPeersMac) {
  EXPECT_TRUE(NeedMacs(std::vector<Named>{{"a", kMac}, {"b", kMac}}).ok());
  const Status learn = NeedMacs(std::vector<Named>{{"a", kMac}, {"ps0", MacAddr{}}});
  ASSERT_FALSE(learn.ok());
  EXPECT_EQ(learn.message(),
            "--port: the job file gives ps0's MAC as learn; a host on a DPDK port sends whole "
            "frames and needs it (publish it in the hosts list)");
}

}  // namespace
}  // namespace swemu
