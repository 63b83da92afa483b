#pragma once
// The plug-in point of swemu-analyze: one ProtocolAnalyzer per swemu program header (ATP, PCN,
// DLCP, GOAT; PLink will add its own). A protocol decodes its header with the definitions in
// pipeline/wire/, names its fields for the per-packet table (the same names as the Wireshark
// dissector, tools/wireshark/swemu.lua, and docs/wire.md), and keeps its own per-object summary.
// protocols.cc is the one place protocols are registered.
#include <boost/program_options.hpp>
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/json_writer.h"
#include "pipeline/core/status.h"
#include "tools/analyze/decoded_frame.h"

namespace swemu {

class ProtocolAnalyzer {
 public:
  virtual ~ProtocolAnalyzer() = default;

  // Decodes frame.app (the UDP payload) and accounts the packet. Returns "" or the reason the
  // header is malformed (a frame cut by the snap length is not). Remembers the fields for
  // WriteFields().
  virtual std::string_view Consume(const DecodedFrame& frame) = 0;
  // The last consumed frame's fields, one CSV cell each (no leading comma), in the order of
  // the entry's `fields`; an empty cell for a field that was not captured.
  virtual void WriteFields(std::ostream& out) const = 0;

  // After the last frame: the per-object summary as text, JSON and CSV files in `dir` (named
  // <protocol>_*.csv, with a `run` column holding `run`).
  virtual void WriteText(std::ostream& out) const = 0;
  virtual void WriteJson(JsonWriter& json) const = 0;
  virtual Status WriteCsv(const std::string& dir, std::string_view run, bool header) const = 0;

  // A protocol read on UDP datagrams both to and from one port, which its own option sets
  // (PCN: the worker's START goes to it, the PS's ACK comes from it): that port. 0, the default:
  // the protocol is read on datagrams to the ports of --udp-port.
  virtual uint16_t BothWaysUdpPort() const { return 0; }
  // A protocol read on UDP datagrams to one port, which its own option sets (DLCP, --dlcp-port):
  // that port. 0, the default: as above.
  virtual uint16_t OwnUdpPort() const { return 0; }
};

struct ProtocolEntry {
  std::string_view name;  // "atp": the option prefix and the field prefix
  // The UDP destination port of --udp-port's default; 0: none, the protocol sets its port with
  // its own option --<name>-port (OwnUdpPort, or BothWaysUdpPort).
  uint16_t default_udp_port;
  std::vector<std::string> (*fields)();  // per-packet field names, "atp.seq", ...
  // The protocol's own options (e.g. --atp-aggregators); may add none.
  void (*add_options)(boost::program_options::options_description& options);
  Result<std::unique_ptr<ProtocolAnalyzer>> (*make)(
      const boost::program_options::variables_map& vm);
};

// Every protocol swemu-analyze knows, in the order of the per-packet table's columns.
std::span<const ProtocolEntry> Protocols();

}  // namespace swemu
