#include "pipeline/program/program_options.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace swemu {
namespace {

// order() is the order keys were first set (a switch file's order, which its writer keeps);
// setting a key again changes its value, not its place.
TEST(ProgramOptionsTest, KeysKeepTheOrderTheyWereFirstSet) {
  ProgramOptions options;
  options.Set("slots", "78");
  options.Set("elements", "64");
  options.Set("slots", "80");
  EXPECT_EQ(options.order(), (std::vector<std::string>{"slots", "elements"}));
  EXPECT_EQ(options.values(), (std::map<std::string, std::string>{{"elements", "64"},
                                                                   {"slots", "80"}}));
}

TEST(ProgramOptionsTest, FromAMapTheOrderIsTheMaps) {
  const ProgramOptions options({{"b", "2"}, {"a", "1"}});
  EXPECT_EQ(options.order(), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace swemu
