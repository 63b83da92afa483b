// --fixlen: what pad, trunc and none do to records cut short by a capture's snap length.
#include "pipeline/engine/pcap_fixlen.h"

#include <gtest/gtest.h>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"

namespace swemu {
namespace {

const MacAddr kDst = MacAddr::FromU64(0x000000000102);
const MacAddr kSrc = MacAddr::FromU64(0x000000000101);
constexpr uint32_t kIp = 14;  // Ethernet header

std::vector<uint8_t> UdpFrame(std::size_t payload) {
  return FrameBuilder()
      .Eth(kDst, kSrc)
      .Ipv4(MakeIpv4Addr(10, 0, 1, 1), MakeIpv4Addr(10, 0, 1, 2))
      .Udp(1000, 2000)
      .Payload(payload)
      .Build();
}

// A record of `frame` as a capture with snap length `snap` holds it.
PcapRecord Snapped(const std::vector<uint8_t>& frame, std::size_t snap) {
  PcapRecord record;
  record.orig_len = static_cast<uint32_t>(frame.size());
  record.bytes.assign(frame.begin(), frame.begin() + std::min(snap, frame.size()));
  return record;
}

const Ipv4Header* Ip(const PcapRecord& record, uint32_t at = kIp) {
  return HeaderAt<Ipv4Header>(record.bytes.data() + at);
}

TEST(PcapFixlenTest, ParsesTheThreeModes) {
  EXPECT_EQ(*ParseFixlen("none"), Fixlen::kNone);
  EXPECT_EQ(*ParseFixlen("pad"), Fixlen::kPad);
  EXPECT_EQ(*ParseFixlen("trunc"), Fixlen::kTrunc);
  Result<Fixlen> bad = ParseFixlen("del");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "\"del\" is not pad, trunc or none");
  EXPECT_STREQ(FixlenName(Fixlen::kTrunc), "trunc");
}

TEST(PcapFixlenTest, WholeRecordsAreNeverChanged) {
  const std::vector<uint8_t> frame = UdpFrame(100);
  for (Fixlen mode : {Fixlen::kNone, Fixlen::kPad, Fixlen::kTrunc}) {
    PcapRecord record = Snapped(frame, frame.size());
    FixlenCounts counts;
    FixFrameLength(mode, &record, &counts);
    EXPECT_EQ(record.bytes, frame);
    EXPECT_EQ(counts.frames, 1u);
    EXPECT_EQ(counts.cut_short, 0u);
    EXPECT_EQ(counts.fixed, 0u);
  }
}

TEST(PcapFixlenTest, NoneLeavesTheCapturedBytesAndCountsThem) {
  const std::vector<uint8_t> frame = UdpFrame(200);
  PcapRecord record = Snapped(frame, 96);
  FixlenCounts counts;
  FixFrameLength(Fixlen::kNone, &record, &counts);
  EXPECT_EQ(record.bytes, std::vector<uint8_t>(frame.begin(), frame.begin() + 96));
  EXPECT_EQ(counts.cut_short, 1u);
  EXPECT_EQ(counts.left_short, 1u);
  EXPECT_EQ(FixlenSummary(Fixlen::kNone, counts),
            "fixlen none: 1 of 1 frames cut short (captured < wire length), sent as captured; "
            "--fixlen pad|trunc fixes them");
  EXPECT_EQ(FixlenSummary(Fixlen::kNone, FixlenCounts{5, 0, 0, 0}), "");
}

TEST(PcapFixlenTest, PadFillsWithZerosToTheWireLength) {
  const std::vector<uint8_t> frame = UdpFrame(200);
  PcapRecord record = Snapped(frame, 96);
  FixlenCounts counts;
  FixFrameLength(Fixlen::kPad, &record, &counts);
  ASSERT_EQ(record.bytes.size(), frame.size());
  EXPECT_TRUE(std::equal(frame.begin(), frame.begin() + 96, record.bytes.begin()));
  for (std::size_t i = 96; i < frame.size(); ++i) EXPECT_EQ(record.bytes[i], 0) << i;
  EXPECT_EQ(Ip(record)->TotalLength(), frame.size() - kIp);  // as on the wire
  EXPECT_EQ(counts.fixed, 1u);
  EXPECT_EQ(FixlenSummary(Fixlen::kPad, counts),
            "fixlen pad: 1 of 1 frames cut short (captured < wire length), 1 padded to their "
            "wire length");
}

TEST(PcapFixlenTest, PadLeavesAnImplausibleWireLength) {
  PcapRecord record = Snapped(UdpFrame(200), 96);
  record.orig_len = kFixlenMaxPadLen + 1;
  FixlenCounts counts;
  FixFrameLength(Fixlen::kPad, &record, &counts);
  EXPECT_EQ(record.bytes.size(), 96u);
  EXPECT_EQ(counts.left_short, 1u);
}

TEST(PcapFixlenTest, TruncRewritesIpv4AndUdpToTheCapturedBytes) {
  const std::vector<uint8_t> frame = UdpFrame(200);
  PcapRecord record = Snapped(frame, 96);
  FixlenCounts counts;
  FixFrameLength(Fixlen::kTrunc, &record, &counts);
  ASSERT_EQ(record.bytes.size(), 96u);
  const Ipv4Header* ip = Ip(record);
  EXPECT_EQ(ip->TotalLength(), 96 - kIp);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(record.bytes.data() + kIp, 20));
  const uint8_t* udp = record.bytes.data() + kIp + 20;
  EXPECT_EQ(HeaderAt<UdpHeader>(udp)->Length(), 96 - kIp - 20);
  EXPECT_NE(HeaderAt<UdpHeader>(udp)->Checksum(), 0);
  EXPECT_TRUE(UdpChecksumOk(record.bytes.data() + kIp, udp, 96 - kIp - 20));
  EXPECT_EQ(counts.fixed, 1u);
  EXPECT_EQ(FixlenSummary(Fixlen::kTrunc, counts),
            "fixlen trunc: 1 of 1 frames cut short (captured < wire length), 1 rewritten to "
            "their captured length");
}

TEST(PcapFixlenTest, TruncKeepsAnUncomputedUdpChecksum) {
  const std::vector<uint8_t> frame = FrameBuilder()
                                         .Eth(kDst, kSrc)
                                         .Ipv4(MakeIpv4Addr(10, 0, 1, 1), MakeIpv4Addr(10, 0, 1, 2))
                                         .Udp(1, 2)
                                         .NoUdpChecksum()
                                         .Payload(300)
                                         .Build();
  PcapRecord record = Snapped(frame, 128);
  FixlenCounts counts;
  FixFrameLength(Fixlen::kTrunc, &record, &counts);
  EXPECT_EQ(HeaderAt<UdpHeader>(record.bytes.data() + kIp + 20)->Checksum(), 0);
  EXPECT_EQ(HeaderAt<UdpHeader>(record.bytes.data() + kIp + 20)->Length(), 128 - kIp - 20);
}

TEST(PcapFixlenTest, TruncRecomputesTheTcpChecksumBehindVlanTags) {
  const std::vector<uint8_t> frame = FrameBuilder()
                                         .Eth(kDst, kSrc)
                                         .Vlan(100, kEtherTypeQinQ)
                                         .Vlan(200)
                                         .Ipv4(MakeIpv4Addr(10, 0, 1, 1), MakeIpv4Addr(10, 0, 1, 2))
                                         .Tcp(80, 9000, kTcpAck, 1000, 2000)
                                         .Payload(1000)
                                         .Build();
  constexpr uint32_t kIpAt = kIp + 8;
  PcapRecord record = Snapped(frame, 150);
  FixlenCounts counts;
  FixFrameLength(Fixlen::kTrunc, &record, &counts);
  EXPECT_EQ(counts.fixed, 1u);
  EXPECT_EQ(Ip(record, kIpAt)->TotalLength(), 150 - kIpAt);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(record.bytes.data() + kIpAt, 20));
  EXPECT_TRUE(TcpChecksumOk(record.bytes.data() + kIpAt, record.bytes.data() + kIpAt + 20,
                            150 - kIpAt - 20));
}

TEST(PcapFixlenTest, TruncLeavesAFragmentsUdpHeaderAlone) {
  const std::vector<uint8_t> frame = FrameBuilder()
                                         .Eth(kDst, kSrc)
                                         .Ipv4(MakeIpv4Addr(10, 0, 1, 1), MakeIpv4Addr(10, 0, 1, 2))
                                         .FlagsFragmentOffset(kIpv4FlagMf)
                                         .Udp(1, 2)
                                         .Payload(400)
                                         .Build();
  PcapRecord record = Snapped(frame, 100);
  const uint16_t udp_length = HeaderAt<UdpHeader>(record.bytes.data() + kIp + 20)->Length();
  FixlenCounts counts;
  FixFrameLength(Fixlen::kTrunc, &record, &counts);
  EXPECT_EQ(counts.fixed, 1u);
  EXPECT_EQ(Ip(record)->TotalLength(), 100 - kIp);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(record.bytes.data() + kIp, 20));
  EXPECT_EQ(HeaderAt<UdpHeader>(record.bytes.data() + kIp + 20)->Length(), udp_length);
}

TEST(PcapFixlenTest, TruncRecomputesTheIcmpChecksum) {
  std::vector<uint8_t> frame = FrameBuilder()
                                   .Eth(kDst, kSrc)
                                   .Ipv4(MakeIpv4Addr(10, 0, 1, 1), MakeIpv4Addr(10, 0, 1, 2))
                                   .Protocol(kIpProtoIcmp)
                                   .Payload(200)
                                   .Build();
  PcapRecord record = Snapped(frame, 80);
  FixlenCounts counts;
  FixFrameLength(Fixlen::kTrunc, &record, &counts);
  EXPECT_EQ(counts.fixed, 1u);
  EXPECT_EQ(InternetChecksum(record.bytes.data() + kIp + 20, 80 - kIp - 20), 0);
}

TEST(PcapFixlenTest, TruncLeavesWhatItCannotRewrite) {
  const std::vector<uint8_t> arp =
      FrameBuilder().Eth(kDst, kSrc).EtherType(kEtherTypeArp).Payload(100).Build();
  const std::vector<uint8_t> udp = UdpFrame(200);
  const std::vector<uint8_t> padded =
      FrameBuilder()
          .Eth(kDst, kSrc)
          .Ipv4(MakeIpv4Addr(10, 0, 1, 1), MakeIpv4Addr(10, 0, 1, 2))
          .Udp(1, 2)
          .PadTo(60)
          .Build();
  FixlenCounts counts;
  for (PcapRecord record : {Snapped(arp, 40), Snapped(udp, 30), Snapped(padded, 50)}) {
    const std::vector<uint8_t> before = record.bytes;
    FixFrameLength(Fixlen::kTrunc, &record, &counts);
    EXPECT_EQ(record.bytes, before);  // not IPv4; cut inside the IPv4 header; padding only
  }
  EXPECT_EQ(counts.cut_short, 3u);
  EXPECT_EQ(counts.fixed, 0u);
  EXPECT_EQ(counts.left_short, 3u);
  EXPECT_EQ(FixlenSummary(Fixlen::kTrunc, counts),
            "fixlen trunc: 3 of 3 frames cut short (captured < wire length), 0 rewritten to "
            "their captured length, 3 left as captured (not IPv4, or nothing to rewrite)");
}

// The records come from a real snapped file: the writer keeps the wire length.
TEST(PcapFixlenTest, SnappedFileRoundTrip) {
  const std::string path = ::testing::TempDir() + "pcap_fixlen_test_snapped.pcap";
  const std::vector<uint8_t> frame = UdpFrame(500);
  {
    Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.message();
    (*writer)->Write(1000, frame.data(), 96, static_cast<uint32_t>(frame.size()));
    ASSERT_TRUE((*writer)->Close().ok());
  }
  Result<std::vector<PcapRecord>> records = ReadPcapFile(path);
  ASSERT_TRUE(records.ok()) << records.message();
  ASSERT_EQ(records->size(), 1u);
  PcapRecord record = (*records)[0];
  EXPECT_EQ(record.orig_len, frame.size());
  FixlenCounts counts;
  FixFrameLength(Fixlen::kPad, &record, &counts);
  EXPECT_EQ(record.bytes.size(), frame.size());
  EXPECT_EQ(counts.fixed, 1u);
}

}  // namespace
}  // namespace swemu
