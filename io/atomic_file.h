// AtomicFileWriter: writes a file so that readers of its directory see
// either nothing or the whole file: the bytes go to a hidden temporary
// (".NAME.tmp") in the same directory, which Commit() fsyncs and renames to
// NAME, then fsyncs the directory.
//
//   SLUICE_ASSIGN_OR_RETURN(auto file, AtomicFileWriter::Create(dir, name));
//   SLUICE_RETURN_IF_ERROR(file.Append(header));
//   SLUICE_RETURN_IF_ERROR(file.Commit());
//
// A writer destroyed, or failing, before Commit() succeeds removes its
// temporary: no litter after an error such as a full disk.
#ifndef SLUICE_IO_ATOMIC_FILE_H_
#define SLUICE_IO_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice {

class AtomicFileWriter {
 public:
  // Opens (truncating) the temporary for `dir`/`name`.
  static absl::StatusOr<AtomicFileWriter> Create(const std::string& dir,
                                                 const std::string& name);
  // The same for the file at `path` (its directory, "." when it has none,
  // and its name).
  static absl::StatusOr<AtomicFileWriter> CreateForPath(
      const std::string& path);

  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  // Removes the temporary unless committed.
  ~AtomicFileWriter();

  // Appends `bytes`; on error (e.g. ENOSPC) removes the temporary.
  absl::Status Append(std::string_view bytes);
  // fsync, rename into place, fsync the directory. On error removes the
  // temporary. Call at most once.
  absl::Status Commit();

  // The hidden temporary's name for a final file called `name`.
  static std::string TempName(const std::string& name);

 private:
  AtomicFileWriter(int fd, std::string dir, std::string name);
  absl::Status Fail(std::string_view what);

  int fd_ = -1;
  std::string dir_;
  std::string name_;
};

// Writes `bytes` to `dir`/`name` with an AtomicFileWriter.
absl::Status WriteFileAtomically(const std::string& dir,
                                 const std::string& name,
                                 std::string_view bytes);

// OK when an AtomicFileWriter can write the file at `path` now: `path` is
// not a directory, its directory exists, and a file can be created there
// (the temporary is created and removed again). Otherwise InvalidArgument
// saying why in a user's words ("the directory /x does not exist",
// "Permission denied").
absl::Status CheckFileWritable(const std::string& path);

// Reads the whole file at `path`; NotFound when it does not exist.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace sluice

#endif  // SLUICE_IO_ATOMIC_FILE_H_
