// The lc0 V6 training record: one position of a self-play game, 8356 bytes,
// little-endian and packed, as written by lc0 (see FORMAT.md in the project
// docs). Older records (V3/V4/V5) are up-converted to this layout before use
// (record_upconvert.h); their `version` field keeps its old value.
#ifndef SLUICE_STAGES_LC0_FORMAT_TRAINING_RECORD_H_
#define SLUICE_STAGES_LC0_FORMAT_TRAINING_RECORD_H_

#include <cstddef>
#include <cstdint>

namespace sluice::lc0 {

inline constexpr int kPolicySize = 1858;
inline constexpr int kBitPlanes = 104;
inline constexpr int kInputPlanes = 112;

// Record sizes by version.
inline constexpr size_t kV3RecordSize = 8276;
inline constexpr size_t kV4RecordSize = 8292;
inline constexpr size_t kV5RecordSize = 8308;
inline constexpr size_t kV6RecordSize = 8356;
inline constexpr size_t kV7RecordSize = 8396;

#pragma pack(push, 1)
struct V6TrainingRecord {
  uint32_t version;
  uint32_t input_format;
  float probabilities[kPolicySize];
  uint64_t planes[kBitPlanes];
  uint8_t castling_us_ooo;
  uint8_t castling_us_oo;
  uint8_t castling_them_ooo;
  uint8_t castling_them_oo;
  // Side to move for format 1, en-passant bits for formats >= 3.
  uint8_t side_to_move_or_enpassant;
  uint8_t rule50_count;
  // Bitfield with the invariance bits; also plies_left's stand-in when
  // plies_left is 0.
  uint8_t invariance_info;
  // Pre-V6 game result: 1 win, 0 draw, -1 loss (side to move's view).
  int8_t result;
  float root_q;
  float best_q;
  float root_d;
  float best_d;
  float root_m;
  float best_m;
  float plies_left;
  float result_q;
  float result_d;
  float played_q;
  float played_d;
  float played_m;
  // May be NaN.
  float orig_q;
  float orig_d;
  float orig_m;
  uint32_t visits;
  uint16_t played_idx;
  uint16_t best_idx;
  float policy_kld;
  uint32_t reserved;
};
#pragma pack(pop)

static_assert(sizeof(V6TrainingRecord) == kV6RecordSize);
static_assert(offsetof(V6TrainingRecord, planes) == 7440);
static_assert(offsetof(V6TrainingRecord, castling_us_ooo) == 8272);
static_assert(offsetof(V6TrainingRecord, root_q) == 8280);
static_assert(offsetof(V6TrainingRecord, plies_left) == 8304);
static_assert(offsetof(V6TrainingRecord, result_q) == 8308);
static_assert(offsetof(V6TrainingRecord, orig_q) == 8328);
static_assert(offsetof(V6TrainingRecord, visits) == 8340);
static_assert(offsetof(V6TrainingRecord, played_idx) == 8344);
static_assert(offsetof(V6TrainingRecord, policy_kld) == 8348);
static_assert(offsetof(V6TrainingRecord, reserved) == 8352);

// The V7 record of lczero-training: a V6 record whose `reserved` word
// holds q_st, then 40 more bytes. q_st/d_st are a backward moving average
// of the search's root_q/root_d over the game; opp_played_idx and
// next_played_idx are the played_idx of the next two records (65535 past
// the end). The first 8352 bytes are the V6 layout (version 7).
#pragma pack(push, 1)
struct V7Tail {
  float q_st;
  float d_st;
  uint16_t opp_played_idx;
  uint16_t next_played_idx;
  float reserved[8];
};
#pragma pack(pop)

static_assert(sizeof(V7Tail) == kV7RecordSize - kV6RecordSize + 4);
// Where V7Tail starts inside a V7 record (V6's `reserved`).
inline constexpr size_t kV7TailOffset = 8352;
inline constexpr uint16_t kNoPlayedIdx = 65535;

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_TRAINING_RECORD_H_
