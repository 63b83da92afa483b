#include "tools/gen/atp_gen.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hostlib/atp/job_config.h"
#include "hostlib/atp/worker.h"
#include "hostlib/workload/model_layers.h"
#include "pipeline/control/units.h"
#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/atp.h"
#include "tools/gen/atp_stream.h"
#include "tools/gen/background.h"
#include "tools/gen/link.h"

namespace swemu::gen {
namespace {

constexpr std::string_view kWorkerToken = "{w}";
constexpr const char* kTimeAdvice = "lower --start or --iterations, or raise --rate";

struct AtpGenSpec {
  std::string out;  // with {w}: one file per worker
  bool split = false;
  AtpJobConfig job;
  ModelLayers model;
  uint32_t model_layers = 0;  // the whole model's, before --layers
  std::vector<AtpCall> calls;
  uint64_t packets_per_iteration = 0;
  uint32_t iterations = 1;
  uint32_t window = 64;
  TimeNs rtt_ns = 50'000;
  TimeNs start_ns = 1'000'000'000;
  uint64_t rate_bps = 1'000'000'000;
  uint64_t seed = 1;
  BackgroundSpec background;
};

// configs/atp_rack.cli's hosts: worker w at 10.0.0.w with MAC 02:00:00:00:00:<w in hex>.
AtpHost WorkerHost(uint32_t w) {
  AtpHost host;
  host.name = "w" + std::to_string(w);
  host.mac = MacAddr::FromU64(0x020000000000ULL | w);
  host.ip = MakeIpv4Addr(10, 0, 0, static_cast<uint8_t>(w + 1));  // 10.0.0.0 names the network
  host.rack = "rack0";
  return host;
}

std::string WorkerPath(const std::string& out, uint32_t w) {
  std::string path = out;
  for (std::size_t at = path.find(kWorkerToken); at != std::string::npos;
       at = path.find(kWorkerToken, at)) {
    path.replace(at, kWorkerToken.size(), std::to_string(w));
  }
  return path;
}

Status FillModel(const po::variables_map& vm, AtpGenSpec& spec) {
  const std::string name = Text(vm, "model");
  Result<ModelLayers> model = BundledModel(name);
  if (!model.ok()) return Status::Error("--model " + name + ": " + model.message());
  spec.model = std::move(*model);
  spec.model_layers = static_cast<uint32_t>(spec.model.layers.size());
  const std::string layers = Text(vm, "layers");
  if (layers != "all") {
    Result<uint64_t> n = ParseUint(layers, 1, spec.model_layers);
    if (!n.ok()) {
      return Status::Error("--layers " + layers + ": expected all or 1.." +
                           std::to_string(spec.model_layers) + " (" + spec.model.model + " has " +
                           std::to_string(spec.model_layers) + " layers)");
    }
    spec.model.layers.resize(*n);
  }
  return Status::Ok();
}

Status FillJob(const po::variables_map& vm, AtpGenSpec& spec) {
  uint64_t workers = 0, job = 0, elements = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "workers", 1, kAtpMaxWorkers, &workers));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "job", 1, 65535, &job));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "elements", 1, kAtpMaxElementsPerMtu, &elements));
  AtpJobSpec job_spec;
  job_spec.job_id = static_cast<uint16_t>(job);
  job_spec.elements = static_cast<uint16_t>(elements);
  job_spec.group_ip = MakeIpv4Addr(239, 1, 0, 1);
  job_spec.ps.name = "ps";
  job_spec.ps.rack = "rack0";  // one rack: every worker under the PS's switch
  SWEMU_RETURN_IF_ERROR(Check("ps-ip", ParseIpv4(Text(vm, "ps-ip")), &job_spec.ps.ip));
  SWEMU_RETURN_IF_ERROR(Check("ps-mac", ParseMac(Text(vm, "ps-mac")), &job_spec.ps.mac));
  for (uint32_t w = 0; w < workers; ++w) {
    AtpHost host = WorkerHost(w);
    if (host.ip == job_spec.ps.ip || host.mac == job_spec.ps.mac) {
      return Status::Error("--workers " + std::to_string(workers) + ": worker " +
                           std::to_string(w) + " (" + FormatIpv4(host.ip) + ", " +
                           FormatMac(host.mac) + ") would share the PS's address (" +
                           FormatIpv4(job_spec.ps.ip) + ", " + FormatMac(job_spec.ps.mac) +
                           "); move the PS with --ps-ip and --ps-mac");
    }
    job_spec.workers.push_back(std::move(host));
  }
  Result<AtpJobConfig> config = MakeAtpJobConfig(job_spec);
  if (!config.ok()) return config.status();
  spec.job = std::move(*config);
  return Status::Ok();
}

Status FillSpec(const po::variables_map& vm, AtpGenSpec& spec) {
  spec.out = Text(vm, "out");
  spec.split = spec.out.find(kWorkerToken) != std::string::npos;
  SWEMU_RETURN_IF_ERROR(FillJob(vm, spec));
  SWEMU_RETURN_IF_ERROR(FillModel(vm, spec));
  uint64_t value = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "iterations", 1, 1'000'000, &value));
  spec.iterations = static_cast<uint32_t>(value);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "window", 1, 1'000'000, &value));
  spec.window = static_cast<uint32_t>(value);
  SWEMU_RETURN_IF_ERROR(Check("rtt", ParseDurationOption(Text(vm, "rtt")), &spec.rtt_ns));
  SWEMU_RETURN_IF_ERROR(Check("rate", ParseRate(Text(vm, "rate")), &spec.rate_bps));
  if (spec.rate_bps == 0) return Status::Error("--rate: must be > 0");
  SWEMU_RETURN_IF_ERROR(Check("start", ParseDurationOption(Text(vm, "start")), &spec.start_ns));
  SWEMU_RETURN_IF_ERROR(Check("seed", ParseUint(Text(vm, "seed")), &spec.seed));
  SWEMU_RETURN_IF_ERROR(FillBackgroundSpec(vm, spec.background));
  spec.calls = AtpCallsOfIteration(spec.model, spec.job.spec.elements);
  spec.packets_per_iteration = AtpPacketsOf(spec.calls);
  // AtpWorker numbers a job's packets with 32-bit seqs; past 2^32 they would repeat.
  if (spec.packets_per_iteration * spec.iterations > (uint64_t{1} << 32)) {
    return Status::Error("--iterations " + std::to_string(spec.iterations) + ": " +
                         std::to_string(spec.packets_per_iteration * spec.iterations) +
                         " packets per worker, more than 2^32 seqs");
  }
  return Status::Ok();
}

// Worker w's link: its gradients and its background flows, into `path`.
Result<LinkTotals> WriteLink(const AtpGenSpec& spec, uint32_t w, const std::string& path,
                             const std::string& name) {
  AtpStreamConfig config;
  config.job = &spec.job;
  config.model = &spec.model;
  config.calls = &spec.calls;
  config.iterations = spec.iterations;
  config.window = spec.window;
  config.start_ns = spec.start_ns;
  config.rtt_ns = spec.rtt_ns;
  config.seed = spec.seed;
  config.tos = AtpWorkerOptions{}.tos;  // ECT(0), as hostlib's workers send
  AtpGradientStream gradients(config, w);
  std::vector<std::unique_ptr<BackgroundFlow>> flows;
  std::vector<FrameSource*> sources = {&gradients};  // first: gradients win ties
  const BackgroundEnds ends{spec.job.spec.workers[w].mac, spec.job.spec.ps.mac,
                            spec.job.spec.workers[w].ip, spec.job.spec.ps.ip};
  for (uint32_t i = 0; i < spec.background.flows; ++i) {
    flows.push_back(
        std::make_unique<BackgroundFlow>(spec.background, i, ends, spec.start_ns, spec.rtt_ns));
    sources.push_back(flows.back().get());
  }
  Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
  if (!writer.ok()) return Status::Error(name + ": cannot write (" + writer.message() + ")");
  Result<LinkTotals> totals =
      RunLink(sources, spec.rate_bps, **writer, "worker " + std::to_string(w), kTimeAdvice);
  if (!totals.ok()) return totals;
  SWEMU_RETURN_IF_ERROR((*writer)->Close());
  return totals;
}

std::string Summary(const AtpGenSpec& spec, TimeNs last_ns, const std::string& written) {
  const uint32_t w = spec.job.num_workers();
  const uint64_t packets = spec.packets_per_iteration * spec.iterations;
  const uint64_t background = spec.background.flows * BackgroundFrames(spec.background.bytes);
  char line[512];
  std::snprintf(line, sizeof(line),
                "swemu-gen: atp job %u: %u workers x %llu gradient packets (seqs 0-%llu; %s, %zu "
                "of %u layers, %u iteration%s) + %llu background frames each, last at %.6f s; "
                "wrote %s\n",
                spec.job.spec.job_id, w, static_cast<unsigned long long>(packets),
                static_cast<unsigned long long>(packets - 1), spec.model.model.c_str(),
                spec.model.layers.size(), spec.model_layers, spec.iterations,
                spec.iterations == 1 ? "" : "s", static_cast<unsigned long long>(background),
                static_cast<double>(last_ns) * 1e-9, written.c_str());
  return line;
}

}  // namespace

po::options_description AtpOptions() {
  po::options_description options("--workload atp", 100);
  // clang-format off
  options.add_options()
      ("workers", po::value<std::string>()->default_value("4"),
       "workers, 1..32: worker w is 10.0.0.w, MAC 02:00:00:00:00:<w in hex>")
      ("model", po::value<std::string>()->default_value("resnet50"),
       "bundled model whose layers are all-reduced: vgg16, alexnet, resnet50")
      ("layers", po::value<std::string>()->default_value("all"), "only the model's first N layers")
      ("iterations", po::value<std::string>()->default_value("1"),
       "iterations (seqs go on from one to the next)")
      ("elements", po::value<std::string>()->default_value(std::to_string(kAtpDefaultElements)),
       "int32 elements per packet (must match the switch's [program] elements)")
      ("job", po::value<std::string>()->default_value("1"), "ATP job id")
      ("window", po::value<std::string>()->default_value("64"), "packets in flight per worker")
      ("rtt", po::value<std::string>()->default_value("50us"),
       "packet k goes no earlier than packet k-window's send time + rtt")
      ("ps-ip", po::value<std::string>()->default_value("10.0.0.16"), "the PS's IPv4")
      ("ps-mac", po::value<std::string>()->default_value("02:00:00:00:00:10"), "the PS's MAC");
  // clang-format on
  return options;
}

Status RunAtp(const po::variables_map& vm, std::ostream& out) {
  AtpGenSpec spec;
  SWEMU_RETURN_IF_ERROR(FillSpec(vm, spec));
  const uint32_t workers = spec.job.num_workers();
  OutputFiles files;
  std::vector<std::string> links;
  TimeNs last_ns = 0;
  for (uint32_t w = 0; w < workers; ++w) {
    const std::string name = spec.split ? WorkerPath(spec.out, w) : spec.out;
    links.push_back(spec.split ? files.Aside(name) : files.Scratch(name, "w" + std::to_string(w)));
    Result<LinkTotals> totals = WriteLink(spec, w, links.back(), name);
    if (!totals.ok()) return totals.status();
    last_ns = std::max(last_ns, totals->last_ns);
  }
  if (!spec.split) SWEMU_RETURN_IF_ERROR(MergePcaps(links, files.Aside(spec.out), spec.out));
  SWEMU_RETURN_IF_ERROR(files.Commit());
  std::string written = spec.split ? WorkerPath(spec.out, 0) : spec.out;
  if (spec.split && workers > 1) written += " .. " + WorkerPath(spec.out, workers - 1);
  out << Summary(spec, last_ns, written);
  return Status::Ok();
}

}  // namespace swemu::gen
