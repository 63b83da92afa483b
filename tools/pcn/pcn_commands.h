#pragma once
// swemu-pcn's subcommands; each parses its own options (argv[0] is the subcommand) and returns
// the exit status: 0 done, 1 a run that failed, 2 bad input (one line on stderr).
#include <boost/program_options.hpp>

namespace swemu {

// Parses a subcommand's options into *vm. Returns -1 to go on, or the exit status to return at
// once: 0 after printing the help (--help), 2 after one line naming a bad option.
int ParsePcnSubcommand(const char* name, const char* usage,
                       const boost::program_options::options_description& options, int argc,
                       char** argv, boost::program_options::variables_map* vm);

int RunThresholdCommand(int argc, char** argv);
int RunSimCommand(int argc, char** argv);
int RunDdlCommand(int argc, char** argv);
int RunPsCommand(int argc, char** argv);

}  // namespace swemu
