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
  if (uint64_t{spec.size} * spec.lanes > kMaxRegisterCells) {
    return Status::Error(where + std::to_string(spec.size) + " x " + std::to_string(spec.lanes) +
                         " cells exceed the limit of " + std::to_string(kMaxRegisterCells));
  }
  return std::unique_ptr<RegisterArray>(new RegisterArray(spec, id));
}

RegisterArray::RegisterArray(const RegisterSpec& spec, uint8_t id)
    : spec_(spec),
      id_(id),
      power_of_two_(std::has_single_bit(spec.size)),
      value_mask_(spec.width_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << spec.width_bits) - 1),
      cells_(uint64_t{spec.size} * spec.lanes, 0) {}

Result<uint64_t> RegisterArray::Read(uint32_t index, uint16_t lane) const {
  if (index >= spec_.size) {
    return Status::Error("register " + spec_.name + ": index " + std::to_string(index) +
                         " out of range (size " + std::to_string(spec_.size) + ")");
  }
  if (lane >= spec_.lanes) {
    return Status::Error("register " + spec_.name + ": lane " + std::to_string(lane) +
                         " out of range (" + std::to_string(spec_.lanes) + " lanes)");
  }
  return cells_[uint64_t{index} * spec_.lanes + lane];
}

Status RegisterArray::Write(uint32_t index, uint64_t value, uint16_t lane) {
  Result<uint64_t> current = Read(index, lane);  // same range checks and messages
  if (!current.ok()) return current.status();
  if ((value & ~value_mask_) != 0) {
    return Status::Error("register " + spec_.name + ": value " + std::to_string(value) +
                         " does not fit in " + std::to_string(spec_.width_bits) + " bits");
  }
  cells_[uint64_t{index} * spec_.lanes + lane] = value;
  return Status::Ok();
}

void RegisterArray::Reset() { std::fill(cells_.begin(), cells_.end(), 0); }

Status RegisterArray::ResetRange(uint32_t first, uint32_t count) {
  if (first > spec_.size || count > spec_.size - first) {
    return Status::Error("register " + spec_.name + ": range [" + std::to_string(first) + ", " +
                         std::to_string(uint64_t{first} + count) + ") exceeds size " +
                         std::to_string(spec_.size));
  }
  auto begin = cells_.begin() + static_cast<std::ptrdiff_t>(uint64_t{first} * spec_.lanes);
  std::fill(begin, begin + static_cast<std::ptrdiff_t>(uint64_t{count} * spec_.lanes), 0);
  return Status::Ok();
}

uint64_t RegisterArray::SramBytes() const {
  return uint64_t{spec_.size} * spec_.lanes * ((spec_.width_bits + 7u) / 8);
}

}  // namespace swemu
