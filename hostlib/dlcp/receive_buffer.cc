#include "hostlib/dlcp/receive_buffer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace swemu {

const char* DlcpPlaceName(DlcpPlace p) {
  switch (p) {
    case DlcpPlace::kPlaced:
      return "placed";
    case DlcpPlace::kDuplicate:
      return "dlcp_duplicate";
    case DlcpPlace::kOutOfBounds:
      return "dlcp_out_of_bounds";
    case DlcpPlace::kMisaligned:
      return "dlcp_misaligned";
  }
  return "?";
}

Result<DlcpReceiveBuffer> DlcpReceiveBuffer::Make(uint64_t size_bytes, uint32_t partition_bytes,
                                                  double loss_bound, uint32_t element_bytes,
                                                  bool keep_data) {
  if (element_bytes == 0 || partition_bytes == 0 || partition_bytes % element_bytes != 0) {
    return Status::Error("DLCP partition of " + std::to_string(partition_bytes) +
                         " bytes: a positive multiple of the " + std::to_string(element_bytes) +
                         "-byte element");
  }
  if (size_bytes % element_bytes != 0 || size_bytes > (uint64_t{1} << 32)) {
    return Status::Error("DLCP tensor of " + std::to_string(size_bytes) +
                         " bytes: whole elements, at most 4 GiB (the header's 32-bit offset)");
  }
  if (!(loss_bound >= 0 && loss_bound < 1)) {
    return Status::Error("DLCP loss bound " + std::to_string(loss_bound) + ": in [0, 1)");
  }
  DlcpReceiveBuffer b;
  if (keep_data) b.data_.assign(size_bytes, 0);
  b.size_ = size_bytes;
  b.partition_ = partition_bytes;
  b.partitions_ = (size_bytes + partition_bytes - 1) / partition_bytes;
  b.bitmap_.assign((b.partitions_ + 63) / 64, 0);
  b.required_bytes_ =
      static_cast<uint64_t>(std::ceil((1.0 - loss_bound) * static_cast<double>(size_bytes)));
  return b;
}

uint64_t DlcpReceiveBuffer::PartitionLen(uint64_t k) const noexcept {
  return std::min<uint64_t>(partition_, size_ - k * partition_);
}

DlcpPlace DlcpReceiveBuffer::Place(uint64_t offset, std::span<const uint8_t> payload) noexcept {
  if (offset >= size_ || payload.size() > size_ - offset) {
    return DlcpPlace::kOutOfBounds;
  }
  if (offset % partition_ != 0) return DlcpPlace::kMisaligned;
  const uint64_t k = offset / partition_;
  if (payload.size() != PartitionLen(k)) return DlcpPlace::kMisaligned;
  uint64_t& word = bitmap_[k / 64];
  const uint64_t bit = uint64_t{1} << (k % 64);
  if (word & bit) return DlcpPlace::kDuplicate;
  word |= bit;
  if (!data_.empty()) std::memcpy(data_.data() + offset, payload.data(), payload.size());
  received_bytes_ += payload.size();
  return DlcpPlace::kPlaced;
}

std::vector<std::pair<uint64_t, uint64_t>> DlcpReceiveBuffer::Missing(std::size_t max_ranges) const {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (uint64_t k = 0; k < partitions_ && out.size() <= max_ranges; ++k) {
    if (Has(k)) continue;
    const uint64_t begin = k * partition_, end = begin + PartitionLen(k);
    if (!out.empty() && out.back().second == begin) {
      out.back().second = end;
    } else {
      if (out.size() == max_ranges) break;
      out.emplace_back(begin, end);
    }
  }
  return out;
}

}  // namespace swemu
