// Runs the built swemu-gen --workload atp as users do and reads back what it wrote: every
// worker's gradient packets (seqs, bitmaps, fan-ins, padding), the window/RTT rule, one frame at
// a time per link, background TCP flows, determinism, the per-worker split, bad options, and
// the traffic aggregated end to end by swemu --offline with configs/atp_rack.ini.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/atp.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/tcp.h"
#include "tests/swemu/pcap_frames.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kGen = SWEMU_BINARY_DIR "/tools/swemu-gen";
const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";

std::string Dir() {
  const std::string dir = TestDirFor("swemu-gen-atp-");
  std::filesystem::create_directories(dir);
  return dir;
}

// Dir(), emptied: each test starts without what an earlier run left.
std::string FreshDir() {
  std::filesystem::remove_all(TestDirFor("swemu-gen-atp-"));
  return Dir();
}

RunResult RunGen(const std::string& args) { return RunCommandIn(Dir(), kGen + " " + args); }

std::vector<PcapRecord> Read(const std::string& path) {
  Result<std::vector<PcapRecord>> records = ReadPcapFile(path);
  EXPECT_TRUE(records.ok()) << path << ": " << records.message();
  return records.ok() ? std::move(*records) : std::vector<PcapRecord>{};
}

bool IsTcp(const std::vector<uint8_t>& f) { return f.size() >= 54 && f[23] == kIpProtoTcp; }
uint32_t SrcIp(const std::vector<uint8_t>& f) { return LoadBe32(&f[26]); }
uint32_t WorkerOf(const std::vector<uint8_t>& f) { return (SrcIp(f) & 0xFF) - 1; }  // 10.0.0.w+1

// ResNet-50's first n layer sizes, from the file bundled into hostlib.
std::vector<uint64_t> ResNetLayers(std::size_t n) {
  std::ifstream in(kConfigs + "models/model_layers.txt");
  std::vector<uint64_t> sizes;
  bool resnet = false;
  for (std::string line; sizes.size() < n && std::getline(in, line);) {
    if (line.rfind("== ", 0) == 0) {
      resnet = line.rfind("== ResNet50", 0) == 0;
      continue;
    }
    const std::size_t at = line.find("params=");
    if (!resnet || at == std::string::npos) continue;
    std::string digits;
    for (char c : line.substr(at + 7)) {
      if (std::isdigit(static_cast<unsigned char>(c))) {
        digits += c;
      } else if (c != ',' && !digits.empty()) {
        break;
      }
    }
    sizes.push_back(std::stoull(digits));
  }
  EXPECT_EQ(sizes.size(), n);
  return sizes;
}

// Packets of one iteration: one AllReduce per layer, the last packet of each zero-padded.
uint64_t PacketsPerIteration(const std::vector<uint64_t>& layers, uint64_t elements) {
  uint64_t packets = 0;
  for (uint64_t params : layers) packets += (params + elements - 1) / elements;
  return packets;
}

// Exact serialization: a frame of len bytes holds a link of rate_bps for (len + 24) * 8 bits;
// timestamps are the exact start times rounded down, so a gap may be up to 1 ns shorter.
void ExpectNoOverlap(const std::vector<PcapRecord>& link, uint64_t rate_bps) {
  for (std::size_t i = 1; i < link.size(); ++i) {
    const uint64_t bits = (link[i - 1].bytes.size() + 24) * 8;
    const uint64_t gap = link[i].ts_ns - link[i - 1].ts_ns;
    ASSERT_GE(link[i].ts_ns, link[i - 1].ts_ns);
    EXPECT_GT((gap + 1) * rate_bps, bits * 1'000'000'000ull) << "frame " << i;
  }
}

std::map<uint32_t, std::vector<PcapRecord>> ByWorker(const std::vector<PcapRecord>& records) {
  std::map<uint32_t, std::vector<PcapRecord>> links;
  for (const PcapRecord& r : records) links[WorkerOf(r.bytes)].push_back(r);
  return links;
}

std::string FileText(const std::string& path) { return ReadText(path); }

TEST(SwemuGenAtpTest, EveryWorkerSendsEverySeqAsHostlibNumbersThem) {
  const std::string out = FreshDir() + "atp.pcap";
  RunResult run =
      RunGen("--workload atp --layers 2 --iterations 2 --elements 60 --start 2us -o " + out);
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<uint64_t> layers = ResNetLayers(2);
  const uint64_t per_iteration = PacketsPerIteration(layers, 60);
  const uint64_t per_worker = 2 * per_iteration;  // seqs go on from iteration 1 to iteration 2
  const std::vector<PcapRecord> records = Read(out);
  ASSERT_EQ(records.size(), 4 * per_worker);
  EXPECT_EQ(records.front().ts_ns, 2000u);
  for (std::size_t i = 1; i < records.size(); ++i) {  // merged in time order, ties by worker
    ASSERT_LE(records[i - 1].ts_ns, records[i].ts_ns);
    if (records[i - 1].ts_ns == records[i].ts_ns) {
      EXPECT_LT(WorkerOf(records[i - 1].bytes), WorkerOf(records[i].bytes));
    }
  }
  const auto links = ByWorker(records);
  ASSERT_EQ(links.size(), 4u);
  const uint64_t last_of_layer0 = (layers[0] + 59) / 60 - 1;
  for (const auto& [w, link] : links) {
    ASSERT_LT(w, 4u);
    ASSERT_EQ(link.size(), per_worker);
    for (uint32_t k = 0; k < link.size(); ++k) {
      const std::vector<uint8_t>& f = link[k].bytes;
      ASSERT_EQ(f.size(), AtpFrameLen(60));
      EXPECT_EQ(MacAddr::FromU64(0x020000000010ULL),
                (MacAddr{{f[0], f[1], f[2], f[3], f[4], f[5]}}));
      EXPECT_EQ(MacAddr::FromU64(0x020000000000ULL | w),
                (MacAddr{{f[6], f[7], f[8], f[9], f[10], f[11]}}));
      EXPECT_EQ(f[15], 0b10);  // ECT(0), AtpWorkerOptions' tos
      EXPECT_EQ(SrcIp(f), MakeIpv4Addr(10, 0, 0, static_cast<uint8_t>(w + 1)));
      EXPECT_EQ(LoadBe32(&f[30]), MakeIpv4Addr(10, 0, 0, 16));
      EXPECT_EQ(LoadBe16(&f[34]), 9000);
      std::optional<AtpFields> atp = AtpOf(f);
      ASSERT_TRUE(atp.has_value());
      EXPECT_EQ(*atp, (AtpFields{0, static_cast<uint8_t>(w), 4, 0, 1, 60, k, 1u << w}))
          << "worker " << w << " packet " << k;
    }
    // Each call's last packet is zero-padded: layer 0's and layer 1's, in both iterations.
    for (uint64_t base : {uint64_t{0}, per_iteration}) {
      const uint64_t used0 = layers[0] - last_of_layer0 * 60;
      const uint64_t used1 = layers[1] - (per_iteration - 1 - last_of_layer0 - 1) * 60;
      for (uint64_t i = used0; i < 60; ++i) {
        EXPECT_EQ(AtpElement(link[base + last_of_layer0].bytes, i), 0);
      }
      for (uint64_t i = used1; i < 60; ++i) {
        EXPECT_EQ(AtpElement(link[base + per_iteration - 1].bytes, i), 0);
      }
      EXPECT_NE(AtpElement(link[base + last_of_layer0].bytes, used0 - 1), 0);
    }
    // Iteration 2 has gradients of its own.
    EXPECT_NE(AtpElement(link[0].bytes, 0), AtpElement(link[per_iteration].bytes, 0));
  }
  // Workers have gradients of their own.
  EXPECT_NE(AtpElement(links.at(0)[0].bytes, 0), AtpElement(links.at(1)[0].bytes, 0));
}

TEST(SwemuGenAtpTest, WindowRttAndOneFrameAtATimePerLink) {
  const std::string out = FreshDir() + "window.pcap";
  // 10G: a 314-byte frame takes 270.4 ns, so 8 of them leave well within the 5 us RTT and the
  // window, not the link, paces the worker. Background flows share the link.
  RunResult run = RunGen(
      "--workload atp --layers 3 --rate 10G --window 8 --rtt 5us --start 0 --background-flows 2 "
      "--background-rate 2G --background-bytes 20000 -o " +
      out);
  ASSERT_EQ(run.status, 0) << run.err;
  for (const auto& [w, link] : ByWorker(Read(out))) {
    ExpectNoOverlap(link, 10'000'000'000ull);
    std::vector<TimeNs> grads;
    for (const PcapRecord& r : link) {
      if (AtpOf(r.bytes)) grads.push_back(r.ts_ns);
    }
    ASSERT_EQ(grads.size(), PacketsPerIteration(ResNetLayers(3), 64));
    for (std::size_t k = 8; k < grads.size(); ++k) {
      ASSERT_GE(grads[k], grads[k - 8] + 5000) << "worker " << w << " packet " << k;
    }
    EXPECT_EQ(grads[8], grads[0] + 5000);  // the window binds: no later than it allows
  }
}

TEST(SwemuGenAtpTest, SameSeedSameFilesAndTheSplitHoldsTheMergedFrames) {
  const std::string dir = FreshDir();
  const std::string common =
      "--workload atp --layers 2 --workers 3 --background-flows 1 --background-bytes 3000 ";
  const std::string args = common + "--seed 7 ";
  ASSERT_EQ(RunGen(args + "-o " + dir + "a.pcap").status, 0);
  ASSERT_EQ(RunGen(args + "-o " + dir + "b.pcap").status, 0);
  EXPECT_EQ(FileText(dir + "a.pcap"), FileText(dir + "b.pcap"));
  std::ofstream(dir + "w1") << "a file where worker 1's directory would go";
  RunResult split = RunGen(args + "-o " + dir + "w{w}/split_{w}.pcap");
  EXPECT_NE(split.status, 0);  // w1 cannot be a directory
  EXPECT_EQ(std::count(split.err.begin(), split.err.end(), '\n'), 1) << split.err;
  std::filesystem::remove(dir + "w1");
  // Missing directories are made.
  ASSERT_EQ(RunGen(args + "-o " + dir + "w{w}/split_{w}.pcap").status, 0);
  const auto merged = ByWorker(Read(dir + "a.pcap"));
  ASSERT_EQ(merged.size(), 3u);
  for (const auto& [w, link] : merged) {
    const std::vector<PcapRecord> own =
        Read(dir + "w" + std::to_string(w) + "/split_" + std::to_string(w) + ".pcap");
    ASSERT_EQ(own.size(), link.size());
    for (std::size_t i = 0; i < own.size(); ++i) {
      EXPECT_EQ(own[i].ts_ns, link[i].ts_ns);
      EXPECT_EQ(own[i].bytes, link[i].bytes);
    }
  }
  ASSERT_EQ(RunGen(common + "--seed 8 -o " + dir + "c.pcap").status, 0);
  const std::vector<PcapRecord> a = Read(dir + "a.pcap"), c = Read(dir + "c.pcap");
  ASSERT_EQ(a.size(), c.size());
  EXPECT_EQ(AtpOf(a[0].bytes), AtpOf(c[0].bytes));  // same headers
  EXPECT_NE(a[0].bytes, c[0].bytes);                // other gradients
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
}

TEST(SwemuGenAtpTest, BackgroundFlowsOpenSendTheirBytesAndClose) {
  const std::string out = FreshDir() + "bg.pcap";
  const uint64_t bytes = 10000;  // 6 full segments and one of 1312 bytes
  RunResult run = RunGen(
      "--workload atp --layers 1 --workers 2 --background-flows 3 "
      "--background-rate 500M --background-bytes 10000 --rtt 20us -o " +
      out);
  ASSERT_EQ(run.status, 0) << run.err;
  std::map<std::pair<uint32_t, uint16_t>, std::vector<PcapRecord>> flows;  // (worker, port)
  for (const PcapRecord& r : Read(out)) {
    if (IsTcp(r.bytes)) flows[{WorkerOf(r.bytes), LoadBe16(&r.bytes[34])}].push_back(r);
  }
  ASSERT_EQ(flows.size(), 6u);
  for (const auto& [key, frames] : flows) {
    const auto [w, port] = key;
    EXPECT_GE(port, 40000);
    EXPECT_LT(port, 40003);
    ASSERT_EQ(frames.size(), 2 + (bytes + 1447) / 1448);
    uint64_t payload = 0;
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const std::vector<uint8_t>& f = frames[i].bytes;
      const auto* ip = HeaderAt<Ipv4Header>(f.data() + 14);
      const auto* tcp = HeaderAt<TcpHeader>(f.data() + 34);
      EXPECT_EQ(ip->Ecn(), 0);  // Not-ECT
      EXPECT_EQ(ip->DstAddr(), MakeIpv4Addr(10, 0, 0, 16));
      EXPECT_EQ(tcp->DstPort(), 5001);
      const uint64_t len = ip->TotalLength() - 20 - tcp->HeaderLen();
      if (i == 0) {
        EXPECT_EQ(tcp->flags, kTcpSyn);
        EXPECT_EQ(tcp->SeqNum(), 0u);
        EXPECT_EQ(len, 0u);
      } else if (i + 1 == frames.size()) {
        EXPECT_EQ(tcp->flags, kTcpFin | kTcpAck);
        EXPECT_EQ(tcp->SeqNum(), 1 + bytes);
        EXPECT_EQ(len, 0u);
      } else {
        EXPECT_EQ(tcp->flags, kTcpAck);
        EXPECT_EQ(tcp->SeqNum(), 1 + payload);
        EXPECT_EQ(f.size(), i + 2 < frames.size() ? 1514u : 14 + 20 + 32 + (bytes % 1448));
        payload += len;
      }
    }
    EXPECT_EQ(payload, bytes);
    EXPECT_GE(frames[1].ts_ns, frames[0].ts_ns + 20000);  // data after the handshake's RTT
    // Paced at 500M: each frame one gap (its bytes + 24 at 500M) after the flow's previous one
    // (1514-byte frames: 24608 ns; the gaps carry a remainder, so one may be 1 ns shorter).
    EXPECT_GE(frames[2].ts_ns - frames[1].ts_ns, 24608u);
    for (std::size_t i = 2; i < frames.size(); ++i) {
      const uint64_t gap_ns = (frames[i - 1].bytes.size() + 24) * 8 * 2;
      EXPECT_GE(frames[i].ts_ns - frames[i - 1].ts_ns + 1, gap_ns) << "frame " << i;
    }
  }
  // ECT(0) on request.
  ASSERT_EQ(
      RunGen("--workload atp --layers 1 --background-flows 1 --background-ecn -o " + out).status,
      0);
  for (const PcapRecord& r : Read(out)) {
    if (IsTcp(r.bytes)) {
      EXPECT_EQ(HeaderAt<Ipv4Header>(r.bytes.data() + 14)->Ecn(), 0b10);
    }
  }
}

// configs/atp_rack.ini aggregates job 1 of workers 0-3 in the switch: each seq completes when
// the fourth worker's packet arrives, and that packet leaves for the PS (port 4) carrying the
// sum, the full bitmap and the edge flag flipped (docs/wire.md, rule 5); the other three are
// consumed. Nothing goes back to the workers (no PS answers offline). Background TCP is
// forwarded to the PS by its MAC.
TEST(SwemuGenAtpTest, SwemuAggregatesTheGeneratedJobOffline) {
  const std::string dir = FreshDir();
  RunResult gen = RunGen(
      "--workload atp --layers 2 --iterations 2 --rate 10G --window 16 "
      "--background-flows 1 --background-bytes 5000 -o " +
      dir + "atp_w{w}.pcap");
  ASSERT_EQ(gen.status, 0) << gen.err;
  std::string inputs;
  for (int w = 0; w < 4; ++w) {
    inputs += " --in " + std::to_string(w) + "=" + dir + "atp_w" + std::to_string(w) + ".pcap";
  }
  RunResult run = RunCommandIn(dir, kSwemuBinary + " --offline --quiet --config " + kConfigs +
                                        "atp_rack.ini" + inputs + " --out-dir " + dir + "out");
  ASSERT_EQ(run.status, 0) << run.err;

  // Expected sums, from the inputs.
  std::map<uint32_t, std::vector<int64_t>> sums;
  for (int w = 0; w < 4; ++w) {
    for (const PcapRecord& r : Read(dir + "atp_w" + std::to_string(w) + ".pcap")) {
      std::optional<AtpFields> atp = AtpOf(r.bytes);
      if (!atp) continue;
      std::vector<int64_t>& sum = sums[atp->seq];
      sum.resize(64);
      for (std::size_t i = 0; i < 64; ++i) sum[i] += AtpElement(r.bytes, i);
    }
  }
  const uint64_t seqs = 2 * PacketsPerIteration(ResNetLayers(2), 64);
  ASSERT_EQ(sums.size(), seqs);

  std::map<uint32_t, int> seen;
  uint64_t tcp = 0;
  for (const PcapRecord& r : Read(dir + "out/port4.pcap")) {
    if (IsTcp(r.bytes)) {
      ++tcp;
      continue;
    }
    std::optional<AtpFields> atp = AtpOf(r.bytes);
    ASSERT_TRUE(atp.has_value());
    EXPECT_EQ(atp->flags, kAtpFlagEdge) << "seq " << atp->seq;
    EXPECT_EQ(atp->bitmap, 0xFu) << "seq " << atp->seq;
    EXPECT_EQ(atp->job_id, 1);
    EXPECT_EQ(atp->num_elements, 64);
    EXPECT_EQ(atp->fan_in0, 4);
    EXPECT_EQ(atp->fan_in1, 0);
    ++seen[atp->seq];
    ASSERT_TRUE(sums.count(atp->seq)) << atp->seq;
    for (std::size_t i = 0; i < 64; ++i) {
      ASSERT_EQ(AtpElement(r.bytes, i), sums[atp->seq][i])
          << "seq " << atp->seq << " element " << i;
    }
  }
  EXPECT_EQ(seen.size(), seqs);  // every seq, once
  for (const auto& [seq, count] : seen) EXPECT_EQ(count, 1) << "seq " << seq;
  EXPECT_EQ(tcp, 4 * (2 + (5000 + 1447) / 1448));
  for (int port = 0; port < 4; ++port) {
    EXPECT_TRUE(Read(dir + "out/port" + std::to_string(port) + ".pcap").empty()) << port;
  }
}

TEST(SwemuGenAtpTest, BadOptionsGiveOneLineAndStatus2) {
  const std::string dir = FreshDir();
  const std::string out = " -o " + dir + "never_{w}.pcap";
  for (const std::string& args : std::vector<std::string>{
           "--workload atp",  // no --out
           "--workload sctp" + out,
           "--workload atp --workers 0" + out,
           "--workload atp --workers 33" + out,
           "--workload atp --workers 16" + out,  // worker 15 would have the PS's IP
           "--workload atp --workers 17" + out,  // and worker 16 its MAC
           "--workload atp --workers 5 --ps-ip 10.0.0.4" + out,
           "--workload atp --ps-mac 02:00:00:00:00:01" + out,
           "--workload atp --model lenet" + out,
           "--workload atp --layers 0" + out,
           "--workload atp --layers 55" + out,
           "--workload atp --iterations 0" + out,
           "--workload atp --elements 0" + out,
           "--workload atp --elements 400" + out,
           "--workload atp --job 0" + out,
           "--workload atp --window 0" + out,
           "--workload atp --rtt soon" + out,
           "--workload atp --rate 0" + out,
           "--workload atp --ps-ip 10.0.0" + out,
           "--workload atp --background-flows 30000" + out,
           "--workload atp --background-rate 0" + out,
           "--workload atp --background-bytes 0" + out,
           "--workload atp --count 5" + out,    // a flows option
           "--workload atp --proto tcp" + out,  // a flows option
           "--workers 2" + out,                 // an atp option without --workload atp
           "--background-flows 1" + out,
           "--workload atp stray" + out,
       }) {
    RunResult run = RunGen(args);
    EXPECT_EQ(run.status, 2) << args;
    EXPECT_EQ(run.err.rfind("swemu-gen: ", 0), 0u) << args << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    EXPECT_TRUE(run.out.empty()) << args;
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find("never"), std::string::npos) << entry.path();
  }
}

// A run that fails part-way (worker 2's directory cannot be made; a time past what pcap holds)
// renames nothing: the earlier outputs stay as they were, and no temporary file is left.
TEST(SwemuGenAtpTest, AFailedRunLeavesEveryEarlierOutputAsItWas) {
  const std::string dir = FreshDir();
  for (int w = 0; w < 3; ++w) std::filesystem::create_directories(dir + "d" + std::to_string(w));
  const std::string out = " -o " + dir + "d{w}/x.pcap";
  ASSERT_EQ(RunGen("--workload atp --layers 1 --workers 3" + out).status, 0);
  const std::string before = FileText(dir + "d0/x.pcap");
  std::filesystem::remove_all(dir + "d2");
  std::ofstream(dir + "d2") << "a file where worker 2's directory would go";
  RunResult missing = RunGen("--workload atp --layers 1 --workers 3 --seed 9" + out);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("d2/x.pcap"), std::string::npos) << missing.err;
  EXPECT_EQ(FileText(dir + "d0/x.pcap"), before);
  std::filesystem::remove(dir + "d2");
  std::filesystem::create_directories(dir + "d2");
  RunResult late =
      RunGen("--workload atp --layers 1 --workers 3 --seed 9 --start 4294967295999900000ns" + out);
  EXPECT_EQ(late.status, 2);
  EXPECT_NE(late.err.find("past the last time a pcap file can hold"), std::string::npos)
      << late.err;
  EXPECT_EQ(std::count(late.err.begin(), late.err.end(), '\n'), 1) << late.err;
  EXPECT_EQ(FileText(dir + "d0/x.pcap"), before);
  EXPECT_FALSE(std::filesystem::exists(dir + "d2/x.pcap"));
  RunResult merged_late =
      RunGen("--workload atp --layers 1 --start 4294967295999900000ns -o " + dir + "merged.pcap");
  EXPECT_EQ(merged_late.status, 2);
  EXPECT_FALSE(std::filesystem::exists(dir + "merged.pcap"));
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace swemu::testing
