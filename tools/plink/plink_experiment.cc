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
#include "swemu/topology_config.h"
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
      ("topology", po::value<std::string>()->value_name("FILE"), "the datacenter from a topology file (configs/plink_datacenter.topo is the default tree): its switches (run as l2l3), links and hosts (a host's rack: its switch); not with the four shape options below")
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

namespace {

struct ExperimentOptions {
  uint64_t samples = 0, background = 0, assignments = 0, seed = 0, buffer = 0, chunk = 0,
           bg_max = 0;
  TimeNs jitter = 0, host_delay = 0, period = 0;
  double alpha = 0;
  bool progress = false;
  std::string csv;
};

Status ReadOptions(const po::variables_map& vm, ExperimentOptions* o) {
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "samples", 1, 100, &o->samples));
  SWEMU_RETURN_IF_ERROR(Check("alpha", ParseDouble(Text(vm, "alpha"), 1, 2), &o->alpha));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "background", 0, 1024, &o->background));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "assignments", 1, 10000, &o->assignments));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &o->seed));
  SWEMU_RETURN_IF_ERROR(
      Check("background-max", ParseRate(Text(vm, "background-max")), &o->bg_max));
  SWEMU_RETURN_IF_ERROR(
      Check("background-period", ParseDurationOption(Text(vm, "background-period")), &o->period));
  if (o->period == 0) return Status::Error("--background-period must be above 0");
  SWEMU_RETURN_IF_ERROR(Check("jitter", ParseDurationOption(Text(vm, "jitter")), &o->jitter));
  SWEMU_RETURN_IF_ERROR(
      Check("host-delay", ParseDurationOption(Text(vm, "host-delay")), &o->host_delay));
  SWEMU_RETURN_IF_ERROR(Check("buffer", ParseBytes(Text(vm, "buffer")), &o->buffer));
  SWEMU_RETURN_IF_ERROR(Check("chunk", ParseBytes(Text(vm, "chunk")), &o->chunk));
  if (o->buffer == 0 || o->chunk == 0 || o->buffer % 4 != 0 || o->chunk % 4 != 0 ||
      o->buffer > (256u << 20)) {
    return Status::Error("--buffer (up to 256MB) and --chunk must be whole floats above 0");
  }
  o->progress = vm.count("progress") != 0;
  if (vm.count("csv")) {
    o->csv = Text(vm, "csv");
    SWEMU_RETURN_IF_ERROR(CheckOutputPath(o->csv, "--csv"));
  }
  return Status::Ok();
}

// The tree of the shape options, as the default tree or as --fanout and the rest say.
Result<TopologyConfig> TreeTopology(const po::variables_map& vm, DatacenterSpec spec) {
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
  if (delays->size() != fanout->size() + 1 || rates->size() != fanout->size() + 1) {
    return Status::Error("--tier-delays, --tier-rates: " + std::to_string(fanout->size() + 1) +
                         " values each for " + std::to_string(fanout->size()) +
                         " levels and the hosts");
  }
  spec.fanout.assign(fanout->begin(), fanout->end());
  spec.rack_hosts.assign(rack_hosts->begin(), rack_hosts->end());
  spec.tier_delay_ns.assign(delays->begin(), delays->end());
  spec.tier_rate_bps = *rates;
  Result<TopologyConfig> topo = DatacenterTopology(spec);
  if (!topo.ok()) return Status::Error("--fanout/--rack-hosts: " + topo.message());
  return topo;
}

// The datacenter of --topology, or of the shape options; any problem names its option.
Result<std::unique_ptr<EmulatedDatacenter>> MakeDatacenter(const po::variables_map& vm,
                                                           const ExperimentOptions& o) {
  DatacenterSpec spec;
  spec.jitter_mean_ns = static_cast<double>(o.jitter);
  spec.host_delay_max_ns = o.host_delay;
  spec.prober.samples = static_cast<uint32_t>(o.samples);
  spec.seed = o.seed;
  std::string option = "--fanout/--rack-hosts";
  Result<TopologyConfig> topo = Status::Error("");
  if (vm.count("topology")) {
    option = "--topology " + Text(vm, "topology");
    topo = PlinkTopology(vm, {"fanout", "rack-hosts", "tier-delays", "tier-rates"});
    if (!topo.ok()) return topo.status();
  } else {
    topo = TreeTopology(vm, spec);
    if (!topo.ok()) return topo.status();
  }
  Result<std::unique_ptr<EmulatedDatacenter>> made = EmulatedDatacenter::Create(*topo, spec);
  if (!made.ok()) return Status::Error(option + ": " + made.message());
  return made;
}

// Background flows between hosts of different racks, each rate redrawn every period, for
// longer than any run here lasts (the last phase is silence).
Status AddBackgroundFlows(EmulatedDatacenter& dc, const ExperimentOptions& o) {
  const uint32_t n = dc.hosts();
  const std::vector<uint32_t>& racks = dc.rack_of();
  SplitMix64 rng(HashPair(o.seed, 0x4247));  // "BG"
  constexpr TimeNs kHorizon = 20'000'000'000;
  for (uint64_t b = 0; b < o.background && dc.racks() > 1; ++b) {
    uint32_t from = 0, to = 0;
    do {
      from = static_cast<uint32_t>(rng.Next() % n);
      to = static_cast<uint32_t>(rng.Next() % n);
    } while (racks[from] == racks[to]);
    std::vector<BackgroundPhase> phases;
    for (TimeNs t = 0; t < kHorizon; t += o.period) {
      phases.push_back({t, static_cast<uint64_t>(rng.NextUnit() * static_cast<double>(o.bg_max))});
    }
    phases.push_back({kHorizon, 0});
    SWEMU_RETURN_IF_ERROR(dc.AddBackground(from, to, 1500, std::move(phases)));
  }
  return Status::Ok();
}

// What every reduction sums (the same on every run) and the exact sums.
struct Inputs {
  std::vector<uint64_t> chunks;
  std::vector<std::vector<float>> in;
  std::vector<double> exact;
  AggPlan flat, by_rack;
};

Result<Inputs> MakeInputs(const EmulatedDatacenter& dc, const ExperimentOptions& o) {
  const uint32_t n = dc.hosts();
  const std::size_t floats = o.buffer / 4;
  Inputs x;
  x.chunks = CutChunks(o.buffer, o.chunk);
  x.in.assign(n, std::vector<float>(floats));
  x.exact.assign(floats, 0);
  for (uint32_t h = 0; h < n; ++h) {
    for (std::size_t i = 0; i < floats; ++i) {
      x.in[h][i] = static_cast<float>(static_cast<int>((i * 13 + h * 101) % 201) - 100);
      x.exact[i] += x.in[h][i];
    }
  }
  Result<AggPlan> flat = MakeFlatPlan(n, x.chunks);
  Result<AggPlan> by_rack = MakeTwoLevelPlan(dc.rack_of(), x.chunks);
  if (!flat.ok() || !by_rack.ok()) return flat.ok() ? by_rack.status() : flat.status();
  x.flat = std::move(*flat);
  x.by_rack = std::move(*by_rack);
  return x;
}

// One cluster assignment: probes, the embedding and groups under its own seed, then one
// reduction per method (in a rotating order: none always meets the same phase of the
// background), each checked against the exact sums.
Status RunAssignment(EmulatedDatacenter& dc, const ExperimentOptions& o, const Inputs& x,
                     uint32_t a, std::vector<Sample>* runs,
                     std::vector<std::vector<uint32_t>>* probe_embed_groups) {
  const uint32_t n = dc.hosts();
  const std::vector<uint32_t>& racks = dc.rack_of();
  const uint64_t s = HashPair(o.seed, a + 1);
  Result<DistanceMatrix> probes = dc.ProbeDistances();
  if (!probes.ok()) return probes.status();
  EmbedOptions eo;
  eo.startup_cost = true;
  eo.alpha = o.alpha;
  eo.seed = s;
  Result<Embedding> e = EmbedProbes(*probes, eo);
  if (!e.ok()) return e.status();
  GroupingOptions go;
  go.seed = s;
  Result<Grouping> pe = ConstrainedKMeans(e->coords, e->dims, go);
  if (!pe.ok()) return pe.status();
  const Grouping random = BalancedRandom(n, s);
  probe_embed_groups->push_back(pe->group_of);
  Result<AggPlan> plans[kNumMethods] = {x.flat, MakeTwoLevelPlan(random.group_of, x.chunks),
                                        x.by_rack, MakeTwoLevelPlan(pe->group_of, x.chunks)};
  const double ami[kNumMethods] = {0, AdjustedMutualInformation(random.group_of, racks), 1,
                                   AdjustedMutualInformation(pe->group_of, racks)};
  std::vector<std::vector<float>> result;
  for (std::size_t k = 0; k < kNumMethods; ++k) {
    const std::size_t m = (a + k) % kNumMethods;
    if (!plans[m].ok()) return plans[m].status();
    Result<ReductionRun> run = dc.AllReduce(*plans[m], x.in, &result);
    if (!run.ok()) return Status::Error(std::string(kMethods[m]) + ": " + run.message());
    for (uint32_t h = 0; h < n; ++h) {
      for (std::size_t i = 0; i < x.exact.size(); ++i) {
        if (result[h][i] != static_cast<float>(x.exact[i])) {
          return Status::Error(std::string(kMethods[m]) + ": host " + std::to_string(h) +
                               "'s sum differs from the exact one at element " +
                               std::to_string(i));
        }
      }
    }
    runs->push_back(
        {a, m, run->latency_ns / 1e6, run->cross_rack_bytes, run->retransmissions, ami[m]});
  }
  return Status::Ok();
}

// Per method mean, p50, p95, AMI and cross-rack bytes; ProbeEmbed's consistency; the ratios.
void PrintSummary(const std::vector<Sample>& runs,
                  const std::vector<std::vector<uint32_t>>& probe_embed_groups,
                  const ExperimentOptions& o, std::ostream& out) {
  char line[320];
  out << "reduction latency over " << o.assignments << " assignments (ms): mean, p50, p95; "
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
                  o.alpha, consistency / static_cast<double>(pairs),
                  static_cast<unsigned long long>(pairs));
    out << line;
  }
  std::snprintf(line, sizeof(line),
                "ProbeEmbed 2LHA is %.2fx faster than Balanced Random 2LHA (the paper: 1.3x Azure, "
                "3.9x EC2), %.2fx than the racks' 2LHA (1.15x) and %.2fx than FA, on the mean\n",
                mean[1] / mean[3], mean[2] / mean[3], mean[0] / mean[3]);
  out << line;
}

Status WriteCsv(const std::vector<Sample>& runs, const std::string& path) {
  char line[320];
  std::string text = "assignment,method,latency_ms,cross_rack_bytes,retransmissions,ami_racks\n";
  for (const Sample& x : runs) {
    std::snprintf(line, sizeof(line), "%u,%s,%.6f,%llu,%llu,%.6f\n", x.assignment,
                  kMethods[x.method], x.latency_ms, static_cast<unsigned long long>(x.cross_rack),
                  static_cast<unsigned long long>(x.retransmissions), x.ami);
    text += line;
  }
  return WriteTextFile(path, text, "--csv");
}

}  // namespace

Status RunPlinkExperiment(const po::variables_map& vm, std::ostream& out) {
  ExperimentOptions o;
  SWEMU_RETURN_IF_ERROR(ReadOptions(vm, &o));
  Result<std::unique_ptr<EmulatedDatacenter>> made = MakeDatacenter(vm, o);
  if (!made.ok()) return made.status();
  EmulatedDatacenter& dc = **made;
  SWEMU_RETURN_IF_ERROR(AddBackgroundFlows(dc, o));
  Result<Inputs> inputs = MakeInputs(dc, o);
  if (!inputs.ok()) return inputs.status();
  char line[320];
  std::snprintf(line, sizeof(line),
                "swemu-plink experiment: %u hosts in %u racks (%u tiers), %llu background "
                "flows up to %s redrawn every %s; %llu assignments, %s buffer in %zu chunks\n",
                dc.hosts(), dc.racks(), dc.tiers(),
                static_cast<unsigned long long>(o.background), Text(vm, "background-max").c_str(),
                Text(vm, "background-period").c_str(),
                static_cast<unsigned long long>(o.assignments), Text(vm, "buffer").c_str(),
                inputs->chunks.size());
  out << line;
  std::vector<Sample> runs;
  std::vector<std::vector<uint32_t>> probe_embed_groups;  // per assignment
  for (uint32_t a = 0; a < o.assignments; ++a) {
    SWEMU_RETURN_IF_ERROR(RunAssignment(dc, o, *inputs, a, &runs, &probe_embed_groups));
    if (o.progress) {
      std::fprintf(stderr, "assignment %u/%llu\n", a + 1,
                   static_cast<unsigned long long>(o.assignments));
    }
  }
  PrintSummary(runs, probe_embed_groups, o, out);
  if (!o.csv.empty()) SWEMU_RETURN_IF_ERROR(WriteCsv(runs, o.csv));
  return Status::Ok();
}

}  // namespace swemu
