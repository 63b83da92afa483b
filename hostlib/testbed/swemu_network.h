#pragma once
// A network of real-time switches in ONE swemu process, as the tools' demos run them
// (swemu-goat demo, swemu-plink demo): each switch's config (every host port a net_vhost
// vhost-user socket, device names unique in the process; each link between two switches a
// swemu_link of rings in the process, end 0 on the switch added first), the devargs a host
// process attaches with, and the process: `swemu --config <first>.ini --also-switch
// <other>.ini=<control> ...` on one lcore (docs/cli.md "Several switches in one process"),
// waited for (every control socket and vhost-user socket), asked over each switch's control
// socket, stopped once.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/status.h"
#include "swemu/switch_config.h"
#include "hostlib/testbed/swemu_process.h"

namespace swemu {

class SwemuNetwork {
 public:
  // Sockets are <socket_dir>/<socket_stem>-<switch>-port<N>.sock; each switch's EAL
  // --file-prefix is <file_prefix>-<switch>; configs, logs and control sockets go in `dir`
  // (<switch>.ini, <switch>.log, <switch>-control.sock).
  SwemuNetwork(std::string dir, std::string socket_dir, std::string socket_stem,
               std::string file_prefix);

  // Switches in the process's order (the first is --config's); link k is swemu_link:l<k>, end 0
  // on `a`, end 1 on `b`. `wire` (a link's delay and loss) becomes both ends' [port.N] delay and
  // loss, so the rings keep the link's delay as its rate (the startup scripts shape the rate).
  void AddSwitch(const std::string& name, uint16_t ports);
  void AddLink(const std::string& a, uint16_t a_port, const std::string& b, uint16_t b_port,
               PortWireEffects wire = {});

  struct Switch {
    std::string name;
    uint16_t ports = 0;
  };
  const std::vector<Switch>& switches() const { return switches_; }
  const std::string& dir() const { return dir_; }

  std::string VhostSocket(const std::string& sw, uint16_t port) const;
  std::string ControlSocket(const std::string& sw) const;
  std::string IniPath(const std::string& sw) const;
  // The vhost-user sockets switch `sw` serves (every port but a link's end).
  std::vector<std::string> ServedSockets(const std::string& sw) const;
  // Switch `sw`'s config: `config` (its program, startup script, [program], [tm], [dpdk]) with
  // the network's part set: name, ports, [eal] args (--no-pci, the switch's --file-prefix) and
  // every port's devargs.
  LoadedSwitchConfig ConfigOf(const std::string& sw, LoadedSwitchConfig config) const;
  // Writes ConfigOf(sw, config) as IniPath(sw) (swemu/switch_config_writer.h): `header` first,
  // its `cli` relative to dir(), so the directory can move.
  Status WriteSwitchIni(const std::string& sw, const LoadedSwitchConfig& config,
                        const std::string& header) const;
  // The devargs of a host process's virtio_user device `index` on port `port` of `sw`.
  std::string HostDevargs(uint32_t index, const std::string& sw, uint16_t port) const;

 private:
  std::string dir_, socket_dir_, socket_stem_, file_prefix_;
  std::vector<Switch> switches_;
  std::map<std::string, uint32_t> order_;
  // (switch, port) of a link's end -> its swemu_link devargs.
  std::map<std::pair<std::string, uint16_t>, std::string> link_devargs_;
  std::map<std::pair<std::string, uint16_t>, PortWireEffects> link_wire_;  // non-zero only
};

// The network's swemu process (one, running every switch).
class SwemuProcesses {
 public:
  SwemuProcesses() = default;
  ~SwemuProcesses();  // stops whatever still runs
  SwemuProcesses(const SwemuProcesses&) = delete;
  SwemuProcesses& operator=(const SwemuProcesses&) = delete;

  // Starts `binary --config <first>.ini --control-socket <first>-control.sock --also-switch
  // <sw>.ini=<sw>-control.sock ... [--busy-poll] -- <eal_args>` (log swemu.log in the network's
  // dir), removing stale sockets first, and waits up to `ready_timeout` for every control socket
  // and served socket.
  Status Start(const SwemuNetwork& network, const std::string& binary,
               const std::vector<std::string>& eal_args, bool busy_poll,
               std::chrono::milliseconds ready_timeout = std::chrono::seconds(20));
  // Switches (not processes).
  std::size_t size() const { return names_.size(); }
  // The one process (after Start): its pid, for HostRunnerOptions::busy_peers.
  const SwemuProcess& process() const { return *proc_; }
  const std::string& name(std::size_t s) const { return names_[s]; }
  // One control command to switch `s`: the reply body, or the error line.
  Result<std::string> Command(std::size_t s, const std::string& line) const;
  // SIGINT to the process, waiting up to `timeout`; a failure (it did not stop, or exited with a
  // status other than 0: its log named).
  Status Stop(std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  std::unique_ptr<SwemuProcess> proc_;
  std::vector<std::string> names_;
  std::vector<std::string> control_;
};

}  // namespace swemu
