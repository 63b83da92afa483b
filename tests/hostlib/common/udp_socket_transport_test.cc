// Kernel UDP sockets on loopback: frames in, datagrams on the wire, frames out.
#include "hostlib/common/udp_socket_transport.h"

#include <gtest/gtest.h>

#include <vector>

#include "hostlib/common/event_loop.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/udp.h"

namespace swemu {
namespace {

const Ipv4Addr kIpA = MakeIpv4Addr(127, 0, 0, 1), kIpB = MakeIpv4Addr(127, 0, 0, 2);
const MacAddr kMacB = MacAddr::FromU64(0x02000000000bull);

std::unique_ptr<UdpSocketTransport> Open(Ipv4Addr ip, uint16_t port = 0) {
  Result<std::unique_ptr<UdpSocketTransport>> t = UdpSocketTransport::Open({ip, port, 0, kMacB});
  EXPECT_TRUE(t.ok()) << t.message();
  return t.ok() ? std::move(*t) : nullptr;
}

// Polls until a frame arrives (loopback delivery is immediate, but give the kernel a moment).
std::vector<std::vector<uint8_t>> Receive(UdpSocketTransport& t, std::size_t want) {
  std::vector<std::vector<uint8_t>> frames;
  auto keep = [&frames](std::span<const uint8_t> f) { frames.emplace_back(f.begin(), f.end()); };
  MonotonicClock clock;
  const TimeNs deadline = clock.NowNs() + 2'000'000'000ull;
  while (frames.size() < want && clock.NowNs() < deadline) t.Poll(keep, 32);
  return frames;
}

TEST(UdpSocketTransportTest, SendsThePayloadAndSynthesisesTheFrameOnReceive) {
  auto a = Open(kIpA), b = Open(kIpB);
  ASSERT_TRUE(a && b);
  const std::vector<uint8_t> payload = {1, 2, 3, 4, 5, 6, 7};
  const std::vector<uint8_t> frame = FrameBuilder()
                                         .Eth(kMacB, MacAddr::FromU64(1))
                                         .Ipv4(kIpA, kIpB)
                                         .Udp(a->local_port(), b->local_port())
                                         .Payload(payload)
                                         .Build();
  ASSERT_TRUE(a->Send(frame));
  std::vector<std::vector<uint8_t>> got = Receive(*b, 1);
  ASSERT_EQ(got.size(), 1u);
  const std::vector<uint8_t>& f = got[0];
  ASSERT_EQ(f.size(), 42 + payload.size());
  EXPECT_EQ(HeaderAt<EthernetHeader>(f.data())->DstAddr(), kMacB);
  const auto* ip = HeaderAt<Ipv4Header>(f.data() + 14);
  EXPECT_EQ(ip->SrcAddr(), kIpA);
  EXPECT_EQ(ip->DstAddr(), kIpB);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(f.data() + 14, 20));
  const auto* udp = HeaderAt<UdpHeader>(f.data() + 34);
  EXPECT_EQ(udp->SrcPort(), a->local_port());
  EXPECT_EQ(udp->DstPort(), b->local_port());
  EXPECT_EQ(std::vector<uint8_t>(f.begin() + 42, f.end()), payload);
  EXPECT_EQ(a->counters().datagrams_sent, 1u);
  EXPECT_EQ(b->counters().datagrams_received, 1u);
}

TEST(UdpSocketTransportTest, TheFramesTosByteIsTheDatagrams) {
  auto a = Open(kIpA), b = Open(kIpB);
  ASSERT_TRUE(a && b);
  // A PCN-START (0x8A), an ACK (0x48 with Not-ECT), then no TOS again.
  for (uint8_t tos : {uint8_t{0x8A}, uint8_t{0x48}, uint8_t{0x00}}) {
    const std::vector<uint8_t> frame = FrameBuilder()
                                           .Eth(kMacB, MacAddr::FromU64(1))
                                           .Ipv4(kIpA, kIpB)
                                           .Tos(tos)
                                           .Udp(a->local_port(), b->local_port())
                                           .Payload(8)
                                           .Build();
    ASSERT_TRUE(a->Send(frame));
    std::vector<std::vector<uint8_t>> got = Receive(*b, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(HeaderAt<Ipv4Header>(got[0].data() + 14)->tos, tos);
  }
}

TEST(UdpSocketTransportTest, GroupFramesAreReplicatedToTheAddedMembers) {
  auto a = Open(kIpA), b = Open(kIpB), c = Open(MakeIpv4Addr(127, 0, 0, 3));
  ASSERT_TRUE(a && b && c);
  const Ipv4Addr group = MakeIpv4Addr(239, 9, 9, 9);
  a->AddGroupMember(group, kIpB, b->local_port());
  a->AddGroupMember(group, MakeIpv4Addr(127, 0, 0, 3), c->local_port());
  ASSERT_TRUE(
      a->Send(FrameBuilder().Eth(kMacB, kMacB).Ipv4(kIpA, group).Udp(1, 9000).Payload(8).Build()));
  EXPECT_EQ(Receive(*b, 1).size(), 1u);
  EXPECT_EQ(Receive(*c, 1).size(), 1u);
  EXPECT_EQ(a->counters().datagrams_sent, 2u);
}

TEST(UdpSocketTransportTest, NonUdpFramesAreRefusedAndCounted) {
  auto a = Open(kIpA);
  ASSERT_TRUE(a);
  EXPECT_FALSE(
      a->Send(FrameBuilder().Eth(kMacB, kMacB).EtherType(kEtherTypeArp).Payload(28).Build()));
  EXPECT_FALSE(a->Send(FrameBuilder().Eth(kMacB, kMacB).Ipv4(kIpA, kIpB).Tcp(1, 2).Build()));
  EXPECT_FALSE(a->Send(std::vector<uint8_t>(10, 0)));
  EXPECT_EQ(a->counters().unsendable, 3u);
}

TEST(UdpSocketTransportTest, BindingAnAddressThisHostLacksFailsNamingIt) {
  auto a = Open(kIpA);
  ASSERT_TRUE(a);
  Result<std::unique_ptr<UdpSocketTransport>> bad =
      UdpSocketTransport::Open({MakeIpv4Addr(192, 0, 2, 1), 0, 0, kMacB});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("bind 192.0.2.1:0"), std::string::npos) << bad.message();
}

// An exclusive socket holds its address and port: a second socket on them is refused, whether
// it asks for SO_REUSEADDR or not, until the first is closed.
TEST(UdpSocketTransportTest, AnExclusiveSocketRefusesASecondOnItsAddressAndPort) {
  UdpSocketConfig config{kIpB, 0, 0, kMacB};
  config.exclusive = true;
  Result<std::unique_ptr<UdpSocketTransport>> first = UdpSocketTransport::Open(config);
  ASSERT_TRUE(first.ok()) << first.message();
  config.port = (*first)->local_port();
  Result<std::unique_ptr<UdpSocketTransport>> second = UdpSocketTransport::Open(config);
  EXPECT_FALSE(second.ok());
  config.exclusive = false;
  second = UdpSocketTransport::Open(config);
  EXPECT_FALSE(second.ok());
  first->reset();
  config.exclusive = true;
  second = UdpSocketTransport::Open(config);
  EXPECT_TRUE(second.ok()) << second.message();
}

}  // namespace
}  // namespace swemu
