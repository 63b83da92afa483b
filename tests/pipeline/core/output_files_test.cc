// The one way outputs are written: aside and moved into place, devices and FIFOs written
// through and never replaced, bad paths refused before anything is touched, and temporary
// files removed by the signal cleanup (interrupt.h).
#include "pipeline/core/output_files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "pipeline/core/interrupt.h"

namespace swemu {
namespace {
namespace fs = std::filesystem;

std::string Dir(const std::string& name) {
  const std::string dir = testing::TempDir() + "output_files_test/" + name + "/";
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool IsCharDevice(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// Nothing but the named files is left in `dir` (no *.tmp-PID, no staging directory).
std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(OutputFilesTest, BadPathsAreRefusedWithOneLineAndNothingIsTouched) {
  const std::string dir = Dir("bad");
  std::ofstream(dir + "file") << "x";
  EXPECT_EQ(CheckOutputPath("", "--json").message(), "--json: an empty path");
  EXPECT_EQ(CheckOutputPath(dir + "adir/", "--out").message(),
            "--out " + dir + "adir/: names a directory (ends in '/')");
  EXPECT_EQ(CheckOutputPath(dir, "--csv").message(), "--csv " + dir + ": is a directory");
  EXPECT_EQ(CheckOutputPath(dir + "file/x.json", "--json").message(),
            "--json " + dir + "file/x.json: " + dir + "file is not a directory");
  EXPECT_EQ(CheckOutputDirectory(dir + "file", "--csv").message(),
            "--csv " + dir + "file: is not a directory");
  EXPECT_EQ(CheckOutputDirectory("", "--csv").message(), "--csv: an empty path");
  // A new name (in a directory to be made) and the devices are fine; none was created.
  EXPECT_TRUE(CheckOutputPath(dir + "new/sub/x.json", "--json").ok());
  EXPECT_TRUE(CheckOutputPath("/dev/null", "--json").ok());
  EXPECT_TRUE(CheckOutputDirectory(dir + "new", "--csv").ok());
  EXPECT_EQ(Names(dir), std::vector<std::string>{"file"});
}

TEST(OutputFilesTest, ACharacterDeviceIsWrittenThroughNeverReplaced) {
  ASSERT_TRUE(IsCharDevice("/dev/null"));
  ASSERT_TRUE(WriteTextFile("/dev/null", "{}\n").ok());
  EXPECT_TRUE(IsCharDevice("/dev/null"));
  // /dev/full: the write fails with one line naming the path, and the device stays.
  const Status full = WriteTextFile("/dev/full", std::string(1 << 16, 'x'));
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.message(), "cannot write /dev/full (No space left on device)");
  EXPECT_TRUE(IsCharDevice("/dev/full"));
}

TEST(OutputFilesTest, AFifoIsWrittenThrough) {
  const std::string fifo = Dir("fifo") + "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string read;
  std::thread reader([&] { read = Slurp(fifo); });
  ASSERT_TRUE(WriteTextFile(fifo, "through\n").ok());
  reader.join();
  EXPECT_EQ(read, "through\n");
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(OutputFilesTest, AFailedRunLeavesTheEarlierOutputsAsTheyWere) {
  const std::string dir = Dir("failed");
  std::ofstream(dir + "a.json") << "earlier a";
  std::ofstream(dir + "b.csv") << "earlier b";
  {
    OutputFiles files;
    std::ofstream(files.Aside(dir + "a.json")) << "new a";
    Result<std::string> b = files.Staged(dir, "b.csv");
    ASSERT_TRUE(b.ok()) << b.message();
    std::ofstream(*b) << "new b";
    // No Commit: the run failed half-way.
  }
  EXPECT_EQ(Slurp(dir + "a.json"), "earlier a");
  EXPECT_EQ(Slurp(dir + "b.csv"), "earlier b");
  EXPECT_EQ(Names(dir), (std::vector<std::string>{"a.json", "b.csv"}));
}

TEST(OutputFilesTest, ACommittedRunReplacesEveryFileAndLeavesNoTemporaries) {
  const std::string dir = Dir("committed");
  std::ofstream(dir + "a.json") << "earlier a";
  {
    OutputFiles files;
    std::ofstream(files.Aside(dir + "a.json")) << "new a";
    Result<std::string> b = files.Staged(dir + "sub", "b.csv");
    ASSERT_TRUE(b.ok()) << b.message();
    std::ofstream(*b) << "new b";
    ASSERT_TRUE(files.Commit().ok());
  }
  EXPECT_EQ(Slurp(dir + "a.json"), "new a");
  EXPECT_EQ(Slurp(dir + "sub/b.csv"), "new b");
  EXPECT_EQ(Names(dir), (std::vector<std::string>{"a.json", "sub"}));
  EXPECT_EQ(Names(dir + "sub"), std::vector<std::string>{"b.csv"});
}

TEST(OutputFilesTest, AFailedRunRemovesTheDirectoriesItMade) {
  const std::string dir = Dir("made");
  {
    OutputFiles files;
    std::ofstream(files.Aside(dir + "x/y/a.json")) << "new";
  }
  EXPECT_TRUE(Names(dir).empty());
}

TEST(OutputFilesTest, ASymbolicLinkStaysALinkToTheNewContent) {
  const std::string dir = Dir("link");
  std::ofstream(dir + "target.json") << "earlier";
  fs::create_symlink(dir + "target.json", dir + "link.json");
  ASSERT_TRUE(WriteTextFile(dir + "link.json", "new").ok());
  EXPECT_TRUE(fs::is_symlink(dir + "link.json"));
  EXPECT_EQ(Slurp(dir + "target.json"), "new");
}

TEST(InterruptTest, CleanupStopsChildrenAndRemovesRegisteredPaths) {
  const std::string dir = Dir("cleanup");
  fs::create_directories(dir + "runtime/sub");
  std::ofstream(dir + "runtime/config") << "x";
  std::ofstream(dir + "runtime/sub/y") << "y";
  std::ofstream(dir + "out.tmp-1") << "partial";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();  // SIGINT ends it
    _exit(0);
  }
  const int process = StopOnInterrupt(child);
  RemovedOnInterrupt runtime(dir + "runtime");
  RemovedOnInterrupt temp(dir + "out.tmp-1");
  RunInterruptCleanup();
  EXPECT_EQ(::kill(child, 0), -1);  // stopped and reaped
  EXPECT_TRUE(Names(dir).empty());
  Forget(process);
}

// The whole path a user meets: a tool killed by SIGTERM mid-run leaves no temporary file and
// keeps the earlier output, and its exit status says which signal ended it.
TEST(InterruptTest, ASignalEndsTheToolWithoutLeavingTemporaries) {
  const std::string dir = Dir("signal");
  std::ofstream(dir + "out.json") << "earlier";
  const pid_t tool = fork();
  ASSERT_GE(tool, 0);
  if (tool == 0) {
    InstallInterruptCleanup("test-tool");
    OutputFiles files;
    std::ofstream(files.Aside(dir + "out.json")) << "half";
    Result<std::string> staged = files.Staged(dir, "port0.pcap");
    if (!staged.ok()) _exit(3);
    std::ofstream(*staged) << "half";
    ::raise(SIGTERM);
    _exit(4);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(tool, &status, 0), tool);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_EQ(Names(dir), std::vector<std::string>{"out.json"});
  EXPECT_EQ(Slurp(dir + "out.json"), "earlier");
}

}  // namespace
}  // namespace swemu
