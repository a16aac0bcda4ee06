#include "stages/audio/internal/example_values.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice::audio {
namespace {

std::optional<FieldProblem> Check(const Example& example, std::string_view name,
                                  DType dtype, size_t dimensions,
                                  const ExampleField*& field) {
  field = example.Find(name);
  if (field == nullptr) {
    return FieldProblem{"missing_field",
                        absl::StrCat("no field '", std::string(name), "'")};
  }
  if (field->dtype() != dtype || field->shape().size() != dimensions) {
    return FieldProblem{
        "wrong_dtype",
        absl::StrCat("field '", std::string(name), "' is ",
                     std::string(DTypeName(field->dtype())), " of ",
                     field->shape().size(), " dimensions, expected ",
                     std::string(DTypeName(dtype)),
                     dimensions == 0 ? " scalar" : " vector")};
  }
  return std::nullopt;
}

}  // namespace

std::optional<FieldProblem> FindFloatVector(const Example& example,
                                            std::string_view name,
                                            std::span<const float>& values) {
  const ExampleField* field = nullptr;
  if (auto problem = Check(example, name, DType::kFloat32, 1, field)) {
    return problem;
  }
  values = {field->data<float>(), field->elements()};
  return std::nullopt;
}

std::optional<FieldProblem> FindBytes(const Example& example,
                                      std::string_view name,
                                      std::span<const std::byte>& bytes) {
  const ExampleField* field = nullptr;
  if (auto problem = Check(example, name, DType::kUInt8, 1, field)) {
    return problem;
  }
  bytes = field->bytes();
  return std::nullopt;
}

std::optional<FieldProblem> FindInt64(const Example& example,
                                      std::string_view name, int64_t& value) {
  const ExampleField* field = nullptr;
  if (auto problem = Check(example, name, DType::kInt64, 0, field)) {
    return problem;
  }
  value = field->scalar<int64_t>();
  return std::nullopt;
}

std::string ExampleLabel(const Example& example) {
  const ExampleField* index = example.Find("index");
  if (index == nullptr || index->dtype() != DType::kInt64 ||
      !index->shape().empty()) {
    return "an example";
  }
  return absl::StrCat("example ", index->scalar<int64_t>());
}

ExampleField FloatField(std::vector<int64_t> shape,
                        std::vector<std::byte>&& values) {
  return ExampleField::OwnedBytes(DType::kFloat32, std::move(shape),
                                  std::move(values));
}

std::vector<std::byte> FloatBuffer(size_t count) {
  return std::vector<std::byte>(count * sizeof(float));
}

}  // namespace sluice::audio
