#include "stages/lc0/rescorer/record_planes.h"

namespace sluice::lc0::rescorer {

using chess::FlipFiles;
using chess::MirrorRanks;
using chess::TransposeAntiDiagonal;

bool IsCanonicalFormat(uint32_t input_format) {
  return input_format == 3 || IsHectopliesFormat(input_format);
}

bool IsHectopliesFormat(uint32_t input_format) {
  return input_format == 4 || input_format == 5 || input_format == 132 ||
         input_format == 133;
}

int RecordTransform(const V6TrainingRecord& record) {
  return IsCanonicalFormat(record.input_format) ? record.invariance_info & 7
                                                : 0;
}

Bitboard ApplyTransform(Bitboard squares, int transform) {
  if (transform & 1) squares = FlipFiles(squares);
  if (transform & 2) squares = MirrorRanks(squares);
  if (transform & 4) squares = TransposeAntiDiagonal(squares);
  return squares;
}

Bitboard UndoTransform(Bitboard squares, int transform) {
  if (transform & 4) squares = TransposeAntiDiagonal(squares);
  if (transform & 2) squares = MirrorRanks(squares);
  if (transform & 1) squares = FlipFiles(squares);
  return squares;
}

PiecePlanes DecodePiecePlanes(const V6TrainingRecord& record, int step) {
  const int transform = RecordTransform(record);
  PiecePlanes planes;
  for (int i = 0; i < 12; ++i) {
    planes[i] = UndoTransform(
        SquaresOfStoredPlane(record.planes[step * 13 + i]), transform);
  }
  return planes;
}

}  // namespace sluice::lc0::rescorer
