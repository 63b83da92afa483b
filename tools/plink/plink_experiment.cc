// swemu-plink experiment: PLink's Figure 8 on an emulated cloud in the virtual-time engine.
// Reduction latency of flat aggregation (FA), 2LHA over Balanced Random groups, 2LHA over the
// true racks and 2LHA over ProbeEmbed's groups, one reduction each per cluster assignment: every
// assignment probes the hosts again (the background traffic has moved on), embeds and groups
// with its own seed, and draws its own Balanced Random groups; the racks and FA stay. Prints
// mean, p50 and p95 per method and the paper's ratios; --csv writes one row per reduction for
// tools/plink/plink_figure8.py.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>

#include "hostlib/plink/agg_plan.h"
#include "hostlib/plink/datacenter.h"
#include "hostlib/plink/embed.h"
#include "hostlib/plink/grouping.h"
#include "pipeline/control/units.h"
#include "pipeline/core/hash.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "pipeline/engine/rng.h"
#include "tools/option_values.h"
#include "tools/plink/plink_tool.h"

namespace swemu {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;

po::options_description PlinkExperimentOptions() {
  po::options_description options("swemu-plink experiment options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("fanout", po::value<std::string>()->default_value("2,4"), "children per level below the core (the last: racks per parent); with the hosts, three tiers or more")
      ("rack-hosts", po::value<std::string>()->default_value("12,4,9,7,3,13,10,6"), "hosts in each rack, one count per rack (unbalanced occupancy)")
      ("tier-delays", po::value<std::string>()->default_value("16us,4us,1us"), "one-way delay of each tier's links from the core down, the last the host links")
      ("tier-rates", po::value<std::string>()->default_value("20G,20G,10G"), "rate of each tier's links from the core down (oversubscribed: uplinks below what their hosts add up to)")
      ("background", po::value<std::string>()->default_value("8"), "background flows, each between two hosts drawn at random in different racks")
      ("background-max", po::value<std::string>()->default_value("5G"), "each background flow's rate is drawn from 0 to this ...")
      ("background-period", po::value<std::string>()->default_value("1ms"), "... anew every period")
      ("jitter", po::value<std::string>()->default_value("40us"), "mean of each host's exponential delay before it answers a probe")
      ("host-delay", po::value<std::string>()->default_value("8us"), "each host's constant answer delay, drawn from 0 to this")
      ("samples", po::value<std::string>()->default_value("5"), "echo probes per pair (the least RTT counts)")
      ("alpha", po::value<std::string>()->default_value("2"), "Eq. (1)'s alpha, 1 to 2")
      ("buffer", po::value<std::string>()->default_value("1MB"), "the reduced buffer")
      ("chunk", po::value<std::string>()->default_value("16KB"), "chunk size")
      ("assignments", po::value<std::string>()->default_value("50"), "cluster assignments (the paper's Figure 8: 50)")
      ("seed", po::value<std::string>()->default_value("1"), "seed (placement of background flows, host delays, probes, embedding, groups)")
      ("csv", po::value<std::string>()->value_name("FILE"), "one row per reduction: assignment,method,latency_ms,cross_rack_bytes,retransmissions,ami_racks")
      ("progress", "print \"assignment N/M\" on stderr as each assignment ends (plink_figure8.py's ETA)");
  // clang-format on
  return options;
}

namespace {

constexpr const char* kMethods[] = {"FA", "2LHA Balanced Random", "2LHA racks", "2LHA ProbeEmbed"};
constexpr std::size_t kNumMethods = 4;

struct Sample {
  uint32_t assignment = 0;
  std::size_t method = 0;
  double latency_ms = 0;
  uint64_t cross_rack = 0;
  uint64_t retransmissions = 0;
  double ami = 0;
};

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

Status RunPlinkExperiment(const po::variables_map& vm, std::ostream& out) {
  uint64_t samples = 0, background = 0, assignments = 0, seed = 0, buffer = 0, chunk = 0,
           bg_max = 0;
  TimeNs jitter = 0, host_delay = 0, period = 0;
  double alpha = 0;
  Result<std::vector<uint64_t>> fanout =
      PlinkList("fanout", Text(vm, "fanout"), PlinkListKind::kCounts);
  if (!fanout.ok()) return fanout.status();
  Result<std::vector<uint64_t>> rack_hosts =
      PlinkList("rack-hosts", Text(vm, "rack-hosts"), PlinkListKind::kCounts);
  if (!rack_hosts.ok()) return rack_hosts.status();
  Result<std::vector<uint64_t>> delays =
      PlinkList("tier-delays", Text(vm, "tier-delays"), PlinkListKind::kDurations);
  if (!delays.ok()) return delays.status();
  Result<std::vector<uint64_t>> rates =
      PlinkList("tier-rates", Text(vm, "tier-rates"), PlinkListKind::kRates);
  if (!rates.ok()) return rates.status();
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "samples", 1, 100, &samples));
  SWEMU_RETURN_IF_ERROR(Check("alpha", ParseDouble(Text(vm, "alpha"), 1, 2), &alpha));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "background", 0, 1024, &background));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "assignments", 1, 10000, &assignments));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &seed));
  SWEMU_RETURN_IF_ERROR(Check("background-max", ParseRate(Text(vm, "background-max")), &bg_max));
  SWEMU_RETURN_IF_ERROR(
      Check("background-period", ParseDurationOption(Text(vm, "background-period")), &period));
  if (period == 0) return Status::Error("--background-period must be above 0");
  SWEMU_RETURN_IF_ERROR(Check("jitter", ParseDurationOption(Text(vm, "jitter")), &jitter));
  SWEMU_RETURN_IF_ERROR(Check("host-delay", ParseDurationOption(Text(vm, "host-delay")), &host_delay));
  SWEMU_RETURN_IF_ERROR(Check("buffer", ParseBytes(Text(vm, "buffer")), &buffer));
  SWEMU_RETURN_IF_ERROR(Check("chunk", ParseBytes(Text(vm, "chunk")), &chunk));
  if (buffer == 0 || chunk == 0 || buffer % 4 != 0 || chunk % 4 != 0 || buffer > (256u << 20)) {
    return Status::Error("--buffer (up to 256MB) and --chunk must be whole floats above 0");
  }
  if (delays->size() != fanout->size() + 1 || rates->size() != fanout->size() + 1) {
    return Status::Error("--tier-delays, --tier-rates: " + std::to_string(fanout->size() + 1) +
                         " values each for " + std::to_string(fanout->size()) +
                         " levels and the hosts");
  }
  const bool progress = vm.count("progress") != 0;
  std::string csv;
  if (vm.count("csv")) {
    csv = Text(vm, "csv");
    SWEMU_RETURN_IF_ERROR(CheckOutputPath(csv, "--csv"));
  }
  DatacenterSpec spec;
  spec.fanout.assign(fanout->begin(), fanout->end());
  spec.rack_hosts.assign(rack_hosts->begin(), rack_hosts->end());
  spec.tier_delay_ns.assign(delays->begin(), delays->end());
  spec.tier_rate_bps = *rates;
  spec.jitter_mean_ns = static_cast<double>(jitter);
  spec.host_delay_max_ns = host_delay;
  spec.prober.samples = static_cast<uint32_t>(samples);
  spec.seed = seed;
  Result<std::unique_ptr<EmulatedDatacenter>> made = EmulatedDatacenter::Create(spec);
  if (!made.ok()) return Status::Error("--fanout/--rack-hosts: " + made.message());
  EmulatedDatacenter& dc = **made;
  const uint32_t n = dc.hosts();
  if (n < 2) return Status::Error("--rack-hosts: at least two hosts");
  const std::vector<uint32_t>& racks = dc.rack_of();
  const uint32_t num_racks = *std::max_element(racks.begin(), racks.end()) + 1;

  // Background flows between hosts of different racks, each rate redrawn every period, for
  // longer than any run here lasts (the last phase is silence).
  SplitMix64 rng(HashPair(seed, 0x4247));  // "BG"
  constexpr TimeNs kHorizon = 20'000'000'000;
  for (uint64_t b = 0; b < background && num_racks > 1; ++b) {
    uint32_t from = 0, to = 0;
    do {
      from = static_cast<uint32_t>(rng.Next() % n);
      to = static_cast<uint32_t>(rng.Next() % n);
    } while (racks[from] == racks[to]);
    std::vector<BackgroundPhase> phases;
    for (TimeNs t = 0; t < kHorizon; t += period) {
      phases.push_back({t, static_cast<uint64_t>(rng.NextUnit() * static_cast<double>(bg_max))});
    }
    phases.push_back({kHorizon, 0});
    SWEMU_RETURN_IF_ERROR(dc.AddBackground(from, to, 1500, std::move(phases)));
  }

  const std::vector<uint64_t> chunks = CutChunks(buffer, chunk);
  const std::size_t floats = buffer / 4;
  std::vector<std::vector<float>> in(n, std::vector<float>(floats)), result;
  std::vector<double> exact(floats, 0);
  for (uint32_t h = 0; h < n; ++h) {
    for (std::size_t i = 0; i < floats; ++i) {
      in[h][i] = static_cast<float>(static_cast<int>((i * 13 + h * 101) % 201) - 100);
      exact[i] += in[h][i];
    }
  }
  char line[320];
  std::snprintf(line, sizeof(line),
                "swemu-plink experiment: %u hosts in %u racks (%zu tiers), %llu background "
                "flows up to %s redrawn every %s; %llu assignments, %s buffer in %zu chunks\n",
                n, num_racks, fanout->size() + 1, static_cast<unsigned long long>(background),
                Text(vm, "background-max").c_str(), Text(vm, "background-period").c_str(),
                static_cast<unsigned long long>(assignments), Text(vm, "buffer").c_str(),
                chunks.size());
  out << line;
  std::vector<Sample> runs;
  std::vector<std::vector<uint32_t>> probe_embed_groups;  // per assignment
  Result<AggPlan> flat = MakeFlatPlan(n, chunks);
  Result<AggPlan> by_rack = MakeTwoLevelPlan(racks, chunks);
  if (!flat.ok() || !by_rack.ok()) return flat.ok() ? by_rack.status() : flat.status();
  for (uint32_t a = 0; a < assignments; ++a) {
    const uint64_t s = HashPair(seed, a + 1);
    Result<DistanceMatrix> probes = dc.ProbeDistances();
    if (!probes.ok()) return probes.status();
    EmbedOptions eo;
    eo.startup_cost = true;
    eo.alpha = alpha;
    eo.seed = s;
    Result<Embedding> e = EmbedProbes(*probes, eo);
    if (!e.ok()) return e.status();
    GroupingOptions go;
    go.seed = s;
    Result<Grouping> pe = ConstrainedKMeans(e->coords, e->dims, go);
    if (!pe.ok()) return pe.status();
    const Grouping random = BalancedRandom(n, s);
    probe_embed_groups.push_back(pe->group_of);
    Result<AggPlan> plans[kNumMethods] = {*flat, MakeTwoLevelPlan(random.group_of, chunks),
                                          *by_rack, MakeTwoLevelPlan(pe->group_of, chunks)};
    const double ami[kNumMethods] = {0, AdjustedMutualInformation(random.group_of, racks), 1,
                                     AdjustedMutualInformation(pe->group_of, racks)};
    // The methods in a rotating order: none always meets the same phase of the background.
    for (std::size_t k = 0; k < kNumMethods; ++k) {
      const std::size_t m = (a + k) % kNumMethods;
      if (!plans[m].ok()) return plans[m].status();
      Result<ReductionRun> run = dc.AllReduce(*plans[m], in, &result);
      if (!run.ok()) return Status::Error(std::string(kMethods[m]) + ": " + run.message());
      for (uint32_t h = 0; h < n; ++h) {
        for (std::size_t i = 0; i < floats; ++i) {
          if (result[h][i] != static_cast<float>(exact[i])) {
            return Status::Error(std::string(kMethods[m]) + ": host " + std::to_string(h) +
                                 "'s sum differs from the exact one at element " +
                                 std::to_string(i));
          }
        }
      }
      runs.push_back(
          {a, m, run->latency_ns / 1e6, run->cross_rack_bytes, run->retransmissions, ami[m]});
    }
    if (progress) {
      std::fprintf(stderr, "assignment %u/%llu\n", a + 1,
                   static_cast<unsigned long long>(assignments));
    }
  }
  out << "reduction latency over " << assignments << " assignments (ms): mean, p50, p95; "
      << "mean AMI of the groups with the racks; mean cross-rack bytes\n";
  double mean[kNumMethods] = {};
  for (std::size_t m = 0; m < kNumMethods; ++m) {
    std::vector<double> lat;
    double ami_sum = 0, cross = 0;
    for (const Sample& x : runs) {
      if (x.method != m) continue;
      lat.push_back(x.latency_ms);
      ami_sum += x.ami;
      cross += static_cast<double>(x.cross_rack);
    }
    std::sort(lat.begin(), lat.end());
    mean[m] = std::accumulate(lat.begin(), lat.end(), 0.0) / static_cast<double>(lat.size());
    std::snprintf(line, sizeof(line), "  %-22s %8.3f %8.3f %8.3f   AMI %.3f   %.0f B\n",
                  kMethods[m], mean[m], Percentile(lat, 0.5), Percentile(lat, 0.95),
                  ami_sum / static_cast<double>(lat.size()),
                  cross / static_cast<double>(lat.size()));
    out << line;
  }
  // The paper's AMI (Fig. 5): how consistent ProbeEmbed's groupings are with each other.
  double consistency = 0;
  uint64_t pairs = 0;
  for (std::size_t a = 0; a < probe_embed_groups.size(); ++a) {
    for (std::size_t b = a + 1; b < probe_embed_groups.size(); ++b, ++pairs) {
      consistency += AdjustedMutualInformation(probe_embed_groups[a], probe_embed_groups[b]);
    }
  }
  if (pairs > 0) {
    std::snprintf(line, sizeof(line),
                  "ProbeEmbed's groupings (alpha %.1f) agree with each other at a mean AMI of %.3f "
                  "over %llu pairs of assignments (the paper's Fig. 5: 0.59 at alpha 1, 0.76 at "
                  "alpha 2)\n",
                  alpha, consistency / static_cast<double>(pairs),
                  static_cast<unsigned long long>(pairs));
    out << line;
  }
  std::snprintf(line, sizeof(line),
                "ProbeEmbed 2LHA is %.2fx faster than Balanced Random 2LHA (the paper: 1.3x Azure, "
                "3.9x EC2), %.2fx than the racks' 2LHA (1.15x) and %.2fx than FA, on the mean\n",
                mean[1] / mean[3], mean[2] / mean[3], mean[0] / mean[3]);
  out << line;
  if (!csv.empty()) {
    std::string text = "assignment,method,latency_ms,cross_rack_bytes,retransmissions,ami_racks\n";
    for (const Sample& x : runs) {
      std::snprintf(line, sizeof(line), "%u,%s,%.6f,%llu,%llu,%.6f\n", x.assignment,
                    kMethods[x.method], x.latency_ms, static_cast<unsigned long long>(x.cross_rack),
                    static_cast<unsigned long long>(x.retransmissions), x.ami);
      text += line;
    }
    SWEMU_RETURN_IF_ERROR(WriteTextFile(csv, text, "--csv"));
  }
  return Status::Ok();
}

}  // namespace swemu
