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
                           uint16_t b_port) {
  const bool a_first = order_[a] < order_[b];
  const std::string& server = a_first ? a : b;
  const uint16_t server_port = a_first ? a_port : b_port;
  client_path_[{a_first ? b : a, a_first ? b_port : a_port}] = VhostSocket(server, server_port);
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
      if (!client_path_.contains({sw, p})) served.push_back(VhostSocket(sw, p));
    }
  }
  return served;
}

LoadedSwitchConfig SwemuNetwork::ConfigOf(const std::string& sw, LoadedSwitchConfig config) const {
  uint16_t ports = 0;
  for (const Switch& s : switches_) ports = s.name == sw ? s.ports : ports;
  config.config.name = sw;
  config.config.num_ports = ports;
  config.eal_args = "--no-pci --file-prefix " + file_prefix_ + "-" + sw;
  config.port_devargs.clear();
  for (uint16_t p = 0; p < ports; ++p) {
    const auto client = client_path_.find({sw, p});
    const std::string n = std::to_string(p);
    config.port_devargs.emplace_back(
        p, client != client_path_.end()
               ? "net_virtio_user" + n + ",path=" + client->second + ",queues=1,queue_size=1024"
               : "net_vhost" + n + ",iface=" + VhostSocket(sw, p) + ",queues=1");
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
                             const std::vector<std::string>& eal_args,
                             std::chrono::milliseconds ready_timeout) {
  for (const SwemuNetwork::Switch& sw : network.switches()) {
    const std::string control = network.ControlSocket(sw.name);
    std::filesystem::remove(control);
    std::vector<std::string> ready = {control};
    for (const std::string& sock : network.ServedSockets(sw.name)) {
      std::filesystem::remove(sock);
      ready.push_back(sock);
    }
    std::vector<std::string> args = {"--config", network.IniPath(sw.name), "--control-socket",
                                     control, "--"};
    args.insert(args.end(), eal_args.begin(), eal_args.end());
    auto proc = std::make_unique<SwemuProcess>();
    Status started = proc->Start(binary, args, network.dir() + "/" + sw.name + ".log");
    if (started.ok()) started = proc->WaitForPaths(ready, ready_timeout);
    if (!started.ok()) return Status::Error(sw.name + ": " + started.message());
    procs_.push_back(std::move(proc));
    names_.push_back(sw.name);
    control_.push_back(control);
  }
  return Status::Ok();
}

Result<std::string> SwemuProcesses::Command(std::size_t s, const std::string& line) const {
  return procs_[s]->Command(control_[s], line);
}

Status SwemuProcesses::Stop(std::chrono::milliseconds timeout) {
  Status first = Status::Ok();
  for (std::size_t i = procs_.size(); i-- > 0;) {
    Result<int> status = procs_[i]->Stop(timeout);
    if (!first.ok()) continue;
    if (!status.ok()) {
      first = Status::Error(names_[i] + ": " + status.message());
    } else if (*status != 0) {
      first = Status::Error(names_[i] + ": swemu exited with status " + std::to_string(*status) +
                            " (log: " + procs_[i]->log_path() + ")");
    }
  }
  procs_.clear();
  names_.clear();
  control_.clear();
  return first;
}

}  // namespace swemu
