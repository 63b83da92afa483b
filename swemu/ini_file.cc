#include "swemu/ini_file.h"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "pipeline/core/text_file.h"

namespace swemu {

Result<std::vector<IniEntry>> ReadIniFile(const std::string& path, const std::string& what) {
  Result<std::string> text = ReadTextFile(path, what);
  if (!text.ok()) return text.status();
  // A NUL would vanish from the messages that quote the line: name it here instead.
  if (const std::size_t nul = text->find('\0'); nul != std::string::npos) {
    const auto line = 1 + std::count(text->begin(), text->begin() + static_cast<long>(nul), '\n');
    return Status::Error(path + ": line " + std::to_string(line) + " holds a NUL byte (a " + what +
                         " is text)");
  }
  std::istringstream in(*text);
  std::vector<IniEntry> entries;
  try {
    // No option is registered: every key comes back "unregistered" and the caller checks it.
    boost::program_options::options_description none;
    auto parsed = boost::program_options::parse_config_file(in, none, true);
    for (const auto& option : parsed.options) {
      entries.push_back({option.string_key, option.value.empty() ? "" : option.value.front()});
    }
  } catch (const std::exception& e) {
    return Status::Error(path + ": " + e.what());
  }
  return entries;
}

std::string ResolveRelative(const std::string& config_path, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(config_path).parent_path() / p).lexically_normal().string();
}

}  // namespace swemu
