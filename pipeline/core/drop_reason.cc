#include "pipeline/core/drop_reason.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace swemu {
namespace {

constexpr std::size_t kSwitchReasons = static_cast<std::size_t>(DropReason::kFirstProgramReason);
static_assert(kSwitchReasons < kDropReasonCount);

constexpr std::string_view kSwitchNames[] = {
#define SWEMU_DROP_NAME(id, name) name,
    SWEMU_DROP_REASONS(SWEMU_DROP_NAME)
#undef SWEMU_DROP_NAME
};

// The programs' names by id - kSwitchReasons. A function's static: registrations run from other
// files' static initialisers, in an order no file controls.
std::array<std::string, kDropReasonCount - kSwitchReasons>& ProgramNames() {
  static std::array<std::string, kDropReasonCount - kSwitchReasons> names;
  return names;
}

[[noreturn]] void Refuse(std::string_view name, const char* why) {
  std::fprintf(stderr, "RegisterDropReason(\"%.*s\"): %s\n", static_cast<int>(name.size()),
               name.data(), why);
  std::abort();
}

}  // namespace

DropReason RegisterDropReason(std::string_view name) {
  for (std::string_view own : kSwitchNames) {
    if (own == name) Refuse(name, "the switch's own reason");
  }
  if (name.empty()) Refuse(name, "a reason needs a name");
  auto& names = ProgramNames();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name || names[i].empty()) {
      names[i] = std::string(name);
      return static_cast<DropReason>(kSwitchReasons + i);
    }
  }
  Refuse(name, "every drop reason id is taken (kDropReasonCount)");
}

std::string_view DropReasonName(DropReason reason) {
  const auto index = static_cast<std::size_t>(reason);
  if (index < kSwitchReasons) return kSwitchNames[index];
  if (index >= kDropReasonCount) return {};
  return ProgramNames()[index - kSwitchReasons];
}

}  // namespace swemu
