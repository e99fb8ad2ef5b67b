// SPDX-License-Identifier: Apache-2.0
#include "http/basic_auth.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <array>
#include <cctype>
#include <cstring>
#include <memory>

namespace gpulens::http {
namespace {

// A valid bcrypt hash of a random password: unknown users are checked against
// it, so that a wrong user name takes as long as a wrong password.
constexpr const char* kDummyHash = "$2b$10$6NTNCEGF/I.RsbABO7Bh8uqc6vzDEsUpaLAZOKezeKPTOkS5PUxqy";

// Remembered successes; the set is cleared past this size.
constexpr std::size_t kCacheLimit = 1024;

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::string digest(std::string_view user, std::string_view password, std::string_view hash) {
  std::string input;
  input.reserve(user.size() + password.size() + hash.size() + 2);
  input.append(user).append(1, '\0').append(password).append(1, '\0').append(hash);
  std::array<unsigned char, SHA256_DIGEST_LENGTH> out{};
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), out.data());
  OPENSSL_cleanse(input.data(), input.size());
  return std::string(reinterpret_cast<const char*>(out.data()), out.size());
}

}  // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + static_cast<std::size_t>(k)];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return std::nullopt;  // data after padding
      v[k] = base64_value(c);
      if (v[k] < 0) return std::nullopt;
    }
    const unsigned bits = (static_cast<unsigned>(v[0]) << 18) |
                          (static_cast<unsigned>(v[1]) << 12) | (static_cast<unsigned>(v[2]) << 6) |
                          static_cast<unsigned>(v[3]);
    out += static_cast<char>((bits >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((bits >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(bits & 0xff);
  }
  return out;
}

std::optional<std::pair<std::string, std::string>> parse_basic_authorization(
    std::string_view header) {
  constexpr std::string_view kScheme = "Basic ";
  if (header.size() <= kScheme.size()) return std::nullopt;
  // The scheme name is case-insensitive (RFC 7617).
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) !=
        std::tolower(static_cast<unsigned char>(kScheme[i])))
      return std::nullopt;
  }
  header.remove_prefix(kScheme.size());
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  auto decoded = base64_decode(header);
  if (!decoded) return std::nullopt;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return std::make_pair(decoded->substr(0, colon), decoded->substr(colon + 1));
}

bool verify_password(const std::string& password, const std::string& hash) {
  // crypt_r reads a C string: "secret\0anything" would pass as "secret".
  if (password.find('\0') != std::string::npos) return false;
  // crypt_data is about 32 KiB: too large for an HTTP worker's stack.
  auto data = std::make_unique<crypt_data>();
  std::memset(data.get(), 0, sizeof(crypt_data));
  const char* out = crypt_r(password.c_str(), hash.c_str(), data.get());
  // libxcrypt answers a string starting with '*' when the setting is invalid.
  if (out == nullptr || out[0] == '*') return false;
  const std::size_t n = std::strlen(out);
  return n == hash.size() && CRYPTO_memcmp(out, hash.data(), n) == 0;
}

std::string hash_password(const std::string& password, int cost) {
  auto data = std::make_unique<crypt_data>();
  std::memset(data.get(), 0, sizeof(crypt_data));
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  // Null random bytes: libcrypt reads them from the operating system.
  if (crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, setting,
                       sizeof setting) == nullptr)
    return {};
  const char* out = crypt_r(password.c_str(), setting, data.get());
  if (out == nullptr || out[0] == '*') return {};
  return out;
}

std::optional<int> bcrypt_cost(std::string_view hash) {
  constexpr std::size_t kLength = 60;  // "$2b$10$" and 22 characters of salt, 31 of hash
  if (hash.size() != kLength) return std::nullopt;
  if (!(hash.starts_with("$2a$") || hash.starts_with("$2b$") || hash.starts_with("$2y$")))
    return std::nullopt;
  const char tens = hash[4];
  const char ones = hash[5];
  if (tens < '0' || tens > '9' || ones < '0' || ones > '9' || hash[6] != '$') return std::nullopt;
  for (const char c : hash.substr(7)) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '/')) return std::nullopt;
  }
  return (tens - '0') * 10 + (ones - '0');
}

AuthResult BasicAuth::authenticate(std::string_view authorization) {
  if (!enabled()) return AuthResult::Ok;
  auto credentials = parse_basic_authorization(authorization);
  if (!credentials) return AuthResult::Denied;
  const auto& [user, password] = *credentials;
  const auto it = users_.find(user);
  const std::string& hash = it != users_.end() ? it->second : std::string(kDummyHash);
  const std::string key = digest(user, password, hash);
  {
    std::lock_guard lock(mutex_);
    if (it != users_.end() && verified_.contains(key)) return AuthResult::Ok;
  }
  // A slot for the bcrypt check, or Busy at once: a worker never queues for one.
  for (auto n = hashing_.load();;) {
    if (n >= max_hashing_) return AuthResult::Busy;
    if (hashing_.compare_exchange_weak(n, n + 1)) break;
  }
  const bool ok = verify_password(password, hash) && it != users_.end();
  hashing_.fetch_sub(1);
  if (!ok) return AuthResult::Denied;
  std::lock_guard lock(mutex_);
  if (verified_.size() >= kCacheLimit) verified_.clear();
  verified_.insert(key);
  return AuthResult::Ok;
}

}  // namespace gpulens::http
