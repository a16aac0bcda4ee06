// Fuzzes the text-format pipeline config: parsing, then building every
// stage through the factory (without starting the pipeline). Any input must
// end in a config or an error status, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/pipeline.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "stages/stage_factory.h"

namespace {

// Keeps parse errors off stderr: they are expected here.
class Silent : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, int, const std::string&) override {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMaxConfigBytes = 64 << 10;
  if (size > kMaxConfigBytes) return 0;
  sluice::DataLoaderConfig config;
  google::protobuf::TextFormat::Parser parser;
  parser.SetRecursionLimit(32);
  Silent silent;
  parser.RecordErrorsTo(&silent);
  if (!parser.ParseFromString(
          std::string(reinterpret_cast<const char*>(data), size), &config)) {
    return 0;
  }
  sluice::Pipeline pipeline(sluice::CreateStage);
  (void)pipeline.Configure(config);
  return 0;
}
