#pragma once
// A network of real-time swemu processes, one per switch, as the tools' demos run them
// (swemu-goat demo, swemu-plink demo): each switch's config (every host port a net_vhost
// vhost-user socket; each link between two switches a vhost-user socket on the switch started
// first and net_virtio_user on the other, so the switches start in the network's order), the
// devargs a host process attaches with, and the processes: started in order, each waited for
// (its control socket and its vhost-user sockets), asked over their control sockets, stopped in
// reverse order (virtio_user ends first).
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

  // Switches in start order; a link's vhost-user end is on the switch added first.
  void AddSwitch(const std::string& name, uint16_t ports);
  void AddLink(const std::string& a, uint16_t a_port, const std::string& b, uint16_t b_port);

  struct Switch {
    std::string name;
    uint16_t ports = 0;
  };
  const std::vector<Switch>& switches() const { return switches_; }
  const std::string& dir() const { return dir_; }

  std::string VhostSocket(const std::string& sw, uint16_t port) const;
  std::string ControlSocket(const std::string& sw) const;
  std::string IniPath(const std::string& sw) const;
  // The sockets switch `sw` serves (every port but a link's later end).
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
  // (switch, port) of a link's later end -> the earlier end's socket.
  std::map<std::pair<std::string, uint16_t>, std::string> client_path_;
};

// The network's swemu processes.
class SwemuProcesses {
 public:
  SwemuProcesses() = default;
  ~SwemuProcesses();  // stops whatever still runs
  SwemuProcesses(const SwemuProcesses&) = delete;
  SwemuProcesses& operator=(const SwemuProcesses&) = delete;

  // Starts `binary --config <sw>.ini --control-socket <sw>-control.sock -- <eal_args>` for every
  // switch in order (its log <sw>.log), removing stale sockets first, and waits up to
  // `ready_timeout` for each one's control socket and served sockets before starting the next.
  // Errors name the switch.
  Status Start(const SwemuNetwork& network, const std::string& binary,
               const std::vector<std::string>& eal_args,
               std::chrono::milliseconds ready_timeout = std::chrono::seconds(20));
  std::size_t size() const { return procs_.size(); }
  const std::string& name(std::size_t s) const { return names_[s]; }
  // One control command to switch `s`: the reply body, or the error line.
  Result<std::string> Command(std::size_t s, const std::string& line) const;
  // SIGINT to each, in reverse order, waiting up to `timeout` each; the first failure (a switch
  // that did not stop, or exited with a status other than 0: its log named).
  Status Stop(std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  std::vector<std::unique_ptr<SwemuProcess>> procs_;
  std::vector<std::string> names_;
  std::vector<std::string> control_;
};

}  // namespace swemu
