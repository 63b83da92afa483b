#pragma once
// The DLCP receiver's buffer (4.1, Figure 9): each data packet is placed by its offset into a
// pre-allocated tensor, order-free, with a bitmap of the partitions received; the loss bound is
// met when the distinct bytes received reach (1 - p) of the tensor. Partition k covers bytes
// [k * partition, min((k + 1) * partition, size)): the sender cuts tensors the same way, so a
// packet that is not exactly one partition is refused with a named reason and nothing written.
// A model receiver (the simulation's hosts) keeps only the bitmap, not the bytes: 144 hosts
// holding every tensor they receive would not fit in memory.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

enum class DlcpPlace : uint8_t {
  kPlaced,
  kDuplicate,     // that partition was already there (it does not count twice)
  kOutOfBounds,   // the offset or the end lies past the tensor
  kMisaligned,    // not a partition's start, or not its length
};
const char* DlcpPlaceName(DlcpPlace p);

class DlcpReceiveBuffer {
 public:
  // size_bytes: the tensor; partition_bytes: a packet's payload (a multiple of element_bytes);
  // loss_bound in [0, 1); keep_data false: the bitmap alone (data() stays empty). Errors name
  // the bad argument.
  static Result<DlcpReceiveBuffer> Make(uint64_t size_bytes, uint32_t partition_bytes,
                                        double loss_bound, uint32_t element_bytes = 4,
                                        bool keep_data = true);

  DlcpPlace Place(uint64_t offset, std::span<const uint8_t> payload) noexcept;
  bool BoundMet() const noexcept { return received_bytes_ >= required_bytes_; }
  uint64_t received_bytes() const noexcept { return received_bytes_; }
  uint64_t required_bytes() const noexcept { return required_bytes_; }
  uint64_t size() const noexcept { return size_; }
  // The missing partitions as byte ranges [begin, end), merged, in order (at most max_ranges).
  std::vector<std::pair<uint64_t, uint64_t>> Missing(std::size_t max_ranges = SIZE_MAX) const;
  std::span<const uint8_t> data() const noexcept { return data_; }
  bool Has(uint64_t partition) const noexcept {
    return (bitmap_[partition / 64] >> (partition % 64)) & 1;
  }
  uint64_t partitions() const noexcept { return partitions_; }

 private:
  DlcpReceiveBuffer() = default;
  uint64_t PartitionLen(uint64_t k) const noexcept;

  std::vector<uint8_t> data_;  // empty without keep_data
  uint64_t size_ = 0;
  std::vector<uint64_t> bitmap_;
  uint64_t partitions_ = 0;
  uint32_t partition_ = 0;
  uint64_t received_bytes_ = 0;
  uint64_t required_bytes_ = 0;
};

}  // namespace swemu
