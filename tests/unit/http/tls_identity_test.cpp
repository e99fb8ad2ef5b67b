// SPDX-License-Identifier: Apache-2.0
// The server's certificate and key (src/http/tls_identity.cpp): a pair is loaded
// only when its files are what they say and belong together; each handshake
// takes the pair loaded last (a SIGHUP after renewal), and the context is held
// to the web config's TLS versions.
#include "http/tls_identity.hpp"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <string>

#include "server_support.hpp"
#include "tls_pair.hpp"

namespace gpulens::http {
namespace {

using gpulens::testing::TlsFiles;

class TlsIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = gpulens::testing::scratch_dir("tls-identity");
    const auto first = gpulens::testing::self_signed_pair(dir_, "first");
    const auto second = gpulens::testing::self_signed_pair(dir_, "second");
    if (!first || !second)
      FAIL() << "the openssl command made no certificate (scripts/setup.sh --tests installs it)";
    first_ = *first;
    second_ = *second;
    client_ctx_ = SSL_CTX_new(TLS_client_method());
  }
  void TearDown() override {
    SSL_CTX_free(server_ctx_);
    SSL_CTX_free(client_ctx_);
  }

  static TlsConfig config_of(const TlsFiles& files) {
    TlsConfig c;
    c.cert_file = files.cert;
    c.key_file = files.key;
    return c;
  }
  static std::string error_of(const Status& s) { return s.ok() ? "(loaded)" : s.error().message; }

  // The certificate the server showed in a handshake on the identity's context;
  // false when the handshake failed.
  bool served(const TlsFiles& expected) {
    gpulens::testing::TlsPair pair(server_ctx_, client_ctx_);
    if (!pair.handshake()) return false;
    X509* shown = SSL_get1_peer_certificate(pair.client);
    X509* wanted = gpulens::testing::read_certificate(expected.cert);
    const bool same = shown != nullptr && wanted != nullptr && X509_cmp(shown, wanted) == 0;
    X509_free(shown);
    X509_free(wanted);
    return same;
  }

  std::string dir_;
  TlsFiles first_, second_;
  SSL_CTX* server_ctx_ = SSL_CTX_new(TLS_server_method());
  SSL_CTX* client_ctx_ = nullptr;
};

TEST_F(TlsIdentityTest, OnlyAPairThatBelongsTogetherIsLoaded) {
  TlsIdentity identity;
  EXPECT_EQ(error_of(identity.load(config_of(first_))), "(loaded)");
  TlsConfig swapped = config_of(first_);
  swapped.key_file = first_.cert;
  EXPECT_NE(error_of(identity.load(swapped)).find(first_.cert + " holds no PEM private key"),
            std::string::npos)
      << error_of(identity.load(swapped));
  swapped = config_of(first_);
  swapped.cert_file = first_.key;
  EXPECT_NE(error_of(identity.load(swapped)).find(first_.key + " holds no PEM certificate"),
            std::string::npos)
      << error_of(identity.load(swapped));
  TlsConfig mixed = config_of(first_);
  mixed.key_file = second_.key;
  EXPECT_EQ(error_of(identity.load(mixed)),
            "the key " + second_.key + " does not belong to the certificate " + first_.cert);
  TlsConfig missing = config_of(first_);
  missing.cert_file = dir_ + "/absent.crt";
  EXPECT_NE(error_of(identity.load(missing)), "(loaded)");
  missing = config_of(first_);
  missing.client_ca_file = dir_ + "/absent-ca.crt";
  EXPECT_NE(error_of(identity.load(missing)), "(loaded)");
}

TEST_F(TlsIdentityTest, EachHandshakeTakesThePairLoadedLast) {
  TlsIdentity identity;
  ASSERT_TRUE(identity.load(config_of(first_)).ok());
  ASSERT_TRUE(identity.configure(*server_ctx_));
  EXPECT_TRUE(served(first_));
  ASSERT_TRUE(identity.load(config_of(second_)).ok());
  EXPECT_TRUE(served(second_));  // the same context, the new pair
  // A load that fails keeps the pair in use.
  TlsConfig mixed = config_of(first_);
  mixed.key_file = second_.key;
  ASSERT_FALSE(identity.load(mixed).ok());
  EXPECT_TRUE(served(second_));
}

TEST_F(TlsIdentityTest, NoPairLoadedMeansNoHandshake) {
  TlsIdentity identity;
  ASSERT_TRUE(identity.configure(*server_ctx_));
  gpulens::testing::TlsPair pair(server_ctx_, client_ctx_);
  EXPECT_FALSE(pair.handshake());
}

TEST_F(TlsIdentityTest, TheContextKeepsToTheConfiguredVersions) {
  TlsIdentity identity;
  TlsConfig config = config_of(first_);
  config.min_version = TLS1_3_VERSION;
  ASSERT_TRUE(identity.load(config).ok());
  ASSERT_TRUE(identity.configure(*server_ctx_));
  EXPECT_EQ(SSL_CTX_get_min_proto_version(server_ctx_), TLS1_3_VERSION);
  ASSERT_EQ(SSL_CTX_set_max_proto_version(client_ctx_, TLS1_2_VERSION), 1);
  EXPECT_FALSE(served(first_)) << "a TLS 1.2 client was served";
  ASSERT_EQ(SSL_CTX_set_max_proto_version(client_ctx_, 0), 1);
  EXPECT_TRUE(served(first_));
}

// With client certificates required, a client without one is refused.
TEST_F(TlsIdentityTest, RequiredClientCertificatesAreRequired) {
  TlsIdentity identity;
  TlsConfig config = config_of(first_);
  config.client_ca_file = second_.cert;
  config.client_auth = ClientAuth::RequireAndVerify;
  ASSERT_TRUE(identity.load(config).ok());
  ASSERT_TRUE(identity.configure(*server_ctx_));
  EXPECT_EQ(SSL_CTX_get_verify_mode(server_ctx_),
            SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
  // TLS 1.3 sends the client's certificate after the client's handshake ends, so
  // the client is held to 1.2, where the server's refusal ends both.
  ASSERT_EQ(SSL_CTX_set_max_proto_version(client_ctx_, TLS1_2_VERSION), 1);
  EXPECT_FALSE(served(first_));
  ASSERT_EQ(SSL_CTX_use_certificate_file(client_ctx_, second_.cert.c_str(), SSL_FILETYPE_PEM), 1);
  ASSERT_EQ(SSL_CTX_use_PrivateKey_file(client_ctx_, second_.key.c_str(), SSL_FILETYPE_PEM), 1);
  EXPECT_TRUE(served(first_));
}

}  // namespace
}  // namespace gpulens::http
