// Minimal logging to stderr (Debian's abseil has no absl/log).
//
//   LogInfo("stage ", name, ": initial scan complete");
//   static RateLimiter limiter(absl::Seconds(5));
//   if (limiter.Allow()) LogWarning("skipping ", path, ": ", status);
#ifndef SLUICE_ENGINE_LOG_H_
#define SLUICE_ENGINE_LOG_H_

#include <atomic>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "absl/time/time.h"

namespace sluice {

enum class LogLevel { kInfo, kWarning, kError };

// Writes one line "sluice <level>: <message>" to stderr, whole lines only
// (safe from several threads). Lines below the minimum level are dropped.
void LogLine(LogLevel level, std::string_view message);

// Sets the minimum level that LogLine writes (default kInfo; the environment
// variable SLUICE_LOG_LEVEL=warning|error raises it at start-up).
void SetMinLogLevel(LogLevel level);

// Streams every argument into one line at `level`.
template <typename... Args>
void Log(LogLevel level, const Args&... args) {
  std::ostringstream line;
  (line << ... << args);
  LogLine(level, line.str());
}
template <typename... Args>
void LogInfo(const Args&... args) {
  Log(LogLevel::kInfo, args...);
}
template <typename... Args>
void LogWarning(const Args&... args) {
  Log(LogLevel::kWarning, args...);
}
template <typename... Args>
void LogError(const Args&... args) {
  Log(LogLevel::kError, args...);
}

// Allows one event per period; thread-safe. Used to log bad input at a
// limited rate.
class RateLimiter {
 public:
  explicit RateLimiter(absl::Duration period) : period_(period) {}
  // True when the last allowed event is at least one period ago.
  bool Allow();

 private:
  const absl::Duration period_;
  std::atomic<int64_t> last_allowed_nanos_{INT64_MIN};
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_LOG_H_
