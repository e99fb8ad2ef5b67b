// SPDX-License-Identifier: Apache-2.0
#pragma once
// HTTP basic authentication against bcrypt hashes (exporter-toolkit's
// basic_auth_users), verified with libcrypt's crypt_r, which knows $2a$, $2b$
// and $2y$. bcrypt is slow on purpose (tens of ms), so a successful check is
// remembered by a digest of the credentials; failures are never cached.
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace gpulens::server {

// The user and password of an "Authorization: Basic ..." header value.
std::optional<std::pair<std::string, std::string>> parse_basic_authorization(
    std::string_view header);

// Strict base64 (RFC 4648, with padding); nullopt on anything else.
std::optional<std::string> base64_decode(std::string_view text);

// Whether `password` matches the crypt(3) `hash`, in constant time.
bool verify_password(const std::string& password, const std::string& hash);

// A new bcrypt ($2b$) hash of `password` at `cost` (4..31), or "" on failure.
std::string hash_password(const std::string& password, int cost = 10);

class BasicAuth {
 public:
  BasicAuth() = default;
  explicit BasicAuth(std::map<std::string, std::string> users) : users_(std::move(users)) {}
  bool enabled() const { return !users_.empty(); }
  // Checks an Authorization header value (empty when the header was absent).
  bool check(std::string_view authorization);

 private:
  std::map<std::string, std::string> users_;
  std::mutex mutex_;
  std::set<std::string> verified_;  // SHA-256 of user, password and hash
};

}  // namespace gpulens::server
