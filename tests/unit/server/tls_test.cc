// The TLS flags, the checks every set of TLS files passes before it serves,
// and the in-memory files gRPC re-reads the current set from.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/tls_config.h"
#include "server/tls_identity.h"
#include "server/tls_material.h"
#include "tools/local_cluster/test_certificates.h"

namespace ditserve::server {
namespace {

using ::ditserve::local_cluster::MakeTestCertificates;
using ::ditserve::local_cluster::TestCertificates;
using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

// This process's folder: ctest runs each test in a process of its own, side
// by side, and one process's set-up rewriting the certificates another
// reads gave the reader a certificate and a key of two sets.
std::string ProcessDir() {
  return ::testing::TempDir() + "/ditserve-tls-unit-" +
         std::to_string(getpid());
}

std::string WriteFile(const std::string& name, const std::string& contents) {
  const std::string path = ProcessDir() + "/" + name;
  std::ofstream(path) << contents;
  return path;
}

// Two sets made by openssl, each with its own CA.
class TlsFilesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    first_ = Make("first");
    second_ = Make("second");
  }
  static const TestCertificates* Make(const std::string& name) {
    absl::StatusOr<TestCertificates> made =
        MakeTestCertificates(ProcessDir() + "/" + name);
    EXPECT_TRUE(made.ok()) << made.status();
    return new TestCertificates(made.value_or(TestCertificates{}));
  }
  static void TearDownTestSuite() {
    delete first_;
    delete second_;
    std::filesystem::remove_all(ProcessDir());
  }

  static TlsConfig Config(const TestCertificates& certs) {
    return {certs.server_cert(), certs.server_key(), certs.ca()};
  }

  static const TestCertificates* first_;
  static const TestCertificates* second_;
};
const TestCertificates* TlsFilesTest::first_ = nullptr;
const TestCertificates* TlsFilesTest::second_ = nullptr;

TEST(TlsConfigTest, NoFlagsIsPlaintext) {
  absl::StatusOr<std::optional<TlsConfig>> tls = MakeTlsConfig("", "", "");
  ASSERT_TRUE(tls.ok());
  EXPECT_FALSE(tls->has_value());
}

TEST(TlsConfigTest, FlagsThatDoNotGoTogetherAreRefusedNamingThem) {
  const struct {
    std::string cert, key, client_ca, message;
  } cases[] = {
      {"a.pem", "", "", "only --tls_cert is set"},
      {"", "a.key", "", "only --tls_key is set"},
      {"", "", "ca.pem", "--tls_client_ca needs --tls_cert and --tls_key"},
  };
  for (const auto& bad : cases) {
    absl::StatusOr<std::optional<TlsConfig>> tls =
        MakeTlsConfig(bad.cert, bad.key, bad.client_ca);
    ASSERT_FALSE(tls.ok()) << bad.message;
    EXPECT_EQ(tls.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(tls.status().message()), HasSubstr(bad.message));
  }
}

TEST_F(TlsFilesTest, AMatchingSetIsReadWhole) {
  absl::StatusOr<TlsMaterial> material = ReadTlsMaterial(Config(*first_));
  ASSERT_TRUE(material.ok()) << material.status();
  EXPECT_EQ(material->cert_chain, ReadFile(first_->server_cert()));
  EXPECT_EQ(material->private_key, ReadFile(first_->server_key()));
  EXPECT_EQ(material->client_ca, ReadFile(first_->ca()));
  TlsConfig without_client_ca = Config(*first_);
  without_client_ca.client_ca_path.clear();
  material = ReadTlsMaterial(without_client_ca);
  ASSERT_TRUE(material.ok()) << material.status();
  EXPECT_EQ(material->client_ca, "");
}

TEST_F(TlsFilesTest, EachBadFileIsNamedWithItsFlagAndProblem) {
  const std::string not_pem = WriteFile("not.pem", "plain text\n");
  const struct {
    TlsConfig config;
    std::string message;
  } cases[] = {
      {{not_pem, first_->server_key(), ""},
       "--tls_cert " + not_pem + " holds no PEM certificate"},
      {{first_->server_cert(), "/nonexistent.key", ""},
       "--tls_key /nonexistent.key cannot be read"},
      {{first_->server_cert(), not_pem, ""},
       "--tls_key " + not_pem + " holds no unencrypted PEM private key"},
      // Another certificate's key: what a rotation that replaced one file
      // of the two would leave.
      {{first_->server_cert(), second_->server_key(), ""},
       "--tls_key " + second_->server_key() +
           " is not the key of the certificate in --tls_cert " +
           first_->server_cert()},
      {{first_->server_cert(), first_->server_key(), not_pem},
       "--tls_client_ca " + not_pem + " holds no PEM certificate"},
  };
  for (const auto& bad : cases) {
    const absl::StatusOr<TlsMaterial> material = ReadTlsMaterial(bad.config);
    const absl::Status checked =
        material.ok() ? ParseTlsMaterial(*material, bad.config).status()
                      : material.status();
    ASSERT_FALSE(checked.ok()) << bad.message;
    EXPECT_EQ(checked.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(checked.message(), bad.message);
  }
}

// gRPC's file watcher reads the identity's in-memory files, not the
// operator's: they hold the set that serves, and only a checked one.
TEST_F(TlsFilesTest, TheIdentityServesACheckedSetAndKeepsItOtherwise) {
  const std::string dir = ProcessDir() + "/rotated";
  std::filesystem::create_directories(dir);
  const TlsConfig config{dir + "/server.pem", dir + "/server.key",
                         dir + "/ca.pem"};
  const auto install = [&config](const TestCertificates& certs) {
    std::filesystem::copy_file(
        certs.server_cert(), config.cert_path,
        std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(
        certs.server_key(), config.key_path,
        std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(
        certs.ca(), config.client_ca_path,
        std::filesystem::copy_options::overwrite_existing);
  };
  install(*first_);
  absl::StatusOr<TlsMaterial> material = ReadTlsMaterial(config);
  ASSERT_TRUE(material.ok()) << material.status();
  absl::StatusOr<std::unique_ptr<TlsIdentity>> identity =
      TlsIdentity::Create(config, *material);
  ASSERT_TRUE(identity.ok()) << identity.status();
  const std::string served_cert = (*identity)->GrpcFiles().cert_chain_path;
  EXPECT_EQ(ReadFile(served_cert), ReadFile(first_->server_cert()));
  EXPECT_EQ((*identity)->Reload().value(), false) << "nothing changed";

  install(*second_);
  EXPECT_EQ((*identity)->Reload().value(), true);
  EXPECT_EQ(ReadFile(served_cert), ReadFile(second_->server_cert()));
  EXPECT_EQ(ReadFile((*identity)->GrpcFiles().private_key_path),
            ReadFile(second_->server_key()));
  EXPECT_EQ(ReadFile((*identity)->GrpcFiles().client_ca_path),
            ReadFile(second_->ca()));

  // Half a rotation: the first set's key beside the second's certificate.
  std::filesystem::copy_file(first_->server_key(), config.key_path,
                             std::filesystem::copy_options::overwrite_existing);
  const absl::StatusOr<bool> half = (*identity)->Reload();
  ASSERT_FALSE(half.ok());
  EXPECT_THAT(std::string(half.status().message()),
              HasSubstr("is not the key of the certificate"));
  EXPECT_EQ(ReadFile((*identity)->GrpcFiles().private_key_path),
            ReadFile(second_->server_key()))
      << "the set that served still serves";
}

}  // namespace
}  // namespace ditserve::server
