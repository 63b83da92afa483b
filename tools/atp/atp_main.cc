// swemu-atp: ATP's end hosts (hostlib/atp) driving a job through swemu.
//   swemu-atp demo [options]                  real time: swemu on vhost ports, hosts over
//                                             virtio_user (the README's main job)
//   swemu-atp sim --topology T --job J [...]  the same job in virtual time (co-simulation)
// Every option is in docs/cli.md ("swemu-atp").
#include <boost/program_options.hpp>
#include <csignal>
#include <iostream>
#include <optional>
#include <string>

#include "hostlib/dpdk/dpdk_host.h"
#include "hostlib/workload/model_layers.h"
#include "pipeline/control/units.h"
#include "pipeline/core/output_files.h"
#include "tools/atp/atp_demo.h"
#include "tools/atp/atp_server.h"
#include "tools/atp/atp_sim.h"
#include "tools/option_values.h"
#include "tools/subcommand.h"
#include "tools/tool_main.h"

namespace po = boost::program_options;

namespace swemu {
namespace {

struct Common {
  std::string model = "ResNet50";
  uint32_t layers = 0;  // 0: all
  uint32_t iterations = 3;
  uint64_t seed = 1;
  uint32_t lanes = 2;
};

void AddCommon(po::options_description& desc, Common& c) {
  // clang-format off
  desc.add_options()
      ("model", po::value(&c.model)->default_value(c.model),
       "model whose layer sizes are all-reduced: ResNet50, VGG16, AlexNet")
      ("layers", po::value<std::string>()->default_value("0"), "only the first N layers (0: all)")
      ("iterations", po::value<std::string>()->default_value(std::to_string(c.iterations)),
       "iterations, each run with and without in-network aggregation")
      ("seed", po::value<std::string>()->default_value(std::to_string(c.seed)), "seed of the synthetic gradients")
      ("lanes", po::value<std::string>()->default_value(std::to_string(c.lanes)),
       "sender lanes (the paper's threads) per worker");
  // clang-format on
}

// Exit status 2 with one line for bad input; the caller prints it.
Result<WorkloadOptions> MakeWorkload(const Common& c) {
  auto model = BundledModel(c.model);
  if (!model.ok()) return Status::Error("--model: " + model.status().message());
  if (c.layers > model->layers.size()) {
    return Status::Error("--layers: " + c.model + " has " + std::to_string(model->layers.size()));
  }
  if (c.layers > 0) model->layers.resize(c.layers);
  if (c.iterations == 0) return Status::Error("--iterations must be at least 1");
  if (c.lanes == 0 || c.lanes > 64) return Status::Error("--lanes must be 1..64");
  WorkloadOptions w;
  w.model = std::move(*model);
  w.iterations = c.iterations;
  w.gradients.seed = c.seed;
  return w;
}

// --recovery, --timeout-rto and --congestion-control: how the workers recover and pace.
Status ReadRecovery(const po::variables_map& vm, AtpWorkerOptions* worker) {
  Result<bool> cc = ParseBool(vm["congestion-control"].as<std::string>());
  if (!cc.ok()) return Status::Error("--congestion-control: " + cc.status().message());
  worker->congestion_control = *cc;
  const std::string recovery = vm["recovery"].as<std::string>();
  if (recovery == "atp") return Status::Ok();
  if (recovery != "timeout") {
    return Status::Error("--recovery: '" + recovery + "' is neither atp nor timeout");
  }
  Result<uint64_t> rto = ParseDurationOption(vm["timeout-rto"].as<std::string>());
  if (!rto.ok() || *rto == 0) {
    return Status::Error("--timeout-rto: " +
                         (rto.ok() ? std::string("must be positive") : rto.status().message()));
  }
  worker->fast_retransmit = false;
  worker->tail_probe = false;
  worker->rto_ns = worker->min_rto_ns = worker->max_rto_ns = static_cast<TimeNs>(*rto);
  worker->max_adaptive_min_rto_ns = static_cast<TimeNs>(*rto);
  return Status::Ok();
}

int Usage(std::ostream& err) {
  err << "swemu-atp: usage: swemu-atp demo [options] | swemu-atp sim --topology FILE --job FILE "
         "[options] (swemu-atp demo --help)\n";
  return 2;
}

// swemu-atp --help: the commands, one example each.
void Help(std::ostream& out) {
  out << "usage: swemu-atp COMMAND [options]   (COMMAND --help for its options)\n"
         "  demo  real time: swemu on vhost ports, the hosts over virtio_user (the README's job)\n"
         "  sim   the same job in virtual time: a topology's switches and the hosts co-simulated\n"
         "  publish  a job for real servers: the switch's files and the job file, from a hosts list\n"
         "  worker   one worker of a published job on this server (kernel UDP sockets)\n"
         "  ps       the PS of a published job on this server (kernel UDP sockets)\n"
         "\nexamples:\n"
         "  swemu-atp demo                       the README's main job, 4 workers and a PS\n"
         "  swemu-atp sim --topology configs/atp_two_rack.topo \\\n"
         "      --job configs/atp_two_rack.job   the job on two racks, in virtual time\n"
         "every option: docs/cli.md\n";
}

void AddDemoOptions(po::options_description& desc, DemoOptions& demo) {
  // clang-format off
  desc.add_options()
      ("workers", po::value<std::string>()->default_value(std::to_string(demo.workers)), "workers (1..32)")
      ("racks", po::value<std::string>()->default_value(std::to_string(demo.racks)),
       "1: one swemu; 2: two switches in one swemu process joined by a ring link, the PS in "
       "rack 0")
      ("elements", po::value<std::string>()->default_value(std::to_string(demo.elements)),
       "int32 elements per packet")
      ("aggregators", po::value<std::string>()->default_value(std::to_string(demo.aggregators)),
       "aggregators in each switch")
      ("link-rate", po::value(&demo.link_rate)->default_value(demo.link_rate),
       "shaping rate of every switch port (10G, 500M, ...; 0: unshaped)")
      ("out-dir", po::value(&demo.out_dir)->default_value(demo.out_dir),
       "generated switch configs, scripts, logs and sockets")
      ("swemu", po::value(&demo.swemu_binary), "the swemu binary (default: ../swemu/swemu "
                                               "next to this one)")
      ("timeout", po::value<std::string>()->default_value("600"),
       "seconds a pass may take before the demo gives up")
      ("backoff", "swemu and the hosts back off when idle instead of busy polling "
                  "(for a machine with fewer than two free cores)")
      ("verbose,v", po::bool_switch(&demo.verbose),
       "also print DPDK's routine log lines (telemetry, virtio_user's random MAC), here and "
       "in the switches' logs")
      ("topology", po::value(&demo.topology),
       "run this topology file's switches (swemu processes on vhost-user, as swemu "
       "--backend processes) instead of --racks; with --job")
      ("job", po::value(&demo.job), "with --topology: the job file (hosts, ports, the job)");
  // clang-format on
}

void AddSimOptions(po::options_description& desc, SimOptions& sim) {
  // clang-format off
  desc.add_options()
      ("topology", po::value(&sim.topology)->required(), "topology file (configs/*.topo)")
      ("job", po::value(&sim.job)->required(), "job file (configs/*.job)")
      ("loss", po::value<std::string>(),
       "loss probability in [0, 1] on every host link (default: the topology's)")
      ("lossy-worker", po::value<std::string>(),
       "--loss on this worker's link only (its id: the job's worker order), as in ATP's "
       "Figure 7a")
      ("recovery", po::value<std::string>()->default_value("atp"),
       "atp: timeouts, out-of-order answers and tail probes; timeout: SwitchML's (a fixed "
       "timeout of --timeout-rto only)")
      ("timeout-rto", po::value<std::string>()->default_value("1ms"),
       "the fixed retransmission timeout of --recovery timeout")
      ("congestion-control", po::value<std::string>()->default_value("on"),
       "off: every window stays at its initial size (no ECN or loss back-off)")
      ("in-network-only", "skip the at-PS passes")
      ("out-dir", po::value(&sim.out_dir), "write counters.json here");
  // clang-format on
}

// demo's counts, and --topology/--job against the shape options they replace.
Status ReadDemoOptions(const po::variables_map& vm, DemoOptions& demo) {
  Status read = ReadUintOption(vm, "workers", 0, UINT32_MAX, &demo.workers);
  if (read.ok()) read = ReadUintOption(vm, "racks", 0, UINT32_MAX, &demo.racks);
  if (read.ok()) read = ReadUintOption(vm, "elements", 0, UINT32_MAX, &demo.elements);
  if (read.ok()) read = ReadUintOption(vm, "aggregators", 0, UINT32_MAX, &demo.aggregators);
  if (read.ok()) read = ReadDoubleOption(vm, "timeout", 1e-3, 86400, &demo.timeout_s);
  if (read.ok() && vm.count("topology") != vm.count("job")) {
    read = Status::Error("--topology and --job: give both or neither");
  }
  // The topology and job files replace them.
  if (read.ok()) {
    read =
        opt::RefuseWithTopology(vm, {"workers", "racks", "elements", "aggregators", "link-rate"});
  }
  return read;
}

// The examples `swemu-atp MODE --help` ends with.
const char* Examples(const std::string& mode) {
  return mode == "demo" ? "\nexamples:\n"
                          "  swemu-atp demo                          the README's main job\n"
                          "  swemu-atp demo --workers 4 --racks 2    two racks in one swemu\n"
                          "  swemu-atp demo --model VGG16 --iterations 1 --backoff\n"
                          "  swemu-atp demo --topology configs/atp_two_rack.topo "
                          "--job configs/atp_two_rack.job\n"
                        : "\nexamples:\n"
                          "  swemu-atp sim --topology configs/atp_two_rack.topo "
                          "--job configs/atp_two_rack.job\n"
                          "  swemu-atp sim --topology configs/atp_two_rack.topo "
                          "--job configs/atp_two_rack.job --loss 0.01 --layers 4\n";
}

// sim's --loss and --lossy-worker, how its workers recover, and --out-dir.
Status ReadSimOptions(const po::variables_map& vm, SimOptions& sim, AtpWorkerOptions* worker) {
  Status read;
  if (vm.count("loss")) {
    Result<double> loss = ParseProbability(vm["loss"].as<std::string>());
    if (loss.ok()) sim.host_loss = *loss;
    read = loss.ok() ? Status::Ok() : Status::Error("--loss: " + loss.status().message());
  }
  if (read.ok() && vm.count("lossy-worker")) {
    uint32_t lossy_worker = 0;
    read = ReadUintOption(vm, "lossy-worker", 0, 31, &lossy_worker);
    if (read.ok() && !vm.count("loss")) read = Status::Error("--lossy-worker needs --loss");
    sim.lossy_worker = static_cast<int>(lossy_worker);
  }
  if (read.ok()) read = ReadRecovery(vm, worker);
  if (read.ok() && !sim.out_dir.empty()) read = CheckOutputDirectory(sim.out_dir, "--out-dir");
  return read;
}

// The options every mode takes, then the mode's own.
Status ReadOptions(const po::variables_map& vm, const std::string& mode, Common& common,
                   DemoOptions& demo, SimOptions& sim, AtpWorkerOptions* worker) {
  // Counts as text: a negative value, NaN or one past the field is refused here.
  Status read = ReadUintOption(vm, "layers", 0, UINT32_MAX, &common.layers);
  if (read.ok()) read = ReadUintOption(vm, "iterations", 0, UINT32_MAX, &common.iterations);
  if (read.ok()) read = ReadUintOption(vm, "seed", 0, UINT64_MAX, &common.seed);
  if (read.ok()) read = ReadUintOption(vm, "lanes", 0, UINT32_MAX, &common.lanes);
  if (read.ok() && mode == "demo") read = ReadDemoOptions(vm, demo);
  if (read.ok() && mode == "sim") read = ReadSimOptions(vm, sim, worker);
  return read;
}

// Runs the job: demo in real time, sim in virtual time. Exit status 2 for bad input found on
// the way (a topology or job file), 1 for a run that failed.
int Run(const std::string& mode, WorkloadOptions workload, const AtpWorkerOptions& worker,
        DemoOptions& demo, SimOptions& sim) {
  Status status;
  bool bad_input = false;
  if (mode == "demo") {
    demo.workload = std::move(workload);
    demo.worker = worker;
    status = RunAtpDemo(demo, std::cout, &bad_input);
    DpdkHost::CleanupEal();
  } else {
    sim.workload = std::move(workload);
    sim.worker = worker;
    status = RunAtpSim(sim, std::cout, &bad_input);
  }
  if (!status.ok()) {
    std::cerr << "swemu-atp: " << status.message() << '\n';
    return bad_input ? 2 : 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  if (argc < 2) return Usage(std::cerr);
  const std::string mode = argv[1];
  if (mode == "--help" || mode == "-h") {
    Help(std::cout);
    return 0;
  }
  if (mode == "publish" || mode == "worker" || mode == "ps") return RunAtpServerCommand(argc, argv);
  if (mode != "demo" && mode != "sim") return Usage(std::cerr);

  Common common;
  DemoOptions demo;
  SimOptions sim;
  po::options_description desc("swemu-atp " + mode);
  desc.add_options()("help,h", "this help");
  AddCommon(desc, common);
  if (mode == "demo") {
    AddDemoOptions(desc, demo);
  } else {
    AddSimOptions(desc, sim);
  }
  po::variables_map vm;
  if (std::optional<int> done =
          StoreModeOptions("swemu-atp", argc, argv, desc, Examples(mode), &vm)) {
    return *done;
  }
  AtpWorkerOptions worker;
  Status read = ReadOptions(vm, mode, common, demo, sim, &worker);
  if (!read.ok()) {
    std::cerr << "swemu-atp: " << read.message() << '\n';
    return 2;
  }
  auto workload = MakeWorkload(common);
  if (!workload.ok()) {
    std::cerr << "swemu-atp: " << workload.status().message() << '\n';
    return 2;
  }
  // Checked here, before the demo writes its switch configs: swemu would refuse it only later.
  if (mode == "demo") {
    if (Result<uint64_t> rate = ParseRate(demo.link_rate); !rate.ok()) {
      std::cerr << "swemu-atp: --link-rate: " << rate.status().message() << '\n';
      return 2;
    }
  }
  if (vm.count("backoff")) demo.busy_poll = false;
  workload->at_ps_passes = vm.count("in-network-only") == 0;
  worker.lanes = common.lanes;
  return Run(mode, std::move(*workload), worker, demo, sim);
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a switch that goes away must not kill the hosts
  return swemu::RunToolMain("swemu-atp", [&] { return swemu::Main(argc, argv); });
}
