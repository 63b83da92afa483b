// swemu-goat plan as users run it: the paper's simulated leaf-spine by default, a plan whose
// traffic is below sending everything to the PS, the same plan for the same seed, the class LP
// and the full LP agreeing on Eq. 1; bad options end with one line, exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kGoat = SWEMU_BINARY_DIR "/tools/swemu-goat";

std::string Dir() {
  const std::string dir = TestDirFor("goat_tool_");
  std::filesystem::create_directories(dir);
  return dir;
}

double Field(const std::string& out, const std::string& row, int column) {
  std::smatch m;
  const std::regex re(row + " +([0-9.e+]+) +([0-9.e+]+) +([0-9.e+]+)");
  if (!std::regex_search(out, m, re)) return -1;
  return std::stod(m[column].str());
}

TEST(GoatTool, ThePlanCarriesLessThanThePsAlone) {
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kGoat + " plan");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("49 workers"), std::string::npos) << run.out;
  const double goat = Field(run.out, "GOAT", 1), ps = Field(run.out, "PS only", 1);
  ASSERT_GT(goat, 0) << run.out;
  EXPECT_LT(goat, ps) << run.out;
  EXPECT_LT(Field(run.out, "GOAT", 2), Field(run.out, "PS only", 2)) << run.out;  // at the PS
  RunResult again = RunCommandIn(dir, kGoat + " plan");
  // Seeded: the same plan; only Clp's solve time may differ.
  const std::regex seconds("[0-9.]+ s;");
  EXPECT_EQ(std::regex_replace(again.out, seconds, "T s;"),
            std::regex_replace(run.out, seconds, "T s;"));
}

TEST(GoatTool, TheClassLpAndTheFullLpAgree) {
  const std::string dir = Dir();
  const std::string args =
      " plan --leaf-spine 2,4,17 --programmable leaf0,leaf1,spine1 --memory 8MB";
  RunResult classes = RunCommandIn(dir, kGoat + args);
  RunResult full = RunCommandIn(dir, kGoat + args + " --no-classes");
  ASSERT_EQ(classes.status, 0) << classes.err;
  ASSERT_EQ(full.status, 0) << full.err;
  std::smatch a, b;
  const std::regex re("Eq. 1 at the LP optimum ([0-9.e+]+) GB-hops");
  ASSERT_TRUE(std::regex_search(classes.out, a, re)) << classes.out;
  ASSERT_TRUE(std::regex_search(full.out, b, re)) << full.out;
  EXPECT_EQ(a[1].str(), b[1].str());
  EXPECT_NE(full.out.find("16 worker classes"), std::string::npos) << full.out;
}

// The plan as JSON: every programmable switch with its sub-models (fan-in, memory base within its
// memory), every worker with one node per sub-model; the figures match the printed ones.
TEST(GoatTool, ThePlanIsWrittenForSwitchesAndWorkers) {
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kGoat +
                                        " plan --leaf-spine 2,4,17 --programmable "
                                        "leaf0,leaf1,spine1 --memory 8MB --json " +
                                        dir + "plan.json");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string json = ReadText(dir + "plan.json");
  auto count = [&](const std::string& what) {
    int n = 0;
    for (auto at = json.find(what); at != std::string::npos; at = json.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\"memory\": 31250"), 3) << json;  // 8 MB / 256 B, per switch
  EXPECT_EQ(count("\"nodes\": ["), 16);              // one entry per worker
  std::smatch m;
  ASSERT_TRUE(std::regex_search(json, m, std::regex("\"submodels\": \\[([0-9,\\s]+)\\]")));
  const std::string sizes = m[1].str();
  const int submodels = static_cast<int>(std::count(sizes.begin(), sizes.end(), ',')) + 1;
  // Each worker names a node (a switch or "ps") for every sub-model.
  std::regex nodes("\"nodes\": \\[([^\\]]*)\\]");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), nodes);
       it != std::sregex_iterator(); ++it) {
    const std::string list = (*it)[1].str();
    EXPECT_EQ(std::count(list.begin(), list.end(), ',') + 1, submodels) << list;
  }
  // Fan-ins of a sub-model over the switches never exceed the 16 workers.
  std::regex fan("\"fan_in\": ([0-9]+)");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), fan); it != std::sregex_iterator();
       ++it) {
    EXPECT_LE(std::stoi((*it)[1].str()), 16);
  }
  EXPECT_NE(run.out.find("wrote " + dir + "plan.json"), std::string::npos);
}

TEST(GoatTool, BadOptionsEndWithOneLine) {
  const std::string dir = Dir();
  for (const std::string& args :
       {std::string(""),
        std::string("bogus"),
        std::string("plan --bogus"),
        std::string("plan --leaf-spine 1,2"),
        std::string("plan --leaf-spine 1,2,1"),
        std::string("plan --memory 1"),
        std::string("plan --programmable nope"),
        std::string("plan --programmable 200%"),
        std::string("plan --model gpt"),
        std::string("plan --submodels x"),
        std::string("plan stray"),
        std::string("plan --json " + dir),
        std::string("sim --fabric ring"),
        std::string("sim --scheme goat,nope"),
        std::string("sim --scale 0.5"),
        std::string("sim --memory 1"),
        std::string("sim --delay 9=1ms"),
        std::string("sim --delay 1"),
        std::string("sim --k 3"),
        std::string("sim --rate-mean 2"),
        std::string("sim --csv " + dir),
        std::string("sim --per-switch 40"),
        std::string("sim --fabric leaf-spine --workers 65"),
        std::string("sim --fabric fat-tree --workers 65"),
        std::string("sim --fabric fat-tree --fat-tree 7,6"),
        std::string("sim --fabric fat-tree --fat-tree 8"),
        std::string("sim --elements 77"),
        std::string("sim --stage-sram 0"),
        std::string("sim --rto 0"),
        std::string("sim --model 0MB"),
        std::string("sim --threads 0"),
        std::string("sim --threads many"),
        std::string("demo --k 3"),
        std::string("demo --delay 9=1ms"),
        std::string("demo --timeout 0"),
        std::string("demo --rto 0"),
        std::string("demo --scheme x"),
        std::string("demo --out-dir " + dir + "x/" + std::string(120, 'd')),
        std::string("publish --fabric x"),
        std::string("sim --topology nope.topo"),
        std::string("demo --topology nope.topo")}) {
    RunResult run = RunCommandIn(dir, kGoat + " " + args);
    EXPECT_EQ(run.status, 2) << args;
    if (!args.empty()) {
      EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    }
  }
}

TEST(GoatTool, PublishWritesConfigsSwemuRunsAndTheJobForTheHosts) {
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kGoat + " publish --out-dir " + dir + "pub");
  ASSERT_EQ(run.status, 0) << run.err;
  for (const char* file : {"s1.ini", "s1.cli", "s2.ini", "s3.cli", "goat.topo", "goat.job"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "pub/" + file)) << file;
  }
  // The plan's entries and the network's routes, by node id.
  const std::string cli = ReadText(dir + "pub/s1.cli");
  EXPECT_NE(cli.find("table_add goat_node aggregate 1 1 "), std::string::npos) << cli;
  EXPECT_NE(cli.find("table_add goat_route forward 2 => 5"), std::string::npos) << cli;
  // The s1-s2 link (goat.topo's third) is a ring link of one swemu process: end 0 on s1, end 1 on
  // s2; s2's host ports are named after s1's six.
  EXPECT_NE(ReadText(dir + "pub/s1.ini").find("devargs = swemu_link:l2:0"), std::string::npos);
  const std::string s2 = ReadText(dir + "pub/s2.ini");
  EXPECT_NE(s2.find("devargs = swemu_link:l2:1"), std::string::npos) << s2;
  EXPECT_NE(s2.find("devargs = net_vhost6,iface="), std::string::npos) << s2;
  EXPECT_NE(ReadText(dir + "pub/goat.job").find("worker = w8 "), std::string::npos);
  RunResult resources = RunCommandIn(
      dir, SWEMU_BINARY_DIR "/swemu/swemu --topology " + dir + "pub/goat.topo --show-resources");
  ASSERT_EQ(resources.status, 0) << resources.err;
  EXPECT_NE(resources.out.find("program goat: fits"), std::string::npos) << resources.out;
  RunResult bad = RunCommandIn(dir, kGoat + " publish --scheme nope");
  EXPECT_EQ(bad.status, 2);
  bad = RunCommandIn(dir, kGoat + " publish --k 9");
  EXPECT_EQ(bad.status, 2) << bad.err;
  bad = RunCommandIn(dir, kGoat + " publish --out-dir " + dir + "pub/goat.job");
  EXPECT_EQ(bad.status, 2) << bad.err;
}

// configs/goat_testbed is what swemu-goat publish writes for the testbed (the command is in its
// files' first line): the files stay current with the planner and the network.
TEST(GoatTool, TheBundledTestbedConfigsAreThePublishedPlan) {
  const std::string dir = Dir();
  RunResult run =
      RunCommandIn(dir, kGoat + " publish --out-dir " + dir + "again --socket-dir /tmp --pcap");
  ASSERT_EQ(run.status, 0) << run.err;
  for (int w = 1; w <= 8; ++w) {
    const std::string file = "w" + std::to_string(w) + ".pcap";
    EXPECT_EQ(ReadText(SWEMU_SOURCE_DIR "/configs/goat_testbed/" + file),
              ReadText(dir + "again/" + file))
        << file;
  }
  for (const char* file :
       {"s1.ini", "s1.cli", "s2.ini", "s2.cli", "s3.ini", "s3.cli", "goat.topo", "goat.job"}) {
    std::string bundled = ReadText(SWEMU_SOURCE_DIR "/configs/goat_testbed/" + std::string(file));
    std::string fresh = ReadText(dir + "again/" + file);
    ASSERT_NE(bundled.find('\n'), std::string::npos) << file;
    // The first line names the output directory.
    EXPECT_EQ(bundled.substr(bundled.find('\n')), fresh.substr(fresh.find('\n'))) << file;
  }
}

// Offline: the bundled topology and the workers' pcaps through the engine; at the PS's port, one
// aggregate per fragment the plan puts on a switch, the workers' own fragments for the rest.
TEST(GoatTool, TheTestbedRunsOfflineFromTheWorkersPcaps) {
  const std::string dir = Dir();
  const std::string cfg = SWEMU_SOURCE_DIR "/configs/goat_testbed/";
  std::string in;
  for (int w = 1; w <= 8; ++w) {
    in += " --in " + std::string(w <= 4 ? "s1:" : "s2:") + std::to_string((w - 1) % 4) + "=" + cfg +
          "w" + std::to_string(w) + ".pcap";
  }
  RunResult run = RunCommandIn(dir, SWEMU_BINARY_DIR "/swemu/swemu --topology " + cfg +
                                        "goat.topo --offline" + in + " --out-dir " + dir + "off");
  ASSERT_EQ(run.status, 0) << run.err;
  RunResult analyzed =
      RunCommandIn(dir, SWEMU_BINARY_DIR "/tools/swemu-analyze " + dir + "off/s3-port0.pcap");
  ASSERT_EQ(analyzed.status, 0) << analyzed.err;
  std::smatch m;
  const std::regex re(
      "job 1: ([0-9]+) gradient\\(s\\): worker ([0-9]+), aggregate ([0-9]+) "
      "\\(count 8 x([0-9]+)\\)");
  ASSERT_TRUE(std::regex_search(analyzed.out, m, re)) << analyzed.out;
  const int workers_own = std::stoi(m[2].str()), aggregates = std::stoi(m[3].str());
  EXPECT_EQ(aggregates, std::stoi(m[4].str()));  // every aggregate holds all 8 workers
  EXPECT_GT(aggregates, 0);
  EXPECT_EQ(workers_own % 8, 0);                 // whole sub-models at the PS
  EXPECT_EQ(aggregates + workers_own / 8, 172);  // every fragment once
}

// Real time: three swemu processes joined by vhost-user/virtio_user links, the hosts over
// virtio_user. A worker 300 ms late every round: with K = 7 the PS completes rounds 1 and 2 from
// the others, the straggler's gradients are excluded, and every result is the exact sum of the
// workers it counted. The times are compared with each other, not with a bound: under
// AddressSanitizer on a busy 2-core machine a round of the seven took 714 ms.
// The hosts' EAL runtime directories (/var/run/dpdk/swemu-goat-<pid>-hosts).
std::vector<std::string> HostRuntimeDirs() {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/var/run/dpdk", ec)) {
    const std::string name = e.path().filename();
    if (name.rfind("swemu-goat-", 0) == 0) dirs.push_back(name);
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

TEST(GoatTool, DemoRunsThreeSwitchesInRealTimeAndCompletesFromTheKFastest) {
  const std::string dir = Dir();
  const std::vector<std::string> runtime_before = HostRuntimeDirs();
  RunResult run = RunCommandIn(dir, kGoat +
                                        " demo --rounds 3 --async --k 7 --delay 5=300ms -v "
                                        "--out-dir " +
                                        dir + "demo");
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("every result equals the exact sum"), std::string::npos) << run.out;
  std::smatch m;
  for (int r = 1; r <= 2; ++r) {
    const std::regex re("round " + std::to_string(r) +
                        ": K 7, the K-th worker done in ([0-9.]+) ms, all in ([0-9.]+) ms; "
                        "([0-9]+) results excluded");
    ASSERT_TRUE(std::regex_search(run.out, m, re)) << run.out;
    EXPECT_LT(std::stod(m[1].str()), std::stod(m[2].str())) << run.out;  // worker 5 came last
    EXPECT_GT(std::stoul(m[3].str()), 0u) << run.out;                    // and was not counted
  }
  // -v: each switch's goat_stats JSON.
  for (const char* sw : {"s1", "s2", "s3"}) {
    EXPECT_NE(run.out.find(std::string(sw) + ": {\"claimed\""), std::string::npos) << run.out;
  }
  // The demo's hosts cleaned up their EAL: no runtime directory was left behind.
  EXPECT_EQ(HostRuntimeDirs(), runtime_before);
}

// Exp. #3's setting scaled down: GOAT against ATP-style sharing and the PS alone, with the
// workers' rates varying (docs/papers.md, "GOAT").
TEST(GoatTool, SimPutsLessOnThePsThanAtpStyleSharingAndGivesExactSums) {
  const std::string dir = Dir();
  RunResult run =
      RunCommandIn(dir, kGoat + " sim --per-switch 8 --scale 1000 --csv " + dir + "sim.csv");
  ASSERT_EQ(run.status, 0) << run.err;
  std::smatch m;
  auto ps_fragments = [&](const std::string& scheme) {
    const std::regex re(scheme + " +([0-9]+) ");
    return std::regex_search(run.out, m, re) ? std::stod(m[1].str()) : -1.0;
  };
  const double goat = ps_fragments("goat"), atp = ps_fragments("atp-style"),
               ps = ps_fragments("ps-only");
  ASSERT_GT(goat, 0) << run.out;
  EXPECT_LT(goat, atp) << run.out;
  EXPECT_LT(atp, ps + 1) << run.out;
  EXPECT_EQ(run.out.find(" NO\n"), std::string::npos) << run.out;
  EXPECT_EQ(ReadText(dir + "sim.csv").substr(0, 7), "scheme,");
}

// --threads runs the schemes at once, over a lossy network too: the same table and CSV as one
// thread.
TEST(GoatTool, SimRunsTheSchemesAtOnceOnThreadsAsOnOne) {
  std::string out[2], csv[2];
  for (int k = 0; k < 2; ++k) {
    const std::string dir = Dir() + std::to_string(k) + "/";
    std::filesystem::create_directories(dir);
    RunResult run = RunCommandIn(dir, "cd " + dir + " && " + kGoat + " sim --per-switch 8 --scale 1000 --loss 1% "
                                              "--rto 1ms --csv s.csv --threads " +
                                              std::to_string(k + 1));
    ASSERT_EQ(run.status, 0) << run.err;
    out[k] = run.out;
    csv[k] = ReadText(dir + "s.csv");
  }
  EXPECT_NE(out[0].find("\nps-only "), std::string::npos) << out[0];
  EXPECT_EQ(out[1], out[0]);
  EXPECT_EQ(csv[1], csv[0]);
}

// --fabric fat-tree is the paper's k = 8 with 6 servers per edge switch (80 switches, 192
// servers); the first N workers run; --elements up to the program's 76 value lanes;
// --engine-stats.
TEST(GoatTool, SimRunsTheFatTreeAndLargerFragments) {
  const std::string dir = Dir();
  RunResult run =
      RunCommandIn(dir, kGoat + " sim --fabric fat-tree --workers 12 --elements 76 --engine-stats");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("fat-tree k=8: 16 core, 32 aggregation, 32 edge switches, 192 servers; "
                         "programmable: "),
            std::string::npos)
      << run.out;
  // 20% of 80; 64 MB / 1000 in slots of 76 x 4 B.
  EXPECT_NE(run.out.find("12 workers;"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("210 slots (64MB / 1000)"), std::string::npos) << run.out;
  const std::size_t list = run.out.find("programmable: ");
  ASSERT_NE(list, std::string::npos) << run.out;
  const std::string names = run.out.substr(list, run.out.find('\n', list) - list);
  EXPECT_EQ(std::count(names.begin(), names.end(), ','), 15) << names;  // 16 of 80
  EXPECT_EQ(run.out.find(" NO\n"), std::string::npos) << run.out;
  EXPECT_GT(Field(run.out, "ps-only", 1), Field(run.out, "goat", 1)) << run.out;
  // --engine-stats: one line after each scheme's.
  const std::regex engine(" engine: [1-9][0-9]* events, [1-9][0-9]* frame hops, [0-9.]+ s wall\n");
  EXPECT_EQ(std::distance(std::sregex_iterator(run.out.begin(), run.out.end(), engine),
                          std::sregex_iterator()),
            3)
      << run.out;
  // PS-only: every worker's every fragment reached the PS on its own.
  const std::size_t ps_only = run.out.find("\nps-only ");
  ASSERT_NE(ps_only, std::string::npos) << run.out;
  std::smatch got;
  const std::string after = run.out.substr(ps_only);
  ASSERT_TRUE(std::regex_search(after, got, std::regex("PS got: ([0-9]+) workers' fragments, 0 ")))
      << after;
  EXPECT_EQ(std::stod(got[1].str()), Field(run.out, "ps-only", 1)) << run.out;
}

// Everything after the first two lines, which name where the network and its memory came from.
std::string AfterTwoLines(const std::string& out) {
  const std::size_t first = out.find('\n');
  return first == std::string::npos ? out : out.substr(out.find('\n', first + 1) + 1);
}

// The bundled files are today's shapes: the testbed (configs/goat_testbed/goat.topo, the default)
// and the paper's leaf-spine and fat-tree for --seed 1 (configs/goat_leaf_spine.topo,
// configs/goat_fat_tree.topo) give the built-in shapes' tables and CSV rows byte for byte.
TEST(GoatTool, TheBundledTopologiesRunAsTheBuiltInShapes) {
  const std::string dir = Dir();
  const std::string cfg = SWEMU_SOURCE_DIR "/configs/";
  const struct {
    std::string built_in, from_file;
  } pairs[] = {
      {" sim --rate-std 0.2", " sim --rate-std 0.2 --topology " + cfg + "goat_testbed/goat.topo"},
      {" sim --fabric leaf-spine --workers 35 --scheme goat,atp-style",
       " sim --scheme goat,atp-style --model AlexNet --topology " + cfg + "goat_leaf_spine.topo"},
      {" sim --fabric fat-tree --workers 40 --scheme goat,ps-only",
       " sim --scheme goat,ps-only --model AlexNet --topology " + cfg + "goat_fat_tree.topo"},
  };
  for (const auto& p : pairs) {
    RunResult a = RunCommandIn(dir, kGoat + p.built_in + " --csv " + dir + "a.csv");
    RunResult b = RunCommandIn(dir, kGoat + p.from_file + " --csv " + dir + "b.csv");
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_NE(b.out.find("GOAT sim (virtual time, packet level): topology " + cfg),
              std::string::npos)
        << b.out;
    const std::string csv_a = ReadText(dir + "a.csv"), csv_b = ReadText(dir + "b.csv");
    EXPECT_EQ(std::regex_replace(AfterTwoLines(a.out), std::regex("wrote .*"), ""),
              std::regex_replace(AfterTwoLines(b.out), std::regex("wrote .*"), ""))
        << p.from_file;
    EXPECT_EQ(csv_a, csv_b) << p.from_file;
    EXPECT_GT(std::count(csv_b.begin(), csv_b.end(), '\n'), 2) << csv_b;
  }
}

// A topology without the roles GOAT needs, with two PSs, or with a worker that cannot reach the
// PS, and the shape options a topology replaces: one line naming it, exit 2, nothing written.
TEST(GoatTool, BadTopologiesAndShapeOptionsBesideOneAreOneLine) {
  const std::string dir = Dir();
  const std::string cfg = SWEMU_SOURCE_DIR "/configs/goat_testbed/";
  auto topo = [&](const std::string& name, const std::string& hosts) {
    std::string text = "[topology]\n";
    for (const char* sw : {"s1", "s2", "s3"}) {
      text += std::string("switch = ") + sw + " " + cfg + sw + ".ini\n";
    }
    std::ofstream(dir + name) << text << "link = s1:4 s3:1\n" << hosts;
    return dir + name;
  };
  const std::string no_ps = topo("no_ps.topo", "host = s1:0 role=worker\n");
  const std::string two_ps =
      topo("two_ps.topo", "host = s1:0 role=worker\nhost = s3:0 role=ps\nhost = s1:1 role=ps\n");
  const std::string cut = topo("cut.topo",
                               "host = s1:0 role=worker\nhost = s2:0 name=far role=worker\n"
                               "host = s3:0 role=ps\n");
  const std::string good = cfg + "goat.topo";
  const struct {
    std::string args, expect;
  } cases[] = {
      {"sim --topology " + no_ps, "no PS: one host should say role=ps"},
      {"sim --topology " + two_ps, "more than one host says role=ps (s3-p0, s1-p1)"},
      {"sim --topology " + cut, "host far cannot reach the PS"},
      {"demo --topology " + cut + " --out-dir " + dir + "demo", "host far cannot reach the PS"},
      {"publish --topology " + two_ps + " --out-dir " + dir + "pub", "more than one host"},
      {"sim --topology " + dir + "none.topo", "sim: --topology " + dir + "none.topo: cannot open"},
      {"sim --topology " + good + " --per-switch 2",
       "--per-switch: not with --topology (a topology replaces the shape options)\n"},
      {"sim --topology " + good + " --fabric leaf-spine", "--fabric: not with --topology"},
      {"sim --topology " + good + " --memory 1MB", "--memory: not with --topology"},
      {"sim --topology " + good + " --link-rate 1G", "--link-rate: not with --topology"},
      {"sim --topology " + good + " --loss 0.1", "--loss: not with --topology"},
      {"demo --topology " + good + " --workers 3 --out-dir " + dir + "demo",
       "--workers: not with --topology"},
  };
  for (const auto& c : cases) {
    const std::string csv = c.args.starts_with("sim") ? " --csv " + dir + "x.csv" : "";
    RunResult run = RunCommandIn(dir, kGoat + " " + c.args + csv);
    EXPECT_EQ(run.status, 2) << c.args << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << c.args << ": " << run.err;
    EXPECT_NE(run.err.find(c.expect), std::string::npos) << c.args << ": " << run.err;
    EXPECT_EQ(run.out, "") << c.args;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "x.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir + "pub"));
}

// A switch published without aggregator memory says no slots, so a published leaf-spine read
// back is the same network: the same programmable switches, the same plan.
TEST(GoatTool, APublishedLeafSpineReadsBackAsTheSameNetwork) {
  const std::string dir = Dir();
  const std::string shape = " --fabric leaf-spine --leaf-spine 2,4,17 --programmable leaf0,spine1";
  RunResult pub = RunCommandIn(dir, kGoat + " publish --out-dir " + dir + "ls" + shape);
  ASSERT_EQ(pub.status, 0) << pub.err;
  EXPECT_EQ(ReadText(dir + "ls/spine0.ini").find("slots"), std::string::npos);
  EXPECT_NE(ReadText(dir + "ls/spine1.ini").find("slots = 250"), std::string::npos);
  RunResult a = RunCommandIn(dir, kGoat + " sim --scheme goat --model AlexNet" + shape);
  RunResult b = RunCommandIn(
      dir, kGoat + " sim --scheme goat --model AlexNet --topology " + dir + "ls/goat.topo");
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("programmable: spine1,leaf0"), std::string::npos) << b.out;
  EXPECT_EQ(AfterTwoLines(a.out), AfterTwoLines(b.out));
}

// Real time from the bundled testbed file: the same switches, scripts and job as the default demo
// (past the files' two header lines; the sockets and EAL prefixes name the run's directory and
// process), and exact results.
TEST(GoatTool, DemoRunsTheBundledTestbedFileAsTheDefault) {
  const std::string dir = Dir();
  RunResult a = RunCommandIn(dir, kGoat + " demo --rounds 1 --out-dir " + dir + "a");
  RunResult b = RunCommandIn(dir, kGoat + " demo --rounds 1 --out-dir " + dir + "b --topology " +
                                      SWEMU_SOURCE_DIR "/configs/goat_testbed/goat.topo");
  ASSERT_EQ(a.status, 0) << a.out << a.err;
  ASSERT_EQ(b.status, 0) << b.out << b.err;
  EXPECT_NE(b.out.find("every result equals the exact sum"), std::string::npos) << b.out;
  auto body = [&](const std::string& path, const std::string& run_dir) {
    std::string text = AfterTwoLines(ReadText(path));
    for (auto at = text.find(run_dir); at != std::string::npos; at = text.find(run_dir, at)) {
      text.replace(at, run_dir.size(), "DIR");
    }
    return std::regex_replace(text, std::regex("swemu-goat-[0-9]+"), "PREFIX");
  };
  for (const char* file : {"s1.cli", "s2.cli", "s3.cli", "s1.ini", "s3.ini", "goat.job"}) {
    EXPECT_EQ(body(dir + "a/" + file, dir + "a"), body(dir + "b/" + file, dir + "b")) << file;
  }
}

}  // namespace
}  // namespace swemu::testing
