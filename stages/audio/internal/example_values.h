// Reading and writing the example fields the audio stages work on: a
// float32 vector (waveform) and the int64 scalars arrow_source sets (index,
// seed), with the skip reason a stage counts when a field is missing or has
// another type.
#ifndef SLUICE_STAGES_AUDIO_INTERNAL_EXAMPLE_VALUES_H_
#define SLUICE_STAGES_AUDIO_INTERNAL_EXAMPLE_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stages/generic/example.h"

namespace sluice::audio {

// A field that could not be read: the skip reason (missing_field,
// wrong_dtype) and a message naming the field.
struct FieldProblem {
  std::string_view reason;
  std::string message;
};

// The float32 1-D field `name` of `example`, or the problem.
std::optional<FieldProblem> FindFloatVector(const Example& example,
                                            std::string_view name,
                                            std::span<const float>& values);

// The uint8 1-D field `name` (encoded bytes), or the problem.
std::optional<FieldProblem> FindBytes(const Example& example,
                                      std::string_view name,
                                      std::span<const std::byte>& bytes);

// The int64 scalar field `name`, or the problem.
std::optional<FieldProblem> FindInt64(const Example& example,
                                      std::string_view name, int64_t& value);

// "example 12" from the example's `index` field, or "an example" without
// one: for log lines.
std::string ExampleLabel(const Example& example);

// A float32 field of `shape` holding `values` (their count must be the
// shape's product); `values` is emptied (its storage moves on).
ExampleField FloatField(std::vector<int64_t> shape,
                        std::vector<std::byte>&& values);

// A zeroed byte buffer of `count` floats, for FloatField.
std::vector<std::byte> FloatBuffer(size_t count);

// The buffer's floats.
inline std::span<float> AsFloats(std::vector<std::byte>& buffer) {
  return {reinterpret_cast<float*>(buffer.data()),
          buffer.size() / sizeof(float)};
}

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_INTERNAL_EXAMPLE_VALUES_H_
