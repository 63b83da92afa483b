// ATP end-host costs per packet, sweeping elements per packet (16/32/64/112):
//   - worker: quantize + build + send 32 gradient packets, then take their 32 parameter packets
//     (the whole per-packet work of a worker, one lane, window never limiting);
//   - PS: aggregate 32 original gradients (8 seqs x 4 workers, l2l3 switch: all at the PS) or
//     32 switch-complete aggregates (ATP switch), each completed seq emitting its parameter
//     packet.
// bytes/s is gradient payload (4 B per element); Gbps per core = bytes/s * 8 / 1e9.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "hostlib/atp/atp_frame.h"
#include "hostlib/atp/ps.h"
#include "hostlib/atp/worker.h"

namespace swemu {
namespace {

constexpr uint32_t kBurst = 32;

class NullTransport final : public Transport {
 public:
  bool Send(std::span<const uint8_t> frame) noexcept override {
    bytes += frame.size();
    return true;
  }
  uint64_t bytes = 0;
};

AtpJobConfig Job(uint16_t elements) {
  AtpJobSpec spec;
  spec.job_id = 1;
  for (uint32_t w = 0; w < 4; ++w) {
    spec.workers.push_back({"w" + std::to_string(w), MacAddr::FromU64(w + 1),
                            MakeIpv4Addr(10, 0, 0, static_cast<uint8_t>(w + 1)), "r0"});
  }
  spec.ps = {"ps", MacAddr::FromU64(100), MakeIpv4Addr(10, 0, 0, 100), "r0"};
  spec.group_ip = MakeIpv4Addr(239, 0, 0, 1);
  spec.elements = elements;
  return *MakeAtpJobConfig(spec);
}

std::vector<uint8_t> Frame(const AtpJobConfig& job, AtpFields fields, bool floats) {
  AtpFrameTemplate tmpl(MacAddr::FromU64(1), job.group_mac, 1, job.spec.group_ip, job.spec.udp_port,
                        job.spec.elements, 0);
  std::vector<uint8_t> frame(tmpl.frame_len());
  fields.job_id = 1;
  fields.num_elements = job.spec.elements;
  uint8_t* atp = tmpl.Write(frame.data());
  fields.Encode(atp);
  std::mt19937 rng(1);
  for (uint16_t i = 0; i < job.spec.elements; ++i) {
    if (floats) {
      StoreAtpFloat(atp + kAtpHeaderLen, i, static_cast<float>(rng() % 1000) * 0.01f);
    } else {
      StoreAtpInt(atp + kAtpHeaderLen, i, static_cast<int32_t>(rng() % 100000));
    }
  }
  return frame;
}

void SetCounters(benchmark::State& state, uint16_t elements) {
  const double pkts = static_cast<double>(state.iterations()) * kBurst;
  state.SetItemsProcessed(static_cast<int64_t>(pkts));
  state.SetBytesProcessed(static_cast<int64_t>(pkts * elements * 4));
  state.counters["ns_per_pkt"] =
      benchmark::Counter(pkts, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_WorkerSendAndParam(benchmark::State& state) {
  const auto e = static_cast<uint16_t>(state.range(0));
  const AtpJobConfig job = Job(e);
  NullTransport tx;
  AtpWorkerOptions options;
  options.lanes = 1;
  AtpWorker worker(job, 0, &tx, options);
  std::vector<float> in(std::size_t{kBurst} * e), out(in.size());
  std::mt19937 rng(2);
  for (float& x : in) x = static_cast<float>(rng() % 2000) * 0.001f - 1.0f;
  AtpFields f;
  f.flags = kAtpFlagParam | kAtpFlagFloat;
  f.bitmap = job.full_bitmap;
  std::vector<uint8_t> param = Frame(job, f, true);
  auto* header = HeaderAt<AtpHeader>(param.data() + kAtpHeaderOffset);
  AllReduceJob call;
  TimeNs now = 0;
  for (auto _ : state) {
    worker.Submit(&call, in.data(), out.data(), in.size());
    worker.Pump(++now);
    for (uint32_t k = 0; k < kBurst; ++k) {
      header->SetSeq(call.first_seq() + k);
      worker.OnParam(now, *header, false);
    }
    benchmark::DoNotOptimize(out.data());
  }
  if (!call.done()) state.SkipWithError("call did not complete");
  SetCounters(state, e);
}
BENCHMARK(BM_WorkerSendAndParam)->Arg(16)->Arg(32)->Arg(64)->Arg(112);

// range(1): packets per seq: 4 = originals from 4 workers, 1 = switch-complete aggregates.
void BM_PsAggregate(benchmark::State& state) {
  const auto e = static_cast<uint16_t>(state.range(0));
  const auto per_seq = static_cast<uint32_t>(state.range(1));
  const AtpJobConfig job = Job(e);
  NullTransport tx;
  AtpPs ps(job, &tx);
  std::vector<std::vector<uint8_t>> frames;
  for (uint32_t w = 0; w < per_seq; ++w) {
    AtpFields f;
    f.worker_id = static_cast<uint8_t>(w);
    f.bitmap = per_seq == 1 ? job.full_bitmap : 1u << w;
    frames.push_back(Frame(job, f, false));
  }
  uint32_t seq = 0;
  for (auto _ : state) {
    for (uint32_t p = 0; p < kBurst; p += per_seq, ++seq) {
      for (auto& frame : frames) {
        auto* h = HeaderAt<AtpHeader>(frame.data() + kAtpHeaderOffset);
        h->SetSeq(seq);
        ps.OnGradient(*h, false);
      }
    }
  }
  if (ps.stats().completed != seq) state.SkipWithError("seqs did not complete");
  SetCounters(state, e);
}
BENCHMARK(BM_PsAggregate)->ArgsProduct({{16, 32, 64, 112}, {4, 1}});

}  // namespace
}  // namespace swemu
