#include "server/bearer_auth.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
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

absl::StatusOr<std::vector<std::string>> ReadTokens(const std::string& path) {
  std::ifstream file(path);
  if (!file) return BadFile(path, "cannot be read");
  std::vector<std::string> tokens;
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
    tokens.emplace_back(token);
  }
  if (tokens.empty()) return BadFile(path, "holds no token");
  return tokens;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BearerAuth>> BearerAuth::FromTokenFile(
    const std::string& path, bool guard_health) {
  auto auth = std::make_unique<BearerAuth>();
  auth->path_ = path;
  auth->guard_health_ = guard_health;
  ASSIGN_OR_RETURN(std::vector<std::string> tokens, ReadTokens(path));
  absl::MutexLock lock(&auth->mu_);
  auth->tokens_ = std::move(tokens);
  return auth;
}

absl::StatusOr<bool> BearerAuth::Reload() {
  ASSIGN_OR_RETURN(std::vector<std::string> tokens, ReadTokens(path_));
  absl::MutexLock lock(&mu_);
  if (tokens == tokens_) return false;
  tokens_ = std::move(tokens);
  return true;
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
  absl::ReaderMutexLock lock(&mu_);
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
