#pragma once
// A histogram of nanosecond values (gap errors, lateness) in constant memory, for runs of any
// length: exact below 64 ns, then 64 buckets per power of two (each within 1/64 = 1.6% of its
// values). Percentiles answer with the bucket's upper end (never above the exact maximum).
#include <array>
#include <cstdint>

namespace swemu::replay {

class GapHistogram {
 public:
  void Record(uint64_t value);
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  // The smallest recorded value v (to the bucket's precision) with at least `fraction` of the
  // values <= v; 0 when empty.
  uint64_t Percentile(double fraction) const;

 private:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = (64 - kSubBits + 1) * kSub;
  static int Bucket(uint64_t value);
  static uint64_t BucketTop(int bucket);  // largest value of the bucket

  std::array<uint64_t, kBuckets> buckets_ = {};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

}  // namespace swemu::replay
