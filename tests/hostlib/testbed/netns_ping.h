#pragma once
// What the namespace tests run on their hosts: ICMP echo over a raw socket (no ping binary is
// assumed), and a fresh test directory holding it; and what they check of configs/tor.ini's
// tables once its four test hosts have talked.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {

// ping.py ADDR COUNT [TIMEOUT_S [INTERVAL_S]]: a line per echo ("reply from ADDR seq N" or
// "timeout ADDR seq N"); exit 0 when every echo is answered.
inline constexpr const char* kPing = R"(import socket, struct, sys, time
def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
addr, count, ok = sys.argv[1], int(sys.argv[2]), 0
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 3
interval = float(sys.argv[4]) if len(sys.argv) > 4 else 0
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); s.settimeout(timeout)
for seq in range(count):
    if seq > 0: time.sleep(interval)
    body = struct.pack('!HH', 77, seq) + b'swemu-ping'
    s.sendto(struct.pack('!BBH', 8, 0, csum(b'\x08\0\0\0' + body)) + body, (addr, 0))
    try:
        while True:
            data, src = s.recvfrom(2048); i = (data[0] & 15) * 4
            if src[0] == addr and data[i] == 0 and data[i + 6:i + 8] == struct.pack('!H', seq):
                print('reply from', addr, 'seq', seq, flush=True); ok += 1; break
    except socket.timeout:
        print('timeout', addr, 'seq', seq, flush=True)
sys.exit(0 if ok == count else 1)
)";

// A fresh directory for one test (TestDirFor(prefix)), holding ping.py.
inline std::string FreshDirWithPing(const std::string& prefix) {
  const std::string dir = TestDirFor(prefix);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "ping.py") << kPing;
  return dir;
}

// A host's log of `show mac` then `show arp` on configs/tor.ini with hosts 10.1.1.2 and
// 10.1.1.3 on ports 0 and 1, 10.1.2.2 on port 2 and the uplink 10.1.255.2 on port 3: each MAC on
// its port in its subnet's VLAN (tor.ini's port_vlan), each address resolved (REACHABLE).
inline void ExpectTorTablesLearned(const std::string& log) {
  for (const char* vlan_port :
       {"  10    0     ", "  10    1     ", "  20    2     ", "  30    3     "}) {
    EXPECT_NE(log.find(vlan_port), std::string::npos) << vlan_port << "\n" << log;
  }
  const std::size_t arp = log.find("address ");
  ASSERT_NE(arp, std::string::npos) << log;
  for (const char* entry : {"\n10.1.1.2 ", "\n10.1.1.3 ", "\n10.1.2.2 ", "\n10.1.255.2 "}) {
    const std::size_t at = log.find(entry, arp);
    ASSERT_NE(at, std::string::npos) << entry << "\n" << log;
    const std::string line = log.substr(at + 1, log.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find("REACHABLE"), std::string::npos) << line;
  }
}

}  // namespace swemu::testing
