#pragma once
// ATP (Lao et al., NSDI '21): the gradient and parameter packet of Figure 2, carried in UDP.
// The one definition of the header: the switch program (pipeline/programs/atp.*), the host
// endpoints (hostlib/atp/) and the tools all use it. docs/wire.md has the byte-by-byte layout
// and every difference from the paper.
//
// Frame: Ethernet | IPv4 | UDP (dst port = the ATP port, default 9000) | AtpHeader (16 B) |
// num_elements x 4 B elements, big-endian. Gradient elements are int32 (two's complement,
// scaled by the worker); parameter packets, and gradients a worker could not scale into int32,
// carry IEEE-754 float32 bit patterns instead (kAtpFlagFloat).
//
// Bitmap: one job-wide worker bitmap (bit w = worker w's gradient is included in this packet's
// values), at most kAtpMaxWorkers workers per job. Each edge switch counts the workers it has
// aggregated and completes at its fan-in: fan_in0 at the worker's first edge switch (its
// rack's workers; W when the worker is under the PS's switch), fan_in1 at the second (W, the
// PS's switch; 0 when there is no second edge switch).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "pipeline/core/hash.h"
#include "pipeline/wire/byte_order.h"

namespace swemu {

inline constexpr std::size_t kAtpHeaderLen = 16;
inline constexpr uint16_t kAtpDefaultUdpPort = 9000;
inline constexpr uint8_t kAtpVersion = 1;
inline constexpr uint32_t kAtpMaxWorkers = 32;       // bits in the bitmap
inline constexpr uint16_t kAtpDefaultElements = 64;  // int32 elements per packet
// Aggregators in an atp switch unless [program] aggregators says otherwise; hosts and tools
// that predict the aggregator hash (AtpAggregatorIndex) assume it too.
inline constexpr uint32_t kAtpDefaultAggregators = 16384;
// Ethernet 14 + IPv4 20 + UDP 8: where the ATP header starts in an untagged frame.
inline constexpr std::size_t kAtpHeaderOffset = 14 + 20 + 8;

// ver_flags: bits 7-6 version; the rest are flags.
inline constexpr uint8_t kAtpVersionShift = 6;
inline constexpr uint8_t kAtpFlagParam = 1 << 5;   // parameter packet (the ACK) from the PS
inline constexpr uint8_t kAtpFlagResend = 1 << 4;  // retransmitted (or pushed past a collision)
inline constexpr uint8_t kAtpFlagEdge = 1 << 3;    // edge switch id: 0 first, 1 second
inline constexpr uint8_t kAtpFlagEcn = 1 << 2;     // congestion seen (echoed by the PS)
// A switch sum overflowed int32: the values are invalid.
inline constexpr uint8_t kAtpFlagOverflow = 1 << 1;
inline constexpr uint8_t kAtpFlagFloat = 1 << 0;  // elements are float32, not scaled int32

struct __attribute__((packed)) AtpHeader {
  uint8_t ver_flags;
  uint8_t worker_id;  // 0 .. kAtpMaxWorkers - 1
  uint8_t fan_in0;    // workers aggregated at the first edge switch
  uint8_t fan_in1;    // workers aggregated at the second edge switch (0: none)
  uint8_t job_id[2];  // 1 .. 65535 (0 is "no job": an empty aggregator)
  uint8_t num_elements[2];
  uint8_t seq[4];     // element sequence number; unique across a job's rounds
  uint8_t bitmap[4];  // workers whose gradients are in this packet

  uint8_t Version() const noexcept { return ver_flags >> kAtpVersionShift; }
  uint8_t Flags() const noexcept { return ver_flags & 0x3F; }
  bool Has(uint8_t flag) const noexcept { return (ver_flags & flag) != 0; }
  uint8_t EdgeId() const noexcept { return Has(kAtpFlagEdge) ? 1 : 0; }
  uint16_t JobId() const noexcept { return LoadBe16(job_id); }
  uint16_t NumElements() const noexcept { return LoadBe16(num_elements); }
  uint32_t Seq() const noexcept { return LoadBe32(seq); }
  uint32_t Bitmap() const noexcept { return LoadBe32(bitmap); }
  uint8_t FanIn(uint8_t edge) const noexcept { return edge == 0 ? fan_in0 : fan_in1; }

  void Set(uint8_t flag) noexcept { ver_flags |= flag; }
  void Clear(uint8_t flag) noexcept { ver_flags &= static_cast<uint8_t>(~flag); }
  void FlipEdge() noexcept { ver_flags ^= kAtpFlagEdge; }
  void SetJobId(uint16_t v) noexcept { StoreBe16(job_id, v); }
  void SetNumElements(uint16_t v) noexcept { StoreBe16(num_elements, v); }
  void SetSeq(uint32_t v) noexcept { StoreBe32(seq, v); }
  void SetBitmap(uint32_t v) noexcept { StoreBe32(bitmap, v); }

  // Elements follow the header directly.
  uint8_t* Elements() noexcept { return reinterpret_cast<uint8_t*>(this) + kAtpHeaderLen; }
  const uint8_t* Elements() const noexcept {
    return reinterpret_cast<const uint8_t*>(this) + kAtpHeaderLen;
  }
};
static_assert(sizeof(AtpHeader) == kAtpHeaderLen);

// Element i of a payload (4 B big-endian each).
inline int32_t LoadAtpInt(const uint8_t* elements, std::size_t i) noexcept {
  return static_cast<int32_t>(LoadBe32(elements + 4 * i));
}
inline void StoreAtpInt(uint8_t* elements, std::size_t i, int32_t v) noexcept {
  StoreBe32(elements + 4 * i, static_cast<uint32_t>(v));
}
inline float LoadAtpFloat(const uint8_t* elements, std::size_t i) noexcept {
  return std::bit_cast<float>(LoadBe32(elements + 4 * i));
}
inline void StoreAtpFloat(uint8_t* elements, std::size_t i, float v) noexcept {
  StoreBe32(elements + 4 * i, std::bit_cast<uint32_t>(v));
}

// The ATP payload (header + elements) of a frame with num_elements elements.
constexpr std::size_t AtpPayloadLen(uint16_t num_elements) {
  return kAtpHeaderLen + 4 * std::size_t{num_elements};
}
// A whole untagged frame: Ethernet + IPv4 (no options) + UDP + ATP payload.
constexpr std::size_t AtpFrameLen(uint16_t num_elements) {
  return kAtpHeaderOffset + AtpPayloadLen(num_elements);
}

// The header fields as values (the elements are not part of it).
struct AtpFields {
  uint8_t flags = 0;  // kAtpFlag* bits
  uint8_t worker_id = 0;
  uint8_t fan_in0 = 0;
  uint8_t fan_in1 = 0;
  uint16_t job_id = 0;
  uint16_t num_elements = 0;
  uint32_t seq = 0;
  uint32_t bitmap = 0;

  void Encode(uint8_t* out) const noexcept {
    auto* h = HeaderAt<AtpHeader>(out);
    h->ver_flags = static_cast<uint8_t>((kAtpVersion << kAtpVersionShift) | (flags & 0x3F));
    h->worker_id = worker_id;
    h->fan_in0 = fan_in0;
    h->fan_in1 = fan_in1;
    h->SetJobId(job_id);
    h->SetNumElements(num_elements);
    h->SetSeq(seq);
    h->SetBitmap(bitmap);
  }
  // nullopt if len is shorter than the header or the version is not kAtpVersion.
  static std::optional<AtpFields> Decode(const uint8_t* in, std::size_t len) noexcept {
    if (len < kAtpHeaderLen) return std::nullopt;
    const auto* h = HeaderAt<AtpHeader>(in);
    if (h->Version() != kAtpVersion) return std::nullopt;
    return AtpFields{h->Flags(), h->worker_id,     h->fan_in0, h->fan_in1,
                     h->JobId(), h->NumElements(), h->Seq(),   h->Bitmap()};
  }
  bool Has(uint8_t flag) const noexcept { return (flags & flag) != 0; }
  friend bool operator==(const AtpFields&, const AtpFields&) = default;
};

// The aggregator a <job, seq> pair maps to: the same on every switch (a "globally consistent
// hash", section 5.3), so hosts and tests can predict collisions. num_aggregators >= 1.
//
// With N aggregators, a job's seqs go in epochs of N: within an epoch they take consecutive
// aggregators from the epoch's start, and each epoch starts a job-specific step J further,
// 1 <= J <= N/2, from where the one before started: start(e) = H(job) + e * J (mod N). So two
// seqs of one job fewer than N/2 apart never share an aggregator, within an epoch or across a
// boundary (their indexes differ by d or by J + d - N, never 0 mod N). A hash of both fields
// made a job alone on a switch collide with its own packets in flight at the array's
// occupancy: 3.5% of the demo's seqs, each a split aggregate and a retransmission. Jobs
// sharing an array collide where their runs overlap; their offsets drift apart by
// (J_a - J_b) every epoch, so no job keeps an advantage (section 7.3's fairness).
// B and J come from one hash of the job (its low and high halves). On the fast path the
// usual power-of-two array takes masks and a shift, no division.
constexpr uint32_t AtpAggregatorIndex(uint16_t job_id, uint32_t seq,
                                      uint32_t num_aggregators) noexcept {
  const uint64_t h = HashPair(job_id, 0, /*seed=*/0x41545021);  // "ATP!"
  const uint64_t n = num_aggregators;
  const uint64_t half = n / 2 == 0 ? 1 : n / 2;
  if ((n & (n - 1)) == 0) {
    const uint64_t mask = n - 1;
    const uint64_t step = 1 + ((h >> 32) & (half - 1));
    const uint64_t epoch = uint64_t{seq} >> std::countr_zero(n);
    return static_cast<uint32_t>(((h & mask) + (epoch & mask) * step + (seq & mask)) & mask);
  }
  const uint64_t step = 1 + (h >> 32) % half;
  return static_cast<uint32_t>((h % n + (seq / n % n) * step + seq % n) % n);
}

// The identifier an aggregator stores: 0 means empty, so job 0 is never valid.
constexpr uint64_t AtpAggregatorId(uint16_t job_id, uint32_t seq) noexcept {
  return (uint64_t{job_id} << 32) | seq;
}

}  // namespace swemu
