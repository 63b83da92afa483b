// swemu-analyze's decoding: every layer as far as the capture goes, malformed frames flagged with
// a reason, frames cut by the snap length read without complaint, ATP through the registry.
#include "tools/analyze/frame_decoder.h"

#include <gtest/gtest.h>

#include <boost/program_options.hpp>

#include "pipeline/wire/atp.h"
#include "pipeline/wire/frame_builder.h"
#include "tools/analyze/protocol_analyzer.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

const MacAddr kSrc = MacAddr::FromU64(0x020000000001);
const MacAddr kDst = MacAddr::FromU64(0x020000000010);

std::vector<uint8_t> AtpFrame(const AtpFields& fields, bool vlan = false) {
  FrameBuilder b;
  b.Eth(kDst, kSrc);
  if (vlan) b.Vlan(42);
  b.Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 16)).Tos(0x03).Udp(1234, 9000);
  std::vector<uint8_t> payload(AtpPayloadLen(fields.num_elements));
  fields.Encode(payload.data());
  b.Payload(payload);
  return b.Build();
}

std::unique_ptr<ProtocolAnalyzer> MakeAtp(const std::string& aggregators = "16384") {
  po::options_description options;
  Protocols()[0].add_options(options);
  po::variables_map vm;
  const std::string arg = "--atp-aggregators=" + aggregators;
  const char* argv[] = {"x", arg.c_str()};
  po::store(po::parse_command_line(2, argv, options), vm);
  return std::move(*Protocols()[0].make(vm));
}

DecodedFrame Decode(const FrameDecoder& decoder, const std::vector<uint8_t>& bytes,
                    uint32_t wire_len = 0, int link = kLinkEthernet) {
  DecodedFrame f;
  f.caplen = static_cast<uint32_t>(bytes.size());
  f.len = wire_len == 0 ? f.caplen : wire_len;
  decoder.Decode(link, bytes, f);
  if (f.protocol != nullptr && f.malformed.empty()) f.malformed = f.protocol->Consume(f);
  return f;
}

TEST(FrameDecoder, DecodesEveryLayerOfATaggedAtpFrame) {
  auto atp = MakeAtp();
  FrameDecoder decoder;
  decoder.Register(9000, atp.get());
  AtpFields fields{kAtpFlagResend, 3, 4, 0, 7, 2, 0xABCDEF01, 0x8};
  const DecodedFrame f = Decode(decoder, AtpFrame(fields, /*vlan=*/true));
  EXPECT_TRUE(f.malformed.empty()) << f.malformed;
  EXPECT_EQ(f.eth_src, kSrc);
  EXPECT_EQ(f.vlan_tags, 1);
  EXPECT_EQ(f.vlan_id, 42);
  EXPECT_EQ(f.ip_dst, MakeIpv4Addr(10, 0, 0, 16));
  EXPECT_EQ(TosEcn(f.tos), kEcnCe);
  EXPECT_EQ(f.dport, 9000);
  EXPECT_EQ(f.protocol, atp.get());
  std::ostringstream row;
  atp->WriteFields(row);
  EXPECT_EQ(row.str(), "1,16,3,4,0,7,2,2882400001,8");
}

TEST(FrameDecoder, FlagsAHeaderCutInTheMiddleButNotOneCutBySnapLength) {
  auto atp = MakeAtp();
  FrameDecoder decoder;
  decoder.Register(9000, atp.get());
  std::vector<uint8_t> frame = AtpFrame({0, 0, 4, 0, 1, 64, 5, 1});
  // The frame really ends inside the IPv4 header: malformed.
  std::vector<uint8_t> cut(frame.begin(), frame.begin() + 24);
  EXPECT_EQ(Decode(decoder, cut).malformed, "truncated_ipv4");
  // The same bytes as a 96-byte snap of a longer frame: headers read as far as kept.
  std::vector<uint8_t> snap(frame.begin(), frame.begin() + 50);
  const DecodedFrame f = Decode(decoder, snap, static_cast<uint32_t>(frame.size()));
  EXPECT_TRUE(f.malformed.empty()) << f.malformed;
  EXPECT_TRUE(f.has_l4);
  std::ostringstream row;
  atp->WriteFields(row);
  EXPECT_EQ(row.str(), "1,0,0,4,0,1,64,,");  // seq and bitmap were not captured
  // ATP elements missing from a frame that was not snapped: the IPv4/UDP lengths disagree.
  std::vector<uint8_t> short_atp(frame.begin(), frame.begin() + 42 + 10);
  EXPECT_EQ(Decode(decoder, short_atp).malformed, "ipv4_bad_total_length");
}

TEST(FrameDecoder, FlagsAnAtpHeaderWithTooFewElementsOrAnotherVersion) {
  auto atp = MakeAtp();
  FrameDecoder decoder;
  decoder.Register(9000, atp.get());
  // A consistent UDP datagram whose ATP header announces more elements than it carries.
  std::vector<uint8_t> payload(AtpPayloadLen(64));
  AtpFields{0, 0, 4, 0, 1, 64, 5, 1}.Encode(payload.data());
  payload.resize(kAtpHeaderLen + 8);
  auto frame = FrameBuilder()
                   .Eth(kDst, kSrc)
                   .Ipv4(1, 2)
                   .Udp(1, 9000)
                   .Payload(payload)
                   .Build();
  EXPECT_EQ(Decode(decoder, frame).malformed, "atp_truncated_elements");
  payload[0] = static_cast<uint8_t>((2 << kAtpVersionShift));
  frame = FrameBuilder().Eth(kDst, kSrc).Ipv4(1, 2).Udp(1, 9000).Payload(payload).Build();
  EXPECT_EQ(Decode(decoder, frame).malformed, "atp_bad_version");
  // Another port is plain UDP.
  frame = FrameBuilder().Eth(kDst, kSrc).Ipv4(1, 2).Udp(1, 9001).Payload(payload).Build();
  const DecodedFrame other = Decode(decoder, frame);
  EXPECT_TRUE(other.malformed.empty());
  EXPECT_EQ(other.protocol, nullptr);
}

TEST(FrameDecoder, ReadsRawIpAndLinuxCookedCaptures) {
  FrameDecoder decoder;
  const auto frame = FrameBuilder().Eth(kDst, kSrc).Ipv4(1, 2).Tcp(80, 443).Payload(10).Build();
  const std::vector<uint8_t> raw(frame.begin() + 14, frame.end());
  DecodedFrame f = Decode(decoder, raw, 0, kLinkRaw);
  EXPECT_TRUE(f.malformed.empty()) << f.malformed;
  EXPECT_TRUE(f.has_tcp);
  EXPECT_EQ(f.dport, 443);
  EXPECT_EQ(f.l4_payload_len, 10u);
  std::vector<uint8_t> sll(16, 0);
  sll[14] = 0x08;  // protocol 0x0800 in bytes 14-15
  sll.insert(sll.end(), raw.begin(), raw.end());
  f = Decode(decoder, sll, 0, kLinkLinuxSll);
  EXPECT_TRUE(f.malformed.empty()) << f.malformed;
  EXPECT_EQ(f.sport, 80);
  // SLL2 (tcpdump -i any): the protocol first, then 18 bytes of interface, type and address.
  std::vector<uint8_t> sll2(20, 0);
  sll2[0] = 0x08;
  sll2[4] = 3;  // interface index, not the protocol
  sll2.insert(sll2.end(), raw.begin(), raw.end());
  f = Decode(decoder, sll2, 0, kLinkLinuxSll2);
  EXPECT_TRUE(f.malformed.empty()) << f.malformed;
  EXPECT_EQ(f.dport, 443);
  EXPECT_EQ(Decode(decoder, std::vector<uint8_t>(19, 0), 0, kLinkLinuxSll2).malformed,
            "truncated_sll2");
  EXPECT_EQ(Decode(decoder, {0x60, 0, 0}, 0, kLinkRaw).ether_type, 0x86DD);  // IPv6: named only
  EXPECT_EQ(Decode(decoder, {0x10, 0, 0}, 0, kLinkRaw).malformed, "raw_not_ip");
}

TEST(FrameDecoder, NeverReadsPastTheCaptureWhateverTheBytesSay) {
  FrameDecoder decoder;
  auto atp = MakeAtp();
  decoder.Register(9000, atp.get());
  const std::vector<uint8_t> frame = AtpFrame({0, 0, 4, 0, 1, 64, 5, 1}, true);
  // Every prefix, as a real frame and as a snap: no crash (ASan watches), a reason or nothing.
  for (std::size_t n = 0; n <= frame.size(); ++n) {
    std::vector<uint8_t> prefix(frame.begin(), frame.begin() + n);
    Decode(decoder, prefix);
    Decode(decoder, prefix, static_cast<uint32_t>(frame.size()));
  }
}

TEST(AtpAnalyzer, CountsCompletionResendsAndPredictsCollisions) {
  auto atp = MakeAtp("2");  // two aggregators: seqs far apart share one
  FrameDecoder decoder;
  decoder.Register(9000, atp.get());
  // Job 1, 2 workers: seq 0 from both (complete), seq 1 from worker 0 twice (a resend),
  // then seq 2 while seq 1 still holds an aggregator.
  for (uint8_t w : {0, 1}) Decode(decoder, AtpFrame({0, w, 2, 0, 1, 4, 0, 1u << w}));
  Decode(decoder, AtpFrame({0, 0, 2, 0, 1, 4, 1, 1}));
  Decode(decoder, AtpFrame({kAtpFlagResend, 0, 2, 0, 1, 4, 1, 1}));
  const uint32_t clash = AtpAggregatorIndex(1, 1, 2) == AtpAggregatorIndex(1, 2, 2) ? 2 : 3;
  Decode(decoder, AtpFrame({0, 0, 2, 0, 1, 4, clash, 1}));
  ASSERT_EQ(AtpAggregatorIndex(1, 1, 2), AtpAggregatorIndex(1, clash, 2));
  JsonWriter json;
  json.BeginObject();
  atp->WriteJson(json);
  json.EndObject();
  const std::string text = json.str();
  EXPECT_NE(text.find("\"seqs\": 3"), std::string::npos) << text;
  EXPECT_NE(text.find("\"complete\": 1"), std::string::npos) << text;
  EXPECT_NE(text.find("\"resends\": 1"), std::string::npos) << text;
  EXPECT_NE(text.find("\"collisions\": 1"), std::string::npos) << text;
  EXPECT_NE(text.find("\"gradient_packets\": 5"), std::string::npos) << text;
}

}  // namespace
}  // namespace swemu
