#pragma once
// Running the built swemu binary from a test, as users do: per-test directory, EAL arguments for
// a shared 2-core machine, stdout/stderr captured, the EAL runtime directory cleaned up.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace swemu::testing {

// Built with AddressSanitizer (the suite's Debug ASan tree, several times slower): tests whose
// timing cannot hold there check what they can.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SWEMU_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(SWEMU_TEST_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

inline const std::string kSwemuBinary = SWEMU_BINARY_DIR "/swemu/swemu";

struct RunResult {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string CurrentTestName() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

// TempDir()/<prefix><test name>/
inline std::string TestDirFor(const std::string& prefix) {
  return ::testing::TempDir() + prefix + CurrentTestName() + "/";
}

// An EAL --file-prefix no other process uses.
inline std::string DpdkFilePrefix() {
  return "swemu-test-" + std::to_string(getpid()) + "-" + CurrentTestName();
}

// EAL for tests: no hugepages, no PCI scan, core 0.
inline std::string TestEalArgs() {
  return " -- --no-huge -m 128 --no-pci -l 0 --file-prefix " + DpdkFilePrefix();
}

// Runs a shell command line with stdout and stderr captured in dir (stdin from stdin_path).
inline RunResult RunCommandIn(const std::string& dir, const std::string& command_line,
                              const std::string& stdin_path = "/dev/null") {
  const std::string command =
      command_line + " >" + dir + "stdout 2>" + dir + "stderr <" + stdin_path;
  const int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, ReadText(dir + "stdout"),
          ReadText(dir + "stderr")};
}

// Runs swemu with its own control socket in dir, so tests can run in parallel.
inline RunResult RunSwemuIn(const std::string& dir, const std::string& args) {
  RunResult run = RunCommandIn(dir, kSwemuBinary + " --control-socket " + dir + "ctl.sock " + args);
  std::error_code ignored;  // EAL leaves its runtime directory behind; the prefix is this test's
  std::filesystem::remove_all("/var/run/dpdk/" + DpdkFilePrefix(), ignored);
  return run;
}

}  // namespace swemu::testing
