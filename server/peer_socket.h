#ifndef DITSERVE_SERVER_PEER_SOCKET_H_
#define DITSERVE_SERVER_PEER_SOCKET_H_

// Whether an HTTP client is still connected while its handler waits for a
// generation. cpp-httplib (0.11) does not give a handler its connection, so
// the socket is found by its address pair, which is unique while the handler
// holds the connection open.

#include <optional>
#include <string>

namespace ditserve::server {

// The descriptor of this process's TCP socket connected from
// `peer_address`:`peer_port` to local port `local_port`; nullopt if none.
std::optional<int> FindPeerSocket(const std::string& peer_address,
                                  int peer_port, int local_port);

// True once the peer has closed or reset the connection. Data the peer sent
// meanwhile (a pipelined request) is left unread.
bool PeerHasClosed(int socket);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_PEER_SOCKET_H_
