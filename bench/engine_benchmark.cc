// Engine benchmark: channel hand-off throughput and latency, items/s
// through a 4-stage pipeline of generic stages, and the time Stop() takes
// under full load, on 1 and 2 worker threads.
//
//   build/bench/engine_benchmark [--items N]
//
// Prints a table and one JSON line (prefixed "JSON ").
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "asio/co_spawn.hpp"
#include "asio/detached.hpp"
#include "engine/channel.h"
#include "engine/data_loader.h"
#include "engine/executor.h"
#include "engine/task_group.h"
#include "stages/stage_factory.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

asio::awaitable<void> Produce(Channel<uint64_t>& channel, uint64_t items) {
  for (uint64_t i = 0; i < items; ++i) co_await channel.Send(i);
  channel.Close();
}

asio::awaitable<void> Consume(Channel<uint64_t>& channel, uint64_t& sum) {
  while (auto item = co_await channel.Receive()) sum += *item;
}

// Items/s from one producer coroutine to one consumer coroutine.
double HandOffThroughput(unsigned threads, uint64_t items) {
  Executor executor({.threads = threads, .use_io_uring = false});
  TaskGroup tasks(executor.get(),
                  [](const std::string&, std::exception_ptr) { std::abort(); });
  Channel<uint64_t> channel("bench", 1024);
  uint64_t sum = 0;
  const auto start = Clock::now();
  tasks.Spawn("producer", Produce(channel, items));
  tasks.Spawn("consumer", Consume(channel, sum));
  executor.Start();
  tasks.WaitIdle(std::chrono::hours(1));
  const double seconds = Seconds(Clock::now() - start);
  if (sum != items * (items - 1) / 2) std::abort();
  return items / seconds;
}

asio::awaitable<void> Ping(Channel<int64_t>& to, Channel<int64_t>& from,
                           int rounds, std::vector<double>& one_way_ns) {
  for (int i = 0; i < rounds; ++i) {
    const auto sent = Clock::now();
    co_await to.Send(i);
    co_await from.Receive();
    one_way_ns.push_back(
        std::chrono::duration<double, std::nano>(Clock::now() - sent).count() /
        2);
  }
  to.Close();
}

asio::awaitable<void> Pong(Channel<int64_t>& from, Channel<int64_t>& to) {
  while (auto item = co_await from.Receive()) co_await to.Send(*item);
}

// One-way hand-off latency (half a ping-pong round trip), p50 and p99.
std::pair<double, double> HandOffLatency(unsigned threads, int rounds) {
  Executor executor({.threads = threads, .use_io_uring = false});
  TaskGroup tasks(executor.get(),
                  [](const std::string&, std::exception_ptr) { std::abort(); });
  Channel<int64_t> ping("ping", 1);
  Channel<int64_t> pong("pong", 1);
  std::vector<double> one_way_ns;
  one_way_ns.reserve(rounds);
  tasks.Spawn("ping", Ping(ping, pong, rounds, one_way_ns));
  tasks.Spawn("pong", Pong(ping, pong));
  executor.Start();
  tasks.WaitIdle(std::chrono::hours(1));
  std::sort(one_way_ns.begin(), one_way_ns.end());
  return {one_way_ns[one_way_ns.size() / 2],
          one_way_ns[one_way_ns.size() * 99 / 100]};
}

// Items/s pulled through source -> pass -> pass -> pass by GetNext.
double PipelineThroughput(unsigned threads, uint64_t items) {
  DataLoaderConfig config;
  config.set_worker_threads(threads);
  StageConfig* source = config.add_stage();
  source->set_name("source");
  source->mutable_counting_source()->set_count(items);
  std::string previous = "source";
  for (int i = 1; i <= 3; ++i) {
    StageConfig* pass = config.add_stage();
    pass->set_name("pass" + std::to_string(i));
    pass->add_input(previous);
    pass->mutable_pass_through();
    previous = pass->name();
  }
  for (StageConfig& stage : *config.mutable_stage()) {
    stage.add_output()->set_capacity(1024);
  }
  DataLoader loader(CreateStage);
  loader.Configure(config);
  const auto start = Clock::now();
  loader.Start();
  uint64_t received = 0;
  while (loader.GetNext<uint64_t>()) ++received;
  const double seconds = Seconds(Clock::now() - start);
  if (received != items) std::abort();
  return items / seconds;
}

// Milliseconds Stop() takes on an endless 4-stage pipeline under full load
// (every stage busy, every channel full), after `warm_ms` of running.
double StopLatencyMs(unsigned threads, int warm_ms) {
  DataLoaderConfig config;
  config.set_worker_threads(threads);
  StageConfig* source = config.add_stage();
  source->set_name("source");
  source->mutable_counting_source();
  std::string previous = "source";
  for (int i = 1; i <= 3; ++i) {
    StageConfig* pass = config.add_stage();
    pass->set_name("busy" + std::to_string(i));
    pass->add_input(previous);
    pass->mutable_pass_through()->set_parallelism(2);
    pass->mutable_pass_through()->set_work_nanos_per_item(20000);
    previous = pass->name();
  }
  DataLoader loader(CreateStage);
  loader.Configure(config);
  loader.Start();
  const auto until = Clock::now() + std::chrono::milliseconds(warm_ms);
  while (Clock::now() < until) loader.GetNext<uint64_t>();
  const auto start = Clock::now();
  loader.Stop();
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

int Main(int argc, char** argv) {
  uint64_t items = 5'000'000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--items") == 0 && i + 1 < argc) {
      items = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: engine_benchmark [--items N]\n");
      return 2;
    }
  }
  std::string json = "{";
  std::printf("%-8s %18s %18s %14s %14s %10s\n", "threads", "handoff items/s",
              "pipeline items/s", "latency p50", "latency p99", "stop");
  for (unsigned threads : {1u, 2u}) {
    const double handoff = HandOffThroughput(threads, items);
    const double pipeline = PipelineThroughput(threads, items);
    const auto [p50, p99] = HandOffLatency(threads, 200'000);
    const double stop_ms = StopLatencyMs(threads, 500);
    std::printf("%-8u %18.0f %18.0f %11.0f ns %11.0f ns %7.1f ms\n", threads,
                handoff, pipeline, p50, p99, stop_ms);
    char entry[256];
    std::snprintf(entry, sizeof(entry),
                  "%s\"threads_%u\":{\"handoff_items_per_s\":%.0f,"
                  "\"pipeline4_items_per_s\":%.0f,\"latency_p50_ns\":%.0f,"
                  "\"latency_p99_ns\":%.0f,\"stop_ms\":%.1f}",
                  threads == 1 ? "" : ",", threads, handoff, pipeline, p50, p99,
                  stop_ms);
    json += entry;
  }
  json += "}";
  std::printf("JSON %s\n", json.c_str());
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Main(argc, argv); }
