#include "clients/ditctl/progress_bar.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace ditserve::ditctl {

std::string RenderProgress(int step, int total_steps, double elapsed_seconds,
                           int width) {
  const int clamped = std::clamp(step, 0, std::max(total_steps, 1));
  const int filled = total_steps > 0 ? clamped * width / total_steps : width;
  return absl::StrFormat("[%s%s] %*d/%d steps %6.1f s",
                         std::string(filled, '#'),
                         std::string(width - filled, '.'),
                         absl::StrFormat("%d", total_steps).size(), clamped,
                         total_steps, elapsed_seconds);
}

}  // namespace ditserve::ditctl
