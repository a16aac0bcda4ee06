// BatchToArrays: hands a TypedBatch to Python as numpy arrays of its
// tensors' dtypes, without copying.
//
//   py::dict arrays = BatchToArrays(std::move(batch));
//   // {"planes": (B, 112, 8, 8) float32, ...} in the batch's tensor order
//
// Promises: the arrays view the batch's memory in place (C order, writable,
// owndata false), with the batch's dtypes (float16 as numpy float16, bool
// as numpy bool). Their common base is a capsule holding the batch's owner
// (TypedBatch::owner), so the memory is freed when Python drops the last of
// the arrays, and not before: the arrays outlive the loader that produced
// them. Needs the GIL.
#ifndef SLUICE_BINDINGS_PYTHON_BATCH_CONVERSION_H_
#define SLUICE_BINDINGS_PYTHON_BATCH_CONVERSION_H_

#include "engine/typed_batch.h"
#include "pybind11/pybind11.h"

namespace sluice::python {

pybind11::dict BatchToArrays(TypedBatch batch);

}  // namespace sluice::python

#endif  // SLUICE_BINDINGS_PYTHON_BATCH_CONVERSION_H_
