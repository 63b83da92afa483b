#pragma once
// Option parsing shared by the tools with subcommands (swemu-pcn, swemu-dlcp): argv[0] is the
// subcommand, no positional arguments.
#include <boost/program_options.hpp>
#include <iostream>

namespace swemu {

// Parses a subcommand's options into *vm. Returns -1 to go on, or the exit status to return at
// once: 0 after printing the help (--help), 2 after one line naming a bad option.
inline int ParseSubcommand(const char* tool, const char* name, const char* usage,
                           const boost::program_options::options_description& options, int argc,
                           char** argv, boost::program_options::variables_map* vm) {
  namespace po = boost::program_options;
  try {
    po::store(po::command_line_parser(argc, argv)
                  .options(options)
                  .positional(po::positional_options_description())
                  .run(),
              *vm);
  } catch (const po::error& e) {
    std::cerr << tool << " " << name << ": " << e.what() << "\n";
    return 2;
  }
  if (vm->count("help")) {
    std::cout << "usage: " << tool << " " << name << " " << usage << "\n\n" << options;
    return 0;
  }
  return -1;
}

}  // namespace swemu
