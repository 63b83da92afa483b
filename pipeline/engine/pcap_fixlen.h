#pragma once
// Frames of a snap-length-cut capture (caplen < wire length, e.g. `tcpdump -s 96`): their IPv4
// total length still names the bytes that were on the wire, so a switch drops them as
// ipv4_bad_total_length. tcpreplay's choice of what to do, shared by `swemu --offline` and
// swemu-replay (--fixlen):
//   none  - send the captured bytes as they are (the default);
//   pad   - pad the frame with zero bytes to its wire length;
//   trunc - keep the captured bytes and rewrite the IPv4 total length, the UDP length and the
//           IPv4, UDP, TCP and ICMP checksums to match them.
#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline/core/status.h"
#include "pipeline/engine/pcap_io.h"

namespace swemu {

enum class Fixlen : uint8_t { kNone, kPad, kTrunc };

// "none", "pad" or "trunc"; the error lists the three.
Result<Fixlen> ParseFixlen(std::string_view text);
const char* FixlenName(Fixlen mode);

// Longest frame `pad` pads to (pcap's own snap length); longer wire lengths are left as captured.
inline constexpr uint32_t kFixlenMaxPadLen = PcapWriter::kSnapLen;

struct FixlenCounts {
  uint64_t frames = 0;     // frames looked at
  uint64_t cut_short = 0;  // captured fewer bytes than the wire length
  uint64_t fixed = 0;      // cut short, and padded or rewritten
  // Cut short but left as captured: with none, all of them; with trunc, a frame that is not
  // IPv4, is cut inside its IPv4 header, or lost only bytes past its IPv4 packet (the Ethernet
  // padding); with pad, a wire length above kFixlenMaxPadLen.
  uint64_t left_short = 0;

  void Add(const FixlenCounts& other) {
    frames += other.frames;
    cut_short += other.cut_short;
    fixed += other.fixed;
    left_short += other.left_short;
  }
};

// Applies `mode` to one record in place (record->bytes may grow, with pad) and counts it. A
// record that is whole (bytes.size() >= orig_len) is never changed.
void FixFrameLength(Fixlen mode, PcapRecord* record, FixlenCounts* counts);

// Rewrites an IPv4 frame's lengths and checksums to its first `len` bytes (the trunc mode); false
// (frame unchanged) when the frame is not IPv4, `len` ends inside the IPv4 header, or the IPv4
// packet already fits. The frame must hold at least `len` bytes.
bool TruncateFrameHeaders(uint8_t* frame, uint32_t len);

// One line for a tool's summary, without a newline; empty when the mode is none and no frame was
// cut short.
std::string FixlenSummary(Fixlen mode, const FixlenCounts& counts);

}  // namespace swemu
