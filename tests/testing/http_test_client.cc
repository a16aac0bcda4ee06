#include "tests/testing/http_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace sluice::testing {
namespace {

sockaddr_in Loopback(uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

}  // namespace

absl::StatusOr<TestConnection> TestConnection::Open(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  const sockaddr_in address = Loopback(port);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address),
              sizeof(address)) != 0) {
    const int error = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("connect to port ", port, ": ", std::strerror(error)));
  }
  return TestConnection(fd);
}

TestConnection::TestConnection(TestConnection&& other) noexcept
    : fd_(other.fd_) {
  other.fd_ = -1;
}

TestConnection::~TestConnection() {
  if (fd_ >= 0) close(fd_);
}

bool TestConnection::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

std::string TestConnection::ReadUntilClosed(std::chrono::seconds timeout) {
  std::string received;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char chunk[65536];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd ready{.fd = fd_, .events = POLLIN};
    const int polled = poll(&ready, 1, static_cast<int>(left.count()));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) break;
    const ssize_t got = recv(fd_, chunk, sizeof(chunk), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // closed or reset
    received.append(chunk, static_cast<size_t>(got));
  }
  return received;
}

bool TestConnection::WaitClosed(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char chunk[65536];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd ready{.fd = fd_, .events = POLLIN};
    const int polled = poll(&ready, 1, static_cast<int>(left.count()));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) return false;
    const ssize_t got = recv(fd_, chunk, sizeof(chunk), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return true;
  }
}

absl::StatusOr<std::string> HttpExchange(uint16_t port,
                                         std::string_view request) {
  absl::StatusOr<TestConnection> connection = TestConnection::Open(port);
  if (!connection.ok()) return connection.status();
  if (!connection->Send(request)) {
    return absl::UnavailableError("the request could not be sent");
  }
  return connection->ReadUntilClosed();
}

absl::StatusOr<std::string> HttpGet(uint16_t port, std::string_view path) {
  return HttpExchange(port, "GET " + std::string(path) +
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                "Connection: close\r\n\r\n");
}

std::string_view ResponseBody(std::string_view response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string_view::npos ? std::string_view()
                                       : response.substr(end + 4);
}

uint16_t FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof(address);
  bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace sluice::testing
