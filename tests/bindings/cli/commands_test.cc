// The `sluice` subcommands run in-process: argument errors, demo, run,
// bench io and bench pipeline on a tiny generated data set.
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bindings/cli/bench_command.h"
#include "bindings/cli/demo_command.h"
#include "bindings/cli/fio_comparison.h"
#include "bindings/cli/pipeline_runner.h"
#include "bindings/cli/run_command.h"
#include "engine/config_text.h"
#include "engine/data_loader.h"
#include "engine/metrics_http_server.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "stages/lc0/default_pipeline.h"
#include "stages/lc0/format/data_generator.h"
#include "tests/bindings/cli/invoke_command.h"
#include "tests/testing/http_test_client.h"
#include "tests/testing/trace_check.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// A tiny data set shared by the tests: 40 games in 4 tars.
class CommandsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One directory per process: ctest runs each test in its own process,
    // several at once.
    data_ = new std::string(
        (fs::path(::testing::TempDir()) /
         ("sluice_commands_test_data_" + std::to_string(getpid())))
            .string());
    fs::remove_all(*data_);
    auto files = lc0::WriteGames({.seed = 5}, {.mode = lc0::OutputMode::kTar,
                                               .dir = *data_,
                                               .games = 40,
                                               .games_per_tar = 10});
    ASSERT_TRUE(files.ok()) << files.status();
    positions_ = files->positions;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*data_);
    delete data_;
  }
  static std::string* data_;
  static uint64_t positions_;
};
std::string* CommandsTest::data_ = nullptr;
uint64_t CommandsTest::positions_ = 0;

google::protobuf::Struct ParseJson(const std::string& text) {
  google::protobuf::Struct parsed;
  const auto status =
      google::protobuf::util::JsonStringToMessage(text, &parsed);
  EXPECT_TRUE(status.ok()) << status << "\n" << text;
  return parsed;
}

TEST_F(CommandsTest, ArgumentErrorsAreOneLineAndExitTwo) {
  const std::vector<std::pair<Result, std::string>> cases = {
      {Invoke(RunRunCommand, {}), "sluice run: expected exactly one"},
      {Invoke(RunRunCommand, {"a.textproto", "--bogus", "1"}),
       "sluice run: unknown flag --bogus"},
      {Invoke(RunRunCommand, {"/nonexistent.textproto"}),
       "sluice run: cannot read config"},
      {Invoke(RunDemoCommand, {"--seconds", "zero"}),
       "sluice demo: bad value 'zero' for --seconds"},
      {Invoke(RunDemoCommand, {"extra"}), "sluice demo: unexpected argument"},
      {Invoke(RunDemoCommand, {"--metrics-port", "70000"}),
       "sluice demo: bad value '70000' for --metrics-port"},
      {Invoke(RunRunCommand, {"a.textproto", "--metrics-port", "0"}),
       "sluice run: bad value '0' for --metrics-port"},
      {Invoke(RunBenchCommand, {"pipeline", "--metrics-port", "x"}),
       "sluice bench pipeline: bad value 'x' for --metrics-port"},
      {Invoke(RunBenchCommand, {}), "sluice bench: expected io or pipeline"},
      {Invoke(RunBenchCommand, {"disk"}), "sluice bench: unknown benchmark"},
      {Invoke(RunBenchCommand, {"io"}), "sluice bench io: expected PATH"},
      {Invoke(RunBenchCommand, {"io", "/nonexistent"}),
       "sluice bench io: no such file"},
      {Invoke(RunBenchCommand, {"io", "/tmp", "--json=yes"}),
       "sluice bench io: flag --json takes no value"},
      {Invoke(RunBenchCommand, {"pipeline", "--threads", "1,x"}),
       "sluice bench pipeline: bad value '1,x' for --threads"},
  };
  for (const auto& [result, message] : cases) {
    EXPECT_EQ(result.code, 2) << message;
    EXPECT_THAT(result.err, HasSubstr(message));
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << result.err;
  }
}

TEST_F(CommandsTest, EverySubcommandHasHelp) {
  for (const Result& result :
       {Invoke(RunRunCommand, {"--help"}), Invoke(RunDemoCommand, {"--help"}),
        Invoke(RunBenchCommand, {"--help"}),
        Invoke(RunBenchCommand, {"io", "-h"}),
        Invoke(RunBenchCommand, {"pipeline", "--help"})}) {
    EXPECT_EQ(result.code, 0);
    EXPECT_THAT(result.out, HasSubstr("usage: sluice"));
  }
}

TEST_F(CommandsTest, RunReportsABadConfigWithItsLine) {
  const fs::path config = fs::path(::testing::TempDir()) / "bad.textproto";
  std::ofstream(config) << "stage {\n  name: \"x\"\n  bogus_field: 1\n}\n";
  const Result result = Invoke(RunRunCommand, {config.string()});
  EXPECT_EQ(result.code, 2);
  EXPECT_THAT(result.err, HasSubstr("line 3"));
}

TEST_F(CommandsTest, ConfigFilesAboveTheSizeLimitAreRejected) {
  const fs::path config = fs::path(::testing::TempDir()) / "huge.textproto";
  {
    // A valid config (a comment) one byte too large.
    std::ofstream out(config);
    out << "#" << std::string(kMaxConfigTextBytes, ' ');
  }
  absl::StatusOr<DataLoaderConfig> loaded = ReadConfigFile(config.string());
  EXPECT_TRUE(absl::IsInvalidArgument(loaded.status())) << loaded.status();
  EXPECT_THAT(std::string(loaded.status().message()),
              HasSubstr("larger than the limit"));
  fs::resize_file(config, kMaxConfigTextBytes);
  EXPECT_TRUE(ReadConfigFile(config.string()).ok());
  fs::remove(config);
}

TEST_F(CommandsTest, GeneratedDataIsReadByTheEvalPipeline) {
  auto config = lc0::MakePipeline(
      {.directories = {*data_}, .mode = lc0::PipelineMode::kEval});
  ASSERT_TRUE(config.ok()) << config.status();
  std::ostringstream out;
  auto report = RunWithLiveView(*config, {}, out, /*interactive=*/false);
  ASSERT_TRUE(report.ok()) << report.status();
  uint64_t positions = 0;
  for (const auto& stage : report->final_metrics.total_stage_metrics()) {
    positions += stage.tensor_generator().positions();
  }
  EXPECT_EQ(positions, positions_);
  EXPECT_THAT(out.str(), HasSubstr("summary:"));
}

TEST_F(CommandsTest, RunExplainsAPipelineWithoutOutput) {
  auto config = lc0::MakePipeline(
      {.directories = {*data_}, .mode = lc0::PipelineMode::kEval});
  ASSERT_TRUE(config.ok()) << config.status();
  const std::string tensors = config->stage(config->stage_size() - 1).name();
  config->clear_output();
  StageConfig* writer = config->add_stage();
  writer->set_name("queue");
  writer->add_input(tensors);
  writer->mutable_batch_file_writer()->set_root(
      (fs::path(::testing::TempDir()) / "sink_queue").string());
  writer->mutable_batch_file_writer()->set_split("train");
  writer->mutable_batch_file_writer()->set_dataset_name("sink");
  writer->mutable_batch_file_writer()->set_batch_size(1024);
  std::ostringstream out;
  auto report = RunWithLiveView(*config, {}, out, /*interactive=*/false);
  EXPECT_TRUE(absl::IsInvalidArgument(report.status())) << report.status();
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("no output to pull batches from"));
}

TEST_F(CommandsTest, DemoRunsAndSummarisesWithoutEscapeCodes) {
  // Two batches, however slow the machine: the test pins what the demo
  // shows, not how fast it is.
  const Result result = Invoke(
      RunDemoCommand, {"--data", *data_, "--seconds", "600", "--batches", "2"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("summary:"));
  EXPECT_THAT(result.out, HasSubstr("bottleneck:"));
  EXPECT_THAT(result.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(result.out, Not(HasSubstr(" 0 positions/s on average")));
}

TEST_F(CommandsTest, RunServesPrometheusMetricsOnTheFlagsPort) {
  const fs::path config = fs::path(::testing::TempDir()) / "few.textproto";
  std::ofstream(config) << R"pb(
    stage {
      name: "source"
      counting_source { count: 1000 }
    }
  )pb";
  const std::string port = absl::StrCat(testing::FreePort());
  const Result served =
      Invoke(RunRunCommand, {config.string(), "--metrics-port", port});
  EXPECT_EQ(served.code, 0) << served.err;
  EXPECT_THAT(served.out, HasSubstr(absl::StrCat(
                              "Prometheus metrics: http://127.0.0.1:", port,
                              "/metrics\n")));
  // A port that is taken: the error names the flag.
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> taken =
      MetricsHttpServer::Start({}, [] { return std::string(); });
  ASSERT_TRUE(taken.ok());
  const std::string busy_port = absl::StrCat((*taken)->port());
  const Result busy =
      Invoke(RunRunCommand, {config.string(), "--metrics-port", busy_port});
  EXPECT_EQ(busy.code, 1);
  EXPECT_THAT(busy.err, HasSubstr(absl::StrCat(
                            "sluice run: --metrics-port (", busy_port,
                            "): cannot listen on 127.0.0.1:", busy_port)));
  EXPECT_THAT(busy.err, HasSubstr("in use"));
}

TEST_F(CommandsTest, RunWritesMetricsAsJsonLines) {
  const fs::path dir = fs::path(::testing::TempDir());
  const fs::path config = dir / "count.textproto";
  std::ofstream(config) << R"pb(
    metrics_interval_seconds: 0.05
    stage {
      name: "source"
      counting_source { count: 100000 }
    }
    stage {
      name: "pass"
      input: "source"
      pass_through {}
    }
  )pb";
  const fs::path json = dir / "metrics.jsonl";
  fs::remove(json);
  const Result result = Invoke(
      RunRunCommand,
      {config.string(), "--batches", "50000", "--metrics-json", json.string()});
  ASSERT_EQ(result.code, 0) << result.err;
  std::ifstream lines(json);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    const google::protobuf::Struct parsed = ParseJson(line);
    EXPECT_TRUE(parsed.fields().contains("stage_metrics"));
    ++count;
  }
  EXPECT_GE(count, 1);
}

TEST_F(CommandsTest, RunCheckpointsAndResumesAnEvalPass) {
  auto config = lc0::MakePipeline({.directories = {*data_},
                                   .mode = lc0::PipelineMode::kEval,
                                   .batch_size = 64,
                                   .deterministic = true});
  ASSERT_TRUE(config.ok()) << config.status();
  const fs::path checkpoint = fs::path(::testing::TempDir()) /
                              ("run_checkpoint_" + std::to_string(getpid()));
  std::ostringstream out;
  auto first = RunWithLiveView(*config,
                               {.max_batches = 4,
                                .checkpoint_path = checkpoint.string(),
                                .checkpoint_every = 3},
                               out, /*interactive=*/false);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(fs::exists(checkpoint));
  auto resumed =
      RunWithLiveView(*config, {.resume_paths = {checkpoint.string()}}, out,
                      /*interactive=*/false);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  uint64_t positions = 0;
  for (const auto& stage : resumed->final_metrics.total_stage_metrics()) {
    positions += stage.tensor_generator().positions();
  }
  // The checkpoint written when the first run ended follows its 4 batches.
  EXPECT_EQ(positions, positions_ - 4 * 64);
  fs::remove(checkpoint);
}

TEST_F(CommandsTest, RunResumesEveryRanksCheckpointsOnAnotherNumberOfRanks) {
  const auto config = [&](uint32_t rank, uint32_t world_size) {
    auto made = lc0::MakePipeline({.directories = {*data_},
                                   .mode = lc0::PipelineMode::kEval,
                                   .batch_size = 64,
                                   .rank = rank,
                                   .world_size = world_size,
                                   .deterministic = true});
    EXPECT_TRUE(made.ok()) << made.status();
    return *made;
  };
  const fs::path dir = fs::path(::testing::TempDir());
  const std::string stem = "ranks_" + std::to_string(getpid()) + "_";
  std::vector<std::string> checkpoints;
  std::ostringstream out;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    checkpoints.push_back((dir / (stem + std::to_string(rank))).string());
    auto first = RunWithLiveView(
        config(rank, 2),
        {.max_batches = 2, .checkpoint_path = checkpoints[rank]}, out,
        /*interactive=*/false);
    ASSERT_TRUE(first.ok()) << first.status();
  }
  auto resumed = RunWithLiveView(config(0, 1), {.resume_paths = checkpoints},
                                 out, /*interactive=*/false);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  uint64_t positions = 0;
  for (const auto& stage : resumed->final_metrics.total_stage_metrics()) {
    positions += stage.tensor_generator().positions();
  }
  EXPECT_EQ(positions, positions_ - 2 * 2 * 64);
  // --resume A,B: the list is split at commas.
  const fs::path text = dir / (stem + "config");
  std::ofstream(text) << config(0, 1).DebugString();
  const Result twice = Invoke(
      RunRunCommand,
      {text.string(), "--resume", checkpoints[0] + "," + checkpoints[0]});
  EXPECT_EQ(twice.code, 2);
  EXPECT_THAT(twice.err, HasSubstr("two checkpoints of rank 0"));
  for (const std::string& path : checkpoints) fs::remove(path);
  fs::remove(text);
}

TEST_F(CommandsTest, RunCheckpointFlagsAreChecked) {
  const fs::path dir = fs::path(::testing::TempDir());
  const fs::path config = dir / ("plain_" + std::to_string(getpid()));
  auto eval = lc0::MakePipeline(
      {.directories = {*data_}, .mode = lc0::PipelineMode::kEval});
  ASSERT_TRUE(eval.ok());
  std::ofstream(config) << eval->DebugString();
  const Result every =
      Invoke(RunRunCommand, {config.string(), "--checkpoint-every", "2"});
  EXPECT_EQ(every.code, 2);
  EXPECT_THAT(every.err, HasSubstr("--checkpoint-every needs --checkpoint"));
  const Result not_deterministic =
      Invoke(RunRunCommand, {config.string(), "--batches", "1", "--checkpoint",
                             (dir / "never_written").string()});
  EXPECT_NE(not_deterministic.code, 0);
  EXPECT_THAT(not_deterministic.err, HasSubstr("deterministic"));
  const Result missing = Invoke(
      RunRunCommand, {config.string(), "--resume", (dir / "nothing").string()});
  EXPECT_NE(missing.code, 0);
  EXPECT_THAT(missing.err, HasSubstr("nothing"));
  fs::remove(config);
}

TEST_F(CommandsTest, RunWritesAReportAndATraceOfItsReadsBatchesAndCheckpoints) {
  auto config = lc0::MakePipeline({.directories = {*data_},
                                   .mode = lc0::PipelineMode::kEval,
                                   .batch_size = 64,
                                   .deterministic = true});
  ASSERT_TRUE(config.ok()) << config.status();
  config->set_metrics_interval_seconds(0.05);
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("report_and_trace_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ostringstream out;
  // Stopped before the end of the data: checkpoints are of a run that goes
  // on.
  auto run = RunWithLiveView(*config,
                             {.max_batches = 20,
                              .checkpoint_path = (dir / "checkpoint").string(),
                              .checkpoint_every = 5,
                              .report_path = (dir / "run.html").string(),
                              .report_title = "lc0 eval",
                              .trace_path = (dir / "run.json").string()},
                             out, /*interactive=*/false);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_THAT(out.str(), HasSubstr("report: " + (dir / "run.html").string()));
  EXPECT_THAT(out.str(), HasSubstr("trace: " + (dir / "run.json").string()));
  std::ifstream report(dir / "run.html");
  std::stringstream html;
  html << report.rdbuf();
  EXPECT_THAT(html.str(), HasSubstr("sluice run report"));
  EXPECT_THAT(html.str(), HasSubstr("lc0 eval"));
  EXPECT_THAT(html.str(), HasSubstr("positions per second"));

  const testing::TraceSummary trace =
      testing::CheckTrace((dir / "run.json").string());
  EXPECT_EQ(trace.dropped_events, 0);
  // Every batch handed out, the checkpoints taken every 5 and at the end.
  EXPECT_EQ(trace.spans.at("output"), run->batches);
  EXPECT_EQ(trace.spans.at("checkpoint"), run->batches / 5 + 1);
  // The chunk files read, whole (page cache or not).
  uint64_t source_bytes = 0;
  for (const auto& stage : run->final_metrics.total_stage_metrics()) {
    source_bytes += stage.chunk_source_loader().source_bytes();
  }
  EXPECT_GT(trace.reads, 0);
  EXPECT_GT(trace.read_bytes, 0);
  EXPECT_LE(trace.read_bytes, 2 * source_bytes);
  // Each stage's busy count accounts for its busy time; its spans on the
  // worker threads (running, not queued behind other coroutines) for at
  // most that.
  for (const auto& stage : run->final_metrics.total_stage_metrics()) {
    const double busy = stage.load().busy_seconds();
    const std::string count = stage.name() + " busy coroutines";
    ASSERT_TRUE(trace.counter_integral.contains(count)) << count;
    EXPECT_NEAR(trace.counter_integral.at(count), busy, 0.1 * busy) << count;
    ASSERT_TRUE(trace.busy_seconds.contains(stage.name())) << stage.name();
    EXPECT_LE(trace.busy_seconds.at(stage.name()), 1.1 * busy + 1e-3)
        << stage.name();
  }
  fs::remove_all(dir);
}

TEST_F(CommandsTest, AReportOrTracePathThatCannotBeWrittenFailsBeforeTheRun) {
  const fs::path dir = fs::path(::testing::TempDir());
  const fs::path config = dir / ("eval_" + std::to_string(getpid()));
  auto eval = lc0::MakePipeline(
      {.directories = {*data_}, .mode = lc0::PipelineMode::kEval});
  ASSERT_TRUE(eval.ok());
  std::ofstream(config) << eval->DebugString();
  const std::string missing = (dir / "no_such_dir" / "out").string();
  for (const char* flag : {"--report", "--trace"}) {
    const Result run = Invoke(RunRunCommand, {config.string(), flag, missing});
    EXPECT_EQ(run.code, 2) << flag;
    EXPECT_THAT(run.err,
                HasSubstr(absl::StrCat("sluice run: ", flag, " ", missing)));
    EXPECT_THAT(run.err, HasSubstr("does not exist"));
    // No run: nothing was printed.
    EXPECT_THAT(run.out, Not(HasSubstr("summary:")));
    // The demo checks before it generates its data.
    const Result demo = Invoke(RunDemoCommand, {flag, dir.string()});
    EXPECT_EQ(demo.code, 2) << flag;
    EXPECT_THAT(demo.err, HasSubstr("is a directory"));
    EXPECT_EQ(demo.out, "");
    const Result bench =
        Invoke(RunBenchCommand, {"pipeline", "--data", *data_, flag, missing});
    EXPECT_EQ(bench.code, 2) << flag;
    EXPECT_THAT(bench.err, HasSubstr(flag));
  }
  fs::remove(config);
}

TEST_F(CommandsTest, BenchPipelineWritesAReportAndATracePerRun) {
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("bench_outputs_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const Result result =
      Invoke(RunBenchCommand,
             {"pipeline", "--data", *data_, "--threads", "1,2", "--seconds",
              "1", "--batches", "3", "--report", (dir / "bench.html").string(),
              "--trace", (dir / "bench.json").string()});
  ASSERT_EQ(result.code, 0) << result.err;
  for (const char* name : {"bench-threads1.html", "bench-threads2.html",
                           "bench-threads1.json", "bench-threads2.json"}) {
    EXPECT_TRUE(fs::exists(dir / name)) << name;
    EXPECT_THAT(result.out, HasSubstr(name));
  }
  testing::CheckTrace((dir / "bench-threads2.json").string());
  fs::remove_all(dir);
}

TEST_F(CommandsTest, BenchIoJsonHasTheDocumentedKeys) {
  const Result result = Invoke(RunBenchCommand, {"io", *data_, "--json"});
  ASSERT_EQ(result.code, 0) << result.err;
  const google::protobuf::Struct parsed = ParseJson(result.out);
  for (const char* key :
       {"files", "bytes", "queue_depth", "cold_cache_method", "results"}) {
    EXPECT_TRUE(parsed.fields().contains(key)) << key;
  }
  const auto& results = parsed.fields().at("results").list_value().values();
  ASSERT_FALSE(results.empty());
  std::set<std::string> methods;
  for (const auto& row : results) {
    const auto& fields = row.struct_value().fields();
    for (const char* key : {"mode", "method", "block_bytes", "cache",
                            "gb_per_s", "files_per_s"}) {
      EXPECT_TRUE(fields.contains(key)) << key;
    }
    methods.insert(fields.at("method").string_value());
  }
  EXPECT_EQ(methods, (std::set<std::string>{"io_uring", "pread", "mmap"}));
}

// Small-file rows read only the files under the stated size, and say so
// when there are none.
TEST_F(CommandsTest, BenchIoSmallFilesOnlyUnderTheStatedSize) {
  const Result none =
      Invoke(RunBenchCommand, {"io", *data_, "--small-file-max-bytes", "1"});
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_THAT(none.out, HasSubstr("small-files: not measured, none of the 4 "
                                  "files is at most 1 bytes"));
  EXPECT_THAT(none.out, Not(HasSubstr("small-files  ")));

  const Result all = Invoke(RunBenchCommand, {"io", *data_, "--json"});
  ASSERT_EQ(all.code, 0) << all.err;
  const google::protobuf::Struct parsed = ParseJson(all.out);
  EXPECT_EQ(parsed.fields()
                .at("small_files")
                .struct_value()
                .fields()
                .at("files")
                .number_value(),
            4);
  int small_rows = 0;
  for (const auto& row : parsed.fields().at("results").list_value().values()) {
    const auto& fields = row.struct_value().fields();
    if (fields.at("mode").string_value() != "small-files") continue;
    ++small_rows;
    EXPECT_EQ(fields.at("files").number_value(), 4);
  }
  EXPECT_GE(small_rows, 2);  // io_uring and pread, warm (and cold)
}

// The comparison's cases on one file: "block/depth/case" of the runs, and
// the cases not run.
struct ComparedFioCases {
  std::set<std::string> runs;
  std::vector<std::string> skipped;
};

ComparedFioCases CompareBenchIoWithFio(const std::string& path,
                                       const std::string& cases) {
  const Result result = Invoke(
      RunBenchCommand, {"io", path, "--json", "--compare-fio", "--fio-seconds",
                        "1", "--fio-rounds", "1", "--fio-cases", cases});
  EXPECT_EQ(result.code, 0) << result.err;
  const google::protobuf::Struct parsed = ParseJson(result.out);
  const auto& fio = parsed.fields().at("fio").struct_value().fields();
  ComparedFioCases found;
  if (fio.contains("error")) {
    ADD_FAILURE() << fio.at("error").string_value();
    return found;
  }
  EXPECT_GE(fio.at("cpu").number_value(), 0);
  for (const auto& run : fio.at("cases").list_value().values()) {
    const auto& fields = run.struct_value().fields();
    for (const char* tool : {"fio_gb_per_s", "sluice_gb_per_s"}) {
      const auto& spread = fields.at(tool).struct_value().fields();
      EXPECT_GT(spread.at("median").number_value(), 0) << tool;
      EXPECT_LE(spread.at("low").number_value(),
                spread.at("high").number_value());
    }
    found.runs.insert(absl::StrCat(
        static_cast<int64_t>(fields.at("block_bytes").number_value()), "/",
        static_cast<int64_t>(fields.at("queue_depth").number_value()), "/",
        fields.at("case").string_value()));
  }
  for (const auto& skipped : fio.at("skipped").list_value().values()) {
    found.skipped.push_back(skipped.string_value());
  }
  return found;
}

TEST_F(CommandsTest, BenchIoComparesWithFioLikeForLike) {
  if (!FioInstalled()) {
    GTEST_SKIP() << "fio is not installed (scripts/setup.sh installs it)";
  }
  const fs::path big = fs::path(::testing::TempDir()) /
                       ("sluice_fio_" + std::to_string(getpid()) + ".bin");
  std::ofstream(big) << std::string((3 << 20) + 1000, 'x');
  // Cold runs need posix_fadvise, which every Linux file system here takes;
  // direct ones O_DIRECT, which tmpfs for one does not do.
  const ComparedFioCases cases =
      CompareBenchIoWithFio(big.string(), "cold,warm,direct");
  std::set<std::string> expected = {"1048576/32/cold", "1048576/32/warm",
                                    "65536/1/cold", "65536/1/warm"};
  if (cases.skipped.empty()) {
    expected.insert({"1048576/32/direct", "65536/1/direct"});
  } else {
    ASSERT_EQ(cases.skipped.size(), 1u);
    EXPECT_THAT(cases.skipped[0], HasSubstr("direct: "));
  }
  EXPECT_EQ(cases.runs, expected);
  fs::remove(big);
}

TEST_F(CommandsTest, BenchIoSaysWhichFioCasesAFileIsTooSmallFor) {
  if (!FioInstalled()) {
    GTEST_SKIP() << "fio is not installed (scripts/setup.sh installs it)";
  }
  // The data's tars hold 10 small games each: under one 1 MiB block.
  const ComparedFioCases cases = CompareBenchIoWithFio(*data_, "warm");
  EXPECT_EQ(cases.runs, (std::set<std::string>{"65536/1/warm"}));
  EXPECT_THAT(cases.skipped,
              Contains(HasSubstr("1MiB blocks: the largest file has")));
}

// --direct adds O_DIRECT rows for io_uring and pread; where the file
// system refuses O_DIRECT (tmpfs), they read buffered and a warning counts
// the files.
TEST_F(CommandsTest, BenchIoDirectRowsAndTheirFallbackOnTmpfs) {
  const Result result =
      Invoke(RunBenchCommand,
             {"io", *data_, "--direct", "--json", "--small-files-limit", "1"});
  ASSERT_EQ(result.code, 0) << result.err;
  const google::protobuf::Struct parsed = ParseJson(result.out);
  std::set<std::string> direct_methods;
  for (const auto& row : parsed.fields().at("results").list_value().values()) {
    const auto& fields = row.struct_value().fields();
    if (fields.at("cache").string_value() != "direct") continue;
    EXPECT_GT(fields.at("bytes").number_value(), 0);
    direct_methods.insert(fields.at("method").string_value());
  }
  EXPECT_EQ(direct_methods, (std::set<std::string>{"io_uring", "pread"}));

  struct statfs shm;
  if (statfs("/dev/shm", &shm) != 0 || shm.f_type != 0x01021994) {
    GTEST_SKIP() << "no tmpfs at /dev/shm here";
  }
  const fs::path in_memory =
      fs::path("/dev/shm") / ("sluice_direct_" + std::to_string(getpid()));
  fs::create_directories(in_memory);
  std::ofstream(in_memory / "a.bin") << std::string(100000, 'x');
  const Result tmpfs =
      Invoke(RunBenchCommand, {"io", in_memory.string(), "--direct"});
  fs::remove_all(in_memory);
  ASSERT_EQ(tmpfs.code, 0) << tmpfs.err;
  EXPECT_THAT(tmpfs.err, HasSubstr("warning: O_DIRECT refused for 1 of 1 "
                                   "files (the file system keeps files in "
                                   "memory"));
  EXPECT_THAT(tmpfs.out, HasSubstr(" direct "));
}

TEST_F(CommandsTest, BenchIoRejectsAnUnknownFioCase) {
  const Result result =
      Invoke(RunBenchCommand, {"io", *data_, "--fio-cases", "warm,tepid"});
  EXPECT_EQ(result.code, 2);
  EXPECT_THAT(result.err, HasSubstr("unknown --fio-cases case 'tepid'"));
}

TEST_F(CommandsTest, BenchPipelineJsonHasTheDocumentedKeys) {
  const Result result =
      Invoke(RunBenchCommand, {"pipeline", "--data", *data_, "--threads", "1",
                               "--seconds", "1", "--batches", "3", "--json"});
  ASSERT_EQ(result.code, 0) << result.err;
  const google::protobuf::Struct parsed = ParseJson(result.out);
  const auto& runs = parsed.fields().at("runs").list_value().values();
  ASSERT_EQ(runs.size(), 1);
  const auto& fields = runs[0].struct_value().fields();
  for (const char* key : {"threads", "positions_per_s", "batches_per_s",
                          "first_batch_s", "peak_rss_bytes", "stage_load"}) {
    EXPECT_TRUE(fields.contains(key)) << key;
  }
  EXPECT_GT(fields.at("peak_rss_bytes").number_value(), 0);
  EXPECT_TRUE(
      fields.at("stage_load").struct_value().fields().contains("tensors"));
}

}  // namespace
}  // namespace sluice::cli
