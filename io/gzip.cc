#include "io/gzip.h"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"

namespace sluice::io {
namespace {

// The first output guess when the trailer gives no usable size.
constexpr size_t kMinGuess = 64 << 10;
// No deflate stream decompresses to more than this many bytes per input byte.
constexpr size_t kMaxDeflateRatio = 1032;
// ISA-L counts input and output in uint32: the input must fit, the output
// is fed in slices.
constexpr size_t kMaxStep = std::numeric_limits<uint32_t>::max();

bool HasMagic(std::string_view data) {
  return data.size() >= 2 && static_cast<uint8_t>(data[0]) == 0x1f &&
         static_cast<uint8_t>(data[1]) == 0x8b;
}

// One inflate state per thread: it is 85 KiB, too big for the stack and too
// costly to allocate per chunk.
inflate_state* ThreadState() {
  thread_local std::unique_ptr<inflate_state> state(new inflate_state);
  return state.get();
}

void StartMember(inflate_state* state) {
  isal_inflate_init(state);
  state->crc_flag = ISAL_GZIP;  // parse the header, verify CRC32 and ISIZE
}

const char* IsalError(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK:
      return "invalid deflate block";
    case ISAL_INVALID_SYMBOL:
      return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
      return "invalid lookback distance";
    case ISAL_INVALID_WRAPPER:
      return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
      return "unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM:
      return "CRC32 or size mismatch";
    default:
      return "decoder error";
  }
}

// GunzipInto for either buffer type (size, resize keeping the bytes, data).
template <typename Bytes>
absl::Status GunzipIntoBuffer(std::string_view compressed,
                              size_t max_output_bytes, Bytes* out) {
  if (!HasMagic(compressed)) {
    return absl::InvalidArgumentError(
        compressed.empty() ? "not gzip data: the input is empty"
                           : "not gzip data: missing the 1f 8b magic bytes");
  }
  if (compressed.size() > kMaxStep) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gzip input of ", compressed.size(), " bytes is over the 4 GiB limit"));
  }
  // One byte past the limit: producing it proves the output is too big.
  const size_t cap = max_output_bytes == std::numeric_limits<size_t>::max()
                         ? max_output_bytes
                         : max_output_bytes + 1;
  // ISIZE, the input's last 4 bytes, is a single member's output size (mod
  // 2^32); only a guess, as the data may lie or hold several members. The
  // slack lets the decoder see the trailer without another growth step.
  uint32_t isize = 0;
  if (compressed.size() >= sizeof(isize)) {
    std::memcpy(&isize, compressed.data() + compressed.size() - sizeof(isize),
                sizeof(isize));
  }
  // Deflate expands at most ~1032x, which bounds what a lying ISIZE costs.
  // Growing only (never clearing first) spares zero-filling reused bytes.
  const size_t plausible = compressed.size() * kMaxDeflateRatio;
  const size_t guess = std::min(
      {std::max<size_t>(size_t{isize} + 64, kMinGuess), plausible, cap});
  if (out->size() < guess) out->resize(guess);
  size_t produced = 0;

  inflate_state* state = ThreadState();
  StartMember(state);
  state->next_in =
      reinterpret_cast<uint8_t*>(const_cast<char*>(compressed.data()));
  state->avail_in = static_cast<uint32_t>(compressed.size());
  for (;;) {
    // A reused buffer may be larger than the cap: never write past the cap.
    size_t usable = std::min(out->size(), cap);
    if (produced == usable) {
      if (usable >= cap) break;  // over the limit
      out->resize(std::min(std::max(out->size() * 2, kMinGuess), cap));
      usable = out->size();
    }
    const size_t room = std::min(usable - produced, kMaxStep);
    state->next_out = reinterpret_cast<uint8_t*>(out->data() + produced);
    state->avail_out = static_cast<uint32_t>(room);
    const uint32_t avail_in_before = state->avail_in;
    const int rc = isal_inflate(state);
    produced += room - state->avail_out;
    if (rc < 0) {
      return absl::DataLossError(absl::StrCat(
          "corrupt gzip data: ", IsalError(rc), " at input offset ",
          compressed.size() - state->avail_in));
    }
    if (produced > max_output_bytes) break;
    const size_t unread = state->avail_in;
    if (state->block_state == ISAL_BLOCK_FINISH) {
      if (unread == 0) {
        out->resize(produced);
        return absl::OkStatus();
      }
      const uint8_t* next = state->next_in;
      const auto avail = state->avail_in;
      if (!HasMagic(std::string_view(reinterpret_cast<const char*>(next),
                                     std::min<size_t>(avail, 2)))) {
        return absl::DataLossError(absl::StrCat(
            "corrupt gzip data: trailing bytes at offset ",
            compressed.size() - unread, " do not start a gzip member"));
      }
      StartMember(state);  // the next member
      state->next_in = const_cast<uint8_t*>(next);
      state->avail_in = avail;
      continue;
    }
    if (unread == 0 && state->avail_out > 0) {
      return absl::DataLossError(
          absl::StrCat("truncated gzip data: input ended after ",
                       compressed.size(), " bytes, inside a member"));
    }
    if (unread == avail_in_before && state->avail_out == room) {
      // Neither input read nor output written: the decoder is stuck.
      return absl::DataLossError(absl::StrCat(
          "corrupt gzip data: the decoder stalled at input offset ",
          compressed.size() - unread));
    }
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("gzip output exceeds the limit of ", max_output_bytes,
                   " bytes (max_output_bytes)"));
}

}  // namespace

absl::Status GunzipInto(std::string_view compressed, size_t max_output_bytes,
                        std::string* out) {
  return GunzipIntoBuffer(compressed, max_output_bytes, out);
}

absl::Status GunzipInto(std::string_view compressed, size_t max_output_bytes,
                        RecycledBytes* out) {
  return GunzipIntoBuffer(compressed, max_output_bytes, out);
}

absl::StatusOr<std::string> Gunzip(std::string_view compressed,
                                   size_t max_output_bytes) {
  std::string out;
  absl::Status status = GunzipInto(compressed, max_output_bytes, &out);
  if (!status.ok()) return status;
  return out;
}

}  // namespace sluice::io
