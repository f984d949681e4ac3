#ifndef DITSERVE_CORE_BASE_ALLOCATOR_TUNING_H_
#define DITSERVE_CORE_BASE_ALLOCATOR_TUNING_H_

#include <string>

namespace ditserve::base {

// Makes glibc's malloc keep freed memory for reuse, on every thread: one
// arena, no mmap for large blocks and no trimming of the heap. Every forward
// and decode allocates and frees tensors of the same large sizes; with glibc's
// defaults each one is mapped and returned anew, and page-faulting it back
// costs up to 40 % of a VAE decode (README, "Against diffusers"). The process
// then keeps its peak memory, which --max_request_bytes bounds. Leaves glibc
// alone when the environment tunes malloc itself (MALLOC_*_ or GLIBC_TUNABLES).
// Call first in main, before threads start (a thread arena made earlier stays
// in use). Returns what it did, for the start-up log.
std::string KeepFreedMemoryForReuse();

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_ALLOCATOR_TUNING_H_
