#pragma once
// Option parsing shared by the tools with subcommands (swemu-pcn, swemu-dlcp): argv[0] is the
// subcommand, no positional arguments.
#include <boost/program_options.hpp>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

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

// The same for a tool whose argv[1] is the mode (swemu-atp): stores argv[2..] in *vm, refusing
// a leftover word. A value when the caller should return it: 0 after printing the help and
// `examples`, 2 after one line `TOOL: ...` naming a bad option or word.
inline std::optional<int> StoreModeOptions(const char* tool, int argc, char** argv,
                                           const boost::program_options::options_description& desc,
                                           const std::string& examples,
                                           boost::program_options::variables_map* vm) {
  namespace po = boost::program_options;
  try {
    // The parser takes argv[1] (the mode) as the program's name.
    const po::parsed_options parsed =
        po::command_line_parser(argc - 1, argv + 1).options(desc).run();
    const std::vector<std::string> words =
        po::collect_unrecognized(parsed.options, po::include_positional);
    if (!words.empty()) {
      std::cerr << tool << ": unexpected word '" << words[0] << "' (options start with --)\n";
      return 2;
    }
    po::store(parsed, *vm);
    if (vm->count("help")) {
      std::cout << desc << examples;
      return 0;
    }
    po::notify(*vm);
  } catch (const po::error& e) {
    std::cerr << tool << ": " << e.what() << '\n';
    return 2;
  }
  return std::nullopt;
}

}  // namespace swemu
