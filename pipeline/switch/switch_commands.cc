#include "pipeline/switch/switch_commands.h"

#include <string>

#include "pipeline/control/units.h"
#include "pipeline/switch/switch.h"

namespace swemu {

Result<std::vector<uint16_t>> ParsePorts(const Switch& sw, std::string_view text) {
  std::vector<uint16_t> ports;
  if (text == "all") {
    for (uint16_t p = 0; p < sw.num_ports(); ++p) ports.push_back(p);
    return ports;
  }
  Result<uint64_t> port = ParseUint(text, 0, sw.num_ports() - 1);
  if (!port.ok()) return Status::Error("port " + port.message());
  ports.push_back(static_cast<uint16_t>(*port));
  return ports;
}

Result<std::vector<int>> ParseQueues(std::string_view text) {
  std::vector<int> queues;
  if (text == "all") {
    for (int q = 0; q < kQueuesPerPort; ++q) queues.push_back(q);
    return queues;
  }
  Result<uint64_t> queue = ParseUint(text, 0, kQueuesPerPort - 1);
  if (!queue.ok()) return Status::Error("queue " + queue.message());
  queues.push_back(static_cast<int>(*queue));
  return queues;
}

Status AddSwitchCommands(Switch& sw, CommandTable& commands) {
  SWEMU_RETURN_IF_ERROR(AddTableCommands(sw, commands));
  SWEMU_RETURN_IF_ERROR(AddTmCommands(sw, commands));
  SWEMU_RETURN_IF_ERROR(AddShowCommands(sw, commands));
  SWEMU_RETURN_IF_ERROR(AddDigestCommands(sw, commands));
  return commands.Add(
      {"help", "", "list every command", 0, 0,
       [&commands](CommandArgs) -> Result<std::string> { return commands.Help(); }});
}

}  // namespace swemu
