// SPDX-License-Identifier: Apache-2.0
#include "http/tls_identity.hpp"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <vector>

#include "http/regular_file.hpp"

namespace gpulens::http {

struct TlsIdentity::Material {
  X509* cert = nullptr;
  std::vector<X509*> chain;
  EVP_PKEY* key = nullptr;
  ~Material() {
    X509_free(cert);
    for (X509* c : chain) X509_free(c);
    EVP_PKEY_free(key);
  }
};

namespace {

std::string openssl_error() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};

// A memory BIO over `text` (which must outlive it).
std::unique_ptr<BIO, BioFree> memory_bio(const std::string& text) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

}  // namespace

Status TlsIdentity::load(const TlsConfig& config) {
  auto material = std::make_shared<Material>();
  // Regular files only, opened non-blocking (regular_file.hpp): a FIFO hung start-up.
  const auto cert_text = read_regular_file(config.cert_file, "the TLS certificate");
  if (!cert_text) return cert_text.error();
  const auto key_text = read_regular_file(config.key_file, "the TLS key");
  if (!key_text) return key_text.error();
  if (!config.client_ca_file.empty()) {
    const auto ca = read_regular_file(config.client_ca_file, "the client CA file");
    if (!ca) return ca.error();
  }
  const auto cert_file = memory_bio(*cert_text);
  const auto key_file = memory_bio(*key_text);
  if (!cert_file || !key_file) return Error{"out of memory reading the TLS certificate and key"};
  material->cert = PEM_read_bio_X509(cert_file.get(), nullptr, nullptr, nullptr);
  if (material->cert == nullptr) {
    return Error{fmt::format("{} holds no PEM certificate: {}", config.cert_file, openssl_error())};
  }
  // The rest of the file is the chain, leaf first as in exporter-toolkit's files.
  while (X509* extra = PEM_read_bio_X509(cert_file.get(), nullptr, nullptr, nullptr)) {
    material->chain.push_back(extra);
  }
  ERR_clear_error();  // the loop ends on an expected "no start line"
  material->key = PEM_read_bio_PrivateKey(key_file.get(), nullptr, nullptr, nullptr);
  if (material->key == nullptr) {
    return Error{fmt::format("{} holds no PEM private key (encrypted keys are not supported): {}",
                             config.key_file, openssl_error())};
  }
  if (X509_check_private_key(material->cert, material->key) != 1) {
    ERR_clear_error();
    return Error{fmt::format("the key {} does not belong to the certificate {}", config.key_file,
                             config.cert_file)};
  }
  std::lock_guard lock(mutex_);
  material_ = std::move(material);
  config_ = config;
  return ok_status();
}

std::shared_ptr<const TlsIdentity::Material> TlsIdentity::current() const {
  std::lock_guard lock(mutex_);
  return material_;
}

int TlsIdentity::cert_callback(SSL* ssl, void* self) {
  const auto material = static_cast<TlsIdentity*>(self)->current();
  if (!material) return 0;
  if (SSL_use_certificate(ssl, material->cert) != 1) return 0;
  if (SSL_use_PrivateKey(ssl, material->key) != 1) return 0;
  for (X509* c : material->chain) {
    if (SSL_add1_chain_cert(ssl, c) != 1) return 0;
  }
  return 1;
}

bool TlsIdentity::configure(SSL_CTX& ctx) {
  TlsConfig config;
  {
    std::lock_guard lock(mutex_);
    config = config_;
  }
  SSL_CTX_set_options(
      &ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_min_proto_version(&ctx, config.min_version) != 1) return false;
  if (config.max_version != 0 && SSL_CTX_set_max_proto_version(&ctx, config.max_version) != 1)
    return false;
  if (config.client_auth != ClientAuth::None) {
    if (SSL_CTX_load_verify_locations(&ctx, config.client_ca_file.c_str(), nullptr) != 1)
      return false;
    SSL_CTX_set_client_CA_list(&ctx, SSL_load_client_CA_file(config.client_ca_file.c_str()));
    int mode = SSL_VERIFY_PEER;
    if (config.client_auth == ClientAuth::RequireAndVerify) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(&ctx, mode, nullptr);
  }
  SSL_CTX_set_cert_cb(&ctx, &TlsIdentity::cert_callback, this);
  return true;
}

}  // namespace gpulens::http
