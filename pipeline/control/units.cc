#include "pipeline/control/units.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <string>

namespace swemu {
namespace {

std::string Quote(std::string_view text) { return "\"" + std::string(text) + "\""; }

// Splits "12.5G" into 12.5 and "G"; fails on an empty or non-numeric prefix.
bool SplitNumber(std::string_view text, double* number, std::string_view* suffix) {
  std::size_t end = 0;
  while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) ++end;
  if (end == 0) return false;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, value);
  if (ec != std::errc() || ptr != text.data() + end || !std::isfinite(value)) return false;
  *number = value;
  *suffix = text.substr(end);
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? a[i] - 'A' + 'a' : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? b[i] - 'A' + 'a' : b[i];
    if (x != y) return false;
  }
  return true;
}

Result<uint64_t> Scaled(std::string_view text, double number, double scale, const char* what) {
  double value = number * scale;
  if (value > 1.8e19) return Status::Error(Quote(text) + " is too large for a " + what);
  double rounded = std::round(value);
  if (std::fabs(rounded - value) > 1e-6 * std::max(1.0, value)) {
    return Status::Error(Quote(text) + " is not a whole number of " + what + " units");
  }
  return static_cast<uint64_t>(rounded);
}

}  // namespace

Result<uint64_t> ParseUint(std::string_view text, uint64_t min, uint64_t max) {
  uint64_t value = 0;
  int base = 10;
  std::string_view digits = text;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
    return Status::Error(Quote(text) + " is not an unsigned integer");
  }
  if (value < min || value > max) {
    return Status::Error(Quote(text) + " is out of range [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
  }
  return value;
}

Result<uint64_t> ParseRate(std::string_view text) {
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(text, &number, &suffix)) {
    return Status::Error(Quote(text) + " is not a rate (e.g. 10G, 100M, 1.5G)");
  }
  if (suffix.size() >= 3 && EqualsIgnoreCase(suffix.substr(suffix.size() - 3), "bps")) {
    suffix.remove_suffix(3);
  } else if (!suffix.empty() && (suffix.back() == 'b')) {
    suffix.remove_suffix(1);
  }
  double scale = 1;
  if (suffix.empty()) {
    scale = 1;
  } else if (EqualsIgnoreCase(suffix, "k")) {
    scale = 1e3;
  } else if (EqualsIgnoreCase(suffix, "m")) {
    scale = 1e6;
  } else if (EqualsIgnoreCase(suffix, "g")) {
    scale = 1e9;
  } else if (EqualsIgnoreCase(suffix, "t")) {
    scale = 1e12;
  } else {
    return Status::Error(Quote(text) + " has an unknown rate unit (use K, M, G or T)");
  }
  return Scaled(text, number, scale, "bit/s");
}

Result<uint64_t> ParseBytes(std::string_view text) {
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(text, &number, &suffix)) {
    return Status::Error(Quote(text) + " is not a size (e.g. 1500, 64KB, 16MiB)");
  }
  struct Unit {
    std::string_view name;
    double scale;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},     {"b", 1},           {"k", 1e3}, {"kb", 1e3}, {"kib", 1024.0},      {"m", 1e6},
      {"mb", 1e6}, {"mib", 1048576.0}, {"g", 1e9}, {"gb", 1e9}, {"gib", 1073741824.0}};
  for (const Unit& unit : kUnits) {
    if (EqualsIgnoreCase(suffix, unit.name)) return Scaled(text, number, unit.scale, "byte");
  }
  return Status::Error(Quote(text) +
                       " has an unknown size unit (use B, KB, KiB, MB, MiB, GB, GiB)");
}

Result<uint64_t> ParseDuration(std::string_view text) {
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(text, &number, &suffix)) {
    return Status::Error(Quote(text) + " is not a duration (e.g. 500ns, 2us, 1ms)");
  }
  double scale = 0;
  if (suffix.empty() || suffix == "ns") {
    scale = 1;
  } else if (suffix == "us") {
    scale = 1e3;
  } else if (suffix == "ms") {
    scale = 1e6;
  } else if (suffix == "s") {
    scale = 1e9;
  } else {
    return Status::Error(Quote(text) + " has an unknown time unit (use ns, us, ms or s)");
  }
  return Scaled(text, number, scale, "ns");
}

Result<uint64_t> ParseDurationOption(std::string_view text) {
  double number = 0;
  std::string_view suffix;
  if (SplitNumber(text, &number, &suffix) && suffix.empty()) return Scaled(text, number, 1e9, "ns");
  return ParseDuration(text);
}

Result<bool> ParseBool(std::string_view text) {
  for (std::string_view yes : {"1", "true", "yes", "on"}) {
    if (EqualsIgnoreCase(text, yes)) return true;
  }
  for (std::string_view no : {"0", "false", "no", "off"}) {
    if (EqualsIgnoreCase(text, no)) return false;
  }
  return Status::Error(Quote(text) + " is not a boolean (true/false)");
}

Result<double> ParseProbability(std::string_view text) {
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(text, &number, &suffix) || (!suffix.empty() && suffix != "%")) {
    return Status::Error(Quote(text) + " is not a probability (e.g. 0.001 or 0.1%)");
  }
  if (suffix == "%") number /= 100.0;
  if (number < 0 || number > 1) return Status::Error(Quote(text) + " is not within [0, 1]");
  return number;
}

Result<double> ParseDouble(std::string_view text, double min, double max) {
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(text, &number, &suffix) || !suffix.empty()) {
    return Status::Error(Quote(text) + " is not a number");
  }
  if (!(number >= min && number <= max)) {
    char range[64];
    std::snprintf(range, sizeof(range), "[%g, %g]", min, max);
    return Status::Error(Quote(text) + " is not within " + range);
  }
  return number;
}

std::string FormatRate(uint64_t bps) {
  if (bps == 0) return "unlimited";
  static constexpr struct {
    uint64_t scale;
    const char* unit;
  } kUnits[] = {{1000000000000ULL, "T"}, {1000000000ULL, "G"}, {1000000ULL, "M"}, {1000ULL, "K"}};
  for (const auto& u : kUnits) {
    if (bps >= u.scale && bps % u.scale == 0) return std::to_string(bps / u.scale) + u.unit;
  }
  return std::to_string(bps);
}

std::string FormatSi(double value, std::string_view unit) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  std::size_t prefix = 0;
  // 999.5 k would print as "1000 k": move up before rounding does.
  while (std::fabs(value) >= 999.5 && prefix + 1 < std::size(kPrefixes)) {
    value /= 1000;
    ++prefix;
  }
  const double magnitude = std::fabs(value);
  const int decimals = prefix == 0 || magnitude >= 99.95 ? 0 : magnitude >= 9.995 ? 1 : 2;
  char text[48];
  std::snprintf(text, sizeof(text), "%.*f %s", decimals, value, kPrefixes[prefix]);
  std::string out = text;
  out += unit;
  if (out.back() == ' ') out.pop_back();
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes != 0 && bytes % 1048576 == 0) return std::to_string(bytes / 1048576) + "MiB";
  if (bytes != 0 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + "KiB";
  return std::to_string(bytes) + "B";
}

}  // namespace swemu
