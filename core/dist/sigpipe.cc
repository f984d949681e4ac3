#include "core/dist/sigpipe.h"

#include <csignal>

namespace ditserve::dist {

void IgnoreSigpipe() { std::signal(SIGPIPE, SIG_IGN); }

}  // namespace ditserve::dist
