#include "tools/goat/goat_sim.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "hostlib/goat/experiment.h"
#include "pipeline/control/units.h"
#include "pipeline/core/text_file.h"
#include "tools/gen/gen_common.h"
#include "tools/goat/goat_common.h"

namespace swemu {
namespace po = boost::program_options;
using gen::Check;
using gen::CheckUint;
using gen::Text;
using goat_tool::kSlotBytes;

po::options_description GoatSimOptions() {
  po::options_description options("swemu-goat sim options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("fabric", po::value<std::string>()->default_value("testbed"), "testbed (the paper's Fig. 4: s1, s2 with workers, the PS on s3, links s1-s3, s2-s3, s1-s2) or leaf-spine")
      ("per-switch", po::value<std::string>()->default_value("4"), "testbed: workers on each of s1 and s2")
      ("leaf-spine", po::value<std::string>()->default_value("10,10,50"), "leaf-spine: SPINES,LEAVES,SERVERS (the PS on the last leaf)")
      ("workers", po::value<std::string>()->default_value("0"), "leaf-spine: use the first N workers (0: every server but the PS; at most 64)")
      ("programmable", po::value<std::string>()->default_value("20%"), "leaf-spine: a share of the switches drawn by --seed, a count, or names")
      ("memory", po::value<std::string>(), "each programmable switch's aggregator memory before --scale (default 20MB testbed, 64MB leaf-spine)")
      ("model", po::value<std::string>(), "a bundled model (VGG16, AlexNet, ResNet50) or a size (default 44MB, ResNet-18, testbed; AlexNet leaf-spine)")
      ("submodels", po::value<std::string>()->default_value("16"), "equal sub-models (0: one per layer of a bundled model); larger than a switch's memory: split")
      ("scale", po::value<std::string>()->default_value("1000"), "divide the model and the memory by this (a packet-level run of the full sizes takes hours)")
      ("scheme", po::value<std::string>()->default_value("goat,atp-style,ps-only"), "comma-separated: goat, atp-style, ps-only")
      ("rounds", po::value<std::string>()->default_value("1"), "training rounds (iterations)")
      ("rate-mean", po::value<std::string>()->default_value("0.5"), "workers' sending rate, a share of the link rate (0: unpaced)")
      ("rate-std", po::value<std::string>()->default_value("0.2"), "its standard deviation across workers, drawn each round (the paper's dynamics)")
      ("async", "asynchronous mode: the PS waits for Algorithm 2's K (or --k) from the second round on")
      ("k", po::value<std::string>()->default_value("0"), "with --async: this K every round (0: Algorithm 2)")
      ("noise", po::value<std::string>()->default_value("1"), "Algorithm 2's r = sigma^2 / eps, in workers")
      ("delay", po::value<std::vector<std::string>>(), "W=TIME: worker W starts every round this late (e.g. 2=5ms), repeatable")
      ("loss", po::value<std::string>()->default_value("0"), "loss probability on every link, each direction")
      ("elements", po::value<std::string>()->default_value("64"), "int32 values per fragment")
      ("queue-depth", po::value<std::string>()->default_value("65536"), "every switch queue, packets (the paper's simulation has no queue loss; 1024 is the TM's default)")
      ("rto", po::value<std::string>()->default_value("1s"), "workers' first retransmission timeout (doubles per try)")
      ("window", po::value<std::string>()->default_value("0"), "fragments a worker keeps in flight (0: all of them: workers push at their own rates, as the paper's do)")
      ("link-rate", po::value<std::string>()->default_value("10G"), "every link's rate")
      ("seed", po::value<std::string>()->default_value("1"), "seed (switches drawn, KRGS, gradients, rates)")
      ("csv", po::value<std::string>()->value_name("FILE"), "also write one row per scheme here");
  // clang-format on
  return options;
}

namespace {

struct Setup {
  GoatFabric fabric;
  std::string description;
  uint64_t slots = 0;
};

Result<Setup> MakeFabric(const po::variables_map& vm, uint64_t seed, double scale,
                         const std::string& memory_text) {
  Result<uint64_t> memory = ParseBytes(memory_text);
  if (!memory.ok()) return Status::Error("--memory: " + memory.message());
  const uint64_t slots = static_cast<uint64_t>(static_cast<double>(*memory) / kSlotBytes / scale);
  if (slots == 0 || slots > (1u << 22)) {
    return Status::Error("--memory " + memory_text + " / --scale gives " + std::to_string(slots) +
                         " slots per switch (1.." + std::to_string(1u << 22) + ")");
  }
  GoatFabricSpec spec;
  std::ostringstream what;
  if (Text(vm, "fabric") == "testbed") {
    uint64_t per_switch = 0;
    SWEMU_RETURN_IF_ERROR(CheckUint(vm, "per-switch", 1, 32, &per_switch));
    spec = GoatFabricSpec::ThreeSwitch(static_cast<uint32_t>(per_switch),
                                       static_cast<uint32_t>(slots));
    what << "testbed: s1, s2 with " << per_switch << " workers each, the PS on s3";
  } else if (Text(vm, "fabric") == "leaf-spine") {
    Result<goat_tool::LeafSpineShape> shape = goat_tool::ParseLeafSpine(Text(vm, "leaf-spine"));
    if (!shape.ok()) return shape.status();
    GoatFabricSpec all =
        GoatFabricSpec::LeafSpine(shape->spines, shape->leaves, shape->servers, {}, 0);
    std::vector<std::string> names;
    for (const auto& s : all.switches) names.push_back(s.name);
    Result<std::vector<std::string>> programmable =
        goat_tool::ProgrammableSwitches(Text(vm, "programmable"), names, seed);
    if (!programmable.ok()) return programmable.status();
    spec = GoatFabricSpec::LeafSpine(shape->spines, shape->leaves, shape->servers, *programmable,
                                     static_cast<uint32_t>(slots));
    uint64_t workers = 0;
    SWEMU_RETURN_IF_ERROR(CheckUint(vm, "workers", 0, kGoatMaxWorkers, &workers));
    std::vector<GoatFabricSpec::Host> kept;
    uint64_t taken = 0;
    for (const auto& h : spec.hosts) {
      if (h.ps || workers == 0 || taken++ < workers) kept.push_back(h);
    }
    spec.hosts = kept;
    std::string list;
    for (const std::string& n : *programmable) list += (list.empty() ? "" : ",") + n;
    what << "leaf-spine " << shape->spines << " spines x " << shape->leaves << " leaves, "
         << shape->servers << " servers; programmable: " << (list.empty() ? "none" : list);
  } else {
    return Status::Error("--fabric " + Text(vm, "fabric") + ": testbed or leaf-spine");
  }
  Result<GoatFabric> fabric = GoatFabric::Create(std::move(spec));
  if (!fabric.ok()) return fabric.status();
  return Setup{std::move(*fabric), what.str(), slots};
}

Result<std::vector<GoatScheme>> Schemes(const std::string& text) {
  std::vector<GoatScheme> out;
  std::stringstream in(text);
  for (std::string name; std::getline(in, name, ',');) {
    if (name == "goat") {
      out.push_back(GoatScheme::kGoat);
    } else if (name == "atp-style") {
      out.push_back(GoatScheme::kAtpStyle);
    } else if (name == "ps-only") {
      out.push_back(GoatScheme::kPsOnly);
    } else {
      return Status::Error("--scheme " + name + ": goat, atp-style or ps-only");
    }
  }
  if (out.empty()) return Status::Error("--scheme: name at least one scheme");
  return out;
}

}  // namespace

Status RunGoatSim(const po::variables_map& vm, std::ostream& out) {
  const bool testbed = Text(vm, "fabric") == "testbed";
  uint64_t seed = 0, rounds = 0, submodels = 0, elements = 0, k = 0, window = 0, depth = 0;
  TimeNs rto = 0;
  double scale = 0, rate_mean = 0, rate_std = 0, noise = 0, loss = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &seed));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "rounds", 1, 1000, &rounds));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "submodels", 0, 100000, &submodels));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "elements", 1, 366, &elements));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "k", 0, kGoatMaxWorkers, &k));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "window", 0, UINT32_MAX, &window));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "queue-depth", 1, 1 << 20, &depth));
  SWEMU_RETURN_IF_ERROR(Check("rto", ParseDuration(Text(vm, "rto")), &rto));
  if (rto == 0) return Status::Error("--rto must be above 0");
  SWEMU_RETURN_IF_ERROR(Check("scale", ParseDouble(Text(vm, "scale"), 1, 1e9), &scale));
  SWEMU_RETURN_IF_ERROR(Check("rate-mean", ParseDouble(Text(vm, "rate-mean"), 0, 1), &rate_mean));
  SWEMU_RETURN_IF_ERROR(Check("rate-std", ParseDouble(Text(vm, "rate-std"), 0, 10), &rate_std));
  SWEMU_RETURN_IF_ERROR(Check("noise", ParseDouble(Text(vm, "noise"), 0, 64), &noise));
  SWEMU_RETURN_IF_ERROR(Check("loss", ParseProbability(Text(vm, "loss")), &loss));
  uint64_t link_rate = 0;
  SWEMU_RETURN_IF_ERROR(Check("link-rate", ParseRate(Text(vm, "link-rate")), &link_rate));
  if (link_rate == 0) return Status::Error("--link-rate must be above 0");
  Result<std::vector<GoatScheme>> schemes = Schemes(Text(vm, "scheme"));
  if (!schemes.ok()) return schemes.status();
  std::string csv;
  if (vm.count("csv")) {
    csv = Text(vm, "csv");
    SWEMU_RETURN_IF_ERROR(CheckOutputFile(csv, "--csv"));
  }
  const std::string memory = vm.count("memory") ? Text(vm, "memory") : testbed ? "20MB" : "64MB";
  Result<Setup> setup = MakeFabric(vm, seed, scale, memory);
  if (!setup.ok()) return setup.status();
  const std::string model_text = vm.count("model") ? Text(vm, "model")
                                 : testbed         ? "44MB"
                                                   : "AlexNet";
  Result<goat_tool::ModelSlots> model =
      goat_tool::SizeModel(model_text, submodels, scale, setup->slots);
  if (!model.ok()) return model.status();
  GoatRunOptions o;
  o.elements = static_cast<uint16_t>(elements);
  o.fragments.assign(model->submodels.begin(), model->submodels.end());
  o.rounds = static_cast<uint32_t>(rounds);
  o.seed = seed;
  o.async = vm.count("async") != 0;
  o.fixed_k = static_cast<uint32_t>(k);
  o.noise = noise;
  o.net.loss = loss;
  o.rate_mean = rate_mean;
  o.rate_std = rate_std;
  o.net.link_rate_bps = link_rate;
  o.worker.window = window == 0 ? UINT32_MAX : static_cast<uint32_t>(window);
  o.worker.rto_ns = rto;
  o.worker.max_rto_ns = std::max(rto, o.worker.max_rto_ns);
  o.net.queue_depth_pkts = static_cast<uint32_t>(depth);
  o.net.buffer_bytes = uint64_t{1} << 31;
  o.round_timeout_ns = std::max<TimeNs>(o.round_timeout_ns, 100 * rto);
  if (k != 0 && !o.async) return Status::Error("--k needs --async");
  const uint32_t workers = setup->fabric.num_workers();
  if (vm.count("delay")) {
    o.start_delay.assign(workers, 0);
    for (const std::string& spec : vm["delay"].as<std::vector<std::string>>()) {
      const std::size_t eq = spec.find('=');
      Result<uint64_t> w = ParseUint(spec.substr(0, eq), 0, workers - 1);
      Result<TimeNs> t = eq == std::string::npos ? Result<TimeNs>(Status::Error("no '='"))
                                                 : ParseDuration(spec.substr(eq + 1));
      if (!w.ok() || !t.ok()) {
        return Status::Error("--delay " + spec + ": W=TIME with W in 0.." +
                             std::to_string(workers - 1));
      }
      o.start_delay[*w] = *t;
    }
  }
  const double model_bytes = static_cast<double>(model->total_slots) * o.elements * 4;
  char line[512];
  out << "GOAT sim (virtual time, packet level): " << setup->description << "\n";
  std::snprintf(line, sizeof(line),
                "%u workers; %s scaled 1/%g: %.3f MB per worker in %zu sub-models; %llu slots "
                "(%s / %g) per programmable switch; rates %.2f +- %.2f of %s; %u round(s)%s\n",
                workers, model->name.c_str(), scale, model_bytes / 1e6, o.fragments.size(),
                static_cast<unsigned long long>(setup->slots), memory.c_str(), scale, rate_mean,
                rate_std, Text(vm, "link-rate").c_str(), o.rounds, o.async ? ", asynchronous" : "");
  out << line;
  std::snprintf(line, sizeof(line), "\n%-10s %12s %10s %12s %12s %10s %10s %10s %8s\n", "scheme",
                "to PS frags", "PS MB", "PS/model", "total MB", "round ms", "collide", "retrans",
                "exact");
  out << line;
  std::string rows =
      "scheme,workers,model_bytes,ps_fragments,ps_bytes,ps_over_model,"
      "gradient_bytes,result_bytes,mean_round_ms,collisions,late,retransmissions,"
      "excluded,mismatches\n";
  for (GoatScheme scheme : *schemes) {
    o.scheme = scheme;
    Result<GoatRunResult> r = RunGoatJob(setup->fabric, o);
    if (!r.ok()) return Status::Error(std::string(GoatSchemeName(scheme)) + ": " + r.message());
    double mean_ms = 0;
    for (const GoatRoundStats& rs : r->rounds) mean_ms += rs.duration_ns / 1e6;
    mean_ms /= static_cast<double>(r->rounds.size());
    const double payload = o.elements * 4.0;  // gradient bytes per fragment
    const double ps_bytes = static_cast<double>(r->ps_gradients) * payload;
    const double total = static_cast<double>(r->gradient_frames) * payload;
    const double ps_over_model = ps_bytes / (model_bytes * o.rounds);
    std::snprintf(
        line, sizeof(line), "%-10s %12llu %10.3f %12.2f %12.3f %10.3f %10llu %10llu %8s\n",
        std::string(GoatSchemeName(scheme)).c_str(),
        static_cast<unsigned long long>(r->ps_gradients), ps_bytes / 1e6, ps_over_model,
        total / 1e6, mean_ms, static_cast<unsigned long long>(r->switches.collisions),
        static_cast<unsigned long long>(r->retransmissions), r->mismatches == 0 ? "yes" : "NO");
    out << line;
    std::snprintf(line, sizeof(line),
                  "%s,%u,%.0f,%llu,%.0f,%.4f,%.0f,%.0f,%.4f,%llu,%llu,%llu,%llu,%llu\n",
                  std::string(GoatSchemeName(scheme)).c_str(), workers, model_bytes,
                  static_cast<unsigned long long>(r->ps_gradients), ps_bytes, ps_over_model, total,
                  static_cast<double>(r->result_frames) * payload, mean_ms,
                  static_cast<unsigned long long>(r->switches.collisions),
                  static_cast<unsigned long long>(r->switches.late),
                  static_cast<unsigned long long>(r->retransmissions),
                  static_cast<unsigned long long>(r->excluded),
                  static_cast<unsigned long long>(r->mismatches));
    rows += line;
    if (r->mismatches != 0) {
      return Status::Error(std::string(GoatSchemeName(scheme)) + ": " +
                           std::to_string(r->mismatches) +
                           " result elements differ from the exact sum");
    }
  }
  out << "PS MB and total MB: gradient payload (" << o.elements * 4
      << " B per fragment) at the scaled size; PS/model: the PS's traffic in model sizes per "
         "round (1.00 = one aggregate per fragment)\n";
  if (!csv.empty()) {
    SWEMU_RETURN_IF_ERROR(WriteTextFile(csv, rows));
    out << "wrote " << csv << "\n";
  }
  return Status::Ok();
}

}  // namespace swemu
