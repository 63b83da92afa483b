// What a hostile and careless user tried (issue "Reliability"), run against the built tools:
// every count option refuses negative, NaN, inf and too-large values; every output option
// refuses empty paths and directories; a device or a FIFO given as an output is written through
// and stays what it was; a full disk leaves the earlier output whole; each with one line and
// exit status 2, and nothing touched.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {
namespace fs = std::filesystem;

const std::string kTools = SWEMU_BINARY_DIR "/tools/";
const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";
const std::string kPcap = kConfigs + "pcap/h0_to_all.pcap";

std::string Dir() {
  const std::string dir = TestDirFor("hostile-");
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

bool IsCharDevice(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// One line on stderr starting with the tool's name ("swemu-atp: ", "swemu-goat sim: "),
// status 2, nothing on stdout.
void ExpectOneLineRefusal(const RunResult& run, const std::string& tool, const std::string& args) {
  EXPECT_EQ(run.status, 2) << tool << " " << args << "\n" << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << tool << " " << args << "\n"
                                                                 << run.err;
  EXPECT_TRUE(run.err.rfind(tool + ":", 0) == 0 || run.err.rfind(tool + " ", 0) == 0)
      << args << "\n" << run.err;
  EXPECT_EQ(run.out, "") << tool << " " << args;
}

struct CountOption {
  std::string tool;
  std::string before;  // the command and the options it needs
  std::string option;
};

// Count and number options of every tool, each with what it needs to get that far.
std::vector<CountOption> CountOptions() {
  const std::string sim = "sim --topology " + kConfigs + "atp_two_rack.topo --job " + kConfigs +
                          "atp_two_rack.job";
  const std::string offline = "--offline --config " + kConfigs + "leaf.ini --in 0=" + kPcap;
  std::vector<CountOption> options;
  for (const char* o : {"--layers", "--iterations", "--seed", "--lanes", "--loss"}) {
    options.push_back({"swemu-atp", sim, o});
  }
  for (const char* o : {"--workers", "--racks", "--elements", "--aggregators", "--timeout",
                        "--iterations", "--layers"}) {
    options.push_back({"swemu-atp", "demo", o});
  }
  for (const char* o : {"--flows", "--count", "--seed", "--size", "--rate", "--start"}) {
    options.push_back({"swemu-gen", "--out /dev/null", o});
  }
  for (const char* o : {"--iterations", "--layers", "--workers", "--elements", "--rtt"}) {
    options.push_back({"swemu-gen", "--workload atp --out /dev/null", o});
  }
  for (const char* o : {"--loop", "--pps", "--mbps", "--duration", "--expect", "--wait"}) {
    options.push_back({"swemu-replay", "--port net_null0 --in " + kPcap, o});
  }
  options.push_back({"swemu-replay", "--port net_null0 --in " + kPcap, "--multiplier"});
  for (const char* o : {"--bin", "--top"}) options.push_back({"swemu-analyze", kPcap, o});
  options.push_back({"swemu-cli", "--socket /nonexistent.sock", "--timeout"});
  for (const char* o : {"--workers", "--per-switch", "--seed", "--rounds", "--elements"}) {
    options.push_back({"swemu-goat", "sim", o});
  }
  options.push_back({"swemu-goat", "demo", "--workers"});
  for (const char* o : {"--seed", "--load", "--rto-min"}) options.push_back({"swemu-dlcp", "sim", o});
  options.push_back({"swemu-plink", "experiment", "--seed"});
  for (const char* o : {"--seed", "--iterations"}) options.push_back({"swemu-pcn", "sim", o});
  for (const char* o : {"--seed", "--max-events", "--max-virtual-time", "--telemetry-period"}) {
    options.push_back({"swemu", offline + " --out-dir OUT --telemetry OUT/t.csv", o});
  }
  for (const char* o : {"--run-for", "--stats-interval"}) {
    options.push_back({"swemu", "--config " + kConfigs + "leaf.ini", o});
  }
  return options;
}

std::string Binary(const std::string& tool) {
  return tool == "swemu" ? kSwemuBinary : kTools + tool;
}

TEST(HostileUserTest, EveryCountOptionRefusesNegativeNanInfAndHugeValues) {
  const std::string dir = Dir();
  std::ofstream(dir + "earlier.txt") << "earlier";
  for (const CountOption& c : CountOptions()) {
    for (const char* bad : {"-1", "nan", "inf", "-inf", "1e999", "99999999999999999999999",
                            "0x", "''"}) {
      std::string before = c.before;
      for (std::size_t at = before.find("OUT"); at != std::string::npos; at = before.find("OUT"))
        before.replace(at, 3, dir + "out");
      const std::string args = before + " " + c.option + " " + bad;
      const RunResult run = RunCommandIn(dir, Binary(c.tool) + " " + args);
      ExpectOneLineRefusal(run, c.tool, args);
      EXPECT_FALSE(fs::exists(dir + "out")) << args;
    }
  }
  EXPECT_EQ(ReadText(dir + "earlier.txt"), "earlier");
}

struct OutputOption {
  std::string tool;
  std::string args;  // PATH stands for the output
};

std::vector<OutputOption> OutputOptions() {
  const std::string offline = "--offline --config " + kConfigs + "leaf.ini --in 0=" + kPcap;
  return {
      {"swemu-gen", "--out PATH"},
      {"swemu-gen", "--workload atp --layers 1 --out PATH"},
      {"swemu-analyze", kPcap + " --json PATH"},
      {"swemu-analyze", kPcap + " --packets PATH"},
      {"swemu", offline + " --out-dir DIR/o --telemetry PATH"},
      {"swemu-dlcp", "sim --tors 2 --hosts-per-tor 2 --scale 1024 --csv PATH"},
      {"swemu-goat", "plan --json PATH"},
      {"swemu-goat", "sim --csv PATH"},
      {"swemu-plink",
       "experiment --fanout 2,2 --rack-hosts 2,2,2,2 --assignments 1 --background 0 --csv PATH"},
  };
}

std::string With(std::string args, const std::string& path, const std::string& dir) {
  for (std::size_t at = args.find("PATH"); at != std::string::npos; at = args.find("PATH"))
    args.replace(at, 4, path);
  for (std::size_t at = args.find("DIR/"); at != std::string::npos; at = args.find("DIR/"))
    args.replace(at, 4, dir);
  return args;
}

TEST(HostileUserTest, EmptyPathsAndDirectoriesAreRefusedBeforeAnythingIsWritten) {
  const std::string dir = Dir();
  for (const OutputOption& o : OutputOptions()) {
    for (const std::string& path : {std::string("''"), dir, dir + "adir/"}) {
      const std::string args = With(o.args, path, dir);
      const RunResult run = RunCommandIn(dir, Binary(o.tool) + " " + args);
      ExpectOneLineRefusal(run, o.tool, args);
    }
  }
  // Only the captured stdout and stderr are in the directory.
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    EXPECT_TRUE(name == "stdout" || name == "stderr") << name;
  }
}

// Before the fix, swemu-gen --out /tmp/dn renamed a regular file over the device node.
TEST(HostileUserTest, ACharacterDeviceGivenAsAnOutputStaysADevice) {
  const std::string dir = Dir();
  const std::string node = dir + "null";
  ASSERT_EQ(::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0) << "needs root";
  for (const OutputOption& o : OutputOptions()) {
    const std::string args = With(o.args, node, dir);
    const RunResult run = RunCommandIn(dir, Binary(o.tool) + " " + args);
    EXPECT_EQ(run.status, 0) << o.tool << " " << args << "\n" << run.err;
    EXPECT_TRUE(IsCharDevice(node)) << o.tool << " " << args;
  }
  const RunResult csv = RunCommandIn(dir, kTools + "swemu-analyze " + kPcap + " --csv " + dir);
  EXPECT_EQ(csv.status, 0) << csv.err;
  EXPECT_TRUE(IsCharDevice(node));
}

// A full disk (/dev/full): one line, status 2, and the earlier outputs stay whole.
TEST(HostileUserTest, AFullDiskEndsWithOneLineAndLeavesEarlierOutputsWhole) {
  const std::string dir = Dir();
  const std::string full = dir + "full";
  ASSERT_EQ(::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0) << "needs root";
  for (const OutputOption& o : OutputOptions()) {
    const std::string args = With(o.args, full, dir);
    const RunResult run = RunCommandIn(dir, Binary(o.tool) + " " + args);
    EXPECT_EQ(run.status, 2) << o.tool << " " << args << "\n" << run.err;
    EXPECT_NE(run.err.find(full), std::string::npos) << o.tool << " " << args << "\n" << run.err;
    EXPECT_TRUE(IsCharDevice(full));
  }
  // A --csv directory whose files are earlier ones: a run that fails changes none of them.
  fs::create_directories(dir + "csv");
  std::ofstream(dir + "csv/throughput.csv") << "earlier";
  const RunResult run = RunCommandIn(
      dir, kTools + "swemu-analyze " + kPcap + " --csv " + dir + "csv --json " + full);
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(ReadText(dir + "csv/throughput.csv"), "earlier");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir + "csv"), fs::directory_iterator()), 1);
}

// Every file under `dir`, by path relative to it, with its contents.
std::map<std::string, std::string> Contents(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = ReadText(e.path());
  }
  return files;
}

// Tools that write a directory of outputs, on a small tmpfs: the first run fills the
// directory; with the disk then full, a second run ends with one line and status 2, and the
// first run's files are all there, unchanged, with nothing beside them.
TEST(HostileUserTest, AFullDiskLeavesAnEarlierRunsDirectoryOfOutputsWhole) {
  const std::string dir = Dir();
  const std::string disk = dir + "disk/";
  fs::create_directories(disk);
  ASSERT_EQ(std::system(("mount -t tmpfs -o size=2m swemu-full " + disk).c_str()), 0)
      << "needs root";
  struct Unmount {
    std::string at;
    ~Unmount() { EXPECT_EQ(std::system(("umount " + at).c_str()), 0); }
  } unmount{disk};
  const std::string atp_sim = "sim --topology " + kConfigs + "atp_two_rack.topo --job " +
                              kConfigs + "atp_two_rack.job --layers 1 --iterations 1";
  const std::vector<OutputOption> tools = {
      {"swemu-atp", atp_sim + " --out-dir OUT"},
      {"swemu-pcn", "sim --duration 5s --ddl-start 1s --iterations 1 --idle 1s --out OUT"},
      {"swemu", "--offline --config " + kConfigs + "leaf.ini --in 0=" + kPcap + " --out-dir OUT"},
      {"swemu-analyze", kPcap + " --csv OUT"},
  };
  for (const OutputOption& o : tools) {
    std::string args = o.args;
    args.replace(args.find("OUT"), 3, disk + "out");
    const RunResult first = RunCommandIn(dir, Binary(o.tool) + " " + args);
    ASSERT_EQ(first.status, 0) << o.tool << " " << args << "\n" << first.err;
    const std::map<std::string, std::string> earlier = Contents(disk + "out");
    ASSERT_FALSE(earlier.empty()) << o.tool;
    {  // fill what is left
      std::ofstream fill(disk + "fill");
      const std::string block(4096, 'x');
      for (int i = 0; i < 1024 && fill; ++i) fill << block << std::flush;
    }
    const RunResult second = RunCommandIn(dir, Binary(o.tool) + " " + args);
    EXPECT_EQ(second.status, 2) << o.tool << " " << args << "\n" << second.err;
    EXPECT_EQ(std::count(second.err.begin(), second.err.end(), '\n'), 1) << o.tool << second.err;
    EXPECT_NE(second.err.find(disk + "out"), std::string::npos) << o.tool << second.err;
    EXPECT_TRUE(Contents(disk + "out") == earlier) << o.tool << " changed the earlier files";
    fs::remove_all(disk + "out");
    fs::remove(disk + "fill");
    EXPECT_TRUE(fs::is_empty(disk)) << o.tool << " left files behind";
  }
}

TEST(HostileUserTest, APcapFromAFifoIsRefusedAtOnceNotAHang) {
  const std::string dir = Dir();
  const std::string fifo = dir + "in.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const RunResult run = RunSwemuIn(dir, "--offline --config " + kConfigs + "leaf.ini --in 0=" +
                                            fifo + " --out-dir " + dir + "o");
  ExpectOneLineRefusal(run, "swemu", "--in 0=" + fifo);
  EXPECT_NE(run.err.find("not a regular file"), std::string::npos) << run.err;
}

TEST(HostileUserTest, OfflineRejectsRunForAndRealTimeRejectsAFloodOfStats) {
  const std::string dir = Dir();
  const std::string offline = "--offline --config " + kConfigs + "leaf.ini --in 0=" + kPcap +
                              " --out-dir " + dir + "o";
  ExpectOneLineRefusal(RunSwemuIn(dir, offline + " --run-for 10"), "swemu", "--run-for");
  ExpectOneLineRefusal(RunSwemuIn(dir, "--config " + kConfigs + "leaf.ini --stats-interval 1ms"),
                       "swemu", "--stats-interval 1ms");
  ExpectOneLineRefusal(RunSwemuIn(dir, "--config " + kConfigs + "leaf.ini --control-socket ''"),
                       "swemu", "--control-socket ''");
  EXPECT_FALSE(fs::exists(dir + "o"));
}

// The processes whose command line mentions `text` (a test's own directory).
std::vector<pid_t> ProcessesMentioning(const std::string& text) {
  std::vector<pid_t> found;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = ReadText(e.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(text) != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

// Ctrl-C on the demo once left its swemu polling a core and /var/run/dpdk/swemu-atp-<pid>-hosts
// behind. Now the demo stops its switches, removes its runtime directories and says it was
// interrupted (status 130).
TEST(HostileUserTest, InterruptingTheDemoStopsItsSwitchesAndRemovesItsRuntimeDirectories) {
  const std::string dir = Dir();
  const pid_t demo = fork();
  ASSERT_GE(demo, 0);
  if (demo == 0) {
    freopen((dir + "stdout").c_str(), "w", stdout);
    freopen((dir + "stderr").c_str(), "w", stderr);
    const std::string atp = kTools + "swemu-atp";
    const std::string out = dir + "demo";
    execl(atp.c_str(), atp.c_str(), "demo", "--layers", "1", "--iterations", "1000", "--backoff",
          "--out-dir", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const std::string hosts = "/var/run/dpdk/swemu-atp-" + std::to_string(demo) + "-hosts";
  for (int i = 0; i < 600 && !fs::exists(hosts); ++i) usleep(50'000);
  ASSERT_TRUE(fs::exists(hosts)) << ReadText(dir + "stderr");
  ASSERT_FALSE(ProcessesMentioning(dir + "demo/").empty());  // its swemu runs
  usleep(500'000);
  ASSERT_EQ(kill(demo, SIGINT), 0);
  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 300 && reaped == 0; ++i) {
    reaped = waitpid(demo, &status, WNOHANG);
    if (reaped == 0) usleep(50'000);
  }
  if (reaped == 0) kill(demo, SIGKILL);
  ASSERT_EQ(reaped, demo) << "the demo did not end within 15 s of SIGINT";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_NE(ReadText(dir + "stderr").find("swemu-atp: interrupted by SIGINT"), std::string::npos)
      << ReadText(dir + "stderr");
  EXPECT_TRUE(ProcessesMentioning(dir + "demo/").empty());
  EXPECT_FALSE(fs::exists(hosts));
  EXPECT_FALSE(fs::exists("/var/run/dpdk/swemu-atp-" + std::to_string(demo) + "-rack0"));
}

}  // namespace
}  // namespace swemu::testing
