#include "tools/goat/goat_sim.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "hostlib/goat/experiment.h"
#include "pipeline/control/units.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "pipeline/tm/tm_config.h"
#include "tools/option_values.h"
#include "tools/goat/goat_common.h"

namespace swemu {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;
using goat_tool::kSlotBytes;

po::options_description GoatSimOptions() {
  po::options_description options("swemu-goat sim options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("scheme", po::value<std::string>()->default_value("goat,atp-style,ps-only"), "comma-separated: goat, atp-style, ps-only")
      ("rounds", po::value<std::string>()->default_value("1"), "training rounds (iterations)")
      ("rate-mean", po::value<std::string>()->default_value("0.5"), "workers' sending rate, a share of the link rate (0: unpaced)")
      ("rate-std", po::value<std::string>()->default_value("0.2"), "its standard deviation across workers, drawn each round (the paper's dynamics)")
      ("async", "asynchronous mode: the PS waits for Algorithm 2's K (or --k) from the second round on")
      ("k", po::value<std::string>()->default_value("0"), "with --async: this K every round (0: Algorithm 2)")
      ("noise", po::value<std::string>()->default_value("1"), "Algorithm 2's r = sigma^2 / eps, in workers")
      ("delay", po::value<std::vector<std::string>>(), "W=TIME: worker W starts every round this late (e.g. 2=5ms), repeatable")
      ("loss", po::value<std::string>()->default_value("0"), "loss probability on every link, each direction")
      ("queue-depth", po::value<std::string>()->default_value("65536"), "every switch queue, packets (the paper's simulation has no queue loss; 1024 is the TM's default)")
      ("rto", po::value<std::string>()->default_value("1s"), "workers' first retransmission timeout (doubles per try)")
      ("window", po::value<std::string>()->default_value("0"), "fragments a worker keeps in flight (0: all of them: workers push at their own rates, as the paper's do)")
      ("link-rate", po::value<std::string>()->default_value(FormatRate(kDefaultPortRateBps)), "every link's rate")
      ("csv", po::value<std::string>()->value_name("FILE"), "also write one row per scheme here");
  // clang-format on
  AddGoatSetupOptions(options);
  return options;
}

namespace {

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
  uint64_t rounds = 0, k = 0, window = 0, depth = 0;
  TimeNs rto = 0;
  double rate_mean = 0, rate_std = 0, noise = 0, loss = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "rounds", 1, 1000, &rounds));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "k", 0, kGoatMaxWorkers, &k));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "window", 0, UINT32_MAX, &window));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "queue-depth", 1, 1 << 20, &depth));
  SWEMU_RETURN_IF_ERROR(Check("rto", ParseDurationOption(Text(vm, "rto")), &rto));
  if (rto == 0) return Status::Error("--rto must be above 0");
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
    SWEMU_RETURN_IF_ERROR(CheckOutputPath(csv, "--csv"));
  }
  Result<GoatSetup> setup = MakeGoatSetup(vm);
  if (!setup.ok()) return setup.status();
  const goat_tool::ModelSlots* model = &setup->model;
  const double scale = setup->scale;
  const std::string& memory = setup->memory;
  const uint64_t seed = setup->seed;
  GoatRunOptions o;
  o.elements = setup->elements;
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
                                                 : ParseDurationOption(spec.substr(eq + 1));
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
    SWEMU_RETURN_IF_ERROR(WriteTextFile(csv, rows, "--csv"));
    out << "wrote " << csv << "\n";
  }
  return Status::Ok();
}

}  // namespace swemu
