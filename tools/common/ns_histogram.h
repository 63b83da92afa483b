#pragma once
// A histogram of nanosecond values (gaps, gap errors, lateness) in constant memory, for runs of
// any length: exact below 2^SubBits ns, then 2^SubBits buckets per power of two (each within
// 1/2^SubBits of its values). Percentiles answer with the bucket's upper end, never above the
// exact maximum. swemu-replay's report uses 64 buckets per power of two (1.6%, 30 KB);
// swemu-analyze keeps one per flow with one bucket per power of two (520 B).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

namespace swemu {

template <int SubBits>
class NsHistogram {
 public:
  void Record(uint64_t value) {
    ++buckets_[Bucket(value)];
    ++count_;
    max_ = std::max(max_, value);
  }
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  // The smallest recorded value v (to the bucket's precision) with at least `fraction` of the
  // values <= v; 0 when empty.
  uint64_t Percentile(double fraction) const {
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

 private:
  static constexpr int kSub = 1 << SubBits;
  static constexpr int kBuckets = (64 - SubBits + 1) * kSub;

  static int Bucket(uint64_t value) {
    if (value < kSub) return static_cast<int>(value);
    const int exponent = 63 - std::countl_zero(value);  // >= SubBits
    const int shift = exponent - SubBits;
    const auto sub = static_cast<int>((value >> shift) & (kSub - 1));
    return (shift + 1) * kSub + sub;
  }
  // The largest value of a bucket.
  static uint64_t BucketTop(int bucket) {
    if (bucket < kSub) return static_cast<uint64_t>(bucket);
    const int shift = bucket / kSub - 1;
    const uint64_t low = (uint64_t{kSub} + static_cast<uint64_t>(bucket % kSub)) << shift;
    return low + ((uint64_t{1} << shift) - 1);
  }

  std::array<uint64_t, kBuckets> buckets_ = {};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

}  // namespace swemu
