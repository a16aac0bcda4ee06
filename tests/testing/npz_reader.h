// A tiny reader of numpy .npz files (a zip of .npy members, stored or
// deflated) for tests that compare against golden arrays.
//
//   SLUICE_ASSIGN_OR_RETURN(NpzFile npz, ReadNpz("tests/data/golden/v3.npz"));
//   const NpyArray& planes = npz.at("planes");  // dtype "<f4", shape {16,...}
#ifndef SLUICE_TESTS_TESTING_NPZ_READER_H_
#define SLUICE_TESTS_TESTING_NPZ_READER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice::testing {

// One .npy array: its dtype string as numpy writes it ("<f4", "<i4"), its
// shape (empty for a scalar) and its raw C-order bytes.
struct NpyArray {
  std::string dtype;
  std::vector<int64_t> shape;
  std::string data;
};

// Arrays by member name without ".npy" ("planes").
using NpzFile = std::map<std::string, NpyArray>;

// Parses one .npy file's bytes. InvalidArgument on a bad magic or header,
// on fortran_order True, or when the data size does not match the shape.
absl::StatusOr<NpyArray> ParseNpy(const std::string& bytes);

// Reads every member of the .npz at `path`. NotFound when the file cannot
// be read; InvalidArgument for zip features it does not handle (data
// descriptors, methods other than stored/deflate) or bad members.
absl::StatusOr<NpzFile> ReadNpz(const std::string& path);

// Reads a whole file. NotFound when it cannot be opened.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TESTING_NPZ_READER_H_
