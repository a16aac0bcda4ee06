#include "bindings/python/batch_conversion.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/dtype.h"
#include "pybind11/numpy.h"

namespace sluice::python {

namespace py = pybind11;

py::dict BatchToArrays(TypedBatch batch) {
  using Owner = std::shared_ptr<void>;
  auto owner = std::make_unique<Owner>(batch.owner());
  py::capsule base(owner.get(),
                   [](void* owner) { delete static_cast<Owner*>(owner); });
  owner.release();  // the capsule deletes it now
  py::dict arrays;
  for (const BatchTensor& tensor : batch.tensors()) {
    const py::dtype dtype(std::string(DTypeName(tensor.dtype)));
    std::vector<py::ssize_t> shape(tensor.shape.begin(), tensor.shape.end());
    arrays[py::str(tensor.name)] =
        py::array(dtype, std::move(shape), tensor.data, base);
  }
  return arrays;
}

}  // namespace sluice::python
