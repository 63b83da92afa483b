#include "tools/goat/goat_sim.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "hostlib/goat/experiment.h"
#include "pipeline/control/units.h"
#include "pipeline/core/independent_runs.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "pipeline/tm/tm_config.h"
#include "tools/goat/goat_common.h"
#include "tools/option_values.h"

namespace swemu {
namespace po = boost::program_options;
using goat_tool::kSlotBytes;
using opt::Check;
using opt::CheckUint;
using opt::Text;

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
      ("stage-sram", po::value<std::string>(), "each switch's SRAM per pipeline stage (default the emulated Tofino-1's 1.25 MiB, 80 x 128 Kb; the paper's 64MB at --scale 1 needs 4MiB)")
      ("engine-stats", "also print each scheme's engine events, frame hops (gradients and results, host links included) and wall time, and what reached the PS: workers' own fragments and switch aggregates")
      ("csv", po::value<std::string>()->value_name("FILE"), "also write one row per scheme here");
  // clang-format on
  AddGoatSetupOptions(options);
  opt::AddThreadsOption(options, "the schemes");
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

// The run's options from the command line and the setup; *rate_text is the workers' reference
// rate as the header prints it.
Result<GoatRunOptions> SimRunOptions(const po::variables_map& vm, const GoatSetup& setup,
                                     std::string* rate_text) {
  uint64_t rounds = 0, k = 0, window = 0, depth = 0, link_rate = 0;
  TimeNs rto = 0;
  GoatRunOptions o;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "rounds", 1, 1000, &rounds));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "k", 0, kGoatMaxWorkers, &k));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "window", 0, UINT32_MAX, &window));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "queue-depth", 1, 1 << 20, &depth));
  SWEMU_RETURN_IF_ERROR(Check("rto", ParseDurationOption(Text(vm, "rto")), &rto));
  if (rto == 0) return Status::Error("--rto must be above 0");
  SWEMU_RETURN_IF_ERROR(Check("rate-mean", ParseDouble(Text(vm, "rate-mean"), 0, 1), &o.rate_mean));
  SWEMU_RETURN_IF_ERROR(Check("rate-std", ParseDouble(Text(vm, "rate-std"), 0, 10), &o.rate_std));
  SWEMU_RETURN_IF_ERROR(Check("noise", ParseDouble(Text(vm, "noise"), 0, 64), &o.noise));
  SWEMU_RETURN_IF_ERROR(Check("loss", ParseProbability(Text(vm, "loss")), &o.net.loss));
  SWEMU_RETURN_IF_ERROR(Check("link-rate", ParseRate(Text(vm, "link-rate")), &link_rate));
  if (link_rate == 0) return Status::Error("--link-rate must be above 0");
  *rate_text = Text(vm, "link-rate");
  // From a topology: the links' and hosts' own values, and the workers' rates are shares of the
  // first worker's switch's port rate.
  const GoatFabricSpec& spec = setup.fabric.spec();
  for (const auto& sw : spec.switches) {
    if (vm.count("topology") && sw.name == spec.hosts[0].sw && sw.port_rate_bps != 0) {
      link_rate = sw.port_rate_bps;
      *rate_text = FormatRate(link_rate);
    }
  }
  o.elements = setup.elements;
  o.fragments.assign(setup.model.submodels.begin(), setup.model.submodels.end());
  o.rounds = static_cast<uint32_t>(rounds);
  o.seed = setup.seed;
  o.async = vm.count("async") != 0;
  o.fixed_k = static_cast<uint32_t>(k);
  o.net.link_rate_bps = link_rate;
  o.worker.window = window == 0 ? UINT32_MAX : static_cast<uint32_t>(window);
  o.worker.rto_ns = rto;
  o.worker.max_rto_ns = std::max(rto, o.worker.max_rto_ns);
  o.net.queue_depth_pkts = static_cast<uint32_t>(depth);
  o.net.buffer_bytes = uint64_t{1} << 31;
  if (vm.count("stage-sram")) {
    SWEMU_RETURN_IF_ERROR(
        Check("stage-sram", ParseBytes(Text(vm, "stage-sram")), &o.net.stage_sram_bytes));
    if (o.net.stage_sram_bytes == 0) return Status::Error("--stage-sram must be above 0");
  }
  o.round_timeout_ns = std::max<TimeNs>(o.round_timeout_ns, 100 * rto);
  if (k != 0 && !o.async) return Status::Error("--k needs --async");
  if (vm.count("delay")) {
    Result<std::vector<TimeNs>> delays = WorkerDelays(vm, setup.fabric.num_workers());
    if (!delays.ok()) return delays.status();
    o.start_delay = std::move(*delays);
  }
  return o;
}

// One scheme's run as table lines (*out) and a CSV row (*rows); independent of the other
// schemes' runs, so they may run at once.
Status RunScheme(const GoatSetup& setup, GoatRunOptions o, GoatScheme scheme, bool engine_stats,
                 std::string* text, std::string* rows) {
  std::string& out = *text;
  o.scheme = scheme;
  const auto wall_start = std::chrono::steady_clock::now();
  Result<GoatRunResult> r = RunGoatJob(setup.fabric, o);
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall_start;
  const std::string name(GoatSchemeName(scheme));
  if (!r.ok()) return Status::Error(name + ": " + r.message());
  double mean_ms = 0;
  for (const GoatRoundStats& rs : r->rounds) mean_ms += rs.duration_ns / 1e6;
  mean_ms /= static_cast<double>(r->rounds.size());
  const double model_bytes = static_cast<double>(setup.model.total_slots) * o.elements * 4;
  const double payload = o.elements * 4.0;  // gradient bytes per fragment
  const double ps_bytes = static_cast<double>(r->ps_gradients) * payload;
  const double total = static_cast<double>(r->gradient_frames) * payload;
  const double ps_over_model = ps_bytes / (model_bytes * o.rounds);
  char line[512];
  std::snprintf(
      line, sizeof(line), "%-10s %12llu %10.3f %12.2f %12.3f %10.3f %10llu %10llu %8s\n",
      name.c_str(), static_cast<unsigned long long>(r->ps_gradients), ps_bytes / 1e6, ps_over_model,
      total / 1e6, mean_ms, static_cast<unsigned long long>(r->switches.collisions),
      static_cast<unsigned long long>(r->retransmissions), r->mismatches == 0 ? "yes" : "NO");
  out += line;
  if (engine_stats) {
    std::snprintf(line, sizeof(line), "%-10s engine: %llu events, %llu frame hops, %.1f s wall\n",
                  "", static_cast<unsigned long long>(r->events),
                  static_cast<unsigned long long>(r->gradient_frames + r->result_frames),
                  wall.count());
    out += line;
    // What reached the PS: workers' own fragments and switch aggregates (complete or flushed).
    std::snprintf(line, sizeof(line),
                  "%-10s PS got: %llu workers' fragments, %llu switch aggregates\n", "",
                  static_cast<unsigned long long>(r->ps.originals),
                  static_cast<unsigned long long>(r->ps.aggregates));
    out += line;
  }
  std::snprintf(
      line, sizeof(line), "%s,%u,%.0f,%llu,%.0f,%.4f,%.0f,%.0f,%.4f,%llu,%llu,%llu,%llu,%llu\n",
      name.c_str(), setup.fabric.num_workers(), model_bytes,
      static_cast<unsigned long long>(r->ps_gradients), ps_bytes, ps_over_model, total,
      static_cast<double>(r->result_frames) * payload, mean_ms,
      static_cast<unsigned long long>(r->switches.collisions),
      static_cast<unsigned long long>(r->switches.late),
      static_cast<unsigned long long>(r->retransmissions),
      static_cast<unsigned long long>(r->excluded), static_cast<unsigned long long>(r->mismatches));
  *rows += line;
  if (r->mismatches != 0) {
    return Status::Error(name + ": " + std::to_string(r->mismatches) +
                         " result elements differ from the exact sum");
  }
  return Status::Ok();
}

}  // namespace

Status RunGoatSim(const po::variables_map& vm, std::ostream& out) {
  SWEMU_RETURN_IF_ERROR(opt::RefuseWithTopology(vm, {"link-rate", "loss"}));
  Result<std::vector<GoatScheme>> schemes = Schemes(Text(vm, "scheme"));
  if (!schemes.ok()) return schemes.status();
  std::string csv;
  if (vm.count("csv")) {
    csv = Text(vm, "csv");
    SWEMU_RETURN_IF_ERROR(CheckOutputPath(csv, "--csv"));
  }
  Result<GoatSetup> setup = MakeGoatSetup(vm);
  if (!setup.ok()) return setup.status();
  std::string rate_text;
  Result<GoatRunOptions> o = SimRunOptions(vm, *setup, &rate_text);
  if (!o.ok()) return o.status();
  const goat_tool::ModelSlots& model = setup->model;
  const double model_bytes = static_cast<double>(model.total_slots) * o->elements * 4;
  char line[512];
  out << "GOAT sim (virtual time, packet level): " << setup->description << "\n";
  // The memory as given (--memory / --scale), or the topology's switches' own.
  std::snprintf(line, sizeof(line), "(%s / %g)", setup->memory.c_str(), setup->scale);
  const std::string memory_from = setup->memory.empty() ? "(the switches' configs, largest)" : line;
  std::snprintf(line, sizeof(line),
                "%u workers; %s scaled 1/%g: %.3f MB per worker in %zu sub-models; %llu slots "
                "%s per programmable switch; rates %.2f +- %.2f of %s; %u round(s)%s\n",
                setup->fabric.num_workers(), model.name.c_str(), setup->scale, model_bytes / 1e6,
                o->fragments.size(), static_cast<unsigned long long>(setup->slots),
                memory_from.c_str(), o->rate_mean, o->rate_std, rate_text.c_str(), o->rounds,
                o->async ? ", asynchronous" : "");
  out << line;
  std::snprintf(line, sizeof(line), "\n%-10s %12s %10s %12s %12s %10s %10s %10s %8s\n", "scheme",
                "to PS frags", "PS MB", "PS/model", "total MB", "round ms", "collide", "retrans",
                "exact");
  out << line;
  std::string rows =
      "scheme,workers,model_bytes,ps_fragments,ps_bytes,ps_over_model,"
      "gradient_bytes,result_bytes,mean_round_ms,collisions,late,retransmissions,"
      "excluded,mismatches\n";
  unsigned threads = 1;
  SWEMU_RETURN_IF_ERROR(opt::CheckThreads(vm, &threads));
  // The schemes at once on --threads, each into its own slot, printed in the order named.
  const std::size_t n = schemes->size();
  std::vector<std::string> texts(n), scheme_rows(n);
  std::vector<Status> done(n, Status::Error("not run"));
  RunIndependent(threads, n, [&](std::size_t k) {
    done[k] = RunScheme(*setup, *o, (*schemes)[k], vm.count("engine-stats") != 0, &texts[k],
                        &scheme_rows[k]);
    return done[k].ok();
  });
  for (std::size_t k = 0; k < n; ++k) {
    out << texts[k];
    rows += scheme_rows[k];
    SWEMU_RETURN_IF_ERROR(done[k]);
  }
  out << "PS MB and total MB: gradient payload (" << o->elements * 4
      << " B per fragment) at the scaled size; PS/model: the PS's traffic in model sizes per "
         "round (1.00 = one aggregate per fragment)\n";
  if (!csv.empty()) {
    SWEMU_RETURN_IF_ERROR(WriteTextFile(csv, rows, "--csv"));
    out << "wrote " << csv << "\n";
  }
  return Status::Ok();
}

}  // namespace swemu
