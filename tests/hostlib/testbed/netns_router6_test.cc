// A real-time swemu as the IPv6 router of two subnets ([interface.N] ip6), hosts in network
// namespaces with nothing but an IPv6 address and a default route (one via the gateway's global
// address, one via its link-local address): the kernels solicit the gateway, the switch
// advertises and solicits the far host itself (no MAC written anywhere), then ICMPv6 echo runs
// within a subnet (bridged, learned) and across (routed), and the gateways answer pings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using swemu::testing::kSwemuBinary;
using swemu::testing::ReadText;
using swemu::testing::RunCommandIn;
using swemu::testing::TestDirFor;

// ping6.py ADDR COUNT: ICMPv6 echo over a raw socket (the kernel fills the checksum; no ping
// binary is assumed); a line per echo, exit 0 when every echo is answered. ADDR may carry a
// zone (fe80::1%eth0).
constexpr const char* kPing6 = R"(import ipaddress, socket, struct, sys
addr, count, ok = sys.argv[1], int(sys.argv[2]), 0
dest = socket.getaddrinfo(addr, None, socket.AF_INET6, socket.SOCK_RAW)[0][4]
want = ipaddress.IPv6Address(addr.split('%')[0])
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6); s.settimeout(3)
for seq in range(count):
    s.sendto(struct.pack('!BBHHH', 128, 0, 0, 66, seq) + b'swemu-ping6', dest)
    try:
        while True:
            data, src = s.recvfrom(2048)
            if (ipaddress.IPv6Address(src[0].split('%')[0]) == want and data[0] == 129 and
                    data[6:8] == struct.pack('!H', seq)):
                print('reply from', addr, 'seq', seq, flush=True); ok += 1; break
    except socket.timeout:
        print('timeout', addr, 'seq', seq, flush=True)
sys.exit(0 if ok == count else 1)
)";

// A host's IPv6, as a user types it: on (the testbed turns it off), one address without
// duplicate address detection's wait, and a default route.
std::string Ipv6Host(const std::string& cidr, const std::string& gateway) {
  return "sysctl -qw net.ipv6.conf.eth0.disable_ipv6=0 && ip -6 addr add " + cidr +
         " dev eth0 nodad && ip -6 route add default via " + gateway + " dev eth0";
}

TEST(NetnsRouter6Test, HostsWithOnlyAnIpv6AddressAndADefaultRoutePingWithinAndAcross) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDirFor("netns_router6_");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "ping6.py") << kPing6;
  std::ofstream(dir + "tor.ini")
      << "[switch]\nname = r6tor\nports = 4\nprogram = l2l3\n[program]\nlearning = on\n"
      << "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\nip6 = 2001:db8:1::1/64\n"
      << "ports = 0-1\n"
      << "[interface.2]\nmac = 02:00:00:00:fe:02\nip = 10.2.2.1/24\nip6 = 2001:db8:2::1/64\n"
      << "ports = 2-3\n";
  const std::string ping = "python3 " + dir + "ping6.py ";
  const std::string cli = "swemu-cli --socket " + dir + "out/r6tor-control.sock ";
  // h61's default route is the gateway's link-local address (from 02:00:00:00:fe:01).
  std::ofstream(dir + "net.topo")
      << "[topology]\nswitch = r6tor " << dir << "tor.ini\n"
      << "host = r6tor:0 name=h61\nhost = r6tor:1 name=h63\nhost = r6tor:2 name=h62\n"
      << "run = h63 " << Ipv6Host("2001:db8:1::3/64", "2001:db8:1::1") << "\n"
      << "run = h62 " << Ipv6Host("2001:db8:2::2/64", "2001:db8:2::1") << "\n"
      << "run = h61 " << Ipv6Host("2001:db8:1::2/64", "fe80::ff:fe00:fe01") << " && sleep 1 && "
      << ping << "2001:db8:1::3 3 && " << ping << "2001:db8:2::2 3 && " << ping
      << "2001:db8:1::1 2 && " << ping << "2001:db8:2::1 2 && " << ping
      << "fe80::ff:fe00:fe01%eth0 2; ip -6 neigh; " << cli << "show ndp\n";
  auto run = RunCommandIn(dir, kSwemuBinary + " --topology " + dir + "net.topo --backend " +
                                   "netns --out-dir " + dir + "out");
  EXPECT_EQ(run.status, 0) << run.err;
  const std::string h1 = ReadText(dir + "out/h61-run2.log");
  for (const char* line : {"reply from 2001:db8:1::3 seq 2", "reply from 2001:db8:2::2 seq 2",
                           "reply from 2001:db8:1::1 seq 1", "reply from 2001:db8:2::1 seq 1",
                           "reply from fe80::ff:fe00:fe01%eth0 seq 1"}) {
    EXPECT_NE(h1.find(line), std::string::npos) << line << "\n" << h1;
  }
  // The host learned its router's MAC by neighbour discovery, from the switch (a router).
  EXPECT_NE(h1.find("fe80::ff:fe00:fe01 dev eth0 lladdr 02:00:00:00:fe:01 router"),
            std::string::npos)
      << h1;
  // show ndp: the far host resolved by the switch's solicitation, on its port.
  const std::size_t ndp = h1.find("address ");
  ASSERT_NE(ndp, std::string::npos) << h1;
  const std::size_t at = h1.find("\n2001:db8:2::2 ", ndp);
  ASSERT_NE(at, std::string::npos) << h1;
  const std::string line = h1.substr(at + 1, h1.find('\n', at + 1) - at - 1);
  EXPECT_NE(line.find(" 2     2         "), std::string::npos) << line;  // port 2, interface 2
  EXPECT_TRUE(line.find("REACHABLE") != std::string::npos ||
              line.find("STALE") != std::string::npos)
      << line;
}

}  // namespace
}  // namespace swemu
