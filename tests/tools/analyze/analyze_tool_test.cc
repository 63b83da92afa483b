// swemu-analyze and swemu --telemetry as users run them: gen -> analyze reports what was
// generated, a congested offline run's telemetry shows the queue, bad input ends with one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kTools = SWEMU_BINARY_DIR "/tools/";
const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";

std::string Fresh() {
  const std::string dir = TestDirFor("analyze_");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::size_t CountLines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Two 8 Gbit/s senders into one 10G port of configs/leaf.ini: the queue fills and drops.
RunResult CongestedRun(const std::string& dir, const std::string& extra) {
  const std::string gen = kTools + "swemu-gen -n 4000 --size 1500 --rate 8G --tos 2 "
                                   "--dst-ip 10.0.2.1 --dst-mac 00:00:00:00:01:fe ";
  EXPECT_EQ(RunCommandIn(dir, gen + "-o " + dir + "h0.pcap --src-ip 10.0.1.1 "
                                    "--src-mac 00:00:00:00:01:01").status, 0);
  EXPECT_EQ(RunCommandIn(dir, gen + "-o " + dir + "h1.pcap --src-ip 10.0.1.2 "
                                    "--src-mac 00:00:00:00:01:02 --start 1.001s").status, 0);
  return RunSwemuIn(dir, "--offline --config " + kConfigs + "leaf.ini --in 0=" + dir +
                             "h0.pcap --in 1=" + dir + "h1.pcap --out-dir " + dir + "run " + extra);
}

TEST(AnalyzeTool, ReportsExactlyWhatTheGeneratorWrote) {
  const std::string dir = Fresh();
  ASSERT_EQ(RunCommandIn(dir, kTools + "swemu-gen -o " + dir + "a.pcap -n 999 --flows 3 "
                                       "--size 200 --tos 3").status, 0);
  RunResult run = RunCommandIn(dir, kTools + "swemu-analyze " + dir + "a.pcap --json - --packets " +
                                        dir + "rows.csv --csv " + dir + "csv");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("\"frames\": 999"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"bytes\": 199800"), std::string::npos);
  // Three flows of 333 packets, every one CE (TOS 3).
  std::size_t flows = 0;
  for (std::size_t at = 0; (at = run.out.find("\"packets\": 333,", at)) != std::string::npos; ++at) {
    ++flows;
  }
  EXPECT_EQ(flows, 3u);
  EXPECT_NE(run.out.find("\"ce_share\": 1"), std::string::npos);
  const std::string rows = ReadText(dir + "rows.csv");
  EXPECT_EQ(CountLines(rows), 1000u);  // the header and one row per frame
  EXPECT_NE(rows.find("\n1,1000000000,200,200,00:00:00:00:00:01,00:00:00:00:00:02,,10.0.0.1,"
                      "10.0.0.2,0,3,17,10000,5000,"),
            std::string::npos);
  const std::string throughput = ReadText(dir + "csv/throughput.csv");
  EXPECT_EQ(throughput.rfind("run,port,time_s,frames,bytes,throughput_Mbps,ce_frames\n", 0), 0u);
  // The bins hold every frame.
  std::istringstream lines(throughput);
  std::string line;
  std::getline(lines, line);
  uint64_t frames = 0, ce = 0;
  while (std::getline(lines, line)) {
    std::istringstream cells(line);
    std::string cell;
    for (int i = 0; i < 4; ++i) std::getline(cells, cell, ',');
    frames += std::stoull(cell);
    for (int i = 0; i < 3; ++i) std::getline(cells, cell, ',');
    ce += std::stoull(cell);
  }
  EXPECT_EQ(frames, 999u);
  EXPECT_EQ(ce, 999u);  // TOS 3: every frame CE
  // The flows' series hold every frame too.
  std::istringstream flow_lines(ReadText(dir + "csv/flow_throughput.csv"));
  std::getline(flow_lines, line);
  uint64_t flow_frames = 0;
  while (std::getline(flow_lines, line)) {
    const std::size_t quote = line.rfind('"');
    std::istringstream cells(line.substr(quote + 2));
    std::string cell;
    for (int i = 0; i < 2; ++i) std::getline(cells, cell, ',');
    flow_frames += std::stoull(cell);
  }
  EXPECT_EQ(flow_frames, 999u);
}

TEST(AnalyzeTool, TelemetryRecordsTheQueueExactlyInVirtualTime) {
  const std::string dir = Fresh();
  RunResult run = CongestedRun(dir, "--telemetry " + dir + "run/telemetry.csv "
                                    "--telemetry-period 50us");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string telemetry = ReadText(dir + "run/telemetry.csv");
  ASSERT_EQ(telemetry.rfind("time_ns,switch,port,queue,depth_packets,depth_bytes,marked_total,"
                            "dropped_total\n", 0), 0u);
  std::istringstream lines(telemetry);
  std::string line;
  std::getline(lines, line);
  uint64_t max_depth = 0, last_dropped = 0, rows = 0;
  while (std::getline(lines, line)) {
    uint64_t ts = 0, port = 0, queue = 0, depth = 0, bytes = 0, marked = 0, dropped = 0;
    char sw[16] = {};
    ASSERT_EQ(std::sscanf(line.c_str(), "%lu,%15[^,],%lu,%lu,%lu,%lu,%lu,%lu", &ts, sw, &port,
                          &queue, &depth, &bytes, &marked, &dropped), 8) << line;
    EXPECT_EQ(ts % 50'000, 0u) << "samples at exact multiples of the period: " << line;
    EXPECT_STREQ(sw, "leaf");
    EXPECT_EQ(port, 2u);  // only the congested port's queue was ever used
    EXPECT_EQ(bytes, depth * 1500);
    EXPECT_LE(depth, 512u);  // configs/leaf.ini queue_depth
    max_depth = std::max(max_depth, depth);
    EXPECT_GE(dropped, last_dropped);
    last_dropped = dropped;
    ++rows;
  }
  EXPECT_GT(rows, 20u);
  EXPECT_EQ(max_depth, 512u);
  // The last sample, after the run, holds every drop the summary counted.
  const std::size_t at = run.out.find("tm_queue_full ");
  ASSERT_NE(at, std::string::npos) << run.out;
  EXPECT_EQ(last_dropped, std::stoull(run.out.substr(at + 14)));

  RunResult analyzed = RunCommandIn(dir, kTools + "swemu-analyze " + dir + "run --csv " + dir + "csv");
  ASSERT_EQ(analyzed.status, 0) << analyzed.err;
  const std::string queue = ReadText(dir + "csv/queue.csv");
  EXPECT_NE(queue.find("\n" + dir + "run,leaf,2,0,"), std::string::npos) << queue.substr(0, 300);
  EXPECT_NE(queue.find(",512,768000,"), std::string::npos);
}

TEST(AnalyzeTool, PlotsSeveralRunsSideBySide) {
  const std::string dir = Fresh();
  ASSERT_EQ(CongestedRun(dir, "--telemetry " + dir + "run/telemetry.csv").status, 0);
  RunResult run = RunCommandIn(dir, kTools + "swemu-analyze " + dir + "run " + dir +
                                        "h0.pcap --plot " + dir + "p.png");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string png = ReadText(dir + "p.png");
  ASSERT_GT(png.size(), 10'000u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

// README's "Look at a run": its three commands, as printed there, in a test directory.
TEST(AnalyzeTool, TheReadmeLookAtARunCommandsWork) {
  const std::string dir = Fresh();
  const std::string readme = ReadText(SWEMU_SOURCE_DIR "/README.md");
  const std::size_t section = readme.find("### Look at a run");
  ASSERT_NE(section, std::string::npos);
  const std::size_t start = readme.find("```\n", section) + 4;
  const std::size_t end = readme.find("```", start);
  std::istringstream lines(readme.substr(start, end - start));
  std::string line;
  int commands = 0;
  while (std::getline(lines, line)) {
    auto replace_all = [&](const std::string& from, const std::string& to) {
      for (std::size_t at = 0; (at = line.find(from, at)) != std::string::npos; at += to.size()) {
        line.replace(at, from.size(), to);
      }
    };
    replace_all("build/", SWEMU_BINARY_DIR "/");
    replace_all("configs/", kConfigs);
    replace_all("out/", dir + "out/");
    RunResult run = RunCommandIn(dir, line);
    ASSERT_EQ(run.status, 0) << line << "\n" << run.err;
    ++commands;
  }
  EXPECT_EQ(commands, 3);
  EXPECT_GT(ReadText(dir + "out/look/run.png").size(), 10'000u);
  const std::string jobs = ReadText(dir + "out/look/csv/atp_jobs.csv");
  EXPECT_NE(jobs.find(",1,15,"), std::string::npos) << jobs;  // job 1, workers 0xf
  EXPECT_NE(ReadText(dir + "out/look/csv/queue.csv").find("atp_rack,4,0,"), std::string::npos);
}

// gen -> swemu --offline -> analyze: the generated job's gradients, four per seq into the
// switch, one complete aggregate per seq out to the PS.
TEST(AnalyzeTool, ShowsTheSwitchAggregatingAGeneratedJob) {
  const std::string dir = Fresh();
  ASSERT_EQ(RunCommandIn(dir, kTools + "swemu-gen --workload atp --layers 2 --out " + dir +
                                  "in/w{w}.pcap").status, 0);
  RunResult in = RunCommandIn(dir, kTools + "swemu-analyze " + dir + "in --json -");
  ASSERT_EQ(in.status, 0) << in.err;
  const std::size_t seqs_at = in.out.find("\"seqs\": ");
  ASSERT_NE(seqs_at, std::string::npos) << in.out;
  const uint64_t seqs = std::stoull(in.out.substr(seqs_at + 8));
  ASSERT_GT(seqs, 100u);
  // Into the switch: four gradients per seq, every seq complete by its bitmaps.
  EXPECT_NE(in.out.find("\"complete\": " + std::to_string(seqs) + ","), std::string::npos);
  EXPECT_NE(in.out.find("\"gradient_packets\": " + std::to_string(4 * seqs) + ","),
            std::string::npos) << in.out;
  std::string ins;
  for (int w = 0; w < 4; ++w) ins += " --in " + std::to_string(w) + "=" + dir + "in/w" + std::to_string(w) + ".pcap";
  ASSERT_EQ(RunSwemuIn(dir, "--offline --config " + kConfigs + "atp_rack.ini" + ins +
                               " --out-dir " + dir + "run").status, 0);
  RunResult out = RunCommandIn(dir, kTools + "swemu-analyze " + dir + "run --json -");
  ASSERT_EQ(out.status, 0) << out.err;
  // Out of it, to the PS: one gradient per seq with all four workers' bits, none missing.
  EXPECT_NE(out.out.find("\"workers_bitmap\": 15,"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("\"seqs\": " + std::to_string(seqs) + ","), std::string::npos);
  EXPECT_NE(out.out.find("\"complete\": " + std::to_string(seqs) + ","), std::string::npos);
  EXPECT_NE(out.out.find("\"missing\": 0,"), std::string::npos);
  EXPECT_NE(out.out.find("\"gradient_packets\": " + std::to_string(seqs) + ","), std::string::npos);
  EXPECT_NE(out.out.find("\"collisions\": 0,"), std::string::npos);
}

// The same frames as a pcapng (converted by tshark's editcap), as raw IP and as Linux cooked
// capture (written here with their link types): the same flows and bytes of IP.
TEST(AnalyzeTool, ReadsPcapngRawIpAndLinuxCookedCaptures) {
  const std::string dir = Fresh();
  ASSERT_EQ(RunCommandIn(dir, kTools + "swemu-gen -o " + dir + "a.pcap -n 50 --size 100 --proto tcp")
                .status, 0);
  ASSERT_EQ(RunCommandIn(dir, "editcap -F pcapng " + dir + "a.pcap " + dir + "a.pcapng").status, 0)
      << "editcap (package tshark) is needed";
  // Rewrite the Ethernet records as raw IP (link type 101) and SLL (113, a 16-byte header).
  const std::string script =
      "import struct,sys\n"
      "d=open(sys.argv[1],'rb').read(); h=bytearray(d[:24]); o=[bytearray(),bytearray()]\n"
      "for k,lt in enumerate((101,113)):\n"
      "  hh=bytearray(h); struct.pack_into('<I',hh,20,lt); o[k]+=hh\n"
      "i=24\n"
      "while i<len(d):\n"
      "  s,f,c,l=struct.unpack_from('<IIII',d,i); p=d[i+16:i+16+c]; i+=16+c\n"
      "  o[0]+=struct.pack('<IIII',s,f,c-14,l-14)+p[14:]\n"
      "  sll=struct.pack('>HHH8sH',0,1,6,p[6:12]+b'\\0\\0',0x0800)\n"
      "  o[1]+=struct.pack('<IIII',s,f,c+2,l+2)+sll+p[14:]\n"
      "open(sys.argv[2],'wb').write(o[0]); open(sys.argv[3],'wb').write(o[1])\n";
  std::ofstream(dir + "relink.py") << script;
  ASSERT_EQ(RunCommandIn(dir, "/usr/bin/python3 " + dir + "relink.py " + dir + "a.pcap " + dir +
                                  "raw.pcap " + dir + "sll.pcap").status, 0);
  for (const std::string file : {"a.pcapng", "raw.pcap", "sll.pcap"}) {
    RunResult run = RunCommandIn(dir, kTools + "swemu-analyze " + dir + file + " --json -");
    ASSERT_EQ(run.status, 0) << file << ": " << run.err;
    EXPECT_NE(run.out.find("\"frames\": 50,"), std::string::npos) << file;
    EXPECT_NE(run.out.find("\"flow\": \"tcp 10.0.0.1:10000 > 10.0.0.2:5000\""), std::string::npos)
        << file << run.out;
    EXPECT_NE(run.out.find("\"reordered\": 0,"), std::string::npos) << file;
    EXPECT_NE(run.out.find("\"malformed\": {}"), std::string::npos) << file << run.out;
  }
}

TEST(AnalyzeTool, ReadsAsFarAsATruncatedFileGoesAndSaysSo) {
  const std::string dir = Fresh();
  ASSERT_EQ(RunCommandIn(dir, kTools + "swemu-gen -o " + dir + "a.pcap -n 100").status, 0);
  const std::string whole = ReadText(dir + "a.pcap");
  std::ofstream(dir + "cut.pcap") << whole.substr(0, whole.size() - 50);
  RunResult run = RunCommandIn(dir, kTools + "swemu-analyze " + dir + "cut.pcap");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("99 frames"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("cut off after frame 99"), std::string::npos);
  EXPECT_NE(run.err.find("truncated"), std::string::npos) << run.err;
}

TEST(AnalyzeTool, BadInputEndsWithOneLineAndExit2BeforeAnyOutput) {
  const std::string dir = Fresh();
  ASSERT_EQ(RunCommandIn(dir, kTools + "swemu-gen -o " + dir + "a.pcap -n 10").status, 0);
  std::filesystem::create_directories(dir + "empty");
  std::ofstream(dir + "junk.pcap") << "not a capture at all, just words";
  std::ofstream(dir + "bad_telemetry/telemetry.csv");
  std::filesystem::create_directories(dir + "bad_telemetry");
  std::filesystem::copy_file(dir + "a.pcap", dir + "bad_telemetry/a.pcap");
  std::ofstream(dir + "bad_telemetry/telemetry.csv") << "time_ns,foo\n1,2\n";
  const std::string a = dir + "a.pcap ";
  for (const std::string& args :
       {std::string(), dir + "missing.pcap", dir + "empty", std::string("/dev/zero"),
        dir + "junk.pcap", dir + "bad_telemetry", a + "--bin 0", a + "--bin 1ns --bin 2ns",
        a + "--udp-port nope=1", a + "--udp-port atp=70000", a + "--atp-aggregators 0",
        a + "--frobnicate", a + "--json " + dir + "empty", a + "--top x"}) {
    RunResult run = RunCommandIn(dir, kTools + "swemu-analyze " + args + " --csv " + dir + "out");
    EXPECT_EQ(run.status, 2) << args;
    EXPECT_EQ(CountLines(run.err), 1u) << args << ": " << run.err;
    EXPECT_EQ(run.err.rfind("swemu-analyze: ", 0), 0u) << run.err;
    EXPECT_TRUE(run.out.empty()) << args;
    EXPECT_FALSE(std::filesystem::exists(dir + "out")) << args << ": output touched";
  }
}

// The telemetry record may go anywhere, also under a name an output pcap has; a run that fails
// leaves none of it behind.
TEST(AnalyzeTool, TelemetryGoesWhereverItIsToldAndNowhereOnFailure) {
  const std::string dir = Fresh();
  std::filesystem::create_directories(dir + "elsewhere");
  RunResult run = CongestedRun(dir, "--telemetry " + dir + "elsewhere/port2.pcap");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(ReadText(dir + "elsewhere/port2.pcap").rfind("time_ns,switch,port,queue,", 0), 0u);
  EXPECT_EQ(ReadText(dir + "run/port2.pcap").substr(0, 4), std::string("\x4d\x3c\xb2\xa1", 4));
  RunResult failed = CongestedRun(dir, "--telemetry " + dir + "t2.csv --max-events 10");
  EXPECT_EQ(failed.status, 2);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().rfind("t2.csv", 0), std::string::npos)
        << entry.path();
  }
}

TEST(AnalyzeTool, TelemetryOptionsAreChecked) {
  const std::string dir = Fresh();
  std::filesystem::create_directories(dir + "a_dir");
  for (const std::string& args : {std::string("--telemetry-period 1ms"),
                                  "--telemetry " + dir + "a_dir",
                                  "--telemetry " + dir + "missing/t.csv",
                                  "--telemetry " + dir + "t.csv --telemetry-period 10ns",
                                  "--telemetry " + dir + "t.csv --telemetry-period soon"}) {
    RunResult run = RunSwemuIn(dir, "--offline --config " + kConfigs + "leaf.ini --out-dir " +
                                        dir + "o " + args);
    EXPECT_EQ(run.status, 2) << args;
    EXPECT_EQ(CountLines(run.err), 1u) << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "o")) << args << ": output touched";
  }
}

}  // namespace
}  // namespace swemu::testing
