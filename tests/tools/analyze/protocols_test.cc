// swemu-analyze's protocol registry: every protocol's file registers itself, and Protocols() lists
// them by their order keys, whatever order the linker ran the registrars in, so the per-packet
// table's columns stay where they were (ATP first: --udp-port's default belongs to it).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tools/analyze/protocol_analyzer.h"

namespace swemu {
namespace {

TEST(ProtocolsTest, EveryProtocolInItsColumnOrder) {
  std::vector<std::string> names;
  for (const ProtocolEntry& entry : Protocols()) names.emplace_back(entry.name);
  EXPECT_EQ(names, (std::vector<std::string>{"atp", "pcn", "dlcp", "goat", "plink"}));
}

TEST(ProtocolsTest, OrderKeysIncreaseAndNamesAreUnique) {
  std::set<std::string> names;
  int previous = -1;
  for (const ProtocolEntry& entry : Protocols()) {
    EXPECT_GT(entry.order, previous) << entry.name << ": two protocols share an order key";
    previous = entry.order;
    EXPECT_TRUE(names.emplace(entry.name).second) << entry.name;
    EXPECT_NE(entry.fields, nullptr) << entry.name;
    EXPECT_NE(entry.add_options, nullptr) << entry.name;
    EXPECT_NE(entry.make, nullptr) << entry.name;
  }
}

TEST(ProtocolsTest, FieldsCarryTheProtocolsPrefix) {
  for (const ProtocolEntry& entry : Protocols()) {
    const std::string prefix = std::string(entry.name) + ".";
    for (const std::string& field : entry.fields()) {
      EXPECT_EQ(field.rfind(prefix, 0), 0u) << field;
    }
  }
}

}  // namespace
}  // namespace swemu
