#include "checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace trainer {
namespace {

torch::Tensor BytesTensor(const std::string& bytes) {
  return torch::from_blob(const_cast<char*>(bytes.data()),
                          {static_cast<int64_t>(bytes.size())}, torch::kUInt8)
      .clone();
}

std::string TensorBytes(const torch::Tensor& tensor) {
  const torch::Tensor bytes = tensor.contiguous();
  return std::string(static_cast<const char*>(bytes.data_ptr()), bytes.numel());
}

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Writes `bytes` to `path` through `path`.tmp, fsync and rename.
void WriteAtomically(const std::string& path, const std::string& bytes) {
  const std::string temporary = path + ".tmp";
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw CheckpointError(ErrnoText("cannot create", temporary));
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n =
        ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string error = ErrnoText("cannot write", temporary);
      ::close(fd);
      throw CheckpointError(error);
    }
    written += n;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    throw CheckpointError(ErrnoText("cannot sync", temporary));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    throw CheckpointError(ErrnoText("cannot rename to", path));
  }
  // The rename itself is durable once the directory is synced.
  std::string directory = std::filesystem::path(path).parent_path().string();
  if (directory.empty()) directory = ".";
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace

void SaveCheckpoint(const std::string& path, const CheckpointState& state,
                    const torch::nn::Module& model,
                    const torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("step", torch::tensor(state.step, torch::kInt64));
  archive.write("loader", BytesTensor(state.loader));
  archive.write("settings", BytesTensor(state.settings));
  std::string bytes;
  archive.save_to([&bytes](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  WriteAtomically(path, bytes);
}

TrainerCheckpoint::TrainerCheckpoint(
    std::string path, std::unique_ptr<torch::serialize::InputArchive> archive,
    CheckpointState state)
    : path_(std::move(path)),
      archive_(std::move(archive)),
      state_(std::move(state)) {}

TrainerCheckpoint TrainerCheckpoint::Read(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw CheckpointError("no checkpoint at " + path);
  }
  auto archive = std::make_unique<torch::serialize::InputArchive>();
  CheckpointState state;
  try {
    archive->load_from(path);
    torch::Tensor step, loader, settings;
    archive->read("step", step);
    archive->read("loader", loader);
    archive->read("settings", settings);
    state = {.step = step.item<int64_t>(),
             .loader = TensorBytes(loader),
             .settings = TensorBytes(settings)};
  } catch (const c10::Error& error) {
    throw CheckpointError(
        path + " is no trainer checkpoint: " + error.what_without_backtrace());
  }
  return TrainerCheckpoint(path, std::move(archive), std::move(state));
}

void TrainerCheckpoint::Restore(const std::string& settings,
                                torch::nn::Module& model,
                                torch::optim::Optimizer& optimizer) {
  if (settings != state_.settings) {
    throw CheckpointError(path_ + " holds the model '" + state_.settings +
                          "', not '" + settings + "' (use the same flags)");
  }
  try {
    torch::serialize::InputArchive model_archive;
    archive_->read("model", model_archive);
    model.load(model_archive);
    torch::serialize::InputArchive optimizer_archive;
    archive_->read("optimizer", optimizer_archive);
    optimizer.load(optimizer_archive);
  } catch (const c10::Error& error) {
    throw CheckpointError("cannot restore from " + path_ + ": " +
                          error.what_without_backtrace());
  }
}

}  // namespace trainer
