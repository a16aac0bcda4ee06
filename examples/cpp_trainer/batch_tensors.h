// sluice batches as torch tensors, without a copy.
//
//   std::optional<sluice::Batch> batch = loader.Next();
//   torch::Tensor planes = TorchTensor(*batch, "planes");  // (B,112,8,8)
//
// The torch tensor reads the batch's buffer in place (torch::from_blob). It
// holds a share of that buffer (its deleter owns batch.buffer()), so the
// data stays valid for as long as torch keeps the tensor or anything
// autograd saved from it, even after the Batch itself is gone. The buffer
// is const: from_blob wants a void*, so the tensor must never be written to
// (no in-place ops on it; make a copy with .clone() for that).
#ifndef CPP_TRAINER_BATCH_TENSORS_H_
#define CPP_TRAINER_BATCH_TENSORS_H_

#include <string_view>

#include "sluice/batch.h"
#include "torch/torch.h"

namespace trainer {

// The tensor `name` of `batch`, same shape and dtype, over the batch's
// buffer. Throws std::out_of_range for an unknown name and
// std::invalid_argument for a dtype torch has no type for.
torch::Tensor TorchTensor(const sluice::Batch& batch, std::string_view name);

}  // namespace trainer

#endif  // CPP_TRAINER_BATCH_TENSORS_H_
