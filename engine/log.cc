#include "engine/log.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/time/clock.h"

namespace sluice {
namespace {

LogLevel LevelFromEnvironment() {
  const char* value = std::getenv("SLUICE_LOG_LEVEL");
  if (value == nullptr) return LogLevel::kInfo;
  const std::string_view level(value);
  if (level == "warning") return LogLevel::kWarning;
  if (level == "error") return LogLevel::kError;
  return LogLevel::kInfo;
}

std::atomic<LogLevel>& MinLevel() {
  static std::atomic<LogLevel> level{LevelFromEnvironment()};
  return level;
}

std::string_view LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}

}  // namespace

void SetMinLogLevel(LogLevel level) { MinLevel().store(level); }

void LogLine(LogLevel level, std::string_view message) {
  if (level < MinLevel().load()) return;
  std::string line = "sluice ";
  line.append(LevelName(level)).append(": ").append(message).append("\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

bool RateLimiter::Allow() {
  const int64_t now = absl::ToUnixNanos(absl::Now());
  int64_t last = last_allowed_nanos_.load(std::memory_order_relaxed);
  while (last == INT64_MIN || now - last >= absl::ToInt64Nanoseconds(period_)) {
    if (last_allowed_nanos_.compare_exchange_weak(last, now)) return true;
  }
  return false;
}

}  // namespace sluice
