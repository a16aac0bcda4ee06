// LiveView on a terminal (its output replayed on a small terminal model of
// the escape codes it uses) and the run summary.
#include "bindings/cli/live_view.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/config_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A terminal `columns` wide with unlimited height, understanding what the
// live view writes: text (wrapping at the right edge), "\n", and the CSI
// sequences F (cursor up N lines, to column 0), K (erase to end of line),
// J (erase to end of screen) and m (colours, ignored).
class TerminalModel {
 public:
  explicit TerminalModel(int columns) : columns_(columns) {}

  void Write(const std::string& text) {
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
        size_t end = i + 2;
        while (end < text.size() && (text[end] < 0x40 || text[end] > 0x7e)) {
          ++end;
        }
        const std::string parameter = text.substr(i + 2, end - i - 2);
        Control(text[end], parameter.empty() ? 1 : std::stoi(parameter));
        i = end;
      } else if (c == '\n') {
        ++row_;
        column_ = 0;
      } else {
        if (column_ == columns_) {  // the line wraps
          ++wraps_;
          ++row_;
          column_ = 0;
        }
        Line().resize(std::max<size_t>(Line().size(), column_ + 1), ' ');
        Line()[column_++] = c;
      }
    }
  }

  // The screen's lines, trailing empty lines left out.
  std::vector<std::string> Screen() const {
    std::vector<std::string> lines = lines_;
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    return lines;
  }
  int wraps() const { return wraps_; }

 private:
  std::string& Line() {
    if (lines_.size() <= static_cast<size_t>(row_)) lines_.resize(row_ + 1);
    return lines_[row_];
  }

  void Control(char command, int n) {
    switch (command) {
      case 'F':
        row_ = std::max(0, row_ - n);
        column_ = 0;
        break;
      case 'K':
        if (Line().size() > static_cast<size_t>(column_)) {
          Line().resize(column_);
        }
        break;
      case 'J':
        if (Line().size() > static_cast<size_t>(column_)) {
          Line().resize(column_);
        }
        if (lines_.size() > static_cast<size_t>(row_ + 1)) {
          lines_.resize(row_ + 1);
        }
        break;
      default:  // 'm': colours take no room
        break;
    }
  }

  const int columns_;
  std::vector<std::string> lines_;
  int row_ = 0;
  int column_ = 0;
  int wraps_ = 0;
};

DataLoaderConfig FourStages() {
  return ParseConfigText(R"pb(
                           stage {
                             name: "files"
                             counting_source {}
                           }
                           stage {
                             name: "a_stage_with_a_long_name"
                             input: "files"
                             pass_through {}
                           }
                           stage {
                             name: "c"
                             input: "a_stage_with_a_long_name"
                             pass_through {}
                           }
                           stage {
                             name: "d"
                             input: "c"
                             pass_through {}
                           }
                         )pb",
                         "four stages")
      .value();
}

// The metrics of snapshot `index`: interval metrics for the first `stages`
// stages of FourStages(), with long types and big channel numbers.
DataLoaderMetricsProto Snapshot(int index, int stages) {
  DataLoaderMetricsProto metrics;
  metrics.set_snapshot_index(index);
  metrics.set_elapsed_seconds(0.1 * index);
  metrics.set_interval_seconds(0.1);
  metrics.set_io_backend("io_uring");
  const char* names[] = {"files", "a_stage_with_a_long_name", "c", "d"};
  for (int i = 0; i < stages; ++i) {
    StageMetricProto* stage = metrics.add_stage_metrics();
    stage->set_name(names[i]);
    stage->set_type("a_rather_long_stage_type_name");
    stage->mutable_load()->set_load(0.5);
    QueueMetricProto* queue = stage->add_output_queue_metrics();
    queue->set_name("output");
    queue->set_size(123456);
    queue->set_capacity(999999);
    queue->set_put_count(1000000 * index);
  }
  return metrics;
}

TEST(LiveViewTest, RedrawsTheWholeBlockInPlaceOnANarrowTerminal) {
  for (int columns : {40, 80, 200}) {
    SCOPED_TRACE(absl::StrCat(columns, " columns"));
    const DataLoaderConfig config = FourStages();
    std::ostringstream out;
    LiveView view(config, out, /*interactive=*/true, columns);
    // The first snapshot has no interval metrics yet; later ones have all.
    view.Render(Snapshot(1, 0));
    view.Render(Snapshot(2, 4));
    view.Render(Snapshot(3, 4));
    view.Render(Snapshot(4, 2));  // a shorter block
    TerminalModel terminal(columns);
    terminal.Write(out.str());
    EXPECT_EQ(terminal.wraps(), 0);
    const std::vector<std::string> screen = terminal.Screen();
    ASSERT_EQ(screen.size(), 4u) << out.str();
    EXPECT_THAT(screen[0], StartsWith("sluice  0.4s elapsed"));
    EXPECT_THAT(screen[1], StartsWith("stage"));
    EXPECT_THAT(screen[2], StartsWith("files"));
    EXPECT_THAT(screen[3], StartsWith("a_stage_with_a_long_name"));
    for (const std::string& line : screen) {
      EXPECT_LT(line.size(), static_cast<size_t>(columns)) << line;
    }
  }
}

TEST(LiveViewTest, ShowsDropsAndErrorsOnAnEightyColumnTerminal) {
  const DataLoaderConfig config = FourStages();
  std::ostringstream out;
  LiveView view(config, out, /*interactive=*/true, 80);
  DataLoaderMetricsProto metrics = Snapshot(1, 1);
  metrics.mutable_stage_metrics(0)
      ->mutable_output_queue_metrics(0)
      ->set_drop_count(4242);
  SkipCountProto* skip = metrics.mutable_stage_metrics(0)->add_skipped();
  skip->set_reason("corrupt_gzip");
  skip->set_count(777);
  view.Render(metrics);
  TerminalModel terminal(80);
  terminal.Write(out.str());
  ASSERT_EQ(terminal.Screen().size(), 3u);
  EXPECT_THAT(terminal.Screen()[2], HasSubstr("4242"));
  EXPECT_THAT(terminal.Screen()[2], HasSubstr("777"));
}

TEST(ClipToColumnsTest, CountsOnlyVisibleCharacters) {
  EXPECT_EQ(ClipToColumns("abcdef", 4), "abcd");
  EXPECT_EQ(ClipToColumns("abcdef", 0), "abcdef");
  EXPECT_EQ(ClipToColumns("\x1b[1mab\x1b[0mcdef", 3), "\x1b[1mab\x1b[0mc");
  EXPECT_EQ(ClipToColumns("h\xc3\xa9llo", 2), "h\xc3\xa9");
}

TEST(LiveViewTest, SummaryNamesNoBottleneckForARunTooShortToHaveOne) {
  DataLoaderMetricsProto metrics;
  metrics.set_elapsed_seconds(0.02);
  for (const char* name : {"files", "c"}) {
    StageMetricProto* totals = metrics.add_total_stage_metrics();
    totals->set_name(name);
    totals->mutable_load()->set_busy_seconds(0.004);
    totals->mutable_load()->set_capacity_seconds(0.02);
  }
  const DataLoaderConfig config = FourStages();
  std::ostringstream out;
  LiveView view(config, out, /*interactive=*/false);
  view.PrintSummary(metrics, {});
  EXPECT_THAT(out.str(), HasSubstr("bottleneck: none named, the run was too"));
  EXPECT_THAT(out.str(), Not(HasSubstr("bottleneck: files")));
}

}  // namespace
}  // namespace sluice::cli
