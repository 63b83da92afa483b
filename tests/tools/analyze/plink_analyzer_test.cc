// swemu-analyze's PLink decoder, run as swemu-analyze runs it: frames built here (PlinkFields and
// FrameBuilder) written to a pcap at known capture times, read by RunAnalysis with every protocol
// registered from its options. The header read on UDP datagrams to the PLink port only, every
// field in --packets, malformed headers by reason, and the per-pair summary (probe requests,
// replies matched to them with round trips in capture time, unanswered requests, unmatched
// replies, epochs; chunks, their packets per schedule step, payload bytes, chunk ids, epochs;
// chunk acks, counted with the chunks they acknowledge) as text, JSON and plink.csv.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/atp.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/plink.h"
#include "tests/tools/analyze/protocol_analyzer_test_util.h"
#include "tools/analyze/run_analysis.h"

namespace swemu {
namespace {
namespace po = boost::program_options;
using namespace swemu::testing;  // NOLINT(build/namespaces)

const MacAddr kMac = MacAddr::FromU64(0x020000000001);
const Ipv4Addr kHostA = MakeIpv4Addr(10, 0, 0, 1);
const Ipv4Addr kHostB = MakeIpv4Addr(10, 0, 0, 2);
constexpr uint16_t kHostPort = 30000;
constexpr std::size_t kFrameHeaders = 14 + 20 + 8;  // Ethernet, IPv4, UDP

struct Plink {
  PlinkFields f;
  std::size_t payload = 0;     // bytes after the header
  std::size_t cut = SIZE_MAX;  // PLink bytes kept in the datagram; default: all
  int byte0 = -1;  // ver_type as sent, for versions and types PlinkFields cannot encode; -1: f's
  uint32_t caplen = 0;  // frame bytes captured; 0: all
  TimeNs ns = kNever;   // capture time after kAnalyzerStartNs; default: 1 us per frame
  uint16_t sport = kHostPort, dport = kPlinkDefaultUdpPort;
  bool tcp = false;
};

std::vector<uint8_t> Frame(const Plink& p) {
  std::vector<uint8_t> bytes(kPlinkHeaderLen + p.payload);
  p.f.Encode(bytes.data());
  if (p.byte0 >= 0) bytes[0] = static_cast<uint8_t>(p.byte0);
  for (std::size_t i = kPlinkHeaderLen; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i);
  bytes.resize(std::min(bytes.size(), p.cut));
  FrameBuilder b;
  b.Eth(kMac, kMac).Ipv4(kHostA, kHostB);
  if (p.tcp) {
    b.Tcp(p.sport, p.dport);
  } else {
    b.Udp(p.sport, p.dport);
  }
  return b.Payload(bytes).Build();
}

// A probe request from `from` to `to`, sent at `stamp` by the requester's clock.
Plink Request(uint16_t from, uint16_t to, uint16_t epoch, uint32_t seq, TimeNs at_ns = kNever,
              uint64_t stamp = 0) {
  Plink p;
  p.f = {.type = PlinkType::kProbeRequest,
         .sender = from,
         .receiver = to,
         .epoch = epoch,
         .seq = seq,
         .stamp = stamp};
  p.ns = at_ns;
  return p;
}
// The reply to a request of `requester`, from `responder`.
Plink Reply(uint16_t requester, uint16_t responder, uint16_t epoch, uint32_t seq,
            TimeNs at_ns = kNever, uint64_t stamp = 0) {
  Plink p = Request(responder, requester, epoch, seq, at_ns, stamp);
  p.f.type = PlinkType::kProbeReply;
  return p;
}
// `len` bytes at `offset` of chunk `id` (of `size` bytes) in plan epoch `epoch`.
Plink Chunk(uint16_t from, uint16_t to, uint16_t epoch, uint32_t id, uint32_t offset,
            std::size_t len, uint64_t size) {
  Plink p = Request(from, to, epoch, id, kNever, size);
  p.f.type = PlinkType::kChunk;
  p.f.offset = offset;
  p.payload = len;
  return p;
}
// `p` (a chunk or an ack) in schedule step `step` (flags bits 1-0).
Plink InStep(Plink p, PlinkStep step) {
  p.f.flags = static_cast<uint8_t>(step);
  return p;
}
// The ack of chunk packet `chunk` as its receiver sends it: the chunk's header, sender and
// receiver swapped, type 3, no payload.
Plink AckOf(const Plink& chunk) {
  Plink p = chunk;
  p.f.type = PlinkType::kChunkAck;
  std::swap(p.f.sender, p.f.receiver);
  p.payload = 0;
  return p;
}

// swemu-analyze's options (every protocol's), parsed from `args`.

const ProtocolEntry* PlinkEntry() { return ProtocolNamed("plink"); }

constexpr std::size_t kPlinkFields = 9;

class PlinkAnalyzerTest : public ProtocolAnalyzerTest {
 protected:
  PlinkAnalyzerTest() : ProtocolAnalyzerTest("plink", kPlinkFields, true) {}
  // The frames in their order, analyzed with `args` (see ProtocolAnalyzerTest).
  void Analyze(const std::vector<Plink>& frames, const std::vector<std::string>& args = {}) {
    std::vector<PcapFrame> pcap;
    for (const Plink& f : frames) pcap.push_back({Frame(f), f.caplen, f.ns});
    AnalyzeFrames(pcap, args);
  }
};

const std::string kCsvHeader =
    "run,sender,receiver,requests,replies,matched,unanswered,unmatched_replies,rtt_min_us,"
    "rtt_mean_us,rtt_max_us,probe_epochs,probe_epoch_min,probe_epoch_max,chunk_packets,"
    "chunk_bytes,chunk_ids,chunk_epochs,chunk_epoch_min,chunk_epoch_max,chunk_acks,"
    "chunk_step0_packets,chunk_step1_packets,chunk_step2_packets,chunk_step3_packets\n";
const std::string kNoPlink = ",,,,,,,,";

TEST(PlinkRegistry, IsRegisteredWithItsFieldsAndItsOwnPort) {
  const ProtocolEntry* plink = PlinkEntry();
  ASSERT_NE(plink, nullptr);
  EXPECT_EQ(plink->default_udp_port, 0);  // its port is --plink-port
  EXPECT_EQ(plink->fields(),
            (std::vector<std::string>{"plink.version", "plink.type", "plink.flags", "plink.sender",
                                      "plink.receiver", "plink.epoch", "plink.seq", "plink.offset",
                                      "plink.stamp"}));
  Result<std::unique_ptr<ProtocolAnalyzer>> made = plink->make(AnalyzerOptions({}));
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_EQ((*made)->OwnUdpPort(), kPlinkDefaultUdpPort);
  EXPECT_EQ((*made)->BothWaysUdpPort(), 0);  // to the port only
}

TEST(PlinkRegistry, RefusesBadPorts) {
  for (const char* bad : {"=0", "=65536", "=abc", "=-1", "=9200x", ""}) {
    // "": an empty value, as the shell passes --plink-port ''.
    const std::vector<std::string> args =
        *bad != 0 ? std::vector<std::string>{"--plink-port" + std::string(bad)}
                  : std::vector<std::string>{"--plink-port", ""};
    Result<std::unique_ptr<ProtocolAnalyzer>> made = PlinkEntry()->make(AnalyzerOptions(args));
    ASSERT_FALSE(made.ok()) << bad;
    EXPECT_EQ(made.message().rfind("--plink-port: ", 0), 0u) << made.message();
  }
  Result<std::unique_ptr<ProtocolAnalyzer>> made =
      PlinkEntry()->make(AnalyzerOptions({"--plink-port=9300"}));
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_EQ((*made)->OwnUdpPort(), 9300);
}

TEST_F(PlinkAnalyzerTest, NamesEveryField) {
  Plink extremes = Chunk(0xFFFF, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0, ~uint64_t{0});
  extremes.f.flags = 0xFF;
  Analyze({Request(1, 2, 3, 4, kNever, 0x0102030405060708), Reply(1, 2, 3, 4), extremes,
           Chunk(0, 0, 0, 0, 0, 0, 0),
           AckOf(InStep(Chunk(1, 2, 5, 6, 7, 0, 8), PlinkStep::kTotalToLocal)), AckOf(extremes)});
  EXPECT_EQ(cells_, (std::vector<std::string>{
                        "1,0,0,1,2,3,4,0,72623859790382856", "1,1,0,2,1,3,4,0,0",
                        "1,2,255,65535,65535,65535,4294967295,4294967295,18446744073709551615",
                        "1,2,0,0,0,0,0,0,0", "1,3,2,2,1,5,6,7,8",
                        "1,3,255,65535,65535,65535,4294967295,4294967295,18446744073709551615"}));
  EXPECT_EQ(malformed_, (std::vector<std::string>{"", "", "", "", "", ""}));
  // The flags' step: 0xFF is step 3 (the other bits are ignored).
  EXPECT_EQ(csv_, kCsvHeader + pcap_ + ",0,0,0,0,0,0,0,,,,0,,,1,0,1,1,0,0,0,1,0,0,0\n" + pcap_ +
                      ",1,2,1,1,1,0,0,1.000,1.000,1.000,1,3,3,0,0,0,0,,,1,0,0,0,0\n" + pcap_ +
                      ",65535,65535,0,0,0,0,0,,,,0,,,1,0,1,1,65535,65535,1,0,0,0,1\n");
}

TEST_F(PlinkAnalyzerTest, ReadsOnlyUdpToThePlinkPort) {
  Plink other_port = Request(1, 2, 0, 1);
  other_port.dport = 9201;
  Plink from_port = Request(1, 2, 0, 1);  // from the PLink port to another
  from_port.sport = kPlinkDefaultUdpPort;
  from_port.dport = 40000;
  Plink tcp = Request(1, 2, 0, 1);
  tcp.tcp = true;
  Plink moved = Request(1, 2, 0, 1);
  moved.dport = 9300;
  Analyze({Request(1, 2, 0, 1), other_port, from_port, tcp, moved});
  EXPECT_EQ(cells_, (std::vector<std::string>{"1,0,0,1,2,0,1,0,0", kNoPlink, kNoPlink, kNoPlink,
                                              kNoPlink}));
  EXPECT_TRUE(Has(text_,
                  "  plink: udp port 9200, 1 pair(s), 1 probe(s), 0 chunk packet(s), "
                  "0 chunk ack(s)\n"))
      << text_;
  // --plink-port moves it.
  Analyze({Request(1, 2, 0, 1), moved}, {"--plink-port=9300"});
  EXPECT_EQ(cells_, (std::vector<std::string>{kNoPlink, "1,0,0,1,2,0,1,0,0"}));
  EXPECT_TRUE(Has(text_, "  plink: udp port 9300, 1 pair(s)")) << text_;
  EXPECT_TRUE(Has(json_, "\"plink\":{\"udp_port\":9300,")) << json_;
  // No PLink: no text, an empty summary in the JSON.
  Analyze({other_port});
  EXPECT_FALSE(Has(text_, "plink: ")) << text_;
  EXPECT_TRUE(Has(json_, "\"plink\":{\"udp_port\":9200,\"snapped_headers\":0,")) << json_;
  EXPECT_TRUE(Has(json_, "\"pairs\":[]")) << json_;
  EXPECT_EQ(csv_, kCsvHeader);
}

TEST_F(PlinkAnalyzerTest, NamesMalformedHeadersAndCountsOnlyTheRest) {
  std::vector<Plink> frames;
  const Plink good = Request(1, 2, 0, 1);
  for (std::size_t cut : {0, 1, 23}) {
    Plink p = good;
    p.cut = cut;
    frames.push_back(p);
  }
  Plink cut_twice = good;  // cut in the datagram, and by the capture before that
  cut_twice.cut = 20;
  cut_twice.caplen = kFrameHeaders + 10;
  frames.push_back(cut_twice);
  for (int version : {0, 2, 15}) {
    Plink p = good;
    p.byte0 = version << 4;
    frames.push_back(p);
  }
  for (int type : {4, 15}) {  // 3 is a chunk ack
    Plink p = good;
    p.byte0 = kPlinkVersion << 4 | type;
    frames.push_back(p);
  }
  frames.push_back(Chunk(1, 2, 0, 1, 0, 101, 100));                // one byte past the size
  frames.push_back(Chunk(1, 2, 0, 1, 100, 1, 100));                // starts at the size
  frames.push_back(Chunk(1, 2, 0, 1, 0xFFFFFFFF, 2, 0xFFFFFFFF));  // no 32-bit wrap
  // Not malformed: a probe with a payload or an offset (both ignored), a chunk that ends at its
  // size, an empty chunk at its end, a chunk's payload cut by the capture, a chunk ack with bytes
  // after its header (ignored; no overrun check either), a chunk of 6 bytes (not a whole number
  // of float32 values) (all counted), the header cut by the capture (not counted).
  Plink probe_payload = Request(1, 2, 0, 2);
  probe_payload.payload = 8;
  frames.push_back(probe_payload);
  Plink probe_offset = Request(1, 2, 0, 3);
  probe_offset.f.offset = 5;
  frames.push_back(probe_offset);
  frames.push_back(Chunk(1, 2, 0, 1, 0, 100, 100));
  frames.push_back(Chunk(1, 2, 0, 1, 100, 0, 100));
  Plink payload_snapped = Chunk(1, 2, 0, 2, 0, 50, 50);
  payload_snapped.caplen = kFrameHeaders + kPlinkHeaderLen + 4;
  frames.push_back(payload_snapped);
  Plink ack_payload = AckOf(Chunk(1, 2, 0, 1, 100, 0, 100));
  ack_payload.payload = 8;
  frames.push_back(ack_payload);
  frames.push_back(Chunk(1, 2, 0, 3, 0, 6, 6));
  Plink header_snapped = good;
  header_snapped.caplen = kFrameHeaders + 10;
  frames.push_back(header_snapped);
  Analyze(frames);
  EXPECT_EQ(malformed_, (std::vector<std::string>{"plink_truncated_header",
                                                  "plink_truncated_header",
                                                  "plink_truncated_header",
                                                  "plink_truncated_header",
                                                  "plink_bad_version",
                                                  "plink_bad_version",
                                                  "plink_bad_version",
                                                  "plink_bad_type",
                                                  "plink_bad_type",
                                                  "plink_chunk_overrun",
                                                  "plink_chunk_overrun",
                                                  "plink_chunk_overrun",
                                                  "",
                                                  "",
                                                  "",
                                                  "",
                                                  "",
                                                  "",
                                                  "",
                                                  ""}));
  // Each field as far as its bytes were captured.
  EXPECT_EQ(cells_, (std::vector<std::string>{kNoPlink,
                                              "1,0,,,,,,,",
                                              "1,0,0,1,2,0,1,0,",
                                              "1,0,0,1,2,0,,,",
                                              "0,0,0,1,2,0,1,0,0",
                                              "2,0,0,1,2,0,1,0,0",
                                              "15,0,0,1,2,0,1,0,0",
                                              "1,4,0,1,2,0,1,0,0",
                                              "1,15,0,1,2,0,1,0,0",
                                              "1,2,0,1,2,0,1,0,100",
                                              "1,2,0,1,2,0,1,100,100",
                                              "1,2,0,1,2,0,1,4294967295,4294967295",
                                              "1,0,0,1,2,0,2,0,0",
                                              "1,0,0,1,2,0,3,5,0",
                                              "1,2,0,1,2,0,1,0,100",
                                              "1,2,0,1,2,0,1,100,100",
                                              "1,2,0,1,2,0,2,0,50",
                                              "1,3,0,2,1,0,1,100,100",
                                              "1,2,0,1,2,0,3,0,6",
                                              "1,0,0,1,2,0,,,"}));
  for (const char* count :
       {"\"snapped_headers\":1,", "\"plink_truncated_header\":4", "\"plink_bad_version\":3",
        "\"plink_bad_type\":2", "\"plink_chunk_overrun\":3"}) {
    EXPECT_TRUE(Has(json_, count)) << count << "\n" << json_;
  }
  EXPECT_TRUE(Has(text_,
                  "  plink: udp port 9200, 1 pair(s), 2 probe(s), 4 chunk packet(s), "
                  "1 chunk ack(s), 1 header(s) cut by the capture (not counted); malformed "
                  "plink_truncated_header 4 plink_bad_version 3 plink_bad_type 2 "
                  "plink_chunk_overrun 3\n"))
      << text_;
  // Only the whole ones are in the pair; a chunk's bytes are the datagram's, not the capture's.
  EXPECT_EQ(csv_, kCsvHeader + pcap_ + ",1,2,2,0,0,2,0,,,,1,0,0,4,156,3,1,0,0,1,4,0,0,0\n");
}

TEST_F(PlinkAnalyzerTest, MatchesRepliesAndTimesRoundTripsInCaptureTime) {
  constexpr TimeNs kUs = 1000;
  Analyze({
      // 1 probes 2 in epoch 0: round trips 10 us and 20.001 us (the replies' stamps are the
      // requester's clock and play no part), seq 3 unanswered, a reply to no request.
      Request(1, 2, 0, 1, 0, 5),
      Reply(1, 2, 0, 1, 10 * kUs, 999'999'999),
      Request(1, 2, 0, 2, 20 * kUs),
      Reply(1, 2, 0, 2, 40 * kUs + 1),
      Request(1, 2, 0, 3, 50 * kUs),
      Reply(1, 2, 0, 9, 60 * kUs),
      // 2 probes 1: 45 us in epoch 1, then the same reply again (unmatched); in epoch 2 a reply
      // carrying another epoch matches nothing.
      Request(2, 1, 1, 1, 100 * kUs),
      Reply(2, 1, 1, 1, 145 * kUs),
      Reply(2, 1, 1, 1, 150 * kUs),
      Request(2, 1, 2, 2, 200 * kUs),
      Reply(2, 1, 3, 2, 210 * kUs),
      // 3 probes 4: in capture time, not file order. A reply written before its request but
      // captured 30 us after it matches; one captured before its request does not.
      Reply(3, 4, 5, 1, 330 * kUs),
      Request(3, 4, 5, 1, 300 * kUs),
      Request(3, 4, 5, 2, 400 * kUs),
      Reply(3, 4, 5, 2, 390 * kUs),
  });
  EXPECT_TRUE(Has(text_,
                  "  plink: udp port 9200, 3 pair(s), 15 probe(s), 0 chunk packet(s), "
                  "0 chunk ack(s)\n"
                  "    all: probes: requests 7, replies 8, matched 4, unanswered 3, "
                  "unmatched replies 4, round trip min/mean/max 10.000/26.250/45.000 us, "
                  "epochs 0..5 (5); chunks: none\n"
                  "    1 -> 2: probes: requests 3, replies 3, matched 2, unanswered 1, "
                  "unmatched replies 1, round trip min/mean/max 10.000/15.000/20.001 us, "
                  "epochs 0..0 (1); chunks: none\n"
                  "    2 -> 1: probes: requests 2, replies 3, matched 1, unanswered 1, "
                  "unmatched replies 2, round trip min/mean/max 45.000/45.000/45.000 us, "
                  "epochs 1..3 (3); chunks: none\n"
                  "    3 -> 4: probes: requests 2, replies 2, matched 1, unanswered 1, "
                  "unmatched replies 1, round trip min/mean/max 30.000/30.000/30.000 us, "
                  "epochs 5..5 (1); chunks: none\n"))
      << text_;
  EXPECT_EQ(csv_, kCsvHeader + pcap_ +
                      ",1,2,3,3,2,1,1,10.000,15.000,20.001,1,0,0,0,0,0,0,,,0,0,0,0,0\n" + pcap_ +
                      ",2,1,2,3,1,1,2,45.000,45.000,45.000,3,1,3,0,0,0,0,,,0,0,0,0,0\n" + pcap_ +
                      ",3,4,2,2,1,1,1,30.000,30.000,30.000,1,5,5,0,0,0,0,,,0,0,0,0,0\n");
  EXPECT_TRUE(Has(json_,
                  "\"all\":{\"probes\":{\"requests\":7,\"replies\":8,\"matched\":4,"
                  "\"unanswered\":3,\"unmatched_replies\":4,\"rtt_min_ns\":10000,"
                  "\"rtt_mean_ns\":26250,\"rtt_max_ns\":45000,\"epochs\":5,\"epoch_min\":0,"
                  "\"epoch_max\":5},\"chunks\":{\"packets\":0,\"step_packets\":[0,0,0,0],"
                  "\"bytes\":0,\"chunk_ids\":0,\"acks\":0,\"epochs\":0}}"))
      << json_;
  EXPECT_TRUE(Has(json_,
                  "{\"sender\":1,\"receiver\":2,\"probes\":{\"requests\":3,\"replies\":3,"
                  "\"matched\":2,\"unanswered\":1,\"unmatched_replies\":1,\"rtt_min_ns\":10000,"
                  "\"rtt_mean_ns\":15000,\"rtt_max_ns\":20001,\"epochs\":1,\"epoch_min\":0,"
                  "\"epoch_max\":0}"))
      << json_;
}

TEST_F(PlinkAnalyzerTest, SummarizesChunksAndTheirAcksPerPair) {
  const Plink first = Chunk(1, 2, 1, 7, 0, 1400, 3000);
  const Plink to_gm = InStep(Chunk(1, 2, 1, 8, 0, 100, 100), PlinkStep::kToGlobalMaster);
  const Plink back = InStep(Chunk(2, 1, 4, 1, 0, 5, 5), PlinkStep::kTotalToLocal);
  Analyze({
      // 1 -> 2: chunk 7 of epoch 1 (3000 bytes) in three pieces and its first again (step 0);
      // chunk 8 (step 1); chunk 7 of epoch 2, empty (step 3).
      first,
      Chunk(1, 2, 1, 7, 1400, 1400, 3000),
      Chunk(1, 2, 1, 7, 2800, 200, 3000),
      first,
      to_gm,
      InStep(Chunk(1, 2, 2, 7, 0, 0, 10), PlinkStep::kTotalToMember),
      // 2 -> 1: a chunk (step 2), and a probe request 2 sends 1.
      back,
      Request(2, 1, 0, 1),
      // Acks, each counted with the chunks it acknowledges: 2 acks the first piece twice (once
      // per copy) and chunk 8; 1 acks 2's chunk; 4 acks a chunk of 3 the capture did not see.
      AckOf(first),
      AckOf(first),
      AckOf(to_gm),
      AckOf(back),
      AckOf(Chunk(3, 4, 0, 1, 0, 8, 8)),
  });
  EXPECT_TRUE(Has(text_,
                  "  plink: udp port 9200, 3 pair(s), 1 probe(s), 7 chunk packet(s), "
                  "5 chunk ack(s)\n"
                  "    all: probes: requests 1, replies 0, matched 0, unanswered 1, "
                  "unmatched replies 0, epochs 0..0 (1); chunks: packets 7 (steps 4/1/1/1), "
                  "bytes 4505, chunk ids 4, epochs 1..4 (3); chunk acks 5\n"
                  "    1 -> 2: probes: none; chunks: packets 6 (steps 4/1/0/1), bytes 4500, "
                  "chunk ids 3, epochs 1..2 (2); chunk acks 3\n"
                  "    2 -> 1: probes: requests 1, replies 0, matched 0, unanswered 1, "
                  "unmatched replies 0, epochs 0..0 (1); chunks: packets 1 (steps 0/0/1/0), "
                  "bytes 5, chunk ids 1, epochs 4..4 (1); chunk acks 1\n"
                  "    3 -> 4: probes: none; chunks: none; chunk acks 1\n"))
      << text_;
  EXPECT_EQ(csv_, kCsvHeader + pcap_ + ",1,2,0,0,0,0,0,,,,0,,,6,4500,3,2,1,2,3,4,1,0,1\n" + pcap_ +
                      ",2,1,1,0,0,1,0,,,,1,0,0,1,5,1,1,4,4,1,0,0,1,0\n" + pcap_ +
                      ",3,4,0,0,0,0,0,,,,0,,,0,0,0,0,,,1,0,0,0,0\n");
  EXPECT_TRUE(Has(json_,
                  "{\"sender\":1,\"receiver\":2,\"probes\":{\"requests\":0,\"replies\":0,"
                  "\"matched\":0,\"unanswered\":0,\"unmatched_replies\":0,\"epochs\":0},"
                  "\"chunks\":{\"packets\":6,\"step_packets\":[4,1,0,1],\"bytes\":4500,"
                  "\"chunk_ids\":3,\"acks\":3,\"epochs\":2,\"epoch_min\":1,\"epoch_max\":2}}"))
      << json_;
  EXPECT_TRUE(Has(json_,
                  "{\"sender\":3,\"receiver\":4,\"probes\":{\"requests\":0,\"replies\":0,"
                  "\"matched\":0,\"unanswered\":0,\"unmatched_replies\":0,\"epochs\":0},"
                  "\"chunks\":{\"packets\":0,\"step_packets\":[0,0,0,0],\"bytes\":0,"
                  "\"chunk_ids\":0,\"acks\":1,\"epochs\":0}}"))
      << json_;
}

TEST_F(PlinkAnalyzerTest, ListsTheFirstPairsInTheText) {
  std::vector<Plink> frames;
  for (uint16_t node = 1; node <= 25; ++node) frames.push_back(Request(node, 100, 0, 1));
  Analyze(frames);
  EXPECT_TRUE(Has(text_, "    20 -> 100: ")) << text_;
  EXPECT_FALSE(Has(text_, "    21 -> 100: ")) << text_;
  EXPECT_TRUE(Has(text_, "    ... 5 more pair(s) (--json, --csv plink.csv)\n")) << text_;
  EXPECT_TRUE(Has(json_, "{\"sender\":25,\"receiver\":100,")) << json_;
}

}  // namespace
}  // namespace swemu
