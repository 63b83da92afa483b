#include "pipeline/registers/register_array.h"

#include <algorithm>
#include <bit>

namespace swemu {

Result<std::unique_ptr<RegisterArray>> RegisterArray::Create(const RegisterSpec& spec, uint8_t id) {
  if (spec.name.empty()) return Status::Error("a register array has no name");
  const std::string where = "register " + spec.name + ": ";
  if (id >= 64) return Status::Error(where + "id " + std::to_string(id) + " is not below 64");
  if (spec.size == 0) return Status::Error(where + "size must be at least 1");
  if (spec.width_bits == 0 || spec.width_bits > 64) {
    return Status::Error(where + "width must be 1..64 bits, not " +
                         std::to_string(spec.width_bits));
  }
  if (spec.lanes == 0 || spec.lanes > kMaxRegisterLanes) {
    return Status::Error(where + "lanes must be 1.." + std::to_string(kMaxRegisterLanes) +
                         ", not " + std::to_string(spec.lanes));
  }
  if (spec.storage_bytes != 8 && !(spec.storage_bytes == 4 && spec.width_bits <= 32)) {
    return Status::Error(where + "storage must be 8 bytes per cell, or 4 for widths up to 32 " +
                         "bits, not " + std::to_string(spec.storage_bytes));
  }
  if (uint64_t{spec.size} * spec.lanes > kMaxRegisterCells) {
    return Status::Error(where + std::to_string(spec.size) + " x " + std::to_string(spec.lanes) +
                         " cells exceed the limit of " + std::to_string(kMaxRegisterCells));
  }
  return std::unique_ptr<RegisterArray>(new RegisterArray(spec, id));
}

namespace {

// Cache lines one index's cells may span; one more than they fill when they do not fill whole
// lines (an index's cells then may straddle a line boundary).
uint32_t PrefetchLines(const RegisterSpec& spec) {
  const uint32_t bytes = uint32_t{spec.lanes} * spec.storage_bytes;
  if (bytes <= 8) return 1;
  return std::min<uint32_t>(16, (bytes + 63) / 64 + (bytes % 64 != 0 ? 1 : 0));
}

}  // namespace

RegisterArray::RegisterArray(const RegisterSpec& spec, uint8_t id)
    : spec_(spec),
      id_(id),
      power_of_two_(std::has_single_bit(spec.size)),
      narrow_(spec.storage_bytes == 4),
      prefetch_lines_(PrefetchLines(spec)),
      value_mask_(spec.width_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << spec.width_bits) - 1) {
  const uint64_t cells = uint64_t{spec.size} * spec.lanes;
  if (narrow_) {
    cells32_.assign(cells, 0);
  } else {
    cells_.assign(cells, 0);
  }
}

Result<uint64_t> RegisterArray::Read(uint32_t index, uint16_t lane) const {
  if (index >= spec_.size) {
    return Status::Error("register " + spec_.name + ": index " + std::to_string(index) +
                         " out of range (size " + std::to_string(spec_.size) + ")");
  }
  if (lane >= spec_.lanes) {
    return Status::Error("register " + spec_.name + ": lane " + std::to_string(lane) +
                         " out of range (" + std::to_string(spec_.lanes) + " lanes)");
  }
  const uint64_t at = uint64_t{index} * spec_.lanes + lane;
  return narrow_ ? uint64_t{cells32_[at]} : cells_[at];
}

Status RegisterArray::Write(uint32_t index, uint64_t value, uint16_t lane) {
  Result<uint64_t> current = Read(index, lane);  // same range checks and messages
  if (!current.ok()) return current.status();
  if ((value & ~value_mask_) != 0) {
    return Status::Error("register " + spec_.name + ": value " + std::to_string(value) +
                         " does not fit in " + std::to_string(spec_.width_bits) + " bits");
  }
  const uint64_t at = uint64_t{index} * spec_.lanes + lane;
  if (narrow_) {
    cells32_[at] = static_cast<uint32_t>(value);
  } else {
    cells_[at] = value;
  }
  return Status::Ok();
}

void RegisterArray::Reset() {
  std::fill(cells_.begin(), cells_.end(), 0);
  std::fill(cells32_.begin(), cells32_.end(), 0);
}

Status RegisterArray::ResetRange(uint32_t first, uint32_t count) {
  if (first > spec_.size || count > spec_.size - first) {
    return Status::Error("register " + spec_.name + ": range [" + std::to_string(first) + ", " +
                         std::to_string(uint64_t{first} + count) + ") exceeds size " +
                         std::to_string(spec_.size));
  }
  const auto begin = static_cast<std::ptrdiff_t>(uint64_t{first} * spec_.lanes);
  const auto end = begin + static_cast<std::ptrdiff_t>(uint64_t{count} * spec_.lanes);
  if (narrow_) {
    std::fill(cells32_.begin() + begin, cells32_.begin() + end, 0);
  } else {
    std::fill(cells_.begin() + begin, cells_.begin() + end, 0);
  }
  return Status::Ok();
}

uint64_t RegisterArray::SramBytes() const {
  return uint64_t{spec_.size} * spec_.lanes * ((spec_.width_bits + 7u) / 8);
}

uint64_t RegisterArray::HostBytes() const {
  return cells_.capacity() * sizeof(uint64_t) + cells32_.capacity() * sizeof(uint32_t);
}

}  // namespace swemu
