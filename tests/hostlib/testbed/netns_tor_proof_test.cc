// Issue 37's proof of MAC learning in real time: a swemu with learning on, on net_af_packet
// ports, hosts in network namespaces. A host whose link moves to another port is re-learned
// from its first packets there, and routed traffic follows it before it sends any ARP; a flood of 10,000 random source MACs fills the table to
// mac_limit and no further, every refused MAC counted, while two known hosts keep talking by
// unicast that a third host never sees.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "tests/hostlib/testbed/netns_ping.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using swemu::testing::FreshDirWithPing;
using swemu::testing::kSwemuBinary;
using swemu::testing::ReadText;
using swemu::testing::RunCommandIn;

// Runs dir's net.topo across network namespaces, its logs in dir/out.
auto RunNetTopo(const std::string& dir) {
  return RunCommandIn(dir, kSwemuBinary + " --topology " + dir + "net.topo --backend netns " +
                               "--out-dir " + dir + "out");
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// The number right after the first `label` in text; -1 if there is none.
int64_t NumberAfter(const std::string& text, const std::string& label) {
  const std::size_t at = text.find(label);
  if (at == std::string::npos) return -1;
  std::istringstream in(text.substr(at + label.size()));
  int64_t value = -1;
  in >> value;
  return value;
}

// `show ports`' rx_packets of `port` in text; -1 if its row is missing.
int64_t PortRx(const std::string& text, int port) {
  std::istringstream lines(text.substr(text.find("port   rx_packets")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    std::istringstream row(line);
    int64_t p = -1, rx = -1;
    row >> p >> rx;
    if (p == port) return rx;
  }
  return -1;
}

// The text from the `start` marker to the `end` marker (to the end of text without one).
std::string Section(const std::string& text, const std::string& start, const std::string& end) {
  const std::size_t from = text.find(start);
  if (from == std::string::npos) return "";
  const std::size_t to = text.find(end, from);
  return text.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

// tor.ini's shape (learning, one VLAN and gateway per subnet, the gateways answering ARP) with a
// third port in the first subnet, so that a host can move within it and keep a bridged peer.
constexpr const char* kMoveSwitch =
    "[switch]\nname = msw\nports = 4\nprogram = l2l3\n"
    "[program]\nlearning = on\nport_vlan = 0-2:10,3:20\n"
    "[interface.1]\nmac = 02:00:00:00:00:fe\nip = 10.1.1.1/24\nports = 0-2\n"
    "[interface.2]\nmac = 02:00:00:00:00:fe\nip = 10.1.2.1/24\nports = 3\n";

// Run in host mv: talk from port 0, then move mv's link to port 1 (the spare host mvnew's veth,
// taken into mv's namespace as eth1 with eth0's MAC and address, eth0 down) and talk again.
// mv's neighbour entries for its gateway and its peer are permanent, so mv sends no ARP: the
// first frame it sends from port 1 is a routed echo request. The switch learns the move from it,
// and moves mv's neighbour entry with it, or the routed replies go to the dead port.
constexpr const char* kMoveScript = R"sh(set -e
cli="swemu-cli --socket $1/out/msw-control.sock"
python3 $1/ping.py 10.1.1.3 3 1
python3 $1/ping.py 10.1.2.2 2 1
echo "== before move =="; $cli show mac
ip -n swemu-mvnew link set eth0 down
ip -n swemu-mvnew link set eth0 name eth1
ip -n swemu-mvnew link set eth1 netns swemu-mv
ip link set eth0 down
ip addr flush dev eth0
ip link set eth1 address 02:00:00:00:37:02
ip addr add 10.1.1.2/24 dev eth1
ip neigh replace 10.1.1.3 lladdr 02:00:00:00:37:03 dev eth1 nud permanent
ip neigh replace 10.1.1.1 lladdr 02:00:00:00:00:fe dev eth1 nud permanent
ip link set eth1 up
ip route add default via 10.1.1.1
echo "== routed =="
python3 $1/ping.py 10.1.2.2 20 0.5 || true
ip neigh show 10.1.1.1 dev eth1
echo "== after move =="
python3 $1/ping.py 10.1.1.3 20 0.5 || true
echo "== show =="; $cli show mac; $cli show arp; echo "== end =="
)sh";

TEST(NetnsTorProofTest, AHostMovedToAnotherPortIsRelearnedWithinItsFirstPackets) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = FreshDirWithPing("netns_tor_proof_");
  std::ofstream(dir + "msw.ini") << kMoveSwitch;
  std::ofstream(dir + "move.sh") << kMoveScript;
  std::ofstream(dir + "net.topo")
      << "[topology]\nswitch = msw " << dir << "msw.ini\n"
      << "host = msw:0 name=mv ip=10.1.1.2/24 gw=10.1.1.1 mac=02:00:00:00:37:02\n"
      << "host = msw:1 name=mvnew\n"
      << "host = msw:2 name=mvpeer ip=10.1.1.3/24 gw=10.1.1.1 mac=02:00:00:00:37:03\n"
      << "host = msw:3 name=mvfar ip=10.1.2.2/24 gw=10.1.2.1\n"
      << "run = mv bash " << dir << "move.sh " << dir << "\n";
  auto run = RunNetTopo(dir);
  EXPECT_EQ(run.status, 0) << run.err;
  const std::string log = ReadText(dir + "out/mv-run0.log");
  const std::string before = Section(log, "== before move ==", "== after move ==");
  const std::string routed = Section(log, "== routed ==", "== after move ==");
  const std::string moved = Section(log, "== after move ==", "== show ==");
  const std::string show = Section(log, "== show ==", "== end ==");
  // Before: mv learned on port 0 (VLAN 10).
  EXPECT_NE(before.find("02:00:00:00:37:02  10    0 "), std::string::npos) << log;
  // Routed, right after the move and with no ARP from mv (its gateway entry is permanent): at
  // most the echoes whose replies were routed before the move was learned are lost (a bound,
  // for a busy machine: the digest pump runs every millisecond), then every one is answered,
  // the switch's neighbour entry for mv moved by learning.
  EXPECT_NE(routed.find("PERMANENT"), std::string::npos) << log;
  const std::size_t lost_routed = Count(routed, "timeout 10.1.2.2");
  EXPECT_LE(lost_routed, 3u) << log;
  EXPECT_NE(routed.find("reply from 10.1.2.2 seq 19"), std::string::npos) << log;
  // Bridged, to the peer: every echo answered.
  const std::size_t lost = Count(moved, "timeout 10.1.1.3");
  EXPECT_EQ(lost, 0u) << log;
  EXPECT_NE(moved.find("reply from 10.1.1.3 seq 19"), std::string::npos) << log;
  std::cout << "echoes lost after the move: routed " << lost_routed << " of 20, bridged " << lost
            << " of 20\n";
  // show mac: mv on port 1 now, counted as a move.
  EXPECT_NE(show.find("02:00:00:00:37:02  10    1 "), std::string::npos) << log;
  EXPECT_GE(NumberAfter(show, "moved "), 1) << log;
  // show arp: the switch has mv on port 1.
  EXPECT_NE(show.find("10.1.1.2         02:00:00:00:37:02  1 "), std::string::npos) << log;
}

// flood.py IFACE COUNT DST_MAC: COUNT frames of distinct random unicast source MACs to DST_MAC
// (a local experimental EtherType, which the receiving kernel drops), paced in runs of 50.
constexpr const char* kFlood = R"(import random, socket, sys, time
iface, count, dst = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3].replace(':', ''))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind((iface, 0))
rng, seen, sent = random.Random(37), set(), 0
while sent < count:
    src = bytes([(rng.randrange(256) & 0xfc) | 0x02]) + rng.randbytes(5)
    if src in seen or src[0] == 0x02 and src[1:5] == b'\0\0\0\x37': continue
    seen.add(src)
    s.send(dst + src + b'\x88\xb5' + bytes(46)); sent += 1
    if sent % 50 == 0: time.sleep(0.002)
print('sent', sent)
)";

// Run in host fh0: learn fh0 and fh1, then flood from fflood while they ping, then again after;
// fwatch's received frames are read before the flood and at the end.
constexpr const char* kFloodScript = R"sh(set -e
cli="swemu-cli --socket $1/out/fsw-control.sock"
rx() { ip netns exec swemu-fwatch cat /sys/class/net/eth0/statistics/rx_packets; }
python3 $1/ping.py 10.0.37.2 3 1
sleep 0.3
echo "== before =="; $cli show digests; $cli show ports; echo "watch_rx $(rx)"
ip netns exec swemu-fflood python3 $1/flood.py eth0 10000 02:00:00:00:37:12 &
echo "== during =="
python3 $1/ping.py 10.0.37.2 20 1 0.05 || true
wait
sleep 0.5
echo "== after =="
python3 $1/ping.py 10.0.37.2 10 1
echo "watch_rx $(rx)"
$cli show digests; $cli show ports; $cli show mac; echo "== end =="
)sh";

TEST(NetnsTorProofTest, AFloodOfRandomMacsFillsTheTableToItsLimitAndKnownHostsStillTalk) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = FreshDirWithPing("netns_tor_proof_");
  std::ofstream(dir + "fsw.ini") << "[switch]\nname = fsw\nports = 4\nprogram = l2l3\n"
                                 << "[program]\nlearning = on\nmac_limit = 100\n";
  std::ofstream(dir + "flood.py") << kFlood;
  std::ofstream(dir + "flood.sh") << kFloodScript;
  std::ofstream(dir + "net.topo") << "[topology]\nswitch = fsw " << dir << "fsw.ini\n"
                                  << "host = fsw:0 name=fh0 ip=10.0.37.1/24 mac=02:00:00:00:37:11\n"
                                  << "host = fsw:1 name=fh1 ip=10.0.37.2/24 mac=02:00:00:00:37:12\n"
                                  << "host = fsw:2 name=fflood\n"
                                  << "host = fsw:3 name=fwatch\n"
                                  << "run = fh0 bash " << dir << "flood.sh " << dir << "\n";
  auto run = RunNetTopo(dir);
  EXPECT_EQ(run.status, 0) << run.err;
  const std::string log = ReadText(dir + "out/fh0-run0.log");
  const std::string before = Section(log, "== before ==", "== during ==");
  const std::string during = Section(log, "== during ==", "== after ==");
  const std::string after = Section(log, "== after ==", "== end ==");
  // The known hosts talk through the flood (a bound: af_packet may lose some on a busy
  // machine) and without loss after it, and fwatch never receives their unicast.
  EXPECT_GE(Count(during, "reply from"), 10u) << log;
  EXPECT_EQ(Count(after, "reply from"), 10u) << log;
  EXPECT_EQ(NumberAfter(after, "watch_rx "), NumberAfter(before, "watch_rx ")) << log;
  // The table holds mac_limit entries: the two hosts and the first 98 flood MACs delivered.
  EXPECT_EQ(Count(after, " dynamic"), 100u) << log;
  EXPECT_NE(after.find("02:00:00:00:37:11  1     0 "), std::string::npos) << log;
  EXPECT_NE(after.find("02:00:00:00:37:12  1     1 "), std::string::npos) << log;
  EXPECT_NE(after.find("entries 100 of mac_limit 100"), std::string::npos) << log;
  EXPECT_EQ(NumberAfter(after, "learned "), 100) << log;
  EXPECT_EQ(NumberAfter(after, "aged "), 0) << log;
  // Every flood frame reaching port 2 had a new source: one digest offered each, emitted,
  // deduplicated or dropped by the rate limit. Every delivered one was learned, refreshed or
  // refused: refused = (flood frames) - 98 - deduplicated - rate-limited.
  const int64_t flood_rx = PortRx(after, 2) - PortRx(before, 2);
  const auto delta = [&](const char* label) {
    return NumberAfter(after, label) - NumberAfter(before, label);
  };
  const int64_t emitted = delta("emitted "), dedup = delta("deduplicated ");
  const int64_t limited = delta("dropped by limit "), delivered = delta("delivered ");
  EXPECT_GT(flood_rx, 5000) << log;
  EXPECT_LE(flood_rx, 10000) << log;
  EXPECT_EQ(emitted + dedup + limited, flood_rx) << log;
  EXPECT_EQ(delivered, emitted) << log;
  const int64_t refused = NumberAfter(after, "refused (table full) ");
  EXPECT_EQ(refused, flood_rx - 98 - dedup - limited) << log;
  EXPECT_EQ(refused + NumberAfter(after, "learned ") + NumberAfter(after, "refreshed ") +
                NumberAfter(after, "moved "),
            NumberAfter(after, "delivered ")) << log;
  std::cout << "flood frames at the switch " << flood_rx << ", digests emitted " << emitted
            << ", deduplicated " << dedup << ", rate-limited " << limited << ", refused "
            << refused << "\n";
}

}  // namespace
}  // namespace swemu
