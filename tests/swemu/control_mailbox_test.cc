// The control mailbox between a control thread and a polling "lcore" thread.
#include "swemu/control_mailbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace swemu {
namespace {

// A table whose one command changes state owned by the polling thread, as table_add does.
CommandTable CounterTable(uint64_t* counter, std::thread::id* ran_on) {
  CommandTable table;
  Status added = table.Add({"bump", "<n>", "adds n", 1, 1, [=](CommandArgs args) {
                              *ran_on = std::this_thread::get_id();
                              if (args[0] == "bad")
                                return Result<std::string>(Status::Error("bad n"));
                              *counter += std::stoull(args[0]);
                              return Result<std::string>(std::to_string(*counter));
                            }});
  EXPECT_TRUE(added.ok());
  return table;
}

TEST(ControlMailboxTest, CommandsRunOnThePollingThreadInOrder) {
  uint64_t counter = 0;
  std::thread::id ran_on;
  CommandTable table = CounterTable(&counter, &ran_on);
  ControlMailbox mailbox;
  std::atomic<bool> stop{false};
  std::thread lcore([&] {
    while (!stop.load(std::memory_order_relaxed)) mailbox.Poll(table);
  });
  uint64_t expected = 0;
  for (int i = 1; i <= 1000; ++i) {
    Result<std::string> answer = mailbox.Execute("bump " + std::to_string(i));
    expected += i;
    ASSERT_TRUE(answer.ok()) << answer.message();
    EXPECT_EQ(*answer, std::to_string(expected));
  }
  Result<std::string> bad = mailbox.Execute("bump bad");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "bump: bad n");
  EXPECT_EQ(ran_on, lcore.get_id());
  stop = true;
  lcore.join();
  EXPECT_EQ(counter, expected);
}

TEST(ControlMailboxTest, SeveralControlThreadsAreSerialised) {
  uint64_t counter = 0;
  std::thread::id ran_on;
  CommandTable table = CounterTable(&counter, &ran_on);
  ControlMailbox mailbox;
  std::atomic<bool> stop{false};
  std::thread lcore([&] {
    while (!stop.load(std::memory_order_relaxed)) mailbox.Poll(table);
  });
  std::thread a([&] {
    for (int i = 0; i < 500; ++i) EXPECT_TRUE(mailbox.Execute("bump 1").ok());
  });
  std::thread b([&] {
    for (int i = 0; i < 500; ++i) EXPECT_TRUE(mailbox.Execute("bump 2").ok());
  });
  a.join();
  b.join();
  stop = true;
  lcore.join();
  EXPECT_EQ(counter, 1500u);
}

TEST(ControlMailboxTest, ClosedMailboxRefusesWithoutBlocking) {
  uint64_t counter = 0;
  std::thread::id ran_on;
  CommandTable table = CounterTable(&counter, &ran_on);
  ControlMailbox mailbox;
  std::thread lcore([&] { mailbox.Close(); });
  lcore.join();
  Result<std::string> answer = mailbox.Execute("bump 1");
  EXPECT_FALSE(answer.ok());
  EXPECT_EQ(answer.message(), "switch is shutting down");
  EXPECT_EQ(counter, 0u);
}

TEST(ControlMailboxTest, CloseAnswersACommandPostedBeforeIt) {
  uint64_t counter = 0;
  std::thread::id ran_on;
  CommandTable table = CounterTable(&counter, &ran_on);
  ControlMailbox mailbox;
  std::atomic<bool> posted{false};
  std::thread control([&] {
    posted = true;
    Result<std::string> answer = mailbox.Execute("bump 5");
    // Either the lcore ran it before closing or Close refused it; never both, never a hang.
    if (answer.ok()) {
      EXPECT_EQ(*answer, "5");
    } else {
      EXPECT_EQ(answer.message(), "switch is shutting down");
    }
  });
  while (!posted) std::this_thread::yield();
  mailbox.Poll(table);
  mailbox.Close();
  control.join();
  EXPECT_LE(counter, 5u);
}

TEST(ControlMailboxTest, ExecuteNowRunsDirectly) {
  uint64_t counter = 0;
  std::thread::id ran_on;
  CommandTable table = CounterTable(&counter, &ran_on);
  Result<std::string> answer = ControlMailbox::ExecuteNow(table, "bump 7");
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(counter, 7u);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

}  // namespace
}  // namespace swemu
