// `swemu-pcn sim`: the paper's experiment in virtual time (hostlib/pcn/experiment.h), run twice
// from the same seed, without and with PCN, printed side by side with the paper's figures; on
// the default network or a topology file's (--topology, hostlib/pcn/network.h).
#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "hostlib/pcn/experiment.h"
#include "pipeline/control/units.h"
#include "pipeline/core/independent_runs.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "tools/option_values.h"
#include "tools/pcn/pcn_commands.h"

namespace swemu {
namespace {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;

po::options_description SimOptions() {
  po::options_description options("swemu-pcn sim options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("out", po::value<std::string>()->value_name("DIR"), "write without/ and with/ (telemetry.csv and summary.json each) and comparison.txt here (made if missing)")
      ("topology", po::value<std::string>()->value_name("FILE"), "run on this topology's network (hosts with role=ps, worker, background) instead of the default shape (configs/pcn_experiment.topo)")
      ("cc", po::value<std::string>()->default_value("reno"), "senders' congestion control: reno or dctcp")
      ("rate", po::value<std::string>()->default_value("100M"), "bottleneck toward the PS, bits/s")
      ("edge-rate", po::value<std::string>()->default_value("1G"), "leaf uplinks and host NICs, bits/s")
      ("rtt", po::value<std::string>()->default_value("7690us"), "propagation round trip host - PS")
      ("queue", po::value<std::string>()->default_value("60"), "the bottleneck queue's capacity, packets")
      ("initial", po::value<std::string>()->default_value("40"), "initial ECN threshold, packets")
      ("threshold", po::value<std::string>()->default_value("10"), "the threshold STARTs announce (multiple of 5)")
      ("background", po::value<std::string>()->default_value("3"), "background hosts per leaf")
      ("workers", po::value<std::string>()->default_value("2"), "DDL workers, spread over the leaves")
      ("duration", po::value<std::string>()->default_value("100s"), "length of the run (background flows)")
      ("ddl-start", po::value<std::string>()->default_value("20s"), "when the first burst is announced")
      ("idle", po::value<std::string>()->default_value("7s"), "network-idle period after each burst")
      ("iterations", po::value<std::string>()->default_value("6"), "bursts per worker")
      ("burst", po::value<std::string>()->default_value("500KB"), "bytes per worker and burst")
      ("burst-rate", po::value<std::string>()->default_value("30M"), "each worker's burst rate limit, bits/s (iperf3 -b); 0: the NIC's")
      ("lead", po::value<std::string>()->default_value("40ms"), "least time from a START to its burst, ACK or not (0: on the ACK)")
      ("min-rto", po::value<std::string>()->default_value("200ms"), "senders' minimum retransmission timeout")
      ("seed", po::value<std::string>()->default_value("1"), "seed of the run")
      ("alpha", po::value<std::string>()->value_name("VALUE"), "dynamic thresholds: [tm] alpha on every switch (1/8, 2^-3, 0.125); without: the static shared buffer");
  // clang-format on
  opt::AddThreadsOption(options, "the two runs (without and with PCN)");
  return options;
}

Status ParseSim(const po::variables_map& vm, PcnExperimentOptions* o) {
  if (!ParseCongestionControl(Text(vm, "cc"), &o->cc)) {
    return Status::Error("--cc " + Text(vm, "cc") + ": expected reno or dctcp");
  }
  auto positive = [&](const char* name, Result<uint64_t> r, uint64_t* out) -> Status {
    SWEMU_RETURN_IF_ERROR(Check(name, r, out));
    if (*out == 0) return Status::Error(std::string("--") + name + ": must be > 0");
    return Status::Ok();
  };
  uint64_t v = 0;
  SWEMU_RETURN_IF_ERROR(positive("rate", ParseRate(Text(vm, "rate")), &o->bottleneck_bps));
  SWEMU_RETURN_IF_ERROR(positive("edge-rate", ParseRate(Text(vm, "edge-rate")), &o->edge_bps));
  SWEMU_RETURN_IF_ERROR(positive("rtt", ParseDurationOption(Text(vm, "rtt")), &v));
  o->rtt_ns = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "queue", 1, 1 << 20, &v));
  o->queue_pkts = static_cast<uint32_t>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "initial", 1, 1 << 20, &v));
  o->initial_threshold = static_cast<uint32_t>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "threshold", 0, 75, &v));
  o->pcn_threshold = static_cast<uint32_t>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "background", 0, 64, &v));
  o->background_per_leaf = static_cast<uint32_t>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "workers", 1, 64, &v));
  o->workers = static_cast<uint32_t>(v);
  SWEMU_RETURN_IF_ERROR(positive("duration", ParseDurationOption(Text(vm, "duration")), &v));
  o->duration_ns = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(Check("ddl-start", ParseDurationOption(Text(vm, "ddl-start")), &v));
  o->ddl_start_ns = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(Check("idle", ParseDurationOption(Text(vm, "idle")), &v));
  o->idle_ns = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "iterations", 1, 10'000, &v));
  o->iterations = static_cast<uint32_t>(v);
  SWEMU_RETURN_IF_ERROR(positive("burst", ParseBytes(Text(vm, "burst")), &o->burst_bytes));
  SWEMU_RETURN_IF_ERROR(Check("burst-rate", ParseRate(Text(vm, "burst-rate")), &o->burst_rate_bps));
  SWEMU_RETURN_IF_ERROR(Check("lead", ParseDurationOption(Text(vm, "lead")), &v));
  o->lead_ns = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(positive("min-rto", ParseDurationOption(Text(vm, "min-rto")), &v));
  o->min_rto_ns = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &o->seed));
  return o->Validate();
}

// The network: the topology file's (refused with a shape option, which its switches, links and
// hosts replace), else the default shape.
Result<PcnNetwork> LoadNetwork(const po::variables_map& vm, const PcnExperimentOptions& o) {
  if (!vm.count("topology")) return DefaultPcnNetwork(o);
  SWEMU_RETURN_IF_ERROR(
      opt::RefuseWithTopology(vm, {"rate", "edge-rate", "rtt", "queue", "background", "workers"}));
  Result<TopologyConfig> topo = LoadTopology(Text(vm, "topology"));
  if (!topo.ok()) return Status::Error("--topology " + topo.message());
  Result<PcnNetwork> net = PcnNetworkFromTopology(std::move(*topo));
  if (!net.ok()) return Status::Error("--topology " + net.message());
  Status built = CheckPcnNetwork(o, *net);
  if (!built.ok()) return Status::Error("--topology " + Text(vm, "topology") + ": " + built.message());
  return net;
}

// The output directory and its two run directories: refused when one is something else.
Status CheckOut(const std::string& dir) {
  for (const std::string& d : {dir, dir + "/without", dir + "/with"}) {
    SWEMU_RETURN_IF_ERROR(CheckOutputDirectory(d, "--out"));
  }
  return Status::Ok();
}

}  // namespace

int RunSimCommand(int argc, char** argv) {
  po::variables_map vm;
  const int exit_now = ParsePcnSubcommand("sim", "[--out DIR] [options]", SimOptions(), argc, argv, &vm);
  if (exit_now >= 0) return exit_now;
  PcnExperimentOptions o;
  double alpha = 0;
  Status status = ParseSim(vm, &o);
  if (status.ok()) status = opt::CheckAlpha(vm, &alpha);
  unsigned threads = 1;
  if (status.ok()) status = opt::CheckThreads(vm, &threads);
  Result<PcnNetwork> net = Status::Error("not loaded");
  if (status.ok()) {
    net = LoadNetwork(vm, o);
    status = net.status();
  }
  if (status.ok() && alpha != 0) {
    for (LoadedSwitchConfig& sw : net->topo.switches) sw.config.tm.queue.alpha = alpha;
  }
  std::string out;
  if (status.ok() && vm.count("out")) {
    out = vm["out"].as<std::string>();
    status = CheckOut(out);
  }
  if (!status.ok()) {
    std::cerr << "swemu-pcn sim: " << status.message() << "\n";
    return 2;
  }
  // Every file is written aside and moved into place once both runs and all files are done:
  // a run that fails leaves an earlier run's files as they were.
  OutputFiles files;
  auto path = [&](int pcn, const char* name) {
    return out + (pcn ? "/with/" : "/without/") + name;
  };
  // The two runs are independent: at once on --threads, each with its own options and slot.
  Result<PcnRunResult> results[2] = {Status::Error("not run"), Status::Error("not run")};
  PcnExperimentOptions run_options[2] = {o, o};
  for (int pcn = 0; pcn < 2; ++pcn) {
    run_options[pcn].telemetry_path = out.empty() ? "" : files.Aside(path(pcn, "telemetry.csv"));
  }
  RunIndependent(threads, 2, [&](std::size_t pcn) {
    results[pcn] = RunPcnExperiment(run_options[pcn], *net, pcn == 1);
    return results[pcn].ok();
  });
  PcnRunResult runs[2];
  for (int pcn = 0; pcn < 2; ++pcn) {
    Result<PcnRunResult>& r = results[pcn];
    if (!r.ok()) {
      // The telemetry file that cannot be written (a full disk) is --out's: the user's to fix.
      std::string why = files.Unstaged(r.status()).message();
      if (why.rfind("--telemetry ", 0) == 0) {
        std::cerr << "swemu-pcn sim: --out " << why.substr(12) << "\n";
        return 2;
      }
      std::cerr << "swemu-pcn sim: " << (pcn ? "with" : "without") << " PCN: " << why << "\n";
      return 1;
    }
    runs[pcn] = *r;
  }
  const std::string table = opt::AlphaLine(alpha) + FormatPcnComparison(o, runs[0], runs[1]);
  if (!out.empty()) {
    status = files.WriteText(out + "/comparison.txt", table);
    for (int pcn = 0; pcn < 2 && status.ok(); ++pcn) {
      status = files.WriteText(path(pcn, "summary.json"), PcnRunJson(runs[pcn]) + "\n");
    }
    if (status.ok()) status = files.Commit();
    if (!status.ok()) {  // an output that cannot be written is the user's to fix: status 2
      std::cerr << "swemu-pcn sim: --out " << files.Unstaged(status).message() << "\n";
      return 2;
    }
  }
  std::cout << table;
  if (!out.empty()) {
    std::cout << "wrote " << out << "/{without,with}/{telemetry.csv,summary.json}, "
              << out << "/comparison.txt\n";
  }
  return 0;
}

}  // namespace swemu
