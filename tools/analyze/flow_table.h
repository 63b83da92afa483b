#pragma once
// Per-flow summary of a run: one flow per IPv4 5-tuple (non-IPv4 frames per ethertype), with
// packets, bytes, rate, ECN, the gaps between packets and reordering.
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "pipeline/core/json_writer.h"
#include "pipeline/core/status.h"
#include "tools/analyze/decoded_frame.h"
#include "tools/common/ns_histogram.h"

namespace swemu {

struct FlowKey {
  Ipv4Addr src = 0, dst = 0;
  uint8_t proto = 0;
  uint16_t sport = 0, dport = 0;
  uint16_t ether_type = 0;  // for non-IPv4 frames (then the rest is 0)
  auto Tie() const { return std::tie(src, dst, proto, sport, dport, ether_type); }
  bool operator<(const FlowKey& o) const { return Tie() < o.Tie(); }
  std::string ToString() const;
};

struct FlowStats {
  uint64_t packets = 0;
  uint64_t bytes = 0;  // on the wire (frame length without FCS)
  TimeNs first_ns = 0, last_ns = 0;
  uint64_t ect = 0;  // ECT(0) or ECT(1)
  uint64_t ce = 0;
  uint64_t malformed = 0;
  NsHistogram<0> gaps;  // between consecutive packets, ns (one bucket per power of two)
  // TCP: segments starting below the highest sequence already seen (a retransmission or
  // reordering); UDP: IPv4 identification going backwards (reordering, for senders that count
  // it up per packet).
  uint64_t reordered = 0;
  // TCP: segments starting above the next expected sequence number, a hole where bytes were
  // lost before the capture point (or arrive later, reordered).
  uint64_t holes = 0;
  bool have_order = false;
  uint32_t highest = 0;  // TCP: next expected seq; UDP: last IPv4 id
  // Rate over time: (bin, frames, bytes) runs in arrival order, one entry per bin touched.
  struct Bin {
    uint64_t bin, frames, bytes;
  };
  std::vector<Bin> series;

  double RateBps() const;
};

class FlowTable {
 public:
  // `bin`: the frame's time-series bin in the run.
  void Add(const DecodedFrame& frame, uint64_t bin);
  const std::map<FlowKey, FlowStats>& flows() const { return flows_; }

  // Text: the `limit` flows with the most bytes.
  void WriteText(std::ostream& out, std::size_t limit) const;
  void WriteJson(JsonWriter& json) const;
  Status WriteCsv(std::ostream& out, std::string_view run, bool header) const;
  // run,flow,time_s,frames,bytes,throughput_Mbps for the `limit` flows with the most bytes,
  // every bin from the run's start to the flow's last (zeros included).
  void WriteSeriesCsv(std::ostream& out, std::string_view run, TimeNs bin_ns,
                      std::size_t limit) const;

 private:
  std::map<FlowKey, FlowStats> flows_;
};

}  // namespace swemu
