// SPDX-License-Identifier: Apache-2.0
// The ncurses painter (curses_screen.cpp): NO_COLOR and the locale's character
// set, and, in a child process on a pseudo-terminal, the terminals it refuses,
// the size it reads, a screen painted without the escapes a span carried, and
// keys mapped to key:: codes.
#include "tui/curses_screen.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <clocale>
#include <cstdlib>
#include <optional>
#include <string>

#include "tui/view_state.hpp"

namespace gpulens::tui {
namespace {

// Sets (or unsets, with nullptr) an environment variable for the scope.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvVar() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CursesScreen, NoColorMeansANonEmptyValue) {
  {
    EnvVar unset("NO_COLOR", nullptr);
    EXPECT_FALSE(no_color_requested());
  }
  {
    EnvVar empty("NO_COLOR", "");
    EXPECT_FALSE(no_color_requested());
  }
  EnvVar set("NO_COLOR", "1");
  EXPECT_TRUE(no_color_requested());
}

TEST(CursesScreen, TheLocalesCharacterSetDecidesUtf8) {
  const std::string saved = std::setlocale(LC_CTYPE, nullptr);
  ASSERT_NE(std::setlocale(LC_CTYPE, "C"), nullptr);
  EXPECT_FALSE(locale_is_utf8());
  if (std::setlocale(LC_CTYPE, "C.UTF-8") != nullptr) {
    EXPECT_TRUE(locale_is_utf8());
  }
  std::setlocale(LC_CTYPE, saved.c_str());
}

// What a child process on a pseudo-terminal of 24 x 80 reported (one line per
// step) and what it wrote to the terminal, after `keys` were typed once it drew.
struct PtyRun {
  std::string report;
  std::string terminal;
  int status = -1;
};

// In the child: open the screen on the terminal, report, draw `screen`, read
// three keys, and say which.
[[noreturn]] void curses_child(int report_fd, const Screen& screen) {
  auto say = [report_fd](const std::string& s) {
    const std::string line = s + "\n";
    if (::write(report_fd, line.data(), line.size()) < 0) _exit(3);
  };
  auto opened = CursesScreen::open(CursesOptions{});
  if (!opened) {
    say("error " + opened.error().message);
    _exit(0);
  }
  auto& s = **opened;
  say("size " + std::to_string(s.width()) + "x" + std::to_string(s.height()) + " utf8 " +
      std::to_string(s.caps().utf8));
  s.draw(screen);
  say("drawn");
  std::string keys;
  int got = 0;
  for (int tries = 0; got < 3 && tries < 100000; ++tries) {
    const int k = s.poll_key();
    if (k == -1) {
      ::usleep(1000);
      continue;
    }
    keys += (got++ == 0 ? "" : ",") + std::to_string(k);
  }
  say("keys " + keys);
  opened->reset();  // endwin before the report ends
  ::close(report_fd);
  _exit(0);
}

PtyRun run_on_pty(const char* term, const Screen& screen, const std::string& keys) {
  PtyRun run;
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return run;
  const std::string slave_name = ::ptsname(master);
  winsize ws{};
  ws.ws_row = 24;
  ws.ws_col = 80;
  int report[2];
  if (::pipe(report) != 0) return run;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(master);
    ::close(report[0]);
    ::setsid();
    const int slave = ::open(slave_name.c_str(), O_RDWR);
    if (slave < 0) _exit(2);
    ::ioctl(slave, TIOCSWINSZ, &ws);
    ::dup2(slave, STDIN_FILENO);
    ::dup2(slave, STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDERR_FILENO);
    ::setenv("TERM", term, 1);
    ::setenv("LC_ALL", "C.UTF-8", 1);
    ::unsetenv("LINES");
    ::unsetenv("COLUMNS");
    curses_child(report[1], screen);
  }
  ::close(report[1]);
  bool typed = false;
  bool report_open = true;
  bool terminal_open = true;
  char buf[4096];
  while (report_open) {
    pollfd fds[2] = {{report[0], POLLIN, 0}, {terminal_open ? master : -1, POLLIN, 0}};
    if (::poll(fds, 2, 30000) <= 0) break;  // a child that hangs fails the test
    if (fds[1].revents != 0) {
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n > 0) {
        run.terminal.append(buf, static_cast<std::size_t>(n));
      } else {
        terminal_open = false;
      }
    }
    if (fds[0].revents != 0) {
      const ssize_t n = ::read(report[0], buf, sizeof buf);
      if (n > 0) {
        run.report.append(buf, static_cast<std::size_t>(n));
      } else {
        report_open = false;
      }
    }
    if (!typed && run.report.find("drawn\n") != std::string::npos) {
      typed = true;
      if (::write(master, keys.data(), keys.size()) < 0) break;
    }
  }
  ::close(report[0]);
  ::waitpid(pid, &run.status, 0);
  ::close(master);
  return run;
}

TEST(CursesScreen, ATerminalWithoutACursorOrTerminfoIsRefusedInWords) {
  const Screen empty;
  const auto dumb = run_on_pty("dumb", empty, "");
  EXPECT_NE(dumb.report.find("error the terminal 'dumb' cannot move the cursor; use gpulens "
                             "top --once or gpulens stream"),
            std::string::npos)
      << dumb.report;
  const auto unknown = run_on_pty("gpulens-no-such-terminal", empty, "");
  EXPECT_NE(unknown.report.find(
                "error cannot use the terminal 'gpulens-no-such-terminal' (no terminfo entry?)"),
            std::string::npos)
      << unknown.report;
}

TEST(CursesScreen, PaintsTheScreenSafelyAndMapsKeys) {
  Screen screen;
  screen.width = 80;
  screen.height = 24;
  Line line;
  line.spans = {Span{"hello ", Style::Title}, Span{"evil\x1b]0;pwned\x07name", Style::Normal}};
  screen.lines.push_back(line);
  // Up in the keypad's mode, Enter, and a plain key.
  const auto run = run_on_pty("xterm", screen, "\x1bOA\rq");
  ASSERT_TRUE(WIFEXITED(run.status)) << run.report;
  EXPECT_EQ(WEXITSTATUS(run.status), 0) << run.report;
  EXPECT_NE(run.report.find("size 80x24 utf8 1\n"), std::string::npos) << run.report;
  EXPECT_NE(run.terminal.find("hello"), std::string::npos);
  EXPECT_NE(run.terminal.find("pwned"), std::string::npos);
  EXPECT_EQ(run.terminal.find("\x1b]0;pwned"), std::string::npos) << "an escape reached it";
  EXPECT_NE(run.report.find("keys " + std::to_string(key::kUp) + "," + std::to_string(key::kEnter) +
                            "," + std::to_string('q') + "\n"),
            std::string::npos)
      << run.report;
}

}  // namespace
}  // namespace gpulens::tui
