// SPDX-License-Identifier: Apache-2.0
// The wire from a job to the node agent: which socket the environment names, and a
// datagram that is taken or dropped at once, never waited for.
#include "kernels/record/agent_socket.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace gpulens::kernels {
namespace {

TEST(AgentSocket, TheEnvironmentNamesTheSocket) {
  std::string why;
  EXPECT_EQ(agent_socket_from_env("GPULENS_X", nullptr, why), "");
  EXPECT_EQ(agent_socket_from_env("GPULENS_X", "", why), "");
  EXPECT_EQ(agent_socket_from_env("GPULENS_X", "1", why), kDefaultAgentSocket);
  EXPECT_EQ(agent_socket_from_env("GPULENS_X", "agent", why), kDefaultAgentSocket);
  EXPECT_EQ(agent_socket_from_env("GPULENS_X", "/tmp/x.sock", why), "/tmp/x.sock");
  EXPECT_TRUE(why.empty());
  EXPECT_EQ(agent_socket_from_env("GPULENS_X", "relative.sock", why), "");
  EXPECT_EQ(why, "GPULENS_X 'relative.sock' is not 1, agent or an absolute socket path");
  EXPECT_EQ(agent_socket_from_env("GPULENS_X", ("/" + std::string(200, 'x')).c_str(), why), "");
  EXPECT_NE(why.find("longer"), std::string::npos) << why;
}

TEST(AgentSocket, ADatagramIsTakenOrDroppedAtOnce) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) /
                            ("gpulens-socket-" + std::to_string(getpid()) + ".sock"))
                               .string();
  std::filesystem::remove(path);
  DatagramSender sender(path);
  EXPECT_FALSE(sender.send("before"));  // nobody bound yet
  EXPECT_EQ(sender.last_errno(), ENOENT);

  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
  EXPECT_TRUE(sender.send("after"));  // the same sender finds the new socket
  char buf[16] = {};
  EXPECT_EQ(recv(fd, buf, sizeof buf, MSG_DONTWAIT), 5);
  EXPECT_STREQ(buf, "after");
  close(fd);
  std::filesystem::remove(path);

  DatagramSender too_long("/" + std::string(200, 'x'));
  EXPECT_FALSE(too_long.send("x"));
  EXPECT_EQ(too_long.last_errno(), ENAMETOOLONG);
}

}  // namespace
}  // namespace gpulens::kernels
