#include "tools/replay/gap_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace swemu::replay {

int GapHistogram::Bucket(uint64_t value) {
  if (value < kSub) return static_cast<int>(value);
  const int exponent = 63 - std::countl_zero(value);  // >= kSubBits
  const int shift = exponent - kSubBits;
  const auto sub = static_cast<int>((value >> shift) & (kSub - 1));
  return (shift + 1) * kSub + sub;
}

uint64_t GapHistogram::BucketTop(int bucket) {
  if (bucket < kSub) return static_cast<uint64_t>(bucket);
  const int shift = bucket / kSub - 1;
  const uint64_t low = (uint64_t{kSub} + static_cast<uint64_t>(bucket % kSub)) << shift;
  return low + ((uint64_t{1} << shift) - 1);
}

void GapHistogram::Record(uint64_t value) {
  ++buckets_[Bucket(value)];
  ++count_;
  max_ = std::max(max_, value);
}

uint64_t GapHistogram::Percentile(double fraction) const {
  if (count_ == 0) return 0;
  const auto rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(fraction * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen >= rank) return std::min(BucketTop(b), max_);
  }
  return max_;
}

}  // namespace swemu::replay
