#pragma once
// swemu-pcn's subcommands; each parses its own options (argv[0] is the subcommand) and returns
// the exit status: 0 done, 1 a run that failed, 2 bad input (one line on stderr).
namespace swemu {

int RunThresholdCommand(int argc, char** argv);
int RunSimCommand(int argc, char** argv);
int RunDdlCommand(int argc, char** argv);
int RunPsCommand(int argc, char** argv);

}  // namespace swemu
