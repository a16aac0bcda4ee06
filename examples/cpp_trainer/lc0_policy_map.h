// lc0's policy map: where each of the 1858 policy entries (the `probs`
// tensor) sits among the 80 x 8 x 8 outputs of a convolutional policy
// head, as lczero-training's policy map lays them out.
//
//   torch::Tensor gather = torch::tensor(ConvPolicyGather());
//   torch::Tensor logits = conv_out.flatten(1).index_select(1, gather);
//
// The 1858 entries are lc0's move list: for each from-square (a1, b1, ...,
// h8) the squares a queen or a knight could reach from it, in the same
// order (a plain move to the last rank is also the knight promotion), then
// the queen, rook and bishop promotions from the 7th rank. Output plane p
// at square s (s = rank * 8 + file) is AlphaZero's move encoding: planes
// 0-55 queen moves (8 directions N, NE, E, SE, S, SW, W, NW, 1-7 squares),
// 56-63 knight moves, 64-72 rook/bishop/queen promotions to the NW, N and
// NE; planes 73-79 are unused.
#ifndef CPP_TRAINER_LC0_POLICY_MAP_H_
#define CPP_TRAINER_LC0_POLICY_MAP_H_

#include <cstdint>
#include <vector>

namespace trainer {

inline constexpr int kPolicySize = 1858;
inline constexpr int kPolicyPlanes = 80;

// For each policy entry, its index (plane * 64 + square) in the flattened
// (80, 8, 8) head output: 1858 distinct values.
std::vector<int64_t> ConvPolicyGather();

}  // namespace trainer

#endif  // CPP_TRAINER_LC0_POLICY_MAP_H_
