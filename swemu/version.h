#pragma once

namespace swemu {

inline constexpr const char* kSwemuVersion = "0.1.0";

}  // namespace swemu
