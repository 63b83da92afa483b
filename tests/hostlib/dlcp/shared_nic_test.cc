// DlcpHost's flows on one shared NIC (DlcpHostOptions::shared_nic): two tensors in flight take
// turns, one packet per serialization time of the link between them, whatever their rate
// controls allow; without it, each is paced by its rate control alone and both go at once.
#include <gtest/gtest.h>

#include <vector>

#include "hostlib/dlcp/host.h"
#include "tests/hostlib/common/timed_capture.h"

namespace swemu {
namespace {

const MacAddr kMacA = MacAddr::FromU64(0x020000000001ull);
const MacAddr kMacB = MacAddr::FromU64(0x020000000002ull);
constexpr Ipv4Addr kIpA = 0x0A000001, kIpB = 0x0A000002, kIpC = 0x0A000003;
constexpr uint64_t kLinkBps = 10'000'000'000;

// Two tensors of 8 partitions each from one DlcpHost to two receivers that never answer.
std::vector<SentFrame> TwoDlcpFlows(bool shared_nic) {
  TimedCapture capture;
  DlcpHostOptions options;
  options.rate.link_bps = kLinkBps;
  options.shared_nic = shared_nic;
  DlcpHost host(capture, kMacA, kIpA, options);
  const std::vector<float> g(8 * options.partition_bytes / 4, 1.0f);
  const DlcpPrioFunc prio = [](uint32_t, uint32_t) { return uint8_t{0}; };
  EXPECT_TRUE(host.Send(0, {kMacB, kIpB, options.port}, 1, g, prio, 0.1).ok());
  EXPECT_TRUE(host.Send(0, {kMacB, kIpC, options.port}, 2, g, prio, 0.1).ok());
  DriveHost(host, capture, 50'000);  // before the first rate report (200 us)
  std::vector<SentFrame> data;
  for (const SentFrame& f : capture.frames) {
    DlcpFrameView v;
    if (ParseDlcpFrame(f.bytes, options.port, &v) && v.header->Type() == DlcpType::kData) {
      data.push_back(f);
    }
  }
  return data;
}

uint32_t Tensor(const SentFrame& f) {
  DlcpFrameView v;
  EXPECT_TRUE(ParseDlcpFrame(f.bytes, DlcpHostOptions().port, &v));
  return v.header->Tensor();
}

TEST(SharedNic, DlcpFlowsTakeTurnsAtTheLinksRate) {
  const std::vector<SentFrame> data = TwoDlcpFlows(true);
  ASSERT_EQ(data.size(), 16u);
  const TimeNs gap = WireGap(data[0].bytes.size(), kLinkBps);
  for (std::size_t k = 0; k < data.size(); ++k) {
    EXPECT_EQ(data[k].at, static_cast<TimeNs>(k) * gap) << "packet " << k;
    EXPECT_EQ(Tensor(data[k]), k % 2 == 0 ? 1u : 2u) << "packet " << k;
  }
}

TEST(SharedNic, WithoutItEachDlcpFlowIsPacedAlone) {
  const std::vector<SentFrame> data = TwoDlcpFlows(false);
  ASSERT_EQ(data.size(), 16u);
  const TimeNs gap = WireGap(data[0].bytes.size(), kLinkBps);
  for (std::size_t k = 0; k < data.size(); ++k) {
    EXPECT_EQ(data[k].at, static_cast<TimeNs>(k / 2) * gap) << "packet " << k;
  }
}

}  // namespace
}  // namespace swemu
