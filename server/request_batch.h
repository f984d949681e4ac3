#ifndef DITSERVE_SERVER_REQUEST_BATCH_H_
#define DITSERVE_SERVER_REQUEST_BATCH_H_

// Several admitted requests that differ only in what each image is made of
// (prompts, negative prompts, seeds) run as one frozen config: one pass of
// the rank group denoises all their images together, and each image is the
// one its request would get alone (an image depends only on its own prompt
// and seed).

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/config/model_spec.h"
#include "ditserve/v1/generation.pb.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::server {

// Whether `candidate` may run in one config with `first`: every field other
// than the per-image, per-request ones (prompts, negative prompts, seeds,
// request id, sequence number, deadline, the steps after which it wants
// previews, and the shapes derived from the image count) is equal.
bool CanShareRun(const v1::InputConfig& first,
                 const v1::InputConfig& candidate);

// The config that runs `configs` together, images in the order given: their
// prompts, negative prompts and seeds concatenated and the shapes derived
// again for the total; the first's sequence number; the request ids joined
// with '+'; the latest deadline, none if one of them has none (each
// request's own deadline is kept by the scheduler); previews after every
// step any of them wants one after, in order (each request's own steps are
// kept by the scheduler). `configs` must be non-empty and pairwise
// CanShareRun.
absl::StatusOr<v1::InputConfig> MergeConfigs(
    absl::Span<const v1::InputConfig* const> configs,
    const config::ModelSpec& spec);

// Splits the response of a merged run into one response per request, each
// with the outputs of its prompts (request i has `prompt_counts[i]` of
// them, after those of the requests before it), their prompt_index made its
// own, and every timing of the run. A prompt may have several outputs (the
// PNG frames of a video). INTERNAL when an output's prompt_index is out of
// range or out of order, or a prompt has no output.
absl::StatusOr<std::vector<v1::GenerateResponse>> SplitResponse(
    const v1::GenerateResponse& merged, absl::Span<const int> prompt_counts);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_REQUEST_BATCH_H_
