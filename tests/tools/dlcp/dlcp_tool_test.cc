// swemu-dlcp as users run it: Appendix B's plan for a bundled model, whose printed commands a
// dlcp switch takes as they are; the hosts over kernel UDP through a lossy link; the real-time
// incast; bad options and files end with one line, exit 2.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "pipeline/programs/dlcp.h"
#include "swemu/switch_config.h"
#include "tests/pipeline/switch_harness.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kDlcp = SWEMU_BINARY_DIR "/tools/swemu-dlcp";
const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";

int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string Dir() {
  const std::string dir = TestDirFor("dlcp_tool_");
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(DlcpTool, ThePrintedCommandsInstallThePlan) {
  RunResult run = RunCommandIn(Dir(), kDlcp + " thresholds --model ResNet50 --load 1.2");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("ResNet50: DLCP thresholds"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("buffer 341 packets"), std::string::npos) << run.out;  // 512 KB / 1500
  SwitchConfig config;
  config.program = "dlcp";
  SwitchHarness h(config);
  ASSERT_TRUE(h.ok()) << h.error();
  std::istringstream lines(run.out);
  int commands = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find_first_not_of(' ');
    if (at == std::string::npos) continue;
    const std::string cmd = line.substr(at);
    if (cmd.starts_with("dlcp_thresholds") || cmd.starts_with("set_red_threshold") ||
        cmd.starts_with("set_queue_depth")) {
      Result<std::string> r = h.Cmd(cmd);
      EXPECT_TRUE(r.ok()) << cmd << ": " << r.message();
      ++commands;
    }
  }
  EXPECT_EQ(commands, 15);  // the fit, then S_i and L_i queue by queue
}

TEST(DlcpTool, BadOptionsAndFilesEndWithOneLine) {
  const std::string dir = Dir();
  std::ofstream(dir + "empty.txt") << "";
  for (const std::string& args :
       {std::string(""), std::string("bogus"), std::string("thresholds --theta 1"),
        std::string("thresholds --load 0"), std::string("thresholds --load x"),
        std::string("thresholds --buffer 1KB"), std::string("thresholds --model gpt"),
        std::string("thresholds --layers " + dir), std::string("thresholds --layers /dev/zero"),
        std::string("thresholds --layers " + dir + "empty.txt"),
        std::string("thresholds --tol-small 200%"), std::string("thresholds stray"),
        std::string("sim --tors 1"), std::string("sim --rto-min 0"), std::string("sim --bound x"),
        std::string("sim --model gpt"), std::string("sim --bogus"), std::string("sim --pull-bound 100%"),
        std::string("sim --load 0"), std::string("sim --load x"), std::string("sim --alpha 1/0"),
        std::string("sim --alpha 2^11"), std::string("sim --csv " + dir),
        std::string("sim --job-hosts 3"), std::string("sim --job-hosts x"),
        std::string("sim --workers 3"), std::string("sim --workers 13"),
        std::string("sim --host-nic both"), std::string("sim --host-nic"),
        std::string("sim --threads 0"), std::string("sim --threads 257"),
        std::string("sim --threads x"), std::string("sim --partitions 0"),
        std::string("sim --partitions 6"),
        std::string("sim --topology " + dir), std::string("sim --topology " + dir + "empty.txt"),
        std::string("sim --topology " + kConfigs + "dlcp_leaf_spine.topo --spines 3"),
        std::string("realtime --senders 0"), std::string("realtime --bytes x"),
        std::string("realtime --host-rate 0"), std::string("send"),
        std::string("send --bind 127.0.0.2"), std::string("send --bind 127.0.0.2 --to x"),
        std::string("send --bind 127.0.0.2 --to 127.0.0.3 --bytes 2"),
        std::string("send --bind 127.0.0.2 --to 127.0.0.3 --bound 100%"),
        std::string("send --bind 127.0.0.2 --to 127.0.0.3 --rate-period 1ns"),
        std::string("recv"), std::string("recv --bind 127.0.0.1 --loss 100%"),
        std::string("recv --bind 127.0.0.1 --timeout 0"), std::string("recv --bind 192.0.2.1"),
        std::string("recv --bind 127.0.0.1 --json " + dir), std::string("recv --bind 127.0.0.1 stray"),
        std::string("recv --bind 127.0.0.1 --max-tensor 0"),
        std::string("send --bind 127.0.0.2 --to 127.0.0.3 --tensors 10000 --bytes 1GiB")}) {
    RunResult run = RunCommandIn(dir, kDlcp + " " + args);
    EXPECT_EQ(run.status, 2) << args;
    if (!args.empty()) {
      EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    }
  }
}

// A network the experiment cannot run on ends with one line naming why, exit 2, before any output:
// hosts that cannot reach each other, fewer hosts than a PS and its workers, a shape option
// beside --topology.
TEST(DlcpTool, ATopologyTheExperimentCannotRunOnIsRefusedWithOneLine) {
  const std::string dir = Dir();
  std::ofstream(dir + "sw.ini") << "[switch]\nname = sw\nports = 4\nprogram = l2l3\n";
  std::ofstream(dir + "apart.topo") << "[topology]\nswitch = a sw.ini\nswitch = b sw.ini\n"
                                       "host = a:0\nhost = a:1\nhost = b:0\nhost = b:1\n";
  std::ofstream(dir + "few.topo") << "[topology]\nswitch = a sw.ini\nhost = a:0\nhost = a:1\n";
  const struct {
    std::string args, says;
  } cases[] = {
      {"apart.topo", "hosts a-p0 and b-p0 cannot reach each other (no links from a to b)"},
      {"few.topo", "2 hosts; DLCP's experiment needs at least 4 (a PS and its workers)"},
      {"few.topo --hosts-per-tor 2",
       "sim: --hosts-per-tor: not with --topology (a topology replaces the shape options)\n"},
      {"none.topo", "sim: --topology " + dir + "none.topo: cannot open topology"},
  };
  for (const auto& c : cases) {
    RunResult run = RunCommandIn(dir, kDlcp + " sim --topology " + dir + c.args);
    EXPECT_EQ(run.status, 2) << c.args;
    EXPECT_EQ(run.out, "") << c.args;
    EXPECT_EQ(CountOf(run.err, "\n"), 1) << run.err;
    EXPECT_NE(run.err.find(c.says), std::string::npos) << run.err;
  }
}

// The bundled configs/dlcp_leaf_spine.topo is the default network: the same report, byte for
// byte, every layer's loss included (scaled down to run in CI).
TEST(DlcpTool, TheBundledTopologyPrintsWhatTheDefaultDoes) {
  const std::string sim = kDlcp + " sim --scale 1024 --verbose";
  RunResult made = RunCommandIn(Dir(), sim);
  RunResult file = RunCommandIn(Dir(), sim + " --topology " + kConfigs + "dlcp_leaf_spine.topo");
  ASSERT_EQ(made.status, 0) << made.err;
  ASSERT_EQ(file.status, 0) << file.err;
  EXPECT_NE(made.out.find("3 ToRs x 4 hosts, 2 spines, 10 Gbit/s links"), std::string::npos);
  EXPECT_EQ(file.out, made.out);
}

// One system on another's network: DLCP and its DCTCP baseline on GOAT's three-switch testbed
// (two racks of 4 workers and a PS's switch, s1 and s2 also linked directly) and on ATP's two
// racks; both schemes complete every flow of the iteration.
TEST(DlcpTool, RunsOnOtherSystemsTopologies) {
  for (const std::string topo : {"goat_testbed/goat.topo", "atp_two_rack.topo"}) {
    const std::string dir = Dir();
    RunResult run = RunCommandIn(dir, kDlcp + " sim --scale 1024 --csv " + dir +
                                          "flows.csv --topology " + kConfigs + topo);
    ASSERT_EQ(run.status, 0) << topo << ": " << run.err;
    const std::string csv = ReadText(dir + "flows.csv");
    const int dlcp = CountOf(csv, "\ndlcp,"), dctcp = CountOf(csv, "\ndctcp,");
    EXPECT_GT(dlcp, 0) << topo;
    EXPECT_EQ(dlcp, dctcp) << topo;
    EXPECT_NE(run.out.find("(push, then pull, " + std::to_string(dlcp) + " flows)"),
              std::string::npos)
        << run.out;
  }
  RunResult goat = RunCommandIn(Dir(), kDlcp + " sim --scale 1024 --topology " + kConfigs +
                                           "goat_testbed/goat.topo");
  EXPECT_NE(goat.out.find("DLCP in virtual time: 3 switches, 9 hosts, 10 Gbit/s links"),
            std::string::npos)
      << goat.out;
}

// Over kernel UDP (loopback; a port of this test's own): a receiver and a sender, each dropping
// 10% of what arrives, deliver two tensors whole (bound 0): retransmission requests and the
// control channel's resends carry them through.
TEST(DlcpTool, KernelUdpHostsDeliverThroughALossyLink) {
  const std::string dir = Dir();
  const std::string port = std::to_string(20000 + getpid() % 20000);
  std::filesystem::remove(dir + "recv.rc");
  const std::string recv = "(" + kDlcp + " recv --bind 127.0.0.3 --port " + port +
                           " --tensors 2 --loss 10% --timeout 30s --json " + dir +
                           "recv.json >" + dir + "recv.out 2>" + dir + "recv.err; echo $? >" +
                           dir + "recv.rc) &";
  ASSERT_EQ(std::system(recv.c_str()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the receiver binds first
  RunResult send = RunCommandIn(dir, kDlcp + " send --bind 127.0.0.2 --to 127.0.0.3 --port " +
                                         port + " --tensors 2 --bytes 300KB --bound 0 --loss 10% "
                                         "--rate 500M --seed 3 --timeout 30s");
  for (int i = 0; i < 400 && !std::filesystem::exists(dir + "recv.rc"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the rc file is written
  const std::string out = ReadText(dir + "recv.out");
  EXPECT_EQ(send.status, 0) << send.out << send.err;
  EXPECT_NE(send.out.find("send: 2 of 2 tensors finished"), std::string::npos) << send.out;
  EXPECT_EQ(ReadText(dir + "recv.rc"), "0\n") << out << ReadText(dir + "recv.err");
  EXPECT_NE(out.find("recv: 2 of 2 flows confirmed (2 met their bound)"), std::string::npos) << out;
  EXPECT_EQ(CountOf(out, "holding 100.000000%"), 2) << out;
  EXPECT_EQ(out.find(" 0 arriving frames dropped"), std::string::npos) << out;  // --loss acted
  EXPECT_EQ(CountOf(ReadText(dir + "recv.json"), "\"bound_met\": true"), 2);
}

// A receiver refuses a tensor larger than it takes (one START must not make it allocate
// gigabytes): the sender is told, stops and says so; nothing was delivered.
TEST(DlcpTool, ATensorTooLargeIsRefusedAndTheSenderSaysSo) {
  const std::string dir = Dir();
  const std::string port = std::to_string(20000 + (getpid() + 2) % 20000);
  std::filesystem::remove(dir + "recv.rc");
  const std::string recv = "(" + kDlcp + " recv --bind 127.0.0.3 --port " + port +
                           " --max-tensor 100KB --timeout 2s >" + dir + "recv.out 2>" + dir +
                           "recv.err; echo $? >" + dir + "recv.rc) &";
  ASSERT_EQ(std::system(recv.c_str()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  RunResult send = RunCommandIn(dir, kDlcp + " send --bind 127.0.0.2 --to 127.0.0.3 --port " +
                                         port + " --bytes 300KB --timeout 10s");
  for (int i = 0; i < 100 && !std::filesystem::exists(dir + "recv.rc"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(send.status, 1) << send.out << send.err;
  EXPECT_EQ(send.err, "swemu-dlcp send: the receiver refused 1 of 1 tensors\n");
  EXPECT_NE(send.out.find("tensor 1: refused by the receiver"), std::string::npos) << send.out;
  const std::string out = ReadText(dir + "recv.out");
  EXPECT_NE(out.find("recv: 0 of 1 flows confirmed (0 met their bound); 1 refused;"),
            std::string::npos) << out;
  EXPECT_EQ(ReadText(dir + "recv.rc"), "1\n");  // it timed out waiting for a flow it could take
}

TEST(DlcpTool, AReceiverWithoutSenderTimesOutWithOneLine) {
  const std::string dir = Dir();
  const std::string port = std::to_string(20000 + (getpid() + 1) % 20000);
  RunResult run = RunCommandIn(dir, kDlcp + " recv --bind 127.0.0.3 --port " + port + " --timeout 300ms");
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.err, "swemu-dlcp recv: timed out with 0 of 1 flows confirmed\n");
}

// The simulation's flows as CSV, drawn by tools/dlcp/dlcp_plot.py (Debian's python3-matplotlib);
// the plot script refuses what is not that CSV with one line.
TEST(DlcpTool, TheSimulationsFlowsAreWrittenAndDrawn) {
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kDlcp + " sim --tors 2 --hosts-per-tor 2 --scale 1024 --csv " +
                                        dir + "flows.csv");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string csv = ReadText(dir + "flows.csv");
  EXPECT_TRUE(csv.starts_with("transport,stage,layer,from,to,bytes,start_ns,fct_ns,arrived_ns,loss\n"));
  // 4 hosts, one PS: 3 workers push 54 layers and pull them back, in both runs.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 2 * 3 * 54);
  EXPECT_EQ(CountOf(csv, "dlcp,pull,"), 3 * 54);
  const std::string plot = "/usr/bin/python3 " SWEMU_SOURCE_DIR "/tools/dlcp/dlcp_plot.py ";
  run = RunCommandIn(dir, plot + dir + "flows.csv --out " + dir + "flows.png");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_GT(std::filesystem::file_size(dir + "flows.png"), 10'000u);
  std::ofstream(dir + "other.csv") << "a,b\n1,2\n";
  for (const std::string& args : {dir, dir + "other.csv", dir + "missing.csv",
                                  dir + "flows.csv --out " + dir + "no/such/dir.png"}) {
    run = RunCommandIn(dir, plot + args + (args.find("--out") == std::string::npos ? " --out " + dir + "x.png" : ""));
    EXPECT_EQ(run.status, 2) << args;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
  }
}

// --schemes: DLCP against the baselines named, a table each, every run's flows in the CSV and
// the plot; a list without dlcp or with an unknown name is refused with one line before any
// output.
TEST(DlcpTool, TheSchemesNamedAreRunReportedWrittenAndDrawn) {
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kDlcp + " sim --tors 2 --hosts-per-tor 2 --scale 1024 "
                                            "--schemes pfabric,dlcp,pias --csv " + dir + "s.csv");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(CountOf(run.out, "FCT (ms) "), 2) << run.out;
  EXPECT_LT(run.out.find("  pFabric       DLCP"), run.out.find("     PIAS       DLCP")) << run.out;
  EXPECT_EQ(CountOf(run.out, "DCTCP"), 0) << run.out;
  EXPECT_NE(run.out.find("; PIAS RTOmin 10 ms\n"), std::string::npos) << run.out;
  const std::string csv = ReadText(dir + "s.csv");
  EXPECT_EQ(CountOf(csv, "\npias,pull,"), 3 * 54);
  EXPECT_EQ(CountOf(csv, "\npfabric,push,"), 3 * 54);
  EXPECT_EQ(CountOf(csv, "\ndctcp,"), 0);
  const std::string plot = "/usr/bin/python3 " SWEMU_SOURCE_DIR "/tools/dlcp/dlcp_plot.py ";
  run = RunCommandIn(dir, plot + dir + "s.csv --out " + dir + "s.png");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_GT(std::filesystem::file_size(dir + "s.png"), 10'000u);
  for (const char* schemes : {"dctcp,pias", "dlcp", "dlcp,reno", "dlcp,pias,pias"}) {
    run = RunCommandIn(dir, kDlcp + " sim --schemes " + std::string(schemes));
    EXPECT_EQ(run.status, 2) << schemes;
    EXPECT_TRUE(run.out.empty()) << schemes;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << schemes << ": " << run.err;
    EXPECT_TRUE(run.err.starts_with("swemu-dlcp sim: --schemes: ")) << run.err;
  }
}

// `sim` with each of `values` appended, each in a directory of its own (its --csv s.csv
// there): the printed output and the CSV of every run, which the first run's must equal.
void ExpectEveryRunAlike(const std::string& sim, const std::vector<std::string>& values,
                         std::string* out, std::string* csv) {
  for (std::size_t k = 0; k < values.size(); ++k) {
    const std::string dir = Dir() + "v" + values[k] + "/";
    std::filesystem::create_directories(dir);
    RunResult run = RunCommandIn(dir, "cd " + dir + " && " + sim + values[k]);
    ASSERT_EQ(run.status, 0) << values[k] << ": " << run.err;
    if (k == 0) {
      *out = run.out;
      *csv = ReadText(dir + "s.csv");
      continue;
    }
    EXPECT_EQ(run.out, *out) << sim << values[k];
    EXPECT_EQ(ReadText(dir + "s.csv"), *csv) << sim << values[k];
  }
}

// --threads runs the schemes at once: the table and every flow of the CSV are those of one thread.
TEST(DlcpTool, TheSchemesRunAtOnceOnThreadsAsOnOne) {
  std::string out, csv;
  ExpectEveryRunAlike(kDlcp + " sim --tors 2 --hosts-per-tor 2 --scale 1024 "
                              "--schemes pfabric,dctcp,dlcp,pias --csv s.csv --threads ",
                      {"1", "2", "4"}, &out, &csv);
  EXPECT_EQ(CountOf(out, "FCT (ms) "), 3) << out;
  EXPECT_EQ(CountOf(csv, "\npias,pull,"), 3 * 54);
}

// --partitions runs each scheme's network on several threads: 1, 2 and 5 partitions (the default
// shape's 3 ToRs and 2 spines) print the same table and write the same flows.
TEST(DlcpTool, EveryPartitioningPrintsAndWritesTheSame) {
  std::string out, csv;
  ExpectEveryRunAlike(kDlcp + " sim --tors 3 --hosts-per-tor 2 --scale 512 "
                              "--schemes dlcp,dctcp,pfabric --csv s.csv --partitions ",
                      {"1", "2", "5"}, &out, &csv);
  EXPECT_EQ(CountOf(out, "FCT (ms) "), 2) << out;
  EXPECT_GT(CountOf(csv, "\ndlcp,push,"), 50);
}

// The loss of each of ResNet-50's 54 layers only under --verbose; by default each stage's mean
// and worst layer.
TEST(DlcpTool, TheSimulationPrintsEveryLayersLossOnlyWhenVerbose) {
  const std::string sim = kDlcp + " sim --tors 2 --hosts-per-tor 2 --scale 1024";
  RunResult brief = RunCommandIn(Dir(), sim);
  ASSERT_EQ(brief.status, 0) << brief.err;
  EXPECT_EQ(CountOf(brief.out, "  layer "), 0) << brief.out;
  EXPECT_EQ(CountOf(brief.out, "  push: DLCP mean "), 1) << brief.out;
  EXPECT_EQ(CountOf(brief.out, "  pull: DLCP mean "), 1) << brief.out;
  RunResult verbose = RunCommandIn(Dir(), sim + " --verbose");
  ASSERT_EQ(verbose.status, 0) << verbose.err;
  EXPECT_EQ(CountOf(verbose.out, "  layer "), 54) << verbose.out;
  EXPECT_EQ(CountOf(verbose.out, "  push: DLCP mean "), 0) << verbose.out;
}

// The real-time smoke run: a swemu child on vhost-user ports, DLCP hosts on virtio_user.
TEST(DlcpTool, TheRealTimeIncastCompletes) {
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kDlcp + " realtime --senders 2 --bytes 300KB --out-dir " + dir +
                                        "rt");
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("sender 0 (front layers):"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("sender 1 (back layers):"), std::string::npos) << run.out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '%'), 3) << run.out;  // bound + 2 flows
  // The receiver's port (2) is shaped in the switch's file, from its creation; no command does.
  Result<LoadedSwitchConfig> ini = LoadSwitchConfig(dir + "rt/dlcp.ini");
  ASSERT_TRUE(ini.ok()) << ini.message();
  EXPECT_EQ(ini->config.tm.PortRateBps(2), 1'000'000'000u);
  EXPECT_EQ(ini->config.tm.PortRateBps(0), 0u);
  std::ifstream cli(dir + "rt/dlcp.cli");
  const std::string script((std::istreambuf_iterator<char>(cli)), std::istreambuf_iterator<char>());
  EXPECT_NE(script.find("table_add dmac"), std::string::npos) << script;
  EXPECT_EQ(script.find("set_port_rate"), std::string::npos) << script;
}

}  // namespace
}  // namespace swemu::testing
