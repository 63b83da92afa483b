#include "pipeline/control/command_table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace swemu {
namespace {

class CommandTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(table_
                    .Add({"set", "<value>", "set the value", 1, 1,
                          [this](CommandArgs args) -> Result<std::string> {
                            if (args[0] == "bad") return Status::Error("bad value");
                            value_ = args[0];
                            return "ok " + args[0];
                          }})
                    .ok());
    ASSERT_TRUE(table_
                    .Add({"show stats", "", "show", 0, 0,
                          [](CommandArgs) -> Result<std::string> { return std::string("stats"); }})
                    .ok());
  }
  CommandTable table_;
  std::string value_;
};

TEST_F(CommandTableTest, ExecutesOneAndTwoWordCommands) {
  Result<std::string> r = table_.Execute("set 5");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "ok 5");
  EXPECT_EQ(value_, "5");
  r = table_.Execute("  show   stats  # trailing comment");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "stats");
}

TEST_F(CommandTableTest, BlankAndCommentLinesDoNothing) {
  EXPECT_TRUE(table_.Execute("").ok());
  EXPECT_TRUE(table_.Execute("   # only a comment").ok());
  EXPECT_EQ(value_, "");
}

TEST_F(CommandTableTest, ErrorsNameTheProblemAndChangeNothing) {
  Result<std::string> r = table_.Execute("frobnicate 1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "unknown command: frobnicate");
  r = table_.Execute("set");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "set: wrong number of arguments; usage: set <value>");
  r = table_.Execute("set bad");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "set: bad value");
  r = table_.Execute("show");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "show: missing subcommand (see help)");
  r = table_.Execute("show nothing");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "unknown command: show nothing");
  EXPECT_EQ(value_, "");
}

TEST_F(CommandTableTest, RefusesDuplicateCommand) {
  Status s = table_.Add(
      {"set", "", "", 0, 0, [](CommandArgs) -> Result<std::string> { return std::string(); }});
  EXPECT_FALSE(s.ok());
}

TEST_F(CommandTableTest, ScriptStopsAtFirstErrorWithFileAndLine) {
  std::string path = ::testing::TempDir() + "/script.cli";
  {
    std::ofstream out(path);
    out << "# startup\nset 1\n\nset bad\nset 3\n";
  }
  std::string output;
  Status s = table_.RunScript(path, &output);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), path + ":4: set: bad value");
  EXPECT_EQ(value_, "1");
  EXPECT_EQ(output, "ok 1\n");
  std::remove(path.c_str());
}

TEST_F(CommandTableTest, MissingScriptIsAnError) {
  Status s = table_.RunScript("/nonexistent/x.cli");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "/nonexistent/x.cli: cannot open command script (No such file or directory)");
}

TEST(TokenizeTest, SplitsOnWhitespaceAndStopsAtComment) {
  auto t = CommandTable::Tokenize("table_add t a 1 => 2\t# c");
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[4], "=>");
  EXPECT_EQ(t[5], "2");
}

}  // namespace
}  // namespace swemu
