// The PCN worker/PS handshake and DDL bursts through a pcn switch in virtual time: STARTs
// answered and matched, bursts that follow, the switch's counter back at zero after every
// burst, a lost ACK that delays the burst only by the bounded wait, and the run without PCN.
#include "hostlib/pcn/ddl.h"

#include <gtest/gtest.h>

#include "hostlib/common/engine_transport.h"
#include "pipeline/programs/pcn.h"

namespace swemu {
namespace {

const MacAddr kWorkerMac = MacAddr::FromU64(0x020000000001ull);
const MacAddr kPsMac = MacAddr::FromU64(0x020000000002ull);
constexpr Ipv4Addr kWorkerIp = 0x0A000001, kPsIp = 0x0A000002;
constexpr TimeNs kHostDelay = 1'000'000;  // RTT about 4 ms

struct Bench {
  explicit Bench(bool answering_ps = true) : engine(3, 16384) {
    SwitchConfig config;
    config.num_ports = 2;
    config.program = "pcn";
    EXPECT_TRUE(engine.AddSwitch(config, "").ok());
    sw = engine.FindSwitch("sw0");
    for (const std::string& cmd : {"table_add dmac forward " + FormatMac(kPsMac) + " => 1",
                                   "table_add dmac forward " + FormatMac(kWorkerMac) + " => 0",
                                   std::string("table_add pcn_job job 10.0.0.2 => 0"),
                                   std::string("set_port_rate 1 100M"),
                                   std::string("set_queue_depth 60 1")}) {
      Result<std::string> r = sw->commands().Execute(cmd);
      EXPECT_TRUE(r.ok()) << cmd << ": " << r.message();
    }
    tw = *EngineTransport::Attach(engine, "sw0", 0, kHostDelay);
    tp = *EngineTransport::Attach(engine, "sw0", 1, kHostDelay);
    options.ps = TcpEnd{kPsMac, kPsIp, kPcnDefaultUdpPort};
    options.burst_bytes = 200'000;
    options.iterations = 3;
    options.idle_ns = 50'000'000;
    if (answering_ps) {
      ps = std::make_unique<DdlPs>(*tp, kPsMac, kPsIp, kPcnDefaultUdpPort, EcnTcpOptions{});
      ps->Listen(options.ps_data_port);
      tp->SetEndpoint(ps.get());
    } else {  // a PS that never answers a START
      silent_ps = std::make_unique<TcpHost>(*tp, kPsMac, kPsIp, EcnTcpOptions{});
      silent_ps->Listen(options.ps_data_port);
      tp->SetEndpoint(silent_ps.get());
    }
  }
  void Run() {
    worker = std::make_unique<DdlWorker>(*tw, kWorkerMac, kWorkerIp, options, EcnTcpOptions{});
    tw->SetEndpoint(worker.get());
    EngineLimits limits;
    limits.max_virtual_ns = 10'000'000'000;
    engine.SetLimits(limits);
    ASSERT_TRUE(engine.Run().ok());
  }
  const PcnCounters& pcn() { return static_cast<PcnProgram&>(sw->program()).counters(); }
  uint64_t BytesAtPs() const {
    const EcnTcpSink* sink = ps ? ps->sink(options.ps_data_port)
                                : silent_ps->sink(options.ps_data_port);
    uint64_t bytes = 0;
    for (const EcnTcpFlowStats& f : sink->flows()) bytes += f.bytes;
    return bytes;
  }

  Engine engine;
  Switch* sw = nullptr;
  EngineTransport* tw = nullptr;
  EngineTransport* tp = nullptr;
  DdlWorkerOptions options;
  std::unique_ptr<DdlPs> ps;
  std::unique_ptr<TcpHost> silent_ps;
  std::unique_ptr<DdlWorker> worker;
};

TEST(PcnDdl, EachBurstIsAnnouncedAnsweredAndArrives) {
  Bench b;
  b.Run();
  ASSERT_TRUE(b.worker->finished());
  ASSERT_EQ(b.worker->bursts().size(), 3u);
  for (const DdlBurst& burst : b.worker->bursts()) {
    ASSERT_NE(burst.ack_ns, kNever);
    // START to ACK is one round trip: 4 ms of links plus two small frames' serialization.
    EXPECT_GE(burst.ack_ns - burst.announced_ns, 4 * kHostDelay);
    EXPECT_LT(burst.ack_ns - burst.announced_ns, 5 * kHostDelay);
    EXPECT_EQ(burst.start_ns, burst.ack_ns);  // the burst goes as the ACK comes
    EXPECT_NE(burst.done_ns, kNever);
  }
  EXPECT_EQ(b.BytesAtPs(), 3 * 200'000u);
  EXPECT_EQ(b.ps->responder().stats().starts, 3u);
  EXPECT_EQ(b.worker->announcer().stats().acks, 3u);
  EXPECT_EQ(b.pcn().starts, 3u);
  EXPECT_EQ(b.pcn().bursts_arrived, 3u);
  EXPECT_EQ(b.pcn().timeouts, 0u);
  EXPECT_EQ(static_cast<PcnProgram&>(b.sw->program()).ActiveThreshold(1, b.engine.Now()), 40u);
}

TEST(PcnDdl, WithoutAnAckTheBurstGoesAfterTheBoundedWaitAndTheResentStartCountsOnce) {
  Bench b(/*answering_ps=*/false);
  b.options.announce.ack_wait_ns = 10'000'000;
  b.options.announce.start_retries = 1;
  b.Run();
  ASSERT_TRUE(b.worker->finished());
  for (const DdlBurst& burst : b.worker->bursts()) {
    EXPECT_EQ(burst.ack_ns, kNever);
    EXPECT_EQ(burst.start_ns - burst.announced_ns, 10'000'000);
  }
  EXPECT_EQ(b.worker->announcer().stats().starts_sent, 6u);
  EXPECT_EQ(b.worker->announcer().stats().ack_timeouts, 3u);
  EXPECT_EQ(b.pcn().starts, 3u);
  EXPECT_EQ(b.pcn().starts_repeated, 3u);
  EXPECT_EQ(b.pcn().bursts_arrived, 3u);
  EXPECT_EQ(b.BytesAtPs(), 3 * 200'000u);
}

TEST(PcnDdl, WithoutPcnNoStartIsSent) {
  Bench b;
  b.options.pcn = false;
  b.Run();
  ASSERT_TRUE(b.worker->finished());
  EXPECT_EQ(b.worker->announcer().stats().starts_sent, 0u);
  EXPECT_EQ(b.pcn().starts, 0u);
  EXPECT_EQ(b.worker->bursts()[0].start_ns, 0);
  EXPECT_EQ(b.BytesAtPs(), 3 * 200'000u);
}

TEST(PcnDdl, BadOptionsAreNamed) {
  DdlWorkerOptions o;
  o.announce.threshold = 12;
  EXPECT_NE(o.Validate().message().find("multiple of 5"), std::string::npos);
  o.announce.threshold = 10;
  o.iterations = 0;
  EXPECT_FALSE(o.Validate().ok());
  o.iterations = 6;
  o.burst_bytes = 0;
  EXPECT_FALSE(o.Validate().ok());
  o.burst_bytes = 1;
  EXPECT_TRUE(o.Validate().ok());
}

}  // namespace
}  // namespace swemu
