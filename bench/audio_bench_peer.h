// The audio benchmark's peer: a torch DataLoader doing the same work
// (bench/audio_torch_peer.py under /usr/bin/python3).
#ifndef SLUICE_BENCH_AUDIO_BENCH_PEER_H_
#define SLUICE_BENCH_AUDIO_BENCH_PEER_H_

#include <string>

namespace sluice::audio_bench {

// What the peer measured, or its output when it failed.
struct PeerResult {
  bool ok = false;
  double clips_per_second = 0;
  double first_batch_seconds = 0;
  std::string message;
};

// Runs the peer on `data` (WritePeerData): 2 workers, batches of
// kBatchSize.
PeerResult RunPeer(const std::string& data);

// The peer's script is there and python3 has torch, torchaudio,
// soundfile and numpy.
bool PeerAvailable();

}  // namespace sluice::audio_bench

#endif  // SLUICE_BENCH_AUDIO_BENCH_PEER_H_
