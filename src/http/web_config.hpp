// SPDX-License-Identifier: Apache-2.0
#pragma once
// The web configuration file, in the format of Prometheus' exporter-toolkit
// (the same file works for node_exporter and gpulens):
//
//   tls_server_config:
//     cert_file: /etc/gpulens/tls.crt
//     key_file: /etc/gpulens/tls.key
//   basic_auth_users:
//     prometheus: $2y$10$...   # bcrypt, e.g. from `gpulens serve --hash-password`
//
// Parsed by a small reader of the YAML subset this format needs (nested
// mappings of scalars, comments, quoted strings); anything else is an error
// that names the line, never silently ignored.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace gpulens::http {

// Users in one web config (docs/reliability.md): loading stays linear, and a
// file that names more is a mistake, not a user list.
inline constexpr std::size_t kMaxWebUsers = 10000;

enum class ClientAuth { None, VerifyIfGiven, RequireAndVerify };

struct TlsConfig {
  std::string cert_file;  // PEM, with the chain after the leaf
  std::string key_file;
  std::string client_ca_file;
  ClientAuth client_auth = ClientAuth::None;
  int min_version = 0x0303;  // TLS 1.2, exporter-toolkit's default
  int max_version = 0;       // 0 = the newest the library offers
};

struct WebConfig {
  std::optional<TlsConfig> tls;
  std::map<std::string, std::string> users;                  // name -> bcrypt hash
  std::vector<std::pair<std::string, std::string>> headers;  // extra response headers
};

// Relative file names are resolved against `base_dir` (the config's directory),
// as exporter-toolkit does.
Result<WebConfig> parse_web_config(std::string_view text, const std::string& name,
                                   const std::string& base_dir = "");
Result<WebConfig> load_web_config(const std::string& path);

}  // namespace gpulens::http
