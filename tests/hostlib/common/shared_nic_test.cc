// A host's NIC shared by its flows (hostlib/common/pacer.h's SharedNic), for the model TCP's
// TcpHost: with it, two busy flows take turns, one frame per serialization time of the link
// between them; without it, each is paced alone and both send at once. (DlcpHost's: in
// tests/hostlib/dlcp/shared_nic_test.cc.)
#include <gtest/gtest.h>

#include <vector>

#include "hostlib/common/tcp_host.h"
#include "tests/hostlib/common/timed_capture.h"

namespace swemu {
namespace {

const MacAddr kMacA = MacAddr::FromU64(0x020000000001ull);
const MacAddr kMacB = MacAddr::FromU64(0x020000000002ull);
constexpr Ipv4Addr kIpA = 0x0A000001, kIpB = 0x0A000002, kIpC = 0x0A000003;
constexpr uint64_t kLinkBps = 10'000'000'000;

// Two flows of a TcpHost, an initial window of 4 segments each and no ACK coming back.
std::vector<SentFrame> TwoTcpFlows(bool shared_nic) {
  TimedCapture capture;
  EcnTcpOptions options;
  options.link_bps = kLinkBps;
  options.initial_cwnd = 4;
  options.shared_nic = shared_nic;
  TcpHost host(capture, kMacA, kIpA, options);
  host.AddFlow({{kMacB, kIpB, 5001}, 40000, 0, kNever, 100'000});
  host.AddFlow({{kMacB, kIpC, 5001}, 40001, 0, kNever, 100'000});
  DriveHost(host, capture, 1'000'000);  // the RTO (200 ms) is far off
  return capture.frames;
}

uint16_t SourcePort(const SentFrame& f) {
  TcpSegmentView seg;
  EXPECT_TRUE(ParseTcpSegment(f.bytes, &seg));
  return seg.src_port;
}

TEST(SharedNic, TcpFlowsTakeTurnsAtTheLinksRate) {
  const std::vector<SentFrame> frames = TwoTcpFlows(true);
  ASSERT_EQ(frames.size(), 8u);
  const TimeNs gap = WireGap(frames[0].bytes.size(), kLinkBps);
  ASSERT_GT(gap, 0);
  for (std::size_t k = 0; k < frames.size(); ++k) {
    EXPECT_EQ(frames[k].at, static_cast<TimeNs>(k) * gap) << "frame " << k;
    EXPECT_EQ(SourcePort(frames[k]), k % 2 == 0 ? 40000 : 40001) << "frame " << k;
  }
}

TEST(SharedNic, WithoutItEachTcpFlowIsPacedAlone) {
  const std::vector<SentFrame> frames = TwoTcpFlows(false);
  ASSERT_EQ(frames.size(), 8u);
  const TimeNs gap = WireGap(frames[0].bytes.size(), kLinkBps);
  for (std::size_t k = 0; k < frames.size(); ++k) {
    EXPECT_EQ(frames[k].at, static_cast<TimeNs>(k / 2) * gap) << "frame " << k;
  }
}

}  // namespace
}  // namespace swemu
