// SPDX-License-Identifier: Apache-2.0
#pragma once
// HTTP basic authentication against bcrypt hashes (exporter-toolkit's
// basic_auth_users), verified with libcrypt's crypt_r, which knows $2a$, $2b$
// and $2y$. bcrypt is slow on purpose (tens of ms), so a successful check is
// remembered by a digest of the credentials; failures are never cached. Only a
// few checks run at once (a quarter of the workers): password guessers beyond
// that are answered 429 at once instead of taking every worker, so scrapes
// with a remembered password stay fast.
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace gpulens::http {

// The user and password of an "Authorization: Basic ..." header value.
std::optional<std::pair<std::string, std::string>> parse_basic_authorization(
    std::string_view header);

// Strict base64 (RFC 4648, with padding); nullopt on anything else.
std::optional<std::string> base64_decode(std::string_view text);

// Whether `password` matches the crypt(3) `hash`, in constant time.
bool verify_password(const std::string& password, const std::string& hash);

// bcrypt costs a web config may use. Each step doubles a check's time: 14 takes
// about a second on a server core (so a worker, and a stop, waits at most that
// long); 31 took days, one request pinned a worker and the agent never ended.
inline constexpr int kMinBcryptCost = 4;
inline constexpr int kMaxBcryptCost = 14;

// The cost of a well-formed bcrypt hash ("$2a$", "$2b$" or "$2y$", two digits,
// '$', 53 characters of bcrypt's base64); nullopt for anything else.
std::optional<int> bcrypt_cost(std::string_view hash);

// A new bcrypt ($2b$) hash of `password` at `cost` (kMinBcryptCost..kMaxBcryptCost),
// or "" on failure.
std::string hash_password(const std::string& password, int cost = 10);

enum class AuthResult { Ok, Denied, Busy };

class BasicAuth {
 public:
  BasicAuth() = default;
  // `max_hashing`: bcrypt checks at once; more are answered Busy.
  explicit BasicAuth(std::map<std::string, std::string> users, std::size_t max_hashing = 2)
      : users_(std::move(users)), max_hashing_(max_hashing == 0 ? 1 : max_hashing) {}
  bool enabled() const { return !users_.empty(); }
  // Checks an Authorization header value (empty when the header was absent):
  // Busy when it would need a bcrypt check and max_hashing are under way.
  AuthResult authenticate(std::string_view authorization);
  bool check(std::string_view authorization) {
    return authenticate(authorization) == AuthResult::Ok;
  }

 private:
  std::map<std::string, std::string> users_;
  std::size_t max_hashing_ = 2;
  std::atomic<std::size_t> hashing_{0};
  std::mutex mutex_;
  std::set<std::string> verified_;  // SHA-256 of user, password and hash
};

}  // namespace gpulens::http
