// The audio benchmark's torch peer (audio_bench_peer.h).
#include "bench/audio_bench_peer.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "bench/audio_bench_common.h"

#ifndef SLUICE_AUDIO_TORCH_PEER
#define SLUICE_AUDIO_TORCH_PEER "bench/audio_torch_peer.py"
#endif

namespace sluice::audio_bench {
namespace {

constexpr char kPython[] = "/usr/bin/python3";

double JsonNumber(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return 0;
  return std::atof(json.c_str() + at + key.size() + 3);
}

}  // namespace

PeerResult RunPeer(const std::string& data) {
  PeerResult result;
  const std::string command =
      absl::StrCat(kPython, " ", SLUICE_AUDIO_TORCH_PEER, " ", data,
                   " --workers 2 --batch-size ", kBatchSize, " 2>&1");
  std::fflush(stdout);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) Die("cannot run the torch peer");
  std::string output;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    output.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  const size_t json = output.rfind("{\"clips\"");
  if (status != 0 || json == std::string::npos) {
    result.message = output;
    return result;
  }
  const std::string line = output.substr(json, output.find('\n', json) - json);
  result.ok = true;
  result.clips_per_second = JsonNumber(line, "clips_per_second");
  result.first_batch_seconds = JsonNumber(line, "first_batch_seconds");
  return result;
}

bool PeerAvailable() {
  const std::string command =
      absl::StrCat(kPython,
                   " -c 'import torch, torchaudio, soundfile, numpy' "
                   ">/dev/null 2>&1");
  return std::filesystem::exists(SLUICE_AUDIO_TORCH_PEER) &&
         std::system(command.c_str()) == 0;
}

}  // namespace sluice::audio_bench
