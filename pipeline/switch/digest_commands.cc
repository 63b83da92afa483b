// The control plane's side of digests (pipeline/program/digest.h), for a program that sends
// them: real time's digest pump delivers what it drained from the replicas with
// `digest_deliver`, so that every replica applies the same records in the same order, and
// tells the time with `control_time`; `show digests` reads the channel's counters.
#include <string>
#include <vector>

#include "pipeline/control/units.h"
#include "pipeline/switch/switch.h"
#include "pipeline/switch/switch_commands.h"

namespace swemu {
namespace {

Result<std::string> Deliver(Switch& sw, CommandArgs args) {
  if (args.size() < 1 + kDigestWords || (args.size() - 1) % (1 + kDigestWords) != 0) {
    return Status::Error("expected <now> then records of <time> and " +
                         std::to_string(kDigestWords) + " words");
  }
  Result<uint64_t> now = ParseUint(args[0], 0, kNever);
  if (!now.ok()) return Status::Error("now " + now.message());
  std::vector<DigestRecord> records;
  for (std::size_t i = 1; i < args.size(); i += 1 + kDigestWords) {
    DigestRecord record;
    Result<uint64_t> time = ParseUint(args[i], 0, kNever);
    if (!time.ok()) return Status::Error("time " + time.message());
    record.time = *time;
    for (uint32_t w = 0; w < kDigestWords; ++w) {
      Result<uint64_t> word = ParseUint(args[i + 1 + w], 0, UINT64_MAX);
      if (!word.ok()) return Status::Error("word " + word.message());
      record.words[w] = *word;
    }
    records.push_back(record);
  }
  sw.program().OnDigests(records, *now);
  return std::string();
}

}  // namespace

Status AddDigestCommands(Switch& sw, CommandTable& commands) {
  if (sw.digests() == nullptr) return Status::Ok();
  SWEMU_RETURN_IF_ERROR(commands.Add(
      {"digest_deliver", "<now> <time> <word...> [<time> <word...>]...",
       "hand the program digest records (the control plane's own path; real time's pump)", 1 + 1 + kDigestWords,
       CommandTable::kUnbounded, [&sw](CommandArgs args) { return Deliver(sw, args); }}));
  SWEMU_RETURN_IF_ERROR(commands.Add(
      {"control_time", "<now_ns>", "tell the program's control plane the time (aging)", 1, 1,
       [&sw](CommandArgs args) -> Result<std::string> {
         Result<uint64_t> now = ParseUint(args[0], 0, kNever);
         if (!now.ok()) return Status::Error("now " + now.message());
         sw.program().OnControlTime(*now);
         return std::string();
       }}));
  return commands.Add({"show digests", "", "the digest channel's counters", 0, 0,
                       [&sw](CommandArgs) -> Result<std::string> {
                         return sw.digests()->Summary() + "\n";
                       },
                       SumNumbers()});
}

}  // namespace swemu
