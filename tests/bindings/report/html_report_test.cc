#include "bindings/report/html_report.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bindings/report/svg_chart.h"
#include "engine/config_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice::report {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A two-stage run of `seconds` 1-s samples: "source" fast, "slow <decoder>"
// busy 90 % of the time with a full input; the decoder skips one item per
// sample once the run is half done.
RunReportInputs TwoStageRun(int seconds) {
  RunReportInputs inputs;
  inputs.title = "sluice run two_stages.textproto";
  inputs.config = ParseConfigText(R"pb(
                                    metrics_interval_seconds: 1
                                    stage {
                                      name: "source"
                                      counting_source {}
                                    }
                                    stage {
                                      name: "slow <decoder>"
                                      input: "source"
                                      pass_through {}
                                    }
                                  )pb",
                                  "two stages")
                      .value();
  for (int i = 0; i < seconds; ++i) {
    MetricsHistory::Sample sample;
    sample.end_seconds = i + 1;
    sample.span_seconds = 1;
    sample.rss_bytes = (100 + i) << 20;
    sample.metrics.set_interval_seconds(1);
    sample.metrics.set_elapsed_seconds(i + 1);
    for (const auto& [name, busy] :
         {std::pair{"source", 0.1}, std::pair{"slow <decoder>", 0.9}}) {
      StageMetricProto* stage = sample.metrics.add_stage_metrics();
      stage->set_name(name);
      stage->set_type("pass_through");
      stage->mutable_load()->set_busy_seconds(busy);
      stage->mutable_load()->set_capacity_seconds(1);
      stage->mutable_load()->set_load(busy);
      QueueMetricProto* queue = stage->add_output_queue_metrics();
      queue->set_name("output");
      queue->set_capacity(16);
      queue->set_size(std::string(name) == "source" ? 15 : 1);
      queue->set_put_count(1000);
      queue->set_get_count(1000);
      if (std::string(name) != "source" && i >= seconds / 2) {
        SkipCountProto* skip = stage->add_skipped();
        skip->set_reason("corrupt_item");
        skip->set_count(1);
      }
    }
    inputs.history.push_back(sample);
  }
  inputs.metrics.set_elapsed_seconds(seconds);
  inputs.metrics.set_io_backend("io_uring");
  for (const StageMetricProto& stage :
       inputs.history.back().metrics.stage_metrics()) {
    StageMetricProto* total = inputs.metrics.add_total_stage_metrics();
    *total = stage;
    total->mutable_load()->set_busy_seconds(stage.load().busy_seconds() *
                                            seconds);
    total->mutable_load()->set_capacity_seconds(seconds);
  }
  return inputs;
}

int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST(HtmlReportTest, OnePageWithEveryChartTheBottleneckAndTheConfig) {
  const std::string html = RenderRunReport(TwoStageRun(30));
  EXPECT_THAT(html, ::testing::StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(html, HasSubstr("sluice run two_stages.textproto"));
  // Batches/s (no stage counts examples here), load, fill, skips, RSS.
  EXPECT_EQ(Count(html, "<svg"), 5);
  EXPECT_THAT(html, HasSubstr("Stage load"));
  EXPECT_THAT(html, HasSubstr("Channel fill"));
  EXPECT_THAT(html, HasSubstr("slow &lt;decoder&gt;: corrupt_item"));
  EXPECT_THAT(html, HasSubstr("Resident set size"));
  // The bottleneck, as the CLI names it, with its evidence.
  EXPECT_THAT(html, HasSubstr("<b>slow &lt;decoder&gt;</b> limits this run"));
  EXPECT_THAT(html, HasSubstr("bottleneck: the highest load"));
  // The config, escaped.
  EXPECT_THAT(html, HasSubstr("name: &quot;slow &lt;decoder&gt;&quot;"));
  EXPECT_THAT(html, Not(HasSubstr("slow <decoder>")));
  // Self-contained: no script, nothing fetched.
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
}

TEST(HtmlReportTest, EveryNumberInTheChartsIsFinite) {
  RunReportInputs inputs = TwoStageRun(5);
  // A sample with no time (a snapshot at the very start) and one whose
  // stage has no capacity yet: rates and loads would divide by zero.
  inputs.history.front().metrics.set_interval_seconds(0);
  inputs.history.front()
      .metrics.mutable_stage_metrics(0)
      ->mutable_load()
      ->set_capacity_seconds(0);
  const std::string html = RenderRunReport(inputs);
  const std::regex attribute(
      R"re((points|x|y|x1|x2|y1|y2|cx|cy|width|height)="([^"]*)")re");
  int attributes = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), attribute);
       it != std::sregex_iterator(); ++it) {
    ++attributes;
    EXPECT_THAT((*it)[2].str(), Not(HasSubstr("nan"))) << (*it)[0];
    EXPECT_THAT((*it)[2].str(), Not(HasSubstr("inf"))) << (*it)[0];
  }
  EXPECT_GT(attributes, 100);
}

TEST(HtmlReportTest, ARunWithoutSamplesOrSkipsSaysSo) {
  RunReportInputs inputs = TwoStageRun(1);
  inputs.history.clear();
  const std::string html = RenderRunReport(inputs);
  EXPECT_THAT(html, HasSubstr("No metrics snapshot was taken"));
  EXPECT_THAT(html, HasSubstr("No item was skipped"));
}

TEST(HtmlReportTest, WritesAtomicallyOrSaysWhyNot) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / absl::StrCat("html_report_", getpid());
  fs::create_directories(dir);
  const std::string path = (dir / "run.html").string();
  ASSERT_TRUE(WriteRunReport(TwoStageRun(3), path).ok());
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("</html>"));
  const absl::Status missing =
      WriteRunReport(TwoStageRun(3), (dir / "no" / "run.html").string());
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.message()), HasSubstr("no/run.html"));
  fs::remove_all(dir);
}

TEST(SvgChartTest, FormatsValuesForPeople) {
  EXPECT_EQ(FormatValue(0.423, "%"), "42%");
  EXPECT_EQ(FormatValue(123456, "/s"), "123.5k/s");
  EXPECT_EQ(FormatValue(2.5e6, "/s"), "2.50M/s");
  EXPECT_EQ(FormatValue(512, "MB"), "512 MB");
  EXPECT_EQ(FormatValue(std::nan(""), "MB"), "n/a");
  EXPECT_EQ(EscapeHtml("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
}

}  // namespace
}  // namespace sluice::report
