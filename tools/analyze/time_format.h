#pragma once
// Times in swemu-analyze's protocol summaries: exact decimals of integer nanoseconds (a double
// would round epoch nanoseconds).
#include <cstdio>
#include <string>

#include "pipeline/core/clock.h"

namespace swemu {

// `ns` in units of `ns_per_unit` with `digits` decimals.
inline std::string FormatDecimal(TimeNs ns, TimeNs ns_per_unit, int digits) {
  char text[48];
  std::snprintf(text, sizeof(text), "%llu.%0*llu",
                static_cast<unsigned long long>(ns / ns_per_unit), digits,
                static_cast<unsigned long long>(ns % ns_per_unit));
  return text;
}
inline std::string FormatSeconds(TimeNs ns) { return FormatDecimal(ns, 1'000'000'000, 9); }
inline std::string FormatMicros(TimeNs ns) { return FormatDecimal(ns, 1'000, 3); }

}  // namespace swemu
