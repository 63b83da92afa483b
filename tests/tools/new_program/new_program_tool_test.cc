// tools/new_program.sh, the generator of docs/programs.md, through new_program_test.sh beside
// this file: it runs the generator into a scratch copy of the example's files (never into this
// tree), checks its refusals, --dry-run and renaming, and compiles the generated program and test
// with the compiler this build uses (CMAKE_CXX_COMPILER in the build's CMakeCache.txt).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

// The build's C++ compiler, or "" when the cache does not name one.
std::string CxxCompiler() {
  std::ifstream cache(SWEMU_BINARY_DIR "/CMakeCache.txt");
  const std::string key = "CMAKE_CXX_COMPILER:FILEPATH=";
  for (std::string line; std::getline(cache, line);) {
    if (line.rfind(key, 0) == 0) return line.substr(key.size());
  }
  return "";
}

TEST(NewProgramTool, GeneratesARenamedProgramThatCompiles) {
  const std::string cxx = CxxCompiler();
  ASSERT_FALSE(cxx.empty()) << "no CMAKE_CXX_COMPILER in " SWEMU_BINARY_DIR "/CMakeCache.txt";
  const std::string dir = testing::TestDirFor("swemu_new_program_");
  std::filesystem::create_directories(dir);
  testing::RunResult run = testing::RunCommandIn(
      dir, std::string("bash " SWEMU_SOURCE_DIR
                       "/tests/tools/new_program/new_program_test.sh " SWEMU_SOURCE_DIR " ") +
               cxx + " " + dir + "scratch");
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_EQ(run.out, "new_program: ok\n") << run.err;
}

}  // namespace
}  // namespace swemu
