#include "hostlib/testbed/swemu_network.h"

#include <filesystem>

#include "swemu/switch_config_writer.h"

namespace swemu {

SwemuNetwork::SwemuNetwork(std::string dir, std::string socket_dir, std::string socket_stem,
                           std::string file_prefix)
    : dir_(std::move(dir)),
      socket_dir_(std::move(socket_dir)),
      socket_stem_(std::move(socket_stem)),
      file_prefix_(std::move(file_prefix)) {}

void SwemuNetwork::AddSwitch(const std::string& name, uint16_t ports) {
  order_[name] = static_cast<uint32_t>(switches_.size());
  switches_.push_back({name, ports});
}

void SwemuNetwork::AddLink(const std::string& a, uint16_t a_port, const std::string& b,
                           uint16_t b_port, PortWireEffects wire) {
  const std::string name = "swemu_link:l" + std::to_string(link_devargs_.size() / 2);
  link_devargs_[{a, a_port}] = name + ":0";
  link_devargs_[{b, b_port}] = name + ":1";
  if (wire.delay_ns != 0 || wire.loss != 0) {
    link_wire_[{a, a_port}] = wire;
    link_wire_[{b, b_port}] = wire;
  }
}

std::string SwemuNetwork::VhostSocket(const std::string& sw, uint16_t port) const {
  return socket_dir_ + "/" + socket_stem_ + "-" + sw + "-port" + std::to_string(port) + ".sock";
}

std::string SwemuNetwork::ControlSocket(const std::string& sw) const {
  return dir_ + "/" + sw + "-control.sock";
}

std::string SwemuNetwork::IniPath(const std::string& sw) const { return dir_ + "/" + sw + ".ini"; }

std::vector<std::string> SwemuNetwork::ServedSockets(const std::string& sw) const {
  std::vector<std::string> served;
  for (const Switch& s : switches_) {
    if (s.name != sw) continue;
    for (uint16_t p = 0; p < s.ports; ++p) {
      if (!link_devargs_.contains({sw, p})) served.push_back(VhostSocket(sw, p));
    }
  }
  return served;
}

LoadedSwitchConfig SwemuNetwork::ConfigOf(const std::string& sw, LoadedSwitchConfig config) const {
  // Device names are unique in the process: switch sw's port p is net_vhost<first + p>, first
  // the ports of the switches before it.
  uint16_t ports = 0;
  uint32_t first = 0;
  bool before = true;
  for (const Switch& s : switches_) {
    before = before && s.name != sw;
    if (before) first += s.ports;
    if (s.name == sw) ports = s.ports;
  }
  config.config.name = sw;
  config.config.num_ports = ports;
  // Only the first switch's [eal] is read (--also-switch); each names its own prefix all the same.
  config.eal_args = "--no-pci --file-prefix " + file_prefix_ + "-" + sw;
  config.port_devargs.clear();
  for (uint16_t p = 0; p < ports; ++p) {
    const auto wire = link_wire_.find({sw, p});
    if (wire != link_wire_.end()) config.port_effects[p] = wire->second;
    const auto link = link_devargs_.find({sw, p});
    config.port_devargs.emplace_back(
        p, link != link_devargs_.end() ? link->second
                                        : "net_vhost" + std::to_string(first + p) +
                                              ",iface=" + VhostSocket(sw, p) + ",queues=1");
  }
  return config;
}

Status SwemuNetwork::WriteSwitchIni(const std::string& sw, const LoadedSwitchConfig& config,
                                    const std::string& header) const {
  return WriteSwitchConfig(ConfigOf(sw, config), IniPath(sw),
                           {.header = header, .cli_relative_to = dir_});
}

std::string SwemuNetwork::HostDevargs(uint32_t index, const std::string& sw, uint16_t port) const {
  return "net_virtio_user" + std::to_string(index) + ",path=" + VhostSocket(sw, port) +
         ",queues=1,queue_size=1024";
}

SwemuProcesses::~SwemuProcesses() { (void)Stop(); }

Status SwemuProcesses::Start(const SwemuNetwork& network, const std::string& binary,
                             const std::vector<std::string>& eal_args, bool busy_poll,
                             std::chrono::milliseconds ready_timeout) {
  std::vector<std::string> args, ready;
  for (const SwemuNetwork::Switch& sw : network.switches()) {
    const std::string control = network.ControlSocket(sw.name);
    std::filesystem::remove(control);
    ready.push_back(control);
    for (const std::string& sock : network.ServedSockets(sw.name)) {
      std::filesystem::remove(sock);
      ready.push_back(sock);
    }
    if (args.empty()) {
      args = {"--config", network.IniPath(sw.name), "--control-socket", control};
    } else {
      args.insert(args.end(), {"--also-switch", network.IniPath(sw.name) + "=" + control});
    }
    names_.push_back(sw.name);
    control_.push_back(control);
  }
  if (busy_poll) args.push_back("--busy-poll");
  args.push_back("--");
  args.insert(args.end(), eal_args.begin(), eal_args.end());
  const std::string log = network.dir() + "/swemu.log";
  std::error_code ignored;  // a new log per run
  std::filesystem::remove(log, ignored);
  proc_ = std::make_unique<SwemuProcess>();
  Status started = proc_->Start(binary, args, log);
  if (started.ok()) started = proc_->WaitForPaths(ready, ready_timeout);
  return started;
}

Result<std::string> SwemuProcesses::Command(std::size_t s, const std::string& line) const {
  return proc_->Command(control_[s], line);
}

Status SwemuProcesses::Stop(std::chrono::milliseconds timeout) {
  if (proc_ == nullptr) return Status::Ok();
  Result<int> status = proc_->Stop(timeout);
  Status result = Status::Ok();
  if (!status.ok()) {
    result = Status::Error("swemu: " + status.message());
  } else if (*status != 0) {
    result = Status::Error("swemu exited with status " + std::to_string(*status) +
                           " (log: " + proc_->log_path() + ")");
  }
  proc_.reset();
  names_.clear();
  control_.clear();
  return result;
}

}  // namespace swemu
