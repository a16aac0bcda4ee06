// The Prometheus exporter of a running pipeline (DataLoaderConfig
// metrics_port): engine/metrics_exporter.h through engine/pipeline.h.
#include "engine/metrics_exporter.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/testing/http_test_client.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using testing::FreePort;
using ::testing::HasSubstr;
using testing::HttpGet;
using testing::ParseConfig;
using testing::ResponseBody;
using ::testing::StartsWith;
using testing::TestConnection;
using testing::WaitUntil;

// An endless source and a pass-through, snapshots every 50 ms.
constexpr char kConfig[] = R"pb(
  metrics_interval_seconds: 0.05
  worker_threads: 2
  stage {
    name: "source"
    counting_source {}
  }
  stage {
    name: "pass"
    input: "source"
    pass_through {}
  }
)pb";

DataLoaderConfig ConfigOnPort(uint32_t port) {
  DataLoaderConfig config = ParseConfig(kConfig);
  config.set_metrics_port(port);
  return config;
}

// The value of the sample `series` ("name{labels}") on `page`; -1 if absent.
double SampleValue(std::string_view page, std::string_view series) {
  std::string prefix = "\n";
  prefix.append(series).append(" ");
  const size_t at = page.find(prefix);
  if (at == std::string_view::npos) return -1;
  const size_t start = at + prefix.size();
  double value = -1;
  const std::string text(page.substr(start, page.find('\n', start) - start));
  if (!absl::SimpleAtod(text, &value)) {
    return -1;
  }
  return value;
}

TEST(MetricsExporterTest, ServesTheRunningPipelinesMetrics) {
  Pipeline pipeline(CreateStage);
  const uint16_t port = FreePort();
  ASSERT_TRUE(pipeline.Configure(ConfigOnPort(port)).ok());
  ASSERT_TRUE(pipeline.Start().ok());
  EXPECT_EQ(pipeline.metrics_port(), port);
  constexpr char kBatches[] = "sluice_batches_total{output=\"pass.output\"}";
  double first = -1;
  std::string page;
  // While the caller pulls items, the counters move from scrape to scrape.
  EXPECT_TRUE(WaitUntil([&] {
    for (int i = 0; i < 10; ++i) {
      pipeline.TakeAndDiscard(std::chrono::milliseconds(10));
    }
    absl::StatusOr<std::string> response = HttpGet(port, "/metrics");
    if (!response.ok()) return false;
    page = std::string(ResponseBody(*response));
    const double batches = SampleValue(page, kBatches);
    if (first <= 0) first = batches;
    return first > 0 && batches > first;
  })) << page;
  for (const char* line :
       {"sluice_stage_info{stage=\"pass\",type=\"pass_through\"} 1\n",
        "# TYPE sluice_stage_items_in_total counter\n",
        "# TYPE sluice_pass_through_items_forwarded_total counter\n",
        "sluice_channel_capacity{stage=\"source\",output=\"output\"} 16\n",
        "sluice_pipeline_failed 0\n", "# TYPE process_cpu_seconds_total"}) {
    EXPECT_THAT(page, HasSubstr(line));
  }
  EXPECT_GT(SampleValue(page, "sluice_stage_items_in_total{stage=\"pass\"}"),
            0);
  EXPECT_GT(SampleValue(page, "process_resident_memory_bytes"), 0);
  pipeline.Stop();
  // Nothing listens once the pipeline stopped.
  EXPECT_FALSE(HttpGet(port, "/metrics").ok());
}

TEST(MetricsExporterTest, ConfigErrorsNameTheField) {
  Pipeline out_of_range(CreateStage);
  const absl::Status port = out_of_range.Configure(ConfigOnPort(70000));
  EXPECT_EQ(port.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(port.message(), HasSubstr("'metrics_port' (70000)"));

  Pipeline bad_address(CreateStage);
  DataLoaderConfig config = ConfigOnPort(FreePort());
  config.set_metrics_address("localhost");
  ASSERT_TRUE(bad_address.Configure(config).ok());
  const absl::Status address = bad_address.Start();
  EXPECT_EQ(address.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(address.message(), HasSubstr("'metrics_address' (localhost)"));
}

TEST(MetricsExporterTest, APortInUseFailsStartNamingTheField) {
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> taken =
      MetricsHttpServer::Start({}, [] { return std::string(); });
  ASSERT_TRUE(taken.ok());
  Pipeline pipeline(CreateStage);
  ASSERT_TRUE(pipeline.Configure(ConfigOnPort((*taken)->port())).ok());
  const absl::Status started = pipeline.Start();
  EXPECT_EQ(started.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(started.message(), HasSubstr("field 'metrics_port'"));
  EXPECT_THAT(started.message(), HasSubstr("in use"));
}

// Takes CAP_NET_BIND_SERVICE away from this process (root keeps its
// other privileges); true on success.
bool DropBindCapability() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  const uint32_t bit = 1u << (CAP_NET_BIND_SERVICE % 32);
  __user_cap_data_struct& word = data[CAP_NET_BIND_SERVICE / 32];
  word.effective &= ~bit;
  word.permitted &= ~bit;
  word.inheritable &= ~bit;
  return syscall(SYS_capset, &header, data) == 0;
}

TEST(MetricsExporterTest, APrivilegedPortFailsStartNamingTheField) {
  std::ifstream sysctl("/proc/sys/net/ipv4/ip_unprivileged_port_start");
  int first_unprivileged = 1024;
  sysctl >> first_unprivileged;
  if (first_unprivileged <= 1) {
    GTEST_SKIP() << "every port is unprivileged on this system "
                    "(net.ipv4.ip_unprivileged_port_start)";
  }
  // In a child process, which gives up the privilege first.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    std::string message = "could not drop CAP_NET_BIND_SERVICE";
    if (DropBindCapability()) {
      Pipeline pipeline(CreateStage);
      absl::Status started = pipeline.Configure(ConfigOnPort(1));
      if (started.ok()) started = pipeline.Start();
      message = absl::StrCat(absl::StatusCodeToString(started.code()), ": ",
                             started.message());
    }
    const ssize_t written = write(fds[1], message.data(), message.size());
    _exit(written == static_cast<ssize_t>(message.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string message;
  char chunk[1024];
  ssize_t got;
  while ((got = read(fds[0], chunk, sizeof(chunk))) > 0) {
    message.append(chunk, static_cast<size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_THAT(message, StartsWith("PERMISSION_DENIED: "));
  EXPECT_THAT(message, HasSubstr("field 'metrics_port' (1)"));
  EXPECT_THAT(message, HasSubstr("use a port of 1024 or more"));
}

TEST(MetricsExporterTest, ScrapesDuringShutdownGetAPageOrAClosedConnection) {
  Pipeline pipeline(CreateStage);
  const uint16_t port = FreePort();
  ASSERT_TRUE(pipeline.Configure(ConfigOnPort(port)).ok());
  ASSERT_TRUE(pipeline.Start().ok());
  std::atomic<bool> done{false};
  std::atomic<int> pages{0};
  std::vector<std::string> bad;
  std::thread scraper([&] {
    while (!done.load()) {
      absl::StatusOr<std::string> response = HttpGet(port, "/metrics");
      if (!response.ok() || response->empty()) continue;  // refused, reset
      if (response->rfind("HTTP/1.1 200 OK\r\n", 0) == 0) {
        ++pages;
      } else {
        bad.push_back(response->substr(0, 100));
      }
    }
  });
  EXPECT_TRUE(WaitUntil([&] { return pages.load() >= 3; }));
  pipeline.Stop();
  done = true;
  scraper.join();
  EXPECT_THAT(bad, ::testing::IsEmpty());
}

TEST(MetricsExporterTest, StopsPromptlyWithClientsConnected) {
  Pipeline pipeline(CreateStage);
  const uint16_t port = FreePort();
  ASSERT_TRUE(pipeline.Configure(ConfigOnPort(port)).ok());
  ASSERT_TRUE(pipeline.Start().ok());
  // One connected and silent, one that asked and never reads or closes.
  absl::StatusOr<TestConnection> silent = TestConnection::Open(port);
  absl::StatusOr<TestConnection> idle = TestConnection::Open(port);
  ASSERT_TRUE(silent.ok());
  ASSERT_TRUE(idle.ok());
  ASSERT_TRUE(idle->Send("GET /metrics HTTP/1.1\r\n\r\n"));
  const auto start = std::chrono::steady_clock::now();
  pipeline.Stop();
  // Well before either client's 10 s timeout would have closed it.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(9));
  EXPECT_TRUE(silent->WaitClosed());
  EXPECT_TRUE(idle->WaitClosed());
}

}  // namespace
}  // namespace sluice
