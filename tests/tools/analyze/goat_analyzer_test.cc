// swemu-analyze's GOAT decoder, run as swemu-analyze runs it: frames built here (GoatFields and
// FrameBuilder) written to a pcap, read by RunAnalysis with every protocol registered from its
// options. The header read on UDP datagrams to the GOAT port only, every field in --packets,
// malformed headers by reason, and the per-job summary (gradients by kind and by node id,
// results, flags, fragments and rounds) as text, JSON and goat.csv.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/atp.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/goat.h"
#include "tests/tools/analyze/protocol_analyzer_test_util.h"
#include "tools/analyze/run_analysis.h"

namespace swemu {
namespace {
namespace po = boost::program_options;
using namespace swemu::testing;  // NOLINT(build/namespaces)

const MacAddr kMac = MacAddr::FromU64(0x020000000001);
const Ipv4Addr kWorker = MakeIpv4Addr(10, 0, 0, 1);
const Ipv4Addr kPs = MakeIpv4Addr(10, 0, 0, 16);
constexpr uint16_t kWorkerPort = 30000;
constexpr std::size_t kFrameHeaders = 14 + 20 + 8;  // Ethernet, IPv4, UDP

struct Goat {
  GoatFields f;
  std::size_t elements = SIZE_MAX;  // elements in the datagram; default: num_elements
  std::size_t cut = SIZE_MAX;       // GOAT bytes kept in the datagram; default: all
  int byte0 = -1;  // ver_type as sent, for versions and types GoatFields cannot encode; -1: f's
  uint32_t caplen = 0;  // frame bytes captured; 0: all
  uint16_t sport = kWorkerPort, dport = kGoatDefaultUdpPort;
  bool tcp = false;
};

std::vector<uint8_t> Frame(const Goat& g) {
  const std::size_t elements = g.elements == SIZE_MAX ? g.f.num_elements : g.elements;
  std::vector<uint8_t> bytes(kGoatHeaderLen + 4 * elements);
  g.f.Encode(bytes.data());
  if (g.byte0 >= 0) bytes[0] = static_cast<uint8_t>(g.byte0);
  for (std::size_t i = 0; i < elements; ++i) {
    StoreBe32(bytes.data() + kGoatHeaderLen + 4 * i, static_cast<uint32_t>(-int32_t(i)));
  }
  bytes.resize(std::min(bytes.size(), g.cut));
  FrameBuilder b;
  b.Eth(kMac, kMac).Ipv4(kWorker, kPs);
  if (g.tcp) {
    b.Tcp(g.sport, g.dport);
  } else {
    b.Udp(g.sport, g.dport);
  }
  return b.Payload(bytes).Build();
}

Goat Grad(uint8_t worker, uint16_t node, uint16_t submodel, uint32_t fragment, uint32_t round,
          uint8_t flags = 0) {
  Goat g;
  g.f = {.flags = flags,
         .job_id = 1,
         .node_id = node,
         .submodel = submodel,
         .fragment = fragment,
         .round = round,
         .num_elements = 4,
         .count = 1,
         .bitmap = uint64_t{1} << worker};
  return g;
}
// A switch's aggregate (or, as the PS sends it, a result) of the workers in `bitmap`.
Goat Sum(uint64_t bitmap, uint16_t node, uint16_t submodel, uint32_t fragment, uint32_t round,
         uint8_t flags = kGoatFlagAggregate) {
  Goat g = Grad(0, node, submodel, fragment, round, flags);
  g.f.bitmap = bitmap;
  g.f.count = static_cast<uint16_t>(std::popcount(bitmap));
  return g;
}
Goat PsResult(uint64_t bitmap, uint16_t submodel, uint32_t fragment, uint32_t round,
              uint8_t flags = 0) {
  Goat g = Sum(bitmap, kGoatNodePs, submodel, fragment, round, flags);
  g.f.type = GoatType::kResult;
  return g;
}

// swemu-analyze's options (every protocol's), parsed from `args`.

const ProtocolEntry* GoatEntry() { return ProtocolNamed("goat"); }

constexpr std::size_t kGoatFields = 11;

class GoatAnalyzerTest : public ProtocolAnalyzerTest {
 protected:
  GoatAnalyzerTest() : ProtocolAnalyzerTest("goat", kGoatFields, false) {}
  // The frames in their order, analyzed with `args` (see ProtocolAnalyzerTest).
  void Analyze(const std::vector<Goat>& frames, const std::vector<std::string>& args = {}) {
    std::vector<PcapFrame> pcap;
    for (const Goat& f : frames) pcap.push_back({Frame(f), f.caplen, kNever});
    AnalyzeFrames(pcap, args);
  }
};

const std::string kCsvHeader =
    "run,job,gradient_packets,worker_packets,aggregate_packets,other_gradient_packets,"
    "aggregate_count_min,aggregate_count_max,to_ps_packets,to_switch_packets,to_any_packets,"
    "result_packets,excluded_result_packets,resend_packets,overflow_packets,fragments,rounds,"
    "round_min,round_max,workers_bitmap\n";
const std::string kNoGoat = ",,,,,,,,,,";

TEST(GoatRegistry, IsRegisteredWithItsFieldsAndItsOwnPort) {
  const ProtocolEntry* goat = GoatEntry();
  ASSERT_NE(goat, nullptr);
  EXPECT_EQ(goat->default_udp_port, 0);  // its port is --goat-port
  EXPECT_EQ(goat->fields(), (std::vector<std::string>{
                                "goat.version", "goat.type", "goat.flags", "goat.job_id",
                                "goat.node_id", "goat.submodel", "goat.fragment", "goat.round",
                                "goat.num_elements", "goat.count", "goat.bitmap"}));
  Result<std::unique_ptr<ProtocolAnalyzer>> made = goat->make(AnalyzerOptions({}));
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_EQ((*made)->OwnUdpPort(), kGoatDefaultUdpPort);
  EXPECT_EQ((*made)->BothWaysUdpPort(), 0);  // to the port only
}

TEST(GoatRegistry, RefusesBadPorts) {
  for (const char* bad : {"=0", "=65536", "=abc", "=-1", "=9100x", ""}) {
    // "": an empty value, as the shell passes --goat-port ''.
    const std::vector<std::string> args =
        *bad != 0 ? std::vector<std::string>{"--goat-port" + std::string(bad)}
                  : std::vector<std::string>{"--goat-port", ""};
    Result<std::unique_ptr<ProtocolAnalyzer>> made = GoatEntry()->make(AnalyzerOptions(args));
    ASSERT_FALSE(made.ok()) << bad;
    EXPECT_EQ(made.message().rfind("--goat-port: ", 0), 0u) << made.message();
  }
  Result<std::unique_ptr<ProtocolAnalyzer>> made =
      GoatEntry()->make(AnalyzerOptions({"--goat-port=9200"}));
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_EQ((*made)->OwnUdpPort(), 9200);
}

TEST_F(GoatAnalyzerTest, NamesEveryField) {
  Goat extremes = PsResult(~uint64_t{0}, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFF);
  extremes.f.job_id = 0xFFFF;
  extremes.f.node_id = kGoatNodeAny;
  extremes.f.num_elements = 0;
  Goat zeros = Sum(0, kGoatNodePs, 0, 0, 0, 0);  // no worker: count 0
  zeros.f.job_id = 0;
  zeros.f.num_elements = 1;
  Analyze({Grad(5, 7, 3, 9, 11, kGoatFlagResend), extremes, zeros});
  EXPECT_EQ(cells_,
            (std::vector<std::string>{"1,0,1,1,7,3,9,11,4,1,32",
                                      "1,1,255,65535,65535,65535,4294967295,4294967295,0,64,"
                                      "18446744073709551615",
                                      "1,0,0,0,0,0,0,0,1,0,0"}));
  EXPECT_EQ(malformed_, (std::vector<std::string>{"", "", ""}));
  EXPECT_EQ(csv_, kCsvHeader + pcap_ + ",0,1,0,0,1,,,1,0,0,0,0,0,0,1,1,0,0,0\n" + pcap_ +
                      ",1,1,1,0,0,,,0,1,0,0,0,1,0,1,1,11,11,32\n" + pcap_ +
                      ",65535,0,0,0,0,,,0,0,0,1,1,1,1,1,1,4294967295,4294967295,0\n");
}

TEST_F(GoatAnalyzerTest, ReadsOnlyUdpToTheGoatPort) {
  Goat other_port = Grad(0, 1, 0, 0, 1);
  other_port.dport = 9101;
  Goat from_port = Grad(0, 1, 0, 0, 1);  // from the GOAT port to another
  from_port.sport = kGoatDefaultUdpPort;
  from_port.dport = 40000;
  Goat tcp = Grad(0, 1, 0, 0, 1);
  tcp.tcp = true;
  Goat moved = Grad(0, 1, 0, 0, 1);
  moved.dport = 9200;
  Analyze({Grad(0, 1, 0, 0, 1), other_port, from_port, tcp, moved});
  EXPECT_EQ(cells_, (std::vector<std::string>{"1,0,0,1,1,0,0,1,4,1,1", kNoGoat, kNoGoat, kNoGoat,
                                              kNoGoat}));
  EXPECT_TRUE(Has(text_, "  goat: udp port 9100, 1 job(s), 1 gradient(s), 0 result(s)\n")) << text_;
  // --goat-port moves it.
  Analyze({Grad(0, 1, 0, 0, 1), moved}, {"--goat-port=9200"});
  EXPECT_EQ(cells_, (std::vector<std::string>{kNoGoat, "1,0,0,1,1,0,0,1,4,1,1"}));
  EXPECT_TRUE(Has(text_, "  goat: udp port 9200, 1 job(s)")) << text_;
  EXPECT_TRUE(Has(json_, "\"udp_port\": 9200")) << json_;
  // No GOAT: no text, an empty summary in the JSON.
  Analyze({other_port});
  EXPECT_FALSE(Has(text_, "goat: ")) << text_;
  EXPECT_TRUE(Has(json_, "\"goat\": {")) << json_;
  EXPECT_TRUE(Has(json_, "\"jobs\": []")) << json_;
  EXPECT_EQ(csv_, kCsvHeader);
}

TEST_F(GoatAnalyzerTest, NamesMalformedHeadersAndCountsOnlyTheRest) {
  std::vector<Goat> frames;
  const Goat good = Grad(3, 2, 0, 0, 1);
  for (std::size_t cut : {0, 1, 27}) {
    Goat g = good;
    g.cut = cut;
    frames.push_back(g);
  }
  Goat cut_twice = good;  // cut in the datagram, and by the capture before that
  cut_twice.cut = 20;
  cut_twice.caplen = kFrameHeaders + 10;
  frames.push_back(cut_twice);
  for (int version : {0, 2, 15}) {
    Goat g = good;
    g.byte0 = version << 4;
    frames.push_back(g);
  }
  for (int type : {2, 15}) {
    Goat g = good;
    g.byte0 = kGoatVersion << 4 | type;
    frames.push_back(g);
  }
  Goat short_elements = good;
  short_elements.elements = 3;  // of 4
  frames.push_back(short_elements);
  Goat no_elements = good;
  no_elements.f.num_elements = 0xFFFF;
  no_elements.elements = 0;
  frames.push_back(no_elements);
  for (auto [count, bitmap] : {std::pair<uint16_t, uint64_t>{2, 1}, {0, 1}, {1, 3}}) {
    Goat g = good;
    g.f.count = count;
    g.f.bitmap = bitmap;
    frames.push_back(g);
  }
  // Not malformed: bytes after the elements, elements cut by the capture (both counted), the
  // header cut by the capture (not counted).
  Goat trailing = Grad(0, 2, 0, 0, 1);
  trailing.elements = 6;
  frames.push_back(trailing);
  Goat elements_snapped = Grad(1, 2, 0, 0, 1);
  elements_snapped.caplen = kFrameHeaders + kGoatHeaderLen + 4;
  frames.push_back(elements_snapped);
  Goat header_snapped = good;
  header_snapped.caplen = kFrameHeaders + 10;
  frames.push_back(header_snapped);
  frames.push_back(Sum(~uint64_t{0}, kGoatNodeAny, 0, 0, 1));
  Analyze(frames);
  EXPECT_EQ(malformed_, (std::vector<std::string>{
                            "goat_truncated_header", "goat_truncated_header",
                            "goat_truncated_header", "goat_truncated_header", "goat_bad_version",
                            "goat_bad_version", "goat_bad_version", "goat_bad_type",
                            "goat_bad_type", "goat_truncated_elements", "goat_truncated_elements",
                            "goat_bad_count", "goat_bad_count", "goat_bad_count", "", "", "", ""}));
  // Each field as far as its bytes were captured.
  EXPECT_EQ(cells_,
            (std::vector<std::string>{
                kNoGoat, "1,0,,,,,,,,,", "1,0,0,1,2,0,0,1,4,1,", "1,0,0,1,2,0,,,,,",
                "0,0,0,1,2,0,0,1,4,1,8", "2,0,0,1,2,0,0,1,4,1,8", "15,0,0,1,2,0,0,1,4,1,8",
                "1,2,0,1,2,0,0,1,4,1,8", "1,15,0,1,2,0,0,1,4,1,8", "1,0,0,1,2,0,0,1,4,1,8",
                "1,0,0,1,2,0,0,1,65535,1,8", "1,0,0,1,2,0,0,1,4,2,1", "1,0,0,1,2,0,0,1,4,0,1",
                "1,0,0,1,2,0,0,1,4,1,3", "1,0,0,1,2,0,0,1,4,1,1", "1,0,0,1,2,0,0,1,4,1,2",
                "1,0,0,1,2,0,,,,,", "1,0,4,1,65535,0,0,1,4,64,18446744073709551615"}));
  EXPECT_TRUE(Has(json_, "\"snapped_headers\": 1,")) << json_;
  for (const char* count :
       {"\"goat_truncated_header\": 4", "\"goat_bad_version\": 3", "\"goat_bad_type\": 2",
        "\"goat_truncated_elements\": 2", "\"goat_bad_count\": 3"}) {
    EXPECT_TRUE(Has(json_, count)) << count << "\n" << json_;
  }
  EXPECT_TRUE(Has(text_,
                  "  goat: udp port 9100, 1 job(s), 3 gradient(s), 0 result(s), 1 "
                  "header(s) cut by the capture (not counted); malformed "
                  "goat_truncated_header 4 goat_bad_version 3 goat_bad_type 2 "
                  "goat_truncated_elements 2 goat_bad_count 3\n"))
      << text_;
  // Only the three whole ones are in the job.
  EXPECT_EQ(csv_,
            kCsvHeader + pcap_ + ",1,3,2,1,0,64,64,0,2,1,0,0,0,0,1,1,1,1,18446744073709551615\n");
}

TEST_F(GoatAnalyzerTest, SummarizesJobs) {
  Analyze({
      // Sub-model 0, fragment 0: four workers to switch 1, its full aggregate to the PS.
      Grad(0, 1, 0, 0, 1),
      Grad(1, 1, 0, 0, 1),
      Grad(2, 1, 0, 0, 1),
      Grad(3, 1, 0, 0, 1),
      Sum(0xF, kGoatNodePs, 0, 0, 1),
      // Fragment 1: worker 1's retransmission flushes the partial sum of 0 and 1; workers 2 and
      // 3 send theirs to the PS (3 retransmitting).
      Grad(0, 1, 0, 1, 1),
      Grad(1, 1, 0, 1, 1, kGoatFlagResend),
      Sum(0x3, kGoatNodePs, 0, 1, 1),
      Grad(2, kGoatNodePs, 0, 1, 1),
      Grad(3, kGoatNodePs, 0, 1, 1, kGoatFlagResend),
      // Sub-model 1 shared ATP-style, and an aggregate that overflowed.
      Grad(0, kGoatNodeAny, 1, 0, 1),
      Grad(1, kGoatNodeAny, 1, 0, 1),
      Sum(0x3, kGoatNodeAny, 1, 0, 1),
      Sum(0x7, kGoatNodePs, 1, 1, 1, kGoatFlagAggregate | kGoatFlagOverflow),
      // The PS's results, the second without the late worker 3.
      PsResult(0xF, 0, 0, 1),
      PsResult(0x7, 0, 1, 1, kGoatFlagExcluded),
      // Round 2, and several workers' values without the aggregate flag.
      Grad(0, 1, 0, 0, 2),
      Sum(0x5, kGoatNodePs, 0, 2, 2, 0),
      // Another job.
      [] {
        Goat g = Grad(5, 3, 0, 0, 7);
        g.f.job_id = 2;
        return g;
      }(),
  });
  EXPECT_TRUE(Has(text_, "  goat: udp port 9100, 2 job(s), 17 gradient(s), 2 result(s)\n"))
      << text_;
  EXPECT_TRUE(Has(text_,
                  "    job 1: 16 gradient(s): worker 11, aggregate 4 (count 2 x2, 3 x1, 4 x1), "
                  "other 1; to the PS 6, to a switch 7, to any 3; 2 result(s), 1 excluded; "
                  "resend 2, overflow 1; 6 fragment(s), rounds 1..2 (2); workers 0xf (4)\n"))
      << text_;
  EXPECT_TRUE(Has(text_,
                  "    job 2: 1 gradient(s): worker 1, aggregate 0; to the PS 0, to a switch 1, "
                  "to any 0; 0 result(s), 0 excluded; resend 0, overflow 0; 1 fragment(s), "
                  "rounds 7..7 (1); workers 0x20 (1)\n"))
      << text_;
  EXPECT_EQ(csv_, kCsvHeader + pcap_ + ",1,16,11,4,1,2,4,6,7,3,2,1,2,1,6,2,1,2,15\n" + pcap_ +
                      ",2,1,1,0,0,,,0,1,0,0,0,0,0,1,1,7,7,32\n");
  // The JSON has the same, with the aggregates' counts.
  for (const char* part :
       {"\"job\": 1,", "\"gradient_packets\": 16,", "\"worker_packets\": 11,",
        "\"aggregate_packets\": 4,", "\"other_gradient_packets\": 1,", "\"to_ps_packets\": 6,",
        "\"to_switch_packets\": 7,", "\"to_any_packets\": 3,", "\"result_packets\": 2,",
        "\"excluded_result_packets\": 1,", "\"resend_packets\": 2,", "\"overflow_packets\": 1,",
        "\"fragments\": 6,", "\"rounds\": 2,", "\"round_min\": 1,", "\"round_max\": 2,",
        "\"workers_bitmap\": 15", "\"snapped_headers\": 0,"}) {
    EXPECT_TRUE(Has(json_, part)) << part << "\n" << json_;
  }
  std::string counts = json_.substr(json_.find("\"aggregate_counts\""));
  counts.erase(std::remove_if(counts.begin(), counts.end(), ::isspace), counts.end());
  EXPECT_EQ(counts.rfind("\"aggregate_counts\":[{\"count\":2,\"packets\":2},{\"count\":3,"
                         "\"packets\":1},{\"count\":4,\"packets\":1}],",
                         0),
            0u)
      << json_;
  EXPECT_TRUE(Has(json_, "\"aggregate_counts\": []")) << json_;  // job 2's
}

TEST_F(GoatAnalyzerTest, ListsTheFirstJobsInTheText) {
  std::vector<Goat> frames;
  for (uint16_t job = 1; job <= 25; ++job) {
    frames.push_back(Grad(0, 1, 0, 0, 1));
    frames.back().f.job_id = job;
  }
  Analyze(frames);
  EXPECT_TRUE(Has(text_, "    job 20: ")) << text_;
  EXPECT_FALSE(Has(text_, "    job 21: ")) << text_;
  EXPECT_TRUE(Has(text_, "    ... 5 more job(s) (--json, --csv goat.csv)\n")) << text_;
  EXPECT_TRUE(Has(json_, "\"job\": 25,")) << json_;
}

}  // namespace
}  // namespace swemu
