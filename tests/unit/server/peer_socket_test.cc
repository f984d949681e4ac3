#include "server/peer_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>

#include "gtest/gtest.h"

namespace ditserve::server {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  return address;
}

int PortOf(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  return ntohs(address.sin_port);
}

// A loopback TCP connection: the accepted (server) end and the client end.
struct Connection {
  Connection() {
    listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in any = Loopback(0);
    ::bind(listener, reinterpret_cast<sockaddr*>(&any), sizeof(any));
    ::listen(listener, 1);
    client = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to = Loopback(PortOf(listener));
    ::connect(client, reinterpret_cast<sockaddr*>(&to), sizeof(to));
    accepted = ::accept(listener, nullptr, nullptr);
  }
  ~Connection() {
    for (int fd : {listener, client, accepted}) {
      if (fd >= 0) ::close(fd);
    }
  }
  int listener = -1;
  int client = -1;
  int accepted = -1;
};

TEST(PeerSocketTest, FindsTheAcceptedSocketByItsAddressPair) {
  Connection connection;
  ASSERT_GE(connection.accepted, 0);
  const std::optional<int> found = FindPeerSocket(
      "127.0.0.1", PortOf(connection.client), PortOf(connection.listener));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, connection.accepted);
}

TEST(PeerSocketTest, OtherPortsFindNothing) {
  Connection connection;
  EXPECT_FALSE(FindPeerSocket("127.0.0.1", PortOf(connection.client),
                              PortOf(connection.listener) + 1)
                   .has_value());
  EXPECT_FALSE(FindPeerSocket("127.0.0.2", PortOf(connection.client),
                              PortOf(connection.listener))
                   .has_value());
}

TEST(PeerSocketTest, ClosedOnlyOnceThePeerCloses) {
  Connection connection;
  EXPECT_FALSE(PeerHasClosed(connection.accepted));
  ASSERT_EQ(::send(connection.client, "GET", 3, 0), 3);
  EXPECT_FALSE(PeerHasClosed(connection.accepted))
      << "unread data is not a close";
  ::close(connection.client);
  connection.client = -1;
  EXPECT_TRUE(PeerHasClosed(connection.accepted));
}

}  // namespace
}  // namespace ditserve::server
