// A readable name for a channel's element type, used in wiring errors and
// metrics ("expects lc0::Frame but 'pool.output' carries Chunk").
#ifndef SLUICE_ENGINE_ELEMENT_TYPE_H_
#define SLUICE_ENGINE_ELEMENT_TYPE_H_

#include <string_view>

namespace sluice {

// The compiler's spelling of T, without namespaces such as "sluice::".
template <typename T>
constexpr std::string_view ElementTypeName() {
  std::string_view name = __PRETTY_FUNCTION__;
  const auto start = name.find("T = ") + 4;
  const auto end = name.find_first_of(";]", start);
  return name.substr(start, end - start);
}

}  // namespace sluice

#endif  // SLUICE_ENGINE_ELEMENT_TYPE_H_
