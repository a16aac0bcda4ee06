#include "stages/generic/example.h"

#include <algorithm>
#include <mutex>
#include <unordered_set>

namespace sluice {

FieldName::FieldName(std::string_view name) {
  // Never freed: FieldNames outlive every example and stage.
  static std::mutex* const mu = new std::mutex;
  static std::unordered_set<std::string>* const names =
      new std::unordered_set<std::string>;
  std::lock_guard lock(*mu);
  const std::string key(name);
  auto it = names->find(key);
  if (it == names->end()) it = names->insert(key).first;
  name_ = &*it;
}

ExampleShape::ExampleShape(std::span<const int64_t> dimensions)
    : size_(dimensions.size()) {
  if (size_ <= kInline) {
    std::copy(dimensions.begin(), dimensions.end(), inline_.begin());
  } else {
    spilled_.assign(dimensions.begin(), dimensions.end());
  }
}

ExampleField ExampleField::OwnedBytes(DType dtype, ExampleShape shape,
                                      std::span<const std::byte> bytes) {
  ExampleField field;
  field.dtype_ = dtype;
  field.shape_ = std::move(shape);
  field.size_ = bytes.size();
  if (bytes.size() <= field.inline_.size()) {
    std::copy(bytes.begin(), bytes.end(), field.inline_.begin());
  } else {
    field.owned_.assign(bytes.begin(), bytes.end());
  }
  return field;
}

ExampleField ExampleField::OwnedBytes(DType dtype, ExampleShape shape,
                                      std::vector<std::byte>&& bytes) {
  if (bytes.size() <= sizeof(inline_)) {
    return OwnedBytes(dtype, std::move(shape),
                      std::span<const std::byte>(bytes));
  }
  ExampleField field;
  field.dtype_ = dtype;
  field.shape_ = std::move(shape);
  field.size_ = bytes.size();
  field.owned_ = std::move(bytes);
  return field;
}

ExampleField ExampleField::View(DType dtype, ExampleShape shape,
                                std::span<const std::byte> bytes,
                                std::shared_ptr<const void> keep_alive) {
  ExampleField field;
  field.dtype_ = dtype;
  field.shape_ = std::move(shape);
  field.size_ = bytes.size();
  field.view_ = bytes.data();
  field.keep_alive_ = std::move(keep_alive);
  return field;
}

size_t ExampleField::elements() const {
  size_t elements = 1;
  for (int64_t dimension : shape_) elements *= static_cast<size_t>(dimension);
  return elements;
}

std::span<const std::byte> ExampleField::bytes() const {
  if (view_ != nullptr) return {view_, size_};
  if (!owned_.empty()) return owned_;
  return {inline_.data(), size_};
}

void Example::Set(FieldName name, ExampleField field) {
  for (auto& [existing, value] : fields_) {
    if (existing == name) {
      value = std::move(field);
      return;
    }
  }
  fields_.emplace_back(name, std::move(field));
}

const ExampleField* Example::Find(std::string_view name) const {
  for (const auto& [existing, value] : fields_) {
    if (existing == name) return &value;
  }
  return nullptr;
}

const ExampleField* Example::Find(FieldName name) const {
  for (const auto& [existing, value] : fields_) {
    if (existing == name) return &value;
  }
  return nullptr;
}

bool Example::Remove(std::string_view name) {
  const auto it = std::find_if(fields_.begin(), fields_.end(),
                               [&](const auto& f) { return f.first == name; });
  if (it == fields_.end()) return false;
  fields_.erase(it);
  return true;
}

}  // namespace sluice
