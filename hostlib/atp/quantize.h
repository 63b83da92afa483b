#pragma once
// Gradients on the wire are int32 (switches have no floating point): a worker sends
// round(x * scale), the PS adds the integers exactly in 64 bits and returns sum / scale.
//
// Scale: kAtpDefaultScale = 2^20 (about 6 decimal digits after the point, |x| < 2048 per
// element and worker). Error bound: each worker's rounding is at most 0.5 / scale, so the sum
// over W workers is off by at most W * 0.5 / scale per element (then rounded once to float32
// in the parameter packet: plus half an ulp of the result). An element that does not fit
// (|x * scale| > INT32_MAX, or NaN/Inf) sends its whole packet as float32 instead (kAtpFlagFloat,
// "the overflow path"): switches forward such packets and the PS adds them in double.
#include <cstddef>
#include <cstdint>

namespace swemu {

inline constexpr double kAtpDefaultScale = 1 << 20;

// round(x * scale) into out[i] for each element. False when some element does not fit in int32
// (out is then partly written and must not be sent as integers).
bool QuantizeToInt32(const float* in, std::size_t n, double scale, int32_t* out) noexcept;

// The float an exact integer sum stands for.
inline float DequantizeSum(int64_t sum, double scale) noexcept {
  return static_cast<float>(static_cast<double>(sum) / scale);
}

// The worst-case |error| of a W-worker sum before the final float32 rounding.
constexpr double AtpSumErrorBound(uint32_t workers, double scale) { return workers * 0.5 / scale; }

}  // namespace swemu
