// MetricsHttpServer: serves one page (a Prometheus scrape target) over
// HTTP/1.1 on a thread and asio io_context of its own, so nothing a client
// does reaches the loader's executor.
//
//   auto server = MetricsHttpServer::Start({.port = 9400},
//                                          [] { return RenderPage(); });
//   if (!server.ok()) return server.status();  // port taken, not allowed
//   ...
//   server->reset();  // closes every connection and joins the thread
//
// Promises:
// - GET or HEAD /metrics answers 200 with the page `render` returns
//   (called on the server's thread, once per request), as
//   PrometheusText::kContentType; / answers a short pointer to /metrics;
//   any other path 404, any other method 405, a request line that is not
//   HTTP/1.x 400, a request header over 8 KiB 431: each with a one-line
//   text body saying why. Every response closes its connection.
// - A client has `timeout` to send its request and `timeout` to take the
//   response; then its connection is closed. At most `max_connections`
//   are served at once; more are closed at accept.
// - Destruction is prompt (no wait for any client): the listener and every
//   connection close, the thread joins.
#ifndef SLUICE_ENGINE_METRICS_HTTP_SERVER_H_
#define SLUICE_ENGINE_METRICS_HTTP_SERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "asio/awaitable.hpp"
#include "asio/io_context.hpp"
#include "asio/ip/tcp.hpp"
#include "asio/steady_timer.hpp"

namespace sluice {

class MetricsHttpServer {
 public:
  struct Options {
    // An IPv4 or IPv6 address of this machine ("0.0.0.0", "::": all).
    std::string address = "127.0.0.1";
    // 0: a free port the system picks (port() tells which).
    uint16_t port = 0;
    size_t max_connections = 16;
    std::chrono::milliseconds timeout = std::chrono::seconds(10);
  };
  // The page of GET /metrics.
  using Render = std::function<std::string()>;

  // Listens and starts serving. InvalidArgument when the address is not an
  // IP address of this machine, PermissionDenied when the port needs
  // privileges the process lacks, Unavailable when it is in use; each
  // message names address and port and says what to do.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      Options options, Render render);

  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // The port it listens on.
  uint16_t port() const { return port_; }

 private:
  struct Connection;

  MetricsHttpServer(Options options, Render render);
  asio::awaitable<void> Accept();
  asio::awaitable<void> Serve(std::shared_ptr<Connection> connection);
  // The whole response to `request` (its header, up to the blank line).
  std::string Respond(std::string_view request);
  // Closes the listener and every connection (on the server's thread).
  void CloseAll();

  const Options options_;
  const Render render_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  // Waits out a failing accept (no file descriptors left) before retrying.
  asio::steady_timer retry_timer_;
  std::set<std::shared_ptr<Connection>> connections_;
  uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_METRICS_HTTP_SERVER_H_
