#pragma once
// A register array: `size` indices of `lanes` cells of `width_bits` each, read-modified-written
// at most once per packet pass, as by a stateful ALU on a PISA switch. `lanes` gives one index
// several cells updated by one access (ATP's aggregators: one index, many 32-bit lanes, as
// Tofino pairs registers across ALUs in one stage); each lane counts as one stateful ALU.
//
// The fast path (Rmw) enforces the one-access rule with Metadata::register_access_mask: bit
// id() set means this array was already touched in this pass, and the packet is dropped with
// kRegisterDoubleAccess. An index beyond the size wraps as hardware address bits do:
// `index & (size - 1)` for a power-of-two size, `index % size` otherwise; that is not a drop.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pipeline/core/cycles.h"
#include "pipeline/core/huge_page_allocator.h"
#include "pipeline/core/packet.h"
#include "pipeline/core/status.h"

namespace swemu {

struct RegisterSpec {
  std::string name;
  uint32_t size = 0;       // indices, >= 1
  uint8_t width_bits = 0;  // 1..64
  uint16_t lanes = 1;      // cells per index, 1..kMaxRegisterLanes
  // Emulator storage per cell: 8 bytes (fast path Rmw), or 4 bytes for width_bits <= 32 (fast
  // path Rmw32). Declared resources (SramBytes) do not depend on it.
  uint8_t storage_bytes = 8;
};

inline constexpr uint16_t kMaxRegisterLanes = 1024;
inline constexpr uint64_t kMaxRegisterCells = uint64_t{1} << 28;  // size * lanes (2 GiB of cells)

// Two's-complement views of a cell holding a 32-bit lane (e.g. gradients aggregated as int32).
constexpr int32_t AsInt32(uint64_t cell) noexcept {
  return static_cast<int32_t>(static_cast<uint32_t>(cell));
}
constexpr uint64_t FromInt32(int32_t value) noexcept { return static_cast<uint32_t>(value); }
// Sign-extends the low `width` bits of a cell (1..64).
constexpr int64_t SignExtend(uint64_t cell, unsigned width) noexcept {
  if (width >= 64) return static_cast<int64_t>(cell);
  const uint64_t sign = uint64_t{1} << (width - 1);
  cell &= (uint64_t{1} << width) - 1;
  return static_cast<int64_t>((cell ^ sign) - sign);
}

class RegisterArray {
 public:
  // The message names the register and the problem; id is the bit in register_access_mask.
  static Result<std::unique_ptr<RegisterArray>> Create(const RegisterSpec& spec, uint8_t id);

  uint8_t id() const { return id_; }
  const std::string& name() const { return spec_.name; }
  uint32_t size() const { return spec_.size; }
  uint8_t width_bits() const { return spec_.width_bits; }
  uint16_t lanes() const { return spec_.lanes; }
  const RegisterSpec& spec() const { return spec_; }
  uint8_t storage_bytes() const { return spec_.storage_bytes; }

  // ---- Control plane. Errors: index or lane out of range, value wider than the cells.
  Result<uint64_t> Read(uint32_t index, uint16_t lane = 0) const;
  Status Write(uint32_t index, uint64_t value, uint16_t lane = 0);
  void Reset();                                       // every cell to zero
  Status ResetRange(uint32_t first, uint32_t count);  // indices [first, first + count), all lanes

  // ---- Fast path: one read-modify-write of every lane at `index` in this pass. `f` receives
  // std::span<uint64_t> of the lanes (values below 2^width) and may change them; results are
  // truncated to the width afterwards, so an 8-bit cell wraps 255 + 1 -> 0 as hardware would.
  // Returns false (and marks the drop) if the packet already accessed this array in this pass.
  // kTruncate = false is for an `f` that itself leaves every lane below 2^width: it skips the
  // truncation pass, whose wide loads right after f's scalar stores stall on store forwarding.
  // An array with 4-byte storage takes Rmw32; Rmw on it drops the packet (kProgramDrop) and
  // changes nothing, as does Rmw32 on an 8-byte array.
  template <bool kTruncate = true, typename F>
  bool Rmw(Packet& pkt, uint32_t index, F&& f) noexcept {
    CycleScope timed(cycles_, 1);
    if (!Admit(pkt, narrow_)) return false;
    uint64_t* cells = &cells_[uint64_t{Wrap(index)} * spec_.lanes];
    f(std::span<uint64_t>(cells, spec_.lanes));
    if (kTruncate && value_mask_ != ~uint64_t{0}) {
      for (uint16_t i = 0; i < spec_.lanes; ++i) cells[i] &= value_mask_;
    }
    return true;
  }

  // Fast path of a 4-byte array: the same one read-modify-write of every lane at `index`, with
  // `f` receiving std::span<uint32_t>. A 32-bit lane of int32 values (AsInt32/FromInt32 apply
  // to the widened cell) is stored as is.
  template <bool kTruncate = true, typename F>
  bool Rmw32(Packet& pkt, uint32_t index, F&& f) noexcept {
    CycleScope timed(cycles_, 1);
    if (!Admit(pkt, !narrow_)) return false;
    uint32_t* cells = &cells32_[uint64_t{Wrap(index)} * spec_.lanes];
    f(std::span<uint32_t>(cells, spec_.lanes));
    if (kTruncate && spec_.width_bits < 32) {
      const auto mask = static_cast<uint32_t>(value_mask_);
      for (uint16_t i = 0; i < spec_.lanes; ++i) cells[i] &= mask;
    }
    return true;
  }

  // Where read-modify-writes add their cycles (StageProfile), or nullptr: not timed (default).
  void SetCycleCounter(CycleCounter* counter) noexcept { cycles_ = counter; }

  // A program that runs this array's stage over a whole burst times the stage as one call
  // (`auto timed = reg->TimeBurst(n);` around the loop): one clock read per burst instead of
  // per packet, which is both cheaper and closer to the truth for a stage of a few ns per
  // packet. The Rmw calls inside are not timed on their own.
  class BurstTimer {
   public:
    BurstTimer(RegisterArray& reg, uint32_t packets) noexcept
        : reg_(reg), saved_(reg.cycles_), scope_(saved_, packets) {
      reg.cycles_ = nullptr;
    }
    ~BurstTimer() { reg_.cycles_ = saved_; }
    BurstTimer(const BurstTimer&) = delete;
    BurstTimer& operator=(const BurstTimer&) = delete;

   private:
    RegisterArray& reg_;
    CycleCounter* saved_;
    CycleScope scope_;
  };
  BurstTimer TimeBurst(uint32_t packets) noexcept { return BurstTimer(*this, packets); }

  // Fast path: starts loading every cache line of the cells at `index` so a later Rmw of a
  // batched burst does not wait on the cache miss (a hint only; no access is counted).
  void Prefetch(uint32_t index) const noexcept {
    const uint64_t offset = uint64_t{Wrap(index)} * spec_.lanes * spec_.storage_bytes;
    const char* first = CellBytes() + offset;
    for (uint32_t line = 0; line < prefetch_lines_; ++line)
      __builtin_prefetch(first + 64 * line, 1);
  }

  // ---- Resources: SRAM = size * lanes * ceil(width / 8) bytes (cells packed to whole bytes,
  // as declared; the emulator itself stores storage_bytes per cell); one stateful ALU per lane.
  uint64_t SramBytes() const;
  // Host memory of the cells as the emulator stores them: size * lanes * storage_bytes.
  uint64_t HostBytes() const;
  uint32_t Alus() const { return spec_.lanes; }

 private:
  RegisterArray(const RegisterSpec& spec, uint8_t id);
  uint32_t Wrap(uint32_t index) const noexcept {
    return power_of_two_ ? index & (spec_.size - 1) : index % spec_.size;
  }
  // The one-access rule, and the storage the caller's Rmw flavour expects.
  bool Admit(Packet& pkt, bool wrong_storage) noexcept {
    const uint64_t bit = uint64_t{1} << id_;
    if (wrong_storage) {
      pkt.meta.MarkDrop(DropReason::kProgramDrop);
      return false;
    }
    if (pkt.meta.register_access_mask & bit) {
      pkt.meta.MarkDrop(DropReason::kRegisterDoubleAccess);
      return false;
    }
    pkt.meta.register_access_mask |= bit;
    return true;
  }
  const char* CellBytes() const noexcept {
    return narrow_ ? reinterpret_cast<const char*>(cells32_.data())
                   : reinterpret_cast<const char*>(cells_.data());
  }

  RegisterSpec spec_;
  uint8_t id_;
  bool power_of_two_;
  bool narrow_;  // 4-byte storage: cells32_ holds the cells, cells_ is empty (and vice versa)
  uint32_t prefetch_lines_;  // cache lines one index's cells may span
  uint64_t value_mask_;
  CycleCounter* cycles_ = nullptr;
  // Index-major: cells[index * lanes + lane].
  std::vector<uint64_t, HugePageAllocator<uint64_t>> cells_;
  std::vector<uint32_t, HugePageAllocator<uint32_t>> cells32_;
};

}  // namespace swemu
