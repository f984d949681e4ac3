#include "server/request_batch.h"

#include <algorithm>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/config/derived_shapes.h"
#include "google/protobuf/util/message_differencer.h"

namespace ditserve::server {
namespace {

// `config` without what may differ between requests that share a run.
v1::InputConfig SharedPart(const v1::InputConfig& config) {
  v1::InputConfig shared = config;
  shared.clear_sequence_number();
  shared.clear_request_id();
  shared.clear_prompt();
  shared.clear_negative_prompt();
  shared.clear_seeds();
  shared.clear_deadline_unix_micros();
  shared.clear_shapes();
  shared.clear_partial_image_steps();
  return shared;
}

}  // namespace

bool CanShareRun(const v1::InputConfig& first,
                 const v1::InputConfig& candidate) {
  return google::protobuf::util::MessageDifferencer::Equals(
      SharedPart(first), SharedPart(candidate));
}

absl::StatusOr<v1::InputConfig> MergeConfigs(
    absl::Span<const v1::InputConfig* const> configs,
    const config::ModelSpec& spec) {
  if (configs.empty()) {
    return absl::InvalidArgumentError("no configs to merge");
  }
  v1::InputConfig merged = *configs.front();
  merged.clear_prompt();
  merged.clear_negative_prompt();
  merged.clear_seeds();
  merged.clear_partial_image_steps();
  std::set<int> partial_image_steps;
  std::string request_ids;
  for (const v1::InputConfig* config : configs) {
    if (!CanShareRun(*configs.front(), *config)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", config->request_id(), " cannot share a run with request ",
          configs.front()->request_id()));
    }
    merged.mutable_prompt()->MergeFrom(config->prompt());
    merged.mutable_negative_prompt()->MergeFrom(config->negative_prompt());
    merged.mutable_seeds()->MergeFrom(config->seeds());
    partial_image_steps.insert(config->partial_image_steps().begin(),
                               config->partial_image_steps().end());
    absl::StrAppend(&request_ids, request_ids.empty() ? "" : "+",
                    config->request_id());
    if (config->deadline_unix_micros() == 0 ||
        merged.deadline_unix_micros() == 0) {
      merged.set_deadline_unix_micros(0);
    } else {
      merged.set_deadline_unix_micros(std::max(merged.deadline_unix_micros(),
                                               config->deadline_unix_micros()));
    }
  }
  merged.set_request_id(request_ids);
  merged.mutable_partial_image_steps()->Add(partial_image_steps.begin(),
                                            partial_image_steps.end());
  ASSIGN_OR_RETURN(v1::DerivedShapes shapes,
                   config::DeriveShapes(merged, spec));
  *merged.mutable_shapes() = std::move(shapes);
  return merged;
}

absl::StatusOr<std::vector<v1::GenerateResponse>> SplitResponse(
    const v1::GenerateResponse& merged, absl::Span<const int> prompt_counts) {
  std::vector<v1::GenerateResponse> responses(prompt_counts.size());
  size_t request = 0;
  int first_prompt = 0;
  int last_prompt = -1;
  for (const v1::Image& output : merged.images()) {
    const int prompt = output.prompt_index();
    while (request < prompt_counts.size() &&
           prompt >= first_prompt + prompt_counts[request]) {
      first_prompt += prompt_counts[request++];
    }
    if (request == prompt_counts.size() || prompt < last_prompt ||
        prompt > last_prompt + 1) {
      return absl::InternalError(absl::StrCat(
          "a merged run returned an output of prompt ", prompt,
          " after prompt ", last_prompt, "; expected every prompt of ",
          first_prompt +
              (request < prompt_counts.size() ? prompt_counts[request] : 0),
          " in order"));
    }
    last_prompt = prompt;
    v1::Image& own = *responses[request].add_images();
    own = output;
    own.set_prompt_index(prompt - first_prompt);
  }
  int total = 0;
  for (const int count : prompt_counts) total += count;
  if (last_prompt + 1 != total) {
    return absl::InternalError(
        absl::StrCat("a merged run returned outputs of ", last_prompt + 1,
                     " prompts for requests of ", total, " in all"));
  }
  for (v1::GenerateResponse& response : responses) {
    *response.mutable_timings() = merged.timings();
  }
  return responses;
}

}  // namespace ditserve::server
