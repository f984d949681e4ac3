#ifndef DITSERVE_SERVER_PARTIAL_IMAGE_DECODER_H_
#define DITSERVE_SERVER_PARTIAL_IMAGE_DECODER_H_

// The previews of one run (GenerateRequest.partial_images), decoded and
// reported on a thread of their own, one after another in step order: the
// run goes on meanwhile, so a preview's VAE decode does not hold the other
// ranks at their next collective. Each preview is counted in `metrics`
// (kPartialImagesMetric), and a sent one's delay observed.

#include <ATen/core/Tensor.h>

#include <memory>
#include <thread>
#include <vector>

#include "ditserve/v1/input_config.pb.h"
#include "server/image_output.h"
#include "server/job.h"
#include "server/metrics.h"

namespace ditserve::server {

class PartialImageDecoder {
 public:
  // `jobs` share the run of `config` (merged), their prompts in this order,
  // `prompt_counts` of each. Every argument outlives the decoder.
  PartialImageDecoder(const v1::InputConfig& config,
                      const std::vector<std::shared_ptr<Job>>& jobs,
                      const std::vector<int>& prompt_counts,
                      const OutputEncoder& encode, Metrics& metrics);
  // Wait()s.
  ~PartialImageDecoder();

  PartialImageDecoder(const PartialImageDecoder&) = delete;
  PartialImageDecoder& operator=(const PartialImageDecoder&) = delete;

  // Once the previews handed over before are reported, encodes the outputs
  // of the jobs whose own partial_image_steps name `step` (1-based; the
  // merged config's are the union of theirs) from `latents` (every
  // prompt's, after that step), and reports each to its job as a
  // partial_image event. A preview that fails is logged and skipped: the
  // run and its result do not depend on it.
  void Decode(int step, at::Tensor latents);

  // Returns once every preview handed over has been reported.
  void Wait();

 private:
  // Returns the kPartialImage* result.
  const char* Report(int step, const at::Tensor& latents) const;

  const v1::InputConfig& config_;
  const std::vector<std::shared_ptr<Job>>& jobs_;
  const std::vector<int>& prompt_counts_;
  const OutputEncoder& encode_;
  Metrics& metrics_;
  // The latest preview's thread; each joins the one before it first.
  std::thread latest_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_PARTIAL_IMAGE_DECODER_H_
