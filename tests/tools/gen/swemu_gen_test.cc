// Runs the built swemu-gen as users do and reads back what it wrote.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/byte_order.h"

namespace swemu {
namespace {

const std::string kGen = SWEMU_BINARY_DIR "/tools/swemu-gen";

// Per test, so ctest may run the tests in parallel.
std::string Dir() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = testing::TempDir() + "swemu_gen_test_" + info->name() + "/";
  std::filesystem::create_directories(dir);
  return dir;
}

// Exit status; stderr into *err.
int RunGen(const std::string& args, std::string* err) {
  const std::string err_path = Dir() + "stderr";
  int raw = std::system((kGen + " " + args + " 2>" + err_path + " >/dev/null").c_str());
  std::ifstream in(err_path);
  *err = {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

TEST(SwemuGenTest, WritesTheRequestedFlowsAtTheRequestedRate) {
  const std::string out = Dir() + "flows.pcap";
  std::string err;
  ASSERT_EQ(RunGen("-o " + out +
                       " --count 12 --size 100 --rate 1G --start 2us --dst-ip 10.0.0.2"
                       " --dst-ip 10.0.0.3 --flows 3 --proto tcp --tos 2",
                   &err),
            0)
      << err;
  Result<std::vector<PcapRecord>> records = ReadPcapFile(out);
  ASSERT_TRUE(records.ok()) << records.message();
  ASSERT_EQ(records->size(), 12u);
  for (std::size_t i = 0; i < records->size(); ++i) {
    const PcapRecord& r = (*records)[i];
    EXPECT_EQ(r.bytes.size(), 100u);
    EXPECT_EQ(r.ts_ns, 2000 + 992 * i);                      // (100 + 24) * 8 bits at 1 Gb/s
    EXPECT_EQ(r.bytes[15], 2);                               // TOS
    EXPECT_EQ(r.bytes[23], 6);                               // TCP
    EXPECT_EQ(r.bytes[33], i % 2 == 0 ? 2 : 3);              // destinations alternate
    EXPECT_EQ(LoadBe16(&r.bytes[34]), 10000 + (i / 2) % 3);  // then the flows
  }
}

TEST(SwemuGenTest, SameSeedSameFileAndSizesStayInRange) {
  std::string err;
  const std::string a = Dir() + "a.pcap", b = Dir() + "b.pcap";
  const std::string args = " --count 200 --size 64-300 --poisson --seed 5";
  ASSERT_EQ(RunGen("-o " + a + args, &err), 0) << err;
  ASSERT_EQ(RunGen("-o " + b + args, &err), 0) << err;
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(fa), {}),
            std::string(std::istreambuf_iterator<char>(fb), {}));
  Result<std::vector<PcapRecord>> records = ReadPcapFile(a);
  ASSERT_TRUE(records.ok());
  for (const PcapRecord& r : *records) {
    EXPECT_GE(r.bytes.size(), 64u);
    EXPECT_LE(r.bytes.size(), 300u);
  }
}

TEST(SwemuGenTest, BadOptionsGiveOneLineAndStatus2) {
  const std::string out = Dir() + "never.pcap";
  for (const std::string& args :
       std::vector<std::string>{std::string("--bogus"), std::string("--count 5"),
                                "-o " + out + " --size 20", "-o " + out + " --rate fast",
                                "-o " + out + " --dst-ip 1.2.3", "-o " + out + " --proto sctp",
                                "-o " + out +
                                    " --dst-ip 10.0.0.2 --dst-ip 10.0.0.3"
                                    " --dst-mac 00:00:00:00:00:01 --dst-mac 00:00:00:00:00:02 "
                                    "--dst-mac 00:00:00:00:00:03",
                                std::string("-o /dev/null/x.pcap"),
                                "-o " + out + " stray-word", "-o " + out + " 5"}) {
    std::string err;
    EXPECT_EQ(RunGen(args, &err), 2) << args;
    EXPECT_EQ(err.rfind("swemu-gen: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_FALSE(std::filesystem::exists(out)) << args;
  }
  std::string err;
  EXPECT_EQ(RunGen("-o " + out + " -n 3 extra args", &err), 2);
  EXPECT_EQ(err, "swemu-gen: unexpected argument 'extra' (every option starts with - or --; see "
                 "--help)\n");
}

// pcap cannot hold a time past 2^32 s: swemu-gen once wrote such times wrapped. It refuses
// them, naming what to change, and leaves an earlier file of the same name as it was.
TEST(SwemuGenTest, TimesPastWhatPcapHoldsAreRefusedAndTheOldFileKept) {
  const std::string out = Dir() + "late.pcap";
  std::string err;
  ASSERT_EQ(RunGen("-o " + out + " -n 3", &err), 0) << err;
  std::ifstream old_in(out, std::ios::binary);
  const std::string old((std::istreambuf_iterator<char>(old_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(RunGen("-o " + out + " -n 10 --start 4294967295s --rate 1K", &err), 2);
  EXPECT_NE(err.find("past the last time a pcap file can hold"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  std::ifstream now_in(out, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(now_in)), std::istreambuf_iterator<char>()),
            old);
  for (const auto& entry : std::filesystem::directory_iterator(Dir())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace swemu
