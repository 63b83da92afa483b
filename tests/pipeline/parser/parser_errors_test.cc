// Malformed packets: every truncation point of every header, every bad field, the parse depth.
#include <gtest/gtest.h>

#include "pipeline/parser/parser.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"
#include "pipeline/wire/vlan.h"
#include "tests/pipeline/parser/parser_test_util.h"

namespace swemu {
namespace {

using testing::FixIpv4Checksum;
using testing::kMacA;
using testing::kMacB;
using testing::TcpFrame;
using testing::UdpFrame;

// Bytes [previous end, end) belong to a header whose truncation gives `reason`.
struct Segment {
  std::size_t end;
  DropReason reason;
};

class ParserErrorsTest : public testing::PacketTest {
 protected:
  // Cuts the frame at every length 0..size-1; a cut inside a segment must give its reason, a
  // cut after the last one `rest`.
  void ExpectEveryCut(const std::vector<uint8_t>& frame, const std::vector<Segment>& segments,
                      DropReason rest) {
    ASSERT_EQ(ParseReason(parser_, frame), DropReason::kNone);
    for (std::size_t cut = 0; cut < frame.size(); ++cut) {
      DropReason expected = rest;
      for (const Segment& s : segments) {
        if (cut < s.end) {
          expected = s.reason;
          break;
        }
      }
      std::vector<uint8_t> prefix(frame.begin(), frame.begin() + cut);
      EXPECT_EQ(DropReasonName(ParseReason(parser_, prefix)), DropReasonName(expected))
          << "cut at " << cut;
    }
  }
  // Sets the IPv4 total_length of a frame (IPv4 at ip_at) and repairs the header checksum.
  static std::vector<uint8_t> WithTotalLength(std::vector<uint8_t> frame, std::size_t ip_at,
                                              uint16_t total_length) {
    HeaderAt<Ipv4Header>(frame.data() + ip_at)->SetTotalLength(total_length);
    FixIpv4Checksum(frame, ip_at);
    return frame;
  }

  Parser parser_{ParserConfig{}};
};

constexpr DropReason kEth = DropReason::kTruncatedEthernet;
constexpr DropReason kVlan = DropReason::kTruncatedVlan;
constexpr DropReason kIp = DropReason::kTruncatedIpv4;
constexpr DropReason kTotal = DropReason::kIpv4BadTotalLength;

TEST_F(ParserErrorsTest, EveryCutOfEthIpv4Udp) {
  ExpectEveryCut(UdpFrame().Build(), {{14, kEth}, {34, kIp}}, kTotal);
}

TEST_F(ParserErrorsTest, EveryCutOfEthVlanIpv4Udp) {
  ExpectEveryCut(UdpFrame().Vlan(5).Build(), {{14, kEth}, {18, kVlan}, {38, kIp}}, kTotal);
}

TEST_F(ParserErrorsTest, EveryCutOfQinQIpv4TcpWithOptions) {
  const uint8_t options[12] = {0x02, 0x04, 0x05, 0xb4};
  ExpectEveryCut(TcpFrame().Vlan(1, kEtherTypeQinQ).Vlan(2).TcpOptions(options).Build(),
                 {{14, kEth}, {18, kVlan}, {22, kVlan}, {42, kIp}}, kTotal);
}

TEST_F(ParserErrorsTest, EveryCutOfIpv4WithOptions) {
  const uint8_t options[8] = {0x94, 0x04, 0, 0, 0x01, 0x01, 0x01, 0x00};
  ExpectEveryCut(UdpFrame().Ipv4Options(options).Build(), {{14, kEth}, {42, kIp}}, kTotal);
}

TEST_F(ParserErrorsTest, EveryCutOfArpOnlyNeedsEthernet) {
  ExpectEveryCut(
      FrameBuilder().Eth(kBroadcastMac, kMacA).EtherType(kEtherTypeArp).Payload(28).Build(),
      {{14, kEth}}, DropReason::kNone);
}

TEST_F(ParserErrorsTest, EveryCutOfAppFrame) {
  ASSERT_TRUE(parser_.AddUdpApp(9000, 12, 1).ok());
  ExpectEveryCut(UdpFrame(1, 9000).Build(), {{14, kEth}, {34, kIp}}, kTotal);
}

TEST_F(ParserErrorsTest, UdpCutByIpv4TotalLength) {
  const auto frame = UdpFrame().Build();  // UDP length 24
  for (uint16_t total = 20; total < 20 + 24; ++total) {
    const DropReason expected = total < 28 ? DropReason::kTruncatedUdp : DropReason::kUdpBadLength;
    EXPECT_EQ(ParseReason(parser_, WithTotalLength(frame, 14, total)), expected) << total;
  }
}

TEST_F(ParserErrorsTest, TcpCutByIpv4TotalLength) {
  const uint8_t options[12] = {0x02, 0x04, 0x05, 0xb4};
  const auto frame = TcpFrame().TcpOptions(options).Build();  // TCP header 32 bytes
  for (uint16_t total = 20; total < 20 + 32; ++total) {
    EXPECT_EQ(ParseReason(parser_, WithTotalLength(frame, 14, total)), DropReason::kTruncatedTcp)
        << total;
  }
  EXPECT_EQ(ParseReason(parser_, WithTotalLength(frame, 14, 52)), DropReason::kNone);
}

TEST_F(ParserErrorsTest, AppHeaderCutByUdpLength) {
  ASSERT_TRUE(parser_.AddUdpApp(9000, 12, 1).ok());
  auto frame = UdpFrame(1, 9000).Build();
  for (uint16_t udp_len = 0; udp_len < 8 + 12; ++udp_len) {
    HeaderAt<UdpHeader>(frame.data() + 34)->SetLength(udp_len);
    const DropReason expected =
        udp_len < 8 ? DropReason::kUdpBadLength : DropReason::kTruncatedAppHeader;
    EXPECT_EQ(ParseReason(parser_, frame), expected) << udp_len;
  }
  HeaderAt<UdpHeader>(frame.data() + 34)->SetLength(20);
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kNone);
}

TEST_F(ParserErrorsTest, AppHeaderCutByIpv4TotalLengthOfFirstFragment) {
  ASSERT_TRUE(parser_.AddUdpApp(9000, 12, 1).ok());
  auto frame = UdpFrame(1, 9000).FlagsFragmentOffset(kIpv4FlagMf).Build();
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kNone);
  EXPECT_EQ(ParseReason(parser_, WithTotalLength(frame, 14, 20 + 8 + 11)),
            DropReason::kTruncatedAppHeader);
}

TEST_F(ParserErrorsTest, BadIpv4Version) {
  auto frame = UdpFrame().Build();
  frame[14] = 0x65;  // version 6 under ethertype 0x0800
  FixIpv4Checksum(frame, 14);
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kIpv4BadVersion);
}

TEST_F(ParserErrorsTest, BadIpv4Ihl) {
  auto frame = UdpFrame().Build();
  for (uint8_t ihl = 0; ihl < 5; ++ihl) {
    frame[14] = static_cast<uint8_t>(0x40 | ihl);
    EXPECT_EQ(ParseReason(parser_, frame), DropReason::kIpv4BadIhl) << int{ihl};
  }
}

TEST_F(ParserErrorsTest, IhlBeyondFrameIsTruncatedIpv4) {
  auto frame = FrameBuilder().Eth(kMacB, kMacA).Ipv4(testing::kIpA, testing::kIpB).Build();
  frame[14] = 0x4F;  // 60-byte header in a 34-byte frame
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kTruncatedIpv4);
}

TEST_F(ParserErrorsTest, BadIpv4TotalLength) {
  const auto frame = UdpFrame().Build();                                    // 14 + 44
  EXPECT_EQ(ParseReason(parser_, WithTotalLength(frame, 14, 19)), kTotal);  // < 20
  EXPECT_EQ(ParseReason(parser_, WithTotalLength(frame, 14, 0)), kTotal);
  EXPECT_EQ(ParseReason(parser_, WithTotalLength(frame, 14, 45)), kTotal);  // > available
  EXPECT_EQ(ParseReason(parser_, WithTotalLength(frame, 14, 0xFFFF)), kTotal);
  const uint8_t options[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  const auto with_options = UdpFrame().Ipv4Options(options).Build();               // IHL 7
  EXPECT_EQ(ParseReason(parser_, WithTotalLength(with_options, 14, 27)), kTotal);  // < IHL*4
  EXPECT_EQ(ParseReason(parser_, WithTotalLength(with_options, 14, 28)), DropReason::kTruncatedUdp);
}

TEST_F(ParserErrorsTest, BadIpv4ChecksumAndVerificationOff) {
  auto frame = UdpFrame().Build();
  frame[14 + 10] ^= 0x01;
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kIpv4BadChecksum);
  Parser lenient(ParserConfig{.verify_ipv4_checksum = false});
  EXPECT_EQ(ParseReason(lenient, frame), DropReason::kNone);
}

TEST_F(ParserErrorsTest, BadUdpLength) {
  auto frame = UdpFrame().Build();  // UDP length 24, IPv4 payload 24
  for (uint16_t len : {0, 7}) {
    HeaderAt<UdpHeader>(frame.data() + 34)->SetLength(len);
    EXPECT_EQ(ParseReason(parser_, frame), DropReason::kUdpBadLength) << len;
  }
  HeaderAt<UdpHeader>(frame.data() + 34)->SetLength(25);
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kUdpBadLength);
  HeaderAt<UdpHeader>(frame.data() + 34)->SetLength(8);  // shorter than the IPv4 payload: fine
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kNone);
}

TEST_F(ParserErrorsTest, BadTcpDataOffset) {
  auto frame = TcpFrame().Build();
  for (uint8_t words = 0; words < 5; ++words) {
    HeaderAt<TcpHeader>(frame.data() + 34)->SetDataOffset(words);
    EXPECT_EQ(ParseReason(parser_, frame), DropReason::kTcpBadDataOffset) << int{words};
  }
  HeaderAt<TcpHeader>(frame.data() + 34)->SetDataOffset(15);  // options beyond the payload
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kTruncatedTcp);
  HeaderAt<TcpHeader>(frame.data() + 34)->SetDataOffset(9);  // 36 bytes = 20 + 16 of payload
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kNone);
}

TEST_F(ParserErrorsTest, TooManyVlanTags) {
  EXPECT_EQ(ParseReason(parser_, UdpFrame().Vlan(1).Vlan(2).Vlan(3).Build()),
            DropReason::kTooManyVlanTags);
  // Counted before the third tag's bytes are needed.
  auto frame = FrameBuilder().Eth(kMacB, kMacA).Vlan(1).Vlan(2).EtherType(kEtherTypeVlan).Build();
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kTooManyVlanTags);
  Parser no_tags(ParserConfig{.max_vlan_tags = 0});
  EXPECT_EQ(ParseReason(no_tags, UdpFrame().Vlan(1).Build()), DropReason::kTooManyVlanTags);
  Parser one_tag(ParserConfig{.max_vlan_tags = 1});
  EXPECT_EQ(ParseReason(one_tag, UdpFrame().Vlan(1).Build()), DropReason::kNone);
  EXPECT_EQ(ParseReason(one_tag, UdpFrame().Vlan(1).Vlan(2).Build()), DropReason::kTooManyVlanTags);
}

TEST_F(ParserErrorsTest, ParseDepthExceededAtEachHeader) {
  auto reason = [&](uint16_t depth, const std::vector<uint8_t>& frame) {
    return ParseReason(Parser(ParserConfig{.parse_depth = depth}), frame);
  };
  const auto udp = UdpFrame().Build();  // headers end at 42
  EXPECT_EQ(reason(42, udp), DropReason::kNone);
  EXPECT_EQ(reason(41, udp), DropReason::kParseDepthExceeded);
  EXPECT_EQ(reason(33, udp), DropReason::kParseDepthExceeded);
  EXPECT_EQ(reason(13, udp), DropReason::kParseDepthExceeded);
  EXPECT_EQ(reason(17, UdpFrame().Vlan(1).Build()), DropReason::kParseDepthExceeded);
  const uint8_t options[12] = {0x02, 0x04, 0x05, 0xb4};
  const auto tcp = TcpFrame().TcpOptions(options).Build();  // headers end at 66
  EXPECT_EQ(reason(66, tcp), DropReason::kNone);
  EXPECT_EQ(reason(60, tcp), DropReason::kParseDepthExceeded);
  // The payload is never extracted, so it may extend beyond the depth.
  EXPECT_EQ(reason(42, UdpFrame().Payload(1000).Build()), DropReason::kNone);
}

TEST_F(ParserErrorsTest, ParseDepthExceededByAppHeaderBehindTags) {
  Parser parser(ParserConfig{.parse_depth = 60});
  ASSERT_TRUE(parser.AddUdpApp(9000, 18, 1).ok());  // 42 + 18 = 60 fits untagged
  EXPECT_EQ(ParseReason(parser, UdpFrame(1, 9000).Payload(20).Build()), DropReason::kNone);
  EXPECT_EQ(ParseReason(parser, UdpFrame(1, 9000).Payload(20).Vlan(1).Build()),
            DropReason::kParseDepthExceeded);
}

TEST_F(ParserErrorsTest, TruncationWinsOverDepthWhenBothApply) {
  Parser parser(ParserConfig{.parse_depth = 20});
  auto frame = UdpFrame().Build();
  frame.resize(30);  // IPv4 would end at 34: beyond both the frame and the depth
  EXPECT_EQ(ParseReason(parser, frame), DropReason::kTruncatedIpv4);
}

TEST_F(ParserErrorsTest, DropKeepsHeadersAcceptedBefore) {
  auto frame = UdpFrame().Vlan(3).Build();
  HeaderAt<UdpHeader>(frame.data() + 38)->SetLength(3);
  Packet* p = Make(frame);
  EXPECT_FALSE(parser_.Parse(*p));
  EXPECT_EQ(p->meta.drop_reason, DropReason::kUdpBadLength);
  EXPECT_EQ(p->hdr.vlan[0], 14);
  EXPECT_EQ(p->hdr.ipv4, 18);
  EXPECT_FALSE(p->hdr.has_udp());
}

}  // namespace
}  // namespace swemu
