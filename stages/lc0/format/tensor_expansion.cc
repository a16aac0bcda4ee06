#include "stages/lc0/format/tensor_expansion.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/strings/str_cat.h"

namespace sluice::lc0 {
namespace {

// Records are little-endian; the planes are read as native uint64.
static_assert(std::endian::native == std::endian::little);

constexpr int kSquares = 64;
constexpr int kRow = 8;

using ByteTable = std::array<std::array<float, kRow>, 256>;

// kMsbFirst[b][k] is bit (7 - k) of b: byte i of planes[p] covers squares
// 8i..8i+7, and square j reads bit (j ^ 7) of the plane.
constexpr ByteTable MakeTable(bool msb_first) {
  ByteTable table{};
  for (int b = 0; b < 256; ++b) {
    for (int k = 0; k < kRow; ++k) {
      table[b][k] = ((b >> (msb_first ? 7 - k : k)) & 1) ? 1.0f : 0.0f;
    }
  }
  return table;
}
alignas(64) constexpr ByteTable kMsbFirst = MakeTable(true);
// kLsbFirst[b][k] is bit k of b: the castling and en-passant rows.
alignas(64) constexpr ByteTable kLsbFirst = MakeTable(false);

// Writes one row of 8 floats to `out` (32-byte aligned: every plane starts
// 64-byte aligned in a TensorBatch). A full batch (37 MB at 1024 positions)
// does not fit in cache, so on x86 the rows go out as non-temporal stores:
// no read-for-ownership of lines that are overwritten whole.
inline void StoreRow(float* out, const float* row) {
#if defined(__SSE2__)
  _mm_stream_ps(out, _mm_load_ps(row));
  _mm_stream_ps(out + 4, _mm_load_ps(row + 4));
#else
  std::memcpy(out, row, kRow * sizeof(float));
#endif
}

// Copies `bytes` (a multiple of 8) from `from` to `to` (8-byte aligned:
// a probs row starts 8 bytes past a 16-byte boundary in every other slot)
// with non-temporal stores on x86, for the reason StoreRow gives. Against
// memcpy (rep movsq), this made the one-core ceiling of
// bench/lc0_pipeline_benchmark ~10 % faster.
void StreamCopy(const void* from, void* to, size_t bytes) {
#if defined(__SSE2__) && defined(__x86_64__)
  const auto* in = static_cast<const char*>(from);
  auto* out = static_cast<char*>(to);
  auto stream8 = [&](size_t at) {
    long long word;
    std::memcpy(&word, in + at, sizeof(word));
    _mm_stream_si64(reinterpret_cast<long long*>(out + at), word);
  };
  size_t at = 0;
  if (reinterpret_cast<uintptr_t>(out) % 16 != 0) {
    stream8(at);
    at += 8;
  }
  for (; at + 16 <= bytes; at += 16) {
    _mm_stream_si128(
        reinterpret_cast<__m128i*>(out + at),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + at)));
  }
  if (at < bytes) stream8(at);
#else
  std::memcpy(to, from, bytes);
#endif
}

void ExpandBitPlanes(const V6TrainingRecord& record, float* out) {
  for (int p = 0; p < kBitPlanes; ++p) {
    const uint64_t bits = record.planes[p];
    float* plane = out + p * kSquares;
    for (int i = 0; i < kRow; ++i) {
      StoreRow(plane + i * kRow, kMsbFirst[(bits >> (8 * i)) & 0xff].data());
    }
  }
}

void Fill(float* plane, float value) {
  alignas(32) float row[kRow];
  std::fill_n(row, kRow, value);
  for (int i = 0; i < kRow; ++i) StoreRow(plane + i * kRow, row);
}

// A plane with `first`'s bits on the first row and `last`'s on the last.
void RowsPlane(float* plane, uint8_t first, uint8_t last) {
  alignas(32) constexpr float kZeros[kRow] = {};
  StoreRow(plane, kLsbFirst[first].data());
  for (int i = 1; i < kRow - 1; ++i) StoreRow(plane + i * kRow, kZeros);
  StoreRow(plane + 7 * kRow, kLsbFirst[last].data());
}

// Planes 104..111, per FORMAT.md.
void ExpandMetaPlanes(const V6TrainingRecord& r, uint32_t format, float* out) {
  float* meta = out + kBitPlanes * kSquares;
  auto plane = [meta](int i) { return meta + i * kSquares; };
  if (format == 1) {
    Fill(plane(0), r.castling_us_ooo);
    Fill(plane(1), r.castling_us_oo);
    Fill(plane(2), r.castling_them_ooo);
    Fill(plane(3), r.castling_them_oo);
    Fill(plane(4), r.side_to_move_or_enpassant);
  } else {
    RowsPlane(plane(0), r.castling_us_ooo, r.castling_them_ooo);
    RowsPlane(plane(1), r.castling_us_oo, r.castling_them_oo);
    Fill(plane(2), 0.0f);
    Fill(plane(3), 0.0f);
    if (format == 2) {
      Fill(plane(4), r.side_to_move_or_enpassant);
    } else {
      RowsPlane(plane(4), 0, r.side_to_move_or_enpassant);
    }
  }
  // The reference divides in double precision, then stores a float.
  const double divisor = format > 3 ? 100.0 : 99.0;
  Fill(plane(5), static_cast<float>(r.rule50_count / divisor));
  const bool invariance_plane =
      (format == 132 || format == 133) && r.invariance_info >= 128;
  Fill(plane(6), invariance_plane ? 1.0f : 0.0f);
  Fill(plane(7), 1.0f);
}

// (½(1 − d + q), d, ½(1 − d − q)), evaluated in double like the reference.
void WdlTriple(float q, float d, float* out) {
  const double qd = q;
  const double dd = d;
  out[0] = static_cast<float>(0.5 * (1.0 - dd + qd));
  out[1] = d;
  out[2] = static_cast<float>(0.5 * (1.0 - dd - qd));
}

}  // namespace

absl::StatusOr<TensorExpander> TensorExpander::Create(uint32_t input_format) {
  switch (input_format) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 132:
    case 133:
      return TensorExpander(input_format);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported lc0 input_format ", input_format,
                       " (expected 1, 2, 3, 4, 5, 132 or 133)"));
  }
}

void TensorExpander::Expand(const V6TrainingRecord& record, TensorBatch* batch,
                            size_t slot) const {
  float* planes = batch->planes(slot);
  ExpandBitPlanes(record, planes);
  ExpandMetaPlanes(record, input_format_, planes);

  StreamCopy(record.probabilities, batch->probs(slot),
             sizeof(record.probabilities));

  float* winner = batch->winner(slot);
  if (record.version >= 6) {
    WdlTriple(record.result_q, record.result_d, winner);
  } else {
    winner[0] = record.result == 1 ? 1.0f : 0.0f;
    winner[1] = record.result == 0 ? 1.0f : 0.0f;
    winner[2] = record.result == -1 ? 1.0f : 0.0f;
  }
  WdlTriple(record.best_q, record.best_d, batch->best_q(slot));

  *batch->plies_left(slot) = record.plies_left == 0.0f
                                 ? static_cast<float>(record.invariance_info)
                                 : record.plies_left;
#if defined(__SSE2__)
  // Orders the non-temporal stores before anything that publishes the batch.
  _mm_sfence();
#endif
}

}  // namespace sluice::lc0
