// DLCP hosts through a dlcp switch in virtual time: an incast of four senders onto one port
// shaped to 1 Gbit/s. Every receiver meets its bound and every flow ends; front-layer flows
// finish before back-layer ones (strict priority); the switch drops unimportant packets (Not-ECT
// above S_i) before important ones; the rate control leaves line rate; and the control channel
// survives a lossy host link. Then a tensor rebuilt exactly when nothing is lost.
#include "hostlib/dlcp/host.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "hostlib/common/engine_transport.h"
#include "pipeline/engine/engine.h"

namespace swemu {
namespace {

MacAddr Mac(uint32_t i) { return MacAddr::FromU64(0x020000000000ull | i); }
Ipv4Addr Ip(uint32_t i) { return (10u << 24) | i; }
constexpr uint32_t kSenders = 4;
constexpr PortId kReceiverPort = kSenders;

struct Incast {
  explicit Incast(double host_loss = 0, uint64_t max_tensor = uint64_t{1} << 30,
                  uint64_t max_buffered = uint64_t{4} << 30, bool hold_tensors = true)
      : engine(5, 1 << 16) {
    SwitchConfig config;
    config.num_ports = kSenders + 1;
    config.program = "dlcp";
    EXPECT_TRUE(engine.AddSwitch(config, "").ok());
    Switch& sw = *engine.FindSwitch("sw0");
    for (uint32_t p = 0; p <= kSenders; ++p) {
      EXPECT_TRUE(sw.commands()
                      .Execute("table_add dmac forward " + FormatMac(Mac(p)) + " => " +
                               std::to_string(p))
                      .ok());
    }
    EXPECT_TRUE(sw.commands().Execute("set_port_rate 4 1G").ok());
    EXPECT_TRUE(sw.commands().Execute("dlcp_thresholds 8 0.5").ok());
    DlcpHostOptions options;
    options.rate.link_bps = 10'000'000'000;  // senders start at 10G into a 1G port
    options.hold_tensors = hold_tensors;
    for (uint32_t p = 0; p <= kSenders; ++p) {
      EngineTransport* t =
          *EngineTransport::Attach(engine, "sw0", static_cast<PortId>(p), 2'000, p == 0 ? host_loss : 0);
      DlcpHostOptions o = options;
      if (p == kReceiverPort) {
        o.max_tensor_bytes = max_tensor;
        o.max_buffered_bytes = max_buffered;
      }
      hosts.push_back(std::make_unique<DlcpHost>(*t, Mac(p), Ip(p), o));
      t->SetEndpoint(hosts.back().get());
    }
    sw_ = &sw;
  }
  DlcpHost& receiver() { return *hosts[kReceiverPort]; }
  Engine engine;
  Switch* sw_ = nullptr;
  std::vector<std::unique_ptr<DlcpHost>> hosts;
};

std::vector<float> Gradients(std::size_t n, float scale) {
  std::vector<float> g(n);
  for (std::size_t i = 0; i < n; ++i) g[i] = scale * std::sin(static_cast<float>(i) * 0.37f);
  return g;
}

TEST(DlcpHosts, IncastMeetsEveryBoundFrontLayersFirstUnimportantDroppedFirst) {
  Incast net;
  const TcpEnd dst{Mac(kReceiverPort), Ip(kReceiverPort), kDlcpDefaultUdpPort};
  // Senders 0 and 1 send front layers (tag 0), 2 and 3 back layers (tag 6); 256 KB each.
  std::vector<std::vector<float>> tensors;
  for (uint32_t s = 0; s < kSenders; ++s) tensors.push_back(Gradients(65536, 1.0f + s));
  for (uint32_t s = 0; s < kSenders; ++s) {
    ASSERT_TRUE(net.hosts[s]
                    ->Send(0, dst, 100 + s, tensors[s], LayerPriority(s < 2 ? 0 : 53, 54), 0.1)
                    .ok());
  }
  EngineLimits limits;
  limits.max_virtual_ns = 10'000'000'000;
  net.engine.SetLimits(limits);
  const Status run = net.engine.Run();
  ASSERT_TRUE(run.ok()) << run.message();
  TimeNs front = 0, back = 0;
  for (uint32_t s = 0; s < kSenders; ++s) {
    const DlcpSendFlow& f = *net.hosts[s]->send_flows().at(0);
    EXPECT_TRUE(f.done()) << "sender " << s;
    const DlcpRecvFlow* r = net.receiver().Received(Ip(s), 100 + s);
    ASSERT_NE(r, nullptr);
    EXPECT_NE(r->bound_met_ns, kNever);
    EXPECT_NE(r->confirm_ns, kNever);
    EXPECT_GE(r->buffer->received_bytes(), r->buffer->required_bytes());
    EXPECT_EQ(r->out_of_bounds + r->misaligned, 0u);
    (s < 2 ? front : back) += r->bound_met_ns;
    EXPECT_GT(f.halvings, 0u) << "sender " << s << " never left line rate";
  }
  EXPECT_LT(front, back);  // strict priority: the front layers are served first
  // Selective dropping: unimportant packets (Not-ECT) were dropped above S_i.
  EXPECT_GT(net.sw_->tm().drops(DropReason::kTmRedNotEct), 0u);
  EXPECT_EQ(net.receiver().stats().discarded_early, 0u);
}

// The front/back incast above, on hosts that hold the tensors and on model hosts that do not.
struct IncastOutcome {
  std::vector<TimeNs> bound_met, finished;
  std::vector<uint64_t> packets, resent, held;
  uint64_t red_drops = 0, queue_drops = 0;
};

IncastOutcome RunIncast(bool hold_tensors) {
  Incast net(0, uint64_t{1} << 30, uint64_t{4} << 30, hold_tensors);
  const TcpEnd dst{Mac(kReceiverPort), Ip(kReceiverPort), kDlcpDefaultUdpPort};
  for (uint32_t s = 0; s < kSenders; ++s) {
    EXPECT_TRUE(net.hosts[s]
                    ->Send(0, dst, 100 + s, Gradients(65536, 1.0f + s),
                           LayerPriority(s < 2 ? 0 : 53, 54), 0.1)
                    .ok());
  }
  EngineLimits limits;
  limits.max_virtual_ns = 10'000'000'000;
  net.engine.SetLimits(limits);
  EXPECT_TRUE(net.engine.Run().ok());
  IncastOutcome out;
  for (uint32_t s = 0; s < kSenders; ++s) {
    const DlcpSendFlow& f = *net.hosts[s]->send_flows().at(0);
    const DlcpRecvFlow* r = net.receiver().Received(Ip(s), 100 + s);
    if (r == nullptr) return out;
    out.bound_met.push_back(r->bound_met_ns);
    out.finished.push_back(f.finish_ns);
    out.packets.push_back(f.packets);
    out.resent.push_back(f.resent_packets);
    out.held.push_back(r->buffer->data().size());
  }
  out.red_drops = net.sw_->tm().drops(DropReason::kTmRedNotEct);
  out.queue_drops = net.sw_->tm().drops(DropReason::kTmQueueFull);
  return out;
}

TEST(DlcpHosts, ModelHostsHoldNoTensorAndBehaveTheSame) {
  const IncastOutcome real = RunIncast(true), model = RunIncast(false);
  ASSERT_EQ(real.bound_met.size(), kSenders);
  EXPECT_EQ(model.bound_met, real.bound_met);
  EXPECT_EQ(model.finished, real.finished);
  EXPECT_EQ(model.packets, real.packets);
  EXPECT_EQ(model.resent, real.resent);
  EXPECT_EQ(model.red_drops, real.red_drops);
  EXPECT_EQ(model.queue_drops, real.queue_drops);
  EXPECT_GT(real.red_drops, 0u);  // a congested run, not an idle one
  EXPECT_EQ(real.held, std::vector<uint64_t>(kSenders, 65536 * 4));
  EXPECT_EQ(model.held, std::vector<uint64_t>(kSenders, 0));
}

TEST(DlcpHosts, ATensorIsRebuiltExactlyWithoutLossAndTheControlChannelSurvivesLoss) {
  Incast net(0.2);  // sender 0's host link loses 20% each way, signals included
  const TcpEnd dst{Mac(kReceiverPort), Ip(kReceiverPort), kDlcpDefaultUdpPort};
  const std::vector<float> g = Gradients(10'001, 2.0f);  // not a multiple of a partition
  net.receiver().Receive(7, 0.0);                        // this receiver wants every byte
  ASSERT_TRUE(net.hosts[0]->Send(0, dst, 7, g, LayerPriority(0, 1), 0.3).ok());
  const std::vector<float> g1 = Gradients(3000, 1.0f);
  ASSERT_TRUE(net.hosts[1]->Send(0, dst, 8, g1, LayerPriority(0, 1), 0.0).ok());
  EngineLimits limits;
  limits.max_virtual_ns = 20'000'000'000;
  net.engine.SetLimits(limits);
  const Status run = net.engine.Run();
  ASSERT_TRUE(run.ok()) << run.message();
  const DlcpRecvFlow* r = net.receiver().Received(Ip(0), 7);
  ASSERT_NE(r, nullptr);
  ASSERT_NE(r->bound_met_ns, kNever);
  EXPECT_EQ(r->buffer->received_bytes(), g.size() * 4);  // the posted bound 0 wins
  EXPECT_EQ(std::memcmp(r->buffer->data().data(), g.data(), g.size() * 4), 0);
  EXPECT_GT(net.hosts[0]->send_flows().at(0)->retransmit_requests, 0u);
  EXPECT_GT(net.hosts[0]->control().stats().resent, 0u);
  EXPECT_TRUE(net.hosts[0]->send_flows().at(0)->done());
  const DlcpRecvFlow* r1 = net.receiver().Received(Ip(1), 8);
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(std::memcmp(r1->buffer->data().data(), g1.data(), g1.size() * 4), 0);
}

// A receiver refuses a tensor over its per-tensor limit, and one that would take its buffers past
// their total: the sender hears FINISH flagged refused and stops; the others are delivered; the
// run ends (no STOP/RETRANSMIT loop over a refused flow).
TEST(DlcpHosts, TensorsTooLargeAreRefusedAndTheSendersStop) {
  Incast net(0, 8'000, 12'000);
  const TcpEnd dst{Mac(kReceiverPort), Ip(kReceiverPort), kDlcpDefaultUdpPort};
  ASSERT_TRUE(net.hosts[0]->Send(0, dst, 1, Gradients(3000, 1.0f), LayerPriority(0, 1), 0.0).ok());
  for (uint32_t p = 1; p <= 3; ++p) {  // 5000 bytes each: two fit in 12000, the third does not
    ASSERT_TRUE(net.hosts[p]->Send(0, dst, p + 1, Gradients(1250, 1.0f), LayerPriority(0, 1), 0.0).ok());
  }
  EngineLimits limits;
  limits.max_virtual_ns = 10'000'000'000;
  net.engine.SetLimits(limits);
  const Status run = net.engine.Run();
  ASSERT_TRUE(run.ok()) << run.message();
  EXPECT_EQ(net.receiver().stats().starts_refused, 2u);
  const DlcpSendFlow& big = *net.hosts[0]->send_flows().at(0);
  EXPECT_TRUE(big.done() && big.refused);
  EXPECT_EQ(net.receiver().Received(Ip(0), 1), nullptr);  // no buffer was made for it
  uint32_t delivered = 0, refused = 0;
  for (uint32_t p = 1; p <= 3; ++p) {
    const DlcpSendFlow& f = *net.hosts[p]->send_flows().at(0);
    ASSERT_TRUE(f.done()) << p;
    if (f.refused) {
      ++refused;
      EXPECT_EQ(net.receiver().Received(Ip(p), p + 1), nullptr);
    } else {
      ++delivered;
      const DlcpRecvFlow* r = net.receiver().Received(Ip(p), p + 1);
      ASSERT_NE(r, nullptr);
      EXPECT_EQ(r->buffer->received_bytes(), 5000u);
    }
  }
  EXPECT_EQ(delivered, 2u);
  EXPECT_EQ(refused, 1u);
}

TEST(DlcpHosts, BadSendsAreRefused) {
  Incast net;
  const TcpEnd dst{Mac(kReceiverPort), Ip(kReceiverPort), kDlcpDefaultUdpPort};
  const std::vector<float> g = Gradients(100, 1.0f);
  EXPECT_FALSE(net.hosts[0]->Send(0, dst, 1, {}, LayerPriority(0, 1), 0.1).ok());
  EXPECT_FALSE(net.hosts[0]->Send(0, dst, 1, g, LayerPriority(0, 1), 1.0).ok());
  ASSERT_TRUE(net.hosts[0]->Send(0, dst, 1, g, LayerPriority(0, 1), 0.1).ok());
  EXPECT_FALSE(net.hosts[0]->Send(0, dst, 1, g, LayerPriority(0, 1), 0.1).ok());  // in flight
}

}  // namespace
}  // namespace swemu
