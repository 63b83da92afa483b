#pragma once
// Numeric command-line options read as text and parsed by units.h, never by Boost's
// lexical_cast: that one reads "-1" into an unsigned as 4294967295 and lets "nan" into a
// double. A negative count, NaN, inf or a value past the field's type is one line naming the
// option.
#include <boost/program_options.hpp>
#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>

#include "pipeline/control/units.h"
#include "pipeline/core/status.h"
#include "pipeline/tm/tm_config.h"

namespace swemu {

// `*out` from option `name` (declared as a std::string value), within [min, max] and the type.
template <typename T>
Status ReadUintOption(const boost::program_options::variables_map& vm, const std::string& name,
                      uint64_t min, uint64_t max, T* out) {
  if (!vm.count(name)) return Status::Ok();
  max = std::min<uint64_t>(max, std::numeric_limits<T>::max());
  Result<uint64_t> value = ParseUint(vm[name].as<std::string>(), min, max);
  if (!value.ok()) return Status::Error("--" + name + ": " + value.status().message());
  *out = static_cast<T>(*value);
  return Status::Ok();
}

// A finite number within [min, max].
inline Status ReadDoubleOption(const boost::program_options::variables_map& vm,
                               const std::string& name, double min, double max, double* out) {
  if (!vm.count(name)) return Status::Ok();
  Result<double> value = ParseDouble(vm[name].as<std::string>(), min, max);
  if (!value.ok()) return Status::Error("--" + name + ": " + value.status().message());
  *out = *value;
  return Status::Ok();
}

// Checks shared by the tools' option parsers (swemu-gen's workloads and the systems' tools).
namespace opt {

namespace po = boost::program_options;

// "--option: <what the parser said>" on error, else *out = the value.
template <typename T>
Status Check(const std::string& option, Result<T> result, T* out) {
  if (!result.ok()) return Status::Error("--" + option + ": " + result.message());
  *out = *result;
  return Status::Ok();
}

// The option's text (its default when not given).
inline std::string Text(const po::variables_map& vm, const char* name) {
  return vm[name].as<std::string>();
}

// An integer option within [min, max].
inline Status CheckUint(const po::variables_map& vm, const char* name, uint64_t min,
                        uint64_t max, uint64_t* out) {
  return Check(name, ParseUint(Text(vm, name), min, max), out);
}

// True when the user gave the option (not only its default).
inline bool Given(const po::variables_map& vm, const std::string& name) {
  return vm.count(name) != 0 && !vm[name].defaulted();
}

// With --topology FILE, the first of the tool's shape options (`shape`, names without "--") the
// user gave too: the file says what they would, so one line names it. Ok without --topology.
inline Status RefuseWithTopology(const po::variables_map& vm,
                                 std::initializer_list<const char*> shape) {
  if (vm.count("topology") == 0) return Status::Ok();
  for (const char* name : shape) {
    if (Given(vm, name)) {
      return Status::Error(std::string("--") + name +
                           ": not with --topology (a topology replaces the shape options)");
    }
  }
  return Status::Ok();
}

// --alpha VALUE, the experiments' flag for dynamic thresholds: [tm] alpha on every switch, in
// ParseAlpha's spellings (1/8, 2^-3, 0.125; 0: the static buffer). *alpha unchanged without it.
inline Status CheckAlpha(const po::variables_map& vm, double* alpha) {
  if (vm.count("alpha") == 0) return Status::Ok();
  return Check("alpha", ParseAlpha(Text(vm, "alpha")), alpha);
}

// The line an experiment prints above its figures when --alpha is on; empty when it is not, so
// a default run prints what it always did.
inline std::string AlphaLine(double alpha) {
  if (alpha == 0) return "";
  return "buffer: dynamic thresholds, alpha " + FormatAlpha(alpha) +
         " on every queue of every switch ([tm] alpha)\n";
}

// --threads N, the experiments' flag for running their independent runs (schemes, settings) at
// once (pipeline/core/independent_runs.h): the output is the same for every N.
inline constexpr unsigned kMaxThreads = 256;
inline void AddThreadsOption(po::options_description& options, const char* runs) {
  options.add_options()(
      "threads", po::value<std::string>()->default_value("1"),
      (std::string("run ") + runs + " at once on up to N threads (1.." +
       std::to_string(kMaxThreads) + "); the output is the same for every N, only faster")
          .c_str());
}
inline Status CheckThreads(const po::variables_map& vm, unsigned* threads) {
  return ReadUintOption(vm, "threads", 1, kMaxThreads, threads);
}

}  // namespace opt

}  // namespace swemu
