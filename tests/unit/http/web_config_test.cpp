// SPDX-License-Identifier: Apache-2.0
#include "http/web_config.hpp"

#include <gtest/gtest.h>

#include "http/yaml_subset.hpp"

namespace gpulens::http {
namespace {

TEST(ServerWebConfig, ExporterToolkitFile) {
  const auto c = parse_web_config(R"(# comment
tls_server_config:
  cert_file: tls.crt   # relative to the file
  key_file: "/etc/gpulens/tls.key"
  min_version: TLS13
basic_auth_users:
  prometheus: $2y$10$abcdefghijklmnopqrstuuqflPDzB6gcMhKa1rZqKiun2YGL5sa2u
  'alice': '$2b$10$abcdefghijklmnopqrstuuqflPDzB6gcMhKa1rZqKiun2YGL5sa2u'
http_server_config:
  http2: false
  headers:
    Strict-Transport-Security: max-age=31536000
)",
                                  "web.yml", "/etc/gpulens");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->tls.has_value());
  EXPECT_EQ(c->tls->cert_file, "/etc/gpulens/tls.crt");
  EXPECT_EQ(c->tls->key_file, "/etc/gpulens/tls.key");
  EXPECT_EQ(c->tls->min_version, 0x0304);
  EXPECT_EQ(c->users.size(), 2u);
  EXPECT_TRUE(c->users.at("alice").starts_with("$2b$10$"));
  ASSERT_EQ(c->headers.size(), 1u);
  EXPECT_EQ(c->headers[0].first, "Strict-Transport-Security");
}

TEST(ServerWebConfig, EmptyFileMeansPlainHttpWithoutAuth) {
  const auto c = parse_web_config("\n# nothing\n", "web.yml");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->tls.has_value());
  EXPECT_TRUE(c->users.empty());
}

void expect_error(const std::string& text, const std::string& words) {
  const auto c = parse_web_config(text, "web.yml");
  ASSERT_FALSE(c.ok()) << text;
  EXPECT_NE(c.error().message.find(words), std::string::npos) << c.error().message;
}

TEST(ServerWebConfig, MistakesAreNamedWithTheirLine) {
  expect_error("tls_server_config:\n  cert_file: a\n", "needs both cert_file and key_file");
  expect_error("basic_auth_users:\n  bob: hunter2\n",
               "web.yml:2: the password of 'bob' must be a bcrypt hash");
  expect_error("tls_config:\n  cert_file: a\n", "web.yml:1: unknown key 'tls_config'");
  expect_error("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n",
               "not supported");
  expect_error("basic_auth_users:\n  - bob\n", "lists are not supported");
  expect_error("a: 1\n\tb: 2\n", "tabs");
  expect_error("basic_auth_users:\n  bob: '$2y$10$abc\n", "unterminated");
  expect_error("tls_server_config:\n  cert_file: a\n  cert_file: b\n", "given twice");
  expect_error("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: SSL3\n",
               "unknown TLS version");
}

}  // namespace
}  // namespace gpulens::http
