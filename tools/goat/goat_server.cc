#include "tools/goat/goat_server.h"

#include <bit>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>

#include "hostlib/common/udp_socket_transport.h"
#include "hostlib/dpdk/host_net.h"
#include "hostlib/goat/job_file.h"
#include "hostlib/goat/ps.h"
#include "hostlib/goat/worker.h"
#include "pipeline/control/units.h"
#include "pipeline/core/text_file.h"
#include "tools/goat/goat_publish.h"
#include "tools/option_values.h"

namespace swemu {
namespace po = boost::program_options;
using opt::Check;
using opt::Text;

namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnStopSignal(int) { g_stop = 1; }
void CatchStopSignals() {
  g_stop = 0;
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
}

// The options every command needs (ParseSubcommand does not enforce `required`).
Status Need(const po::variables_map& vm, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (!vm.count(name)) return Status::Error(std::string("--") + name + " is required");
  }
  return Status::Ok();
}

Result<GoatJob> ReadJob(const po::variables_map& vm) {
  SWEMU_RETURN_IF_ERROR(Need(vm, {"job"}));
  const std::string path = Text(vm, "job");
  Result<std::string> text = ReadTextFile(path, "the job file");
  if (!text.ok()) return Status::Error("--job " + text.message());
  Result<GoatJob> job = ParseGoatJob(*text);
  if (!job.ok()) return Status::Error("--job " + path + ": " + job.message());
  return job;
}

// Whether this machine owns `ip` and no socket holds the port on it (TryBindUdp). `option`
// names what chose the address (--name or --bind).
Status ClaimAddress(const std::string& option, const std::string& who, Ipv4Addr ip, uint16_t port) {
  const int error = TryBindUdp(ip, port);
  if (error == 0) return Status::Ok();
  const std::string where = FormatIpv4(ip) + ":" + std::to_string(port);
  if (error == EADDRNOTAVAIL) {
    return Status::Error(option + ": " + who + " is " + FormatIpv4(ip) +
                         ", not an address of this machine");
  }
  if (error == EADDRINUSE) {
    return Status::Error(option + ": " + who + ": " + where +
                         " is taken: this worker or PS of the job already runs here");
  }
  return Status::Error(option + ": " + who + ": cannot bind " + where + " (" +
                       std::strerror(error) + ")");
}

// A host's place in the job, and where it is reached.
struct HostPlace {
  std::string port;         // DPDK devargs; empty: kernel UDP sockets
  std::string bind_option;  // what chose bind_ip: --name, --job or --bind
  std::string who;          // "worker w1", "the PS ps0"
  Ipv4Addr bind_ip = 0;
};

// The host's network: the job's port on a kernel UDP socket held alone
// (UdpSocketConfig::exclusive), or a DPDK port, on which the host sends whole frames to `peers`
// (itself included) and needs their MACs.
Status OpenNet(const HostPlace& place, const GoatHostAddr& host, uint16_t udp_port,
               const std::vector<GoatHostAddr>& peers, HostNet* net) {
  if (!place.port.empty()) {
    SWEMU_RETURN_IF_ERROR(NeedMacs(peers));
    return net->OpenDpdk(place.port, "swemu-goat");
  }
  SWEMU_RETURN_IF_ERROR(ClaimAddress(place.bind_option, place.who, place.bind_ip, udp_port));
  UdpSocketConfig config;
  config.bind_ip = place.bind_ip;
  config.port = udp_port;
  config.local_mac = host.mac;
  config.exclusive = true;
  Status opened = net->OpenUdp(config);
  if (!opened.ok())
    return Status::Error(place.bind_option + ": " + place.who + ": " + opened.message());
  return Status::Ok();
}

// --port, which a socket's --bind cannot go with.
Status ReadPort(const po::variables_map& vm, HostPlace* place) {
  if (!vm.count("port")) return Status::Ok();
  if (vm.count("bind")) return Status::Error("--bind: not with --port (a DPDK port has no socket)");
  place->port = Text(vm, "port");
  return Status::Ok();
}

// How the host reaches the switch, for its first line.
std::string Over(const HostPlace& place) {
  return place.port.empty() ? "kernel UDP sockets" : "DPDK port " + place.port;
}

struct WorkerRun {
  uint32_t rank = 0;
  HostPlace place{"", "--name", "", 0};
  uint32_t rounds = 0;
  TimeNs timeout = 0;
  GoatWorkerOptions worker;
};

Status ReadWorkerRun(const po::variables_map& vm, const GoatJob& job, WorkerRun* run) {
  SWEMU_RETURN_IF_ERROR(Need(vm, {"name"}));
  const std::string name = Text(vm, "name");
  std::string names;
  for (uint32_t w = 0; w < job.num_workers(); ++w) {
    if (job.workers[w].name == name) {
      run->rank = w;
      run->place.bind_ip = job.workers[w].ip;
      run->place.who = "worker " + name;
      names.clear();
      break;
    }
    names += (names.empty() ? "" : ", ") + job.workers[w].name;
  }
  if (!names.empty()) {
    return Status::Error("--name " + name + ": not a worker of " + Text(vm, "job") +
                         " (its workers: " + names + ")");
  }
  if (vm.count("bind")) {
    SWEMU_RETURN_IF_ERROR(Check("bind", ParseIpv4(Text(vm, "bind")), &run->place.bind_ip));
    run->place.bind_option = "--bind";
  }
  SWEMU_RETURN_IF_ERROR(ReadPort(vm, &run->place));
  uint64_t rounds = 0, rate = 0;
  SWEMU_RETURN_IF_ERROR(opt::CheckUint(vm, "rounds", 1, 1u << 20, &rounds));
  run->rounds = static_cast<uint32_t>(rounds);
  SWEMU_RETURN_IF_ERROR(Check("timeout", ParseDurationOption(Text(vm, "timeout")), &run->timeout));
  if (run->timeout == 0) return Status::Error("--timeout must be above 0");
  SWEMU_RETURN_IF_ERROR(Check("rto", ParseDurationOption(Text(vm, "rto")), &run->worker.rto_ns));
  if (run->worker.rto_ns == 0) return Status::Error("--rto must be above 0");
  run->worker.max_rto_ns = std::max<TimeNs>(run->worker.max_rto_ns, 8 * run->worker.rto_ns);
  SWEMU_RETURN_IF_ERROR(Check("rate", ParseRate(Text(vm, "rate")), &rate));
  run->worker.rate_bps = rate;
  return Status::Ok();
}

// Why a round did not finish in time, in one line.
Status RoundFailed(const GoatJob& job, const GoatWorker& worker, uint32_t round,
                   const GoatWorkerStats& before, double seconds) {
  if (g_stop) return Status::Error("stopped by a signal");
  char time[32];
  std::snprintf(time, sizeof(time), "%g s", seconds);
  const GoatWorkerStats& s = worker.stats();
  const std::string ps = FormatIpv4(job.ps.ip) + ":" + std::to_string(job.udp_port);
  if (s.results == before.results) {
    return Status::Error("round " + std::to_string(round) + ": no result of job " +
                         std::to_string(job.job_id) + " in " + time + " (sent " +
                         std::to_string(s.fragments_sent - before.fragments_sent) +
                         " fragments towards the PS " + ps +
                         "): is the switch up, `swemu-goat ps` running, every worker started, "
                         "and this job file the switches' (job id, elements, port)?");
  }
  return Status::Error("round " + std::to_string(round) + ": " +
                       std::to_string(s.results - before.results) + " of " +
                       std::to_string(job.total_fragments()) + " fragments' results in " + time);
}

// Result elements that differ from the exact sum of the workers each fragment counted (every
// worker's gradient is GoatDemoValue, so every host knows them all).
uint64_t WrongElements(const GoatJob& job, const GoatWorker& worker, uint32_t round,
                       const std::vector<int32_t>& out) {
  uint64_t wrong = 0;
  for (uint64_t f = 0; f < job.total_fragments(); ++f) {
    const uint64_t bits = worker.contributors(f);
    for (uint16_t e = 0; e < job.elements; ++e) {
      const uint64_t i = f * job.elements + e;
      int64_t exact = 0;
      for (uint64_t b = bits; b != 0; b &= b - 1) {
        exact += GoatDemoValue(round, static_cast<uint32_t>(std::countr_zero(b)), i);
      }
      wrong += out[i] != exact ? 1 : 0;
    }
  }
  return wrong;
}

Status RunRound(const GoatJob& job, const WorkerRun& run, GoatWorker& worker, HostNet& loop,
                uint32_t round, std::ostream& out) {
  const uint64_t n = job.total_elements();
  std::vector<int32_t> in(n), result(n);
  for (uint64_t i = 0; i < n; ++i) in[i] = GoatDemoValue(round, run.rank, i);
  const GoatWorkerStats before = worker.stats();
  const TimeNs start = loop.Now();
  SWEMU_RETURN_IF_ERROR(worker.StartRound(round, in, result, start));
  const bool done = loop.RunUntil([&] { return worker.done() || g_stop != 0; }, run.timeout);
  if (!done || !worker.done()) {
    return RoundFailed(job, worker, round, before, static_cast<double>(run.timeout) * 1e-9);
  }
  const double seconds = static_cast<double>(worker.finish_ns() - start) * 1e-9;
  uint32_t counted = 0;
  for (uint64_t f = 0; f < job.total_fragments(); ++f) {
    counted = std::max<uint32_t>(counted, std::popcount(worker.contributors(f)));
  }
  const uint64_t wrong = WrongElements(job, worker, round, result);
  const GoatWorkerStats& s = worker.stats();
  char line[256];
  std::snprintf(line, sizeof(line),
                "round %u: %.1f ms, goodput %.3g Gbit/s, %llu retransmissions, %u workers "
                "counted, %llu results excluded this worker; ",
                round, seconds * 1e3, static_cast<double>(n) * 4 * 8 / seconds * 1e-9,
                static_cast<unsigned long long>(s.retransmissions - before.retransmissions),
                counted, static_cast<unsigned long long>(s.excluded - before.excluded));
  out << line
      << (wrong == 0 ? "every sum exact\n"
                     : "SUMS WRONG (" + std::to_string(wrong) + " elements)\n")
      << std::flush;
  if (wrong != 0) {
    return Status::Error("round " + std::to_string(round) + ": " + std::to_string(wrong) +
                         " result elements differ from the exact sums");
  }
  return Status::Ok();
}

}  // namespace

po::options_description GoatWorkerCommandOptions() {
  po::options_description options("swemu-goat worker options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("job", po::value<std::string>()->required(), "the job file (swemu-goat publish's DIR/goat.job)")
      ("name", po::value<std::string>()->required(), "this worker's name in the job file (its `worker =` line)")
      ("bind", po::value<std::string>(), "bind this address instead of the job file's (0.0.0.0: any); the results still go to the job file's")
      ("rounds", po::value<std::string>()->default_value("3"), "rounds of gradients (the demo's values, so that every host knows the exact sums)")
      ("timeout", po::value<std::string>()->default_value("10s"), "per round: longer ends with one line, exit 1")
      ("rto", po::value<std::string>()->default_value("20ms"), "first retransmission timeout (doubling)")
      ("rate", po::value<std::string>()->default_value("0"), "pace first transmissions to this rate (e.g. 1G; 0: unpaced)")
      ("port", po::value<std::string>(), "a DPDK port's devargs (a PCI address, net_af_packet0,iface=eth0, ...) instead of kernel UDP sockets");
  // clang-format on
  return options;
}

po::options_description GoatPsCommandOptions() {
  po::options_description options("swemu-goat ps options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("job", po::value<std::string>()->required(), "the job file (swemu-goat publish's DIR/goat.job)")
      ("bind", po::value<std::string>(), "bind this address instead of the job file's PS address (0.0.0.0: any)")
      ("port", po::value<std::string>(), "a DPDK port's devargs (a PCI address, net_af_packet0,iface=eth0, ...) instead of kernel UDP sockets")
      ("idle-exit", po::value<std::string>()->default_value("0"), "exit this long after the last gradient, once one came (e.g. 2s; 0: run until SIGINT or SIGTERM)");
  // clang-format on
  return options;
}

Status RunGoatWorkerCommand(const po::variables_map& vm, std::ostream& out) {
  Result<GoatJob> job = ReadJob(vm);
  if (!job.ok()) return job.status();
  WorkerRun run;
  SWEMU_RETURN_IF_ERROR(ReadWorkerRun(vm, *job, &run));
  const GoatHostAddr& me = job->workers[run.rank];
  HostNet net;
  SWEMU_RETURN_IF_ERROR(OpenNet(run.place, me, job->udp_port, {me, job->ps}, &net));
  CatchStopSignals();
  GoatWorker worker(*job, run.rank, net.transport(), run.worker);
  net.Add(worker);
  out << "GOAT worker " << me.name << " (" << run.rank << " of " << job->num_workers() << ") at "
      << FormatIpv4(me.ip) << ":" << job->udp_port << ", job " << job->job_id << ": "
      << job->total_fragments() << " fragments of " << job->elements << " values per round, PS "
      << FormatIpv4(job->ps.ip) << ", over " << Over(run.place) << "\n"
      << std::flush;
  for (uint32_t r = 0; r < run.rounds; ++r) {
    Status round = RunRound(*job, run, worker, net, r, out);
    if (!round.ok()) return Status::Error("worker " + me.name + ": " + round.message());
  }
  return Status::Ok();
}

Status RunGoatPsCommand(const po::variables_map& vm, std::ostream& out) {
  Result<GoatJob> job = ReadJob(vm);
  if (!job.ok()) return job.status();
  const GoatHostAddr& me = job->ps;
  HostPlace place{"", vm.count("bind") ? "--bind" : "--job", "the PS " + me.name, me.ip};
  if (vm.count("bind")) {
    SWEMU_RETURN_IF_ERROR(Check("bind", ParseIpv4(Text(vm, "bind")), &place.bind_ip));
  }
  SWEMU_RETURN_IF_ERROR(ReadPort(vm, &place));
  TimeNs idle_exit = 0;
  SWEMU_RETURN_IF_ERROR(Check("idle-exit", ParseDurationOption(Text(vm, "idle-exit")), &idle_exit));
  std::vector<GoatHostAddr> peers = job->workers;
  peers.push_back(me);
  HostNet loop;
  SWEMU_RETURN_IF_ERROR(OpenNet(place, me, job->udp_port, peers, &loop));
  CatchStopSignals();
  GoatPs ps(*job, loop.transport());
  loop.Add(ps);
  out << "GOAT PS " << me.name << " at " << FormatIpv4(me.ip) << ":" << job->udp_port
      << " serving job " << job->job_id << ": " << job->num_workers() << " workers, "
      << (job->k == 0 ? std::string("all") : "K " + std::to_string(job->k)) << " counted, "
      << job->total_fragments() << " fragments of " << job->elements << " values, over "
      << Over(place) << "\n"
      << std::flush;
  uint64_t last_gradients = 0;
  TimeNs last_change = loop.Now();
  auto stop = [&] {
    const uint64_t g = ps.stats().gradients;
    if (g != last_gradients) {
      last_gradients = g;
      last_change = loop.Now();
    }
    return g_stop != 0 || (idle_exit > 0 && g > 0 && loop.Now() - last_change > idle_exit);
  };
  while (!loop.RunUntil(stop, 1'000'000'000)) {
  }
  const GoatPsStats& p = ps.stats();
  out << "PS: " << p.gradients << " gradient packets (" << p.aggregates << " switch aggregates, "
      << p.originals << " workers' own), " << p.completed << " fragment-rounds completed, "
      << p.late << " late, " << p.results_sent << " results sent\n";
  return Status::Ok();
}

}  // namespace swemu
