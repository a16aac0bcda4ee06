// BatchToArrays: hands a TensorBatch to Python as the training tuple
// (FORMAT.md) of five float32 numpy arrays, without copying.
//
//   py::tuple arrays = BatchToArrays(std::move(batch));
//   // planes (B, 112, 8, 8), probs (B, 1858), winner (B, 3),
//   // best_q (B, 3), plies_left (B,)
//
// Promises: the arrays view the batch's one allocation in place (C order,
// writable, owndata false). Their common base is a capsule holding the
// allocation's owner (TensorBatch::ReleaseOwnership), so the allocation is
// freed when Python drops the last of the five arrays, and not before: the
// arrays outlive the loader that produced them. Needs the GIL.
#ifndef SLUICE_BINDINGS_PYTHON_BATCH_CONVERSION_H_
#define SLUICE_BINDINGS_PYTHON_BATCH_CONVERSION_H_

#include "pybind11/pybind11.h"
#include "stages/lc0/format/tensor_batch.h"

namespace sluice::python {

pybind11::tuple BatchToArrays(lc0::TensorBatch batch);

}  // namespace sluice::python

#endif  // SLUICE_BINDINGS_PYTHON_BATCH_CONVERSION_H_
