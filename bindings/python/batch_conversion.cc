#include "bindings/python/batch_conversion.h"

#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "pybind11/numpy.h"

namespace sluice::python {

namespace py = pybind11;

py::tuple BatchToArrays(lc0::TensorBatch batch) {
  // Views first: ReleaseOwnership leaves the batch empty.
  std::array<lc0::TensorView, lc0::kNumTensors> views;
  for (int i = 0; i < lc0::kNumTensors; ++i) {
    views[i] = batch.view(static_cast<lc0::TensorId>(i));
  }
  using Owner = std::shared_ptr<void>;
  auto owner = std::make_unique<Owner>(std::move(batch).ReleaseOwnership());
  py::capsule base(owner.get(),
                   [](void* owner) { delete static_cast<Owner*>(owner); });
  owner.release();  // the capsule deletes it now
  py::tuple arrays(lc0::kNumTensors);
  for (int i = 0; i < lc0::kNumTensors; ++i) {
    const lc0::TensorView& view = views[i];
    std::vector<py::ssize_t> shape(view.shape.begin(),
                                   view.shape.begin() + view.rank);
    arrays[i] = py::array_t<float>(std::move(shape), view.data, base);
  }
  return arrays;
}

}  // namespace sluice::python
