#pragma once
// The plug-in point of swemu-analyze: one ProtocolAnalyzer per swemu program header (ATP, PCN,
// DLCP, GOAT, PLink). A protocol decodes its header with the definitions in
// pipeline/wire/, names its fields for the per-packet table (the same names as the Wireshark
// dissector, tools/wireshark/swemu.lua, and docs/wire.md), and keeps its own per-object summary.
// Each protocol's file registers it (SWEMU_REGISTER_PROTOCOL, below): no list names them.
#include <boost/program_options.hpp>
#include <cstddef>
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
  // Its place in Protocols() (the per-packet table's columns, the summaries, --help): lowest
  // first, ties by name. Fixed numbers, so the order never depends on the link order.
  int order;
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

// Every protocol swemu-analyze knows, by ProtocolEntry::order.
std::span<const ProtocolEntry> Protocols();

// Adds a protocol to Protocols(); a second protocol of the same name ends the program with a
// line saying so (a mistake in the code, found at start-up). Called by SWEMU_REGISTER_PROTOCOL.
bool RegisterProtocol(const ProtocolEntry& entry);

// In a protocol's own file (one per file), after its functions, as pipeline/programs' files
// register their programs:
//   SWEMU_REGISTER_PROTOCOL({.order = 10, .name = "atp", .default_udp_port = ...,
//                            .fields = ..., .add_options = ..., .make = ...});
// swemu_analyze is an object library, so no registration is dropped by the linker.
#define SWEMU_REGISTER_PROTOCOL(...)                             \
  [[maybe_unused]] static const bool swemu_protocol_registered = \
      ::swemu::RegisterProtocol(::swemu::ProtocolEntry __VA_ARGS__)

// Helpers shared by the protocols' files (protocols.cc).

// --<name> N, the UDP port of a protocol read on its own port (OwnUdpPort, BothWaysUdpPort), and
// its value, 1..65535 ("--<name>: ..." when it is not).
void AddUdpPortOption(boost::program_options::options_description& options, const char* name,
                      uint16_t default_port, const char* help);
Result<uint16_t> UdpPortOption(const boost::program_options::variables_map& vm,
                               const std::string& name);

// A fixed header of header_len bytes at frame.app is cut short in the datagram (malformed). One
// cut only by the capture's snap length is not: it is read as far as it was kept.
bool HeaderTruncated(const DecodedFrame& frame, std::size_t header_len);

// The frames a protocol with a fixed header does not account: malformed ones by reason (names in
// the order they are checked) and headers cut by the capture's snap length.
class HeaderTally {
 public:
  explicit HeaderTally(std::span<const std::string_view> reasons)
      : reasons_(reasons), malformed_(reasons.size()) {}
  // Counts the reason; returns its name, for Consume().
  std::string_view Malformed(std::size_t reason) {
    ++malformed_[reason];
    return reasons_[reason];
  }
  void Snapped() { ++snapped_; }
  bool empty() const;  // neither
  // ", N header(s) cut by the capture (not counted)" and "; malformed <reason> <n> ..." (each
  // reason seen), or nothing.
  void WriteText(std::ostream& out) const;
  // "snapped_headers" and "malformed" with every reason.
  void WriteJson(JsonWriter& json) const;

 private:
  std::span<const std::string_view> reasons_;
  std::vector<uint64_t> malformed_;
  uint64_t snapped_ = 0;
};

}  // namespace swemu
