// swemu-atp publish, worker and ps as a user runs them on servers: the published files, a
// parameter packet through the published switch (swemu offline) to every worker's port at the
// job's group, and the one-line refusals of bad hosts lists, job files, ranks and addresses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/atp.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kAtp = SWEMU_BINARY_DIR "/tools/swemu-atp";

std::string Dir() {
  const std::string dir = TestDirFor("atp-server-");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

const char* kHosts =
    "# name role ip mac port\n"
    "w0 worker 10.9.0.1 02:00:00:00:09:01 0\n"
    "w1 worker 10.9.0.2 learn 1   # its MAC is not known\n"
    "ps ps 10.9.0.254 02:00:00:00:09:fe 2\n";

RunResult Publish(const std::string& dir, const std::string& hosts, const std::string& args = "") {
  std::ofstream(dir + "hosts") << hosts;
  return RunCommandIn(dir,
                      kAtp + " publish --hosts " + dir + "hosts --out-dir " + dir + "pub " + args);
}

// The number before `label` in `text` (e.g. "job 1: " then "1234 gradient packets"); -1 if absent.
long Count(const std::string& text, const std::string& label) {
  const std::size_t at = text.find(label);
  if (at == std::string::npos) return -1;
  return std::stol(text.substr(at + label.size()));
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(AtpServerTest, PublishWritesTheSwitchFilesAndTheJobEveryHostReads) {
  const std::string dir = Dir();
  const RunResult run = Publish(dir, kHosts, "--job-id 7 --group 239.2.0.1 --elements 32");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string job = ReadText(dir + "pub/job");
  EXPECT_NE(job.find("id = 7\n"), std::string::npos) << job;
  EXPECT_NE(job.find("group = 239.2.0.1\n"), std::string::npos) << job;
  EXPECT_NE(job.find("elements = 32\n"), std::string::npos) << job;
  EXPECT_NE(job.find("worker = w0 02:00:00:00:09:01 10.9.0.1 tor:0\n"), std::string::npos);
  EXPECT_NE(job.find("worker = w1 learn 10.9.0.2 tor:1\n"), std::string::npos) << job;
  EXPECT_NE(job.find("ps = ps 02:00:00:00:09:fe 10.9.0.254 tor:2\n"), std::string::npos);
  const std::string cli = ReadText(dir + "pub/switch.cli");
  // Parameter packets to the workers' ports only; the at-PS twin is job 8 on the next group.
  EXPECT_NE(cli.find("mc_node_create 0 0 1\n"), std::string::npos) << cli;
  EXPECT_NE(cli.find("table_add atp_job aggregate 7 => 1\n"), std::string::npos) << cli;
  EXPECT_NE(cli.find("table_add atp_job forward_only 8 => 1\n"), std::string::npos) << cli;
  EXPECT_NE(cli.find("table_add dmac multicast 01:00:5e:02:00:02 => 1\n"), std::string::npos);
  EXPECT_NE(cli.find("table_add dmac forward 02:00:00:00:09:fe => 2\n"), std::string::npos);
  EXPECT_NE(cli.find("table_set_default dmac multicast 2\n"), std::string::npos) << cli;
  const std::string ini = ReadText(dir + "pub/switch.ini");
  EXPECT_NE(ini.find("ports = 3\n"), std::string::npos) << ini;
  EXPECT_NE(ini.find("cli = switch.cli\n"), std::string::npos) << ini;
  // swemu loads the config and runs the script.
  const RunResult sw = RunCommandIn(
      dir, kSwemuBinary + " --config " + dir + "pub/switch.ini --offline --out-dir " + dir + "off");
  EXPECT_EQ(sw.status, 0) << sw.err;
}

TEST(AtpServerTest, AHostsListWithKnownMacsFloodsBroadcastsOnly) {
  const std::string dir = Dir();
  ASSERT_EQ(
      Publish(dir, "a worker 10.0.0.1 02:00:00:00:00:01 3\nb ps 10.0.0.2 02:00:00:00:00:02 5\n",
              "--port-devargs 3=net_tap0,iface=t3")
          .status,
      0);
  const std::string cli = ReadText(dir + "pub/switch.cli");
  EXPECT_NE(cli.find("table_add dmac multicast ff:ff:ff:ff:ff:ff => 2\n"), std::string::npos);
  EXPECT_EQ(cli.find("table_set_default"), std::string::npos) << cli;
  const std::string ini = ReadText(dir + "pub/switch.ini");
  EXPECT_NE(ini.find("ports = 6\n"), std::string::npos) << ini;
  EXPECT_NE(ini.find("devargs = net_tap0,iface=t3\n"), std::string::npos) << ini;
}

TEST(AtpServerTest, BadHostsListsAreRefusedWithOneLineAndNothingWritten) {
  const std::string ps = "ps ps 10.0.0.9 learn 9\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"w0 worker 10.0.0.1 learn 0\n", "no ps line"},
      {ps, "0 workers"},
      {ps + ps, "a second ps"},
      {ps + "w0 boss 10.0.0.1 learn 0\n", "neither worker nor ps"},
      {ps + "w0 worker 10.0.0.1 learn\n", "expected NAME ROLE IP MAC PORT"},
      {ps + "w0 worker 10.0.0.1 learn 0 extra\n", "expected NAME ROLE IP MAC PORT"},
      {ps + "w0 worker 10.0.0.9 learn 0\n", "IP 10.0.0.9 twice"},
      {ps + "w0 worker 10.0.0.1 learn 9\n", "switch port 9 twice"},
      {ps + "ps worker 10.0.0.1 learn 0\n", "name ps twice"},
      {ps + "w0 worker 10.0.0.1 01:00:5e:00:00:01 0\n", "not a host's unicast MAC"},
      {ps + "w0 worker 10.0.0.1 02:00:00:00:00:zz 0\n", "w0"},
      {ps + "w0 worker 239.0.0.1 learn 0\n", "not a host's unicast address"},
      {ps + "w0 worker 10.0.0.1 learn 5000\n", "port"},
      {ps + "w0 worker 10.0.0.1 learn tor:0\n", "one switch: PORT, not tor:0"},
  };
  for (const auto& [hosts, problem] : cases) {
    const std::string dir = Dir();
    const RunResult run = Publish(dir, hosts);
    EXPECT_EQ(run.status, 2) << hosts << run.err;
    EXPECT_EQ(Lines(run.err), 1) << hosts << run.err;
    EXPECT_NE(run.err.find(problem), std::string::npos) << hosts << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "pub")) << hosts;
  }
  std::string many = "ps ps 10.0.1.1 learn 40\n";
  for (int w = 0; w < 33; ++w) {
    many += "w" + std::to_string(w) + " worker 10.0.0." + std::to_string(w + 1) + " learn " +
            std::to_string(w) + "\n";
  }
  const RunResult run = Publish(Dir(), many);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("33 workers, need 1..32"), std::string::npos) << run.err;
  for (const char* option : {"--group 10.0.0.1", "--job-id 65535", "--elements 1000",
                             "--link-rate fast", "--port-devargs x=y", "--switch a:b"}) {
    const RunResult bad = Publish(Dir(), kHosts, option);
    EXPECT_EQ(bad.status, 2) << option;
    EXPECT_EQ(Lines(bad.err), 1) << option << bad.err;
  }
}

// A parameter packet of job 1 from the PS (10.9.0.254) to the job's group, as the PS's kernel
// socket sends it: Ethernet | IPv4 | UDP 9000 -> 9000 | ATP, 64 float elements.
std::vector<uint8_t> ParameterPacket(uint32_t seq) {
  std::vector<uint8_t> f(kAtpHeaderOffset + kAtpHeaderLen + 64 * 4, 0);
  const uint8_t eth[14] = {0x01, 0x00, 0x5e, 0x01, 0x01, 0x01, 0x02, 0, 0, 0, 0x09, 0xfe, 0x08, 0};
  std::copy(eth, eth + 14, f.begin());
  uint8_t* ip = f.data() + 14;
  const uint16_t ip_len = static_cast<uint16_t>(f.size() - 14);
  const uint8_t ip_header[20] = {0x45,
                                 0,
                                 uint8_t(ip_len >> 8),
                                 uint8_t(ip_len),
                                 0,
                                 0,
                                 0x40,
                                 0,
                                 1,
                                 17,
                                 0,
                                 0,
                                 10,
                                 9,
                                 0,
                                 254,
                                 239,
                                 1,
                                 1,
                                 1};
  std::copy(ip_header, ip_header + 20, ip);
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += (ip[i] << 8) | ip[i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  ip[10] = static_cast<uint8_t>(~sum >> 8);
  ip[11] = static_cast<uint8_t>(~sum);
  uint8_t* udp = ip + 20;
  const uint16_t udp_len = static_cast<uint16_t>(ip_len - 20);
  const uint8_t udp_header[8] = {0x23, 0x28, 0x23, 0x28, uint8_t(udp_len >> 8), uint8_t(udp_len),
                                 0,    0};
  std::copy(udp_header, udp_header + 8, udp);
  uint8_t* atp = udp + 8;
  atp[0] = static_cast<uint8_t>(kAtpVersion << kAtpVersionShift) | kAtpFlagParam | kAtpFlagFloat;
  atp[5] = 1;   // job 1
  atp[7] = 64;  // elements
  atp[8] = static_cast<uint8_t>(seq >> 24);
  atp[11] = static_cast<uint8_t>(seq);
  atp[15] = 3;  // bitmap: workers 0 and 1
  for (int i = 0; i < 64; ++i) StoreAtpFloat(atp + kAtpHeaderLen, i, 0.5f * i);
  return f;
}

std::vector<std::vector<uint8_t>> Frames(const std::string& path) {
  std::vector<std::vector<uint8_t>> frames;
  auto reader = PcapReader::Open(path);
  if (!reader.ok()) return frames;
  PcapRecord record;
  while ((*reader)->Next(&record)) frames.push_back(record.bytes);
  return frames;
}

TEST(AtpServerTest, TheSwitchSendsAParameterPacketToEveryWorkerAtTheJobsGroup) {
  const std::string dir = Dir();
  ASSERT_EQ(Publish(dir, kHosts).status, 0);
  {
    auto writer = PcapWriter::Open(dir + "param.pcap");
    ASSERT_TRUE(writer.ok()) << writer.message();
    for (uint32_t seq = 0; seq < 3; ++seq) {
      const std::vector<uint8_t> frame = ParameterPacket(seq);
      (*writer)->Write(1000 * (seq + 1), frame.data(), static_cast<uint32_t>(frame.size()));
    }
    ASSERT_TRUE((*writer)->Close().ok());
  }
  const RunResult sw = RunCommandIn(dir, kSwemuBinary + " --config " + dir +
                                             "pub/switch.ini --offline --in 2=" + dir +
                                             "param.pcap --out-dir " + dir + "off");
  ASSERT_EQ(sw.status, 0) << sw.err;
  const std::vector<uint8_t> sent = ParameterPacket(0);
  for (const char* worker_port : {"port0.pcap", "port1.pcap"}) {
    const auto frames = Frames(dir + "off/" + worker_port);
    ASSERT_EQ(frames.size(), 3u) << worker_port;
    // Unchanged: to the group's MAC and IP and the job's port, where each worker's kernel socket
    // (joined to the group, bound to the port) takes it.
    EXPECT_EQ(frames[0], sent) << worker_port;
  }
  EXPECT_TRUE(Frames(dir + "off/port2.pcap").empty());  // not back to the PS
}

// A published job whose worker 0 is this machine's 127.0.0.1 and whose PS (127.0.0.2) no one
// runs; worker 1 is on an address no machine here has.
std::string LoopbackJob(const std::string& dir, uint16_t port) {
  const RunResult run = Publish(dir,
                                "w0 worker 127.0.0.1 learn 0\nw1 worker 192.0.2.1 learn 1\n"
                                "ps ps 127.0.0.2 learn 2\n",
                                "--udp-port " + std::to_string(port));
  EXPECT_EQ(run.status, 0) << run.err;
  return dir + "pub/job";
}

TEST(AtpServerTest, AWorkerOrPsRefusesABadJobOrRankWithOneLine) {
  const std::string dir = Dir();
  const std::string job = LoopbackJob(dir, 19301);
  std::ofstream(dir + "nops.job") << "[job]\nid = 1\ngroup = 239.1.1.1\n"
                                     "worker = w0 learn 127.0.0.1 tor:0\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"worker --job " + dir + "nops.job --rank 0", "no ps given"},
      {"worker --job " + dir + "missing.job --rank 0", "missing.job"},
      {"worker --job " + job + " --rank 2", "the job has 2 workers (ranks 0..1)"},
      {"worker --job " + job + " --rank 1", "192.0.2.1 in the job file, not an address of this"},
      {"worker --job " + job + " --rank 0 --model LeNet", "--model"},
      {"worker --job " + job + " --rank 0 --elements 64 --model VGG16", "--elements"},
      {"worker --job " + job + " --rank 0 --timeout 0", "--timeout"},
      {"worker --job " + job + " --rank 0 --both --at-ps", "--both: not with --at-ps"},
      {"worker --job " + job + " --rank 0 --port net_null0", "gives w0's MAC as learn"},
      {"ps --job " + job + " --port net_null0", "MAC as learn"},
      {"ps --job " + dir + "nops.job", "no ps given"},
      {"ps --job " + job + " --idle-exit -1", "--idle-exit"},
  };
  for (const auto& [args, problem] : cases) {
    const RunResult run = RunCommandIn(dir, kAtp + " " + args);
    EXPECT_EQ(run.status, 2) << args << run.err;
    EXPECT_EQ(Lines(run.err), 1) << args << run.err;
    EXPECT_NE(run.err.find(problem), std::string::npos) << args << run.err;
  }
}

TEST(AtpServerTest, AWorkerWhoseSwitchOrPsDoesNotAnswerStopsWithinItsTimeout) {
  const std::string dir = Dir();
  const std::string job = LoopbackJob(dir, 19302);
  const auto start = std::chrono::steady_clock::now();
  const RunResult run = RunCommandIn(
      dir, kAtp + " worker --job " + job + " --rank 0 --elements 640 --iterations 1 --timeout 0.5");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(Lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("no parameter packet of job 1 in 0.5 s"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("127.0.0.2:19302"), std::string::npos) << run.err;
  EXPECT_LT(seconds, 5.0);
}

TEST(AtpServerTest, ASecondWorkerOfARankAlreadyTakenIsRefused) {
  const std::string dir = Dir();
  const std::string job = LoopbackJob(dir, 19303);
  std::filesystem::create_directories(dir + "a");
  std::filesystem::create_directories(dir + "b");
  RunResult first;
  std::thread runner([&] {
    first = RunCommandIn(dir + "a/", kAtp + " worker --job " + job +
                                         " --rank 0 --elements 640 --iterations 1 --timeout 3");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const RunResult second = RunCommandIn(
      dir + "b/", kAtp + " worker --job " + job + " --rank 0 --elements 640 --timeout 1");
  runner.join();
  EXPECT_EQ(second.status, 2) << second.err;
  EXPECT_EQ(Lines(second.err), 1) << second.err;
  EXPECT_NE(second.err.find("127.0.0.1:19303 is taken"), std::string::npos) << second.err;
  EXPECT_EQ(first.status, 1) << first.err;  // no PS: it times out
}

// The proof on one machine as on many: the published switch in real time on net_af_packet
// (swemu --topology --backend netns), each host in its own network namespace on a veth pair, so
// every packet crosses a kernel network stack as between servers. 2 workers, 2 x 4 MB in-network
// then 2 x 4 MB at the PS (the at-PS twin job, forwarded by the switch): rank 0
// on kernel UDP sockets (its MAC `learn`: reached by flooding), rank 1 on a DPDK port
// (net_af_packet on its eth0).
TEST(AtpServerTest, WorkersAndPsInNamespacesAggregateInThePublishedSwitch) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = Dir();
  ASSERT_EQ(Publish(dir,
                    "asw0 worker 10.9.0.1 learn 0\n"
                    "asw1 worker 10.9.0.2 02:00:00:00:09:02 1\n"
                    "asps ps 10.9.0.254 02:00:00:00:09:fe 2\n",
                    "--switch astor")
                .status,
            0);
  const std::string job = dir + "pub/job";
  const std::string worker = "swemu-atp worker --job " + job + " --elements 1000000 --iterations 2";
  std::ofstream(dir + "net.topo")
      << "[topology]\nswitch = astor " << dir << "pub/switch.ini\n"
      << "host = astor:0 name=asw0 ip=10.9.0.1/24 mac=02:00:00:00:09:01\n"
      << "host = astor:1 name=asw1 ip=10.9.0.2/24 mac=02:00:00:00:09:02\n"
      << "host = astor:2 name=asps ip=10.9.0.254/24 mac=02:00:00:00:09:fe\n"
      << "run = asps swemu-atp ps --job " << job << " --idle-exit 3\n"
      << "run = asw0 sleep 1; " << worker << " --rank 0 && " << worker << " --rank 0 --at-ps\n"
      << "run = asw1 sleep 1; " << worker << " --rank 1 --port net_af_packet0,iface=eth0 && "
      << worker << " --rank 1 --port net_af_packet0,iface=eth0 --at-ps\n";
  const auto start = std::chrono::steady_clock::now();
  const RunResult run = RunCommandIn(dir, "timeout 90 " + kSwemuBinary + " --topology " + dir +
                                              "net.topo --backend netns --out-dir " + dir + "out");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  EXPECT_LT(seconds, 60);
  for (const char* log : {"out/asw0-run1.log", "out/asw1-run2.log"}) {
    const std::string out = ReadText(dir + log);
    // Exact sums (a larger error fails the worker), both iterations.
    EXPECT_NE(out.find("in-network     1 "), std::string::npos) << out;
    EXPECT_NE(out.find("in-network     2 "), std::string::npos) << out;
    EXPECT_NE(out.find("at-PS          2 "), std::string::npos) << out;
  }
  EXPECT_NE(ReadText(dir + "out/asw0-run1.log").find("over kernel UDP sockets"), std::string::npos);
  EXPECT_NE(ReadText(dir + "out/asw1-run2.log").find("over DPDK port net_af_packet0"),
            std::string::npos);
  // The PS's line per job: job 1 aggregated in the switch, its at-PS twin (job 2) at the PS.
  const std::string ps = ReadText(dir + "out/asps-run0.log");
  auto in_switch = [&ps](const std::string& job) {
    const std::size_t line = ps.find("\n" + job + ": ");
    const std::size_t at = ps.find("% of elements aggregated in the switch", line);
    if (line == std::string::npos || at == std::string::npos) return -1.0;
    return std::stod(ps.substr(ps.rfind(' ', at - 1) + 1));
  };
  EXPECT_GT(in_switch("job 1"), 50) << ps;
  // One gradient packet per seq reaches the PS, the switch's result: each worker's rack is the
  // switch (fan-in 2), not its port (fan-in 1 would send every worker's packet on).
  EXPECT_EQ(ps.find("job 1: 0 gradient packets"), std::string::npos) << ps;
  EXPECT_LT(Count(ps, "job 1: "), Count(ps, "job 2: ") * 2 / 3) << ps;
  EXPECT_EQ(in_switch("job 2"), 0) << ps;
  EXPECT_EQ(ps.find("job 2: 0 gradient packets"), std::string::npos) << ps;
}

// The README's ATP job on servers (configs/atp_netns.topo) shortened: the bundled switch and
// hosts (configs/atp_netns/network.topo: 4 workers and a PS, each in its own namespace, swemu on
// net_af_packet, every port shaped to 1 Gbit/s) with ResNet-50's first layers, one iteration
// in-network, then one at the PS. Every sum is exact (a worker fails otherwise) and every worker
// finishes in-network sooner than at the PS, where the PS takes 4 packets per seq.
TEST(AtpServerTest, TheBundledJobInNamespacesIsExactAndFasterInNetwork) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = Dir();
  const std::string job = SWEMU_SOURCE_DIR "/configs/atp_netns/job";
  std::ofstream topo(dir + "net.topo");
  topo << "[topology]\ninclude = " SWEMU_SOURCE_DIR "/configs/atp_netns/network.topo\n"
       << "run = atpps swemu-atp ps --job " << job << " --idle-exit 3\n";
  for (int rank = 0; rank < 4; ++rank) {
    const std::string worker = "swemu-atp worker --job " + job + " --rank " +
                               std::to_string(rank) + " --layers 25 --iterations 1 --timeout 60";
    topo << "run = atpw" << rank << " sleep 1; " << worker << " --both\n";
  }
  topo.close();
  const RunResult run = RunCommandIn(dir, "timeout 100 " + kSwemuBinary + " --topology " + dir +
                                              "net.topo --backend netns --out-dir " + dir + "out");
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string log = ReadText(dir + "out/atpw" + std::to_string(rank) + "-run" +
                                     std::to_string(rank + 1) + ".log");
    const std::size_t in_network = log.find("\nin-network     1 ");
    const std::size_t at_ps = log.find("\nat-PS          1 ");
    ASSERT_NE(in_network, std::string::npos) << log;
    ASSERT_NE(at_ps, std::string::npos) << log;
    // time_ms, the column after the iteration.
    const double in_network_ms = std::stod(log.substr(in_network + 19));
    const double at_ps_ms = std::stod(log.substr(at_ps + 19));
    // Sanitised, the hosts' CPU bounds both passes (in-network ran 6.2 s against 5.5 at the
    // PS under ASan): the speed claim holds for the real build only; the sums still count.
    if (!kSanitized) {
      EXPECT_LT(in_network_ms, at_ps_ms) << log;
    }
    EXPECT_NE(log.find("speed ratio in-network / at-PS: "), std::string::npos) << log;
  }
  const std::string ps = ReadText(dir + "out/atpps-run0.log");
  EXPECT_LT(Count(ps, "job 1: "), Count(ps, "job 2: ") * 2 / 3) << ps;
}

// A job file that is not the switch's (another job id, another element count): the switch drops
// the gradients (atp_unknown_job, atp_bad_elements), and the worker ends after its timeout with
// one line saying what to check.
TEST(AtpServerTest, AWorkerWithAJobFileTheSwitchDoesNotKnowStopsWithOneLine) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = Dir();
  ASSERT_EQ(Publish(dir,
                    "amw0 worker 10.9.1.1 02:00:00:00:19:01 0\n"
                    "amps ps 10.9.1.254 02:00:00:00:19:fe 1\n",
                    "--switch amtor")
                .status,
            0);
  std::string job = ReadText(dir + "pub/job");
  std::string other_id = job, other_elements = job;
  other_id.replace(other_id.find("id = 1\n"), 7, "id = 5\n");
  other_elements.replace(other_elements.find("elements = 64\n"), 14, "elements = 32\n");
  std::ofstream(dir + "id.job") << other_id;
  std::ofstream(dir + "elements.job") << other_elements;
  const std::string worker = "swemu-atp worker --rank 0 --elements 6400 --iterations 1 --timeout 1";
  std::ofstream(dir + "net.topo")
      << "[topology]\nswitch = amtor " << dir << "pub/switch.ini\n"
      << "host = amtor:0 name=amw0 ip=10.9.1.1/24 mac=02:00:00:00:19:01\n"
      << "host = amtor:1 name=amps ip=10.9.1.254/24 mac=02:00:00:00:19:fe\n"
      << "run = amps swemu-atp ps --job " << dir << "pub/job\n"
      << "run = amw0 sleep 1; " << worker << " --job " << dir << "id.job; " << worker << " --job "
      << dir << "elements.job\n";
  const RunResult run =
      RunCommandIn(dir, "timeout 60 " + kSwemuBinary + " --topology " + dir +
                            "net.topo --backend netns --run-for 10s --out-dir " + dir + "out");
  EXPECT_EQ(run.status, 1) << run.err << run.out;  // the worker's run failed
  const std::string log = ReadText(dir + "out/amw0-run1.log");
  EXPECT_NE(log.find("swemu-atp: rank 0 (amw0): no parameter packet of job 5 in 1 s"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("swemu-atp: rank 0 (amw0): no parameter packet of job 1 in 1 s"),
            std::string::npos)
      << log;
  const std::string sw = ReadText(dir + "out/amtor.log");
  EXPECT_NE(sw.find("atp_unknown_job"), std::string::npos) << sw;
  EXPECT_NE(sw.find("atp_bad_elements"), std::string::npos) << sw;
}

}  // namespace
}  // namespace swemu::testing
