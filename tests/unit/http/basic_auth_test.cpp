// SPDX-License-Identifier: Apache-2.0
#include "http/basic_auth.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>

namespace gpulens::http {
namespace {

// bcrypt of "secret" at cost 10, made with a fixed salt.
constexpr const char* kSecretHash = "$2b$10$abcdefghijklmnopqrstuuqflPDzB6gcMhKa1rZqKiun2YGL5sa2u";

TEST(ServerAuth, Base64) {
  EXPECT_EQ(base64_decode("YWxpY2U6c2VjcmV0"), "alice:secret");
  EXPECT_EQ(base64_decode("YQ=="), "a");
  EXPECT_EQ(base64_decode("YWI="), "ab");
  EXPECT_EQ(base64_decode(""), "");
  for (const char* bad : {"YQ", "Y===", "YQ==YQ==", "!!!!", "YW\nI="}) {
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
  }
}

TEST(ServerAuth, AuthorizationHeader) {
  const auto c = parse_basic_authorization("Basic YWxpY2U6c2VjcmV0");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->first, "alice");
  EXPECT_EQ(c->second, "secret");
  EXPECT_TRUE(parse_basic_authorization("basic YWxpY2U6c2VjcmV0").has_value());
  EXPECT_FALSE(parse_basic_authorization("Bearer abc").has_value());
  EXPECT_FALSE(parse_basic_authorization("Basic bm9jb2xvbg==").has_value());  // "nocolon"
  EXPECT_FALSE(parse_basic_authorization("").has_value());
}

TEST(ServerAuth, BcryptThroughLibcrypt) {
  EXPECT_TRUE(verify_password("secret", kSecretHash));
  EXPECT_FALSE(verify_password("Secret", kSecretHash));
  EXPECT_FALSE(verify_password("secret", "$2b$10$short"));
  EXPECT_FALSE(verify_password("secret", "plain"));
  // $2y$ (htpasswd's prefix) is the same algorithm.
  std::string y = kSecretHash;
  y[2] = 'y';
  EXPECT_TRUE(verify_password("secret", y));
  const auto made = hash_password("correct horse", 4);
  ASSERT_TRUE(made.starts_with("$2b$04$")) << made;
  EXPECT_TRUE(verify_password("correct horse", made));
}

TEST(ServerAuth, ChecksUsersAndRemembersSuccessOnly) {
  BasicAuth auth(std::map<std::string, std::string>{{"alice", kSecretHash}});
  EXPECT_TRUE(auth.enabled());
  EXPECT_FALSE(auth.check(""));
  EXPECT_FALSE(auth.check("Basic YWxpY2U6d3Jvbmc="));  // alice:wrong
  EXPECT_FALSE(auth.check("Basic Ym9iOnNlY3JldA=="));  // bob:secret
  EXPECT_TRUE(auth.check("Basic YWxpY2U6c2VjcmV0"));   // alice:secret
  // A bcrypt check at cost 10 takes tens of ms; a cached one microseconds. The
  // fastest of five is what is compared, so a preempted call cannot fail it.
  auto cached = std::chrono::steady_clock::duration::max();
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(auth.check("Basic YWxpY2U6c2VjcmV0"));
    cached = std::min(cached, std::chrono::steady_clock::now() - t0);
  }
  EXPECT_LT(cached, std::chrono::milliseconds(5)) << "the second check should hit the cache";
  EXPECT_TRUE(BasicAuth().check(""));  // no users: open
}

}  // namespace
}  // namespace gpulens::http
