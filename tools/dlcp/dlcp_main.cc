// swemu-dlcp: DLCP's host-side tools. `thresholds` solves Appendix B (corrected,
// hostlib/dlcp/thresholds.h) for a model's layer sizes, a small-gradient share, a load and a
// port buffer: per-queue S_i and L_i, the fit S_i = T(1 + (i-1)d), and the commands that install
// them in the dlcp program. `sim` runs the experiment in virtual time (hostlib/dlcp/experiment.h)
// on its leaf-spine or a --topology file (hostlib/dlcp/fabric.h),
// `realtime` an incast through a swemu child process on DPDK vdevs, `send` and `recv` the hosts
// over kernel UDP (tools/dlcp/dlcp_udp.h).
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "hostlib/dlcp/experiment.h"
#include "hostlib/dlcp/fabric.h"
#include "pipeline/core/independent_runs.h"
#include "pipeline/core/output_files.h"
#include "pipeline/engine/partition.h"
#include "pipeline/core/text_file.h"
#include "tools/dlcp/dlcp_realtime.h"
#include "tools/dlcp/dlcp_udp.h"
#include "hostlib/dlcp/thresholds.h"
#include "hostlib/workload/model_layers.h"
#include "pipeline/control/units.h"
#include "pipeline/tm/tm_config.h"
#include "swemu/topology_config.h"
#include "tools/option_values.h"
#include "tools/subcommand.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

po::options_description ThresholdOptions() {
  po::options_description options("swemu-dlcp thresholds options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("model", po::value<std::string>()->default_value("ResNet50"), "a bundled model (VGG16, AlexNet, ResNet50, InceptionV3)")
      ("layers", po::value<std::string>()->value_name("FILE"), "layer sizes in configs/models/model_layers.txt's format (its first model) instead")
      ("theta", po::value<std::string>()->default_value("0.5"), "share of small (unimportant) gradients, 0 < theta < 1")
      ("load", po::value<std::string>()->default_value("1.2"), "arrival over service rate at the port (above 1: an incast)")
      ("buffer", po::value<std::string>()->default_value("512KB"), "the port's buffer (the paper's simulation: 512 KB)")
      ("mtu", po::value<std::string>()->default_value("1500"), "bytes per packet, to count the buffer in packets")
      ("tol-front", po::value<std::string>()->default_value("1.1%"), "loss the front layers tolerate (Fig. 5)")
      ("tol-back", po::value<std::string>()->default_value("0.4%"), "loss the back layers tolerate")
      ("tol-small", po::value<std::string>()->default_value("1.6%"), "loss small gradients tolerate")
      ("tol-large", po::value<std::string>()->default_value("0.1%"), "loss large gradients tolerate");
  // clang-format on
  return options;
}

Status Number(const po::variables_map& vm, const char* name, double* out) {
  const std::string text = vm[name].as<std::string>();
  if (text.ends_with('%')) {
    Result<double> p = ParseProbability(text);
    if (!p.ok()) return Status::Error(std::string("--") + name + ": " + p.message());
    *out = *p;
    return Status::Ok();
  }
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return Status::Error(std::string("--") + name + " " + text + ": not a number");
  }
  return Status::Ok();
}

Status Run(const po::variables_map& vm, std::ostream& out) {
  DlcpModelInput in;
  ModelLayers model;
  if (vm.count("layers")) {
    const std::string path = vm["layers"].as<std::string>();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      return Status::Error("--layers " + path + ": not a regular file");
    }
    if (std::filesystem::file_size(path, ec) > (16u << 20)) {
      return Status::Error("--layers " + path + ": larger than 16 MiB, not a layer table");
    }
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    if (!file) return Status::Error("--layers " + path + ": cannot read it");
    Result<std::vector<ModelLayers>> models = ParseModelLayers(text.str());
    if (!models.ok()) return Status::Error("--layers " + path + ": " + models.message());
    if (models->empty()) return Status::Error("--layers " + path + ": no model in it");
    model = models->front();
  } else {
    Result<ModelLayers> bundled = BundledModel(vm["model"].as<std::string>());
    if (!bundled.ok()) return Status::Error("--model: " + bundled.message());
    model = *bundled;
  }
  for (const LayerSize& l : model.layers) in.layer_sizes.push_back(l.params);
  SWEMU_RETURN_IF_ERROR(Number(vm, "theta", &in.theta));
  SWEMU_RETURN_IF_ERROR(Number(vm, "load", &in.load));
  for (auto [name, field] : {std::pair{"tol-front", &in.tol_front}, {"tol-back", &in.tol_back},
                             {"tol-small", &in.tol_small}, {"tol-large", &in.tol_large}}) {
    SWEMU_RETURN_IF_ERROR(Number(vm, name, field));
  }
  Result<uint64_t> buffer = ParseBytes(vm["buffer"].as<std::string>());
  if (!buffer.ok()) return Status::Error("--buffer: " + buffer.message());
  Result<uint64_t> mtu = ParseUint(vm["mtu"].as<std::string>(), 64, 65535);
  if (!mtu.ok()) return Status::Error("--mtu: " + mtu.message());
  in.buffer_pkts = static_cast<uint32_t>(std::min<uint64_t>(*buffer / *mtu, UINT32_MAX));
  Result<DlcpThresholdPlan> plan = SolveDlcpThresholds(in);
  if (!plan.ok()) return plan.status();
  out << model.model << ": ";
  out << FormatDlcpPlan(in, *plan);
  return Status::Ok();
}

po::options_description SimOptions() {
  po::options_description options("swemu-dlcp sim options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("topology", po::value<std::string>()->value_name("FILE"), "run on this network (a .topo file, e.g. configs/dlcp_leaf_spine.topo) instead of the leaf-spine the next four options shape")
      ("tors", po::value<std::string>()->default_value("3"), "ToR switches")
      ("hosts-per-tor", po::value<std::string>()->default_value("4"), "hosts under each ToR")
      ("spines", po::value<std::string>()->default_value("2"), "core switches, each linked to every ToR")
      ("link-rate", po::value<std::string>()->default_value(FormatRate(kDefaultPortRateBps)), "every link's rate")
      ("model", po::value<std::string>()->default_value("ResNet50"), "the bundled model whose layers are pushed")
      ("scale", po::value<std::string>()->default_value("64"), "layer sizes divided by this")
      ("bound", po::value<std::string>()->default_value("10%"), "DLCP's loss bound for the push")
      ("pull-bound", po::value<std::string>()->default_value("1%"), "DLCP's loss bound for the pull (stricter, 3.2.1)")
      ("push-only", "one iteration's push, without the pull")
      ("job-hosts", po::value<std::string>()->value_name("N"), "split the hosts into jobs of N (4..4096; host h in job h % jobs), each its own iteration with its own PSs: the load per host stays fixed as the fabric grows (default: one job of every host)")
      ("workers", po::value<std::string>()->value_name("N"), "N of the hosts are workers (the paper's Fig. 14 x axis), spread evenly over the racks, one PS per 4 of them; the rest stay idle (default: every host)")
      ("load", po::value<std::string>(), "DLCP's thresholds from Appendix B at this load (the fit T, d and the "
                                         "optimum's L_i for the model and a 512 KB port), not the dlcp program's defaults")
      ("schemes", po::value<std::string>()->default_value("dlcp,dctcp"), "the schemes run, comma-separated: dlcp and one or more of the baselines dctcp, pias, pfabric (5.2.1); DLCP is compared against each")
      ("rto-min", po::value<std::string>()->default_value("10ms"), "DCTCP's and PIAS's minimum RTO")
      ("host-nic", po::value<std::string>()->default_value("shared"), "shared: a host's flows share one NIC at its link's rate, offered round robin (every scheme); per-flow: each flow is paced alone at the link's rate, so a host of n flows offers n times its link")
      ("seed", po::value<std::string>()->default_value("1"), "seed (PS choice, gradients)")
      ("alpha", po::value<std::string>()->value_name("VALUE"), "dynamic thresholds: [tm] alpha on every switch, both schemes (1/8, 2^-3, 0.125); without: the static shared buffer")
      ("csv", po::value<std::string>()->value_name("FILE"), "also write every flow of every run here (tools/dlcp/dlcp_plot.py draws it)")
      ("engine-stats", "also print each run's engine work (events, packet-hops) and wall and CPU time")
      ("verbose,v", "print the loss of every layer (default: each stage's mean and worst layer)");
  // clang-format on
  opt::AddThreadsOption(options, "the schemes");
  options.add_options()("partitions", po::value<std::string>()->value_name("N"),
                        "run each scheme's network in N partitions at once, one thread each "
                        "(1..256, at most the switches): the same output for every N");
  return options;
}

// The shape options, or with --topology the file (whose shape they would contradict).
Status ReadSimNetwork(const po::variables_map& vm, DlcpExperimentOptions& o,
                      TopologyConfig* topo) {
  if (vm.count("topology")) {
    SWEMU_RETURN_IF_ERROR(
        opt::RefuseWithTopology(vm, {"tors", "hosts-per-tor", "spines", "link-rate"}));
    const std::string path = vm["topology"].as<std::string>();
    Result<TopologyConfig> loaded = LoadTopology(path);
    if (!loaded.ok()) return Status::Error("--topology " + loaded.message());
    if (Status s = CheckDlcpTopology(*loaded); !s.ok()) {
      return Status::Error("--topology " + path + ": " + s.message());
    }
    *topo = std::move(*loaded);
    return Status::Ok();
  }
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "tors", 2, 16, &o.tors));
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "hosts-per-tor", 1, 32, &o.hosts_per_tor));
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "spines", 1, 8, &o.spines));
  Result<uint64_t> rate = ParseRate(vm["link-rate"].as<std::string>());
  if (!rate.ok() || *rate == 0) {
    return Status::Error("--link-rate: " + (rate.ok() ? std::string("must be > 0") : rate.message()));
  }
  o.link_bps = *rate;
  *topo = DlcpExperimentTopology(o);
  return Status::Ok();
}

Status RunSim(const po::variables_map& vm, std::ostream& out) {
  DlcpExperimentOptions o;
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "scale", 1, 1 << 20, &o.scale));
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "seed", 0, UINT64_MAX, &o.seed));
  Result<uint64_t> rto = ParseDurationOption(vm["rto-min"].as<std::string>());
  if (!rto.ok() || *rto == 0) return Status::Error("--rto-min: " + (rto.ok() ? std::string("must be > 0") : rto.message()));
  o.min_rto_ns = static_cast<TimeNs>(*rto);
  SWEMU_RETURN_IF_ERROR(Number(vm, "bound", &o.loss_bound));
  SWEMU_RETURN_IF_ERROR(Number(vm, "pull-bound", &o.pull_bound));
  o.pull = vm.count("push-only") == 0;
  const std::string nic = vm["host-nic"].as<std::string>();
  if (nic != "shared" && nic != "per-flow") {
    return Status::Error("--host-nic: '" + nic + "' is neither shared nor per-flow");
  }
  o.shared_nic = nic == "shared";
  if (vm.count("job-hosts") != 0) {
    SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "job-hosts", kDlcpWorkersPerPs, 4096, &o.job_hosts));
  }
  if (vm.count("workers") != 0) {
    SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "workers", kDlcpWorkersPerPs, 4096, &o.workers));
  }
  SWEMU_RETURN_IF_ERROR(opt::CheckAlpha(vm, &o.alpha));
  if (vm.count("load") != 0) {
    SWEMU_RETURN_IF_ERROR(Number(vm, "load", &o.dlcp_load));
    if (!(o.dlcp_load > 0 && o.dlcp_load <= 100)) return Status::Error("--load: must be in (0, 100]");
  }
  Result<std::vector<DlcpScheme>> schemes = ParseDlcpSchemes(vm["schemes"].as<std::string>());
  if (!schemes.ok()) return Status::Error("--schemes: " + schemes.message());
  o.model = vm["model"].as<std::string>();
  if (Result<ModelLayers> m = BundledModel(o.model); !m.ok()) {
    return Status::Error("--model: " + m.message());
  }
  TopologyConfig topo;
  SWEMU_RETURN_IF_ERROR(ReadSimNetwork(vm, o, &topo));
  if (Result<std::vector<uint32_t>> w = DlcpWorkerHosts(topo, o.workers); !w.ok()) {
    return w.status();
  }
  if (Status s = o.Validate(); !s.ok()) return Status::Error("options: " + s.message());
  if (vm.count("partitions") != 0) {
    SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "partitions", 1, 256, &o.partitions));
    std::vector<std::string> names;
    for (const LoadedSwitchConfig& sw : topo.switches) names.push_back(sw.config.name);
    Result<std::vector<uint32_t>> parts = AssignPartitions(names, topo.links, {}, o.partitions);
    if (!parts.ok()) return Status::Error("--partitions " + parts.message());
  }
  std::string csv;
  if (vm.count("csv")) {
    csv = vm["csv"].as<std::string>();
    SWEMU_RETURN_IF_ERROR(CheckOutputPath(csv, "--csv"));
  }
  // DLCP first, then the baselines in the order named.
  std::vector<DlcpScheme> order = {DlcpScheme::kDlcp};
  for (DlcpScheme s : *schemes) {
    if (s != DlcpScheme::kDlcp) order.push_back(s);
  }
  unsigned threads = 1;
  SWEMU_RETURN_IF_ERROR(opt::CheckThreads(vm, &threads));
  // The schemes are independent runs: at once on --threads, each into its own slot (DLCP, the
  // longest, starts first), read in order.
  using Clock = std::chrono::steady_clock;
  std::vector<Result<DlcpRunResult>> results(order.size(), Status::Error("not run"));
  std::vector<double> wall_s(order.size(), 0);
  // A run's CPU: its thread's; in partitions, the process's when the runs go one by one (else
  // not known: the partitions' threads are shared).
  const bool partitioned = o.partitions > 1;
  auto cpu_now = [&] {
    return partitioned ? static_cast<double>(std::clock()) / CLOCKS_PER_SEC : ThreadCpuSeconds();
  };
  RunIndependent(threads, order.size(), [&](std::size_t k) {
    const Clock::time_point t0 = Clock::now();
    const double c0 = cpu_now();
    results[k] = RunDlcpExperiment(o, topo, order[k]);
    if (results[k].ok() && (!partitioned || threads == 1)) results[k]->engine.cpu_s = cpu_now() - c0;
    wall_s[k] = std::chrono::duration<double>(Clock::now() - t0).count();
    return results[k].ok();
  });
  std::vector<DlcpRunResult> runs;
  std::vector<std::pair<const DlcpRunResult*, double>> walls;
  for (std::size_t k = 0; k < order.size(); ++k) {
    Result<DlcpRunResult>& r = results[k];
    if (!r.ok()) return Status::Error(std::string(DlcpSchemeLabel(order[k])) + " run: " + r.message());
    runs.push_back(std::move(*r));
  }
  std::vector<const DlcpRunResult*> all, baselines;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    all.push_back(&runs[k]);
    if (k != 0) baselines.push_back(&runs[k]);
    walls.push_back({&runs[k], wall_s[k]});
  }
  out << opt::AlphaLine(o.alpha)
      << FormatDlcpComparison(o, runs[0], baselines, vm.count("verbose") != 0);
  if (vm.count("engine-stats") != 0) out << FormatDlcpEngineStats(walls);
  if (!csv.empty()) {
    SWEMU_RETURN_IF_ERROR(WriteTextFile(csv, DlcpFlowsCsv(all), "--csv"));
    out << "wrote " << csv << "\n";
  }
  return Status::Ok();
}

po::options_description RealtimeOptions() {
  po::options_description options("swemu-dlcp realtime options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("senders", po::value<std::string>()->default_value("3"), "hosts sending one tensor each (1..8)")
      ("bytes", po::value<std::string>()->default_value("1MB"), "each sender's tensor")
      ("receiver-rate", po::value<std::string>()->default_value("1G"), "the receiver's port rate")
      ("host-rate", po::value<std::string>()->default_value("2G"), "the senders' line rate")
      ("bound", po::value<std::string>()->default_value("10%"), "DLCP's loss bound")
      ("out-dir", po::value<std::string>()->default_value("out/dlcp_realtime"), "configs, sockets and logs")
      ("verbose,v", "also print DPDK's routine log lines (telemetry, virtio_user's random MAC), here and in the switches' logs");
  // clang-format on
  return options;
}

int RunRealtimeCommand(int argc, char** argv) {
  po::variables_map vm;
  const int exit_now = ParseSubcommand("swemu-dlcp", "realtime", "[options]", RealtimeOptions(),
                                       argc, argv, &vm);
  if (exit_now >= 0) return exit_now;
  DlcpRealtimeOptions o;
  Status status = Status::Ok();
  Result<uint64_t> senders = ParseUint(vm["senders"].as<std::string>(), 1, 8);
  Result<uint64_t> bytes = ParseBytes(vm["bytes"].as<std::string>());
  Result<uint64_t> host = ParseRate(vm["host-rate"].as<std::string>());
  Result<uint64_t> recv = ParseRate(vm["receiver-rate"].as<std::string>());
  if (!senders.ok()) status = Status::Error("--senders: " + senders.message());
  else if (!bytes.ok()) status = Status::Error("--bytes: " + bytes.message());
  else if (!host.ok() || *host == 0) status = Status::Error("--host-rate: must be a rate > 0");
  else if (!recv.ok() || *recv == 0) status = Status::Error("--receiver-rate: must be a rate > 0");
  else status = Number(vm, "bound", &o.bound);
  if (!status.ok()) {
    std::cerr << "swemu-dlcp realtime: " << status.message() << "\n";
    return 2;
  }
  o.senders = static_cast<uint32_t>(*senders);
  o.bytes = *bytes / 4 * 4;
  o.host_bps = *host;
  o.receiver_rate = vm["receiver-rate"].as<std::string>();
  o.out_dir = vm["out-dir"].as<std::string>();
  o.verbose = vm.count("verbose") != 0;
  bool bad_input = false;
  status = RunDlcpRealtime(o, std::cout, &bad_input);
  if (!status.ok()) {
    std::cerr << "swemu-dlcp realtime: " << status.message() << "\n";
    return bad_input ? 2 : 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  const char* thresholds_usage =
      "[--model NAME | --layers FILE] [--theta T] [--load R] [--buffer BYTES] [options]";
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << "usage: swemu-dlcp COMMAND [options]   (COMMAND --help for its options)\n"
                 "  thresholds  Appendix B: per-queue S_i and L_i, and the commands installing them\n"
                 "  sim         the experiment in virtual time: DLCP against DCTCP, PIAS, pFabric\n"
                 "  realtime    an incast through a swemu child process on DPDK vdevs\n"
                 "  send        DLCP tensors to a receiver over kernel UDP\n"
                 "  recv        receive DLCP tensors over kernel UDP\n"
                 "example (ResNet-50, the paper's 512 KB per port, an incast at load 1.2):\n"
                 "  swemu-dlcp thresholds --model ResNet50 --buffer 512KB --load 1.2\n"
                 "every option: docs/cli.md\n";
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (command == "realtime") return RunRealtimeCommand(argc - 1, argv + 1);
  if (command == "send") return RunDlcpSendCommand(argc - 1, argv + 1);
  if (command == "recv") return RunDlcpRecvCommand(argc - 1, argv + 1);
  if (command != "sim" && command != "thresholds") {
    std::cerr << "swemu-dlcp: unknown command " << command
              << " (expected thresholds, sim, realtime, send or recv)\n";
    return 2;
  }
  const bool sim = command == "sim";
  po::variables_map vm;
  const int exit_now =
      ParseSubcommand("swemu-dlcp", command.c_str(), sim ? "[options]" : thresholds_usage,
                      sim ? SimOptions() : ThresholdOptions(), argc - 1, argv + 1, &vm);
  if (exit_now >= 0) return exit_now;
  const Status status = sim ? RunSim(vm, std::cout) : Run(vm, std::cout);
  if (!status.ok()) {
    std::cerr << "swemu-dlcp " << command << ": " << status.message() << "\n";
    // Thresholds fail only on input; a simulation also when a run cannot finish.
    const bool bad_input = !sim || status.message().starts_with("--") ||
                           status.message().starts_with("options: ");
    return bad_input ? 2 : 1;
  }
  return 0;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-dlcp", [&] { return swemu::Main(argc, argv); });
}
