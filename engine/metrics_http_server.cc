#include "engine/metrics_http_server.h"

#include <pthread.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <exception>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asio/co_spawn.hpp"
#include "asio/experimental/as_tuple.hpp"
#include "asio/post.hpp"
#include "asio/use_awaitable.hpp"
#include "asio/write.hpp"
#include "engine/log.h"
#include "engine/prometheus_text.h"

namespace sluice {
namespace {

// The largest request header read; a longer one is answered 431.
constexpr size_t kMaxRequestBytes = 8192;

// Completion token: error codes as values, not exceptions.
auto AsTuple() { return asio::experimental::as_tuple(asio::use_awaitable); }

// True once `request` holds a whole header (a blank line; bare line feeds
// are accepted as the RFC allows).
bool HeaderComplete(std::string_view request) {
  return request.find("\r\n\r\n") != std::string_view::npos ||
         request.find("\n\n") != std::string_view::npos;
}

// Debian's abseil has a string_view of its own: the texts below are put
// together with std::string.
std::string Response(std::string_view status, std::string_view content_type,
                     std::string_view body, bool with_body,
                     std::string_view extra_headers = "") {
  std::string response = "HTTP/1.1 ";
  response.append(status);
  response.append("\r\nContent-Type: ");
  response.append(content_type);
  response.append("\r\nContent-Length: ");
  response.append(std::to_string(body.size()));
  response.append("\r\n");
  response.append(extra_headers);
  response.append("Connection: close\r\n\r\n");
  if (with_body) response.append(body);
  return response;
}

std::string TextResponse(std::string_view status, std::string_view message,
                         bool with_body, std::string_view extra_headers = "") {
  const std::string body = "sluice metrics: " + std::string(message) + "\n";
  return Response(status, "text/plain; charset=utf-8", body, with_body,
                  extra_headers);
}

// The words of `line`, between runs of spaces.
std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  while (true) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) return words;
    line.remove_prefix(start);
    const size_t end = std::min(line.find(' '), line.size());
    words.push_back(line.substr(0, end));
    line.remove_prefix(end);
  }
}

// The status of a failed bind of `endpoint`.
absl::Status BindError(const asio::error_code& error,
                       const asio::ip::tcp::endpoint& endpoint) {
  const std::string where =
      absl::StrCat("cannot listen on ", endpoint.address().to_string(), ":",
                   endpoint.port(), ": ");
  if (error == asio::error::access_denied) {
    return absl::PermissionDeniedError(
        absl::StrCat(where,
                     "permission denied (ports below 1024 need root or "
                     "CAP_NET_BIND_SERVICE); use a port of 1024 or more"));
  }
  if (error == asio::error::address_in_use) {
    return absl::UnavailableError(
        absl::StrCat(where,
                     "the port is in use (another loader or process listens "
                     "there); choose another port"));
  }
  // asio's system category does not map to std::errc: compare errno.
  if (error.value() == EADDRNOTAVAIL) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "the address is not one of this machine's"));
  }
  return absl::UnavailableError(absl::StrCat(where, error.message()));
}

}  // namespace

struct MetricsHttpServer::Connection {
  explicit Connection(asio::ip::tcp::socket accepted)
      : socket(std::move(accepted)), deadline(socket.get_executor()) {}
  asio::ip::tcp::socket socket;
  // Closes the socket when the client takes too long.
  asio::steady_timer deadline;
};

MetricsHttpServer::MetricsHttpServer(Options options, Render render)
    : options_(std::move(options)),
      render_(std::move(render)),
      acceptor_(io_),
      retry_timer_(io_) {}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    Options options, Render render) {
  asio::error_code error;
  const asio::ip::address address =
      asio::ip::make_address(options.address, error);
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", options.address,
                     "' is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1)"));
  }
  std::unique_ptr<MetricsHttpServer> server(
      new MetricsHttpServer(std::move(options), std::move(render)));
  const asio::ip::tcp::endpoint endpoint(address, server->options_.port);
  asio::ip::tcp::acceptor& acceptor = server->acceptor_;
  acceptor.open(endpoint.protocol(), error);
  // Lets a restarted loader listen again while old connections linger in
  // TIME_WAIT; a port another socket listens on still fails.
  if (!error)
    acceptor.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor.bind(endpoint, error);
  if (!error) acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error) return BindError(error, endpoint);
  server->port_ = acceptor.local_endpoint(error).port();
  MetricsHttpServer* self = server.get();
  asio::co_spawn(server->io_, self->Accept(), [](std::exception_ptr failure) {
    if (failure) LogError("metrics server: the accept loop failed");
  });
  server->thread_ = std::thread([self] {
    pthread_setname_np(pthread_self(), "sluice-metrics");
    self->io_.run();
  });
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  asio::post(io_, [this] { CloseAll(); });
  // Every coroutine ends once its socket or timer is closed; run() then
  // runs out of work and the thread ends.
  if (thread_.joinable()) thread_.join();
}

void MetricsHttpServer::CloseAll() {
  asio::error_code ignored;
  acceptor_.close(ignored);
  retry_timer_.cancel();
  for (const std::shared_ptr<Connection>& connection : connections_) {
    connection->deadline.cancel();
    connection->socket.close(ignored);
  }
}

asio::awaitable<void> MetricsHttpServer::Accept() {
  while (acceptor_.is_open()) {
    auto [error, socket] = co_await acceptor_.async_accept(AsTuple());
    if (!acceptor_.is_open()) co_return;
    if (error) {
      // Out of file descriptors, or a client gone before accept: wait a
      // little instead of spinning on the same failure.
      static RateLimiter limiter(absl::Seconds(60));
      if (limiter.Allow()) {
        LogWarning("metrics server: accept failed: ", error.message());
      }
      retry_timer_.expires_after(std::chrono::milliseconds(100));
      co_await retry_timer_.async_wait(AsTuple());
      continue;
    }
    if (connections_.size() >= options_.max_connections) {
      asio::error_code ignored;
      socket.close(ignored);
      continue;
    }
    auto connection = std::make_shared<Connection>(std::move(socket));
    connections_.insert(connection);
    asio::co_spawn(io_, Serve(connection),
                   [this, connection](std::exception_ptr) {
                     connections_.erase(connection);
                   });
  }
}

asio::awaitable<void> MetricsHttpServer::Serve(
    std::shared_ptr<Connection> connection) {
  asio::ip::tcp::socket& socket = connection->socket;
  const std::weak_ptr<Connection> watched = connection;
  auto expire = [watched](const asio::error_code& error) {
    if (error) return;  // cancelled: the connection went on or closed
    if (auto expired = watched.lock()) {
      asio::error_code ignored;
      expired->socket.close(ignored);
    }
  };
  connection->deadline.expires_after(options_.timeout);
  connection->deadline.async_wait(expire);

  std::string request;
  std::array<char, 2048> chunk;
  std::string response;
  while (response.empty() && !HeaderComplete(request)) {
    if (request.size() > kMaxRequestBytes) {
      response = TextResponse("431 Request Header Fields Too Large",
                              "the request header is over 8 KiB", true);
      break;
    }
    auto [error, got] = co_await socket.async_read_some(
        asio::buffer(chunk.data(), chunk.size()), AsTuple());
    if (error) co_return;  // gone, reset, or closed by the deadline
    request.append(chunk.data(), got);
  }
  if (response.empty()) response = Respond(request);

  connection->deadline.cancel();
  connection->deadline.expires_after(options_.timeout);
  connection->deadline.async_wait(expire);
  auto [error, written] =
      co_await asio::async_write(socket, asio::buffer(response), AsTuple());
  if (!error) {
    // Let the client read the whole response before the connection
    // closes: send FIN, then wait for the client's (or the deadline).
    asio::error_code ignored;
    socket.shutdown(asio::socket_base::shutdown_send, ignored);
    while (true) {
      auto [read_error, got] = co_await socket.async_read_some(
          asio::buffer(chunk.data(), chunk.size()), AsTuple());
      if (read_error) break;
    }
  }
  connection->deadline.cancel();
  asio::error_code ignored;
  socket.close(ignored);
}

std::string MetricsHttpServer::Respond(std::string_view request) {
  std::string_view line = request.substr(0, request.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const std::vector<std::string_view> parts = Words(line);
  if (parts.size() != 3 || !parts[2].starts_with("HTTP/1.")) {
    return TextResponse("400 Bad Request",
                        "malformed request line; expected e.g. "
                        "'GET /metrics HTTP/1.1'",
                        true);
  }
  const std::string_view method = parts[0];
  const bool head = method == "HEAD";
  if (method != "GET" && !head) {
    return TextResponse(
        "405 Method Not Allowed",
        "method " + std::string(method) + " not allowed; use GET", true,
        "Allow: GET, HEAD\r\n");
  }
  const std::string_view target = parts[1];
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/metrics") {
    std::string page;
    try {
      page = render_();
    } catch (const std::exception& e) {
      return TextResponse("500 Internal Server Error",
                          std::string("rendering failed: ") + e.what(), !head);
    }
    return Response("200 OK", PrometheusText::kContentType, page, !head);
  }
  if (path == "/") {
    return TextResponse("200 OK", "the loader's metrics are at /metrics",
                        !head);
  }
  return TextResponse(
      "404 Not Found",
      "no page " + std::string(path) + "; the metrics are at /metrics", !head);
}

}  // namespace sluice
