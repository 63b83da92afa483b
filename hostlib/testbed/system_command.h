#pragma once
// Running the system's own programs (ip, tc, sysctl, ethtool) from the testbed's back ends:
// found on PATH, run without a shell, their output kept for the error line.
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

// The absolute path of `program` on PATH (and /usr/sbin, /sbin), or an error naming it.
Result<std::string> FindProgram(const std::string& program);

// Runs argv[0] (found on PATH) with its arguments and waits. An error is one line: the command
// and the first line it printed, or its exit status.
Status RunProgram(const std::vector<std::string>& argv);

// The command line as a user would type it (arguments with spaces quoted).
std::string CommandText(const std::vector<std::string>& argv);

}  // namespace swemu
