#include "tools/atp/atp_workload.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "pipeline/core/progress_line.h"

namespace swemu {

uint32_t PsHistoryFor(const ModelLayers& model, uint16_t elements) {
  uint64_t largest = 0;
  for (const LayerSize& layer : model.layers) {
    largest = std::max<uint64_t>(largest, std::min<uint64_t>(layer.params, kPartitionFloats));
  }
  const uint64_t packets = (largest + elements - 1) / elements;
  uint32_t history = 1024;
  while (history < 2 * packets && history < (1u << 30)) history <<= 1;
  return history;
}

AtpWorkload::AtpWorkload(WorkloadOptions options, std::vector<Context*> workers, Context* ps,
                         uint16_t aggregate_job, uint16_t plain_job, double scale)
    : options_(std::move(options)),
      workers_(std::move(workers)),
      ps_(ps),
      aggregate_job_(aggregate_job),
      plain_job_(plain_job),
      scale_(scale) {
  const uint64_t n = options_.model.TotalParams();
  in_.assign(workers_.size(), std::vector<float>(n));
  out_.assign(workers_.size(), std::vector<float>(n));
}

void AtpWorkload::Fill(uint32_t iteration) {
  for (uint32_t w = 0; w < workers_.size(); ++w) {
    std::size_t offset = 0;
    for (uint32_t l = 0; l < options_.model.layers.size(); ++l) {
      const std::size_t n = options_.model.layers[l].params;
      FillGradients(options_.gradients, w, iteration, l, std::span(in_[w]).subspan(offset, n));
      offset += n;
    }
    std::fill(out_[w].begin(), out_[w].end(), std::numeric_limits<float>::quiet_NaN());
  }
}

// One pass over every element: the worst |result - exact sum| over all workers, and the bound
// it must stay within: W int32 roundings, then the float32 rounding of the largest sum.
void AtpWorkload::CheckResults(PassResult* pass) const {
  double worst = 0;
  double largest = 0;
  const std::size_t n = in_.empty() ? 0 : in_[0].size();
  for (std::size_t i = 0; i < n; ++i) {
    double exact = 0;
    for (const auto& in : in_) exact += in[i];
    largest = std::max(largest, std::fabs(exact));
    for (const auto& out : out_) {
      const double err = std::fabs(double{out[i]} - exact);
      if (!(err <= worst)) worst = err;  // NaN (never written) counts as the worst
    }
  }
  pass->max_error = worst;
  pass->error_bound = static_cast<double>(workers_.size()) * 0.5 / scale_ + largest * 0x1.0p-23;
}

namespace {

// The smallest share of a core any busy-polling swemu got between two samples; -1 when none was
// measured. One starved switch (of two racks, say) slows every packet through it.
double LeastSwitchCpu(const LoadSample& before, const LoadSample& after, double wall) {
  double least = -1;
  const std::size_t n = std::min(before.switch_cpu_ns.size(), after.switch_cpu_ns.size());
  for (std::size_t s = 0; s < n; ++s) {
    if (before.switch_cpu_ns[s] < 0 || after.switch_cpu_ns[s] < 0) continue;
    const double share =
        static_cast<double>(after.switch_cpu_ns[s] - before.switch_cpu_ns[s]) / wall;
    least = least < 0 ? share : std::min(least, share);
  }
  return least;
}

}  // namespace

Result<PassResult> AtpWorkload::RunPass(const WorkloadDriver& driver, uint16_t job,
                                        uint32_t iteration) {
  const AtpPsStats before = *ps_->ps_stats(job);
  std::vector<AtpWorkerStats> worker_before;
  for (Context* w : workers_) worker_before.push_back(*w->worker_stats(job));

  const LoadSample load_before = driver.load ? driver.load() : LoadSample{};
  const uint64_t start = driver.now_ns();
  std::vector<AllReduceJob*> calls;
  // Where each layer starts in a worker's gradient vector.
  std::vector<std::size_t> layer_start(options_.model.layers.size(), 0);
  for (std::size_t l = 1; l < layer_start.size(); ++l) {
    layer_start[l] = layer_start[l - 1] + options_.model.layers[l - 1].params;
  }
  const std::vector<LayerPartition> partitions = PartitionLayers(options_.model);
  for (uint32_t w = 0; w < workers_.size(); ++w) {
    for (const LayerPartition& p : partitions) {
      const std::size_t at = layer_start[p.layer] + p.offset;
      AllReduceJob* call =
          workers_[w]->AllReduce(job, in_[w].data() + at, out_[w].data() + at, p.count);
      if (call == nullptr) {
        return Status::Error("worker " + std::to_string(w) + " is not in job " +
                             std::to_string(job));
      }
      calls.push_back(call);
    }
  }
  if (driver.wake) driver.wake();
  const std::string mode = job == aggregate_job_ ? "in-network" : "at-PS";
  // A pass takes seconds: on a terminal, its share of calls done and the time left.
  ProgressLine progress(std::cerr, ProgressLine::StderrIsTerminal());
  const std::string label = mode + " pass, iteration " + std::to_string(iteration) + "/" +
                            std::to_string(options_.iterations) + ":";
  const auto started = std::chrono::steady_clock::now();
  uint32_t polls = 0;
  // Asked after every round of the host loop: it moves over the calls once in the whole pass
  // (a call, once done, stays done), not over all of them every time.
  std::size_t first_pending = 0;
  auto all_done = [&] {
    while (first_pending < calls.size() && calls[first_pending]->done()) ++first_pending;
    if (++polls % 256 == 0) {
      progress.Update(
          label, static_cast<double>(first_pending) / static_cast<double>(calls.size()),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    return first_pending == calls.size();
  };
  if (Status ran = driver.run_until(all_done); !ran.ok()) {
    // Say what could not finish: how far the calls got and what the hosts saw.
    const std::size_t done =
        std::count_if(calls.begin(), calls.end(), [](const AllReduceJob* c) { return c->done(); });
    uint64_t sent = 0, params = 0, stale = 0;
    for (uint32_t w = 0; w < workers_.size(); ++w) {
      const AtpWorkerStats& s = *workers_[w]->worker_stats(job);
      sent += s.packets_sent - worker_before[w].packets_sent;
      params += s.params_received - worker_before[w].params_received;
      stale += s.stale_params - worker_before[w].stale_params;
    }
    return Status::Error(mode + " pass, iteration " + std::to_string(iteration) + ": " +
                         ran.message() + " (" + std::to_string(done) + " of " +
                         std::to_string(calls.size()) +
                         " all-reduce calls done; the workers "
                         "sent " +
                         std::to_string(sent) + " packets and received " + std::to_string(params) +
                         " parameter packets, " + std::to_string(stale) + " of them unusable)");
  }
  const uint64_t finish = driver.now_ns();
  const LoadSample load_after = driver.load ? driver.load() : LoadSample{};

  PassResult pass;
  pass.mode = mode;
  pass.iteration = iteration;
  pass.seconds = static_cast<double>(finish - start) * 1e-9;
  const double bytes = 4.0 * static_cast<double>(options_.model.TotalParams());
  pass.goodput_gbps = pass.seconds > 0 ? bytes * 8 / pass.seconds * 1e-9 : 0;
  const AtpPsStats& after = *ps_->ps_stats(job);
  const double by_switch =
      static_cast<double>(after.elements_by_switch - before.elements_by_switch);
  const double at_ps = static_cast<double>(after.elements_at_ps - before.elements_at_ps);
  pass.in_switch = by_switch + at_ps > 0 ? by_switch / (by_switch + at_ps) : 0;
  CheckResults(&pass);
  for (uint32_t w = 0; w < workers_.size(); ++w) {
    const AtpWorkerStats& s = *workers_[w]->worker_stats(job);
    pass.packets += s.packets_sent - worker_before[w].packets_sent;
    pass.retransmissions += s.retransmissions - worker_before[w].retransmissions;
    pass.timeouts += s.timeouts - worker_before[w].timeouts;
    pass.ecn_halvings += s.ecn_halvings - worker_before[w].ecn_halvings;
    pass.spurious += s.spurious_timeouts - worker_before[w].spurious_timeouts + s.spurious_fast -
                     worker_before[w].spurious_fast;
  }
  if (driver.load && load_after.wall_ns > load_before.wall_ns) {
    const double wall = static_cast<double>(load_after.wall_ns - load_before.wall_ns);
    pass.host_lost = static_cast<double>(load_after.host_lost_ns - load_before.host_lost_ns) / wall;
    pass.switch_cpu = LeastSwitchCpu(load_before, load_after, wall);
  }
  return pass;
}

double PassResult::CpuLost() const {
  double lost = std::max(host_lost, 0.0);
  if (switch_cpu >= 0) lost = std::max(lost, 1.0 - std::min(switch_cpu, 1.0));
  return lost;
}

Result<std::vector<PassResult>> AtpWorkload::Run(const WorkloadDriver& driver, std::ostream& out) {
  std::vector<PassResult> passes;
  PrintHeader(out);
  for (uint32_t it = 1; it <= options_.iterations; ++it) {
    Fill(it);
    for (uint16_t job : {aggregate_job_, plain_job_}) {
      if (job == plain_job_ && !options_.at_ps_passes) continue;
      auto pass = RunPass(driver, job, it);
      if (!pass.ok()) return pass.status();
      if (!(pass->max_error <= pass->error_bound)) {
        return Status::Error(pass->mode + " iteration " + std::to_string(it) + ": max error " +
                             std::to_string(pass->max_error) + " exceeds the bound " +
                             std::to_string(pass->error_bound));
      }
      PrintPass(*pass, out);
      passes.push_back(*pass);
    }
  }
  PrintSummary(passes, out);
  return passes;
}

void AtpWorkload::PrintSummary(const std::vector<PassResult>& passes, std::ostream& out) {
  for (const char* mode : {"in-network", "at-PS"}) {
    uint64_t packets = 0, retx = 0;
    for (const PassResult& p : passes) {
      if (p.mode != mode) continue;
      packets += p.packets;
      retx += p.retransmissions;
    }
    if (packets == 0) continue;  // no pass of this mode ran
    char line[160];
    std::snprintf(
        line, sizeof(line), "retransmitted %s: %llu of %llu packets (%.4f%%)\n", mode,
        static_cast<unsigned long long>(retx), static_cast<unsigned long long>(packets),
        packets > 0 ? 100.0 * static_cast<double>(retx) / static_cast<double>(packets) : 0.0);
    out << line;
  }
  // One line when the host was busy with other work, so that nobody mistakes a starved run for
  // the protocol's speed.
  uint32_t contended = 0;
  double worst = 0;
  for (const PassResult& p : passes) {
    if (p.host_lost < 0) return;  // virtual time: nothing to say
    worst = std::max(worst, p.CpuLost());
    contended += p.CpuLost() > kContendedShare ? 1 : 0;
  }
  if (contended == 0) return;
  char line[256];
  std::snprintf(line, sizeof(line),
                "host contended: in %u of %zu passes the hosts or swemu lost more than %.0f%% of "
                "their CPU time to other processes (worst %.0f%%); those times measure the "
                "machine, not ATP\n",
                contended, passes.size(), kContendedShare * 100, worst * 100);
  out << line;
}

void AtpWorkload::PrintHeader(std::ostream& out) {
  out << "mode        iter   time_ms  goodput_Gbps  in_switch  max_error  bound      "
         "retx  timeouts  spurious  ecn  cpu_lost\n";
}

void AtpWorkload::PrintPass(const PassResult& p, std::ostream& out) {
  char lost[16] = "       -";
  if (p.host_lost >= 0) std::snprintf(lost, sizeof(lost), "%7.1f%%", p.CpuLost() * 100);
  char line[240];
  std::snprintf(
      line, sizeof(line),
      "%-10s  %4u  %8.1f  %12.3f  %8.1f%%  %9.2e  %9.2e  %5llu  %8llu  %8llu  %5llu  %s\n",
      p.mode.c_str(), p.iteration, p.seconds * 1e3, p.goodput_gbps, p.in_switch * 100, p.max_error,
      p.error_bound, static_cast<unsigned long long>(p.retransmissions),
      static_cast<unsigned long long>(p.timeouts), static_cast<unsigned long long>(p.spurious),
      static_cast<unsigned long long>(p.ecn_halvings), lost);
  out << line;
}

}  // namespace swemu
