#include "engine/prometheus_metrics.h"

#include <set>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A two-stage pipeline's snapshot: an interval and the totals since start.
constexpr char kSnapshot[] = R"pb(
  io_backend: "io_uring"
  reads_from_page_cache: 10
  reads_through_backend: 2
  bytes_from_page_cache: 1000
  bytes_through_backend: 200
  stage_metrics {
    name: "source"
    type: "counting_source"
    load { busy_seconds: 0.5 capacity_seconds: 1 load: 0.5 workers: 1 }
    output_queue_metrics {
      name: "output"
      size: 3
      capacity: 16
      put_count: 10
      get_count: 7
    }
  }
  stage_metrics {
    name: "batcher"
    type: "batcher"
    load { busy_seconds: 0.5 capacity_seconds: 2 load: 0.25 workers: 2 }
    reorder { window: 8 parked: 2 waits: 1 }
    batcher { batches: 2 examples: 64 batch_buffer_bytes: 4096 }
    output_queue_metrics { name: "output" size: 1 capacity: 4 put_count: 2 }
  }
  stage_metrics {
    name: "pool"
    type: "shuffling_chunk_pool"
    shuffling_chunk_pool {
      chunks_emitted: 1
      indexing_load { busy_seconds: 0.1 capacity_seconds: 1 load: 0.1 }
    }
  }
  total_stage_metrics {
    name: "source"
    type: "counting_source"
    load { busy_seconds: 5 capacity_seconds: 10 load: 0.5 workers: 1 }
    output_queue_metrics {
      name: "output"
      size: 0
      capacity: 16
      put_count: 100
      get_count: 70
    }
  }
  total_stage_metrics {
    name: "batcher"
    type: "batcher"
    load { busy_seconds: 4 capacity_seconds: 20 load: 0.2 workers: 2 }
    skipped { reason: "wrong_dtype" count: 3 }
    reorder { window: 8 parked: 0 waits: 9 }
    batcher { batches: 20 examples: 640 batch_buffer_bytes: 1 }
    output_queue_metrics {
      name: "output"
      size: 0
      capacity: 4
      put_count: 20
      get_count: 19
    }
  }
  total_stage_metrics {
    name: "pool"
    type: "shuffling_chunk_pool"
    shuffling_chunk_pool {
      chunks_emitted: 5
      indexing_load { busy_seconds: 1.5 capacity_seconds: 3 load: 0.5 }
    }
  }
)pb";

DataLoaderMetricsProto Snapshot() {
  DataLoaderMetricsProto metrics;
  EXPECT_TRUE(
      google::protobuf::TextFormat::ParseFromString(kSnapshot, &metrics));
  return metrics;
}

PipelineWiring Wiring() {
  PipelineWiring wiring;
  wiring.inputs.push_back({"batcher", {"source", "output"}});
  wiring.outputs.push_back({"batches", {"batcher", "output"}});
  return wiring;
}

std::string Render(const DataLoaderMetricsProto& metrics) {
  ProcessStats process;
  process.rss_bytes = 123 << 20;
  process.cpu_seconds = 1.5;
  return RenderPrometheusMetrics(metrics, Wiring(), process);
}

// Checks the page's structure: every sample belongs to the family whose
// HELP and TYPE lines came last, and no family appears twice.
void ExpectWellFormed(const std::string& page) {
  std::istringstream lines(page);
  std::string line;
  std::string family;
  std::set<std::string> seen;
  while (std::getline(lines, line)) {
    ASSERT_FALSE(line.empty());
    if (line.rfind("# HELP ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(seen.insert(family).second) << "family twice: " << family;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_EQ(line.substr(7, family.size() + 1), family + " ") << line;
      continue;
    }
    const std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_EQ(name, family) << line;
  }
}

TEST(PrometheusMetricsTest, StagesChannelsAndTheLoader) {
  const std::string page = Render(Snapshot());
  ExpectWellFormed(page);
  for (
      const char* line : {
          "sluice_stage_info{stage=\"source\",type=\"counting_source\"} 1\n",
          // Gauges from the last interval, counters since start.
          "sluice_stage_load{stage=\"batcher\"} 0.25\n",
          "sluice_stage_workers{stage=\"batcher\"} 2\n",
          "sluice_stage_busy_seconds_total{stage=\"source\"} 5\n",
          "sluice_stage_capacity_seconds_total{stage=\"batcher\"} 20\n",
          // In: what the stage took from the channels it reads.
          "sluice_stage_items_in_total{stage=\"batcher\"} 70\n",
          "sluice_stage_items_out_total{stage=\"source\"} 100\n",
          "sluice_stage_skipped_total{stage=\"batcher\",reason=\"wrong_dtype\"}"
          " 3\n",
          "sluice_channel_items{stage=\"source\",output=\"output\"} 3\n",
          "sluice_channel_capacity{stage=\"source\",output=\"output\"} 16\n",
          "sluice_channel_sent_total{stage=\"batcher\",output=\"output\"} 20\n",
          "sluice_channel_received_total{stage=\"source\",output=\"output\"}"
          " 70\n",
          "sluice_channel_closed{stage=\"source\",output=\"output\"} 0\n",
          "sluice_batches_total{output=\"batches\"} 19\n",
          "sluice_examples_total 640\n",
          "sluice_io_reads_total{backend=\"page_cache\"} 10\n",
          "sluice_io_reads_total{backend=\"io_uring\"} 2\n",
          "sluice_io_read_bytes_total{backend=\"page_cache\"} 1000\n",
          "sluice_io_read_bytes_total{backend=\"io_uring\"} 200\n",
          "sluice_pipeline_failed 0\n",
          "# TYPE process_resident_memory_bytes gauge\n"
          "process_resident_memory_bytes 128974848\n",
          "process_cpu_seconds_total 1.5\n",
      }) {
    EXPECT_THAT(page, HasSubstr(line));
  }
  // A source reads no channel.
  EXPECT_THAT(page, Not(HasSubstr("sluice_stage_items_in_total{stage=\"source"
                                  "\"}")));
}

TEST(PrometheusMetricsTest, StageSpecificFieldsByReflection) {
  const std::string page = Render(Snapshot());
  for (const char* line : {
           "# TYPE sluice_batcher_batches_total counter\n",
           "sluice_batcher_batches_total{stage=\"batcher\"} 20\n",
           "# TYPE sluice_batcher_batch_buffer_bytes gauge\n",
           "sluice_batcher_batch_buffer_bytes{stage=\"batcher\"} 4096\n",
           "sluice_reorder_parked{stage=\"batcher\"} 2\n",
           "sluice_reorder_waits_total{stage=\"batcher\"} 9\n",
           "sluice_shuffling_chunk_pool_chunks_emitted_total{stage=\"pool\"} "
           "5\n",
           "sluice_shuffling_chunk_pool_indexing_load_busy_seconds_total{stage="
           "\"pool\"} 1.5\n",
           "sluice_shuffling_chunk_pool_indexing_load_load{stage=\"pool\"} "
           "0.1\n",
       }) {
    EXPECT_THAT(page, HasSubstr(line));
  }
  EXPECT_THAT(page, HasSubstr("# HELP sluice_batcher_batches_total "
                              "sluice.BatcherMetricsProto.batches of each "
                              "batcher stage, since start"));
}

TEST(PrometheusMetricsTest, AFailedPipelineSaysSo) {
  DataLoaderMetricsProto metrics = Snapshot();
  metrics.set_error("stage 'batcher' failed: boom");
  EXPECT_THAT(Render(metrics), HasSubstr("sluice_pipeline_failed 1\n"));
}

TEST(PrometheusMetricsTest, BeforeTheFirstSnapshotOnlyTheProcess) {
  const std::string page = Render(DataLoaderMetricsProto());
  ExpectWellFormed(page);
  EXPECT_THAT(page, HasSubstr("sluice_pipeline_failed 0\n"));
  EXPECT_THAT(page, HasSubstr("process_resident_memory_bytes"));
  EXPECT_THAT(page, Not(HasSubstr("sluice_stage")));
  EXPECT_THAT(page, Not(HasSubstr("sluice_examples_total")));
  EXPECT_THAT(page, Not(HasSubstr("sluice_io_")));
}

}  // namespace
}  // namespace sluice
