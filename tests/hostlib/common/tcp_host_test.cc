// TcpHost's agenda (hostlib/common/tcp_host.h): its passes visit only the flows due, and must act
// exactly as passes over every live flow did. The reference below is that plain definition; both
// hosts run the same flows (staggered starts, stop times, rate limits, a shared NIC, a lossy link
// that makes them time out and fast-retransmit) and must send the same frames at the same times.
#include "hostlib/common/tcp_host.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "hostlib/common/engine_transport.h"
#include "tests/hostlib/common/tcp_bottleneck.h"

namespace swemu {
namespace {

using namespace swemu::testing;  // NOLINT: the shared hosts' addresses

// Every pass over every live flow, in order; the NIC offered round from the flow after the one
// that sent last (an index into the live flows).
class ScanningTcpHost final : public Endpoint {
 public:
  ScanningTcpHost(Transport& transport, const EcnTcpOptions& options)
      : transport_(transport), options_(options),
        nic_(std::make_unique<SharedNic>(static_cast<double>(options.link_bps))) {}
  void AddFlow(const TcpFlowPlan& plan) {
    Flow& flow = flows_.emplace_back();
    flow.plan = plan;
    EcnTcpOptions options = options_;
    if (plan.rate_bps != 0 && plan.rate_bps < options.link_bps) options.link_bps = plan.rate_bps;
    flow.sender = std::make_unique<EcnTcpSender>(transport_, TcpEnd{kMacA, kIpA, plan.local_port},
                                                 plan.remote, options);
    flow.sender->ShareNic(nic_.get());
    live_.push_back(&flow);
  }
  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override {
    TcpSegmentView seg;
    if (!ParseTcpSegment(frame, &seg)) return;
    for (Flow& flow : flows_) {
      if (flow.started && flow.sender->Accepts(seg)) return flow.sender->OnAck(now, seg);
    }
  }
  void OnTimer(TimeNs now) noexcept override {
    for (Flow* flow : live_) {
      if (!flow->started && now >= flow->plan.start_ns) Start(now, *flow);
      if (flow->started && !flow->stopped && now >= flow->plan.stop_ns) {
        flow->stopped = true;
        flow->sender->Stop();
      }
      if (flow->started) flow->sender->OnTimer(now);
    }
    Prune();
  }
  TimeNs NextTimer() const noexcept override {
    TimeNs next = kNever;
    for (const Flow* flow : live_) {
      if (!flow->started) {
        next = std::min(next, flow->plan.start_ns);
        continue;
      }
      if (!flow->stopped) next = std::min(next, flow->plan.stop_ns);
      next = std::min(next, flow->sender->NextTimer());
    }
    return next;
  }
  void Pump(TimeNs now) noexcept override {
    const std::size_t n = live_.size();
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (nic_next_ % n + k) % n;
      Flow& flow = *live_[i];
      const uint64_t sent = flow.sender->stats().segments_sent;
      if (!flow.started && now >= flow.plan.start_ns) Start(now, flow);
      if (flow.started) flow.sender->Pump(now);
      if (flow.sender->stats().segments_sent != sent) nic_next_ = i + 1;
    }
    Prune();
  }
  std::vector<EcnTcpSenderStats> stats() const {
    std::vector<EcnTcpSenderStats> all;
    for (const Flow& flow : flows_) all.push_back(flow.sender->stats());
    return all;
  }

 private:
  struct Flow {
    TcpFlowPlan plan;
    std::unique_ptr<EcnTcpSender> sender;
    bool started = false;
    bool stopped = false;
  };
  static void Start(TimeNs now, Flow& flow) {
    flow.started = true;
    flow.sender->Start(now, flow.plan.bytes);
  }
  void Prune() {
    std::erase_if(live_, [](const Flow* f) {
      return f->started && (f->stopped || (f->sender->done() && f->plan.stop_ns == kNever));
    });
  }
  Transport& transport_;
  EcnTcpOptions options_;
  std::deque<Flow> flows_;
  std::vector<Flow*> live_;
  std::unique_ptr<SharedNic> nic_;
  std::size_t nic_next_ = 0;
};

struct Outcome {
  uint64_t events = 0;
  std::vector<EcnTcpSenderStats> senders;
  std::vector<EcnTcpFlowStats> received;
};

// 40 flows from A to B's port through a 100 Mbit/s bottleneck with a 30-packet queue; A's link
// drops 2% of its frames. Flows start every 0.7 ms, a quarter of them long-lived until a stop
// time, a fifth limited to 20 Mbit/s.
template <typename Host>
Outcome RunFlows() {
  Engine engine(7, 16384);
  AddBottleneckSwitch(engine, "100M", 30);
  EngineTransport* ta = *EngineTransport::Attach(engine, "sw0", 0, 50'000, 0.02);
  EngineTransport* tb = *EngineTransport::Attach(engine, "sw0", 1, 50'000);
  EcnTcpOptions options;
  options.min_rto_ns = 2'000'000;
  options.initial_rto_ns = 5'000'000;
  options.link_bps = 1'000'000'000;
  options.shared_nic = true;
  Host a(*ta, options);
  TcpHost b(*tb, kMacB, kIpB, EcnTcpOptions{});
  ta->SetEndpoint(&a);
  tb->SetEndpoint(&b);
  b.Listen(kSinkPort);
  for (uint16_t f = 0; f < 40; ++f) {
    TcpFlowPlan plan{{kMacB, kIpB, kSinkPort}, static_cast<uint16_t>(40000 + f),
                     TimeNs{f} * 700'000};
    if (f % 4 == 3) {
      plan.stop_ns = plan.start_ns + 30'000'000;
    } else {
      plan.bytes = 20'000 + uint64_t{f} * 9'000;
    }
    if (f % 5 == 2) plan.rate_bps = 20'000'000;
    a.AddFlow(plan);
  }
  EXPECT_TRUE(engine.Run(200'000'000).ok());
  return Outcome{engine.events_processed(), a.stats(), b.sink(kSinkPort)->flows()};
}

// The production host, with what the test compares.
class AgendaTcpHost final : public Endpoint {
 public:
  AgendaTcpHost(Transport& transport, const EcnTcpOptions& options)
      : host_(transport, kMacA, kIpA, options) {}
  void AddFlow(const TcpFlowPlan& plan) { senders_.push_back(&host_.AddFlow(plan)); }
  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override { host_.OnFrame(now, frame); }
  void OnTimer(TimeNs now) noexcept override { host_.OnTimer(now); }
  TimeNs NextTimer() const noexcept override { return host_.NextTimer(); }
  void Pump(TimeNs now) noexcept override { host_.Pump(now); }
  std::vector<EcnTcpSenderStats> stats() const {
    std::vector<EcnTcpSenderStats> all;
    for (const EcnTcpSender* s : senders_) all.push_back(s->stats());
    return all;
  }

 private:
  TcpHost host_;
  std::vector<const EcnTcpSender*> senders_;
};

void ExpectSame(const EcnTcpSenderStats& a, const EcnTcpSenderStats& b, std::size_t flow) {
  EXPECT_EQ(a.segments_sent, b.segments_sent) << "flow " << flow;
  EXPECT_EQ(a.retransmits, b.retransmits) << "flow " << flow;
  EXPECT_EQ(a.timeouts, b.timeouts) << "flow " << flow;
  EXPECT_EQ(a.loss_reductions, b.loss_reductions) << "flow " << flow;
  EXPECT_EQ(a.bytes_acked, b.bytes_acked) << "flow " << flow;
  EXPECT_EQ(a.started_ns, b.started_ns) << "flow " << flow;
  EXPECT_EQ(a.done_ns, b.done_ns) << "flow " << flow;
}

TEST(TcpHostTest, TheAgendaActsExactlyAsPassesOverEveryFlow) {
  const Outcome scanned = RunFlows<ScanningTcpHost>();
  const Outcome agenda = RunFlows<AgendaTcpHost>();
  // The run is a hard one: flows time out and recover, long ones are stopped.
  uint64_t timeouts = 0, fast = 0;
  for (const EcnTcpSenderStats& s : scanned.senders) {
    timeouts += s.timeouts;
    fast += s.loss_reductions;
  }
  EXPECT_GT(timeouts, 0u);
  EXPECT_GT(fast, 0u);
  EXPECT_EQ(agenda.events, scanned.events);
  ASSERT_EQ(agenda.senders.size(), scanned.senders.size());
  for (std::size_t f = 0; f < agenda.senders.size(); ++f) {
    ExpectSame(agenda.senders[f], scanned.senders[f], f);
  }
  ASSERT_EQ(agenda.received.size(), scanned.received.size());
  for (std::size_t f = 0; f < agenda.received.size(); ++f) {
    EXPECT_EQ(agenda.received[f].bytes, scanned.received[f].bytes) << f;
    EXPECT_EQ(agenda.received[f].last_ns, scanned.received[f].last_ns) << f;
    EXPECT_EQ(agenda.received[f].duplicates, scanned.received[f].duplicates) << f;
  }
}

}  // namespace
}  // namespace swemu
