#pragma once
// Parsers for the values users type in configs and commands: integers, link rates ("10G"),
// sizes ("64KB", "16MiB") and durations ("2us"). Errors name the value and what was expected.
#include <cstdint>
#include <string_view>

#include "pipeline/core/status.h"

namespace swemu {

// Decimal or 0x-hex unsigned integer within [min, max].
Result<uint64_t> ParseUint(std::string_view text, uint64_t min = 0, uint64_t max = UINT64_MAX);
// Bits per second: plain number or with suffix K/M/G/T (powers of 1000), optional "bps"/"b".
Result<uint64_t> ParseRate(std::string_view text);
// Bytes: plain number, or suffix K/KB (1000), KiB (1024), M/MB, MiB, G/GB, GiB.
Result<uint64_t> ParseBytes(std::string_view text);
// Nanoseconds: number with suffix ns, us, ms or s (a plain number means ns: configs).
Result<uint64_t> ParseDuration(std::string_view text);
// A duration typed on a command line, in nanoseconds: a plain number means seconds ("0.5"),
// as in every tool's options; otherwise a number with its unit ("500ms").
Result<uint64_t> ParseDurationOption(std::string_view text);
// true/false, yes/no, on/off, 1/0.
Result<bool> ParseBool(std::string_view text);
// Probability in [0, 1], e.g. "0.001" or "0.1%".
Result<double> ParseProbability(std::string_view text);
// A plain decimal number within [min, max].
Result<double> ParseDouble(std::string_view text, double min, double max);

std::string FormatRate(uint64_t bps);
std::string FormatBytes(uint64_t bytes);
// A count for people to read, in decimal SI units with three significant digits, as the tools
// print Gbit/s: "7.21 GB" for (7211648000, "B"), "69.0 M" for (69000000, ""), "512 B". Exact
// figures belong in CSV and JSON; this is for summary lines only.
std::string FormatSi(double value, std::string_view unit);

}  // namespace swemu
