#include "server/bearer_auth.h"

#include <fstream>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/tls_config.h"

namespace ditserve::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "token-of-twenty-chars";

std::string WriteFile(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << contents;
  return path;
}

TEST(BearerAuthTest, WithoutTokensEveryCallIsLetIn) {
  const BearerAuth auth;
  EXPECT_FALSE(auth.enabled());
  EXPECT_TRUE(auth.Check("").ok());
}

TEST(BearerAuthTest, OnlyAKnownTokenAfterBearerIsLetIn) {
  absl::StatusOr<BearerAuth> auth = BearerAuth::FromTokenFile(
      WriteFile("tokens", absl::StrCat("# comment\n\n  ", kToken,
                                       "  \nsecond-token-0123456789\n")),
      false);
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_TRUE(auth->Check(absl::StrCat("Bearer ", kToken)).ok());
  EXPECT_TRUE(auth->Check("Bearer second-token-0123456789").ok());
  for (const std::string refused :
       {std::string(""), std::string(kToken), absl::StrCat("Basic ", kToken),
        absl::StrCat("Bearer ", kToken, "x"), std::string("Bearer # comment"),
        std::string("Bearer ")}) {
    const absl::Status status = auth->Check(refused);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated) << refused;
    EXPECT_THAT(std::string(status.message()), Not(HasSubstr(kToken)))
        << "errors never carry a token";
  }
}

TEST(BearerAuthTest, HealthIsGuardedOnlyWhenAsked) {
  const std::string path = WriteFile("health-tokens", kToken);
  EXPECT_FALSE(BearerAuth::FromTokenFile(path, false)->guards_health());
  EXPECT_TRUE(BearerAuth::FromTokenFile(path, true)->guards_health());
}

TEST(BearerAuthTest, BadTokenFilesAreRefusedNamingTheFlagAndLine) {
  const struct {
    std::string contents;
    std::string message;
  } cases[] = {
      {"# only a comment\n", "holds no token"},
      {"short\n", "line 1 is shorter than 16"},
      {absl::StrCat(kToken, "\nhas a space in it 0123\n"),
       "line 2 contains whitespace"},
  };
  for (const auto& bad : cases) {
    absl::StatusOr<BearerAuth> auth =
        BearerAuth::FromTokenFile(WriteFile("bad-tokens", bad.contents), false);
    ASSERT_FALSE(auth.ok()) << bad.contents;
    EXPECT_THAT(std::string(auth.status().message()),
                HasSubstr("--auth_token_file"));
    EXPECT_THAT(std::string(auth.status().message()), HasSubstr(bad.message));
  }
  EXPECT_FALSE(BearerAuth::FromTokenFile("/nonexistent/tokens", false).ok());
}

TEST(TlsConfigTest, NoFlagsIsPlaintext) {
  absl::StatusOr<std::optional<TlsConfig>> tls = MakeTlsConfig("", "", "");
  ASSERT_TRUE(tls.ok());
  EXPECT_FALSE(tls->has_value());
}

TEST(TlsConfigTest, IncompleteOrUnreadableFlagsAreRefusedNamingTheFlag) {
  const std::string pem = WriteFile(
      "cert.pem", "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
  const struct {
    std::string cert, key, client_ca, message;
  } cases[] = {
      {pem, "", "", "only --tls_cert is set"},
      {"", pem, "", "only --tls_key is set"},
      {"", "", pem, "--tls_client_ca needs --tls_cert and --tls_key"},
      {pem, "/nonexistent.key", "", "--tls_key /nonexistent.key"},
      {pem, pem, WriteFile("not.pem", "plain text"), "--tls_client_ca"},
  };
  for (const auto& bad : cases) {
    absl::StatusOr<std::optional<TlsConfig>> tls =
        MakeTlsConfig(bad.cert, bad.key, bad.client_ca);
    ASSERT_FALSE(tls.ok()) << bad.message;
    EXPECT_EQ(tls.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(tls.status().message()), HasSubstr(bad.message));
  }
}

}  // namespace
}  // namespace ditserve::server
