#include "tests/hostlib/dpdk/eal_environment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "hostlib/dpdk/dpdk_host.h"

namespace swemu::testing {
namespace {

Status g_eal_status = Status::Error("EAL: the test environment did not run");

class EalEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    g_eal_status = DpdkHost::InitEal(
        {"--no-huge", "-m", "256", "--no-pci", "-l", "1", "--file-prefix", prefix_}, std::cerr);
  }
  void TearDown() override {
    DpdkHost::CleanupEal();
    std::error_code ignored;  // EAL leaves its runtime directory behind
    std::filesystem::remove_all("/var/run/dpdk/" + prefix_, ignored);
  }

 private:
  std::string prefix_ = "swemu-hostlib-dpdk-" + std::to_string(getpid());
};

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new EalEnvironment());

TEST(DpdkHostEalTest, SecondInitIsAOneLineError) {
  ASSERT_TRUE(EalStatus().ok()) << EalStatus().message();
  Status again = DpdkHost::InitEal({"--no-huge"}, std::cerr);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.message(), "EAL: already initialised in this process");
}

}  // namespace

const Status& EalStatus() { return g_eal_status; }

}  // namespace swemu::testing
