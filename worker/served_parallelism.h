#ifndef DITSERVE_WORKER_SERVED_PARALLELISM_H_
#define DITSERVE_WORKER_SERVED_PARALLELISM_H_

#include "absl/status/status.h"
#include "core/config/model_defaults.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::worker {

// UNIMPLEMENTED naming the flags when `parallel` asks for a combination this
// build does not run for `family`: PixArt and SD3 run data, CFG and
// sequence parallelism but not PipeFusion; FLUX runs PipeFusion or
// sequence parallelism, not both.
// Every rank checks this before the rendezvous, so all of them refuse with
// this message instead of some seeing peers vanish mid-handshake.
absl::Status CheckServedParallelism(const v1::ParallelConfig& parallel,
                                    config::ModelFamily family);

}  // namespace ditserve::worker

#endif  // DITSERVE_WORKER_SERVED_PARALLELISM_H_
