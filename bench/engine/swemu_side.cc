// swemu's side of the engine benchmark (bench/engine/README.md): the leaf-spine of DLCP's
// experiment (hostlib/dlcp/fabric.h) with `l2l3` on every switch, per-flow ECMP and ECN marking
// in egress at K packets, and the model DCTCP hosts of the PCN and DLCP experiments
// (hostlib/common/tcp_host.h), run in the virtual-time engine for a fixed virtual time.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/engine/workload.h"
#include "hostlib/common/engine_transport.h"
#include "hostlib/common/tcp_host.h"
#include "hostlib/dlcp/fabric.h"
#include "pipeline/engine/engine.h"
#include "pipeline/mpi/mpi_ranks.h"

namespace swemu {
namespace {

using swemu_bench::BenchFlow;
using swemu_bench::BenchResult;
using swemu_bench::BenchShape;

constexpr uint32_t kFrameBytes = 1514;  // a full segment: mss 1448 + headers

QueueConfig BenchQueues(const BenchShape& s) {
  QueueConfig q;
  q.depth_pkts = s.queue_pkts;
  q.ecn_threshold_bytes = uint64_t{s.ecn_k_pkts} * kFrameBytes;
  return q;
}

class SwemuBench {
 public:
  // Under mpirun, each rank runs its share of the partitions (one per rank by default).
  SwemuBench(const BenchShape& s, RankExchange* ranks)
      : s_(s),
        ranks_(ranks),
        engine_(1, 1 << 18, ranks != nullptr && s.partitions == 0 ? ranks->ranks() : s.partitions,
                ranks) {}
  const Engine& engine() const { return engine_; }

  Status Build();
  Status Run(BenchResult* r);

 private:
  void Collect(BenchResult* r);

  const BenchShape& s_;
  RankExchange* ranks_;
  Engine engine_;
  std::vector<DlcpHostAddress> addr_;
  std::vector<std::unique_ptr<TcpHost>> hosts_;
  std::vector<std::string> hosts_sw_;  // each host's switch
  std::vector<BenchFlow> plan_;
  std::vector<EcnTcpSender*> finite_;
  uint64_t queue_sum_ = 0;  // packets queued, summed over the samples
  uint64_t samples_ = 0;
};

Status SwemuBench::Build() {
  const TopologyConfig topo =
      DlcpLeafSpine({s_.tors, s_.hosts_per_tor, s_.spines, s_.link_bps, s_.link_delay_ns, 1});
  Result<std::vector<DlcpHostAddress>> addr =
      AddDlcpFabric(engine_, topo, /*dlcp=*/false, 1, BenchQueues(s_));
  if (!addr.ok()) return addr.status();
  addr_ = std::move(*addr);
  EcnTcpOptions opt;
  opt.cc = CongestionControl::kDctcp;
  opt.min_rto_ns = s_.min_rto_ns;
  opt.initial_rto_ns = s_.min_rto_ns;
  opt.link_bps = s_.link_bps;
  for (uint32_t h = 0; h < topo.hosts.size(); ++h) {
    const TopologyHost& host = topo.hosts[h];
    Result<EngineTransport*> tr =
        EngineTransport::Attach(engine_, host.sw, host.port, host.delay_ns, host.loss);
    if (!tr.ok()) return tr.status();
    hosts_.push_back(std::make_unique<TcpHost>(**tr, addr_[h].mac, addr_[h].ip, opt));
    hosts_sw_.push_back(host.sw);
    hosts_.back()->Listen(swemu_bench::kBenchLongPort);
    hosts_.back()->Listen(swemu_bench::kBenchIncastPort);
    (*tr)->SetEndpoint(hosts_.back().get());
  }
  plan_ = swemu_bench::PlanBenchFlows(s_);
  for (const BenchFlow& f : plan_) {
    const TcpEnd to{addr_[f.src].gateway, addr_[f.dst].ip, f.dst_port};
    const TimeNs stop = f.bytes == 0 ? static_cast<TimeNs>(s_.duration_ns) : kNever;
    EcnTcpSender& sender =
        hosts_[f.src]->AddFlow({to, f.src_port, static_cast<TimeNs>(f.start_ns), stop, f.bytes});
    if (f.bytes != 0) finite_.push_back(&sender);
  }
  engine_.SetSampler(swemu_bench::kBenchSampleNs, [this](TimeNs) {
    for (std::size_t k = 0; k < engine_.num_switches(); ++k) {
      if (engine_.RunsSwitchAt(k)) queue_sum_ += engine_.switch_at(k).tm().TotalQueued();
    }
    ++samples_;
  });
  return Status::Ok();
}

Status SwemuBench::Run(BenchResult* r) {
  const auto begin = std::chrono::steady_clock::now();
  SWEMU_RETURN_IF_ERROR(engine_.Run(static_cast<TimeNs>(s_.duration_ns)));
  r->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  Collect(r);
  return Status::Ok();
}

// What the hosts and switches this process runs saw, summed over the ranks.
void SwemuBench::Collect(BenchResult* r) {
  const EngineCounters& c = engine_.counters();  // the whole network's (engine.h, "Ranks")
  r->events = engine_.events_processed();
  r->packet_hops = c.injected + c.link_frames + c.delivered;
  r->flows_started = finite_.size();
  uint64_t sums[5] = {};  // flows completed, bytes delivered, queue samples, marks, drops
  for (const EcnTcpSender* f : finite_) sums[0] += f->done() ? 1 : 0;
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    if (!engine_.RunsSwitch(hosts_sw_[h])) continue;
    for (uint16_t port : {swemu_bench::kBenchLongPort, swemu_bench::kBenchIncastPort}) {
      for (const EcnTcpFlowStats& f : hosts_[h]->sink(port)->flows()) sums[1] += f.bytes;
    }
  }
  sums[2] = queue_sum_;
  for (std::size_t k = 0; k < engine_.num_switches(); ++k) {
    if (!engine_.RunsSwitchAt(k)) continue;
    const Switch& sw = engine_.switch_at(k);
    for (PortId p = 0; p < sw.num_ports(); ++p) {
      for (int q = 0; q < kQueuesPerPort; ++q) sums[3] += sw.tm().queue_counters(p, q).marked;
    }
    sums[4] += sw.tm().drops(DropReason::kTmQueueFull);
  }
  if (ranks_ != nullptr) SumOverRanks(*ranks_, sums);
  r->flows_completed = sums[0];
  r->bytes_delivered = sums[1];
  r->mean_queue_pkts = samples_ == 0 ? 0 : static_cast<double>(sums[2]) / static_cast<double>(samples_);
  r->ecn_marks = sums[3];
  r->drops = sums[4];
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  swemu_bench::BenchShape shape;
  std::string error;
  if (!swemu_bench::ParseBenchArgs(argc, argv, &shape, &error)) {
    std::fprintf(stderr, "swemu_engine_bench: %s\n", error.c_str());
    return 2;
  }
  std::unique_ptr<swemu::MpiRanks> ranks = swemu::MpiRanks::Join(&argc, &argv);
  const bool speaks = ranks == nullptr || ranks->rank() == 0;
  swemu::SwemuBench bench(shape, ranks.get());
  swemu::Status st = bench.Build();
  swemu_bench::BenchResult r;
  if (st.ok()) st = bench.Run(&r);
  if (ranks != nullptr) st = swemu::AgreeStatus(*ranks, st);
  if (!st.ok()) {
    if (speaks) std::fprintf(stderr, "swemu_engine_bench: %s\n", st.message().c_str());
    return 1;
  }
  if (speaks) std::printf("%s\n", swemu_bench::FormatBenchLine("swemu", shape, r).c_str());
  if (bench.engine().num_partitions() > 1 || shape.partitions != 0) {
    // Each rank's own view of the windows (rank 0's alone without ranks).
    const swemu::Engine::WindowStats& w = bench.engine().window_stats();
    std::printf("%spartitions=%zu lookahead_ns=%llu windows=%llu crossings=%llu "
                "windows_wall_s=%.3f busiest_s=%.3f handover_s=%.3f",
                ranks == nullptr ? "" : ("rank=" + std::to_string(ranks->rank()) + " ").c_str(),
                bench.engine().num_partitions(),
                static_cast<unsigned long long>(bench.engine().lookahead_ns()),
                static_cast<unsigned long long>(w.windows),
                static_cast<unsigned long long>(w.crossings), w.wall_s, w.busiest_s,
                w.handover_s);
    if (ranks != nullptr) {
      std::printf(" rank_messages=%llu rank_bytes=%llu rank_sync_s=%.3f",
                  static_cast<unsigned long long>(w.rank_messages),
                  static_cast<unsigned long long>(w.rank_bytes), w.rank_sync_s);
    }
    std::printf("\n");
  }
  return 0;
}
