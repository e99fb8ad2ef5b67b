// SPDX-License-Identifier: Apache-2.0
// Where the injection library's records go (src/inject/sender.cpp): the process's
// record file line by line, and each chunk's summary to the node agent.
#ifdef GPULENS_INJECTION_SEAMS
#include "inject/sender.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "inject/injection.hpp"
#include "inject_env.hpp"
#include "inject_records.hpp"

namespace gpulens::inject {
namespace {

TEST(Sender, NothingIsWrittenBeforeCuptiAttached) {
  const auto dir = testing::fresh_dir("sender-early");
  Injection in;
  in.sender.out_dir = dir.string();
  write_chunk(in, 0, 10, true);
  EXPECT_FALSE(std::filesystem::exists(testing::record_file(dir)));
  std::filesystem::remove_all(dir);
}

TEST(Sender, ChunksFollowTheProcessLineInOrder) {
  const auto dir = testing::fresh_dir("sender-chunks");
  Injection in;
  in.sender.out_dir = dir.string();
  in.records.start(1000, 1'800'000'000'000'000'000);
  write_chunk(in, 1010, 1020, true);
  write_chunk(in, 1020, 1050, false);
  const auto lines = testing::record_lines(dir);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["record"], "process");
  EXPECT_EQ(lines[0]["pid"], getpid());
  EXPECT_EQ(lines[1]["record"], "chunk");
  EXPECT_EQ(lines[1]["seq"], 0);
  EXPECT_EQ(lines[1]["span"], nlohmann::json::array({10, 20}));  // relative to the attach
  EXPECT_TRUE(lines[1]["window"].get<bool>());
  EXPECT_EQ(lines[2]["seq"], 1);
  EXPECT_FALSE(lines[2]["window"].get<bool>());
  std::filesystem::remove_all(dir);
}

TEST(Sender, TheEndLineSaysTheStatusOnceAndNothingFollowsIt) {
  const auto dir = testing::fresh_dir("sender-end");
  Injection in;
  in.sender.out_dir = dir.string();
  in.records.start(1000, 1);
  write_chunk(in, 1000, 2000, true);
  in.cupti.fail("cupti_error", "cuptiActivityEnable(10): busy");
  write_end(in);
  write_chunk(in, 2000, 3000, true);  // too late: the record is closed
  write_end(in);
  const auto lines = testing::record_lines(dir);
  ASSERT_EQ(lines.size(), 3u);
  const auto& end = lines[2];
  EXPECT_EQ(end["record"], "end");
  EXPECT_EQ(end["status"], "cupti_error");
  EXPECT_EQ(end["reason"], "cuptiActivityEnable(10): busy");
  EXPECT_EQ(end["chunks"], 1);
  // The library no longer detaches CUPTI: its end line never says so.
  EXPECT_FALSE(end.contains("detaches"));
  EXPECT_FALSE(end.contains("detach_note"));
  std::filesystem::remove_all(dir);
}

TEST(Sender, AProcessWhoseCuptiNeverAttachedStillEndsItsRecord) {
  const auto dir = testing::fresh_dir("sender-none");
  Injection in;
  in.sender.out_dir = dir.string();
  in.cupti.fail("no_cupti", "libcupti was not found");
  write_end(in);
  const auto lines = testing::record_lines(dir);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["record"], "process");
  EXPECT_EQ(lines[1]["status"], "no_cupti");
  EXPECT_EQ(lines[1]["chunks"], 0);
  std::filesystem::remove_all(dir);
}

TEST(Sender, WithoutARecordsDirectoryOnlyTheAgentHearsOfAChunk) {
  const auto dir = testing::fresh_dir("sender-agent");
  const std::string path = (dir / "agent.sock").string();
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
  Injection in;
  in.sender.agent = std::make_unique<AgentLink>(path);
  in.records.start(0, 1'800'000'000'000'000'000);
  write_chunk(in, 0, 2'000'000'000, true);
  write_end(in);  // no record file to end
  char buf[65536];
  const ssize_t n = recv(fd, buf, sizeof buf, 0);
  EXPECT_GT(n, 0);  // the kernel holds the datagram: no wait needed
  EXPECT_EQ(in.sender.agent->sent(), 1u);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);  // the socket alone
  close(fd);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpulens::inject
#endif
