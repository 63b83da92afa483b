#pragma once
// GOAT (Fang et al., TNET 2024, section III-D): the gradient fragment and the PS's result, carried
// in UDP. The one definition of the header: the switch program (pipeline/programs/goat.*), the
// hosts (hostlib/goat/), the analyzer and the dissector use it. docs/wire.md ("GOAT") has the
// layout byte by byte and every difference from the paper.
//
// Frame: Ethernet | IPv4 (dst = the PS) | UDP (dst port = the GOAT port, default 9100) |
// GoatHeader (28 B) | num_elements x 4 B int32 elements, big-endian.
//
// <node id, sub-model id, fragment id> is the paper's tuple: node id names the aggregation node
// the plan chose for this worker's sub-model (kGoatNodePs = the PS itself). A switch whose id it
// is aggregates the fragment; every other switch forwards it by node id (goat_route), so it also
// reaches switches off the worker-to-PS path. A finished aggregate is re-addressed to the PS.
// kGoatNodeAny is ATP-style memory sharing: the first switch on the path with a free slot takes
// it (the paper's ATP baseline, section VII-A).
//
// The round id (the paper has none) tells a fragment of this iteration from a straggler's
// fragment of an earlier one; the bitmap (one bit per worker, up to 64) and count (its
// popcount) say whose gradients a packet holds.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "pipeline/wire/byte_order.h"

namespace swemu {

inline constexpr std::size_t kGoatHeaderLen = 28;
inline constexpr uint16_t kGoatDefaultUdpPort = 9100;
inline constexpr uint8_t kGoatVersion = 1;
inline constexpr uint32_t kGoatMaxWorkers = 64;
inline constexpr uint16_t kGoatDefaultElements = 64;  // int32 values per fragment
inline constexpr uint32_t kGoatDefaultSlots = 16384;   // a goat switch's [program] slots
inline constexpr uint16_t kGoatNodePs = 0;        // the PS aggregates
inline constexpr uint16_t kGoatNodeAny = 0xFFFF;  // ATP-style: first switch with a free slot
// Ethernet 14 + IPv4 20 + UDP 8.
inline constexpr std::size_t kGoatHeaderOffset = 14 + 20 + 8;

// ver_type: bits 7-4 version, bits 3-0 type.
enum class GoatType : uint8_t { kGradient = 0, kResult = 1 };
// flags
inline constexpr uint8_t kGoatFlagResend = 1 << 0;     // retransmitted by its worker
inline constexpr uint8_t kGoatFlagOverflow = 1 << 1;   // a switch sum left int32: values invalid
inline constexpr uint8_t kGoatFlagAggregate = 1 << 2;  // written by a switch (complete or flushed)
inline constexpr uint8_t kGoatFlagExcluded = 1 << 3;   // result: this worker's gradient was late
                                                       // and not counted (K-SGD's discard)

struct __attribute__((packed)) GoatHeader {
  uint8_t ver_type;
  uint8_t flags;
  uint8_t job_id[2];  // 1 .. 65535
  uint8_t node_id[2];
  uint8_t submodel[2];
  uint8_t fragment[4];  // index within the sub-model
  uint8_t round[4];     // training iteration
  uint8_t num_elements[2];
  uint8_t count[2];  // workers whose gradients are in the values = popcount(bitmap)
  uint8_t bitmap[8];

  uint8_t Version() const noexcept { return ver_type >> 4; }
  GoatType Type() const noexcept { return static_cast<GoatType>(ver_type & 0x0F); }
  bool Has(uint8_t flag) const noexcept { return (flags & flag) != 0; }
  uint16_t JobId() const noexcept { return LoadBe16(job_id); }
  uint16_t NodeId() const noexcept { return LoadBe16(node_id); }
  uint16_t Submodel() const noexcept { return LoadBe16(submodel); }
  uint32_t Fragment() const noexcept { return LoadBe32(fragment); }
  uint32_t Round() const noexcept { return LoadBe32(round); }
  uint16_t NumElements() const noexcept { return LoadBe16(num_elements); }
  uint16_t Count() const noexcept { return LoadBe16(count); }
  uint64_t Bitmap() const noexcept {
    return (uint64_t{LoadBe32(bitmap)} << 32) | LoadBe32(bitmap + 4);
  }

  void Set(uint8_t flag) noexcept { flags |= flag; }
  void Clear(uint8_t flag) noexcept { flags &= static_cast<uint8_t>(~flag); }
  void SetNodeId(uint16_t v) noexcept { StoreBe16(node_id, v); }
  void SetCount(uint16_t v) noexcept { StoreBe16(count, v); }
  void SetBitmap(uint64_t v) noexcept {
    StoreBe32(bitmap, static_cast<uint32_t>(v >> 32));
    StoreBe32(bitmap + 4, static_cast<uint32_t>(v));
  }

  uint8_t* Elements() noexcept { return reinterpret_cast<uint8_t*>(this) + kGoatHeaderLen; }
  const uint8_t* Elements() const noexcept {
    return reinterpret_cast<const uint8_t*>(this) + kGoatHeaderLen;
  }
};
static_assert(sizeof(GoatHeader) == kGoatHeaderLen);

constexpr std::size_t GoatPayloadLen(uint16_t num_elements) {
  return kGoatHeaderLen + 4 * std::size_t{num_elements};
}
constexpr std::size_t GoatFrameLen(uint16_t num_elements) {
  return kGoatHeaderOffset + GoatPayloadLen(num_elements);
}

// The header as values (the elements are not part of it).
struct GoatFields {
  GoatType type = GoatType::kGradient;
  uint8_t flags = 0;
  uint16_t job_id = 0;
  uint16_t node_id = 0;
  uint16_t submodel = 0;
  uint32_t fragment = 0;
  uint32_t round = 0;
  uint16_t num_elements = 0;
  uint16_t count = 0;
  uint64_t bitmap = 0;

  void Encode(uint8_t* out) const noexcept {
    auto* h = HeaderAt<GoatHeader>(out);
    h->ver_type = static_cast<uint8_t>((kGoatVersion << 4) | (static_cast<uint8_t>(type) & 0x0F));
    h->flags = flags;
    StoreBe16(h->job_id, job_id);
    StoreBe16(h->node_id, node_id);
    StoreBe16(h->submodel, submodel);
    StoreBe32(h->fragment, fragment);
    StoreBe32(h->round, round);
    StoreBe16(h->num_elements, num_elements);
    StoreBe16(h->count, count);
    h->SetBitmap(bitmap);
  }
  // nullopt if len is shorter than the header, or the version or type is unknown.
  static std::optional<GoatFields> Decode(const uint8_t* in, std::size_t len) noexcept {
    if (len < kGoatHeaderLen) return std::nullopt;
    const auto* h = HeaderAt<GoatHeader>(in);
    if (h->Version() != kGoatVersion) return std::nullopt;
    if (h->Type() != GoatType::kGradient && h->Type() != GoatType::kResult) return std::nullopt;
    return GoatFields{h->Type(),     h->flags,   h->JobId(),       h->NodeId(), h->Submodel(),
                      h->Fragment(), h->Round(), h->NumElements(), h->Count(),  h->Bitmap()};
  }
  bool Has(uint8_t flag) const noexcept { return (flags & flag) != 0; }
  friend bool operator==(const GoatFields&, const GoatFields&) = default;
};

// What a switch slot stores to recognise its fragment: job, sub-model and fragment id (the
// round is kept beside it). Never 0 for a valid job (job 0 is invalid), so 0 means empty.
constexpr uint64_t GoatSlotKey(uint16_t job_id, uint16_t submodel, uint32_t fragment) noexcept {
  return (uint64_t{job_id} << 48) | (uint64_t{submodel} << 32) | fragment;
}

}  // namespace swemu
