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

// Worker w's view of the round's values.
class WorkerValues final : public GoatRoundValues {
 public:
  WorkerValues(GoatRoundTruth& truth, uint32_t w) : truth_(truth), w_(w) {}
  void Gradient(uint64_t fragment, int32_t* values) override {
    truth_.Gradient(w_, fragment, values);
  }
  void Result(uint64_t fragment, const int32_t* values, uint64_t contributors) override {
    truth_.Check(fragment, values, contributors);
  }

 private:
  GoatRoundTruth& truth_;
  const uint32_t w_;
};

// One job in the engine: the fabric's switches, the workers and the PS, round by round.
class GoatJobRun {
 public:
  GoatJobRun(const GoatFabric& fabric, const GoatRunOptions& o, Published published, GoatJob job)
      : fabric_(fabric),
        o_(o),
        published_(std::move(published)),
        job_(std::move(job)),
        workers_(job_.num_workers()),
        n_(job_.total_elements()),
        engine_(o.seed, 1 << 18),
        truth_(o.seed, workers_, job_.elements, n_),
        rates_(HashPair(o.seed, 0x52415445)) {}  // "RATE"

  // Builds the fabric in the engine and attaches the workers and the PS to their hosts.
  Status Build() {
    Result<std::vector<EngineTransport*>> transports =
        fabric_.Build(engine_, published_.entries, o_.job_id, o_.elements, o_.net, &handles_);
    if (!transports.ok()) return transports.status();
    transports_ = std::move(*transports);
    hosts_ = fabric_.worker_hosts();
    for (uint32_t i = 0; i < workers_; ++i) {
      w_.push_back(std::make_unique<GoatWorker>(job_, i, transports_[hosts_[i]], o_.worker));
      values_.push_back(std::make_unique<WorkerValues>(truth_, i));
      transports_[hosts_[i]]->SetEndpoint(w_.back().get());
    }
    ps_ = std::make_unique<GoatPs>(job_, transports_[fabric_.ps_host()]);
    transports_[fabric_.ps_host()]->SetEndpoint(ps_.get());
    return Status::Ok();
  }

  // Round r, to its end; its figures and checks go into `result`.
  Status RunRound(uint32_t r, GoatRunResult& result) {
    uint32_t k = workers_;
    if (o_.async && r > 0) {
      Result<uint32_t> chosen = RoundK();
      if (!chosen.ok()) return chosen.status();
      k = *chosen;
      job_.k = k == workers_ ? 0 : k;
      if (o_.scheme == GoatScheme::kGoat) SWEMU_RETURN_IF_ERROR(SetFanIn(k));
    }
    const TimeNs start = engine_.Now();
    const uint64_t checked_before = truth_.checked(), mismatches_before = truth_.mismatches();
    const uint64_t ps_before = ps_->stats().gradients;
    std::vector<uint64_t> excluded_before(workers_);
    for (uint32_t i = 0; i < workers_; ++i) excluded_before[i] = w_[i]->stats().excluded;
    SWEMU_RETURN_IF_ERROR(StartWorkers(r, start));
    auto all_done = [&] {
      return std::all_of(w_.begin(), w_.end(), [](const auto& x) { return x->done(); });
    };
    SWEMU_RETURN_IF_ERROR(engine_.Run(start + o_.round_timeout_ns, all_done));
    if (!all_done()) {
      uint32_t left = 0;
      for (const auto& x : w_) left += x->done() ? 0 : 1;
      return Status::Error("goat run: round " + std::to_string(r) + " did not finish within " +
                           std::to_string(o_.round_timeout_ns / 1'000'000) + " ms (virtual): " +
                           std::to_string(left) + " workers still waiting for results");
    }
    GoatRoundStats stats;
    stats.k = k;
    stats.ps_gradients = ps_->stats().gradients - ps_before;
    history_.assign(workers_, 0);
    for (uint32_t i = 0; i < workers_; ++i) {
      stats.all_done_ns = std::max(stats.all_done_ns, w_[i]->finish_ns() - start);
      if (w_[i]->stats().excluded == excluded_before[i]) {
        stats.duration_ns = std::max(stats.duration_ns, w_[i]->finish_ns() - start);
      }
      history_[i] = static_cast<double>(w_[i]->sent_all_ns() - start);
    }
    result.checked += truth_.checked() - checked_before;
    result.mismatches += truth_.mismatches() - mismatches_before;
    result.rounds.push_back(stats);
    return Status::Ok();
  }

  // Lets stray retransmissions and results drain, then counts the frames and the switches.
  Status Finish(GoatRunResult& result) {
    SWEMU_RETURN_IF_ERROR(engine_.Run(engine_.Now() + 100'000'000));
    result.frame_bytes = GoatFrameLen(o_.elements);
    result.ps = ps_->stats();
    result.ps_gradients = ps_->stats().gradients;
    uint64_t frames = ps_->stats().results_sent;
    for (uint32_t i = 0; i < workers_; ++i) {
      frames += w_[i]->stats().fragments_sent;
      result.excluded += w_[i]->stats().excluded;
      result.retransmissions += w_[i]->stats().retransmissions;
      // Results to worker i cross its path's switches and the two host links.
      const uint64_t hops = fabric_.PathToPs(hosts_[i]).size() + 1;
      result.result_frames += transports_[hosts_[i]]->counters().frames_received * hops;
    }
    for (std::size_t s = 0; s < engine_.num_switches(); ++s) {
      Switch& sw = engine_.switch_at(s);
      for (const PortCounters& port : sw.counters().ports) frames += port.tx_packets;
      AddCounters(result.switches, static_cast<GoatProgram&>(sw.program()).counters());
    }
    result.gradient_frames = frames - std::min(frames, result.result_frames);
    result.events = engine_.events_processed();
    return Status::Ok();
  }

 private:
  // The asynchronous mode's K for a round after the first: fixed, or Algorithm 2's.
  Result<uint32_t> RoundK() const {
    if (o_.fixed_k != 0) return o_.fixed_k;
    Result<KSearchResult> chosen = ChooseK(history_, {o_.noise, 0});
    if (!chosen.ok()) return chosen.status();
    return chosen->k;
  }

  // GOAT: each switch's fan-in, for the K fastest workers of the previous round.
  Status SetFanIn(uint32_t k) {
    const auto fan_in = AsyncFanIn(published_.plan, FastestWorkers(history_, k));
    const GinaProblem& problem = published_.problem;
    for (std::size_t g = 0; g < fan_in.size(); ++g) {
      for (std::size_t s = 0; s < problem.num_switches(); ++s) {
        const auto h = handles_.find({problem.switch_names[s], static_cast<uint16_t>(g)});
        if (h == handles_.end()) continue;
        const std::string line = "table_modify goat_node aggregate " + std::to_string(h->second) +
                                 " => " + std::to_string(published_.plan.base[g][s]) + " " +
                                 std::to_string(problem.submodels[g]) + " " +
                                 std::to_string(fan_in[g][s]);
        Result<std::string> done =
            engine_.FindSwitch(problem.switch_names[s])->commands().Execute(line);
        if (!done.ok()) return Status::Error(problem.switch_names[s] + ": " + done.message());
      }
    }
    return Status::Ok();
  }

  // Each worker's gradient and rate for round r, and its start.
  Status StartWorkers(uint32_t r, TimeNs start) {
    truth_.Start(r);
    for (uint32_t i = 0; i < workers_; ++i) {
      if (o_.rate_mean > 0) {
        const double ratio = std::clamp(o_.rate_mean + o_.rate_std * Normal(rates_), 0.05, 1.0);
        w_[i]->SetRate(static_cast<uint64_t>(ratio * static_cast<double>(o_.net.link_rate_bps)));
      }
      const TimeNs delay = i < o_.start_delay.size() ? o_.start_delay[i] : 0;
      SWEMU_RETURN_IF_ERROR(w_[i]->StartRound(r, values_[i].get(), start + delay));
      transports_[hosts_[i]]->Wake();
    }
    return Status::Ok();
  }

  const GoatFabric& fabric_;
  const GoatRunOptions& o_;
  const Published published_;
  GoatJob job_;  // the workers and the PS see its K
  const uint32_t workers_;
  const uint64_t n_;  // elements per worker and round
  Engine engine_;
  std::map<std::pair<std::string, uint16_t>, uint64_t> handles_;
  std::vector<EngineTransport*> transports_;
  std::vector<uint32_t> hosts_;
  GoatRoundTruth truth_;
  std::vector<std::unique_ptr<WorkerValues>> values_;
  std::vector<std::unique_ptr<GoatWorker>> w_;
  std::unique_ptr<GoatPs> ps_;
  SplitMix64 rates_;
  std::vector<double> history_;  // Algorithm 2's p_w, previous round
};

}  // namespace

void GoatRoundTruth::Start(uint32_t round) {
  round_ = round;
  std::fill(all_.begin(), all_.end(), 0);
  for (uint32_t w = 0; w < workers_; ++w) {
    for (uint64_t i = 0; i < all_.size(); ++i) all_[i] += GradientValue(seed_, round, w, i);
  }
}

void GoatRoundTruth::Gradient(uint32_t w, uint64_t fragment, int32_t* values) const {
  const uint64_t at = fragment * elements_;
  for (uint16_t e = 0; e < elements_; ++e) values[e] = GradientValue(seed_, round_, w, at + e);
}

void GoatRoundTruth::Check(uint64_t fragment, const int32_t* values, uint64_t contributors) {
  const uint64_t full = workers_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << workers_) - 1;
  const uint64_t at = fragment * elements_;
  checked_ += elements_;
  if ((contributors & ~full) != 0) {  // a worker that does not exist: no sum is right
    mismatches_ += elements_;
    return;
  }
  for (uint16_t e = 0; e < elements_; ++e) {
    int64_t exact = all_[at + e];
    for (uint64_t b = full & ~contributors; b != 0; b &= b - 1) {
      exact -= GradientValue(seed_, round_, static_cast<uint32_t>(std::countr_zero(b)), at + e);
    }
    mismatches_ += values[e] != exact ? 1 : 0;
  }
}

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

  GoatJobRun run(fabric, o, std::move(*published), std::move(job));
  SWEMU_RETURN_IF_ERROR(run.Build());
  for (uint32_t r = 0; r < o.rounds; ++r) SWEMU_RETURN_IF_ERROR(run.RunRound(r, result));
  SWEMU_RETURN_IF_ERROR(run.Finish(result));
  return result;
}

}  // namespace swemu
