#include "server/bearer_auth.h"

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::server {
namespace {

using ::testing::ElementsAre;
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
  EXPECT_EQ(auth.Authenticate("").value(), "");
  EXPECT_EQ(auth.Describe(), "off");
}

TEST(BearerAuthTest, OnlyAKnownTokenAfterBearerIsLetIn) {
  absl::StatusOr<std::unique_ptr<BearerAuth>> auth = BearerAuth::FromTokenFile(
      WriteFile("tokens", absl::StrCat("# comment\n\n  ", kToken,
                                       "  \nsecond-token-0123456789\n")),
      false);
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_EQ((*auth)->Describe(), "required (2 tokens, none names a client)");
  EXPECT_TRUE((*auth)->Authenticate(absl::StrCat("Bearer ", kToken)).ok());
  EXPECT_TRUE((*auth)->Authenticate("Bearer second-token-0123456789").ok());
  EXPECT_TRUE((*auth)->Authenticate(absl::StrCat("bearer ", kToken)).ok());
  EXPECT_TRUE((*auth)->Authenticate(absl::StrCat("BEARER ", kToken)).ok());
  for (const std::string refused :
       {std::string(""), std::string(kToken), absl::StrCat("Basic ", kToken),
        absl::StrCat("Bearer ", kToken, "x"), std::string("Bearer # comment"),
        std::string("Bearer ")}) {
    const absl::Status status = (*auth)->Authenticate(refused).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated) << refused;
    EXPECT_THAT(std::string(status.message()), Not(HasSubstr(kToken)))
        << "errors never carry a token";
  }
}

TEST(BearerAuthTest, ATokenTellsWhichClientSentIt) {
  absl::StatusOr<std::unique_ptr<BearerAuth>> auth = BearerAuth::FromTokenFile(
      WriteFile("named-tokens",
                absl::StrCat("web-app ", kToken,
                             "\n\tbatch_2.eu\t second-token-0123456789 \n"
                             "web-app rotated-token-0123456789\n"
                             "unnamed-token-0123456789\n")),
      false);
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_EQ((*auth)->Authenticate(absl::StrCat("Bearer ", kToken)).value(),
            "web-app");
  EXPECT_EQ((*auth)->Authenticate("Bearer second-token-0123456789").value(),
            "batch_2.eu");
  EXPECT_EQ((*auth)->Authenticate("Bearer rotated-token-0123456789").value(),
            "web-app")
      << "a client may have two tokens";
  EXPECT_EQ((*auth)->Authenticate("Bearer unnamed-token-0123456789").value(),
            "");
  EXPECT_EQ((*auth)->Describe(),
            "required (4 tokens, clients batch_2.eu, web-app)");
  EXPECT_THAT((*auth)->ClientNames(), ElementsAre("batch_2.eu", "web-app"));
  EXPECT_EQ((*auth)->Authenticate("Bearer web-app").status().code(),
            absl::StatusCode::kUnauthenticated)
      << "a name is not a token";
}

TEST(BearerAuthTest, LogLinesNameOnlyNamedClients) {
  EXPECT_EQ(ClientLogField("web-app"), " client=web-app");
  EXPECT_EQ(ClientLogField(kNoClient), "");
}

TEST(BearerAuthTest, HealthIsGuardedOnlyWhenAsked) {
  const std::string path = WriteFile("health-tokens", kToken);
  EXPECT_FALSE(BearerAuth::FromTokenFile(path, false).value()->guards_health());
  EXPECT_TRUE(BearerAuth::FromTokenFile(path, true).value()->guards_health());
}

TEST(BearerAuthTest, BadTokenFilesAreRefusedNamingTheFlagAndLine) {
  const struct {
    std::string contents;
    std::string message;
  } cases[] = {
      {"# only a comment\n", "holds no token"},
      {"short\n", "line 1 is shorter than 16"},
      {absl::StrCat(kToken, "\nhas a space in it 0123\n"),
       "line 2 has 6 fields; write a token, or a client name and its token"},
      {absl::StrCat("web/app ", kToken, "\n"),
       "the client name on line 1 is not 1 to 64 letters, digits, '.', '_' "
       "or '-'"},
      {absl::StrCat(std::string(65, 'a'), " ", kToken, "\n"),
       "the client name on line 1 is not 1 to 64"},
      {"web-app short\n", "line 1 is shorter than 16"},
      {absl::StrCat("web-app ", kToken, "\n#\nbatch ", kToken, "\n"),
       "the token on line 3 repeats the one on line 1"},
  };
  for (const auto& bad : cases) {
    absl::StatusOr<std::unique_ptr<BearerAuth>> auth =
        BearerAuth::FromTokenFile(WriteFile("bad-tokens", bad.contents), false);
    ASSERT_FALSE(auth.ok()) << bad.contents;
    EXPECT_THAT(std::string(auth.status().message()),
                HasSubstr("--auth_token_file"));
    EXPECT_THAT(std::string(auth.status().message()), HasSubstr(bad.message));
  }
  EXPECT_FALSE(BearerAuth::FromTokenFile("/nonexistent/tokens", false).ok());
}

TEST(BearerAuthTest, ReloadTakesAValidFileAndKeepsTheTokensOtherwise) {
  const std::string path = WriteFile("rotated-tokens", kToken);
  absl::StatusOr<std::unique_ptr<BearerAuth>> auth =
      BearerAuth::FromTokenFile(path, false);
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_EQ((*auth)->Reload().value(), false) << "the file has not changed";

  constexpr char kNewToken[] = "rotated-token-0123456789";
  WriteFile("rotated-tokens", kNewToken);
  EXPECT_EQ((*auth)->Reload().value(), true);
  EXPECT_FALSE((*auth)->Authenticate(absl::StrCat("Bearer ", kToken)).ok());
  EXPECT_TRUE((*auth)->Authenticate(absl::StrCat("Bearer ", kNewToken)).ok());

  WriteFile("rotated-tokens", "short\n");
  const absl::StatusOr<bool> bad = (*auth)->Reload();
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("line 1 is shorter than 16"));
  EXPECT_TRUE((*auth)->Authenticate(absl::StrCat("Bearer ", kNewToken)).ok())
      << "a bad file leaves the tokens that were serving";
}

}  // namespace
}  // namespace ditserve::server
