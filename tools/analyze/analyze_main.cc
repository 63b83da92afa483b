// swemu-analyze: looks inside captures of swemu runs. Decodes every frame (Ethernet, 802.1Q,
// IPv4, UDP, TCP and swemu's program headers), summarises per flow and per protocol object,
// and writes time series of per-port throughput and queue depth as CSV, JSON, or a plot.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "pipeline/control/units.h"
#include "pipeline/core/output_files.h"
#include "tools/analyze/run_analysis.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {
namespace po = boost::program_options;
namespace fs = std::filesystem;

constexpr std::size_t kMaxBins = 10'000'000;
constexpr std::size_t kAutoBins = 200;
constexpr const char* kPython = "/usr/bin/python3";

po::options_description Options() {
  po::options_description options("swemu-analyze options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("csv", po::value<std::string>()->value_name("DIR"),
       "write throughput.csv, queue.csv, flows.csv and each protocol's tables into DIR")
      ("json", po::value<std::string>()->value_name("FILE"),
       "write the summary as JSON to FILE ('-': standard output, instead of the text)")
      ("plot", po::value<std::string>()->value_name("FILE.png"),
       "draw throughput and queue depth over time, one column per run (python3-matplotlib)")
      ("packets", po::value<std::string>()->value_name("FILE"),
       "write every frame's decoded fields as CSV, one row per frame")
      ("bin", po::value<std::string>()->value_name("DURATION"),
       "time-series bin, e.g. 100us (default: the longest run's span / 200, rounded to 1-2-5)")
      ("udp-port", po::value<std::vector<std::string>>()->value_name("PROTO=PORT"),
       "decode UDP destination PORT as PROTO (repeatable; default atp=9000)")
      ("top", po::value<std::string>()->default_value("20"), "flows listed in the text summary");
  // clang-format on
  for (const ProtocolEntry& entry : Protocols()) entry.add_options(options);
  return options;
}

struct Settings {
  std::vector<std::string> inputs;
  std::string csv_dir, json, plot, packets;
  TimeNs bin_ns = 0;  // 0: automatic
  std::size_t top = 20;
  PortMap ports;
};

Status ParseSettings(const po::variables_map& vm, Settings& s) {
  if (!vm.count("input")) return Status::Error("give one or more pcaps or run directories");
  s.inputs = vm["input"].as<std::vector<std::string>>();
  if (vm.count("csv")) s.csv_dir = vm["csv"].as<std::string>();
  if (vm.count("json")) s.json = vm["json"].as<std::string>();
  if (vm.count("plot")) s.plot = vm["plot"].as<std::string>();
  if (vm.count("packets")) s.packets = vm["packets"].as<std::string>();
  for (const char* option : {"csv", "json", "plot", "packets"}) {
    if (vm.count(option) && vm[option].as<std::string>().empty()) {
      return Status::Error(std::string("--") + option + ": an empty path");
    }
  }
  if (vm.count("bin")) {
    Result<uint64_t> bin = ParseDurationOption(vm["bin"].as<std::string>());
    if (!bin.ok() || *bin == 0) {
      return Status::Error("--bin: " + (bin.ok() ? std::string("must be > 0") : bin.message()));
    }
    s.bin_ns = *bin;
  }
  Result<uint64_t> top = ParseUint(vm["top"].as<std::string>(), 0, 1'000'000);
  if (!top.ok()) return Status::Error("--top: " + top.message());
  s.top = *top;
  for (const ProtocolEntry& entry : Protocols()) {
    if (entry.default_udp_port == 0) continue;  // it sets its port with its own option
    s.ports.emplace_back(entry.default_udp_port, std::string(entry.name));
  }
  if (vm.count("udp-port")) {
    for (const std::string& text : vm["udp-port"].as<std::vector<std::string>>()) {
      const std::size_t eq = text.find('=');
      const std::string name = text.substr(0, eq);
      const ProtocolEntry* known = nullptr;
      for (const ProtocolEntry& entry : Protocols()) {
        if (entry.name == name) known = &entry;
      }
      Result<uint64_t> port = eq == std::string::npos ? Status::Error("expected PROTO=PORT")
                                                      : ParseUint(text.substr(eq + 1), 1, 65535);
      if (known == nullptr) {
        return Status::Error("--udp-port " + text + ": unknown protocol " + name);
      }
      if (known->default_udp_port == 0) {
        return Status::Error("--udp-port " + text + ": " + name +
                             " is read on the port of its own option (--" + name + "-port)");
      }
      if (!port.ok()) return Status::Error("--udp-port " + text + ": " + port.message());
      // The given port replaces the protocol's default one.
      std::erase_if(s.ports, [&](const auto& p) { return p.second == name; });
      s.ports.emplace_back(static_cast<uint16_t>(*port), name);
    }
  }
  return Status::Ok();
}

// 1, 2 or 5 times a power of ten, at least `ns`.
TimeNs RoundBin(TimeNs ns) {
  TimeNs decade = 1;
  while (decade * 10 <= ns) decade *= 10;
  for (TimeNs m : {1, 2, 5, 10}) {
    if (decade * m >= ns) return decade * m;
  }
  return decade * 10;
}

// The plot script beside the sources (or where SWEMU_PLOT_SCRIPT says).
std::string PlotScript() {
  if (const char* env = std::getenv("SWEMU_PLOT_SCRIPT")) return env;
  return SWEMU_TOOLS_DIR "/plot_run.py";
}

Status CheckPlotter() {
  const std::string script = PlotScript();
  if (access(script.c_str(), R_OK) != 0) return Status::Error("--plot: " + script + " is missing");
  const std::string probe = std::string(kPython) + " -c 'import matplotlib' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) {
    return Status::Error("--plot: " + std::string(kPython) +
                         " cannot import matplotlib (apt-get install python3-matplotlib)");
  }
  return Status::Ok();
}

// Draws into `png` (the aside name of `asked`, whose extension names the format); the script
// draws each throughput bin of `bin` ns to its end.
Status RunPlot(const std::string& csv_dir, const std::string& png, const std::string& asked,
               TimeNs bin) {
  std::string format = fs::path(asked).extension().string();
  format = format.empty() ? "png" : format.substr(1);
  const std::string bin_ns = std::to_string(bin);
  const pid_t pid = fork();
  if (pid < 0) return Status::Error(std::string("--plot: fork: ") + std::strerror(errno));
  if (pid == 0) {
    const std::string script = PlotScript();
    execl(kPython, kPython, script.c_str(), csv_dir.c_str(), png.c_str(), format.c_str(),
          bin_ns.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Error("--plot: the plot script failed (its message is above)");
  }
  return Status::Ok();
}

// Every CSV written into the staging directory is moved into DIR when the run commits.
Status MoveCsvsIntoPlace(OutputFiles& files, const std::string& dir, const std::string& staging) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(staging, error)) {
    Result<std::string> staged = files.Staged(dir, entry.path().filename().string());
    if (!staged.ok()) return Status::Error("--csv " + staged.message());
  }
  if (error) return Status::Error("--csv " + dir + ": " + error.message());
  return Status::Ok();
}

// "-" is standard output; everything else goes through OutputFiles.
Status CheckOutputFile(const std::string& option, const std::string& path) {
  if (path == "-") return Status::Ok();
  return CheckOutputPath(path, option);
}

Status Analyze(const Settings& s, const po::variables_map& vm) {
  // Everything is checked before any output is written.
  std::vector<RunInput> inputs;
  for (const std::string& path : s.inputs) {
    Result<RunInput> input = ScanRunInput(path);
    if (!input.ok()) return input.status();
    inputs.push_back(std::move(*input));
  }
  TimeNs bin = s.bin_ns;
  TimeNs longest = 0;
  for (const RunInput& in : inputs) longest = std::max(longest, in.last_ns - in.first_ns);
  if (bin == 0) bin = RoundBin(std::max<TimeNs>(longest / kAutoBins, 1000));
  if (longest / bin + 1 > kMaxBins) {
    return Status::Error("--bin: " + std::to_string(bin) + " ns makes " +
                         std::to_string(longest / bin + 1) + " bins over " +
                         std::to_string(longest) + " ns (at most 10000000)");
  }
  if (!s.plot.empty()) {
    SWEMU_RETURN_IF_ERROR(CheckOutputFile("--plot", s.plot));
    SWEMU_RETURN_IF_ERROR(CheckPlotter());
  }
  if (!s.json.empty()) SWEMU_RETURN_IF_ERROR(CheckOutputFile("--json", s.json));
  if (!s.packets.empty()) SWEMU_RETURN_IF_ERROR(CheckOutputFile("--packets", s.packets));
  std::vector<std::unique_ptr<RunAnalysis>> runs;
  for (RunInput& in : inputs) {
    Result<std::unique_ptr<RunAnalysis>> run = RunAnalysis::Make(std::move(in), s.ports, vm);
    if (!run.ok()) return run.status();
    runs.push_back(std::move(*run));
  }
  if (!s.csv_dir.empty()) SWEMU_RETURN_IF_ERROR(CheckOutputDirectory(s.csv_dir, "--csv"));

  // Every output is written aside and moved into place only once all are complete.
  OutputFiles files;
  std::ofstream packets;
  if (!s.packets.empty()) {
    packets.open(s.packets == "-" ? "/dev/stdout" : files.Aside(s.packets));
    if (!packets) return Status::Error("--packets " + s.packets + ": cannot write");
    packets << PacketsCsvHeader() << "\n";
  }
  for (auto& run : runs) {
    SWEMU_RETURN_IF_ERROR(run->Analyze(bin, s.top, s.packets.empty() ? nullptr : &packets));
  }
  if (!s.packets.empty()) {
    packets.close();
    if (!packets) return Status::Error("--packets " + s.packets + ": write failed");
  }
  for (const auto& run : runs) {
    for (const PcapSpan& span : run->input().pcaps) {
      if (!span.truncated.empty()) {
        std::cerr << "swemu-analyze: warning: " << span.truncated << " (read up to there)\n";
      }
    }
  }
  if (s.json != "-") {
    for (const auto& run : runs) run->WriteText(std::cout, s.top);
  }
  if (!s.json.empty()) {
    JsonWriter json;
    json.BeginObject().Uint("bin_ns", bin).BeginArray("runs");
    for (const auto& run : runs) run->WriteJson(json);
    json.EndArray().EndObject();
    if (s.json == "-") {
      std::cout << json.str() << "\n";
    } else {
      std::ofstream out(files.Aside(s.json));
      out << json.str() << "\n";
      out.close();
      if (!out) return Status::Error("--json " + s.json + ": cannot write");
    }
  }
  std::string csv_dir = s.csv_dir;
  std::string temp_dir;
  if (csv_dir.empty() && !s.plot.empty()) {
    char pattern[] = "/tmp/swemu-analyze-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return Status::Error("--plot: cannot make a temporary dir");
    csv_dir = temp_dir = pattern;
  }
  Status status;
  if (!s.csv_dir.empty()) {
    // Into the staging directory: the CSVs of this run replace the earlier ones all at once.
    Result<std::string> staging = files.StagingDirectory(s.csv_dir);
    if (!staging.ok()) return Status::Error("--csv " + staging.message());
    csv_dir = *staging;
  }
  if (!csv_dir.empty()) {
    for (std::size_t i = 0; i < runs.size() && status.ok(); ++i) {
      status = files.Unstaged(runs[i]->WriteCsv(csv_dir, i == 0));
    }
  }
  if (status.ok() && !s.plot.empty()) status = RunPlot(csv_dir, files.Aside(s.plot), s.plot, bin);
  if (status.ok() && !s.csv_dir.empty()) status = MoveCsvsIntoPlace(files, s.csv_dir, csv_dir);
  if (status.ok()) status = files.Commit();
  if (!temp_dir.empty()) fs::remove_all(temp_dir);
  return status;
}

int Main(int argc, char** argv) {
  po::options_description visible = Options();
  po::options_description all = visible;
  all.add_options()("input", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "swemu-analyze: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "usage: swemu-analyze [options] INPUT...\n"
                 "INPUT: a pcap or pcapng file, or a run's directory (its *.pcap files are its\n"
                 "ports; its telemetry.csv, from swemu --telemetry, gives queue depth). Each\n"
                 "INPUT is one run; several are compared side by side.\n\n"
              << visible
              << "\nexamples:\n"
                 "  swemu-analyze out/run1\n"
                 "  swemu-analyze out/ecn_on out/ecn_off --plot cmp.png --csv cmp/\n"
                 "  swemu-analyze capture.pcap --packets rows.csv --udp-port atp=9100\n"
                 "every option: docs/cli.md\n";
    return 0;
  }
  Settings settings;
  Status status = ParseSettings(vm, settings);
  if (status.ok()) status = Analyze(settings, vm);
  if (!status.ok()) {
    std::cerr << "swemu-analyze: " << status.message() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-analyze", [&] { return swemu::Main(argc, argv); });
}
