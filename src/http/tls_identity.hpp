// SPDX-License-Identifier: Apache-2.0
#pragma once
// The server's certificate and key, swappable while connections are served:
// a SIGHUP after certificate renewal loads the new files, and each new TLS
// handshake picks the current pair through OpenSSL's certificate callback.
#include <openssl/ssl.h>

#include <memory>
#include <mutex>
#include <string>

#include "core/result.hpp"
#include "http/web_config.hpp"

namespace gpulens::http {

class TlsIdentity {
 public:
  // Loads and checks the files (the key must match the certificate).
  Status load(const TlsConfig& config);
  // Sets up a new server context: versions, client verification, the callback.
  bool configure(SSL_CTX& ctx);

 private:
  struct Material;
  static int cert_callback(SSL* ssl, void* self);
  std::shared_ptr<const Material> current() const;

  mutable std::mutex mutex_;
  std::shared_ptr<const Material> material_;
  TlsConfig config_;
};

}  // namespace gpulens::http
