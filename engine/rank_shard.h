// Which rank of a data-parallel run reads an item: stable functions of the
// item's identity (its container's name and its index in it), so that the
// shards of world_size ranks are disjoint, together hold every item, and
// stay the same across runs, machines and thread counts.
//
//   if (ChunkRank(source.name(), index, world_size) != rank) skip;
//   if (RowRank(file_name, row, rows_in_file, world_size) != rank) skip;
//   RowRange mine = RowsOfRank(file_name, rows_in_file, rank, world_size);
#ifndef SLUICE_ENGINE_RANK_SHARD_H_
#define SLUICE_ENGINE_RANK_SHARD_H_

#include <cstdint>
#include <string_view>

#include "engine/stable_hash.h"

namespace sluice {

// Chunk `index` of container `name` (a tar, or a file of one chunk): the
// chunks of a container go round the ranks from a start that a hash of its
// name picks, so every rank gets within one chunk of its share of each
// container, and single-chunk files spread by their names' hashes.
// `world_size` at least 1.
constexpr uint32_t ChunkRank(std::string_view name, uint64_t index,
                             uint32_t world_size) {
  return static_cast<uint32_t>((Fnv1a64(name) + index) % world_size);
}

// Row `row` of the `rows` rows of file `name`: each rank reads one
// contiguous run of the file's rows, within one row of its share; which
// rank reads the first run is picked by a hash of the name, so that files
// of fewer rows than ranks do not all favour rank 0. `row` < `rows`;
// `world_size` at least 1.
constexpr uint32_t RowRank(std::string_view name, uint64_t row, uint64_t rows,
                           uint32_t world_size) {
  // row * world_size / rows without overflow for any row count.
  const auto run = static_cast<uint64_t>(static_cast<unsigned __int128>(row) *
                                         world_size / rows);
  return static_cast<uint32_t>((run + Fnv1a64(name) % world_size) % world_size);
}

// The rows [begin, end) of a file of `rows` rows that RowRank gives to
// `rank`: its one contiguous run, found without visiting the rows (empty
// when the file has fewer rows than ranks and none falls to this one).
struct RowRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};
constexpr RowRange RowsOfRank(std::string_view name, uint64_t rows,
                              uint32_t rank, uint32_t world_size) {
  // RowRank is (run + h) mod world_size with run = floor(row * W / rows):
  // this rank reads run k, the rows from ceil(k * rows / W) up to
  // ceil((k + 1) * rows / W).
  const uint64_t h = Fnv1a64(name) % world_size;
  const uint64_t k = (rank + world_size - h) % world_size;
  auto first_row_of_run = [&](uint64_t run) {
    return static_cast<uint64_t>(
        (static_cast<unsigned __int128>(run) * rows + world_size - 1) /
        world_size);
  };
  return {first_row_of_run(k), first_row_of_run(k + 1)};
}

}  // namespace sluice

#endif  // SLUICE_ENGINE_RANK_SHARD_H_
