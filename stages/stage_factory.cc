#include "stages/stage_factory.h"

#include "absl/strings/str_cat.h"
#include "stages/audio/audio_decoder.h"
#include "stages/audio/crop_or_pad_stage.h"
#include "stages/audio/spectrogram_stage.h"
#include "stages/batch_queue/batch_file_reader.h"
#include "stages/batch_queue/batch_file_writer.h"
#include "stages/generic/arrow_source.h"
#include "stages/generic/batcher.h"
#include "stages/generic/counting_source.h"
#include "stages/generic/file_path_provider.h"
#include "stages/generic/pass_through.h"
#include "stages/generic/shuffle_buffer.h"
#include "stages/lc0/chunk_rescorer.h"
#include "stages/lc0/chunk_source_loader.h"
#include "stages/lc0/chunk_source_splitter.h"
#include "stages/lc0/chunk_unpacker.h"
#include "stages/lc0/shuffling_chunk_pool.h"
#include "stages/lc0/shuffling_frame_sampler.h"
#include "stages/lc0/tensor_generator.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<Stage>> CreateStage(
    const StageContext& context) {
  switch (context.type_number()) {
    case StageConfig::kCountingSourceFieldNumber:
      return CountingSource::Create(context);
    case StageConfig::kPassThroughFieldNumber:
      return PassThrough::Create(context);
    case StageConfig::kArrowSourceFieldNumber:
      return ArrowSource::Create(context);
    case StageConfig::kShuffleBufferFieldNumber:
      return ShuffleBuffer::Create(context);
    case StageConfig::kBatcherFieldNumber:
      return Batcher::Create(context);
    case StageConfig::kFilePathProviderFieldNumber:
      return FilePathProvider::Create(context);
    case StageConfig::kChunkSourceLoaderFieldNumber:
      return lc0::ChunkSourceLoader::Create(context);
    case StageConfig::kShufflingChunkPoolFieldNumber:
      return lc0::ShufflingChunkPool::Create(context);
    case StageConfig::kChunkSourceSplitterFieldNumber:
      return lc0::ChunkSourceSplitter::Create(context);
    case StageConfig::kChunkRescorerFieldNumber:
      return lc0::ChunkRescorer::Create(context);
    case StageConfig::kChunkUnpackerFieldNumber:
      return lc0::ChunkUnpacker::Create(context);
    case StageConfig::kShufflingFrameSamplerFieldNumber:
      return lc0::ShufflingFrameSampler::Create(context);
    case StageConfig::kTensorGeneratorFieldNumber:
      return lc0::TensorGenerator::Create(context);
    case StageConfig::kBatchFileWriterFieldNumber:
      return batch_queue::BatchFileWriter::Create(context);
    case StageConfig::kBatchFileReaderFieldNumber:
      return batch_queue::BatchFileReader::Create(context);
    case StageConfig::kAudioDecoderFieldNumber:
      return audio::AudioDecoder::Create(context);
    case StageConfig::kCropOrPadFieldNumber:
      return audio::CropOrPadStage::Create(context);
    case StageConfig::kSpectrogramFieldNumber:
      return audio::SpectrogramStage::Create(context);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("stage '", context.name(), "': stage type '", context.type(),
                   "' has no implementation"));
}

}  // namespace sluice
