#pragma once
// Reading a whole text input (a config, topology, startup script or job file) the one way every
// loader uses: a directory, a device such as /dev/zero, a file larger than the cap or one that
// fails half-way is an error naming the path, never an empty or endless input.
#include <cstddef>
#include <string>

#include "pipeline/core/status.h"

namespace swemu {

inline constexpr std::size_t kMaxTextFileBytes = std::size_t{16} << 20;  // 16 MiB

// Regular files and pipes (a shell's process substitution) are read; anything else is refused.
// `what` names the input in the message ("config", "startup script", ...).
Result<std::string> ReadTextFile(const std::string& path, const std::string& what,
                                 std::size_t max_bytes = kMaxTextFileBytes);

// The same checks without reading: for loaders that only record a path to read later.
Status CheckTextFile(const std::string& path, const std::string& what);

}  // namespace swemu
