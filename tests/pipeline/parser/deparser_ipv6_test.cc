// The deparser on IPv6: L4 checksums over IPv6's pseudo-header, never an IPv4 checksum, and
// VLAN push/pop keeping the IPv6 offset right.
#include <gtest/gtest.h>

#include "pipeline/parser/deparser.h"
#include "pipeline/wire/ipv6.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"
#include "tests/pipeline/parser/parser_test_util.h"

namespace swemu {
namespace {

using testing::Tcp6Frame;
using testing::Udp6Frame;

class DeparserIpv6Test : public testing::PacketTest {
 protected:
  // The pseudo-header and the segment with its checksum sum to all ones.
  static bool L4Ok(const Packet& p, uint32_t l4, uint8_t proto) {
    const uint8_t* ip = p.data + p.hdr.ipv6;
    const uint32_t len =
        p.hdr.ipv6 + kIpv6HeaderLen + HeaderAt<Ipv6Header>(ip)->PayloadLength() - l4;
    return FoldSum(Ipv6PseudoHeaderSum(ip, proto, len) + OnesComplementSum(p.data + l4, len)) ==
           0xFFFF;
  }

  Parser parser_{ParserConfig{}};
  Deparser deparser_{DeparserConfig{/*zero_udp_checksum=*/true}};
};

TEST_F(DeparserIpv6Test, DirtyUdpGetsIpv6sChecksumEvenWhenZeroingIsConfigured) {
  Packet* p = MakeParsed(parser_, Udp6Frame().Build());
  ASSERT_TRUE(L4Ok(*p, p->hdr.udp, kIpProtoUdp));
  HeaderAt<UdpHeader>(p->data + p->hdr.udp)->SetDstPort(4791);
  EXPECT_FALSE(L4Ok(*p, p->hdr.udp, kIpProtoUdp));
  const auto ip6 = std::vector<uint8_t>(p->data + 14, p->data + 54);
  p->hdr.dirty = kDirtyL4 | kDirtyIpv4;
  deparser_.Deparse(*p);
  EXPECT_TRUE(L4Ok(*p, p->hdr.udp, kIpProtoUdp));
  EXPECT_NE(HeaderAt<UdpHeader>(p->data + p->hdr.udp)->Checksum(), 0);
  EXPECT_EQ(std::vector<uint8_t>(p->data + 14, p->data + 54), ip6);  // no IPv4 checksum written
  EXPECT_EQ(p->hdr.dirty, 0);
}

TEST_F(DeparserIpv6Test, DirtyTcpGetsIpv6sChecksum) {
  Packet* p = MakeParsed(parser_, Tcp6Frame().Build());
  p->data[p->hdr.payload] ^= 0x5A;
  EXPECT_FALSE(L4Ok(*p, p->hdr.tcp, kIpProtoTcp));
  p->hdr.dirty = kDirtyL4;
  deparser_.Deparse(*p);
  EXPECT_TRUE(L4Ok(*p, p->hdr.tcp, kIpProtoTcp));
}

TEST_F(DeparserIpv6Test, FragmentsAreLeftAlone) {
  std::vector<uint8_t> frag(8, 0);
  frag[3] = 1;  // offset 0, more fragments
  Packet* p = MakeParsed(parser_, Udp6Frame().Ipv6Ext(kIpProtoFragment, frag).Build());
  p->data[p->hdr.payload] ^= 0x5A;
  const auto bytes = Bytes(*p);
  p->hdr.dirty = kDirtyL4;
  deparser_.Deparse(*p);
  EXPECT_EQ(Bytes(*p), bytes);
}

TEST_F(DeparserIpv6Test, PushAndPopVlanShiftTheIpv6Offset) {
  Packet* p = MakeParsed(parser_, Udp6Frame().Build());
  ASSERT_TRUE(PushVlan(*p, 7));
  EXPECT_EQ(p->hdr.ipv6, 18);
  EXPECT_EQ(p->hdr.udp, 58);
  ASSERT_TRUE(PopVlan(*p));
  EXPECT_EQ(p->hdr.ipv6, 14);
  EXPECT_EQ(Bytes(*p), Udp6Frame().Build());
}

}  // namespace
}  // namespace swemu
