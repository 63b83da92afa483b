// DpdkHost and DpdkPortTransport on a net_ring port, which loops every frame it sends back to
// its own RX: frames, counters, drops and the mbuf accounting at Close. No swemu needed.
#include "hostlib/dpdk/dpdk_host.h"

#include <gtest/gtest.h>
#include <rte_ethdev.h>

#include "pipeline/wire/frame_builder.h"
#include "tests/hostlib/dpdk/eal_environment.h"

namespace swemu {
namespace {

using testing::EalStatus;

std::vector<uint8_t> Frame(uint16_t id, std::size_t payload) {
  return FrameBuilder()
      .Eth(MacAddr::FromU64(0xb), MacAddr::FromU64(0xa))
      .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
      .Identification(id)
      .Udp(1000, 2000)
      .Payload(payload)
      .Build();
}

Result<std::unique_ptr<DpdkHost>> OpenRing(const std::string& devargs) {
  DpdkHostConfig config;
  config.ports = {devargs};
  config.mbufs = 1023;
  config.mbuf_cache = 32;
  return DpdkHost::Open(config);
}

// A virtual device runs without the PCI bus and hugepages; a NIC's PCI address gets neither
// flag (its bus must be scanned, its DMA memory pinned).
TEST(DpdkHostTest, PortEalArgsLeaveOutPciAndHugepagesOnlyForVirtualDevices) {
  EXPECT_EQ(DpdkHost::PortEalArgs("net_af_packet0,iface=eth0", 128),
            (std::vector<std::string>{"--no-pci", "--no-huge", "-m", "128"}));
  EXPECT_EQ(DpdkHost::PortEalArgs("net_virtio_user0,path=/tmp/x.sock", 256),
            (std::vector<std::string>{"--no-pci", "--no-huge", "-m", "256"}));
  EXPECT_TRUE(DpdkHost::PortEalArgs("0000:3b:00.0", 128).empty());
}

TEST(DpdkHostTest, SentFramesComeBackOnARingPortWithCounters) {
  ASSERT_TRUE(EalStatus().ok()) << EalStatus().message();
  auto host = OpenRing("net_ring0");
  ASSERT_TRUE(host.ok()) << host.message();
  DpdkPortTransport& port = (*host)->port(0);
  std::vector<std::vector<uint8_t>> sent, received;
  auto keep = [&](std::span<const uint8_t> f) { received.emplace_back(f.begin(), f.end()); };
  for (uint16_t round = 0; round < 20; ++round) {
    for (uint16_t i = 0; i < 40; ++i) {  // more than a burst: Send flushes a full one itself
      sent.push_back(Frame(round * 40 + i, i % 2 ? 18 : 264));
      ASSERT_TRUE(port.Send(sent.back()));
    }
    port.Flush();
    EXPECT_EQ(port.Poll(keep, 1000), 40u);
  }
  EXPECT_EQ(received, sent);
  EXPECT_EQ(port.counters().tx_frames, 800u);
  EXPECT_EQ(port.counters().rx_frames, 800u);
  EXPECT_EQ(port.counters().tx_no_buffer + port.counters().tx_port_full, 0u);
  EXPECT_EQ(port.counters().ToString(), "rx 800 tx 800 tx_no_buffer 0 tx_port_full 0");
  EXPECT_EQ(port.Poll(keep, 32), 0u);  // nothing more
  EXPECT_TRUE((*host)->Close().ok());
}

TEST(DpdkHostTest, PollStopsAtMaxAndLeavesTheRestQueued) {
  ASSERT_TRUE(EalStatus().ok()) << EalStatus().message();
  auto host = OpenRing("net_ring0");
  ASSERT_TRUE(host.ok()) << host.message();
  DpdkPortTransport& port = (*host)->port(0);
  for (uint16_t i = 0; i < 50; ++i) ASSERT_TRUE(port.Send(Frame(i, 18)));
  port.Flush();
  uint32_t calls = 0;
  auto count = [&](std::span<const uint8_t>) { ++calls; };
  EXPECT_EQ(port.Poll(count, 7), 7u);
  EXPECT_EQ(port.Poll(count, 100), 43u);
  EXPECT_EQ(calls, 50u);
  EXPECT_TRUE((*host)->Close().ok());
}

// A frame longer than an mbuf is refused by Send; a chained (multi-segment) frame arriving is
// dropped and counted by Poll; unsent and unread frames are still returned to the pool at Close.
TEST(DpdkHostTest, OversizeAndMultiSegmentFramesAreCountedAndNothingLeaks) {
  ASSERT_TRUE(EalStatus().ok()) << EalStatus().message();
  auto host = OpenRing("net_ring1");
  ASSERT_TRUE(host.ok()) << host.message();
  DpdkPortTransport& port = (*host)->port(0);
  EXPECT_FALSE(port.Send(std::vector<uint8_t>(9000, 0x55)));
  EXPECT_EQ(port.counters().tx_no_buffer, 1u);

  rte_mempool* pool = rte_mempool_lookup("swemu_mbufs");
  ASSERT_NE(pool, nullptr);
  rte_mbuf* head = rte_pktmbuf_alloc(pool);
  rte_mbuf* tail = rte_pktmbuf_alloc(pool);
  ASSERT_NE(rte_pktmbuf_append(head, 60), nullptr);
  ASSERT_NE(rte_pktmbuf_append(tail, 60), nullptr);
  ASSERT_EQ(rte_pktmbuf_chain(head, tail), 0);
  ASSERT_EQ(rte_eth_tx_burst(port.port_id(), 0, &head, 1), 1);
  ASSERT_TRUE(port.Send(Frame(1, 18)));
  port.Flush();
  uint32_t handed = 0;
  EXPECT_EQ(port.Poll([&](std::span<const uint8_t> f) { handed += f.size() == 60 ? 1 : 0; }), 1u);
  EXPECT_EQ(handed, 1u);
  EXPECT_EQ(port.counters().rx_multi_segment, 1u);
  EXPECT_EQ(port.counters().rx_frames, 1u);

  // Left behind: one frame queued for TX, one waiting on RX.
  ASSERT_TRUE(port.Send(Frame(2, 18)));
  ASSERT_TRUE(port.Send(Frame(3, 18)));
  port.Flush();
  ASSERT_TRUE(port.Send(Frame(4, 18)));
  EXPECT_GT((*host)->mbufs_in_use(), 0u);
  Status closed = (*host)->Close();
  EXPECT_TRUE(closed.ok()) << closed.message();
}

// A host moves frames without the pipeline: it takes an mbuf pool (at least its rings: a smaller
// one would run dry under a burst of sends and stop RX) and no pool of the switch's packet
// descriptors; a pool larger than EAL's memory is a one-line error.
TEST(DpdkHostTest, MakesOnlyAnMbufPoolAndNamesAPoolTooLarge) {
  ASSERT_TRUE(EalStatus().ok()) << EalStatus().message();
  auto host = OpenRing("net_ring4");
  ASSERT_TRUE(host.ok()) << host.message();
  const rte_mempool* mbufs = rte_mempool_lookup("swemu_mbufs");
  ASSERT_NE(mbufs, nullptr);
  // 1023 asked for: raised to the port's 256 RX and 1024 TX descriptors, twice the cache (32)
  // and a margin of 1024.
  EXPECT_EQ(mbufs->size, 256u + 1024 + 2 * 32 + 1024);
  EXPECT_EQ(rte_mempool_lookup("swemu_pkts"), nullptr);
  EXPECT_TRUE((*host)->Close().ok());
  EXPECT_EQ(rte_mempool_lookup("swemu_mbufs"), nullptr);  // freed at Close

  DpdkHostConfig config;
  config.ports = {"net_ring5"};
  config.mbufs = 4'000'000;  // about 9 GB of mbufs
  auto too_large = DpdkHost::Open(config);
  ASSERT_FALSE(too_large.ok());
  EXPECT_EQ(too_large.message().rfind("mbuf pool: not enough memory for 4000000 mbufs", 0), 0u)
      << too_large.message();
  EXPECT_EQ(rte_mempool_lookup("swemu_mbufs"), nullptr);
}

// Close detaches the device, so the same devargs opens again (a process may reopen its ports).
TEST(DpdkHostTest, SameDevargsOpenAgainAfterClose) {
  ASSERT_TRUE(EalStatus().ok()) << EalStatus().message();
  for (int i = 0; i < 2; ++i) {
    auto host = OpenRing("net_ring2");
    ASSERT_TRUE(host.ok()) << "open " << i << ": " << host.message();
    EXPECT_TRUE((*host)->link_up(0));
    EXPECT_TRUE((*host)->Close().ok());
  }
}

TEST(DpdkHostTest, BadDevargsAreAOneLineErrorNamingThePort) {
  ASSERT_TRUE(EalStatus().ok()) << EalStatus().message();
  DpdkHostConfig config;
  config.mbufs = 511;
  config.ports = {"net_ring3", "net_foo0"};
  auto unknown = DpdkHost::Open(config);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.message(), "port 1: devargs net_foo0: no such driver");

  config.ports = {"net_virtio_user5,path=/nonexistent/swemu.sock"};
  auto no_socket = DpdkHost::Open(config);
  ASSERT_FALSE(no_socket.ok());
  EXPECT_EQ(no_socket.message().rfind("port 0: devargs net_virtio_user5,path=/nonexistent/", 0), 0u)
      << no_socket.message();
  EXPECT_NE(no_socket.message().find("probe failed"), std::string::npos) << no_socket.message();
  EXPECT_EQ(no_socket.message().find('\n'), std::string::npos);

  config.ports = {};
  auto none = DpdkHost::Open(config);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.message(), "dpdk host: no ports");

  // The failed opens released their pool and ports: a good port opens now.
  config.ports = {"net_ring3"};
  auto good = DpdkHost::Open(config);
  ASSERT_TRUE(good.ok()) << good.message();
  EXPECT_TRUE((*good)->Close().ok());
}

}  // namespace
}  // namespace swemu
