#include "hostlib/goat/experiment.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>

#include "hostlib/common/engine_transport.h"
#include "hostlib/goat/async_k.h"
#include "hostlib/goat/gina_lp.h"
#include "pipeline/engine/engine.h"
#include "pipeline/engine/rng.h"

namespace swemu {
namespace {

// Worker w's value at element i of round r: small enough that 64 workers never overflow int32.
int32_t GradientValue(uint64_t seed, uint32_t round, uint32_t w, uint64_t i) {
  const uint64_t h = HashPair(HashPair(seed, round), HashPair(w, i));
  return static_cast<int32_t>(h % 2'000'001) - 1'000'000;
}

double Normal(SplitMix64& rng) {
  const double u = std::max(rng.NextUnit(), 1e-300);
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * rng.NextUnit());
}

void AddCounters(GoatCounters& to, const GoatCounters& c) {
  to.claimed += c.claimed;
  to.aggregated += c.aggregated;
  to.completed += c.completed;
  to.flushed += c.flushed;
  to.duplicates += c.duplicates;
  to.collisions += c.collisions;
  to.late += c.late;
  to.evicted += c.evicted;
  to.released += c.released;
  to.out_of_range += c.out_of_range;
  to.routed += c.routed;
  to.route_miss += c.route_miss;
  to.resend_direct += c.resend_direct;
  to.overflow += c.overflow;
  to.fragments_forwarded += c.fragments_forwarded;
}

struct Published {
  GoatPublished entries;
  GinaProblem problem;
  GinaPlan plan;  // GOAT only
};

Result<Published> Publish(const GoatFabric& fabric, const GoatRunOptions& o, KrgsStats* krgs) {
  Published p;
  switch (o.scheme) {
    case GoatScheme::kAtpStyle:
      p.entries = fabric.PublishSharing(o.fragments);
      return p;
    case GoatScheme::kPsOnly:
      p.entries = fabric.PublishPsOnly(static_cast<uint32_t>(o.fragments.size()));
      return p;
    case GoatScheme::kGoat:
      break;
  }
  Result<GinaProblem> problem =
      fabric.Problem(std::vector<uint64_t>(o.fragments.begin(), o.fragments.end()));
  if (!problem.ok()) return problem.status();
  Result<GinaLpSolution> lp = SolveGinaLp(*problem);
  if (!lp.ok()) return lp.status();
  Result<GinaPlan> plan = RoundKrgs(*problem, *lp, o.seed, krgs);
  if (!plan.ok()) return plan.status();
  p.entries = fabric.PublishPlan(*problem, *plan);
  p.problem = std::move(*problem);
  p.plan = std::move(*plan);
  return p;
}

}  // namespace

std::string_view GoatSchemeName(GoatScheme scheme) {
  switch (scheme) {
    case GoatScheme::kGoat:
      return "goat";
    case GoatScheme::kAtpStyle:
      return "atp-style";
    case GoatScheme::kPsOnly:
      return "ps-only";
  }
  return "?";
}

Result<GoatRunResult> RunGoatJob(const GoatFabric& fabric, const GoatRunOptions& o) {
  if (o.rounds == 0) return Status::Error("goat run: at least one round");
  if (o.rate_mean < 0 || o.rate_mean > 1 || o.rate_std < 0) {
    return Status::Error("goat run: rate mean must be in [0, 1] and its deviation at least 0");
  }
  GoatRunResult result;
  Result<Published> published = Publish(fabric, o, &result.krgs);
  if (!published.ok()) return published.status();
  SWEMU_RETURN_IF_ERROR(fabric.CheckPublished(published->entries, o.fragments));
  result.node = published->entries.node;
  GoatJob job = fabric.MakeJob(o.job_id, o.elements, o.fragments);
  job.node = published->entries.node;
  const uint32_t workers = job.num_workers();
  if (o.fixed_k > workers) {
    return Status::Error("goat run: K = " + std::to_string(o.fixed_k) + " exceeds the " +
                         std::to_string(workers) + " workers");
  }
  SWEMU_RETURN_IF_ERROR(job.Validate());

  Engine engine(o.seed, 1 << 18);
  std::map<std::pair<std::string, uint16_t>, uint64_t> handles;
  Result<std::vector<EngineTransport*>> transports =
      fabric.Build(engine, published->entries, o.job_id, o.elements, o.net, &handles);
  if (!transports.ok()) return transports.status();
  const std::vector<uint32_t> hosts = fabric.worker_hosts();
  const uint64_t n = job.total_elements();
  std::vector<std::vector<int32_t>> in(workers, std::vector<int32_t>(n));
  std::vector<std::vector<int32_t>> out(workers, std::vector<int32_t>(n));
  std::vector<std::unique_ptr<GoatWorker>> w;
  for (uint32_t i = 0; i < workers; ++i) {
    w.push_back(std::make_unique<GoatWorker>(job, i, (*transports)[hosts[i]], o.worker));
    (*transports)[hosts[i]]->SetEndpoint(w.back().get());
  }
  GoatPs ps(job, (*transports)[fabric.ps_host()]);
  (*transports)[fabric.ps_host()]->SetEndpoint(&ps);
  SplitMix64 rates(HashPair(o.seed, 0x52415445));  // "RATE"
  std::vector<double> history;                     // Algorithm 2's p_w, previous round

  for (uint32_t r = 0; r < o.rounds; ++r) {
    uint32_t k = workers;
    if (o.async && r > 0) {
      if (o.fixed_k != 0) {
        k = o.fixed_k;
      } else {
        Result<KSearchResult> chosen = ChooseK(history, {o.noise, 0});
        if (!chosen.ok()) return chosen.status();
        k = chosen->k;
      }
      job.k = k == workers ? 0 : k;
      if (o.scheme == GoatScheme::kGoat) {
        const auto fan_in = AsyncFanIn(published->plan, FastestWorkers(history, k));
        const GinaProblem& problem = published->problem;
        for (std::size_t g = 0; g < fan_in.size(); ++g) {
          for (std::size_t s = 0; s < problem.num_switches(); ++s) {
            const auto h = handles.find({problem.switch_names[s], static_cast<uint16_t>(g)});
            if (h == handles.end()) continue;
            const std::string line =
                "table_modify goat_node aggregate " + std::to_string(h->second) + " => " +
                std::to_string(published->plan.base[g][s]) + " " +
                std::to_string(problem.submodels[g]) + " " + std::to_string(fan_in[g][s]);
            Result<std::string> done =
                engine.FindSwitch(problem.switch_names[s])->commands().Execute(line);
            if (!done.ok()) return Status::Error(problem.switch_names[s] + ": " + done.message());
          }
        }
      }
    }
    const TimeNs start = engine.Now();
    const uint64_t ps_before = ps.stats().gradients;
    std::vector<uint64_t> excluded_before(workers);
    for (uint32_t i = 0; i < workers; ++i) excluded_before[i] = w[i]->stats().excluded;
    for (uint32_t i = 0; i < workers; ++i) {
      for (uint64_t e = 0; e < n; ++e) in[i][e] = GradientValue(o.seed, r, i, e);
      if (o.rate_mean > 0) {
        const double ratio = std::clamp(o.rate_mean + o.rate_std * Normal(rates), 0.05, 1.0);
        w[i]->SetRate(static_cast<uint64_t>(ratio * static_cast<double>(o.net.link_rate_bps)));
      }
      const TimeNs delay = i < o.start_delay.size() ? o.start_delay[i] : 0;
      SWEMU_RETURN_IF_ERROR(w[i]->StartRound(r, in[i], out[i], start + delay));
      (*transports)[hosts[i]]->Wake();
    }
    auto all_done = [&] {
      return std::all_of(w.begin(), w.end(), [](const auto& x) { return x->done(); });
    };
    SWEMU_RETURN_IF_ERROR(engine.Run(start + o.round_timeout_ns, all_done));
    if (!all_done()) {
      uint32_t left = 0;
      for (const auto& x : w) left += x->done() ? 0 : 1;
      return Status::Error("goat run: round " + std::to_string(r) + " did not finish within " +
                           std::to_string(o.round_timeout_ns / 1'000'000) + " ms (virtual): " +
                           std::to_string(left) + " workers still waiting for results");
    }
    GoatRoundStats stats;
    stats.k = k;
    stats.ps_gradients = ps.stats().gradients - ps_before;
    history.assign(workers, 0);
    for (uint32_t i = 0; i < workers; ++i) {
      stats.all_done_ns = std::max(stats.all_done_ns, w[i]->finish_ns() - start);
      if (w[i]->stats().excluded == excluded_before[i]) {
        stats.duration_ns = std::max(stats.duration_ns, w[i]->finish_ns() - start);
      }
      history[i] = static_cast<double>(w[i]->sent_all_ns() - start);
      // Every result is the exact sum of the workers it counted.
      for (uint64_t f = 0; f < job.total_fragments(); ++f) {
        const uint64_t bits = w[i]->contributors(f);
        for (uint16_t e = 0; e < job.elements; ++e) {
          const uint64_t at = f * job.elements + e;
          int64_t exact = 0;
          for (uint64_t b = bits; b != 0; b &= b - 1) exact += in[std::countr_zero(b)][at];
          ++result.checked;
          result.mismatches += out[i][at] != exact ? 1 : 0;
        }
      }
    }
    result.rounds.push_back(stats);
  }
  // Let stray retransmissions and results drain, so the counts below are final.
  SWEMU_RETURN_IF_ERROR(engine.Run(engine.Now() + 100'000'000));

  result.frame_bytes = GoatFrameLen(o.elements);
  result.ps = ps.stats();
  result.ps_gradients = ps.stats().gradients;
  uint64_t frames = ps.stats().results_sent;
  for (uint32_t i = 0; i < workers; ++i) {
    frames += w[i]->stats().fragments_sent;
    result.excluded += w[i]->stats().excluded;
    result.retransmissions += w[i]->stats().retransmissions;
    // Results to worker i cross its path's switches and the two host links.
    const uint64_t hops = fabric.PathToPs(hosts[i]).size() + 1;
    result.result_frames += (*transports)[hosts[i]]->counters().frames_received * hops;
  }
  for (std::size_t s = 0; s < engine.num_switches(); ++s) {
    Switch& sw = engine.switch_at(s);
    for (const PortCounters& port : sw.counters().ports) frames += port.tx_packets;
    AddCounters(result.switches, static_cast<GoatProgram&>(sw.program()).counters());
  }
  result.gradient_frames = frames - std::min(frames, result.result_frames);
  return result;
}

}  // namespace swemu
