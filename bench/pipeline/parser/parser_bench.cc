// Parser and deparser cost per packet at burst 32 (the headline: ns_per_pkt).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "pipeline/core/packet_pool.h"
#include "pipeline/parser/deparser.h"
#include "pipeline/parser/header_ops.h"
#include "pipeline/parser/parser.h"
#include "pipeline/wire/frame_builder.h"

namespace swemu {
namespace {

constexpr int kBurst = 32;
constexpr std::size_t kEthIpv4Udp = 14 + 20 + 8;
constexpr std::size_t kEthIpv4Tcp = 14 + 20 + 20;
constexpr std::size_t kEthVlanIpv4Udp = 14 + 4 + 20 + 8;

// A burst of kBurst packets of one flow-varying frame shape (distinct source ports, so the
// flow hashes differ as in real traffic).
class Burst {
 public:
  template <typename MakeFrame>
  explicit Burst(MakeFrame make) : pool_(kBurst) {
    for (int i = 0; i < kBurst; ++i) {
      frames_.push_back(make(static_cast<uint16_t>(1000 + i)));
      packets_[i] = pool_.FromBytes(frames_[i].data(), static_cast<uint32_t>(frames_[i].size()));
    }
  }
  ~Burst() {
    for (Packet* p : packets_) pool_.Free(p);
  }
  // Puts the original bytes back (the TTL benchmarks would otherwise run the TTL down to 0).
  void Refill() {
    for (int i = 0; i < kBurst; ++i)
      std::memcpy(packets_[i]->data, frames_[i].data(), frames_[i].size());
  }
  Packet& operator[](int i) { return *packets_[i]; }

 private:
  HeapPacketPool pool_;
  std::vector<std::vector<uint8_t>> frames_;
  Packet* packets_[kBurst] = {};
};

FrameBuilder Base() {
  FrameBuilder b;
  b.Eth(MacAddr::FromU64(0x020000000002), MacAddr::FromU64(0x020000000001))
      .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 1, 2))
      .Tos(MakeTos(0, kEcnEct0));
  return b;
}

void Report(benchmark::State& state, std::size_t frame_len) {
  const auto pkts = static_cast<double>(state.iterations() * kBurst);
  state.SetItemsProcessed(state.iterations() * kBurst);
  state.SetBytesProcessed(state.iterations() * kBurst * static_cast<int64_t>(frame_len));
  state.counters["ns_per_pkt"] =
      benchmark::Counter(pkts, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void ParseBurst(benchmark::State& state, Burst& burst, const Parser& parser) {
  for (auto _ : state) {
    int parsed = 0;
    for (int i = 0; i < kBurst; ++i) parsed += parser.Parse(burst[i]);
    benchmark::DoNotOptimize(parsed);
  }
}

void BM_ParseEthIpv4Udp(benchmark::State& state) {
  const auto len = static_cast<std::size_t>(state.range(0));
  Burst burst(
      [&](uint16_t sport) { return Base().Udp(sport, 4791).Payload(len - kEthIpv4Udp).Build(); });
  Parser parser(ParserConfig{});
  ParseBurst(state, burst, parser);
  Report(state, len);
}
BENCHMARK(BM_ParseEthIpv4Udp)->Arg(64)->Arg(1500);

void BM_ParseEthIpv4UdpApp(benchmark::State& state) {
  Burst burst(
      [&](uint16_t sport) { return Base().Udp(sport, 9000).Payload(64 - kEthIpv4Udp).Build(); });
  Parser parser(ParserConfig{});
  if (!parser.AddUdpApp(9000, 16, 1).ok()) state.SkipWithError("AddUdpApp failed");
  ParseBurst(state, burst, parser);
  Report(state, 64);
}
BENCHMARK(BM_ParseEthIpv4UdpApp);

void BM_ParseEthIpv4Tcp(benchmark::State& state) {
  Burst burst(
      [&](uint16_t sport) { return Base().Tcp(sport, 80).Payload(64 - kEthIpv4Tcp).Build(); });
  Parser parser(ParserConfig{});
  ParseBurst(state, burst, parser);
  Report(state, 64);
}
BENCHMARK(BM_ParseEthIpv4Tcp);

void BM_ParseEthVlanIpv4Udp(benchmark::State& state) {
  Burst burst([&](uint16_t sport) {
    return Base().Vlan(100).Udp(sport, 4791).Payload(64 - kEthVlanIpv4Udp).Build();
  });
  Parser parser(ParserConfig{});
  ParseBurst(state, burst, parser);
  Report(state, 64);
}
BENCHMARK(BM_ParseEthVlanIpv4Udp);

// Parse, TTL - 1 (incremental checksum), deparse with the given dirty bits.
void ParseTtlDeparse(benchmark::State& state, uint8_t dirty) {
  const auto len = static_cast<std::size_t>(state.range(0));
  Burst burst([&](uint16_t sport) {
    return Base().Ttl(255).Udp(sport, 4791).Payload(len - kEthIpv4Udp).Build();
  });
  Parser parser(ParserConfig{});
  Deparser deparser(DeparserConfig{});
  int rounds = 0;
  for (auto _ : state) {
    for (int i = 0; i < kBurst; ++i) {
      Packet& pkt = burst[i];
      if (!parser.Parse(pkt)) continue;
      DecrementTtl(pkt);
      pkt.hdr.dirty = dirty;
      deparser.Deparse(pkt);
    }
    if (++rounds == 250) {  // before any TTL reaches 0
      rounds = 0;
      burst.Refill();
    }
  }
  Report(state, len);
}

void BM_ParseDecTtlDeparse(benchmark::State& state) { ParseTtlDeparse(state, 0); }
BENCHMARK(BM_ParseDecTtlDeparse)->Arg(64);

// The same with a full UDP checksum recompute (a program rewrote the payload): grows with size.
void BM_ParseDecTtlDeparseDirtyL4(benchmark::State& state) {
  ParseTtlDeparse(state, kDirtyIpv4 | kDirtyL4);
}
BENCHMARK(BM_ParseDecTtlDeparseDirtyL4)->Arg(64)->Arg(512)->Arg(1500);

}  // namespace
}  // namespace swemu
