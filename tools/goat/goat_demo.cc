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
#include "hostlib/testbed/swemu_network.h"
#include "hostlib/testbed/swemu_process.h"
#include "pipeline/control/units.h"
#include "pipeline/core/hash.h"
#include "pipeline/core/text_file.h"
#include "swemu/dpdk/eal.h"
#include "tools/goat/goat_publish.h"
#include "tools/option_values.h"

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
      ("rto", po::value<std::string>()->default_value("200ms"), "the workers' first retransmission timeout (doubling): above the round trip through three switches on a busy machine, so that waiting is not taken for loss")
      ("swemu", po::value<std::string>(), "the swemu binary (default: ../swemu/swemu next to this one)")
      ("verbose,v", "also print each switch's goat_stats counters (one JSON line per switch), and DPDK's routine log lines (telemetry, virtio_user's random MAC) here and in the switches' logs");
  // clang-format on
  AddGoatSetupOptions(options);
  return options;
}

namespace {

struct DemoOptions {
  uint32_t rounds = 0;
  uint32_t k = 0;
  TimeNs timeout = 0;
  TimeNs rto = 0;
  bool async = false;
  bool verbose = false;
  std::string scheme_name;
  GoatScheme scheme = GoatScheme::kGoat;
};

Result<DemoOptions> ReadDemoOptions(const po::variables_map& vm) {
  DemoOptions d;
  uint64_t rounds = 0, k = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "rounds", 1, 1000, &rounds));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "k", 0, kGoatMaxWorkers, &k));
  SWEMU_RETURN_IF_ERROR(Check("timeout", ParseDurationOption(Text(vm, "timeout")), &d.timeout));
  if (d.timeout == 0) return Status::Error("--timeout must be above 0");
  SWEMU_RETURN_IF_ERROR(Check("rto", ParseDurationOption(Text(vm, "rto")), &d.rto));
  if (d.rto == 0) return Status::Error("--rto must be above 0");
  d.rounds = static_cast<uint32_t>(rounds);
  d.k = static_cast<uint32_t>(k);
  d.async = vm.count("async") != 0;
  d.verbose = vm.count("verbose") != 0;
  if (d.k != 0 && !d.async) return Status::Error("--k needs --async");
  d.scheme_name = Text(vm, "scheme");
  if (d.scheme_name != "goat" && d.scheme_name != "atp-style" && d.scheme_name != "ps-only") {
    return Status::Error("--scheme " + d.scheme_name + ": goat, atp-style or ps-only");
  }
  d.scheme = d.scheme_name == "goat"        ? GoatScheme::kGoat
             : d.scheme_name == "atp-style" ? GoatScheme::kAtpStyle
                                            : GoatScheme::kPsOnly;
  return d;
}

// --out-dir made and absolute: the published files, the sockets, the switches' logs.
Result<GoatPublishLayout> DemoLayout(const po::variables_map& vm) {
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
  return layout;
}

// The plan published into the layout's files, and the job as the hosts read it back.
Result<GoatJob> PublishDemo(const GoatSetup& setup, const GoatPublishedPlan& plan,
                            const GoatPublishLayout& layout) {
  Result<std::vector<std::string>> files = WriteGoatFiles(setup, plan, layout);
  if (!files.ok()) return files.status();
  Result<std::string> job_text = ReadTextFile(layout.dir + "/goat.job", "goat job");
  if (!job_text.ok()) return job_text.status();
  return ParseGoatJob(*job_text);
}

// Every worker and the PS on a virtio_user port of this process (DPDK), run by one HostRunner
// that watches the swemu process's busy-polling lcore (a starved switch holds the timers).
struct DemoHosts {
  explicit DemoHosts(const SwemuProcesses& switches)
      : runner(HostRunnerOptions{.busy_peers = {switches.process().pid()}}) {}
  std::unique_ptr<DpdkHost> dpdk;
  HostRunner runner;
  std::vector<std::unique_ptr<GoatWorker>> workers;
  std::unique_ptr<GoatPs> ps;
};

Status AttachHosts(const GoatFabric& fabric, const SwemuNetwork& network, const GoatJob& job,
                   TimeNs rto, DemoHosts& hosts) {
  const GoatFabricSpec& spec = fabric.spec();
  DpdkHostConfig config;
  config.mbufs = 32767;  // 9 ports of 1024-entry rings, and retransmissions in flight
  config.mbuf_cache = 256;
  for (uint32_t h = 0; h < spec.hosts.size(); ++h) {
    config.ports.push_back(network.HostDevargs(h, spec.hosts[h].sw, spec.hosts[h].port));
  }
  Result<std::unique_ptr<DpdkHost>> dpdk = DpdkHost::Open(config);
  if (!dpdk.ok()) return dpdk.status();
  hosts.dpdk = std::move(*dpdk);
  GoatWorkerOptions wo;
  wo.rto_ns = rto;
  wo.max_rto_ns = std::max<TimeNs>(wo.max_rto_ns, 8 * rto);  // back off: a straggler is not loss
  const std::vector<uint32_t> worker_hosts = fabric.worker_hosts();
  for (uint32_t i = 0; i < worker_hosts.size(); ++i) {
    DpdkPortTransport& port = hosts.dpdk->port(worker_hosts[i]);
    hosts.workers.push_back(std::make_unique<GoatWorker>(job, i, &port, wo));
    hosts.runner.Add(*hosts.workers.back(), port);
  }
  DpdkPortTransport& ps_port = hosts.dpdk->port(fabric.ps_host());
  hosts.ps = std::make_unique<GoatPs>(job, &ps_port);
  hosts.runner.Add(*hosts.ps, ps_port);
  return Status::Ok();
}

// The rounds: gradients in, results checked against the exact sum of the workers each counted.
class DemoRounds {
 public:
  DemoRounds(const GoatSetup& setup, const GoatPublishedPlan& plan, GoatJob& job, DemoHosts& hosts,
             SwemuProcesses& switches)
      : setup_(setup),
        plan_(plan),
        job_(job),
        hosts_(hosts),
        switches_(switches),
        workers_(setup.fabric.num_workers()),
        in_(workers_, std::vector<int32_t>(job.total_elements())),
        res_(workers_, std::vector<int32_t>(job.total_elements())) {}

  // K for round r (all workers in round 0 or without --async), published to the switches.
  Result<uint32_t> Target(uint32_t r, const DemoOptions& d);
  Status Run(uint32_t r, uint32_t target, const std::vector<TimeNs>& delay, TimeNs timeout,
             std::ostream& out);
  uint64_t mismatches() const { return mismatches_; }

 private:
  Status PublishK(const std::vector<uint32_t>& fastest);
  uint64_t CheckResults(uint32_t worker) const;

  const GoatSetup& setup_;
  const GoatPublishedPlan& plan_;
  GoatJob& job_;
  DemoHosts& hosts_;
  SwemuProcesses& switches_;
  const uint32_t workers_;
  std::vector<std::vector<int32_t>> in_, res_;
  std::vector<double> history_;
  uint64_t mismatches_ = 0;
};

Result<uint32_t> DemoRounds::Target(uint32_t r, const DemoOptions& d) {
  if (!d.async || r == 0) return workers_;
  uint32_t target = d.k;
  if (target == 0) {
    Result<KSearchResult> chosen = ChooseK(history_, {});
    if (!chosen.ok()) return chosen.status();
    target = chosen->k;
  }
  if (d.scheme == GoatScheme::kGoat)
    SWEMU_RETURN_IF_ERROR(PublishK(FastestWorkers(history_, target)));
  job_.k = target == workers_ ? 0 : target;
  return target;
}

// K per switch and sub-model: the participants the plan sends there, published through each
// switch's control socket. A fresh goat_node numbers its entries from 0, in the startup script's
// order.
Status DemoRounds::PublishK(const std::vector<uint32_t>& fastest) {
  const GoatFabricSpec& spec = setup_.fabric.spec();
  Status status = Status::Ok();
  for (std::size_t s = 0; s < spec.switches.size(); ++s) {
    const auto entries = plan_.published.entries.find(spec.switches[s].name);
    if (entries == plan_.published.entries.end()) continue;
    for (std::size_t e = 0; e < entries->second.size(); ++e) {
      const GoatNodeEntry& entry = entries->second[e];
      uint32_t fan_in = 0;
      for (uint32_t f : fastest) fan_in += job_.node[f][entry.submodel] == spec.switches[s].node_id;
      Result<std::string> done =
          switches_.Command(s, "table_modify goat_node aggregate " + std::to_string(e) + " => " +
                                   std::to_string(entry.base) + " " + std::to_string(entry.size) +
                                   " " + std::to_string(fan_in));
      if (!done.ok()) status = Status::Error(spec.switches[s].name + ": " + done.message());
    }
  }
  return status;
}

// Result elements of worker i that differ from the exact sum of the workers its bitmap counted.
uint64_t DemoRounds::CheckResults(uint32_t i) const {
  uint64_t wrong = 0;
  const GoatWorker& w = *hosts_.workers[i];
  for (uint64_t f = 0; f < job_.total_fragments(); ++f) {
    const uint64_t bits = w.contributors(f);
    for (uint16_t e = 0; e < job_.elements; ++e) {
      int64_t exact = 0;
      for (uint64_t b = bits; b != 0; b &= b - 1)
        exact += in_[std::countr_zero(b)][f * job_.elements + e];
      wrong += res_[i][f * job_.elements + e] != exact ? 1 : 0;
    }
  }
  return wrong;
}

Status DemoRounds::Run(uint32_t r, uint32_t target, const std::vector<TimeNs>& delay,
                       TimeNs timeout, std::ostream& out) {
  auto& w = hosts_.workers;
  const TimeNs start = hosts_.runner.NowNs();
  std::vector<uint64_t> excluded_before(workers_);
  for (uint32_t i = 0; i < workers_; ++i) excluded_before[i] = w[i]->stats().excluded;
  for (uint32_t i = 0; i < workers_; ++i) {
    for (uint64_t e = 0; e < in_[i].size(); ++e) in_[i][e] = GoatDemoValue(r, i, e);
    SWEMU_RETURN_IF_ERROR(w[i]->StartRound(r, in_[i], res_[i], start + delay[i]));
  }
  SWEMU_RETURN_IF_ERROR(hosts_.runner.RunUntil(
      [&] { return std::all_of(w.begin(), w.end(), [](const auto& x) { return x->done(); }); },
      timeout,
      [&] {
        uint32_t left = 0;
        for (const auto& x : w) left += x->done() ? 0 : 1;
        return std::to_string(left) + " workers waiting for results of round " + std::to_string(r);
      }));
  history_.assign(workers_, 0);
  TimeNs all_done = 0;
  std::vector<TimeNs> finish;
  uint64_t excluded = 0;
  for (uint32_t i = 0; i < workers_; ++i) {
    history_[i] = static_cast<double>(w[i]->sent_all_ns() - start);
    all_done = std::max(all_done, w[i]->finish_ns() - start);
    mismatches_ += CheckResults(i);
    excluded += w[i]->stats().excluded - excluded_before[i];
    finish.push_back(w[i]->finish_ns() - start);
  }
  // Which K workers a fragment counted can differ per fragment (each switch completes from its
  // first K^s); the round's model is there once the K-th worker has all of its results.
  std::sort(finish.begin(), finish.end());
  char line[256];
  std::snprintf(line, sizeof(line),
                "round %u: K %u, the K-th worker done in %.1f ms, all in %.1f ms; %llu results "
                "excluded a late worker\n",
                r, target, finish[target - 1] / 1e6, all_done / 1e6,
                static_cast<unsigned long long>(excluded));
  out << line;
  return Status::Ok();
}

// After the rounds: the switches' counters (-v), the PS's and workers' counts, contention.
void Report(const DemoHosts& hosts, SwemuProcesses& switches, const GoatFabricSpec& spec,
            uint64_t mismatches, bool verbose, std::ostream& out) {
  for (std::size_t s = 0; s < switches.size() && verbose; ++s) {
    Result<std::string> stats = switches.Command(s, "goat_stats");
    out << spec.switches[s].name << ": " << (stats.ok() ? *stats : stats.message()) << "\n";
  }
  const GoatPsStats& p = hosts.ps->stats();
  out << "PS: " << p.gradients << " gradient packets (" << p.aggregates << " switch aggregates, "
      << p.originals << " workers' own), " << p.completed << " fragment-rounds completed, "
      << p.late << " late\n";
  uint64_t retransmissions = 0;
  for (const auto& x : hosts.workers) retransmissions += x->stats().retransmissions;
  out << "workers: " << retransmissions << " retransmissions; every result "
      << (mismatches == 0 ? "equals" : "DIFFERS FROM") << " the exact sum of the workers it counted"
      << (mismatches == 0 ? "" : " (" + std::to_string(mismatches) + " elements)") << "\n";
  // The swemu process and the hosts on a small machine: say when either lost its CPU.
  out << HostContentionLine(hosts.runner.stats(), true);
}

}  // namespace

Status RunGoatDemo(const po::variables_map& vm, std::ostream& out) {
  Result<DemoOptions> d = ReadDemoOptions(vm);
  if (!d.ok()) return d.status();
  Result<GoatSetup> setup = MakeGoatSetup(vm);
  if (!setup.ok()) return setup.status();
  const GoatFabricSpec& spec = setup->fabric.spec();
  const uint32_t workers = setup->fabric.num_workers();
  Result<std::vector<TimeNs>> delay = WorkerDelays(vm, workers);
  if (!delay.ok()) return delay.status();
  Result<GoatPublishLayout> layout = DemoLayout(vm);
  if (!layout.ok()) return layout.status();
  Result<GoatPublishedPlan> plan = MakeGoatPlan(*setup, d->scheme, 0);
  if (!plan.ok()) return plan.status();
  Result<GoatJob> job = PublishDemo(*setup, *plan, *layout);
  if (!job.ok()) return job.status();

  // One swemu process runs every switch, busy-polling lcore 0 (the hosts poll lcore 1); the
  // links are rings in it.
  const std::string binary =
      vm.count("swemu") ? Text(vm, "swemu") : SelfDirectory() + "/../swemu/swemu";
  const SwemuNetwork network = layout->Network(spec);
  SwemuProcesses switches;
  SWEMU_RETURN_IF_ERROR(switches.Start(
      network, binary, WithDpdkLog({"-l", "0", "--no-huge", "-m", "256"}, d->verbose), true));
  SWEMU_RETURN_IF_ERROR(
      DpdkHost::InitEal(WithDpdkLog({"-l", "1", "--no-pci", "--no-huge", "-m", "512",
                                     "--file-prefix", layout->file_prefix + "-hosts"},
                                    d->verbose),
                        out));
  const EalCleanupAtScopeExit eal_cleanup;  // after the hosts, which are declared below
  DemoHosts hosts(switches);
  SWEMU_RETURN_IF_ERROR(AttachHosts(setup->fabric, network, *job, d->rto, hosts));
  out << "swemu-goat demo: " << d->scheme_name << " plan on " << setup->description << " ("
      << spec.switches.size() << " switches in one swemu process), " << workers << " workers and the PS over "
      << "virtio_user; " << job->num_submodels() << " sub-models, " << job->total_fragments()
      << " fragments of " << job->elements << " values per worker\n";
  DemoRounds rounds(*setup, *plan, *job, hosts, switches);
  Status run = Status::Ok();
  for (uint32_t r = 0; r < d->rounds && run.ok(); ++r) {
    Result<uint32_t> target = rounds.Target(r, *d);
    run = target.ok() ? rounds.Run(r, *target, *delay, d->timeout, out) : target.status();
  }
  Report(hosts, switches, spec, rounds.mismatches(), d->verbose, out);
  Status closed = hosts.dpdk->Close();
  Status stopped = switches.Stop();
  SWEMU_RETURN_IF_ERROR(run);
  SWEMU_RETURN_IF_ERROR(closed);
  SWEMU_RETURN_IF_ERROR(stopped);
  if (rounds.mismatches() != 0) {
    return Status::Error(std::to_string(rounds.mismatches()) + " result elements wrong");
  }
  out << "configs, scripts, job and switch logs: " << layout->dir << "\n";
  return Status::Ok();
}

}  // namespace swemu
