// swemu-analyze's DLCP decoder: the header read on UDP datagrams to the DLCP port only, the tag
// and importance of data packets from the DSCP and ECN, malformed headers by reason, and the
// per-flow summary (partitions, duplicates, tags, signals, START to CONFIRM) as text, JSON and
// dlcp.csv.
#include <gtest/gtest.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pipeline/wire/dlcp.h"
#include "pipeline/wire/frame_builder.h"
#include "tools/analyze/frame_decoder.h"
#include "tools/analyze/protocol_analyzer.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

const MacAddr kMac = MacAddr::FromU64(0x020000000001);
const Ipv4Addr kSender = MakeIpv4Addr(10, 0, 0, 1);
const Ipv4Addr kReceiver = MakeIpv4Addr(10, 0, 0, 2);
constexpr uint8_t kControlTos = kDlcpDefaultControlDscp << 2;

const ProtocolEntry& Entry(std::string_view name) {
  for (const ProtocolEntry& entry : Protocols()) {
    if (entry.name == name) return entry;
  }
  ADD_FAILURE() << "no protocol " << name;
  return Protocols()[0];
}

Result<std::unique_ptr<ProtocolAnalyzer>> MakeDlcp(const std::string& port = "") {
  po::options_description options;
  Entry("dlcp").add_options(options);
  po::variables_map vm;
  const std::string arg = "--dlcp-port=" + port;
  const char* argv[] = {"x", arg.c_str()};
  po::store(po::parse_command_line(port.empty() ? 1 : 2, argv, options), vm);
  return Entry("dlcp").make(vm);
}

struct Dlcp {
  DlcpType type = DlcpType::kData;
  uint32_t tensor = 7, seq = 0, offset = 0;
  uint16_t length = 0;
  uint8_t flags = 0;
  uint8_t tos = MakeTos(kDlcpDefaultDscpBase, kEcnEct0);
  Ipv4Addr src = kSender, dst = kReceiver;
  uint16_t dport = kDlcpDefaultUdpPort;
  std::size_t payload = SIZE_MAX;  // bytes after the header in the datagram; default: length
};

// The datagram's DLCP bytes: the header, then the payload.
std::vector<uint8_t> DlcpBytes(const Dlcp& d) {
  std::vector<uint8_t> bytes(kDlcpHeaderLen + (d.payload == SIZE_MAX ? d.length : d.payload));
  HeaderAt<DlcpHeader>(bytes.data())->Set(d.type, d.flags, d.length, d.tensor, d.seq, d.offset);
  return bytes;
}

std::vector<uint8_t> Frame(const Dlcp& d, std::span<const uint8_t> dlcp_bytes) {
  return FrameBuilder()
      .Eth(kMac, kMac)
      .Ipv4(d.src, d.dst)
      .Tos(d.tos)
      .Udp(kDlcpDefaultUdpPort, d.dport)
      .Payload(dlcp_bytes)
      .Build();
}
std::vector<uint8_t> Frame(const Dlcp& d) { return Frame(d, DlcpBytes(d)); }

Dlcp Data(uint32_t offset, uint32_t tag, uint8_t ecn, uint16_t length = 1400) {
  return {.offset = offset,
          .length = length,
          .tos = MakeTos(static_cast<uint8_t>(kDlcpDefaultDscpBase + tag), ecn)};
}
Dlcp Signal(DlcpType type, uint32_t offset = 0, Ipv4Addr src = kSender, Ipv4Addr dst = kReceiver) {
  return {.type = type, .offset = offset, .tos = kControlTos, .src = src, .dst = dst};
}

// Stands in for ATP and PCN on their ports: only its address matters.
class NullAnalyzer final : public ProtocolAnalyzer {
 public:
  std::string_view Consume(const DecodedFrame&) override { return {}; }
  void WriteFields(std::ostream&) const override {}
  void WriteText(std::ostream&) const override {}
  void WriteJson(JsonWriter&) const override {}
  Status WriteCsv(const std::string&, std::string_view, bool) const override {
    return Status::Ok();
  }
};

// The DLCP analyzer registered as swemu-analyze registers it (to its own port), ATP's and PCN's
// ports beside it.
class DlcpAnalyzerTest : public ::testing::Test {
 protected:
  void SetUp() override { Use(MakeDlcp()); }

  void Use(Result<std::unique_ptr<ProtocolAnalyzer>> made) {
    ASSERT_TRUE(made.ok()) << made.message();
    dlcp_ = std::move(*made);
    decoder_ = FrameDecoder();
    decoder_.Register(9000, &other_);
    decoder_.RegisterBothWays(9700, &other_);
    ASSERT_NE(dlcp_->OwnUdpPort(), 0);
    decoder_.Register(dlcp_->OwnUdpPort(), dlcp_.get());
  }

  // Decodes and accounts one frame; returns it and its DLCP fields ("" if not DLCP). wire_len:
  // the frame's length on the wire when the capture kept fewer bytes.
  DecodedFrame Feed(const std::vector<uint8_t>& bytes, TimeNs ts_ns = 0, uint32_t wire_len = 0) {
    DecodedFrame f;
    f.ts_ns = ts_ns;
    f.caplen = static_cast<uint32_t>(bytes.size());
    f.len = wire_len == 0 ? f.caplen : wire_len;
    decoder_.Decode(kLinkEthernet, bytes, f);
    fields_.clear();
    if (f.protocol == dlcp_.get() && f.malformed.empty()) {
      f.malformed = dlcp_->Consume(f);
      std::ostringstream row;
      dlcp_->WriteFields(row);
      fields_ = row.str();
    }
    return f;
  }
  DecodedFrame Feed(const Dlcp& d, TimeNs ts_ns = 0) { return Feed(Frame(d), ts_ns); }

  std::string Json() const {
    JsonWriter json;
    json.BeginObject();
    dlcp_->WriteJson(json);
    json.EndObject();
    return json.str();
  }

  std::string Text() const {
    std::ostringstream out;
    dlcp_->WriteText(out);
    return out.str();
  }

  std::string Csv() const {
    const std::string dir = ::testing::TempDir() + "/dlcp_csv";
    std::filesystem::create_directories(dir);
    EXPECT_TRUE(dlcp_->WriteCsv(dir, "run1", true).ok());
    std::ifstream in(dir + "/dlcp.csv");
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
  }

  std::unique_ptr<ProtocolAnalyzer> dlcp_;
  FrameDecoder decoder_;
  std::string fields_;
  NullAnalyzer other_;
};

TEST(DlcpRegistry, IsRegisteredWithItsFieldsAndItsOwnPort) {
  const ProtocolEntry& dlcp = Entry("dlcp");
  EXPECT_EQ(dlcp.default_udp_port, 0);  // its port is --dlcp-port
  EXPECT_EQ(dlcp.fields(), (std::vector<std::string>{"dlcp.version", "dlcp.type", "dlcp.pull",
                                                     "dlcp.length", "dlcp.tensor", "dlcp.seq",
                                                     "dlcp.offset", "dlcp.tag", "dlcp.important"}));
  Result<std::unique_ptr<ProtocolAnalyzer>> made = MakeDlcp();
  ASSERT_TRUE(made.ok());
  EXPECT_EQ((*made)->OwnUdpPort(), kDlcpDefaultUdpPort);
  EXPECT_EQ((*made)->BothWaysUdpPort(), 0);  // to the port only
}

TEST(DlcpRegistry, RefusesBadPorts) {
  for (const char* bad : {"0", "65536", "abc", "-1", "9800x"}) {
    Result<std::unique_ptr<ProtocolAnalyzer>> made = MakeDlcp(bad);
    ASSERT_FALSE(made.ok()) << bad;
    EXPECT_EQ(made.message().rfind("--dlcp-port: ", 0), 0u) << made.message();
  }
  Result<std::unique_ptr<ProtocolAnalyzer>> made = MakeDlcp("9900");
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_EQ((*made)->OwnUdpPort(), 9900);
}

TEST_F(DlcpAnalyzerTest, NamesEveryFieldOfEveryType) {
  for (uint8_t t = 1; t <= 8; ++t) {
    const auto type = static_cast<DlcpType>(t);
    Dlcp d{.type = type,
           .tensor = 0xFFFFFFFF,
           .seq = 100u + t,
           .offset = 4096,
           .length = 8,
           .flags = kDlcpFlagPull,
           .tos = kControlTos};
    EXPECT_TRUE(Feed(d).malformed.empty()) << int{t};
    // Signals carry no tag or importance, even in a tag's DSCP.
    const std::string rest = ",8,4294967295," + std::to_string(100 + t) + ",4096,";
    EXPECT_EQ(fields_, "1," + std::to_string(t) + ",1" + rest + (t == 1 ? ",0" : ",")) << int{t};
  }
  // The flag byte's other bits are not the pull flag.
  Feed(Dlcp{.type = DlcpType::kStart, .flags = 0xFE, .tos = MakeTos(17, kEcnEct0)});
  EXPECT_EQ(fields_, "1,2,0,0,7,0,0,,");
}

TEST_F(DlcpAnalyzerTest, ReadsTagsAndImportanceOfDataPackets) {
  for (uint32_t tag = 0; tag < kDlcpDataPriorities; ++tag) {
    for (uint8_t ecn = 0; ecn < 4; ++ecn) {
      Feed(Data(0, tag, ecn, 4));
      EXPECT_EQ(fields_, "1,1,0,4,7,0,0," + std::to_string(tag) + "," + (ecn == 0 ? "0" : "1"));
    }
  }
  // DSCPs that are no tag's: the importance only.
  for (uint8_t dscp : {0, 15, 23, 48, 63}) {
    Feed(Dlcp{.length = 4, .tos = MakeTos(dscp, kEcnCe)});
    EXPECT_EQ(fields_, "1,1,0,4,7,0,0,,1") << int{dscp};
  }
}

TEST_F(DlcpAnalyzerTest, ReadsOnlyUdpToTheDlcpPort) {
  const Dlcp data = Data(0, 2, kEcnEct0);
  EXPECT_EQ(Feed(Dlcp{data}).protocol, dlcp_.get());
  Dlcp other = data;
  other.dport = 9801;
  EXPECT_EQ(Feed(other).protocol, nullptr);
  other.dport = 40000;  // from the DLCP port (the frame's source) to another
  EXPECT_EQ(Feed(other).protocol, nullptr);
  const auto tcp = FrameBuilder()
                       .Eth(kMac, kMac)
                       .Ipv4(kSender, kReceiver)
                       .Tcp(40000, kDlcpDefaultUdpPort)
                       .Payload(DlcpBytes(data))
                       .Build();
  EXPECT_EQ(Feed(tcp).protocol, nullptr);
  // --dlcp-port moves it.
  Use(MakeDlcp("9900"));
  EXPECT_EQ(Feed(data).protocol, nullptr);
  EXPECT_EQ(Text(), "");  // no DLCP: no summary
  other.dport = 9900;
  EXPECT_EQ(Feed(other).protocol, dlcp_.get());
  EXPECT_EQ(fields_, "1,1,0,1400,7,0,0,2,1");
}

TEST_F(DlcpAnalyzerTest, NamesMalformedHeadersAndReadsThemAsFarAsTheyGo) {
  const Dlcp d = Data(0, 4, kEcnNotEct, 8);
  const std::vector<uint8_t> bytes = DlcpBytes(d);
  EXPECT_EQ(Feed(Frame(d, {})).malformed, "dlcp_truncated_header");
  EXPECT_EQ(fields_, ",,,,,,,,");
  EXPECT_EQ(Feed(Frame(d, std::span(bytes).first(1))).malformed, "dlcp_truncated_header");
  EXPECT_EQ(fields_, "1,1,,,,,,4,0");
  EXPECT_EQ(Feed(Frame(d, std::span(bytes).first(15))).malformed, "dlcp_truncated_header");
  EXPECT_EQ(fields_, "1,1,0,8,7,0,,4,0");
  for (uint8_t version : {0, 2, 15}) {
    std::vector<uint8_t> other = bytes;
    other[0] = static_cast<uint8_t>(version << 4 | 1);
    EXPECT_EQ(Feed(Frame(d, other)).malformed, "dlcp_bad_version");
    EXPECT_EQ(fields_, std::to_string(version) + ",1,0,8,7,0,0,,");  // not data: no tag
  }
  for (uint8_t type : {0, 9, 15}) {
    std::vector<uint8_t> other = bytes;
    other[0] = static_cast<uint8_t>(kDlcpVersion << 4 | type);
    EXPECT_EQ(Feed(Frame(d, other)).malformed, "dlcp_bad_type");
  }
  Dlcp long_payload = d;
  long_payload.payload = 7;  // one byte short of the 8 announced
  EXPECT_EQ(Feed(long_payload).malformed, "dlcp_truncated_payload");
  long_payload.payload = 20;  // trailing bytes are no error
  EXPECT_TRUE(Feed(long_payload).malformed.empty());
  const std::string json = Json();
  EXPECT_NE(json.find("\"dlcp_truncated_header\": 3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"dlcp_bad_version\": 3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"dlcp_bad_type\": 3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"dlcp_truncated_payload\": 1"), std::string::npos) << json;
  // Malformed frames are not in the flows: only the last one is.
  EXPECT_NE(json.find("\"data_packets\": 1,"), std::string::npos) << json;
  EXPECT_NE(Text().find("; malformed dlcp_truncated_header 3 dlcp_bad_version 3 dlcp_bad_type 3 "
                        "dlcp_truncated_payload 1\n"),
            std::string::npos)
      << Text();
}

TEST_F(DlcpAnalyzerTest, AHeaderCutByTheCaptureIsNotMalformedNorCounted) {
  const std::vector<uint8_t> frame = Frame(Data(0, 1, kEcnEct0, 64));
  const std::vector<uint8_t> snap(frame.begin(), frame.begin() + 42 + 6);
  const DecodedFrame f = Feed(snap, 0, static_cast<uint32_t>(frame.size()));
  EXPECT_TRUE(f.malformed.empty()) << f.malformed;
  EXPECT_EQ(fields_, "1,1,0,64,,,,1,1");
  // The payload cut by the capture: counted.
  const std::vector<uint8_t> payload_snap(frame.begin(), frame.begin() + 42 + 20);
  EXPECT_TRUE(Feed(payload_snap, 0, static_cast<uint32_t>(frame.size())).malformed.empty());
  const std::string json = Json();
  EXPECT_NE(json.find("\"snapped_headers\": 1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"data_packets\": 1,"), std::string::npos) << json;
}

TEST_F(DlcpAnalyzerTest, SummarizesAFlow) {
  // Read out of time order (a run's pcaps one after the other): the CONFIRM first.
  Feed(Signal(DlcpType::kConfirm), 90'000);
  Feed(Signal(DlcpType::kStart, 5600), 10'000);
  Feed(Signal(DlcpType::kStart, 5600), 12'000);  // sent again: the earliest counts
  Feed(Data(0, 0, kEcnEct0), 11'000);
  Feed(Data(1400, 3, kEcnNotEct), 11'100);
  Feed(Data(2800, 6, kEcnCe), 11'200);
  Feed(Data(1400, 3, kEcnEct1), 11'300);  // a duplicate partition
  Dlcp other_dscp = Data(4200, 0, kEcnNotEct);
  other_dscp.tos = MakeTos(0, kEcnNotEct);
  Feed(other_dscp, 11'400);
  Feed(Signal(DlcpType::kStop), 20'000);
  Feed(Signal(DlcpType::kConfirm), 95'000);  // a CONFIRM sent again
  // The receiver's signals travel the other way: another flow on the wire.
  Feed(Signal(DlcpType::kFinish, 0, kReceiver, kSender), 80'000);
  Feed(Signal(DlcpType::kRate, 0, kReceiver, kSender), 30'000);
  Feed(Signal(DlcpType::kAck, 0, kReceiver, kSender), 10'500);
  const std::string text = Text();
  EXPECT_NE(text.find("  dlcp: udp port 9800, 2 flow(s), 5 data packet(s), 8 signal(s)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    10.0.0.1 -> 10.0.0.2 tensor 7: 5 data packet(s), 7000 bytes, "
                      "4 partition(s), 1 duplicate(s); tags 0 20.0% 3 40.0% 6 20.0% "
                      "other-dscp 20.0%; important 60.0%, unimportant 40.0%, CE 20.0%; "
                      "signals start 2 (size 5600), stop 1, confirm 2; start to confirm "
                      "80.000 us\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    10.0.0.2 -> 10.0.0.1 tensor 7: no data; signals finish 1, rate 1, "
                      "ack 1\n"),
            std::string::npos)
      << text;
  const std::string json = Json();
  EXPECT_NE(json.find("\"tag_packets\": [\n"), std::string::npos) << json;
  EXPECT_NE(json.find("\"start_to_confirm_ns\": 80000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"tensor_size\": 5600"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ce_share\": 0.2"), std::string::npos) << json;
  const std::string header =
      "run,src,dst,tensor,data_packets,data_bytes,partitions,duplicates,pull_packets,"
      "tag0_packets,tag1_packets,tag2_packets,tag3_packets,tag4_packets,tag5_packets,"
      "tag6_packets,other_dscp_packets,important_packets,unimportant_packets,ce_packets,start,"
      "finish,stop,retransmit,confirm,rate,ack,tensor_size,start_to_confirm_us\n";
  EXPECT_EQ(Csv(), header +
                       "run1,10.0.0.1,10.0.0.2,7,5,7000,4,1,0,1,0,0,2,0,0,1,1,3,2,1,2,0,1,0,2,0,"
                       "0,5600,80.000\n"
                       "run1,10.0.0.2,10.0.0.1,7,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,1,1,,"
                       "\n");
}

TEST_F(DlcpAnalyzerTest, NoConfirmOrAConfirmBeforeTheStartGivesNoTime) {
  Feed(Signal(DlcpType::kStart, 64), 50'000);
  Dlcp confirm_only = Signal(DlcpType::kConfirm);
  confirm_only.tensor = 8;
  Feed(confirm_only, 40'000);
  Dlcp late_start = Signal(DlcpType::kStart, 64);
  late_start.tensor = 8;
  Feed(late_start, 60'000);
  EXPECT_EQ(Json().find("start_to_confirm_ns"), std::string::npos) << Json();
  EXPECT_EQ(Text().find("start to confirm"), std::string::npos) << Text();
}

TEST_F(DlcpAnalyzerTest, ListsTheFirstFlowsInTheText) {
  for (uint32_t tensor = 0; tensor < 25; ++tensor) {
    Dlcp d = Data(0, 1, kEcnEct0);
    d.tensor = tensor;
    Feed(d);
  }
  const std::string text = Text();
  EXPECT_NE(text.find("tensor 19:"), std::string::npos) << text;
  EXPECT_EQ(text.find("tensor 20:"), std::string::npos) << text;
  EXPECT_NE(text.find("    ... 5 more flow(s) (--json, --csv dlcp.csv)\n"), std::string::npos)
      << text;
  EXPECT_NE(Json().find("\"tensor\": 24"), std::string::npos);
}

}  // namespace
}  // namespace swemu
