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

Status RunPlinkProbe(const po::variables_map& vm, std::ostream& out) {
  DatacenterSpec spec;
  uint64_t per_rack = 0, samples = 0, dims = 0, seed = 0, buffer = 0, chunk = 0;
  TimeNs jitter = 0, host_delay = 0;
  double alpha = 0, elasticity = 0;
  Result<std::vector<uint64_t>> fanout =
      PlinkList("fanout", Text(vm, "fanout"), PlinkListKind::kCounts);
  if (!fanout.ok()) return fanout.status();
  Result<std::vector<uint64_t>> delays =
      PlinkList("tier-delays", Text(vm, "tier-delays"), PlinkListKind::kDurations);
  if (!delays.ok()) return delays.status();
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "per-rack", 1, 64, &per_rack));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "samples", 1, 100, &samples));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "dims", 1, 16, &dims));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &seed));
  SWEMU_RETURN_IF_ERROR(Check("jitter", ParseDurationOption(Text(vm, "jitter")), &jitter));
  SWEMU_RETURN_IF_ERROR(Check("host-delay", ParseDurationOption(Text(vm, "host-delay")), &host_delay));
  SWEMU_RETURN_IF_ERROR(Check("alpha", ParseDouble(Text(vm, "alpha"), 1, 2), &alpha));
  SWEMU_RETURN_IF_ERROR(
      Check("elasticity", ParseDouble(Text(vm, "elasticity"), 1, 2), &elasticity));
  SWEMU_RETURN_IF_ERROR(Check("buffer", ParseBytes(Text(vm, "buffer")), &buffer));
  SWEMU_RETURN_IF_ERROR(Check("chunk", ParseBytes(Text(vm, "chunk")), &chunk));
  if (buffer == 0 || chunk == 0 || chunk % 4 != 0) {
    return Status::Error("--buffer and --chunk must be above 0, the chunk whole floats");
  }
  if (delays->size() != fanout->size() + 1) {
    return Status::Error("--tier-delays: " + std::to_string(fanout->size() + 1) + " delays for " +
                         std::to_string(fanout->size()) + " levels and the hosts");
  }
  std::string json;
  if (vm.count("json")) {
    json = Text(vm, "json");
    SWEMU_RETURN_IF_ERROR(CheckOutputPath(json, "--json"));
  }
  spec.fanout.assign(fanout->begin(), fanout->end());
  spec.tier_delay_ns.assign(delays->begin(), delays->end());
  spec.per_rack = static_cast<uint32_t>(per_rack);
  spec.jitter_mean_ns = static_cast<double>(jitter);
  spec.host_delay_max_ns = host_delay;
  spec.prober.samples = static_cast<uint32_t>(samples);
  spec.seed = seed;
  Result<std::unique_ptr<EmulatedDatacenter>> dc = EmulatedDatacenter::Create(spec);
  if (!dc.ok()) return Status::Error("--fanout/--per-rack: " + dc.message());
  const uint32_t n = (*dc)->hosts();
  uint32_t missing = 0;
  Result<DistanceMatrix> probes = (*dc)->ProbeDistances(&missing);
  if (!probes.ok()) return probes.status();
  EmbedOptions eo;
  eo.dims = static_cast<uint32_t>(dims);
  eo.alpha = alpha;
  eo.startup_cost = true;
  eo.seed = seed;
  Result<Embedding> e = EmbedProbes(*probes, eo);
  if (!e.ok()) return e.status();
  GroupingOptions go;
  go.elasticity = elasticity;
  go.seed = seed;
  Result<Grouping> groups = ConstrainedKMeans(e->coords, e->dims, go);
  if (!groups.ok()) return groups.status();
  const std::vector<NodeLocation>& where = (*dc)->locations();
  std::vector<uint32_t> racks;
  for (const NodeLocation& l : where) racks.push_back(l[l.size() - 2]);
  const Grouping random = BalancedRandom(n, seed);
  const double raw = Paia(where, *probes)->paia(), embedded = Paia(where, e->Distances())->paia();
  const double ami = AdjustedMutualInformation(groups->group_of, racks);
  const double random_ami = AdjustedMutualInformation(random.group_of, racks);
  char line[256];
  std::snprintf(line, sizeof(line),
                "swemu-plink probe: %u hosts in %zu racks (%u per rack), %zu rounds of disjoint "
                "pairs, %u probe(s) per pair, %u pair(s) unanswered\n",
                n, n / per_rack, static_cast<unsigned>(per_rack), CircleRounds(n).size(),
                static_cast<unsigned>(samples), missing);
  out << line;
  std::snprintf(line, sizeof(line), "PAIA: raw probes %.3f, embedded (alpha %.1f, %u dims) %.3f\n",
                raw, alpha, static_cast<unsigned>(dims), embedded);
  out << line;
  std::snprintf(line, sizeof(line),
                "groups: %u (k = round(sqrt(n))); AMI with the racks: ProbeEmbed %.3f, Balanced "
                "Random %.3f\n",
                groups->k, ami, random_ami);
  out << line;
  for (uint32_t g = 0; g < groups->k; ++g) {
    out << "  group " << g << ":";
    for (uint32_t h = 0; h < n; ++h) {
      if (groups->group_of[h] == g) out << " h" << h << "(r" << racks[h] << ")";
    }
    out << "\n";
  }
  const std::vector<uint64_t> chunks = CutChunks(buffer, chunk);
  out << "\nreducing " << Text(vm, "buffer") << " in " << chunks.size()
      << " chunks: bytes across racks (and in all)\n";
  JsonWriter j;
  j.BeginObject().Uint("hosts", n).Double("paia_raw", raw).Double("paia_embedded", embedded);
  j.Double("ami_racks", ami).Double("ami_balanced_random", random_ami);
  j.BeginArray("groups");
  for (uint32_t g : groups->group_of) j.Uint({}, g);
  j.EndArray().BeginObject("cross_rack_bytes");
  auto row = [&](const char* name, Result<AggPlan> plan) -> Status {
    if (!plan.ok()) return plan.status();
    const AggTraffic t = CountTraffic(*plan, racks);
    std::snprintf(line, sizeof(line), "  %-28s %14llu  (%llu)\n", name,
                  static_cast<unsigned long long>(t.cross_rack),
                  static_cast<unsigned long long>(t.total));
    out << line;
    j.Uint(name, t.cross_rack);
    return Status::Ok();
  };
  SWEMU_RETURN_IF_ERROR(row("2LHA, ProbeEmbed groups", MakeTwoLevelPlan(groups->group_of, chunks)));
  SWEMU_RETURN_IF_ERROR(row("2LHA, the racks", MakeTwoLevelPlan(racks, chunks)));
  SWEMU_RETURN_IF_ERROR(row("2LHA, Balanced Random", MakeTwoLevelPlan(random.group_of, chunks)));
  SWEMU_RETURN_IF_ERROR(row("flat aggregation", MakeFlatPlan(n, chunks)));
  j.EndObject().EndObject();
  if (!json.empty()) {
    SWEMU_RETURN_IF_ERROR(WriteTextFile(json, j.str() + "\n", "--json"));
    out << "wrote " << json << "\n";
  }
  return Status::Ok();
}

}  // namespace swemu
