#ifndef DITSERVE_CORE_DIST_PROCESS_GROUP_H_
#define DITSERVE_CORE_DIST_PROCESS_GROUP_H_

#include <torch/version.h>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

namespace ditserve::dist {

// The c10d type collectives are issued on. LibTorch 2.x moved the collective
// methods of ProcessGroupGloo / ProcessGroupNCCL to c10d::Backend; 1.x has
// them on c10d::ProcessGroup.
#if TORCH_VERSION_MAJOR >= 2
using ProcessGroup = c10d::Backend;
#else
using ProcessGroup = c10d::ProcessGroup;
#endif
using ProcessGroupPtr = c10::intrusive_ptr<ProcessGroup>;

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_PROCESS_GROUP_H_
