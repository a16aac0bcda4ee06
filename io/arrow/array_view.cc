#include "io/arrow/array_view.h"

#include <cmath>

namespace sluice::io::arrow {

float ArrayView::Float16(int64_t i) const {
  const uint16_t bits = Value<uint16_t>(i);
  const float sign = (bits & 0x8000) != 0 ? -1.0f : 1.0f;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0)
    return sign * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 0x1f) {
    return mantissa == 0 ? sign * INFINITY : NAN;
  }
  return sign * std::ldexp(static_cast<float>(mantissa + 0x400), exponent - 25);
}

}  // namespace sluice::io::arrow
