// SPDX-License-Identifier: Apache-2.0
// Regression tests for issue 17, classes 3 to 6: config values that were
// accepted, web-config header injection, ambiguous requests, NUL in passwords,
// overflowing parameters, the predictable replay history, slow clients holding
// every worker, the lost stop, and signals that missed the job's grandchildren.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "core/marks_tail.hpp"
#include "diagnosis/config.hpp"
#include "http/basic_auth.hpp"
#include "http/web_config.hpp"
#include "http/yaml_subset.hpp"
#include "http_test_client.hpp"
#include "jobs/child_process.hpp"
#include "server_support.hpp"
#include "store/history_store.hpp"

namespace gpulens {
namespace {

using gpulens::testing::connect_loopback;
using gpulens::testing::scratch_dir;

std::string config_error(const std::string& text) {
  auto c = diagnosis::parse_diagnosis_config(text, "a.toml");
  return c ? std::string("accepted") : c.error().message;
}

TEST(HardenedConfig, NonFiniteAndHugeDurationsAreRefused) {
  EXPECT_EQ(config_error("[diagnosis]\nwindow = nan\n"),
            "a.toml:2:10: window must be a duration such as 90, \"90s\", \"10m\" or \"1h\"");
  EXPECT_EQ(config_error("[diagnosis]\nwindow = inf\n"),
            "a.toml:2:10: window is longer than 30 days (the longest duration a config may give)");
  // Exponents are no part of the duration grammar (docs/durations.md).
  EXPECT_NE(config_error("[diagnosis]\nwindow = \"1e308h\"\n").find("is not a duration"),
            std::string::npos);
  EXPECT_EQ(config_error("[diagnosis]\nwindow = \"31d\"\n"),
            "a.toml:2:10: window is longer than 30 days (the longest duration a config may give)");
  EXPECT_NE(config_error("[alerts.stalled]\nfor = nan\n"), "accepted");
  EXPECT_NE(config_error("[alerts.stalled]\nfor = nan\n").find("a.toml:2:7:"), std::string::npos);
  EXPECT_EQ(config_error("[diagnosis]\nwindow = \"30m\"\n"), "accepted");
}

TEST(HardenedConfig, RuleDurationsMustBePositiveOrNonNegative) {
  EXPECT_EQ(config_error("[alerts.memory_growth]\nbucket_s = 0\n"),
            "a.toml:2:12: bucket_s = 0 must be more than 0");
  EXPECT_EQ(config_error("[alerts.memory_growth]\nbucket_s = -1\n"),
            "a.toml:2:12: bucket_s = -1 must be more than 0");
  EXPECT_EQ(config_error("[alerts.xid_error]\nquiet_s = -1e300\n"),
            "a.toml:2:11: quiet_s = -1e+300 must be at least 0");
  EXPECT_NE(config_error("[alerts.memory_growth]\nmax_time_to_oom_h = 1e9\n"), "accepted");
  EXPECT_EQ(config_error("[alerts.memory_growth]\nbucket_s = 10\nmax_time_to_oom_h = 48\n"),
            "accepted");
}

TEST(HardenedConfig, NulByteIsRefusedBeforeTheTomlParser) {
  // Found by fuzz_config: "[\0" aborted in toml++'s key parser.
  EXPECT_EQ(config_error(std::string("[diagnosis]\n[\0", 15)),
            "a.toml:2:2: a NUL byte (TOML allows no control characters)");
  // "[#" aborted debug builds in toml++'s own assertion.
  EXPECT_NE(config_error("[#").find("a.toml:1:2: Error while parsing key"), std::string::npos);
}

TEST(HardenedConfig, NonAsciiIsRefusedBeforeTheTomlParser) {
  // Found by fuzz_config: "\u0425[" and a U+0357 after a broken multi-line string
  // drove toml++ 3.3's whitespace test into __builtin_unreachable (undefined
  // behaviour, caught by UBSan).
  const std::string why =
      "a non-ASCII character (a config file is ASCII: write it in a string as a \\uXXXX escape, "
      "e.g. \"\\u20AC\" for the euro sign)";
  EXPECT_EQ(config_error("\xd0\xa5["), "a.toml:1:1: " + why);
  EXPECT_EQ(config_error("[diagnosis]\nwindow = 5\xc2\xa0\n"), "a.toml:2:11: " + why);
  EXPECT_EQ(config_error("2=2\x10hh+clear_f'''or\xcd\x97hk"), "a.toml:1:20: " + why);
  // Escapes carry any character.
  EXPECT_EQ(config_error("[[alerts.custom]]\nname = \"r\"\nmetric = \"gpu_util\"\nvalue = 1\n"
                         "message = \"\\u0425 \\u20AC\"\n"),
            "accepted");
}

TEST(HardenedMarks, AMarkWhoseTimeIsNotANumberTakesTheTimeItWasRead) {
  // Found by fuzz_marks: {"t":"gpu"} threw out of json::value() and ended
  // `gpulens run` (std::terminate) on a line its job wrote.
  const auto mark = parse_mark_line(R"({"mark": "trainstart", "t":"gpu"})", 5.0);
  ASSERT_TRUE(mark.has_value());
  EXPECT_EQ(mark->name, "trainstart");
  EXPECT_DOUBLE_EQ(mark->t, 5.0);
}

TEST(HardenedConfig, CustomRulesAreBoundedAndDuplicatesFound) {
  std::string text;
  for (std::size_t i = 0; i <= diagnosis::kMaxCustomRules; ++i) {
    text += "[[alerts.custom]]\nname = \"r" + std::to_string(i) +
            "\"\nmetric = \"gpu_util\"\nvalue = 1\n";
  }
  EXPECT_NE(config_error(text).find("1001 custom rules (at most 1000 in one file)"),
            std::string::npos);
  const std::string twice =
      "[[alerts.custom]]\nname = \"a\"\nmetric = \"gpu_util\"\nvalue = 1\n"
      "[[alerts.custom]]\nname = \"a\"\nmetric = \"gpu_util\"\nvalue = 2\n";
  EXPECT_EQ(config_error(twice), "a.toml:5:1: custom rule \"a\" is defined twice");
}

TEST(HardenedConfig, DiagnoseWindowOptionRefusesNan) {
  for (const char* w : {"nan", "inf", "1e300"}) {
    const auto r = gpulens::testing::run_gpulens(
        std::string("diagnose --replay examples/calibration-h100.trace.jsonl --window ") + w);
    EXPECT_EQ(r.exit_code, 2) << w << r.err;
  }
}

std::string web_error(const std::string& text) {
  auto c = http::parse_web_config(text, "web.yml");
  return c ? std::string("accepted") : c.error().message;
}

TEST(HardenedWebConfig, HeadersCannotInjectOrDuplicate) {
  EXPECT_NE(web_error("http_server_config:\n  headers:\n    X-A: \"ok\\nSet-Cookie: a=b\"\n")
                .find("web.yml:3: the value of 'X-A' holds a control character"),
            std::string::npos);
  EXPECT_NE(web_error("http_server_config:\n  headers:\n    \"X A\": v\n")
                .find("web.yml:3: 'X A' is not a header name"),
            std::string::npos);
  EXPECT_NE(web_error("http_server_config:\n  headers:\n    Content-Length: \"5\"\n")
                .find("the server sets 'Content-Length' itself"),
            std::string::npos);
  EXPECT_EQ(web_error("http_server_config: yes\n"),
            "web.yml:1: http_server_config must be a section");
  EXPECT_EQ(web_error("http_server_config:\n  headers:\n    X-Frame-Options: SAMEORIGIN\n"),
            "accepted");
}

TEST(HardenedWebConfig, UsersAreNamedBoundedAndLoadedInLinearTime) {
  const std::string hash = "$2b$10$abcdefghijklmnopqrstuuqflPDzB6gcMhKa1rZqKiun2YGL5sa2u";
  EXPECT_EQ(web_error("basic_auth_users:\n  \"\": " + hash + "\n"),
            "web.yml:2: a user name cannot be empty");
  std::string many = "basic_auth_users:\n";
  for (std::size_t i = 0; i <= http::kMaxWebUsers; ++i)
    many += "  u" + std::to_string(i) + ": " + hash + "\n";
  EXPECT_EQ(web_error(many), "web.yml:1: 10001 users (at most 10000 in one file)");
}

TEST(HardenedWebConfig, DeepYamlIsRefusedBeforeRecursing) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
  auto c = http::parse_yaml_subset(text, "deep.yml");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("nested deeper than 16 levels"), std::string::npos);
}

TEST(HardenedAuth, APasswordWithANulNeverAuthenticates) {
  const std::string hash = http::hash_password("secret", 4);
  ASSERT_FALSE(hash.empty());
  EXPECT_TRUE(http::verify_password("secret", hash));
  EXPECT_FALSE(http::verify_password(std::string("secret\0junk", 11), hash));
}

TEST(HardenedHistory, SymlinksAndForeignFilesAreRefusedNewFilesArePrivate) {
  const auto dir = scratch_dir("claim");
  const std::string target = dir + "/victim";
  std::ofstream(target) << "x";
  std::filesystem::create_symlink(target, dir + "/h.db");
  auto linked = store::claim_history_file(dir + "/h.db");
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("symbolic link"), std::string::npos);

  ASSERT_TRUE(store::claim_history_file(dir + "/new.db"));
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/new.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  std::ofstream(dir + "/old.db") << "";
  ::chmod((dir + "/old.db").c_str(), 0644);
  ASSERT_TRUE(store::claim_history_file(dir + "/old.db"));
  ASSERT_EQ(::stat((dir + "/old.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  std::filesystem::create_symlink(target, dir + "/w.db-wal");
  EXPECT_FALSE(store::claim_history_file(dir + "/w.db"));
}

TEST(HardenedServe, ReplayHistoryLivesInAPrivateDirectory) {
  // The predictable /tmp/gpulens-replay-<pid>.db is gone: a planted symlink
  // there is never followed (it would have to guess a mkdtemp name).
  const auto r = gpulens::testing::run_gpulens(
      "serve --replay examples/calibration-h100.trace.jsonl --speed 0 --exit-at-end "
      "--listen 127.0.0.1:0 --log-level error");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(HardenedServer, StopBeforeServeIsNotLost) {
  // --exit-at-end hung when its stop() came before serve() had started.
  exposition::ServerOptions o;
  o.listen = "127.0.0.1:0";
  exposition::ApiContext ctx;
  auto snap = std::make_shared<const agent::LiveSnapshot>(gpulens::testing::fixed_snapshot());
  ctx.snapshot = [snap] { return snap; };
  auto s = exposition::HttpServer::create(o, ctx);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_TRUE((*s)->bind());
  (*s)->stop();
  auto served = std::async(std::launch::async, [&] { (*s)->serve(); });
  ASSERT_EQ(served.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "serve() did not return after an early stop()";
}

std::string exchange(int port, const std::string& bytes) {
  const int fd = connect_loopback(port);
  if (fd < 0) return {};
  timeval tv{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)!write(fd, bytes.data(), bytes.size());
  char buf[4096];
  const auto n = read(fd, buf, sizeof buf);
  close(fd);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

TEST(HardenedServer, ConflictingContentLengthsAreABadRequest) {
  gpulens::testing::RunningServer r({});
  ASSERT_TRUE(r.server) << r.error;
  const auto reply = exchange(r.port(),
                              "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                              "Content-Length: 5\r\n\r\n");
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 400")) << reply.substr(0, 80);
}

TEST(HardenedServer, SlowClientsDoNotHoldTheWorkers) {
  // One worker, long deadlines: before, four clients dribbling a request head
  // each held a worker for the whole request deadline (60 s here) and the
  // scrape waited behind them. Now they wait in the gate and the scrape is
  // answered by the free worker.
  exposition::ServerOptions o;
  o.threads = 1;
  o.request_timeout = std::chrono::milliseconds(60000);
  o.read_timeout_s = 60;
  gpulens::testing::RunningServer r(o);
  ASSERT_TRUE(r.server) << r.error;
  std::vector<int> slow;
  for (int i = 0; i < 4; ++i) {
    const int fd = connect_loopback(r.port());
    ASSERT_GE(fd, 0);
    (void)!write(fd, "GET /metrics HTTP/1.1\r\nHo", 25);
    slow.push_back(fd);
  }
  const int idle = connect_loopback(r.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto reply =
      exchange(r.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 200")) << reply.substr(0, 80);
  for (int fd : slow) close(fd);
  close(idle);
}

char process_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() ? 'X' : text[paren + 2];
}

TEST(HardenedRun, SignalsReachTheWholeJob) {
  const auto dir = scratch_dir("pgroup");
  const std::string pid_file = dir + "/sleep.pid";
  jobs::ChildOptions o;
  o.argv = {"sh", "-c", "sleep 300 & echo $! > " + pid_file + "; wait"};
  auto child = jobs::ChildProcess::spawn(o);
  ASSERT_TRUE(child) << child.error().message;
  pid_t sleeper = 0;
  for (int i = 0; i < 500 && sleeper == 0; ++i) {
    std::ifstream(pid_file) >> sleeper;
    if (sleeper == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(sleeper, 0);
  EXPECT_EQ(::getpgid(child->pid()), child->pid()) << "the job leads its own process group";
  child->kill(SIGTERM);
  const auto exit = child->wait();
  EXPECT_EQ(exit.signal, SIGTERM);
  char state = 'S';
  for (int i = 0; i < 500; ++i) {
    state = process_state(sleeper);
    if (state == 'X' || state == 'Z') break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(state == 'X' || state == 'Z') << "the job's grandchild still runs: " << state;
  if (state != 'X' && state != 'Z') ::kill(sleeper, SIGKILL);
}

}  // namespace
}  // namespace gpulens
