// Fuzzes whole-buffer gunzip under the production size limit: corrupt,
// truncated and bomb inputs must give an error status, never a crash or an
// output above the limit.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/gzip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kLimit = 8 << 20;
  std::string out;
  const absl::Status status = sluice::io::GunzipInto(
      std::string_view(reinterpret_cast<const char*>(data), size), kLimit,
      &out);
  if (status.ok() && out.size() > kLimit) __builtin_trap();
  return 0;
}
