#include "hostlib/atp/quantize.h"

namespace swemu {

bool QuantizeToInt32(const float* in, std::size_t n, double scale, int32_t* out) noexcept {
  // v rounds (to nearest, ties to even) into int32 exactly when it lies in
  // [-2^31 - 0.5, 2^31 - 0.5); NaN fails both comparisons. Adding and subtracting 1.5 * 2^52
  // rounds any |v| < 2^51 to an integer in the default rounding mode without a libm call,
  // so the loop vectorizes (std::nearbyint is a call unless SSE4.1 is enabled).
  constexpr double kLow = -2147483648.5, kHigh = 2147483647.5, kRound = 0x1.8p52;
  bool fits = true;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(in[i]) * scale;
    const bool ok = v >= kLow && v < kHigh;
    fits &= ok;
    out[i] = static_cast<int32_t>(ok ? (v + kRound) - kRound : 0.0);
  }
  return fits;
}

}  // namespace swemu
