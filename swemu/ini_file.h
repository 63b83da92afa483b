#pragma once
// The INI syntax of swemu's config and topology files (Boost.Program_options' config-file
// parser): [section] headers, "key = value" lines, '#' comments. Entries come back in file
// order as "section.key" so each loader checks its own keys and repeats.
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

struct IniEntry {
  std::string key;    // "section.key"; a key before any section has no dot
  std::string value;  // trimmed; may be empty
};

// One-line errors: "PATH: problem".
// `what` names the file in errors ("config", "topology").
Result<std::vector<IniEntry>> ReadIniFile(const std::string& path,
                                          const std::string& what = "config");

// Resolves a path written in a config file relative to that file's directory.
std::string ResolveRelative(const std::string& config_path, const std::string& path);

}  // namespace swemu
