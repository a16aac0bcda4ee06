#include "engine/metrics_http_server.h"

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/http_test_client.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using testing::HttpExchange;
using testing::HttpGet;
using testing::ResponseBody;
using ::testing::StartsWith;
using testing::TestConnection;
using testing::WaitUntil;

constexpr char kPage[] = "# TYPE up gauge\nup 1\n";

std::unique_ptr<MetricsHttpServer> StartServer(
    MetricsHttpServer::Options options = {},
    MetricsHttpServer::Render render = [] { return std::string(kPage); }) {
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start(std::move(options), std::move(render));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? std::move(*server) : nullptr;
}

TEST(MetricsHttpServerTest, ServesThePageOnGetMetrics) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  ASSERT_NE(server->port(), 0);
  absl::StatusOr<std::string> response = HttpGet(server->port(), "/metrics");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(*response, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(*response, HasSubstr("Content-Type: text/plain; version=0.0.4; "
                                   "charset=utf-8\r\n"));
  EXPECT_THAT(*response,
              HasSubstr(absl::StrCat("Content-Length: ", sizeof(kPage) - 1)));
  EXPECT_EQ(ResponseBody(*response), kPage);
  // A query string does not change the page (Prometheus may add one).
  response = HttpGet(server->port(), "/metrics?name[]=up");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(ResponseBody(*response), kPage);
}

TEST(MetricsHttpServerTest, HeadAnswersTheHeaderOnly) {
  auto server = StartServer();
  absl::StatusOr<std::string> response =
      HttpExchange(server->port(), "HEAD /metrics HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(response.ok());
  EXPECT_THAT(*response, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(*response,
              HasSubstr(absl::StrCat("Content-Length: ", sizeof(kPage) - 1)));
  EXPECT_EQ(ResponseBody(*response), "");
}

TEST(MetricsHttpServerTest, OtherPathsAndMethodsSayWhere) {
  auto server = StartServer();
  absl::StatusOr<std::string> root = HttpGet(server->port(), "/");
  ASSERT_TRUE(root.ok());
  EXPECT_THAT(*root, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(ResponseBody(*root), HasSubstr("/metrics"));
  absl::StatusOr<std::string> missing = HttpGet(server->port(), "/metric");
  ASSERT_TRUE(missing.ok());
  EXPECT_THAT(*missing, StartsWith("HTTP/1.1 404 Not Found"));
  EXPECT_THAT(ResponseBody(*missing), HasSubstr("/metrics"));
  absl::StatusOr<std::string> post = HttpExchange(
      server->port(), "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  ASSERT_TRUE(post.ok());
  EXPECT_THAT(*post, StartsWith("HTTP/1.1 405 Method Not Allowed"));
  EXPECT_THAT(*post, HasSubstr("Allow: GET, HEAD\r\n"));
}

TEST(MetricsHttpServerTest, MalformedRequestsGetABadRequest) {
  auto server = StartServer();
  for (const std::string& request :
       {std::string("garbage\r\n\r\n"), std::string("GET /metrics\r\n\r\n"),
        std::string("GET /metrics SPDY/3\n\n"),
        std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n\n", 14)}) {
    absl::StatusOr<std::string> response =
        HttpExchange(server->port(), request);
    ASSERT_TRUE(response.ok());
    EXPECT_THAT(*response, StartsWith("HTTP/1.1 400 Bad Request"));
    EXPECT_THAT(ResponseBody(*response), HasSubstr("GET /metrics HTTP/1.1"));
  }
  // A header that never ends is cut off at 8 KiB.
  absl::StatusOr<std::string> response = HttpExchange(
      server->port(),
      absl::StrCat("GET /metrics HTTP/1.1\r\nX: ", std::string(20000, 'a')));
  ASSERT_TRUE(response.ok());
  EXPECT_THAT(*response, StartsWith("HTTP/1.1 431"));
  // And the server still serves.
  response = HttpGet(server->port(), "/metrics");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(ResponseBody(*response), kPage);
}

TEST(MetricsHttpServerTest, ASilentClientIsClosedAfterTheTimeout) {
  auto server = StartServer({.timeout = std::chrono::milliseconds(200)});
  absl::StatusOr<TestConnection> silent = TestConnection::Open(server->port());
  ASSERT_TRUE(silent.ok());
  // Others are served meanwhile.
  absl::StatusOr<std::string> response = HttpGet(server->port(), "/metrics");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(ResponseBody(*response), kPage);
  EXPECT_TRUE(silent->WaitClosed());
}

TEST(MetricsHttpServerTest, AClientThatNeverReadsHoldsUpNobody) {
  const std::string big_page(32 << 20, 'x');  // more than socket buffers
  std::atomic<int> renders{0};
  auto server = StartServer({.timeout = std::chrono::milliseconds(500)}, [&] {
    return renders.fetch_add(1) == 0 ? big_page : std::string(kPage);
  });
  absl::StatusOr<TestConnection> stuck = TestConnection::Open(server->port());
  ASSERT_TRUE(stuck.ok());
  ASSERT_TRUE(stuck->Send("GET /metrics HTTP/1.1\r\n\r\n"));
  ASSERT_TRUE(WaitUntil([&] { return renders.load() > 0; }));
  // While its response is stuck, others are served.
  absl::StatusOr<std::string> response = HttpGet(server->port(), "/metrics");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(ResponseBody(*response), kPage);
  // The stuck client is dropped once its write times out.
  EXPECT_TRUE(stuck->WaitClosed());
}

TEST(MetricsHttpServerTest, ConnectionsOverTheLimitAreClosedAtOnce) {
  auto server = StartServer({.max_connections = 2});
  std::vector<TestConnection> held;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<TestConnection> connection =
        TestConnection::Open(server->port());
    ASSERT_TRUE(connection.ok());
    held.push_back(std::move(*connection));
  }
  // The kernel accepts a third, the server closes it unanswered.
  absl::StatusOr<std::string> refused = HttpGet(server->port(), "/metrics");
  EXPECT_TRUE(!refused.ok() || refused->empty()) << *refused;
  // Once the two leave, requests are served again.
  held.clear();
  EXPECT_TRUE(WaitUntil([&] {
    absl::StatusOr<std::string> response = HttpGet(server->port(), "/metrics");
    return response.ok() && ResponseBody(*response) == kPage;
  }));
}

TEST(MetricsHttpServerTest, APortInUseIsAClearError) {
  auto first = StartServer();
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> second =
      MetricsHttpServer::Start({.port = first->port()},
                               [] { return std::string(); });
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(),
              HasSubstr(absl::StrCat("127.0.0.1:", first->port())));
  EXPECT_THAT(second.status().message(), HasSubstr("in use"));
}

TEST(MetricsHttpServerTest, BadAddressesAreInvalidArguments) {
  for (const char* address : {"localhost:80", "not an address"}) {
    absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
        MetricsHttpServer::Start({.address = address},
                                 [] { return std::string(); });
    ASSERT_FALSE(server.ok());
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(server.status().message(), HasSubstr("not an IP address"));
  }
  // TEST-NET-1: an address of no machine (binding it sends nothing).
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> foreign =
      MetricsHttpServer::Start({.address = "192.0.2.1"},
                               [] { return std::string(); });
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(foreign.status().message(), HasSubstr("not one of this"));
}

TEST(MetricsHttpServerTest, ListensOnIpv6Loopback) {
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start({.address = "::1"},
                               [] { return std::string(kPage); });
  if (!server.ok()) GTEST_SKIP() << "no IPv6 loopback: " << server.status();
  EXPECT_NE((*server)->port(), 0);
}

TEST(MetricsHttpServerTest, StopsAtOnceWithClientsConnected) {
  const std::string big_page(32 << 20, 'x');
  std::atomic<int> renders{0};
  auto server = StartServer({.timeout = std::chrono::hours(1)}, [&] {
    renders.fetch_add(1);
    return big_page;
  });
  absl::StatusOr<TestConnection> silent = TestConnection::Open(server->port());
  absl::StatusOr<TestConnection> stuck = TestConnection::Open(server->port());
  ASSERT_TRUE(silent.ok());
  ASSERT_TRUE(stuck.ok());
  ASSERT_TRUE(stuck->Send("GET /metrics HTTP/1.1\r\n\r\n"));
  ASSERT_TRUE(WaitUntil([&] { return renders.load() > 0; }));
  // The hour-long timeout is not waited for: both are closed.
  server.reset();
  EXPECT_TRUE(silent->WaitClosed());
  EXPECT_TRUE(stuck->WaitClosed());
}

}  // namespace
}  // namespace sluice
