// `swemu-dlcp realtime`: the incast of DLCP's tests in real time, as a smoke test of the whole
// path: a swemu running the dlcp program on vhost-user ports (a child process), and DLCP hosts
// on virtio_user ports in this process. `senders` hosts each send one tensor to one receiver
// whose port is shaped; the senders alternate front-layer and back-layer tags. Prints each
// flow's completion time, what the receiver held when its bound was met, and the switch's drops.
#include "tools/dlcp/dlcp_realtime.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hostlib/dlcp/host.h"
#include "hostlib/dpdk/dpdk_host.h"
#include "hostlib/dpdk/host_runner.h"
#include "pipeline/control/units.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "swemu/dpdk/eal.h"
#include "swemu/switch_config_writer.h"
#include "hostlib/testbed/swemu_process.h"

namespace swemu {
namespace {

MacAddr Mac(uint32_t i) { return MacAddr::FromU64(0x020000000000ull | (i + 1)); }
Ipv4Addr Ip(uint32_t i) { return (10u << 24) | (i + 1); }
std::string Socket(const std::string& dir, uint32_t p) {
  return dir + "/p" + std::to_string(p) + ".sock";
}

// Where the run's files go and how its ports are numbered.
struct RealtimeLayout {
  std::string dir;     // absolute
  std::string prefix;  // the EAL file prefixes'
  uint32_t ports = 0;  // the senders', then the receiver's
  uint32_t receiver = 0;
  uint64_t receiver_bps = 0;  // --receiver-rate
};

// The switch's config: dlcp on a vhost-user port per host in l.dir, unshaped but for the
// receiver's port, shaped from the switch's creation.
std::string SwitchIni(const RealtimeLayout& l) {
  const uint32_t ports = l.ports;
  LoadedSwitchConfig ini;
  ini.config.name = "dlcp";
  ini.config.num_ports = static_cast<uint16_t>(ports);
  ini.config.program = "dlcp";
  ini.startup_script = l.dir + "/dlcp.cli";
  ini.config.tm.port_rate_bps = 0;
  ini.config.tm.port_rates.push_back({static_cast<PortId>(l.receiver), l.receiver_bps});
  ini.eal_args = "--no-pci --file-prefix " + l.prefix + "-sw";
  ini.mbufs = 16383;
  ini.mbuf_cache = 256;
  for (uint32_t p = 0; p < ports; ++p) {
    ini.port_devargs.emplace_back(
        p, "net_vhost" + std::to_string(p) + ",iface=" + Socket(l.dir, p) + ",queues=1");
  }
  return FormatSwitchConfig(ini);
}

// Checks the options and makes the output directory.
Result<RealtimeLayout> CheckRealtime(const DlcpRealtimeOptions& o) {
  if (o.senders < 1 || o.senders > 8) return Status::Error("--senders: 1..8");
  if (o.bytes < 4 || o.bytes > (64u << 20)) return Status::Error("--bytes: 4 B..64 MiB");
  if (!(o.bound >= 0 && o.bound < 1)) return Status::Error("--bound: in [0, 1)");
  Result<uint64_t> receiver_bps = ParseRate(o.receiver_rate);
  if (!receiver_bps.ok() || *receiver_bps == 0 || !ValidatePortRate(*receiver_bps).ok()) {
    return Status::Error("--receiver-rate: must be a rate > 0");
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec || !std::filesystem::is_directory(o.out_dir)) {
    return Status::Error("--out-dir " + o.out_dir + ": cannot make it a directory");
  }
  RealtimeLayout l;
  l.dir = std::filesystem::absolute(o.out_dir).string();
  l.prefix = "swemu-dlcp-" + std::to_string(getpid());
  l.ports = o.senders + 1;
  l.receiver = o.senders;
  l.receiver_bps = *receiver_bps;
  if (Socket(l.dir, 9).size() > 107) {
    return Status::Error("--out-dir " + l.dir + ": too long for sockets");
  }
  return l;
}

// Writes the switch's config and startup script, starts swemu and waits for its sockets.
Status StartSwitch(const DlcpRealtimeOptions& o, const RealtimeLayout& l,
                   const std::string& control, SwemuProcess& sw) {
  std::error_code ec;
  std::ostringstream cli;
  for (uint32_t p = 0; p < l.ports; ++p) {
    cli << "table_add dmac forward " << FormatMac(Mac(p)) << " => " << p << "\n";
    std::filesystem::remove(Socket(l.dir, p), ec);
  }
  SWEMU_RETURN_IF_ERROR(WriteTextFile(l.dir + "/dlcp.cli", cli.str()));
  SWEMU_RETURN_IF_ERROR(WriteTextFile(l.dir + "/dlcp.ini", SwitchIni(l)));
  std::filesystem::remove(control, ec);
  const std::vector<std::string> args =
      WithDpdkLog({"--config", l.dir + "/dlcp.ini", "--control-socket", control, "--", "-l", "0",
                   "--no-huge", "-m", "256"},
                  o.verbose);
  SWEMU_RETURN_IF_ERROR(
      sw.Start(o.swemu_binary.empty() ? SelfDirectory() + "/../swemu/swemu" : o.swemu_binary, args,
               l.dir + "/swemu.log"));
  std::vector<std::string> ready = {control};
  for (uint32_t p = 0; p < l.ports; ++p) ready.push_back(Socket(l.dir, p));
  return sw.WaitForPaths(ready, std::chrono::seconds(20));
}

// This process's EAL and a virtio_user port per host, on the switch's vhost-user sockets.
Result<std::unique_ptr<DpdkHost>> OpenHostPorts(const DlcpRealtimeOptions& o,
                                                const RealtimeLayout& l, std::ostream& out) {
  SWEMU_RETURN_IF_ERROR(DpdkHost::InitEal(WithDpdkLog({"-l", "1", "--no-pci", "--no-huge", "-m",
                                                       "512", "--file-prefix", l.prefix + "-hosts"},
                                                      o.verbose),
                                          out));
  DpdkHostConfig config;
  config.mbufs = 8191;
  for (uint32_t p = 0; p < l.ports; ++p) {
    config.ports.push_back("net_virtio_user" + std::to_string(p) + ",path=" + Socket(l.dir, p) +
                           ",queues=1,queue_size=1024");
  }
  return DpdkHost::Open(config);
}

// The hosts and what the senders send.
struct Incast {
  std::vector<std::unique_ptr<DlcpHost>> hosts;
  std::vector<std::vector<float>> tensors;
};

// A DLCP host per port; each sender starts its tensor, front and back layers in turn.
Status StartIncast(const DlcpRealtimeOptions& o, const RealtimeLayout& l, DpdkHost& dpdk,
                   HostRunner& runner, Incast& incast) {
  DlcpHostOptions options;
  options.rate.link_bps = o.host_bps;
  std::vector<std::unique_ptr<DlcpHost>>& hosts = incast.hosts;
  for (uint32_t p = 0; p < l.ports; ++p) {
    hosts.push_back(std::make_unique<DlcpHost>(dpdk.port(p), Mac(p), Ip(p), options));
    runner.Add(*hosts.back(), dpdk.port(p));
  }
  std::vector<std::vector<float>>& tensors = incast.tensors;
  tensors.resize(o.senders);
  const uint32_t receiver = l.receiver;
  for (uint32_t s = 0; s < o.senders; ++s) {
    tensors[s].resize(o.bytes / 4);
    for (std::size_t i = 0; i < tensors[s].size(); ++i) {
      tensors[s][i] = std::sin(static_cast<float>(i + s) * 0.37f) * (1.0f + s);
    }
    SWEMU_RETURN_IF_ERROR(
        hosts[s]->Send(runner.NowNs(), TcpEnd{Mac(receiver), Ip(receiver), kDlcpDefaultUdpPort},
                       100 + s, tensors[s], LayerPriority(s % 2 == 0 ? 0 : 53, 54), o.bound));
  }
  return Status::Ok();
}

// Every sender's flow is done and confirmed at the receiver.
bool IncastFinished(const DlcpRealtimeOptions& o, const RealtimeLayout& l, const Incast& incast) {
  for (uint32_t s = 0; s < o.senders; ++s) {
    const DlcpRecvFlow* f = incast.hosts[l.receiver]->Received(Ip(s), 100 + s);
    if (!incast.hosts[s]->send_flows().at(0)->done() || f == nullptr || f->confirm_ns == kNever) {
      return false;
    }
  }
  return true;
}

// The run's line, and a line per sender when the run completed.
void PrintIncast(const DlcpRealtimeOptions& o, const RealtimeLayout& l, const Incast& incast,
                 bool completed, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "swemu-dlcp realtime: %u senders x %.0f KB into one port shaped to %s, senders "
                "paced at %.1f Gbit/s, bound %.0f%%\n",
                o.senders, o.bytes / 1e3, o.receiver_rate.c_str(), o.host_bps / 1e9, o.bound * 100);
  out << line;
  for (uint32_t s = 0; s < o.senders && completed; ++s) {
    const DlcpSendFlow& f = *incast.hosts[s]->send_flows().at(0);
    const DlcpRecvFlow* r = incast.hosts[l.receiver]->Received(Ip(s), 100 + s);
    std::snprintf(line, sizeof(line),
                  "  sender %u (%s layers): %.3f ms, bound met with %.1f%% of the tensor, %llu "
                  "packets, %llu resent, %llu retransmission requests, %u halvings\n",
                  s, s % 2 == 0 ? "front" : "back", (f.finish_ns - f.start_ns) / 1e6,
                  100.0 * r->bytes_at_bound / o.bytes, static_cast<unsigned long long>(f.packets),
                  static_cast<unsigned long long>(f.resent_packets),
                  static_cast<unsigned long long>(f.retransmit_requests), f.halvings);
    out << line;
  }
}

}  // namespace

Status RunDlcpRealtime(const DlcpRealtimeOptions& o, std::ostream& out, bool* bad_input) {
  *bad_input = true;
  Result<RealtimeLayout> layout = CheckRealtime(o);
  if (!layout.ok()) return layout.status();
  const RealtimeLayout& l = *layout;
  *bad_input = false;

  const std::string control = l.dir + "/swemu.sock";
  SwemuProcess sw;
  SWEMU_RETURN_IF_ERROR(StartSwitch(o, l, control, sw));
  Result<std::unique_ptr<DpdkHost>> dpdk = OpenHostPorts(o, l, out);
  if (!dpdk.ok()) return dpdk.status();
  HostRunner runner;
  Incast incast;
  SWEMU_RETURN_IF_ERROR(StartIncast(o, l, **dpdk, runner, incast));
  Status run = runner.RunUntil([&] { return IncastFinished(o, l, incast); }, o.timeout_ns,
                               [] { return std::string("DLCP flows"); });
  PrintIncast(o, l, incast, run.ok(), out);
  Result<std::string> drops = sw.Command(control, "show drops");
  if (drops.ok()) out << "switch " << *drops;
  const Status closed = (*dpdk)->Close();
  dpdk->reset();
  DpdkHost::CleanupEal();
  Result<int> stopped = sw.Stop(std::chrono::seconds(10));
  SWEMU_RETURN_IF_ERROR(run);
  SWEMU_RETURN_IF_ERROR(closed);
  if (!stopped.ok()) return stopped.status();
  if (*stopped != 0)
    return Status::Error("swemu exited with status " + std::to_string(*stopped) + " (see " +
                         sw.log_path() + ")");
  return Status::Ok();
}

}  // namespace swemu
