// One switch in the engine: timing of shaped ports and host delays, scheduling, accounting.
#include "pipeline/engine/engine.h"

#include <gtest/gtest.h>

#include "tests/pipeline/engine/engine_test_util.h"

namespace swemu::engine_test {
namespace {

constexpr uint64_t k1G = 1'000'000'000;

// At 1 Gb/s a 100-byte frame plus 24 bytes of preamble, IFG and FCS takes 992 ns.
TEST(EngineTest, OutputTimestampsFollowPortRateAndHostDelays) {
  const std::string in = TempPath("one_in.pcap"), out = TempPath("one_out.pcap");
  WritePcap(
      in, {{1000, Frame(0, 0, 100, 1)}, {1000, Frame(0, 0, 100, 2)}, {1000, Frame(0, 0, 100, 3)}});
  Engine engine(1, 256);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", k1G), "").ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 0, in, "", 10, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 1, "", out, 50, 0}).ok());
  ASSERT_TRUE(engine.Run().ok());

  std::vector<PcapRecord> records = ReadPcap(out);
  // Arrive at 1010; serialisations start at 1010, 2002, 2994; each ends 992 ns later, +50 ns.
  EXPECT_EQ(Timestamps(records), (std::vector<TimeNs>{2052, 3044, 4036}));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].bytes, Frame(0, 0, 100, 3));
  EXPECT_EQ(engine.counters().injected, 3u);
  EXPECT_EQ(engine.counters().delivered, 3u);
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  EXPECT_EQ(engine.pool().InUse(), 0u);
}

TEST(EngineTest, UnshapedPortSendsAtArrivalTime) {
  const std::string in = TempPath("unshaped_in.pcap"), out = TempPath("unshaped_out.pcap");
  WritePcap(in, {{5000, Frame()}, {5000, Frame()}, {7000, Frame()}});
  Engine engine(1, 256);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", 0), "").ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 3, in, "", 0, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 2, "", out, 0, 0}).ok());
  ASSERT_TRUE(engine.Run().ok());
  EXPECT_EQ(Timestamps(ReadPcap(out)), (std::vector<TimeNs>{5000, 5000, 7000}));
}

// Queue 0 is paced to 1000 packets/s, so its second packet waits until 1 ms and a service event
// is pending then; a queue-7 packet arriving at 11 us must not wait for that event.
TEST(EngineTest, AnEarlierTransmitTimeReplacesAPendingLaterService) {
  const std::string in = TempPath("prio_in.pcap"), out = TempPath("prio_out.pcap");
  WritePcap(
      in, {{1000, Frame(0, 0, 100, 1)}, {1000, Frame(0, 0, 100, 2)}, {11000, Frame(0, 7, 100, 3)}});
  Engine engine(1, 256);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", 0), "").ok());
  ASSERT_TRUE(engine.FindSwitch("sw")->tm().SetQueueRate(PortId{1}, 0, 1000).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 0, in, "", 0, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 1, "", out, 0, 0}).ok());
  ASSERT_TRUE(engine.Run().ok());
  std::vector<PcapRecord> records = ReadPcap(out);
  EXPECT_EQ(Timestamps(records), (std::vector<TimeNs>{1000, 11000, 1'001'000}));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].bytes, Frame(0, 7, 100, 3));
  // The service first set for 1 ms was superseded; it was popped and skipped.
  EXPECT_EQ(engine.stale_services(), 1u);
}

// Multicast (one copy to a host, one to an unattached port), a consumed frame, a frame to an
// unattached port and one to a port the switch does not have: every frame is accounted for.
TEST(EngineTest, EveryFrameIsAccountedFor) {
  const std::string in = TempPath("acct_in.pcap"), out = TempPath("acct_out.pcap");
  WritePcap(in, {{100, Frame(kToMulticast)},
                 {200, Frame(kConsume)},
                 {300, Frame(kToPort2)},
                 {400, Frame(kToPort9)},
                 {500, Frame()}});
  Engine engine(1, 256);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", k1G), "").ok());
  Switch& sw = *engine.FindSwitch("sw");
  ASSERT_TRUE(sw.tm().McGroupCreate(1).ok());
  Result<uint32_t> node = sw.tm().McNodeCreate(0, {1, 3});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(sw.tm().McNodeAssociate(1, *node).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 0, in, "", 0, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 1, "", out, 0, 0}).ok());
  ASSERT_TRUE(engine.Run().ok());

  EXPECT_EQ(ReadPcap(out).size(), 2u);  // the multicast copy and the plain frame
  const EngineCounters& c = engine.counters();
  EXPECT_EQ(c.injected, 5u);
  EXPECT_EQ(c.delivered, 2u);
  EXPECT_EQ(c.drops[static_cast<std::size_t>(DropReason::kLinkDown)], 2u);
  EXPECT_EQ(sw.counters().program.consumed, 1u);
  EXPECT_EQ(sw.Drops(DropReason::kBadEgressPort), 1u);
  EXPECT_EQ(sw.tm().multicast_copies(), 1u);
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  EXPECT_EQ(engine.pool().InUse(), 0u);
}

TEST(EngineTest, ConservationHoldsInTheMiddleOfARun) {
  const std::string in = TempPath("mid_in.pcap");
  Records records;
  for (int i = 0; i < 50; ++i) records.push_back({1000, Frame(0, 0, 1000, uint16_t(i))});
  WritePcap(in, records);
  Engine engine(1, 256);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", k1G), "").ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 0, in, "", 0, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 1, "", "", 0, 0}).ok());
  ASSERT_TRUE(engine.Run(20'000).ok());
  EXPECT_FALSE(engine.idle());
  EXPECT_GT(engine.FindSwitch("sw")->tm().TotalQueued(), 0u);
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  EXPECT_GT(engine.pool().InUse(), 0u);
  ASSERT_TRUE(engine.Run().ok());
  EXPECT_TRUE(engine.idle());
  EXPECT_EQ(engine.counters().delivered, 50u);
  EXPECT_TRUE(engine.CheckConservation().ok());
  EXPECT_EQ(engine.pool().InUse(), 0u);
}

// Run(until) moves the clock to `until` even when the next event lies beyond it: a caller that
// steps in slices (swemu-atp sim) once saw no time pass and looped for ever.
TEST(EngineTest, RunUntilMovesTheClockWhenTheNextEventIsLater) {
  const std::string in = TempPath("far_in.pcap");
  WritePcap(in, {{5'000'000'000, Frame()}});
  Engine engine(1, 64);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", k1G), "").ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 0, in, "", 0, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 1, "", "", 0, 0}).ok());
  TimeNs t = 0;
  for (int slice = 0; slice < 3; ++slice) {
    t += 10'000'000;
    ASSERT_TRUE(engine.Run(t).ok());
    EXPECT_EQ(engine.Now(), t);
    EXPECT_FALSE(engine.idle());
  }
  // With a stop condition the clock stays at the event that met it, not at the slice's end.
  ASSERT_TRUE(
      engine.Run(t + 10'000'000'000, [&] { return engine.counters().delivered == 1; }).ok());
  EXPECT_EQ(engine.counters().delivered, 1u);
  EXPECT_GE(engine.Now(), 5'000'000'000u);
  EXPECT_LT(engine.Now(), 5'001'000'000u);
}

// A run past its limits stops with an error naming the limit; every frame is still accounted.
TEST(EngineTest, LimitsOnEventsAndVirtualTimeStopARunWithAnError) {
  const std::string in = TempPath("limit_in.pcap");
  Records records;
  for (int i = 0; i < 20; ++i)
    records.push_back({1000 + 1000 * TimeNs(i), Frame(0, 0, 1000, uint16_t(i))});
  WritePcap(in, records);
  for (const bool by_events : {true, false}) {
    Engine engine(1, 256);
    ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", k1G), "").ok());
    ASSERT_TRUE(engine.AddHostPort({"sw", 0, in, "", 0, 0}).ok());
    ASSERT_TRUE(engine.AddHostPort({"sw", 1, "", "", 0, 0}).ok());
    EngineLimits limits;
    if (by_events) {
      limits.max_events = 10;
    } else {
      limits.max_virtual_ns = 5000;
    }
    engine.SetLimits(limits);
    Status ran = engine.Run();
    ASSERT_FALSE(ran.ok()) << by_events;
    EXPECT_NE(ran.message().find(by_events ? "stopped after 10 events, the run's limit"
                                           : "of virtual time, the run's limit"),
              std::string::npos)
        << ran.message();
    EXPECT_LE(engine.events_processed(), by_events ? 10u : 100u);
    EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  }
}

// A host's "lost" counts both directions: frames it sent that the link lost, and frames the
// switch sent it that the link lost (once only the first).
TEST(EngineTest, PerHostLossCountsBothDirections) {
  const std::string in = TempPath("lossy_in.pcap");
  Records records;
  for (int i = 0; i < 400; ++i)
    records.push_back({1000 + 1000 * TimeNs(i), Frame(0, 0, 100, uint16_t(i))});
  WritePcap(in, records);
  Engine engine(7, 1024);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", k1G), "").ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 0, in, "", 0, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 1, "", "", 0, 0.25}).ok());  // receives only
  ASSERT_TRUE(engine.Run().ok());
  const uint64_t delivered = engine.counters().delivered;
  EXPECT_LT(delivered, 400u);
  const std::string json = engine.CountersJson();
  const std::string lost = std::to_string(400 - delivered);
  const std::string receiver =
      "\"port\": 1,\n        \"sent\": 0,\n        \"received\": " + std::to_string(delivered) +
      ",\n        \"lost\": " + lost +
      ",\n        \"lost_sent\": 0,\n        \"lost_to_host\": " + lost;
  EXPECT_NE(json.find(receiver), std::string::npos) << json;
}

TEST(EngineTest, CountersJsonAndSummaryNameEverything) {
  const std::string in = TempPath("json_in.pcap");
  WritePcap(in, {{100, Frame()}, {200, Frame(kToPort2)}});
  Engine engine(1, 64);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("edge", k1G), "").ok());
  ASSERT_TRUE(engine.AddHostPort({"edge", 0, in, "", 0, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"edge", 1, "", "", 0, 0}).ok());
  ASSERT_TRUE(engine.Run().ok());
  const std::string json = engine.CountersJson();
  for (const char* key : {"\"switches\"", "\"edge\"", "\"engine\"", "\"injected\": 2",
                          "\"delivered\": 1", "\"link_down\": 1", "\"hosts\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << "\n" << json;
  }
  const std::string summary = engine.PortSummary();
  EXPECT_NE(summary.find("switch edge"), std::string::npos) << summary;
  EXPECT_NE(summary.find("link_down 1"), std::string::npos) << summary;
}

TEST(EngineTest, CorruptInputStopsTheRunWithAnError) {
  const std::string in = TempPath("corrupt_in.pcap");
  WritePcap(in, {{100, Frame()}, {200, Frame()}});
  std::string bytes = FileBytes(in);
  std::ofstream(in, std::ios::binary) << bytes.substr(0, bytes.size() - 10);
  Engine engine(1, 64);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", 0), "").ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 0, in, "", 0, 0}).ok());
  Status run = engine.Run();
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.message().find(in), std::string::npos) << run.message();
}

}  // namespace
}  // namespace swemu::engine_test
