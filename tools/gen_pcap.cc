// swemu-gen: writes pcaps with nanosecond timestamps for replay through swemu.
//   --workload flows (default): UDP or TCP flows (chosen MACs, IPs, ports, sizes, count, rate,
//                               seed); tools/gen/flows.cc
//   --workload atp:             one ATP job's gradient traffic as hostlib's workers send it, per
//                               worker link, optionally with background TCP flows;
//                               tools/gen/atp_gen.cc
// Frames come from the project's one definition of each header (FrameBuilder, hostlib's ATP
// frame code). Every option is in docs/cli.md ("swemu-gen").
#include <boost/program_options.hpp>
#include <iostream>
#include <string>

#include "tools/gen/atp_gen.h"
#include "tools/gen/background.h"
#include "tools/gen/flows.h"
#include "tools/gen/gen_common.h"
#include "tools/tool_main.h"

namespace swemu::gen {
namespace {

po::options_description CommonOptions() {
  po::options_description options("swemu-gen options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("workload", po::value<std::string>()->default_value("flows"), "flows or atp")
      ("out,o", po::value<std::string>()->value_name("FILE"),
       "pcap to write (required); with --workload atp, {w} in FILE writes one file per worker")
      ("rate", po::value<std::string>()->default_value("1G"),
       "flows: offered load; atp: each worker's link rate (bits/s of frame + 24 B on the wire)")
      ("start", po::value<std::string>()->default_value("1s"), "timestamp of the first packet")
      ("seed", po::value<std::string>()->default_value("1"),
       "flows: sizes and Poisson gaps; atp: the gradient values");
  // clang-format on
  return options;
}

po::options_description AllOptions() {
  po::options_description all;
  all.add(CommonOptions()).add(FlowsOptions()).add(AtpOptions()).add(BackgroundOptions());
  return all;
}

// An option of another workload, given by the user, is an error rather than ignored.
Status RefuseOthers(const po::variables_map& vm, const po::options_description& others,
                    const std::string& why) {
  for (const auto& option : others.options()) {
    if (Given(vm, option->long_name())) {
      return Status::Error("--" + option->long_name() + ": " + why);
    }
  }
  return Status::Ok();
}

Status Run(const po::variables_map& vm) {
  const std::string workload = Text(vm, "workload");
  if (workload != "flows" && workload != "atp") {
    return Status::Error("--workload " + workload + ": not flows/atp");
  }
  if (!vm.count("out")) return Status::Error("--out: required");
  SWEMU_RETURN_IF_ERROR(CheckOutputPath(Text(vm, "out"), "--out"));
  if (workload == "flows") {
    po::options_description atp;
    atp.add(AtpOptions()).add(BackgroundOptions());
    SWEMU_RETURN_IF_ERROR(RefuseOthers(vm, atp, "only with --workload atp"));
    return RunFlows(vm);
  }
  SWEMU_RETURN_IF_ERROR(RefuseOthers(vm, FlowsOptions(), "only with --workload flows"));
  return RunAtp(vm, std::cout);
}

int Main(int argc, char** argv) {
  po::variables_map vm;
  try {
    // No positional arguments: a stray word is an error naming it, not ignored.
    po::options_description parsed = AllOptions();
    parsed.add_options()("stray", po::value<std::vector<std::string>>());
    po::positional_options_description stray;
    stray.add("stray", -1);
    po::store(po::command_line_parser(argc, argv).options(parsed).positional(stray).run(), vm);
  } catch (const po::error& e) {
    std::cerr << "swemu-gen: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("stray") != 0) {
    std::cerr << "swemu-gen: unexpected argument '"
              << vm["stray"].as<std::vector<std::string>>().front()
              << "' (every option starts with - or --; see --help)\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "usage: swemu-gen --out FILE [options]\n"
                 "       swemu-gen --workload atp --out FILE [options]\n\n"
              << AllOptions()
              << "\nexamples:\n"
                 "  swemu-gen -o h0.pcap -n 1000 --dst-ip 10.0.1.2 --dst-mac 00:00:00:00:01:02 "
                 "--rate 1G\n"
                 "  swemu-gen -o mix.pcap -n 10000 --size 64-1500 --flows 8 --poisson --seed 3\n"
                 "  swemu-gen --workload atp --layers 2 --out /tmp/atp_w{w}.pcap\n"
                 "  swemu --offline --config configs/atp_rack.ini --in 0=/tmp/atp_w0.pcap "
                 "--in 1=/tmp/atp_w1.pcap \\\n"
                 "        --in 2=/tmp/atp_w2.pcap --in 3=/tmp/atp_w3.pcap --out-dir out/atp\n"
                 "  swemu-gen --workload atp --model vgg16 --layers 4 --iterations 2 --window 128 "
                 "--rtt 20us --rate 10G \\\n"
                 "            --background-flows 2 --background-rate 1G -o atp_all.pcap\n";
    return 0;
  }
  Status status = Run(vm);
  if (!status.ok()) {
    std::cerr << "swemu-gen: " << status.message() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace
}  // namespace swemu::gen

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-gen", [&] { return swemu::gen::Main(argc, argv); });
}
