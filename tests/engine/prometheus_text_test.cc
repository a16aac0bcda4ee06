#include "engine/prometheus_text.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(PrometheusTextTest, GroupsEachFamilysSamplesUnderItsHelpAndType) {
  PrometheusText page;
  page.Add("a_total", PrometheusText::kCounter, "Things counted.",
           {{"stage", "x"}}, 1);
  page.Add("b", PrometheusText::kGauge, "A level.", {}, 2.5);
  page.Add("a_total", PrometheusText::kCounter, "ignored", {{"stage", "y"}}, 3);
  EXPECT_EQ(page.Render(),
            "# HELP a_total Things counted.\n"
            "# TYPE a_total counter\n"
            "a_total{stage=\"x\"} 1\n"
            "a_total{stage=\"y\"} 3\n"
            "# HELP b A level.\n"
            "# TYPE b gauge\n"
            "b 2.5\n");
}

TEST(PrometheusTextTest, EscapesLabelValuesAndHelp) {
  PrometheusText page;
  page.Add("m", PrometheusText::kGauge, "back\\slash\nnew \"line\"",
           {{"path", "a\"b\\c\nd"}, {"k", ""}}, 0);
  EXPECT_EQ(page.Render(),
            "# HELP m back\\\\slash\\nnew \"line\"\n"
            "# TYPE m gauge\n"
            "m{path=\"a\\\"b\\\\c\\nd\",k=\"\"} 0\n");
}

TEST(PrometheusTextTest, ValuesReadBackExactly) {
  EXPECT_EQ(FormatPrometheusValue(0), "0");
  EXPECT_EQ(FormatPrometheusValue(123456789012345.0), "123456789012345");
  EXPECT_EQ(FormatPrometheusValue(0.1), "0.1");
  EXPECT_EQ(FormatPrometheusValue(-2.5e-9), "-2.5e-09");
  EXPECT_EQ(FormatPrometheusValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatPrometheusValue(std::numeric_limits<double>::infinity()),
            "+Inf");
  EXPECT_EQ(FormatPrometheusValue(-std::numeric_limits<double>::infinity()),
            "-Inf");
  const double third = 1.0 / 3.0;
  EXPECT_EQ(std::stod(FormatPrometheusValue(third)), third);
}

TEST(PrometheusTextTest, AnEmptyPageIsEmpty) {
  EXPECT_EQ(PrometheusText().Render(), "");
}

}  // namespace
}  // namespace sluice
