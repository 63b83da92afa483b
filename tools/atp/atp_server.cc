#include "tools/atp/atp_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>

#include "hostlib/atp/context.h"
#include "hostlib/common/event_loop.h"
#include "hostlib/common/udp_socket_transport.h"
#include "hostlib/dpdk/host_net.h"
#include "hostlib/testbed/atp_job_file.h"
#include "hostlib/workload/model_layers.h"
#include "hostlib/workload/synthetic_gradients.h"
#include "pipeline/core/text_file.h"
#include "tools/atp/atp_publish.h"
#include "tools/atp/atp_workload.h"
#include "tools/option_values.h"
#include "tools/subcommand.h"

namespace swemu {
namespace po = boost::program_options;
namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnStopSignal(int) { g_stop = 1; }

// An error that is the input's fault (exit 2) or the run's (exit 1).
struct Failure {
  Status status;
  bool bad_input = false;
};

// The published job and its at-PS twin (id + 1, group + 1: hostlib/testbed/atp_job_file.h).
struct ServerJob {
  AtpJobConfig aggregate, plain;
};

// The published job (LoadPublishedAtpJob: each host's rack is its switch).
Result<ServerJob> ReadJob(const std::string& path) {
  Result<AtpJobFile> file = LoadPublishedAtpJob(path);
  if (!file.ok()) return Status::Error("--job " + file.message());
  return ServerJob{file->aggregate, file->plain};
}

// Whether this machine may take `who`'s address: it must own the IP (so a rank is taken by at
// most one machine) and no socket of this machine may hold the job's port (so by at most one
// process).
Status ClaimAddress(const std::string& who, Ipv4Addr ip, uint16_t port) {
  const int error = TryBindUdp(ip, port);
  if (error == 0) return Status::Ok();
  const std::string where = FormatIpv4(ip) + ":" + std::to_string(port);
  if (error == EADDRNOTAVAIL) {
    return Status::Error(who + " is " + FormatIpv4(ip) +
                         " in the job file, not an address of this machine");
  }
  if (error == EADDRINUSE) {
    return Status::Error(who + ": " + where +
                         " is taken: a worker or PS of this job already "
                         "runs on this machine");
  }
  return Status::Error(who + ": cannot bind " + where + " (" + std::strerror(error) + ")");
}

// A kernel UDP socket on the job's port, sending multicast from `host`'s interface.
UdpSocketConfig SocketConfig(const AtpHost& host, Ipv4Addr bind_ip, uint16_t port) {
  UdpSocketConfig config;
  config.bind_ip = bind_ip;
  config.port = port;
  config.multicast_if = host.ip;
  config.local_mac = host.mac;
  return config;
}

// The EAL file prefix of ATP's server hosts on a DPDK port.
constexpr char kEalPrefix[] = "swemu-atp";

struct WorkerRun {
  std::string job_path;
  std::string port;  // DPDK devargs; empty: kernel UDP sockets
  uint32_t rank = 0;
  double timeout_s = 10;
  bool in_network = true;  // each iteration's passes: in-network, then at the PS
  bool at_ps = false;
  WorkloadOptions workload;
  AtpWorkerOptions worker;
};

// Every worker's gradients of one iteration are known here (synthetic, by worker and seed): the
// exact float sums the switch and PS must give back.
void ExactSums(const WorkerRun& run, uint32_t workers, uint32_t iteration, std::vector<float>* mine,
               std::vector<double>* exact) {
  const ModelLayers& model = run.workload.model;
  std::vector<float> theirs;
  exact->assign(model.TotalParams(), 0.0);
  mine->resize(model.TotalParams());
  for (uint32_t w = 0; w < workers; ++w) {
    std::size_t offset = 0;
    for (uint32_t l = 0; l < model.layers.size(); ++l) {
      const std::size_t n = model.layers[l].params;
      theirs.resize(n);
      FillGradients(run.workload.gradients, w, iteration, l, theirs);
      for (std::size_t i = 0; i < n; ++i) (*exact)[offset + i] += theirs[i];
      if (w == run.rank) std::copy(theirs.begin(), theirs.end(), mine->begin() + offset);
      offset += n;
    }
  }
}

void PrintWorkerHeader(std::ostream& out) {
  out << "mode        iter   time_ms  goodput_Gbps  max_error  bound      retx  timeouts  ecn\n";
}

// Why a pass did not finish, in one line.
Status PassFailed(const WorkerRun& run, const AtpJobConfig& job, const AtpWorkerStats& before,
                  const AtpWorkerStats& after, std::size_t done, std::size_t calls) {
  if (g_stop) return Status::Error("stopped by a signal");
  const uint64_t params = after.params_received - before.params_received;
  const std::string ps = FormatIpv4(job.spec.ps.ip) + ":" + std::to_string(job.spec.udp_port);
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g s", run.timeout_s);
  if (params == 0) {
    return Status::Error("no parameter packet of job " + std::to_string(job.spec.job_id) + " in " +
                         seconds + " (sent " +
                         std::to_string(after.packets_sent - before.packets_sent) +
                         " packets to the PS " + ps +
                         "): is the switch up, `swemu-atp ps` running, every worker started, "
                         "and this job file the switch's (job id, elements, group, port)?");
  }
  return Status::Error("job " + std::to_string(job.spec.job_id) + ": " + std::to_string(done) +
                       " of " + std::to_string(calls) + " all-reduce calls done in " + seconds +
                       " (" + std::to_string(params) + " parameter packets received)");
}

Result<PassResult> RunWorkerPass(const WorkerRun& run, Context& ctx, HostNet& loop,
                                 const ServerJob& jobs, bool at_ps, uint32_t iteration,
                                 const std::vector<float>& in, std::vector<float>* out,
                                 const std::vector<double>& exact) {
  const AtpJobConfig& job = at_ps ? jobs.plain : jobs.aggregate;
  const uint16_t id = job.spec.job_id;
  const AtpWorkerStats before = *ctx.worker_stats(id);
  std::fill(out->begin(), out->end(), std::numeric_limits<float>::quiet_NaN());
  std::vector<std::size_t> layer_start(run.workload.model.layers.size(), 0);
  for (std::size_t l = 1; l < layer_start.size(); ++l) {
    layer_start[l] = layer_start[l - 1] + run.workload.model.layers[l - 1].params;
  }
  const TimeNs start = loop.Now();
  std::vector<AllReduceJob*> calls;
  for (const LayerPartition& p : PartitionLayers(run.workload.model)) {
    const std::size_t at = layer_start[p.layer] + p.offset;
    calls.push_back(ctx.AllReduce(id, in.data() + at, out->data() + at, p.count));
  }
  std::size_t done = 0;
  auto all_done = [&] {
    while (done < calls.size() && calls[done]->done()) ++done;
    return done == calls.size() || g_stop != 0;
  };
  const bool finished = loop.RunUntil(all_done, static_cast<TimeNs>(run.timeout_s * 1e9));
  const AtpWorkerStats& after = *ctx.worker_stats(id);
  if (!finished || done < calls.size()) {
    return PassFailed(run, job, before, after, done, calls.size());
  }
  PassResult pass;
  pass.mode = at_ps ? "at-PS" : "in-network";
  pass.iteration = iteration;
  pass.seconds = static_cast<double>(loop.Now() - start) * 1e-9;
  pass.goodput_gbps = 4.0 * static_cast<double>(in.size()) * 8 / pass.seconds * 1e-9;
  double largest = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    largest = std::max(largest, std::fabs(exact[i]));
    const double err = std::fabs(double{(*out)[i]} - exact[i]);
    if (!(err <= pass.max_error)) pass.max_error = err;  // NaN (never written) is the worst
  }
  pass.error_bound = job.num_workers() * 0.5 / job.spec.scale + largest * 0x1.0p-23;
  pass.packets = after.packets_sent - before.packets_sent;
  pass.retransmissions = after.retransmissions - before.retransmissions;
  pass.timeouts = after.timeouts - before.timeouts;
  pass.ecn_halvings = after.ecn_halvings - before.ecn_halvings;
  return pass;
}

void PrintWorkerPass(const PassResult& p, std::ostream& out) {
  char line[200];
  std::snprintf(
      line, sizeof(line), "%-10s  %4u  %8.1f  %12.3f  %9.2e  %9.2e  %5llu  %8llu  %3llu\n",
      p.mode.c_str(), p.iteration, p.seconds * 1e3, p.goodput_gbps, p.max_error, p.error_bound,
      static_cast<unsigned long long>(p.retransmissions),
      static_cast<unsigned long long>(p.timeouts), static_cast<unsigned long long>(p.ecn_halvings));
  out << line;
}

// With --both: how much sooner the passes finished in-network than at the PS, as demo says it.
void PrintWorkerRatio(const std::vector<PassResult>& passes, std::ostream& out) {
  double in_network_s = 0, at_ps_s = 0;
  for (const PassResult& p : passes) (p.mode == "at-PS" ? at_ps_s : in_network_s) += p.seconds;
  if (in_network_s <= 0 || at_ps_s <= 0) return;
  char line[80];
  std::snprintf(line, sizeof(line), "speed ratio in-network / at-PS: %.2fx\n",
                at_ps_s / in_network_s);
  out << line;
}

std::optional<Failure> RunWorker(const WorkerRun& run, std::ostream& out) {
  Result<ServerJob> job = ReadJob(run.job_path);
  if (!job.ok()) return Failure{job.status(), true};
  const AtpJobConfig& agg = job->aggregate;
  if (run.rank >= agg.num_workers()) {
    return Failure{Status::Error("--rank " + std::to_string(run.rank) + ": the job has " +
                                 std::to_string(agg.num_workers()) + " workers (ranks 0.." +
                                 std::to_string(agg.num_workers() - 1) + ")"),
                   true};
  }
  const AtpHost& me = agg.spec.workers[run.rank];
  const std::string who = "rank " + std::to_string(run.rank) + " (" + me.name + ")";
  HostNet net;
  if (!run.port.empty()) {
    if (Status macs = NeedMacs(std::vector<AtpHost>{me, agg.spec.ps}); !macs.ok()) return Failure{macs, true};
    if (Status opened = net.OpenDpdk(run.port, kEalPrefix); !opened.ok()) return Failure{opened, true};
  } else {
    if (Status claim = ClaimAddress(who, me.ip, agg.spec.udp_port); !claim.ok()) {
      return Failure{claim, true};
    }
    // Bound to any address: Linux gives a group's datagrams only to sockets bound to the group
    // or to INADDR_ANY, and the PS's unicast resends come to the rank's IP.
    Status opened = net.OpenUdp(SocketConfig(me, 0, agg.spec.udp_port));
    if (!opened.ok()) return Failure{Status::Error(who + ": " + opened.message()), false};
    for (const AtpJobConfig* j : {&job->aggregate, &job->plain}) {
      if (Status joined = net.udp()->JoinGroup(j->spec.group_ip); !joined.ok()) {
        return Failure{Status::Error(who + ": group " + FormatIpv4(j->spec.group_ip) + ": " +
                                     joined.message()),
                       false};
      }
    }
  }
  Context ctx({me.mac, me.ip}, net.transport());
  for (const AtpJobConfig* j : {&job->aggregate, &job->plain}) {
    if (Status joined = ctx.JoinJob(*j, run.worker); !joined.ok()) return Failure{joined, true};
  }
  net.Add(ctx);
  std::vector<bool> modes;  // per iteration: at the PS or not
  if (run.in_network) modes.push_back(false);
  if (run.at_ps) modes.push_back(true);
  out << "ATP worker " << who << " of job "
      << (run.in_network ? std::to_string(agg.spec.job_id) + " (in-network)" : "")
      << (run.in_network && run.at_ps ? ", then " : "")
      << (run.at_ps ? std::to_string(job->plain.spec.job_id) + " (at the PS)" : "") << ", "
      << agg.num_workers()
      << (agg.num_workers() == 1 ? " worker, " : " workers, ") << run.workload.model.model << " ("
      << run.workload.model.TotalParams() << " floats), over "
      << (run.port.empty() ? "kernel UDP sockets" : "DPDK port " + run.port) << "\n";
  PrintWorkerHeader(out);
  std::vector<float> in, result(run.workload.model.TotalParams());
  std::vector<double> exact;
  std::vector<PassResult> passes;
  for (uint32_t it = 1; it <= run.workload.iterations; ++it) {
    ExactSums(run, agg.num_workers(), it, &in, &exact);
    for (const bool at_ps : modes) {
      Result<PassResult> pass = RunWorkerPass(run, ctx, net, *job, at_ps, it, in, &result, exact);
      if (!pass.ok()) return Failure{Status::Error(who + ": " + pass.message()), false};
      PrintWorkerPass(*pass, out);
      if (!(pass->max_error <= pass->error_bound)) {
        return Failure{Status::Error(who + ": " + pass->mode + " iteration " + std::to_string(it) +
                                     ": max error " + std::to_string(pass->max_error) +
                                     " exceeds the bound " + std::to_string(pass->error_bound)),
                       false};
      }
      passes.push_back(*pass);
    }
  }
  AtpWorkload::PrintSummary(passes, out);
  PrintWorkerRatio(passes, out);
  return std::nullopt;
}

struct PsRun {
  std::string job_path;
  std::string port;        // DPDK devargs; empty: kernel UDP sockets
  double idle_exit_s = 0;  // 0: until SIGINT or SIGTERM
};

void PrintPsStats(uint16_t id, const AtpPsStats& s, std::ostream& out) {
  const double by_switch = static_cast<double>(s.elements_by_switch);
  const double all = by_switch + static_cast<double>(s.elements_at_ps);
  char line[240];
  std::snprintf(
      line, sizeof(line),
      "job %u: %llu gradient packets (%llu aggregated by the switch, %llu partly, %llu "
      "originals), %llu seqs completed, %.1f%% of elements aggregated in the switch, "
      "%llu parameter packets, %llu resent\n",
      id, static_cast<unsigned long long>(s.gradients), static_cast<unsigned long long>(s.full),
      static_cast<unsigned long long>(s.partials), static_cast<unsigned long long>(s.originals),
      static_cast<unsigned long long>(s.completed), all > 0 ? 100 * by_switch / all : 0.0,
      static_cast<unsigned long long>(s.params_sent),
      static_cast<unsigned long long>(s.param_resends));
  out << line;
}

std::optional<Failure> RunPs(const PsRun& run, std::ostream& out) {
  Result<ServerJob> job = ReadJob(run.job_path);
  if (!job.ok()) return Failure{job.status(), true};
  const AtpHost& me = job->aggregate.spec.ps;
  const uint16_t port = job->aggregate.spec.udp_port;
  const std::string who = "the PS (" + me.name + ")";
  HostNet loop;
  if (!run.port.empty()) {
    std::vector<AtpHost> peers = job->aggregate.spec.workers;
    peers.push_back(me);
    if (Status macs = NeedMacs(peers); !macs.ok()) return Failure{macs, true};
    if (Status opened = loop.OpenDpdk(run.port, kEalPrefix); !opened.ok()) return Failure{opened, true};
  } else {
    if (Status claim = ClaimAddress(who, me.ip, port); !claim.ok()) return Failure{claim, true};
    Status opened = loop.OpenUdp(SocketConfig(me, me.ip, port));
    if (!opened.ok()) return Failure{Status::Error(who + ": " + opened.message()), false};
  }
  Context ctx({me.mac, me.ip}, loop.transport());
  // History for a partition's packets twice over (the workload's largest call).
  AtpPsOptions ps_options;
  ModelLayers partition{"", {{"", kPartitionFloats}}};
  ps_options.history = PsHistoryFor(partition, job->aggregate.spec.elements);
  for (const AtpJobConfig* j : {&job->aggregate, &job->plain}) {
    if (Status served = ctx.ServeJob(*j, ps_options); !served.ok()) return Failure{served, true};
  }
  loop.Add(ctx);
  out << "ATP PS " << me.name << " at " << FormatIpv4(me.ip) << ":" << port << " serving jobs "
      << job->aggregate.spec.job_id << " and " << job->plain.spec.job_id << " ("
      << job->aggregate.num_workers() << " workers), over "
      << (run.port.empty() ? "kernel UDP sockets" : "DPDK port " + run.port) << std::endl;
  uint64_t last_gradients = 0;
  TimeNs last_change = loop.Now();
  auto stop = [&] {
    const uint64_t g = ctx.ps_stats(job->aggregate.spec.job_id)->gradients +
                       ctx.ps_stats(job->plain.spec.job_id)->gradients;
    const TimeNs now = loop.Now();
    if (g != last_gradients) {
      last_gradients = g;
      last_change = now;
    }
    return g_stop != 0 || (run.idle_exit_s > 0 && g > 0 &&
                           static_cast<double>(now - last_change) > run.idle_exit_s * 1e9);
  };
  while (!loop.RunUntil(stop, 1'000'000'000)) {
  }
  for (const AtpJobConfig* j : {&job->aggregate, &job->plain}) {
    PrintPsStats(j->spec.job_id, *ctx.ps_stats(j->spec.job_id), out);
  }
  return std::nullopt;
}

po::options_description WorkerOptions() {
  po::options_description o("swemu-atp worker options", 100);
  // clang-format off
  o.add_options()
      ("help,h", "print this help and exit")
      ("job", po::value<std::string>()->required(), "the job file (swemu-atp publish's DIR/job)")
      ("rank", po::value<std::string>()->required(), "this worker's rank: its line in the job file, from 0")
      ("model", po::value<std::string>()->default_value("ResNet50"), "the model whose gradients are all-reduced: ResNet50, VGG16, AlexNet")
      ("layers", po::value<std::string>()->default_value("0"), "only the model's first N layers (0: all)")
      ("elements", po::value<std::string>(), "all-reduce this many floats instead of a model")
      ("iterations", po::value<std::string>()->default_value("3"), "iterations")
      ("seed", po::value<std::string>()->default_value("1"), "seed of the synthetic gradients (the same on every worker)")
      ("lanes", po::value<std::string>()->default_value("2"), "sender lanes")
      ("at-ps", "run the job's at-PS twin (id + 1): the switch forwards, the PS aggregates")
      ("both", "each iteration in-network, then at the PS (as demo), and the speed ratio")
      ("port", po::value<std::string>(), "a DPDK port's devargs (a PCI address, net_af_packet0,iface=eth0, ...) instead of kernel UDP sockets")
      ("timeout", po::value<std::string>()->default_value("10"), "seconds an iteration may take");
  // clang-format on
  return o;
}

po::options_description PsOptions() {
  po::options_description o("swemu-atp ps options", 100);
  // clang-format off
  o.add_options()
      ("help,h", "print this help and exit")
      ("job", po::value<std::string>()->required(), "the job file (swemu-atp publish's DIR/job)")
      ("port", po::value<std::string>(), "a DPDK port's devargs (a PCI address, net_af_packet0,iface=eth0, ...) instead of kernel UDP sockets")
      ("idle-exit", po::value<std::string>()->default_value("0"),
       "exit after this many seconds without a gradient, once one came (0: run until SIGINT or SIGTERM)");
  // clang-format on
  return o;
}

Status ReadWorkerRun(const po::variables_map& vm, WorkerRun* run) {
  run->job_path = opt::Text(vm, "job");
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "rank", 0, kAtpMaxWorkers - 1, &run->rank));
  SWEMU_RETURN_IF_ERROR(ReadDoubleOption(vm, "timeout", 1e-3, 86400, &run->timeout_s));
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "iterations", 1, 1u << 20, &run->workload.iterations));
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "seed", 0, UINT64_MAX, &run->workload.gradients.seed));
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "lanes", 1, 64, &run->worker.lanes));
  if (vm.count("at-ps") && vm.count("both")) return Status::Error("--both: not with --at-ps");
  run->at_ps = vm.count("at-ps") != 0 || vm.count("both") != 0;
  run->in_network = vm.count("at-ps") == 0;
  if (vm.count("port")) run->port = opt::Text(vm, "port");
  if (vm.count("elements")) {
    if (opt::Given(vm, "model") || opt::Given(vm, "layers")) {
      return Status::Error("--elements: not with --model or --layers");
    }
    uint64_t n = 0;
    SWEMU_RETURN_IF_ERROR(opt::CheckUint(vm, "elements", 1, uint64_t{1} << 30, &n));
    run->workload.model = ModelLayers{"one tensor", {{"tensor", n}}};
    return Status::Ok();
  }
  Result<ModelLayers> model = BundledModel(opt::Text(vm, "model"));
  if (!model.ok()) return Status::Error("--model: " + model.message());
  uint32_t layers = 0;
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "layers", 0, model->layers.size(), &layers));
  if (layers > 0) model->layers.resize(layers);
  run->workload.model = std::move(*model);
  return Status::Ok();
}

// The examples each command's --help ends with.
const char* Examples(const std::string& command) {
  if (command == "publish") {
    return "\nexample:\n"
           "  swemu-atp publish --hosts hosts.txt --out-dir job1   (hosts.txt: one host a line,\n"
           "      e.g. `w0 worker 10.0.0.1 02:00:00:00:00:01 0`, `ps ps 10.0.0.254 learn 2`)\n"
           "  swemu --config job1/switch.ini                        on the switch\n";
  }
  if (command == "worker") {
    return "\nexamples:\n"
           "  swemu-atp worker --job job1/job --rank 0              ResNet-50's gradients, 3 "
           "iterations\n"
           "  swemu-atp worker --job job1/job --rank 1 --elements 1000000 --iterations 2\n"
           "  swemu-atp worker --job job1/job --rank 1 --port 0000:3b:00.0   on a DPDK port\n";
  }
  return "\nexamples:\n"
         "  swemu-atp ps --job job1/job                 until Ctrl-C\n"
         "  swemu-atp ps --job job1/job --idle-exit 5   ends 5 s after the last gradient\n";
}

int Report(const std::optional<Failure>& failure) {
  if (!failure) return 0;
  std::cerr << "swemu-atp: " << failure->status.message() << '\n';
  return failure->bad_input ? 2 : 1;
}

std::string CommandLine(int argc, char** argv) {
  std::string line = "swemu-atp";
  for (int i = 1; i < argc; ++i) line += std::string(" ") + argv[i];
  return line;
}

}  // namespace

int RunAtpServerCommand(int argc, char** argv) {
  const std::string command = argv[1];
  po::variables_map vm;
  const po::options_description desc = command == "publish"  ? AtpPublishOptionsDescription()
                                       : command == "worker" ? WorkerOptions()
                                                             : PsOptions();
  if (std::optional<int> done =
          StoreModeOptions("swemu-atp", argc, argv, desc, Examples(command), &vm)) {
    return *done;
  }
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  if (command == "publish") {
    Status published = RunAtpPublish(vm, std::cout, CommandLine(argc, argv));
    return Report(published.ok() ? std::nullopt : std::optional<Failure>(Failure{published, true}));
  }
  if (command == "worker") {
    WorkerRun run;
    if (Status read = ReadWorkerRun(vm, &run); !read.ok()) return Report(Failure{read, true});
    return Report(RunWorker(run, std::cout));
  }
  PsRun run;
  run.job_path = opt::Text(vm, "job");
  if (vm.count("port")) run.port = opt::Text(vm, "port");
  if (Status read = ReadDoubleOption(vm, "idle-exit", 0, 86400, &run.idle_exit_s); !read.ok()) {
    return Report(Failure{read, true});
  }
  return Report(RunPs(run, std::cout));
}

}  // namespace swemu
