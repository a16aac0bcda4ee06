// Gunzip throughput of zlib, libdeflate and ISA-L on realistic lc0 chunks
// (and of sluice::io::Gunzip / GunzipInto, which use the fastest). Prints
// MB/s of decompressed output per library as a table, then one JSON line.
// The raw library rows and GunzipInto reuse one output buffer; Gunzip
// returns a fresh string per chunk.
//
//   gzip_benchmark [generator|golden] [chunks] [golden_dir]
//
// generator (default): V6 games of stages/lc0/format/data_generator.h,
// gzipped at zlib's default level as lc0 writes them.
// golden: chunks synthesized from the V6 golden fixtures: 60-250 records
// each, drawn in game order from a random fixture and offset, with the low
// mantissa bits of legal-move probabilities and of the q/d floats
// randomized, recompressed with zlib level 6.
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "io/gzip.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/lc0/format/training_record.h"

namespace {

using sluice::lc0::kV6RecordSize;
using sluice::lc0::V6TrainingRecord;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string GzipLevel6(const std::string& raw) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, raw.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = raw.size();
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = out.size();
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

void Jitter(float* f, std::mt19937_64& rng) {
  uint32_t bits;
  std::memcpy(&bits, f, 4);
  bits = (bits & ~0xfffu) | (rng() & 0xfffu);
  std::memcpy(f, &bits, 4);
}

std::vector<std::string> GeneratedChunks(int count) {
  std::vector<std::string> chunks;
  const sluice::lc0::GeneratorOptions options{.seed = 42, .version = 6};
  for (int c = 0; c < count; ++c) {
    absl::StatusOr<std::string> raw = sluice::lc0::GenerateGame(options, c);
    if (!raw.ok()) return {};
    absl::StatusOr<std::string> gz = sluice::lc0::GzipChunk(*raw);
    if (!gz.ok()) return {};
    chunks.push_back(*std::move(gz));
  }
  return chunks;
}

std::vector<std::string> GoldenChunks(const std::string& dir, int count) {
  std::vector<std::string> fixtures;
  for (const char* name : {"v6_fmt1_a", "v6_fmt1_b", "v6_fmt3", "v6_fmt4",
                           "v6_fmt132", "v6_fmt2"}) {
    absl::StatusOr<std::string> raw =
        sluice::io::Gunzip(ReadFile(dir + "/" + name + ".gz"), 64 << 20);
    if (raw.ok() && !raw->empty()) fixtures.push_back(*std::move(raw));
  }
  std::vector<std::string> chunks;
  if (fixtures.empty()) return chunks;
  std::mt19937_64 rng(42);
  for (int c = 0; c < count; ++c) {
    const std::string& src = fixtures[rng() % fixtures.size()];
    const size_t src_records = src.size() / kV6RecordSize;
    const int records = 60 + rng() % 191;
    std::string chunk;
    size_t r = rng() % src_records;
    for (int i = 0; i < records; ++i, r = (r + 1) % src_records) {
      V6TrainingRecord rec;
      std::memcpy(&rec, src.data() + r * kV6RecordSize, kV6RecordSize);
      for (float& p : rec.probabilities) {
        if (p > 0) Jitter(&p, rng);
      }
      for (float* f : {&rec.root_q, &rec.best_q, &rec.root_d, &rec.best_d,
                       &rec.played_q, &rec.orig_q, &rec.policy_kld}) {
        Jitter(f, rng);
      }
      chunk.append(reinterpret_cast<const char*>(&rec), kV6RecordSize);
    }
    chunks.push_back(GzipLevel6(chunk));
  }
  return chunks;
}

uint32_t Isize(const std::string& gz) {
  uint32_t n;
  std::memcpy(&n, gz.data() + gz.size() - 4, 4);
  return n;
}

size_t ZlibGunzip(const std::string& gz, std::string* out) {
  out->resize(Isize(gz));
  z_stream zs{};
  inflateInit2(&zs, 15 + 16);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = gz.size();
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = out->size();
  const int rc = inflate(&zs, Z_FINISH);
  inflateEnd(&zs);
  return rc == Z_STREAM_END ? zs.total_out : 0;
}

size_t LibdeflateGunzip(libdeflate_decompressor* d, const std::string& gz,
                        std::string* out) {
  out->resize(Isize(gz));
  size_t n = 0;
  return libdeflate_gzip_decompress(d, gz.data(), gz.size(), out->data(),
                                    out->size(), &n) == LIBDEFLATE_SUCCESS
             ? n
             : 0;
}

size_t IsalGunzip(const std::string& gz, std::string* out) {
  out->resize(Isize(gz));
  inflate_state state;
  isal_inflate_init(&state);
  state.crc_flag = ISAL_GZIP;
  state.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(gz.data()));
  state.avail_in = gz.size();
  state.next_out = reinterpret_cast<uint8_t*>(out->data());
  state.avail_out = out->size();
  const int rc = isal_inflate(&state);
  return rc == ISAL_DECOMP_OK && state.block_state == ISAL_BLOCK_FINISH
             ? state.total_out
             : 0;
}

// Decompresses every chunk repeatedly for about a second; returns MB/s of
// output, or 0 when any decompression failed.
double Measure(const std::vector<std::string>& chunks,
               const std::function<size_t(const std::string&)>& gunzip) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  double bytes = 0;
  double seconds = 0;
  do {
    for (const std::string& gz : chunks) {
      const size_t n = gunzip(gz);
      if (n == 0) return 0;
      bytes += n;
    }
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  } while (seconds < 1.0);
  return bytes / seconds / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string source = argc > 1 ? argv[1] : "generator";
  const int count = argc > 2 ? std::atoi(argv[2]) : 64;
  const std::string dir = argc > 3 ? argv[3] : "tests/data/golden";
  const std::vector<std::string> chunks =
      source == "golden" ? GoldenChunks(dir, count) : GeneratedChunks(count);
  if (chunks.empty()) {
    std::fprintf(stderr, "no chunks from source %s\n", source.c_str());
    return 1;
  }
  double raw = 0, packed = 0;
  for (const std::string& gz : chunks) {
    raw += Isize(gz);
    packed += gz.size();
  }
  std::string out;
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  struct Row {
    const char* name;
    double mb_s;
  };
  const Row rows[] = {
      {"zlib", Measure(chunks, [&](auto& gz) { return ZlibGunzip(gz, &out); })},
      {"libdeflate",
       Measure(chunks,
               [&](auto& gz) { return LibdeflateGunzip(d, gz, &out); })},
      {"isal", Measure(chunks, [&](auto& gz) { return IsalGunzip(gz, &out); })},
      {"sluice_gunzip", Measure(chunks,
                                [&](auto& gz) {
                                  auto r = sluice::io::Gunzip(gz, 1 << 30);
                                  return r.ok() ? r->size() : 0;
                                })},
      {"sluice_gunzip_into",
       Measure(chunks,
               [&](auto& gz) {
                 return sluice::io::GunzipInto(gz, 1 << 30, &out).ok()
                            ? out.size()
                            : 0;
               })},
  };
  libdeflate_free_decompressor(d);
  std::printf("%s: %d chunks, %.1f MB raw, ratio %.1fx\n", source.c_str(),
              count, raw / 1e6, raw / packed);
  std::printf("%-18s %10s\n", "library", "MB/s out");
  std::string json = "{\"benchmark\":\"gzip\",\"source\":\"" + source +
                     "\",\"chunks\":" + std::to_string(count) +
                     ",\"ratio\":" + std::to_string(raw / packed);
  for (const Row& row : rows) {
    std::printf("%-18s %10.1f\n", row.name, row.mb_s);
    json +=
        ",\"" + std::string(row.name) + "_mb_s\":" + std::to_string(row.mb_s);
  }
  std::printf("%s}\n", json.c_str());
  return 0;
}
