#pragma once
// swemu-pcn's subcommands; each parses its own options (argv[0] is the subcommand) and returns
// the exit status: 0 done, 1 a run that failed, 2 bad input (one line on stderr).
#include "tools/subcommand.h"

namespace swemu {

int RunThresholdCommand(int argc, char** argv);
int RunSimCommand(int argc, char** argv);
int RunDdlCommand(int argc, char** argv);
int RunPsCommand(int argc, char** argv);

// swemu-pcn's use of ParseSubcommand (tools/subcommand.h).
inline int ParsePcnSubcommand(const char* name, const char* usage,
                              const boost::program_options::options_description& options,
                              int argc, char** argv, boost::program_options::variables_map* vm) {
  return ParseSubcommand("swemu-pcn", name, usage, options, argc, argv, vm);
}

}  // namespace swemu
