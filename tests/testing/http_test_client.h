// A blocking HTTP/1.1 client over loopback for the tests of the metrics
// server: raw connections (to send anything, or nothing), whole-response
// GETs, and a free port to listen on.
//
//   absl::StatusOr<std::string> response = HttpGet(port, "/metrics");
//   EXPECT_THAT(ResponseBody(*response), HasSubstr("sluice_"));
#ifndef SLUICE_TESTS_TESTING_HTTP_TEST_CLIENT_H_
#define SLUICE_TESTS_TESTING_HTTP_TEST_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace sluice::testing {

// One TCP connection to 127.0.0.1; closed on destruction.
class TestConnection {
 public:
  // Connects; Unavailable when nothing listens.
  static absl::StatusOr<TestConnection> Open(uint16_t port);
  TestConnection(TestConnection&& other) noexcept;
  TestConnection& operator=(TestConnection&&) = delete;
  ~TestConnection();

  // Sends all of `bytes`; false on an error.
  bool Send(std::string_view bytes);
  // Reads until the peer closes (or resets) the connection, or `timeout`
  // passes; returns what came.
  std::string ReadUntilClosed(
      std::chrono::seconds timeout = std::chrono::seconds(60));
  // True once the peer closed or reset the connection within `timeout`,
  // discarding what it sent.
  bool WaitClosed(std::chrono::seconds timeout = std::chrono::seconds(60));

 private:
  explicit TestConnection(int fd) : fd_(fd) {}
  int fd_;
};

// Sends `request` on a new connection and returns the whole response.
absl::StatusOr<std::string> HttpExchange(uint16_t port,
                                         std::string_view request);
// GET `path` (HTTP/1.1, Connection: close): the whole response.
absl::StatusOr<std::string> HttpGet(uint16_t port, std::string_view path);
// What follows the response's header ("" when there is none).
std::string_view ResponseBody(std::string_view response);
// A port nothing listens on now (the system's pick, bound and released).
uint16_t FreePort();

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TESTING_HTTP_TEST_CLIENT_H_
