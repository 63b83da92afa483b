// swemu-pcn: PCN's host-side tools (subcommands in tools/pcn/pcn_commands.h). `threshold` computes the initial and the PCN ECN thresholds
// from a link (the paper's Eq. 1 and 2, hostlib/pcn/threshold.h) and the TOS byte of the
// PCN-START that announces the lower one (pipeline/wire/pcn.h).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include "hostlib/pcn/threshold.h"
#include "pipeline/control/units.h"
#include "pipeline/wire/pcn.h"
#include "tools/pcn/pcn_commands.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

po::options_description ThresholdOptions() {
  po::options_description options("swemu-pcn threshold options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("rtt", po::value<std::string>()->value_name("DURATION"), "round-trip time (required), e.g. 7690us")
      ("rate", po::value<std::string>()->value_name("BPS"), "bottleneck capacity in bits/s (required), e.g. 100M")
      ("flows", po::value<std::string>()->default_value("3"), "N, long-lived flows sharing it")
      ("mtu", po::value<std::string>()->default_value("1500"), "bytes per full packet (the paper gives none)")
      ("k", po::value<std::string>()->default_value("0.25"), "h_PCN = k * h_initial, 0 < k < 1");
  // clang-format on
  return options;
}

Status RunThreshold(const po::variables_map& vm, std::ostream& out) {
  if (!vm.count("rtt")) return Status::Error("--rtt: required");
  if (!vm.count("rate")) return Status::Error("--rate: required");
  PcnLink link;
  Result<uint64_t> rtt = ParseDurationOption(vm["rtt"].as<std::string>());
  if (!rtt.ok() || *rtt == 0) {
    return Status::Error("--rtt: " + (rtt.ok() ? std::string("must be > 0") : rtt.message()));
  }
  Result<uint64_t> rate = ParseRate(vm["rate"].as<std::string>());
  if (!rate.ok() || *rate == 0) {
    return Status::Error("--rate: " + (rate.ok() ? std::string("must be > 0") : rate.message()));
  }
  Result<uint64_t> flows = ParseUint(vm["flows"].as<std::string>(), 1, 1'000'000);
  if (!flows.ok()) return Status::Error("--flows: " + flows.message());
  Result<uint64_t> mtu = ParseUint(vm["mtu"].as<std::string>(), 64, 65535);
  if (!mtu.ok()) return Status::Error("--mtu: " + mtu.message());
  const std::string k_text = vm["k"].as<std::string>();
  char* end = nullptr;
  const double k = std::strtod(k_text.c_str(), &end);
  if (k_text.empty() || end != k_text.c_str() + k_text.size()) {
    return Status::Error("--k " + k_text + ": not a number");
  }
  link.rtt_s = static_cast<double>(*rtt) * 1e-9;
  link.capacity_Bps = static_cast<double>(*rate) / 8;
  link.long_flows = static_cast<uint32_t>(*flows);
  link.mtu_bytes = static_cast<uint32_t>(*mtu);
  Result<double> bound = PcnBound(link);
  if (!bound.ok()) return bound.status();
  const uint32_t h_initial = PcnInitialThreshold(*bound);
  Result<uint32_t> h_pcn = PcnThreshold(h_initial, k);
  if (!h_pcn.ok()) return Status::Error("--k: " + h_pcn.message());
  char line[256];
  std::snprintf(line, sizeof(line),
                "Eq. 1: RTT * C / (sqrt(N) * MTU) = %.0f B / (sqrt(%u) * %u B) = %.2f packets\n",
                link.rtt_s * link.capacity_Bps, link.long_flows, link.mtu_bytes, *bound);
  out << line;
  out << "h_initial = " << h_initial << " packets (the smallest multiple of 5 above the bound)\n";
  std::snprintf(line, sizeof(line),
                "h_PCN = k * h_initial = %g * %u = %.2f -> %u packets (a multiple of 5, 5..75)\n", k,
                h_initial, k * h_initial, *h_pcn);
  out << line;
  std::snprintf(line, sizeof(line), "PCN-START TOS: 0x%02X with ECT(0), 0x%02X with ECT(1)\n",
                PcnTos{true, false, *h_pcn}.Encode(kEcnEct0),
                PcnTos{true, false, *h_pcn}.Encode(kEcnEct1));
  out << line;
  return Status::Ok();
}

}  // namespace

int RunThresholdCommand(int argc, char** argv) {
  po::variables_map vm;
  const int exit_now = ParsePcnSubcommand(
      "threshold", "--rtt DURATION --rate BPS [options]", ThresholdOptions(), argc, argv, &vm);
  if (exit_now >= 0) return exit_now;
  Status status = RunThreshold(vm, std::cout);
  if (!status.ok()) {
    std::cerr << "swemu-pcn threshold: " << status.message() << "\n";
    return 2;
  }
  return 0;
}

namespace {

int Main(int argc, char** argv) {
  const std::string usage =
      "usage: swemu-pcn COMMAND [options]   (COMMAND --help lists its options)\n"
      "  threshold  the initial and PCN ECN thresholds of a link (Eq. 1 and 2)\n"
      "  sim        the paper's experiment in virtual time, without and with PCN\n"
      "  ddl        a DDL worker in real time: announced bursts over kernel TCP\n"
      "  ps         the PS in real time: answers STARTs, receives bursts\n";
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << usage
              << "\nexamples:\n"
                 "  swemu-pcn threshold --rtt 7690us --rate 100M --flows 3 --mtu 1500 --k 0.25\n"
                 "  swemu-pcn sim --out /tmp/pcn-sim\n"
                 "  swemu-pcn sim --topology configs/pcn_experiment.topo\n"
                 "every option: docs/cli.md\n";
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (command == "threshold") return RunThresholdCommand(argc - 1, argv + 1);
  if (command == "sim") return RunSimCommand(argc - 1, argv + 1);
  if (command == "ddl") return RunDdlCommand(argc - 1, argv + 1);
  if (command == "ps") return RunPsCommand(argc - 1, argv + 1);
  std::cerr << "swemu-pcn: unknown command " << command
            << " (expected threshold, sim, ddl or ps)\n";
  return 2;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-pcn", [&] { return swemu::Main(argc, argv); });
}
