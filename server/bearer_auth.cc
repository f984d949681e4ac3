#include "server/bearer_auth.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/base/status_macros.h"
#include "grpcpp/server_context.h"

namespace ditserve::server {
namespace {

constexpr size_t kMinTokenLength = 16;
constexpr size_t kMaxClientNameLength = 64;
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

// Names go into log lines and error messages as they are.
bool IsClientName(absl::string_view name) {
  return !name.empty() && name.size() <= kMaxClientNameLength &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
         });
}

}  // namespace

std::string ClientLogField(absl::string_view client) {
  return client.empty() ? "" : absl::StrCat(" client=", client);
}

absl::StatusOr<std::vector<BearerAuth::Token>> BearerAuth::ReadTokens(
    const std::string& path) {
  std::ifstream file(path);
  if (!file) return BadFile(path, "cannot be read");
  std::vector<Token> tokens;
  // A token's line, so that a token given twice (perhaps to two clients) is
  // refused rather than counted for one of them.
  absl::flat_hash_map<std::string, int> line_of;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    const absl::string_view content = absl::StripAsciiWhitespace(line);
    if (content.empty() || absl::StartsWith(content, "#")) continue;
    const std::vector<absl::string_view> fields = absl::StrSplit(
        content, absl::ByAnyChar(" \t\r\v\f"), absl::SkipEmpty());
    if (fields.size() > 2) {
      return BadFile(path, absl::StrCat("line ", number, " has ", fields.size(),
                                        " fields; write a token, or a client "
                                        "name and its token"));
    }
    Token token{std::string(fields.back()),
                fields.size() == 2 ? std::string(fields.front()) : kNoClient};
    if (token.secret.size() < kMinTokenLength) {
      return BadFile(
          path, absl::StrCat("the token on line ", number, " is shorter than ",
                             kMinTokenLength, " characters"));
    }
    if (fields.size() == 2 && !IsClientName(token.client)) {
      return BadFile(path, absl::StrCat("the client name on line ", number,
                                        " is not 1 to ", kMaxClientNameLength,
                                        " letters, digits, '.', '_' or '-'"));
    }
    if (const auto [earlier, added] = line_of.emplace(token.secret, number);
        !added) {
      return BadFile(
          path, absl::StrCat("the token on line ", number,
                             " repeats the one on line ", earlier->second));
    }
    tokens.push_back(std::move(token));
  }
  if (tokens.empty()) return BadFile(path, "holds no token");
  return tokens;
}

absl::StatusOr<std::unique_ptr<BearerAuth>> BearerAuth::FromTokenFile(
    const std::string& path, bool guard_health) {
  auto auth = std::make_unique<BearerAuth>();
  auth->path_ = path;
  auth->guard_health_ = guard_health;
  ASSIGN_OR_RETURN(std::vector<Token> tokens, ReadTokens(path));
  absl::MutexLock lock(&auth->mu_);
  auth->tokens_ = std::move(tokens);
  return auth;
}

absl::StatusOr<bool> BearerAuth::Reload() {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, ReadTokens(path_));
  absl::MutexLock lock(&mu_);
  if (tokens == tokens_) return false;
  tokens_ = std::move(tokens);
  return true;
}

std::string BearerAuth::Describe() const {
  if (!enabled()) return "off";
  const std::vector<std::string> clients = ClientNames();
  absl::ReaderMutexLock lock(&mu_);
  return absl::StrCat(
      "required (", tokens_.size(), tokens_.size() == 1 ? " token" : " tokens",
      clients.empty()
          ? ", none names a client"
          : absl::StrCat(", clients ", absl::StrJoin(clients, ", ")),
      ")");
}

std::vector<std::string> BearerAuth::ClientNames() const {
  absl::ReaderMutexLock lock(&mu_);
  std::set<std::string> clients;
  for (const Token& token : tokens_) {
    if (!token.client.empty()) clients.insert(token.client);
  }
  return {clients.begin(), clients.end()};
}

absl::StatusOr<std::string> BearerAuth::Authenticate(
    absl::string_view authorization) const {
  if (!enabled()) return kNoClient;
  // RFC 7235: the scheme's name is case-insensitive.
  if (!absl::StartsWithIgnoreCase(authorization, kScheme)) {
    return absl::UnauthenticatedError(
        "send \"authorization: Bearer <token>\" (gRPC metadata or HTTP "
        "header); this server requires a token");
  }
  const absl::string_view presented = authorization.substr(kScheme.size());
  const Token* known = nullptr;
  absl::ReaderMutexLock lock(&mu_);
  // Every token is compared, so the time taken does not say which matched.
  for (const Token& token : tokens_) {
    if (EqualInConstantTime(presented, token.secret)) known = &token;
  }
  if (known == nullptr) {
    return absl::UnauthenticatedError("the bearer token is not valid");
  }
  return known->client;
}

absl::StatusOr<std::string> BearerAuth::AuthenticateCall(
    const grpc::ServerContextBase& context) const {
  if (!enabled()) return kNoClient;
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("authorization");
  return Authenticate(
      found == metadata.end()
          ? absl::string_view()
          : absl::string_view(found->second.data(), found->second.size()));
}

}  // namespace ditserve::server
