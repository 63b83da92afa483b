#include "pipeline/core/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace swemu {
namespace {

std::string Dir() {
  const std::string dir = testing::TempDir() + "text_file_test/";
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(TextFileTest, ReadsARegularFileWhole) {
  const std::string path = Dir() + "a.ini";
  std::ofstream(path) << "[switch]\nports = 4\n";
  Result<std::string> text = ReadTextFile(path, "config");
  ASSERT_TRUE(text.ok()) << text.message();
  EXPECT_EQ(*text, "[switch]\nports = 4\n");
  EXPECT_TRUE(CheckTextFile(path, "config").ok());
}

TEST(TextFileTest, ADirectoryIsRefusedNotReadAsEmpty) {
  Result<std::string> text = ReadTextFile(Dir(), "startup script");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.message(), Dir() + ": startup script is a directory");
  Status checked = CheckTextFile(Dir(), "startup script");
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.message(), text.message());
}

TEST(TextFileTest, AnEndlessDeviceIsRefusedAtOnce) {
  Result<std::string> text = ReadTextFile("/dev/zero", "config");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.message(), "/dev/zero: config is a device");
}

TEST(TextFileTest, AMissingFileNamesTheSystemsReason) {
  Result<std::string> text = ReadTextFile("/nonexistent/x.cli", "command script");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.message(),
            "/nonexistent/x.cli: cannot open command script (No such file or directory)");
}

TEST(TextFileTest, AFileLongerThanTheCapIsRefused) {
  const std::string path = Dir() + "big.ini";
  std::ofstream(path) << std::string(2048, '#');
  Result<std::string> text = ReadTextFile(path, "config", 1024);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.message().find("config is longer than"), std::string::npos) << text.message();
}

// A shell's process substitution, <(generate-config), is a pipe: read to its end.
TEST(TextFileTest, APipeIsReadToItsEnd) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = "ports = 2\n";
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  Result<std::string> read = ReadTextFile("/dev/fd/" + std::to_string(fds[0]), "config");
  ::close(fds[0]);
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(*read, text);
}

// A FIFO nobody opens for writing is an error after a bounded wait, not an empty config.
TEST(TextFileTest, AFifoWithNoWriterIsRefusedNotReadAsEmpty) {
  const std::string path = Dir() + "nobody.fifo";
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  Result<std::string> text = ReadTextFile(path, "config");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.message(), path + ": config is a FIFO that nobody wrote to within 10 s");
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace swemu
