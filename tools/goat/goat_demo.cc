#include "tools/goat/goat_demo.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <memory>

#include "hostlib/dpdk/dpdk_host.h"
#include "hostlib/dpdk/host_runner.h"
#include "hostlib/goat/async_k.h"
#include "hostlib/goat/job_file.h"
#include "pipeline/control/units.h"
#include "pipeline/core/hash.h"
#include "pipeline/core/text_file.h"
#include "swemu/dpdk/eal.h"
#include "hostlib/testbed/swemu_process.h"
#include "hostlib/testbed/swemu_network.h"
#include "tools/option_values.h"
#include "tools/goat/goat_publish.h"

namespace swemu {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;

po::options_description GoatDemoOptions() {
  po::options_description options("swemu-goat demo options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("out-dir", po::value<std::string>()->default_value("out/goat_demo"), "the published files, sockets and switch logs")
      ("scheme", po::value<std::string>()->default_value("goat"), "goat, atp-style or ps-only")
      ("rounds", po::value<std::string>()->default_value("3"), "rounds of gradients")
      ("async", "asynchronous mode: from the second round on, K from the arrival history (Algorithm 2, or --k)")
      ("k", po::value<std::string>()->default_value("0"), "with --async: this K every round (0: Algorithm 2)")
      ("delay", po::value<std::vector<std::string>>(), "W=TIME: worker W starts every round this late (e.g. 3=200ms), repeatable")
      ("timeout", po::value<std::string>()->default_value("60s"), "per round")
      ("rto", po::value<std::string>()->default_value("200ms"), "the workers' first retransmission timeout (doubling): above the round trip through three swemu processes on a busy machine, so that waiting is not taken for loss")
      ("swemu", po::value<std::string>(), "the swemu binary (default: ../swemu/swemu next to this one)")
      ("verbose,v", "also print each switch's goat_stats counters (one JSON line per switch), and DPDK's routine log lines (telemetry, virtio_user's random MAC) here and in the switches' logs");
  // clang-format on
  AddGoatSetupOptions(options);
  return options;
}

Status RunGoatDemo(const po::variables_map& vm, std::ostream& out) {
  uint64_t rounds = 0, k = 0;
  TimeNs timeout = 0, rto = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "rounds", 1, 1000, &rounds));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "k", 0, kGoatMaxWorkers, &k));
  SWEMU_RETURN_IF_ERROR(Check("timeout", ParseDurationOption(Text(vm, "timeout")), &timeout));
  if (timeout == 0) return Status::Error("--timeout must be above 0");
  SWEMU_RETURN_IF_ERROR(Check("rto", ParseDurationOption(Text(vm, "rto")), &rto));
  if (rto == 0) return Status::Error("--rto must be above 0");
  const bool async = vm.count("async") != 0;
  if (k != 0 && !async) return Status::Error("--k needs --async");
  const std::string scheme_name = Text(vm, "scheme");
  if (scheme_name != "goat" && scheme_name != "atp-style" && scheme_name != "ps-only") {
    return Status::Error("--scheme " + scheme_name + ": goat, atp-style or ps-only");
  }
  const GoatScheme scheme = scheme_name == "goat"        ? GoatScheme::kGoat
                            : scheme_name == "atp-style" ? GoatScheme::kAtpStyle
                                                         : GoatScheme::kPsOnly;
  Result<GoatSetup> setup = MakeGoatSetup(vm);
  if (!setup.ok()) return setup.status();
  const GoatFabricSpec& spec = setup->fabric.spec();
  const uint32_t workers = setup->fabric.num_workers();
  std::vector<TimeNs> delay(workers, 0);
  if (vm.count("delay")) {
    for (const std::string& d : vm["delay"].as<std::vector<std::string>>()) {
      const std::size_t eq = d.find('=');
      Result<uint64_t> w = ParseUint(d.substr(0, eq), 0, workers - 1);
      Result<uint64_t> t = eq == std::string::npos ? Result<uint64_t>(Status::Error("no '='"))
                                                   : ParseDurationOption(d.substr(eq + 1));
      if (!w.ok() || !t.ok()) {
        return Status::Error("--delay " + d + ": W=TIME with W in 0.." +
                             std::to_string(workers - 1));
      }
      delay[*w] = *t;
    }
  }
  GoatPublishLayout layout;
  layout.dir = Text(vm, "out-dir");
  std::error_code ec;
  std::filesystem::create_directories(layout.dir, ec);
  if (ec || !std::filesystem::is_directory(layout.dir)) {
    return Status::Error("--out-dir " + layout.dir + ": cannot create it (" + ec.message() + ")");
  }
  layout.dir = std::filesystem::absolute(layout.dir).lexically_normal().string();
  layout.socket_dir = layout.dir;
  layout.file_prefix = "swemu-goat-" + std::to_string(getpid());
  layout.link_rate = "0";
  layout.command = "swemu-goat demo";
  if (layout.VhostSocket("leaf99", 99).size() > 107) {
    return Status::Error("--out-dir " + layout.dir + " is too long for Unix socket paths");
  }
  Result<GoatPublishedPlan> plan = MakeGoatPlan(*setup, scheme, 0);
  if (!plan.ok()) return plan.status();
  Result<std::vector<std::string>> files = WriteGoatFiles(*setup, *plan, layout);
  if (!files.ok()) return files.status();
  // The hosts read what was published.
  Result<std::string> job_text = ReadTextFile(layout.dir + "/goat.job", "goat job");
  if (!job_text.ok()) return job_text.status();
  Result<GoatJob> parsed = ParseGoatJob(*job_text);
  if (!parsed.ok()) return parsed.status();
  GoatJob job = *parsed;

  // One swemu per switch, in the network's order: each link's vhost-user end starts first.
  const std::string binary =
      vm.count("swemu") ? Text(vm, "swemu") : SelfDirectory() + "/../swemu/swemu";
  const SwemuNetwork network = layout.Network(spec);
  SwemuProcesses switches;
  const bool verbose = vm.count("verbose") != 0;
  SWEMU_RETURN_IF_ERROR(
      switches.Start(network, binary, WithDpdkLog({"-l", "0", "--no-huge", "-m", "256"}, verbose)));

  SWEMU_RETURN_IF_ERROR(
      DpdkHost::InitEal(WithDpdkLog({"-l", "1", "--no-pci", "--no-huge", "-m", "512",
                                     "--file-prefix", layout.file_prefix + "-hosts"},
                                    verbose),
                        out));
  const EalCleanupAtScopeExit eal_cleanup;  // after the host, which is declared below
  DpdkHostConfig host_config;
  host_config.mbufs = 32767;  // 9 ports of 1024-entry rings, and retransmissions in flight
  host_config.mbuf_cache = 256;
  for (uint32_t h = 0; h < spec.hosts.size(); ++h) {
    host_config.ports.push_back(network.HostDevargs(h, spec.hosts[h].sw, spec.hosts[h].port));
  }
  Result<std::unique_ptr<DpdkHost>> dpdk = DpdkHost::Open(host_config);
  if (!dpdk.ok()) return dpdk.status();
  HostRunner runner;
  const std::vector<uint32_t> hosts = setup->fabric.worker_hosts();
  std::vector<std::unique_ptr<GoatWorker>> w;
  GoatWorkerOptions wo;
  wo.rto_ns = rto;
  wo.max_rto_ns = std::max<TimeNs>(wo.max_rto_ns, 8 * rto);  // back off: a straggler is not loss
  for (uint32_t i = 0; i < workers; ++i) {
    w.push_back(std::make_unique<GoatWorker>(job, i, &(*dpdk)->port(hosts[i]), wo));
    runner.Add(*w.back(), (*dpdk)->port(hosts[i]));
  }
  GoatPs ps(job, &(*dpdk)->port(setup->fabric.ps_host()));
  runner.Add(ps, (*dpdk)->port(setup->fabric.ps_host()));

  out << "swemu-goat demo: " << scheme_name << " plan on " << setup->description << " ("
      << spec.switches.size() << " swemu processes), " << workers << " workers and the PS over "
      << "virtio_user; " << job.num_submodels() << " sub-models, " << job.total_fragments()
      << " fragments of " << job.elements << " values per worker\n";
  const uint64_t n = job.total_elements();
  std::vector<std::vector<int32_t>> in(workers, std::vector<int32_t>(n));
  std::vector<std::vector<int32_t>> res(workers, std::vector<int32_t>(n));
  std::vector<double> history;
  uint64_t mismatches = 0;
  Status run = Status::Ok();
  for (uint32_t r = 0; r < rounds && run.ok(); ++r) {
    uint32_t target = workers;
    if (async && r > 0) {
      if (k != 0) {
        target = static_cast<uint32_t>(k);
      } else {
        Result<KSearchResult> chosen = ChooseK(history, {});
        if (!chosen.ok()) {
          run = chosen.status();
          break;
        }
        target = chosen->k;
      }
      // K per switch and sub-model: the participants the plan sends there, published through
      // each switch's control socket. A fresh goat_node numbers its entries from 0, in the
      // startup script's order.
      const std::vector<uint32_t> fastest = FastestWorkers(history, target);
      for (std::size_t s = 0; s < spec.switches.size() && scheme == GoatScheme::kGoat; ++s) {
        const auto entries = plan->published.entries.find(spec.switches[s].name);
        if (entries == plan->published.entries.end()) continue;
        for (std::size_t e = 0; e < entries->second.size(); ++e) {
          const GoatNodeEntry& entry = entries->second[e];
          uint32_t fan_in = 0;
          for (uint32_t f : fastest)
            fan_in += job.node[f][entry.submodel] == spec.switches[s].node_id;
          Result<std::string> done =
              switches.Command(s, "table_modify goat_node aggregate " + std::to_string(e) + " => " +
                                      std::to_string(entry.base) + " " +
                                      std::to_string(entry.size) + " " + std::to_string(fan_in));
          if (!done.ok()) run = Status::Error(spec.switches[s].name + ": " + done.message());
        }
      }
      job.k = target == workers ? 0 : target;
    }
    if (!run.ok()) break;
    const TimeNs start = runner.NowNs();
    std::vector<uint64_t> excluded_before(workers);
    for (uint32_t i = 0; i < workers; ++i) excluded_before[i] = w[i]->stats().excluded;
    for (uint32_t i = 0; i < workers; ++i) {
      for (uint64_t e = 0; e < n; ++e) in[i][e] = GoatDemoValue(r, i, e);
      run = w[i]->StartRound(r, in[i], res[i], start + delay[i]);
      if (!run.ok()) break;
    }
    if (!run.ok()) break;
    run = runner.RunUntil(
        [&] { return std::all_of(w.begin(), w.end(), [](const auto& x) { return x->done(); }); },
        timeout,
        [&] {
          uint32_t left = 0;
          for (const auto& x : w) left += x->done() ? 0 : 1;
          return std::to_string(left) + " workers waiting for results of round " +
                 std::to_string(r);
        });
    if (!run.ok()) break;
    history.assign(workers, 0);
    TimeNs counted_done = 0, all_done = 0;
    std::vector<TimeNs> finish;
    uint64_t excluded = 0;
    for (uint32_t i = 0; i < workers; ++i) {
      history[i] = static_cast<double>(w[i]->sent_all_ns() - start);
      all_done = std::max(all_done, w[i]->finish_ns() - start);
      for (uint64_t f = 0; f < job.total_fragments(); ++f) {
        const uint64_t bits = w[i]->contributors(f);
        for (uint16_t e = 0; e < job.elements; ++e) {
          int64_t exact = 0;
          for (uint64_t b = bits; b != 0; b &= b - 1) {
            exact += in[std::countr_zero(b)][f * job.elements + e];
          }
          mismatches += res[i][f * job.elements + e] != exact ? 1 : 0;
        }
      }
      excluded += w[i]->stats().excluded - excluded_before[i];
      finish.push_back(w[i]->finish_ns() - start);
    }
    // Which K workers a fragment counted can differ per fragment (each switch completes from
    // its first K^s); the round's model is there once the K-th worker has all of its results.
    std::sort(finish.begin(), finish.end());
    counted_done = finish[target - 1];
    char line[256];
    std::snprintf(line, sizeof(line),
                  "round %u: K %u, the K-th worker done in %.1f ms, all in %.1f ms; %llu results "
                  "excluded a late worker\n",
                  r, target, counted_done / 1e6, all_done / 1e6,
                  static_cast<unsigned long long>(excluded));
    out << line;
  }
  for (std::size_t s = 0; s < switches.size() && verbose; ++s) {
    Result<std::string> stats = switches.Command(s, "goat_stats");
    out << spec.switches[s].name << ": " << (stats.ok() ? *stats : stats.message()) << "\n";
  }
  const GoatPsStats& p = ps.stats();
  out << "PS: " << p.gradients << " gradient packets (" << p.aggregates << " switch aggregates, "
      << p.originals << " workers' own), " << p.completed << " fragment-rounds completed, "
      << p.late << " late\n";
  uint64_t retransmissions = 0;
  for (const auto& x : w) retransmissions += x->stats().retransmissions;
  out << "workers: " << retransmissions << " retransmissions; every result "
      << (mismatches == 0 ? "equals" : "DIFFERS FROM") << " the exact sum of the workers it counted"
      << (mismatches == 0 ? "" : " (" + std::to_string(mismatches) + " elements)") << "\n";
  // Three swemus and the hosts on a small machine: say when the hosts lost their CPU.
  out << HostContentionLine(runner.stats());
  Status closed = (*dpdk)->Close();
  Status stopped = switches.Stop();
  SWEMU_RETURN_IF_ERROR(run);
  SWEMU_RETURN_IF_ERROR(closed);
  SWEMU_RETURN_IF_ERROR(stopped);
  if (mismatches != 0) return Status::Error(std::to_string(mismatches) + " result elements wrong");
  out << "configs, scripts, job and switch logs: " << layout.dir << "\n";
  return Status::Ok();
}

}  // namespace swemu
