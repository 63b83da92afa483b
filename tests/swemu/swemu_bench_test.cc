// `swemu --bench` as users run it: the README's command on the bundled ATP config, a user's own
// config and pcaps, the JSON for scripts, and the mistakes (one line, exit 2, nothing printed).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

const std::string kSwemu = SWEMU_BINARY_DIR "/swemu/swemu";
const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";
const std::string kAtp =
    "--config " + kConfigs + "atp_rack.ini --bench --in 0=" + kConfigs + "pcap/atp_4workers.pcap";

using testing::RunCommandIn;
using testing::RunResult;

RunResult RunSwemu(const std::string& args) {
  const std::string dir = ::testing::TempDir() + "swemu_bench_test/";
  std::filesystem::create_directories(dir);
  return RunCommandIn(dir, kSwemu + " " + args);
}

double JsonNumber(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\": *(-?[0-9.eE+-]+)");
  if (!std::regex_search(json, m, re)) return -1;
  return std::stod(m[1]);
}

// Each stage row names a stage of the resource report and what it holds there.
TEST(SwemuBenchTest, TheReadmeCommandPrintsEveryElementNamedAsInTheResourceReport) {
  RunResult run = RunSwemu(kAtp + " --bench-repeat 2");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  const std::string& out = run.out;
  for (const char* row :
       {"parser", "ingress stage 0: table dmac", "register atp_id", "register atp_bitmap",
        "register atp_count", "ingress stages 4-11 and egress stages 0-7: register atp_value",
        "register atp_overflow", "ingress program logic", "tm enqueue", "tm dequeue", "deparser",
        "whole pipeline", "Mpps", "not attributed"}) {
    EXPECT_NE(out.find(row), std::string::npos) << row << "\n" << out;
  }
  RunResult report = RunSwemu("--config " + kConfigs + "atp_rack.ini --show-resources");
  ASSERT_EQ(report.status, 0) << report.err;
  for (const char* item : {"register atp_id", "register atp_value lanes 0-3", "table atp_job",
                           "register atp_overflow"}) {
    EXPECT_NE(report.out.find(item), std::string::npos) << item;
  }
  EXPECT_NE(out.find("596 frames from 1 input"), std::string::npos) << out;
  EXPECT_NE(out.find("2 rounds"), std::string::npos) << out;
}

// The elements and what is not attributed add up to the whole; every figure is positive.
TEST(SwemuBenchTest, JsonFiguresAddUpToTheWhole) {
  RunResult run = RunSwemu(kAtp + " --bench-repeat 2 --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string& json = run.out;
  ASSERT_EQ(json.front(), '{') << json;
  const double whole = JsonNumber(json, "whole_ns_per_packet");
  const double sum = JsonNumber(json, "sum_ns_per_packet");
  const double unattributed = JsonNumber(json, "unattributed_share");
  EXPECT_GT(whole, 0);
  EXPECT_GT(sum, 0);
  EXPECT_NEAR(sum + unattributed * whole, whole, 1e-6 * whole);
  EXPECT_NEAR(JsonNumber(json, "whole_mpps"), 1000.0 / whole, 1e-6 * whole);
  EXPECT_EQ(JsonNumber(json, "frames"), 596);
  EXPECT_EQ(JsonNumber(json, "rounds"), 2);
  // Every packet was parsed once: the aggregator stages ran for every gradient.
  std::smatch m;
  const std::regex value(
      "\"name\": \"ingress stages 4-11 and egress stages 0-7: register "
      "atp_value\",\\s*\"stage\": true,\\s*\"ns_per_packet\": ([0-9.e+-]+)");
  ASSERT_TRUE(std::regex_search(json, m, value)) << json;
  EXPECT_GT(std::stod(m[1]), 0);
}

// A user's own config with several inputs, which arrive on their own ports.
TEST(SwemuBenchTest, AnyConfigAndSeveralInputsWork) {
  RunResult run =
      RunSwemu("--config " + kConfigs + "leaf.ini --bench --bench-repeat 1 --in 0=" + kConfigs +
               "pcap/h0_to_all.pcap --in 1=" + kConfigs + "pcap/h1_to_all.pcap");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("(program l2l3), 150 frames from 2 inputs"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("ingress stage 1: table ipv4_lpm"), std::string::npos) << run.out;
}

TEST(SwemuBenchTest, MistakesGiveOneLineAndStatus2) {
  const std::string dir = ::testing::TempDir() + "swemu_bench_test_inputs/";
  std::filesystem::create_directories(dir + "a_directory");
  {
    std::ofstream empty(dir + "empty.pcap", std::ios::binary);  // a pcap header, no records
    const unsigned char header[24] = {0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0,
                                      0,    0,    0,    0,    0, 0, 4, 0, 1, 0, 0, 0};
    empty.write(reinterpret_cast<const char*>(header), sizeof(header));
  }
  const std::string config = "--config " + kConfigs + "atp_rack.ini ";
  const std::string pcap = kConfigs + "pcap/atp_4workers.pcap";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {config + "--bench", "--bench: needs at least one --in"},
      {"--topology " + kConfigs + "leaf_spine.topo --bench --in leaf1:0=" + pcap,
       "--bench: measures one switch"},
      {config + "--bench --in 0=" + pcap + " --out-dir /tmp/x", "--out-dir: not with --bench"},
      {config + "--bench --in 0=" + pcap + " --bench-seconds 0", "--bench-seconds:"},
      {config + "--bench --in 0=" + pcap + " --bench-seconds -1", "--bench-seconds:"},
      {config + "--bench --in 0=" + pcap + " --bench-repeat 0", "--bench-repeat:"},
      {config + "--bench --in 0=" + pcap + " --bench-repeat many", "--bench-repeat:"},
      {config + "--in 0=" + pcap + " --json", "--json: only with --bench"},
      {config + "--in 0=" + pcap + " --bench-repeat 2", "--bench-repeat: only with --bench"},
      {config + "--bench --in 9=" + pcap, "port 9 out of range"},
      {config + "--bench --in 0=/dev/zero", "--in 0=/dev/zero"},
      {config + "--bench --in 0=" + dir + "a_directory", "a_directory"},
      {config + "--bench --in 0=" + dir + "missing.pcap", "missing.pcap"},
      {config + "--bench --in 0=" + dir + "empty.pcap", "no frames"},
  };
  for (const auto& [args, expected] : cases) {
    RunResult run = RunSwemu(args);
    EXPECT_EQ(run.status, 2) << args << "\n" << run.out << run.err;
    EXPECT_EQ(run.out, "") << args;
    EXPECT_NE(run.err.find(expected), std::string::npos) << args << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << "\n" << run.err;
  }
}

// An endless pcap stream: swemu reads its share of the frame cap (1,000,000 over one input),
// stops reading, measures, says the input held more, and ends (the writer then gets SIGPIPE).
TEST(SwemuBenchTest, AnEndlessInputIsCutAtTheCapAndTheRunEnds) {
  const std::string writer =
      "/usr/bin/python3 -c 'import struct,sys\n"
      "o=sys.stdout.buffer\n"
      "o.write(struct.pack(\"<IHHiIII\",0xa1b2c3d4,2,4,0,0,65535,1))\n"
      "r=struct.pack(\"<IIII\",0,0,60,60)+bytes(60)\n"
      "b=r*1000\n"
      "try:\n"
      "  while True: o.write(b)\n"
      "except (BrokenPipeError, OSError): pass\n'";
  const std::string dir = ::testing::TempDir() + "swemu_bench_test/";
  std::filesystem::create_directories(dir);
  const std::string fifo = dir + "endless.pcap";
  std::filesystem::remove(fifo);
  RunResult run = RunCommandIn(dir, "mkfifo " + fifo + " && (" + writer + " >" + fifo + " &) && " +
                                        kSwemu + " --config " + kConfigs +
                                        "leaf.ini --bench --bench-repeat 1 --in 0=" + fifo);
  std::filesystem::remove(fifo);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("1000000 frames from 1 input (the first 1000000 of each; 1 held more, "
                         "not read)"),
            std::string::npos)
      << run.out;
}

}  // namespace
}  // namespace swemu
