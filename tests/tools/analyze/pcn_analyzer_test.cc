// swemu-analyze's PCN decoder: the TOS byte read as PCN only on UDP datagrams to or from the PCN
// port, STARTs and ACKs told apart by direction, ACKs matched to STARTs, START+ACK flagged, and
// the per-packet fields, the summary and pcn.csv.
#include <gtest/gtest.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pipeline/wire/atp.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/pcn.h"
#include "tools/analyze/frame_decoder.h"
#include "tools/analyze/protocol_analyzer.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

const MacAddr kMac = MacAddr::FromU64(0x020000000001);
const Ipv4Addr kWorker = MakeIpv4Addr(10, 0, 0, 1);
const Ipv4Addr kWorker2 = MakeIpv4Addr(10, 0, 0, 2);
const Ipv4Addr kPs = MakeIpv4Addr(10, 0, 0, 16);

const ProtocolEntry& Entry(std::string_view name) {
  for (const ProtocolEntry& entry : Protocols()) {
    if (entry.name == name) return entry;
  }
  ADD_FAILURE() << "no protocol " << name;
  return Protocols()[0];
}

Result<std::unique_ptr<ProtocolAnalyzer>> MakePcn(const std::string& port = "") {
  po::options_description options;
  Entry("pcn").add_options(options);
  po::variables_map vm;
  const std::string arg = "--pcn-port=" + port;
  const char* argv[] = {"x", arg.c_str()};
  po::store(po::parse_command_line(port.empty() ? 1 : 2, argv, options), vm);
  return Entry("pcn").make(vm);
}

std::vector<uint8_t> Udp(Ipv4Addr src, Ipv4Addr dst, uint8_t tos, uint16_t sport, uint16_t dport) {
  return FrameBuilder()
      .Eth(kMac, kMac)
      .Ipv4(src, dst)
      .Tos(tos)
      .Udp(sport, dport)
      .Payload(8)
      .Build();
}

std::vector<uint8_t> Start(Ipv4Addr worker, uint32_t threshold, uint8_t ecn = kEcnEct0) {
  return Udp(worker, kPs, PcnTos{true, false, threshold}.Encode(ecn), 40000, kPcnDefaultUdpPort);
}

std::vector<uint8_t> Ack(Ipv4Addr worker, uint32_t threshold, uint8_t ecn = kEcnEct0) {
  return Udp(kPs, worker, PcnTos{false, true, threshold}.Encode(ecn), kPcnDefaultUdpPort, 40000);
}

// Stands in for ATP on its port: only its address matters (such frames must not reach PCN).
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

// The PCN analyzer registered as swemu-analyze registers it (both ways on its port), ATP's on
// its default port beside it.
class PcnAnalyzerTest : public ::testing::Test {
 protected:
  void SetUp() override { Use(MakePcn()); }

  void Use(Result<std::unique_ptr<ProtocolAnalyzer>> made) {
    ASSERT_TRUE(made.ok()) << made.message();
    pcn_ = std::move(*made);
    decoder_ = FrameDecoder();
    ASSERT_NE(pcn_->BothWaysUdpPort(), 0);
    decoder_.RegisterBothWays(pcn_->BothWaysUdpPort(), pcn_.get());
    decoder_.Register(kAtpDefaultUdpPort, &atp_placeholder_);
  }

  // Decodes and accounts one frame at `ts_ns`; returns it and its PCN fields ("" if not PCN).
  DecodedFrame Feed(const std::vector<uint8_t>& bytes, TimeNs ts_ns = 0) {
    DecodedFrame f;
    f.ts_ns = ts_ns;
    f.caplen = f.len = static_cast<uint32_t>(bytes.size());
    decoder_.Decode(kLinkEthernet, bytes, f);
    fields_.clear();
    if (f.protocol == pcn_.get() && f.malformed.empty()) {
      f.malformed = pcn_->Consume(f);
      std::ostringstream row;
      pcn_->WriteFields(row);
      fields_ = row.str();
    }
    return f;
  }

  std::string Json() const {
    JsonWriter json;
    json.BeginObject();
    pcn_->WriteJson(json);
    json.EndObject();
    return json.str();
  }

  std::string Text() const {
    std::ostringstream out;
    pcn_->WriteText(out);
    return out.str();
  }

  std::unique_ptr<ProtocolAnalyzer> pcn_;
  FrameDecoder decoder_;
  std::string fields_;
  NullAnalyzer atp_placeholder_;
};

TEST(PcnRegistry, IsRegisteredWithItsFieldsAndNoDestinationPortDefault) {
  const ProtocolEntry& pcn = Entry("pcn");
  EXPECT_EQ(pcn.default_udp_port, 0);  // its port is --pcn-port, read both ways
  EXPECT_EQ(pcn.fields(),
            (std::vector<std::string>{"pcn.start", "pcn.ack", "pcn.threshold", "pcn.ecn"}));
  Result<std::unique_ptr<ProtocolAnalyzer>> made = MakePcn();
  ASSERT_TRUE(made.ok());
  EXPECT_EQ((*made)->BothWaysUdpPort(), kPcnDefaultUdpPort);
}

TEST(PcnRegistry, RefusesBadPorts) {
  for (const char* bad : {"0", "65536", "abc", "-1", "9700x"}) {
    Result<std::unique_ptr<ProtocolAnalyzer>> made = MakePcn(bad);
    ASSERT_FALSE(made.ok()) << bad;
    EXPECT_EQ(made.message().rfind("--pcn-port: ", 0), 0u) << made.message();
  }
  Result<std::unique_ptr<ProtocolAnalyzer>> made = MakePcn("0x25E4");
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_EQ((*made)->BothWaysUdpPort(), 9700);
}

TEST_F(PcnAnalyzerTest, NamesEveryThresholdAndEcnCodepointOfStartsAndAcks) {
  for (uint32_t threshold = 0; threshold <= kPcnMaxThreshold; threshold += kPcnThresholdStep) {
    for (uint8_t ecn = 0; ecn < 4; ++ecn) {
      const std::string want = std::to_string(threshold) + "," + std::to_string(ecn);
      EXPECT_TRUE(Feed(Start(kWorker, threshold, ecn)).malformed.empty());
      EXPECT_EQ(fields_, "1,0," + want);
      EXPECT_TRUE(Feed(Ack(kWorker, threshold, ecn)).malformed.empty());
      EXPECT_EQ(fields_, "0,1," + want);
    }
  }
  const std::string json = Json();
  EXPECT_NE(json.find("\"starts\": 64"), std::string::npos) << json;
  EXPECT_NE(json.find("\"acks\": 64"), std::string::npos) << json;
  EXPECT_NE(json.find("\"starts_without_ack\": 0"), std::string::npos) << json;
}

TEST_F(PcnAnalyzerTest, ReadsTheTosOnlyOnUdpToOrFromThePcnPort) {
  // EF (0xB8) reads as a START with threshold 70, but not on another port, nor over TCP.
  EXPECT_EQ(Feed(Udp(kWorker, kPs, 0xB8, 40000, 5000)).protocol, nullptr);
  EXPECT_EQ(Feed(Udp(kWorker, kPs, 0xB8, 5000, 40000)).protocol, nullptr);
  const auto tcp = FrameBuilder()
                       .Eth(kMac, kMac)
                       .Ipv4(kWorker, kPs)
                       .Tos(0xB8)
                       .Tcp(40000, kPcnDefaultUdpPort)
                       .Build();
  EXPECT_EQ(Feed(tcp).protocol, nullptr);
  EXPECT_EQ(Text(), "");  // no PCN: no summary
  // A datagram from the PCN port to ATP's port is ATP's.
  EXPECT_EQ(Feed(Udp(kPs, kWorker, 0xB8, kPcnDefaultUdpPort, kAtpDefaultUdpPort)).protocol,
            &atp_placeholder_);
  // The same EF byte on a datagram to the PCN port is a START.
  EXPECT_EQ(Feed(Udp(kWorker, kPs, 0xB8, 40000, kPcnDefaultUdpPort)).protocol, pcn_.get());
  EXPECT_EQ(fields_, "1,0,70,0");
  EXPECT_NE(Json().find("\"starts\": 1"), std::string::npos);
}

TEST_F(PcnAnalyzerTest, TellsStartsAndAcksByDirection) {
  // A START bit on a datagram from the port, an ACK bit on one to it, no bit: no signal, but
  // the fields are named all the same.
  Feed(Udp(kPs, kWorker, PcnTos{true, false, 10}.Encode(0), kPcnDefaultUdpPort, 40000));
  EXPECT_EQ(fields_, "1,0,10,0");
  Feed(Udp(kWorker, kPs, PcnTos{false, true, 10}.Encode(0), 40000, kPcnDefaultUdpPort));
  EXPECT_EQ(fields_, "0,1,10,0");
  Feed(Udp(kWorker, kPs, kEcnEct0, 40000, kPcnDefaultUdpPort));
  EXPECT_EQ(fields_, "0,0,0,2");
  const std::string json = Json();
  EXPECT_NE(json.find("\"starts\": 0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"acks\": 0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"without_signal\": 3"), std::string::npos) << json;
}

TEST_F(PcnAnalyzerTest, MatchesAcksToStartsPerWorkerAndPs) {
  // Worker 1: a START answered after 12 us, then one never answered. Worker 2: its ACK is read
  // before its START (another pcap of the run) and still matches; then an ACK without a START.
  Feed(Start(kWorker, 10), 1'000);
  Feed(Ack(kWorker, 10), 13'000);
  Feed(Start(kWorker, 20), 50'000);
  Feed(Ack(kWorker2, 15), 9'500);
  Feed(Start(kWorker2, 15), 2'000);
  Feed(Ack(kWorker2, 15), 80'000);
  const std::string json = Json();
  EXPECT_NE(json.find("\"starts\": 3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"acks\": 3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"starts_without_ack\": 1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"acks_without_start\": 1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"round_trip_ns\": 12000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"round_trip_ns\": 7500"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"round_trip_ns\": 78000"), std::string::npos) << json;
  const std::string text = Text();
  EXPECT_NE(text.find("pcn: udp port 9700, 3 START(s), 3 ACK(s), 1 START(s) without an ACK, "
                      "1 ACK(s) without a START"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("10.0.0.1 -> 10.0.0.16: 2 START(s), thresholds 10,20; 1 ACK(s), "
                      "1 unanswered; round trip 12.000..12.000 us"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("START at 0.000001000 s, threshold 10, ecn 2: ACK after 12.000 us"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("START at 0.000050000 s, threshold 20, ecn 2: no ACK"), std::string::npos)
      << text;
}

TEST_F(PcnAnalyzerTest, FlagsStartAndAckTogether) {
  // CS6 (0xC0) on the PCN port: both bits, threshold 0.
  const DecodedFrame f = Feed(Udp(kWorker, kPs, 0xC0, 40000, kPcnDefaultUdpPort));
  EXPECT_EQ(f.malformed, "pcn_start_and_ack");
  EXPECT_EQ(fields_, "1,1,0,0");
  const std::string json = Json();
  EXPECT_NE(json.find("\"pcn_start_and_ack\": 1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"starts\": 0"), std::string::npos) << json;
  EXPECT_NE(Text().find("odd: pcn_start_and_ack 1"), std::string::npos) << Text();
}

TEST_F(PcnAnalyzerTest, PcnPortOptionMovesTheScope) {
  Use(MakePcn("9800"));
  EXPECT_EQ(Feed(Start(kWorker, 10)).protocol, nullptr);
  EXPECT_EQ(Feed(Udp(kWorker, kPs, 0x8A, 40000, 9800)).protocol, pcn_.get());
  EXPECT_EQ(fields_, "1,0,10,2");
  EXPECT_EQ(Feed(Udp(kPs, kWorker, 0x4A, 9800, 40000)).protocol, pcn_.get());
  EXPECT_EQ(fields_, "0,1,10,2");
  EXPECT_NE(Json().find("\"round_trip_ns\": 0"), std::string::npos) << Json();
}

TEST_F(PcnAnalyzerTest, WritesOneCsvRowPerSignalInTimeOrder) {
  Feed(Ack(kWorker, 10, kEcnCe), 3'000'000'000);
  Feed(Start(kWorker, 10, kEcnEct0), 1'000'000'000);
  Feed(Udp(kWorker, kPs, 0xC1, 40000, kPcnDefaultUdpPort), 4'000'000'000);
  Feed(Udp(kWorker, kPs, 0x02, 40000, kPcnDefaultUdpPort), 5'000'000'000);  // no signal: no row
  const std::string dir = ::testing::TempDir() + "/pcn_csv";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(pcn_->WriteCsv(dir, "run1", true).ok());
  ASSERT_TRUE(pcn_->WriteCsv(dir, "run2", false).ok());
  std::ifstream in(dir + "/pcn.csv");
  std::stringstream content;
  content << in.rdbuf();
  const std::string rows =
      "1000000000,10.0.0.1,10.0.0.16,start,10,2,2000000.000\n"
      "3000000000,10.0.0.16,10.0.0.1,ack,10,3,\n"
      "4000000000,10.0.0.1,10.0.0.16,start_and_ack,0,1,\n";
  auto prefixed = [&](const std::string& run) {
    std::string out;
    std::istringstream lines(rows);
    for (std::string line; std::getline(lines, line);) out += run + "," + line + "\n";
    return out;
  };
  EXPECT_EQ(content.str(), "run,time_ns,src,dst,kind,threshold,ecn,round_trip_us\n" +
                               prefixed("run1") + prefixed("run2"));
}

}  // namespace
}  // namespace swemu
