#include "server/bearer_auth.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/server_context.h"

namespace ditserve::server {
namespace {

constexpr size_t kMinTokenLength = 16;
constexpr absl::string_view kScheme = "Bearer ";

// Compares in time that depends on the lengths only, so the time a refusal
// takes says nothing about how much of a token was right.
bool EqualInConstantTime(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

absl::Status BadFile(const std::string& path, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("--auth_token_file ", path, ": ", problem));
}

}  // namespace

absl::StatusOr<BearerAuth> BearerAuth::FromTokenFile(const std::string& path,
                                                     bool guard_health) {
  std::ifstream file(path);
  if (!file) return BadFile(path, "cannot be read");
  BearerAuth auth;
  auth.guard_health_ = guard_health;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    const absl::string_view token = absl::StripAsciiWhitespace(line);
    if (token.empty() || absl::StartsWith(token, "#")) continue;
    if (token.size() < kMinTokenLength) {
      return BadFile(
          path, absl::StrCat("the token on line ", number, " is shorter than ",
                             kMinTokenLength, " characters"));
    }
    if (std::find_if(token.begin(), token.end(), absl::ascii_isspace) !=
        token.end()) {
      return BadFile(path, absl::StrCat("the token on line ", number,
                                        " contains whitespace"));
    }
    auth.tokens_.emplace_back(token);
  }
  if (auth.tokens_.empty()) return BadFile(path, "holds no token");
  return auth;
}

absl::Status BearerAuth::Check(absl::string_view authorization) const {
  if (!enabled()) return absl::OkStatus();
  if (!absl::StartsWith(authorization, kScheme)) {
    return absl::UnauthenticatedError(
        "send \"authorization: Bearer <token>\" (gRPC metadata or HTTP "
        "header); this server requires a token");
  }
  const absl::string_view presented = authorization.substr(kScheme.size());
  bool known = false;
  for (const std::string& token : tokens_) {
    known = EqualInConstantTime(presented, token) || known;
  }
  if (!known)
    return absl::UnauthenticatedError("the bearer token is not valid");
  return absl::OkStatus();
}

absl::Status BearerAuth::CheckCall(
    const grpc::ServerContextBase& context) const {
  if (!enabled()) return absl::OkStatus();
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("authorization");
  return Check(
      found == metadata.end()
          ? absl::string_view()
          : absl::string_view(found->second.data(), found->second.size()));
}

}  // namespace ditserve::server
