// swemu-plink probe: ProbeEmbed on an emulated datacenter. It builds a tree of l2l3
// switches in the virtual-time engine (hostlib/plink/datacenter.h), probes every pair with echo
// packets in rounds of disjoint pairs, embeds the distances (Eq. (1)), groups the hosts
// (constrained k-means) and prints how well the groups recover the racks (PAIA before and after
// the embedding, AMI against the racks and Balanced Random's), then what a 2LHA reduction of a
// buffer over those groups moves across racks beside the true racks' groups, Balanced Random's
// and flat aggregation (Table 1's counts on the measured grouping).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "hostlib/plink/agg_plan.h"
#include "hostlib/plink/datacenter.h"
#include "hostlib/plink/embed.h"
#include "hostlib/plink/grouping.h"
#include "hostlib/testbed/testbed_plan.h"
#include "pipeline/control/units.h"
#include "pipeline/core/json_writer.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "tools/option_values.h"
#include "tools/plink/plink_tool.h"

namespace swemu {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;

po::options_description PlinkProbeOptions() {
  po::options_description options("swemu-plink probe options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("topology", po::value<std::string>()->value_name("FILE"), "the datacenter from a topology file (as swemu-plink experiment --topology, e.g. configs/plink_datacenter.topo): its switches (run as l2l3), links and hosts (a host's rack: its switch); not with the three shape options below")
      ("fanout", po::value<std::string>()->default_value("2,2"), "children per level below the core, widest first (the last: racks per parent)")
      ("per-rack", po::value<std::string>()->default_value("4"), "hosts per rack")
      ("tier-delays", po::value<std::string>()->default_value("16us,4us,1us"), "one-way delay of each tier's links from the core down, the last the host links")
      ("jitter", po::value<std::string>()->default_value("40us"), "mean of each host's exponential delay before it answers a probe (a busy VM)")
      ("host-delay", po::value<std::string>()->default_value("8us"), "each host's constant answer delay, drawn from 0 to this")
      ("samples", po::value<std::string>()->default_value("1"), "echo probes per pair (the least RTT counts)")
      ("alpha", po::value<std::string>()->default_value("2"), "Eq. (1)'s alpha, 1 to 2")
      ("dims", po::value<std::string>()->default_value("3"), "embedding dimensions")
      ("elasticity", po::value<std::string>()->default_value("1"), "balance elasticity, 1 to 2")
      ("buffer", po::value<std::string>()->default_value("100MB"), "the reduced buffer (ResNet-50-like, the paper's)")
      ("chunk", po::value<std::string>()->default_value("64KB"), "chunk size")
      ("seed", po::value<std::string>()->default_value("1"), "seed (host delays, embedding, grouping)")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the figures and the groups here");
  // clang-format on
  return options;
}

Result<std::vector<uint64_t>> PlinkList(const std::string& option, const std::string& text,
                                        PlinkListKind kind) {
  std::vector<uint64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    Result<uint64_t> v = kind == PlinkListKind::kDurations ? ParseDurationOption(item)
                         : kind == PlinkListKind::kRates   ? ParseRate(item)
                                                           : ParseUint(item, 1, 64);
    if (!v.ok()) return Status::Error("--" + option + ": " + v.message());
    if (kind == PlinkListKind::kRates && *v == 0) {
      return Status::Error("--" + option + ": a rate of 0");
    }
    out.push_back(*v);
  }
  if (out.empty()) return Status::Error("--" + option + ": an empty list");
  return out;
}

Result<TopologyConfig> PlinkTopology(const po::variables_map& vm,
                                     std::initializer_list<const char*> shape) {
  SWEMU_RETURN_IF_ERROR(opt::RefuseWithTopology(vm, shape));
  const std::string path = Text(vm, "topology");
  Result<TopologyConfig> topo = LoadTopology(path);
  if (!topo.ok()) return Status::Error("--topology " + topo.message());
  Status ports = CheckTopologyPorts(*topo);
  if (!ports.ok()) return Status::Error("--topology " + path + ": " + ports.message());
  return topo;
}

namespace {

// The probe command's options, checked.
struct ProbeSettings {
  DatacenterSpec spec;
  std::string topology_path;  // --topology, or empty: the tree of spec
  TopologyConfig topo;        // --topology's
  uint64_t per_rack = 0, samples = 0, dims = 0, seed = 0, buffer = 0, chunk = 0;
  double alpha = 0, elasticity = 0;
  std::string json;  // empty: none
};

// The tree of --fanout, --per-rack and --tier-delays into s->spec.
Status ReadProbeTree(const po::variables_map& vm, ProbeSettings* s) {
  Result<std::vector<uint64_t>> fanout =
      PlinkList("fanout", Text(vm, "fanout"), PlinkListKind::kCounts);
  if (!fanout.ok()) return fanout.status();
  Result<std::vector<uint64_t>> delays =
      PlinkList("tier-delays", Text(vm, "tier-delays"), PlinkListKind::kDurations);
  if (!delays.ok()) return delays.status();
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "per-rack", 1, 64, &s->per_rack));
  if (delays->size() != fanout->size() + 1) {
    return Status::Error("--tier-delays: " + std::to_string(fanout->size() + 1) + " delays for " +
                         std::to_string(fanout->size()) + " levels and the hosts");
  }
  s->spec.fanout.assign(fanout->begin(), fanout->end());
  s->spec.tier_delay_ns.assign(delays->begin(), delays->end());
  s->spec.per_rack = static_cast<uint32_t>(s->per_rack);
  return Status::Ok();
}

Result<ProbeSettings> ParseProbeSettings(const po::variables_map& vm) {
  ProbeSettings s;
  TimeNs jitter = 0, host_delay = 0;
  if (vm.count("topology")) {
    Result<TopologyConfig> topo = PlinkTopology(vm, {"fanout", "per-rack", "tier-delays"});
    if (!topo.ok()) return topo.status();
    s.topology_path = Text(vm, "topology");
    s.topo = std::move(*topo);
  } else {
    SWEMU_RETURN_IF_ERROR(ReadProbeTree(vm, &s));
  }
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "samples", 1, 100, &s.samples));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "dims", 1, 16, &s.dims));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &s.seed));
  SWEMU_RETURN_IF_ERROR(Check("jitter", ParseDurationOption(Text(vm, "jitter")), &jitter));
  SWEMU_RETURN_IF_ERROR(
      Check("host-delay", ParseDurationOption(Text(vm, "host-delay")), &host_delay));
  SWEMU_RETURN_IF_ERROR(Check("alpha", ParseDouble(Text(vm, "alpha"), 1, 2), &s.alpha));
  SWEMU_RETURN_IF_ERROR(
      Check("elasticity", ParseDouble(Text(vm, "elasticity"), 1, 2), &s.elasticity));
  SWEMU_RETURN_IF_ERROR(Check("buffer", ParseBytes(Text(vm, "buffer")), &s.buffer));
  SWEMU_RETURN_IF_ERROR(Check("chunk", ParseBytes(Text(vm, "chunk")), &s.chunk));
  if (s.buffer == 0 || s.chunk == 0 || s.chunk % 4 != 0) {
    return Status::Error("--buffer and --chunk must be above 0, the chunk whole floats");
  }
  if (vm.count("json")) {
    s.json = Text(vm, "json");
    SWEMU_RETURN_IF_ERROR(CheckOutputPath(s.json, "--json"));
  }
  s.spec.jitter_mean_ns = static_cast<double>(jitter);
  s.spec.host_delay_max_ns = host_delay;
  s.spec.prober.samples = static_cast<uint32_t>(s.samples);
  s.spec.seed = s.seed;
  return s;
}

// What probing, embedding and grouping the emulated datacenter found.
struct ProbeFindings {
  uint32_t n = 0;  // hosts
  uint32_t missing = 0;
  Grouping groups;
  Grouping random;
  std::vector<uint32_t> racks;  // each host's
  uint32_t rack_count = 0;
  double raw = 0, embedded = 0, ami = 0, random_ami = 0;
};

Result<ProbeFindings> ProbeAndGroup(const ProbeSettings& s) {
  const bool tree = s.topology_path.empty();
  Result<std::unique_ptr<EmulatedDatacenter>> dc =
      tree ? EmulatedDatacenter::Create(s.spec) : EmulatedDatacenter::Create(s.topo, s.spec);
  if (!dc.ok()) {
    return Status::Error((tree ? "--fanout/--per-rack" : "--topology " + s.topology_path) + ": " +
                         dc.message());
  }
  ProbeFindings f;
  f.n = (*dc)->hosts();
  Result<DistanceMatrix> probes = (*dc)->ProbeDistances(&f.missing);
  if (!probes.ok()) return probes.status();
  EmbedOptions eo;
  eo.dims = static_cast<uint32_t>(s.dims);
  eo.alpha = s.alpha;
  eo.startup_cost = true;
  eo.seed = s.seed;
  Result<Embedding> e = EmbedProbes(*probes, eo);
  if (!e.ok()) return e.status();
  GroupingOptions go;
  go.elasticity = s.elasticity;
  go.seed = s.seed;
  Result<Grouping> groups = ConstrainedKMeans(e->coords, e->dims, go);
  if (!groups.ok()) return groups.status();
  f.groups = std::move(*groups);
  const std::vector<NodeLocation>& where = (*dc)->locations();
  f.racks = (*dc)->rack_of();
  f.rack_count = (*dc)->racks();
  f.random = BalancedRandom(f.n, s.seed);
  f.raw = Paia(where, *probes)->paia();
  f.embedded = Paia(where, e->Distances())->paia();
  f.ami = AdjustedMutualInformation(f.groups.group_of, f.racks);
  f.random_ami = AdjustedMutualInformation(f.random.group_of, f.racks);
  return f;
}

void PrintGroups(const ProbeSettings& s, const ProbeFindings& f, std::ostream& out) {
  out << "swemu-plink probe: " << f.n << " hosts in " << f.rack_count << " racks "
      << (s.topology_path.empty() ? "(" + std::to_string(s.per_rack) + " per rack)"
                                  : "of " + s.topology_path)
      << ", " << CircleRounds(f.n).size() << " rounds of disjoint pairs, " << s.samples
      << " probe(s) per pair, " << f.missing << " pair(s) unanswered\n";
  char line[256];
  std::snprintf(line, sizeof(line), "PAIA: raw probes %.3f, embedded (alpha %.1f, %u dims) %.3f\n",
                f.raw, s.alpha, static_cast<unsigned>(s.dims), f.embedded);
  out << line;
  std::snprintf(line, sizeof(line),
                "groups: %u (k = round(sqrt(n))); AMI with the racks: ProbeEmbed %.3f, Balanced "
                "Random %.3f\n",
                f.groups.k, f.ami, f.random_ami);
  out << line;
  for (uint32_t g = 0; g < f.groups.k; ++g) {
    out << "  group " << g << ":";
    for (uint32_t h = 0; h < f.n; ++h) {
      if (f.groups.group_of[h] == g) out << " h" << h << "(r" << f.racks[h] << ")";
    }
    out << "\n";
  }
}

}  // namespace

Status RunPlinkProbe(const po::variables_map& vm, std::ostream& out) {
  Result<ProbeSettings> settings = ParseProbeSettings(vm);
  if (!settings.ok()) return settings.status();
  const ProbeSettings& s = *settings;
  Result<ProbeFindings> findings = ProbeAndGroup(s);
  if (!findings.ok()) return findings.status();
  const ProbeFindings& f = *findings;
  PrintGroups(s, f, out);
  const std::vector<uint64_t> chunks = CutChunks(s.buffer, s.chunk);
  out << "\nreducing " << Text(vm, "buffer") << " in " << chunks.size()
      << " chunks: bytes across racks (and in all)\n";
  JsonWriter j;
  j.BeginObject().Uint("hosts", f.n).Double("paia_raw", f.raw).Double("paia_embedded", f.embedded);
  j.Double("ami_racks", f.ami).Double("ami_balanced_random", f.random_ami);
  j.BeginArray("groups");
  for (uint32_t g : f.groups.group_of) j.Uint({}, g);
  j.EndArray().BeginObject("cross_rack_bytes");
  auto row = [&](const char* name, Result<AggPlan> plan) -> Status {
    if (!plan.ok()) return plan.status();
    const AggTraffic t = CountTraffic(*plan, f.racks);
    char line[256];
    std::snprintf(line, sizeof(line), "  %-28s %14llu  (%llu)\n", name,
                  static_cast<unsigned long long>(t.cross_rack),
                  static_cast<unsigned long long>(t.total));
    out << line;
    j.Uint(name, t.cross_rack);
    return Status::Ok();
  };
  SWEMU_RETURN_IF_ERROR(
      row("2LHA, ProbeEmbed groups", MakeTwoLevelPlan(f.groups.group_of, chunks)));
  SWEMU_RETURN_IF_ERROR(row("2LHA, the racks", MakeTwoLevelPlan(f.racks, chunks)));
  SWEMU_RETURN_IF_ERROR(row("2LHA, Balanced Random", MakeTwoLevelPlan(f.random.group_of, chunks)));
  SWEMU_RETURN_IF_ERROR(row("flat aggregation", MakeFlatPlan(f.n, chunks)));
  j.EndObject().EndObject();
  if (!s.json.empty()) {
    SWEMU_RETURN_IF_ERROR(WriteTextFile(s.json, j.str() + "\n", "--json"));
    out << "wrote " << s.json << "\n";
  }
  return Status::Ok();
}

}  // namespace swemu
