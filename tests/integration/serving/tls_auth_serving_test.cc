// TLS, mutual TLS and bearer tokens on a real group, with certificates made
// by openssl in the test: what a client with the right credentials gets, and
// what every other client is refused.

#include <httplib.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/local_cluster/serving_cluster.h"
#include "tools/local_cluster/shell_command.h"
#include "tools/local_cluster/test_certificates.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::MakeTestCertificates;
using ::ditserve::local_cluster::MetricValue;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::ditserve::local_cluster::StartUpFailure;
using ::ditserve::local_cluster::TestCertificates;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "s3cret-token-0123456789";
constexpr char kWrongToken[] = "wrong-token-9876543210";
constexpr char kRotatedToken[] = "rotated-token-0123456789";

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

std::shared_ptr<grpc::ChannelCredentials> ClientCredentials(
    const TestCertificates& certs, bool with_client_certificate) {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ReadFile(certs.ca());
  if (with_client_certificate) {
    options.pem_private_key = ReadFile(certs.client_key());
    options.pem_cert_chain = ReadFile(certs.client_cert());
  }
  return grpc::SslCredentials(options);
}

class TlsAuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // OpenSSL's writes to a connection the server refused raise SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    absl::StatusOr<TestCertificates> made = MakeTestCertificates(
        ::testing::TempDir() + "/ditserve-tls-" + std::to_string(::getpid()));
    ASSERT_TRUE(made.ok()) << made.status();
    certs_ = new TestCertificates(*made);
    const std::string tokens = certs_->dir + "/tokens";
    std::ofstream(tokens) << "# tokens of the TLS test\n\n" << kToken << "\n";
    absl::StatusOr<std::unique_ptr<ServingCluster>> started =
        ServingCluster::Start(
            {.world_size = 1,
             .host_flags = {"--tls_cert=" + certs_->server_cert(),
                            "--tls_key=" + certs_->server_key(),
                            "--tls_client_ca=" + certs_->ca(),
                            "--auth_token_file=" + tokens},
             .credentials = ClientCredentials(*certs_, true)});
    ASSERT_TRUE(started.ok()) << started.status();
    cluster_ = started->release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
    delete certs_;
  }
  void SetUp() override {
    ASSERT_NE(cluster_, nullptr) << "the group did not start (see above)";
  }

  static grpc::Status Generate(v1::Generation::Stub& stub,
                               const std::string& token) {
    auto context = ContextWithDeadline(120);
    if (!token.empty()) {
      context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
    }
    v1::GenerateResponse response;
    return stub.Generate(context.get(), SmallRequest("behind tls"), &response);
  }

  static std::unique_ptr<v1::Generation::Stub> StubWith(
      std::shared_ptr<grpc::ChannelCredentials> credentials) {
    return v1::Generation::NewStub(
        grpc::CreateChannel(cluster_->address(), std::move(credentials)));
  }

  static std::unique_ptr<httplib::SSLClient> HttpsClient() {
    auto client = std::make_unique<httplib::SSLClient>(
        "127.0.0.1", cluster_->http_port(), certs_->client_cert(),
        certs_->client_key());
    client->set_ca_cert_path(certs_->ca().c_str());
    client->enable_server_certificate_verification(true);
    client->set_read_timeout(120, 0);
    return client;
  }

  static TestCertificates* certs_;
  static ServingCluster* cluster_;
};
TestCertificates* TlsAuthTest::certs_ = nullptr;
ServingCluster* TlsAuthTest::cluster_ = nullptr;

TEST_F(TlsAuthTest, RightCertificateAndTokenAreServed) {
  const grpc::Status status = Generate(cluster_->generation(), kToken);
  EXPECT_TRUE(status.ok()) << status.error_message();

  auto context = ContextWithDeadline(30);
  context->AddMetadata("authorization", absl::StrCat("Bearer ", kToken));
  v1::ServerInfo info;
  ASSERT_TRUE(
      cluster_->generation().GetServerInfo(context.get(), {}, &info).ok());
  EXPECT_THAT(info.model_dir(), Not(HasSubstr("/")))
      << "clients see the folder's name only";
  EXPECT_FALSE(info.model_dir().empty());
}

TEST_F(TlsAuthTest, MissingOrWrongTokenIsUnauthenticated) {
  for (const std::string token : {"", kWrongToken}) {
    const grpc::Status status = Generate(cluster_->generation(), token);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
        << "token \"" << token << "\": " << status.error_message();
  }
  auto context = ContextWithDeadline(30);
  v1::ServerInfo info;
  EXPECT_EQ(cluster_->generation()
                .GetServerInfo(context.get(), {}, &info)
                .error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> health =
      cluster_->HealthStatus();
  ASSERT_TRUE(health.ok()) << "health stays open without --auth_health";
  EXPECT_EQ(*health, grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(TlsAuthTest, PlaintextAndClientsWithoutCertificatesAreRefused) {
  EXPECT_EQ(Generate(*StubWith(grpc::InsecureChannelCredentials()), kToken)
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Generate(*StubWith(ClientCredentials(*certs_, false)), kToken)
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);

  httplib::Client plain("127.0.0.1", cluster_->http_port());
  plain.set_read_timeout(10, 0);
  const httplib::Result plain_result = plain.Get("/health");
  EXPECT_TRUE(!plain_result || plain_result->status != 200);

  httplib::SSLClient no_certificate("127.0.0.1", cluster_->http_port());
  no_certificate.set_ca_cert_path(certs_->ca().c_str());
  no_certificate.enable_server_certificate_verification(true);
  EXPECT_FALSE(no_certificate.Get("/health"));
}

TEST_F(TlsAuthTest, HttpsApiNeedsTheTokenButHealthIsOpen) {
  const std::string body =
      R"({"prompt": "behind tls", "size": "48x64", "num_inference_steps": 2,
          "max_sequence_length": 32})";
  std::unique_ptr<httplib::SSLClient> client = HttpsClient();
  const httplib::Result refused =
      client->Post("/v1/images/generations",
                   {{"Authorization", absl::StrCat("Bearer ", kWrongToken)}},
                   body, "application/json");
  ASSERT_TRUE(refused) << httplib::to_string(refused.error());
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(nlohmann::json::parse(refused->body)["error"]["code"],
            "unauthenticated");

  const httplib::Result served =
      client->Post("/v1/images/generations",
                   {{"Authorization", absl::StrCat("Bearer ", kToken)}}, body,
                   "application/json");
  ASSERT_TRUE(served) << httplib::to_string(served.error());
  EXPECT_EQ(served->status, 200) << served->body;

  const httplib::Result health = client->Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  const httplib::Result models = client->Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 401);
}

TEST_F(TlsAuthTest, DitctlConnectsWithTlsCaClientCertificateAndToken) {
  const std::string ditctl = absl::StrCat(
      DITSERVE_BIN_DIR, "/ditctl --server=", cluster_->address(),
      " --tls_ca=", certs_->ca(), " --tls_client_cert=", certs_->client_cert(),
      " --tls_client_key=", certs_->client_key(), " --timeout=60");
  const local_cluster::ShellResult info = local_cluster::RunShell(
      absl::StrCat(ditctl, " --token=", kToken, " info 2>&1"));
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_THAT(info.output, HasSubstr("flux-dev"));
  const local_cluster::ShellResult refused =
      local_cluster::RunShell(absl::StrCat(ditctl, " info 2>&1"));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("UNAUTHENTICATED"));
}

// A TLS file ditctl cannot use is refused before it connects, naming the
// flag: a folder or an empty file read as no CA, which gRPC took for its
// default roots, and the call then failed as an unreachable server.
TEST(DitctlTlsFlagsTest, AnUnreadableOrNonPemFileIsRefusedNamingTheFlag) {
  const std::string folder = ::testing::TempDir();
  const std::string not_pem = absl::StrCat(folder, "/not_pem.crt");
  std::ofstream(not_pem) << "not a certificate\n";
  const std::string ditctl =
      absl::StrCat(DITSERVE_BIN_DIR, "/ditctl --server=127.0.0.1:1 --tls_ca=");
  const std::pair<std::string, std::string> cases[] = {
      {folder, "--tls_ca " + folder + " cannot be read (empty, or a folder)"},
      {"/nonexistent.crt",
       "--tls_ca /nonexistent.crt cannot be read (No such file or directory)"},
      {not_pem, "--tls_ca " + not_pem + " is not PEM (no -----BEGIN line)"}};
  for (const auto& [path, message] : cases) {
    const local_cluster::ShellResult refused =
        local_cluster::RunShell(absl::StrCat(ditctl, path, " info 2>&1"));
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_THAT(refused.output, HasSubstr(message));
  }
}

TEST_F(TlsAuthTest, TokensAppearInNoLog) {
  ASSERT_TRUE(Generate(cluster_->generation(), kToken).ok());
  ASSERT_FALSE(Generate(cluster_->generation(), kWrongToken).ok());
  const std::string log = cluster_->ranks().Output(0);
  EXPECT_THAT(log, HasSubstr("bearer tokens required"));
  EXPECT_THAT(log, Not(HasSubstr(kToken)));
  EXPECT_THAT(log, Not(HasSubstr(kWrongToken)));
}

// Rotation as cert-manager or a Kubernetes secret update does it: new files
// replace the old in place while the host serves.
class CredentialRotationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);
    const std::string root = ::testing::TempDir() + "/ditserve-rotation-" +
                             std::to_string(::getpid());
    for (auto [set, name] :
         {std::pair{&first_, "first"}, std::pair{&second_, "second"}}) {
      absl::StatusOr<TestCertificates> made =
          MakeTestCertificates(absl::StrCat(root, "/", name));
      ASSERT_TRUE(made.ok()) << made.status();
      *set = *made;
    }
    serving_ = root + "/serving";
    std::filesystem::create_directories(serving_);
    Install(first_);
    Replace("tokens", kToken);
  }

  // Writes `contents` beside `name` and renames it over, so the host reads
  // the old file or the new, never half of one.
  void Replace(const std::string& name, const std::string& contents) const {
    const std::string next = absl::StrCat(serving_, "/", name, ".next");
    std::ofstream(next) << contents;
    std::filesystem::rename(next, absl::StrCat(serving_, "/", name));
  }
  void Install(const TestCertificates& certs) const {
    Replace("server.pem", ReadFile(certs.server_cert()));
    Replace("server.key", ReadFile(certs.server_key()));
    Replace("ca.pem", ReadFile(certs.ca()));
  }
  std::vector<std::string> HostFlags(int refresh_seconds) const {
    return {"--tls_cert=" + serving_ + "/server.pem",
            "--tls_key=" + serving_ + "/server.key",
            "--tls_client_ca=" + serving_ + "/ca.pem",
            "--auth_token_file=" + serving_ + "/tokens",
            absl::StrCat("--credential_refresh_s=", refresh_seconds)};
  }

  // GetServerInfo on a fresh channel (so a fresh handshake) of a client
  // that trusts `certs`' CA and presents its client certificate.
  static grpc::Status Call(const ServingCluster& cluster,
                           const TestCertificates& certs,
                           const std::string& token) {
    auto context = ContextWithDeadline(10);
    context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
    v1::ServerInfo info;
    grpc::ChannelArguments fresh;
    fresh.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return v1::Generation::NewStub(
               grpc::CreateCustomChannel(cluster.address(),
                                         ClientCredentials(certs, true), fresh))
        ->GetServerInfo(context.get(), {}, &info);
  }
  // The HTTP status of GET /v1/models over HTTPS as such a client; 0 when
  // the handshake fails.
  static int HttpsModels(const ServingCluster& cluster,
                         const TestCertificates& certs,
                         const std::string& token) {
    httplib::SSLClient client("127.0.0.1", cluster.http_port(),
                              certs.client_cert(), certs.client_key());
    client.set_ca_cert_path(certs.ca().c_str());
    client.enable_server_certificate_verification(true);
    client.set_read_timeout(10, 0);
    const httplib::Result result = client.Get(
        "/v1/models", {{"Authorization", absl::StrCat("Bearer ", token)}});
    return result ? result->status : 0;
  }

  TestCertificates first_;
  TestCertificates second_;
  std::string serving_;
};

// Polls `done` for up to 30 s: the host re-reads every second, and gRPC's
// own watcher re-reads what the host took within a second.
bool Eventually(const std::function<bool()>& done) {
  for (int poll = 0; poll < 300; ++poll) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST_F(CredentialRotationTest, NewCertificatesAndTokensServeWithoutARestart) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1,
                             .host_flags = HostFlags(1),
                             .credentials = ClientCredentials(first_, true)});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ServingCluster& host = **cluster;
  ASSERT_TRUE(Call(host, first_, kToken).ok());
  ASSERT_EQ(HttpsModels(host, first_, kToken), 200);

  Install(second_);
  Replace("tokens", kRotatedToken);
  EXPECT_TRUE(Eventually([&] {
    return Call(host, second_, kRotatedToken).ok() &&
           HttpsModels(host, second_, kRotatedToken) == 200;
  })) << "the new certificate, client CA and token serve on gRPC and HTTPS";
  EXPECT_EQ(Call(host, first_, kRotatedToken).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "a client trusting only the old CA no longer connects";
  EXPECT_EQ(HttpsModels(host, first_, kRotatedToken), 0);
  EXPECT_EQ(Call(host, second_, kToken).error_code(),
            grpc::StatusCode::UNAUTHENTICATED)
      << "the old token is revoked";
  EXPECT_EQ(HttpsModels(host, second_, kToken), 401);

  // Half a rotation (the old key beside the new certificate) and an empty
  // token file are refused; what serves keeps serving.
  Replace("server.key", ReadFile(first_.server_key()));
  Replace("tokens", "# emptied\n");
  EXPECT_TRUE(host.ranks().WaitForOutput(
      0, "tls not reloaded, the current ones keep serving: --tls_key",
      std::chrono::seconds(15)));
  EXPECT_TRUE(host.ranks().WaitForOutput(
      0, "auth_tokens not reloaded, the current ones keep serving",
      std::chrono::seconds(15)));
  // Past gRPC's own next re-read of the host's copies.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_TRUE(Call(host, second_, kRotatedToken).ok());
  EXPECT_EQ(HttpsModels(host, second_, kRotatedToken), 200);
  absl::StatusOr<std::string> metrics = host.ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  for (const std::string credential : {"tls", "auth_tokens"}) {
    EXPECT_EQ(MetricValue(*metrics, "ditserve_credential_reloads_total",
                          {absl::StrCat("credential=\"", credential, "\""),
                           "result=\"applied\""}),
              1)
        << credential;
    EXPECT_GE(MetricValue(*metrics, "ditserve_credential_reloads_total",
                          {absl::StrCat("credential=\"", credential, "\""),
                           "result=\"rejected\""}),
              1)
        << credential;
  }
}

// `systemctl reload` (ExecReload sends SIGHUP) re-reads them at once; a
// client the new file names has its metric series from then on.
TEST_F(CredentialRotationTest, SighupReloadsAtOnce) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1,
                             .host_flags = HostFlags(3600),
                             .credentials = ClientCredentials(first_, true)});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ServingCluster& host = **cluster;
  Install(second_);
  Replace("tokens", absl::StrCat("web-app ", kRotatedToken));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_TRUE(Call(host, first_, kToken).ok()) << "the hour is not up";
  host.ranks().Signal(0, SIGHUP);
  EXPECT_TRUE(Eventually([&] {
    return Call(host, second_, kRotatedToken).ok() &&
           HttpsModels(host, second_, kRotatedToken) == 200;
  }));
  EXPECT_TRUE(host.ranks().WaitForOutput(
      0, "re-reading the credential files on request",
      std::chrono::seconds(5)));
  absl::StatusOr<std::string> metrics = host.ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  bool zero_series = false;
  for (absl::string_view line : absl::StrSplit(*metrics, '\n')) {
    zero_series =
        zero_series ||
        (absl::StartsWith(line, "ditserve_requests_total{client=\"web-app\"") &&
         absl::EndsWith(line, "status=\"data_loss\"} 0"));
  }
  EXPECT_TRUE(zero_series) << "web-app's data_loss series at 0";
}

TEST(CredentialFlagsTest, AKeyThatIsNotTheCertificatesFailsStartUp) {
  absl::StatusOr<TestCertificates> first =
      MakeTestCertificates(::testing::TempDir() + "/ditserve-mismatch-" +
                           std::to_string(::getpid()));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(
      StartUpFailure({.world_size = 1,
                      .host_flags = {"--tls_cert=" + first->server_cert(),
                                     "--tls_key=" + first->client_key()}}),
      HasSubstr("--tls_key " + first->client_key() +
                " is not the key of the certificate in --tls_cert"));
  EXPECT_THAT(StartUpFailure({.world_size = 1,
                              .host_flags = {"--credential_refresh_s=0"}}),
              HasSubstr("--credential_refresh_s 0: allowed 1 to 86400"));
}

TEST(TlsFlagsTest, CertificateWithoutKeyFailsStartUpNamingBothFlags) {
  EXPECT_THAT(StartUpFailure({.world_size = 1,
                              .host_flags = {"--tls_cert=/nonexistent.pem"}}),
              HasSubstr("--tls_cert and --tls_key go together"));
}

}  // namespace
}  // namespace ditserve::testing
