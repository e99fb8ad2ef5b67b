// SPDX-License-Identifier: Apache-2.0
#include "http/web_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "http/basic_auth.hpp"
#include "http/regular_file.hpp"
#include "http/yaml_subset.hpp"

namespace gpulens::http {
namespace {

std::string at(const std::string& name, const YamlNode& n) {
  return fmt::format("{}:{}", name, n.line);
}

Error unknown_key(const std::string& name, const YamlNode& n, std::string_view key,
                  std::string_view section, std::string_view accepted) {
  return Error{fmt::format("{}: unknown key '{}'{} (accepted: {})", at(name, n), key,
                           section.empty() ? "" : fmt::format(" in {}", section), accepted)};
}

Result<std::string> scalar(const std::string& name, const YamlNode& n, std::string_view key) {
  if (n.is_map)
    return Error{fmt::format("{}: '{}' must be a value, not a section", at(name, n), key)};
  return n.is_null ? std::string() : n.scalar;
}

std::string resolve(const std::string& base_dir, const std::string& file) {
  if (file.empty() || base_dir.empty() || std::filesystem::path(file).is_absolute()) return file;
  return (std::filesystem::path(base_dir) / file).string();
}

Result<int> tls_version(const std::string& name, const YamlNode& n, const std::string& v) {
  if (v == "TLS10") return 0x0301;
  if (v == "TLS11") return 0x0302;
  if (v == "TLS12") return 0x0303;
  if (v == "TLS13") return 0x0304;
  return Error{
      fmt::format("{}: unknown TLS version '{}' (TLS10, TLS11, TLS12 or TLS13)", at(name, n), v)};
}

Result<TlsConfig> parse_tls(const std::string& name, const YamlNode& node,
                            const std::string& base_dir) {
  TlsConfig tls;
  for (const auto& [key, n] : node.entries) {
    auto v = scalar(name, n, key);
    if (!v) return v.error();
    if (key == "cert_file") {
      tls.cert_file = resolve(base_dir, *v);
    } else if (key == "key_file") {
      tls.key_file = resolve(base_dir, *v);
    } else if (key == "client_ca_file") {
      tls.client_ca_file = resolve(base_dir, *v);
    } else if (key == "client_auth_type") {
      if (*v == "NoClientCert" || v->empty()) {
        tls.client_auth = ClientAuth::None;
      } else if (*v == "VerifyClientCertIfGiven") {
        tls.client_auth = ClientAuth::VerifyIfGiven;
      } else if (*v == "RequireAndVerifyClientCert") {
        tls.client_auth = ClientAuth::RequireAndVerify;
      } else {
        return Error{
            fmt::format("{}: client_auth_type '{}' is not supported (NoClientCert, "
                        "VerifyClientCertIfGiven or RequireAndVerifyClientCert)",
                        at(name, n), *v)};
      }
    } else if (key == "min_version" || key == "max_version") {
      auto version = tls_version(name, n, *v);
      if (!version) return version.error();
      (key == "min_version" ? tls.min_version : tls.max_version) = *version;
    } else if (key == "cipher_suites" || key == "curve_preferences" ||
               key == "prefer_server_cipher_suites" || key == "cert" || key == "key" ||
               key == "client_allowed_sans") {
      return Error{fmt::format("{}: '{}' is not supported by gpulens; OpenSSL's defaults apply",
                               at(name, n), key)};
    } else {
      return unknown_key(name, n, key, "tls_server_config",
                         "cert_file, key_file, client_ca_file, client_auth_type, min_version, "
                         "max_version");
    }
  }
  if (tls.cert_file.empty() || tls.key_file.empty()) {
    return Error{
        fmt::format("{}: tls_server_config needs both cert_file and key_file", at(name, node))};
  }
  if (tls.max_version != 0 && tls.min_version > tls.max_version) {
    return Error{
        fmt::format("{}: min_version is newer than max_version: no TLS version is left to speak",
                    at(name, node))};
  }
  if (tls.client_auth != ClientAuth::None && tls.client_ca_file.empty()) {
    return Error{fmt::format("{}: client_auth_type needs client_ca_file", at(name, node))};
  }
  return tls;
}

// RFC 9110 token characters: what a header field name may hold.
bool is_token(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

// A field value: visible characters, spaces and tabs; never CR, LF or NUL, which
// would end the header and start another one of the config's choosing.
bool is_field_value(std::string_view value) {
  return std::none_of(value.begin(), value.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

// Headers that frame the answer: the server sets them, a second copy from the
// config would make the answer ambiguous (two Content-Lengths).
bool is_framing_header(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* h : {"content-length", "transfer-encoding", "connection", "keep-alive",
                        "content-type", "upgrade", "trailer", "te", "www-authenticate"}) {
    if (lower == h) return true;
  }
  return false;
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The security headers the server sends on every answer (exposition/http_server.cpp).
// A copy from the config would send two, and a browser may obey either (two
// X-Frame-Options are ignored as invalid); a looser value would undo what they
// are for. Only X-Frame-Options may change, to the other value that still
// forbids framing by other sites.
Status check_security_header(const std::string& name, const YamlNode& n, const std::string& header,
                             const std::string& value) {
  const std::string lower = lowercase(header);
  if (lower == "x-frame-options") {
    const std::string v = lowercase(value);
    if (v == "deny" || v == "sameorigin") return ok_status();
    return Error{fmt::format(
        "{}: X-Frame-Options '{}' would let other sites frame the dashboard; gpulens sends "
        "DENY, and the config may only change it to SAMEORIGIN",
        at(name, n), value)};
  }
  for (const char* fixed :
       {"content-security-policy", "x-content-type-options", "referrer-policy"}) {
    if (lower == fixed) {
      return Error{fmt::format(
          "{}: gpulens sends '{}' itself, at its strictest (docs/serve.md, Security); the "
          "config cannot repeat or loosen it",
          at(name, n), header)};
    }
  }
  return ok_status();
}

Status check_header(const std::string& name, const YamlNode& n, const std::string& header,
                    const std::string& value) {
  if (!is_token(header)) {
    return Error{fmt::format("{}: '{}' is not a header name (letters, digits and !#$%&'*+-.^_`|~)",
                             at(name, n), header)};
  }
  if (is_framing_header(header)) {
    return Error{fmt::format("{}: the server sets '{}' itself; it cannot come from the config",
                             at(name, n), header)};
  }
  if (!is_field_value(value)) {
    return Error{
        fmt::format("{}: the value of '{}' holds a control character (a line break "
                    "would start another header)",
                    at(name, n), header)};
  }
  return check_security_header(name, n, header, value);
}

}  // namespace

Result<WebConfig> parse_web_config(std::string_view text, const std::string& name,
                                   const std::string& base_dir) {
  auto root = parse_yaml_subset(text, name);
  if (!root) return root.error();
  WebConfig config;
  for (const auto& [key, n] : root->entries) {
    if (key == "tls_server_config") {
      if (n.is_null || (n.is_map && n.entries.empty())) continue;
      if (!n.is_map)
        return Error{fmt::format("{}: tls_server_config must be a section", at(name, n))};
      auto tls = parse_tls(name, n, base_dir);
      if (!tls) return tls.error();
      config.tls = std::move(*tls);
    } else if (key == "basic_auth_users") {
      if (n.is_null) continue;
      if (!n.is_map)
        return Error{fmt::format("{}: basic_auth_users must be a section", at(name, n))};
      if (n.entries.size() > kMaxWebUsers) {
        return Error{fmt::format("{}: {} users (at most {} in one file)", at(name, n),
                                 n.entries.size(), kMaxWebUsers)};
      }
      for (const auto& [user, h] : n.entries) {
        if (user.empty()) return Error{fmt::format("{}: a user name cannot be empty", at(name, h))};
        auto hash = scalar(name, h, user);
        if (!hash) return hash.error();
        if (!(hash->starts_with("$2a$") || hash->starts_with("$2b$") ||
              hash->starts_with("$2y$"))) {
          return Error{fmt::format(
              "{}: the password of '{}' must be a bcrypt hash ($2y$...), never plain text; "
              "make one with: gpulens serve --hash-password",
              at(name, h), user)};
        }
        const auto cost = bcrypt_cost(*hash);
        if (!cost) {
          return Error{fmt::format(
              "{}: the password hash of '{}' is not a whole bcrypt hash ($2y$, two digits of "
              "cost, '$', 53 characters); make one with: gpulens serve --hash-password",
              at(name, h), user)};
        }
        if (*cost < kMinBcryptCost || *cost > kMaxBcryptCost) {
          return Error{fmt::format(
              "{}: the bcrypt cost of '{}' is {}; gpulens accepts {} to {} (each step doubles "
              "a check's time; past {} one login holds a worker for seconds to days)",
              at(name, h), user, *cost, kMinBcryptCost, kMaxBcryptCost, kMaxBcryptCost)};
        }
        if (user.find(':') != std::string::npos)
          return Error{fmt::format("{}: a user name cannot contain ':'", at(name, h))};
        config.users.emplace_hint(config.users.end(), user, *hash);
      }
    } else if (key == "http_server_config") {
      if (n.is_null) continue;
      if (!n.is_map)
        return Error{fmt::format("{}: http_server_config must be a section", at(name, n))};
      for (const auto& [sub, s] : n.entries) {
        if (sub == "http2") continue;  // HTTP/1.1 only; accepted so shared files load
        if (sub != "headers") {
          return unknown_key(name, s, sub, "http_server_config", "headers, http2");
        }
        if (!s.is_map && !s.is_null)
          return Error{fmt::format("{}: headers must be a section", at(name, s))};
        std::set<std::string> seen;
        for (const auto& [header, value] : s.entries) {
          auto v = scalar(name, value, header);
          if (!v) return v.error();
          if (auto ok = check_header(name, value, header, *v); !ok) return ok.error();
          // Names differ only in case: the same header, sent twice.
          if (!seen.insert(lowercase(header)).second) {
            return Error{fmt::format("{}: header '{}' is given twice", at(name, value), header)};
          }
          config.headers.emplace_back(header, *v);
        }
      }
    } else {
      return unknown_key(name, n, key, "",
                         "tls_server_config, basic_auth_users, http_server_config");
    }
  }
  return config;
}

Result<WebConfig> load_web_config(const std::string& path) {
  auto text = read_regular_file(path, "the web config");
  if (!text) return text.error();
  const auto dir = std::filesystem::path(path).parent_path().string();
  return parse_web_config(*text, path, dir);
}

}  // namespace gpulens::http
