#ifndef DITSERVE_CORE_DIST_SIGPIPE_H_
#define DITSERVE_CORE_DIST_SIGPIPE_H_

namespace ditserve::dist {

// Gloo writes to its peers with writev(), which raises SIGPIPE once the peer
// closed its end: it died, or it gave up on a collective first and closed
// the pair (a rank that was stopped writes into it on resuming). The
// default action ends the process without a word, so a rank that should
// report the failure and rejoin the group vanishes instead. Every process
// that joins a group calls this before it joins: the write then fails with
// EPIPE, which Gloo reports as an error of the collective.
void IgnoreSigpipe();

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_SIGPIPE_H_
