#include "tests/testing/npz_reader.h"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sluice::testing {
namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr size_t kLocalHeaderBytes = 30;
constexpr uint16_t kZip64ExtraId = 0x0001;

template <typename T>
T Load(const std::string& s, size_t offset) {
  T value;
  std::memcpy(&value, s.data() + offset, sizeof(T));
  return value;
}

absl::StatusOr<std::string> RawInflate(const std::string& in, size_t size) {
  std::string out(size, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
    return absl::InternalError("inflateInit2 failed");
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&zs, Z_FINISH);
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || zs.total_out != size) {
    return absl::InvalidArgumentError("bad deflate data in npz member");
  }
  return out;
}

// The value of `key` in numpy's header dict, e.g. "'<f4'" or "(16, 3)".
std::string HeaderValue(const std::string& header, const std::string& key) {
  const size_t k = header.find("'" + key + "':");
  if (k == std::string::npos) return "";
  size_t start = k + key.size() + 3;
  while (start < header.size() && header[start] == ' ') ++start;
  if (start >= header.size()) return "";
  // A tuple, a quoted string, or a bare word such as False.
  const char open = header[start];
  if (open == '(' || open == '\'') {
    const size_t end = header.find(open == '(' ? ')' : '\'', start + 1);
    if (end == std::string::npos) return "";
    return header.substr(start, end - start + 1);
  }
  const size_t end = header.find_first_of(",}", start);
  if (end == std::string::npos) return "";
  return std::string(
      absl::StripTrailingAsciiWhitespace(header.substr(start, end - start)));
}

}  // namespace

absl::StatusOr<NpyArray> ParseNpy(const std::string& bytes) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return absl::InvalidArgumentError("not an .npy file");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t header_len =
      major == 1 ? Load<uint16_t>(bytes, 8) : Load<uint32_t>(bytes, 8);
  const size_t data_start = 8 + len_bytes + header_len;
  if (data_start > bytes.size()) {
    return absl::InvalidArgumentError("truncated .npy header");
  }
  const std::string header = bytes.substr(8 + len_bytes, header_len);
  if (HeaderValue(header, "fortran_order") != "False") {
    return absl::InvalidArgumentError("fortran_order arrays unsupported");
  }
  NpyArray array;
  array.dtype = std::string(absl::StripSuffix(
      absl::StripPrefix(HeaderValue(header, "descr"), "'"), "'"));
  std::string shape = HeaderValue(header, "shape");
  shape = shape.size() >= 2 ? shape.substr(1, shape.size() - 2) : "";
  int64_t count = 1;
  for (absl::string_view dim : absl::StrSplit(shape, ',', absl::SkipEmpty())) {
    int64_t n;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(dim), &n)) {
      return absl::InvalidArgumentError(absl::StrCat("bad shape: ", shape));
    }
    array.shape.push_back(n);
    count *= n;
  }
  array.data = bytes.substr(data_start);
  const size_t item = array.dtype.size() >= 3 ? array.dtype[2] - '0' : 0;
  if (array.data.size() != static_cast<size_t>(count) * item) {
    return absl::InvalidArgumentError("npy data size does not match shape");
  }
  return array;
}

absl::StatusOr<NpzFile> ReadNpz(const std::string& path) {
  absl::StatusOr<std::string> zip = ReadFileToString(path);
  if (!zip.ok()) return zip.status();
  NpzFile npz;
  size_t pos = 0;
  while (pos + kLocalHeaderBytes <= zip->size() &&
         Load<uint32_t>(*zip, pos) == kLocalHeaderSig) {
    const uint16_t flags = Load<uint16_t>(*zip, pos + 6);
    const uint16_t method = Load<uint16_t>(*zip, pos + 8);
    uint64_t csize = Load<uint32_t>(*zip, pos + 18);
    uint64_t usize = Load<uint32_t>(*zip, pos + 22);
    const uint16_t name_len = Load<uint16_t>(*zip, pos + 26);
    const uint16_t extra_len = Load<uint16_t>(*zip, pos + 28);
    const std::string name = zip->substr(pos + kLocalHeaderBytes, name_len);
    const size_t extra = pos + kLocalHeaderBytes + name_len;
    if (flags & 0x8) {
      return absl::InvalidArgumentError("zip data descriptors unsupported");
    }
    if ((csize == 0xffffffff || usize == 0xffffffff) && extra_len >= 20 &&
        Load<uint16_t>(*zip, extra) == kZip64ExtraId) {
      usize = Load<uint64_t>(*zip, extra + 4);
      csize = Load<uint64_t>(*zip, extra + 12);
    }
    const size_t data = extra + extra_len;
    if (data + csize > zip->size()) {
      return absl::InvalidArgumentError("truncated zip member " + name);
    }
    const std::string packed = zip->substr(data, csize);
    absl::StatusOr<std::string> npy =
        method == 0   ? absl::StatusOr<std::string>(packed)
        : method == 8 ? RawInflate(packed, usize)
                      : absl::InvalidArgumentError("unsupported zip method");
    if (!npy.ok()) return npy.status();
    absl::StatusOr<NpyArray> array = ParseNpy(*npy);
    if (!array.ok()) return array.status();
    npz[std::string(absl::StripSuffix(name, ".npy"))] = *std::move(array);
    pos = data + csize;
  }
  if (npz.empty()) return absl::InvalidArgumentError("no members in " + path);
  return npz;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sluice::testing
