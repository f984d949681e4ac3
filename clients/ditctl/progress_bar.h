#ifndef DITSERVE_CLIENTS_DITCTL_PROGRESS_BAR_H_
#define DITSERVE_CLIENTS_DITCTL_PROGRESS_BAR_H_

#include <string>

namespace ditserve::ditctl {

// "[##########..........]  14/28 steps  3.2 s" for a terminal line.
std::string RenderProgress(int step, int total_steps, double elapsed_seconds,
                           int width = 30);

}  // namespace ditserve::ditctl

#endif  // DITSERVE_CLIENTS_DITCTL_PROGRESS_BAR_H_
