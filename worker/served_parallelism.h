#ifndef DITSERVE_WORKER_SERVED_PARALLELISM_H_
#define DITSERVE_WORKER_SERVED_PARALLELISM_H_

#include "absl/status/status.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::worker {

// UNIMPLEMENTED naming the flags when `parallel` asks for a combination this
// build does not run: PipeFusion together with sequence parallelism (every
// family runs either with data and, for PixArt and SD3, CFG parallelism).
// Every rank checks this before the rendezvous, so all of them refuse with
// this message instead of some seeing peers vanish mid-handshake.
absl::Status CheckServedParallelism(const v1::ParallelConfig& parallel);

}  // namespace ditserve::worker

#endif  // DITSERVE_WORKER_SERVED_PARALLELISM_H_
