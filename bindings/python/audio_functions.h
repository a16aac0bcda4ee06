// The audio building blocks as plain functions of `sluice._sluice`, for
// users who want one step outside a pipeline and for the reference tests
// (decoding against soundfile, spectrograms against torchaudio).
#ifndef SLUICE_BINDINGS_PYTHON_AUDIO_FUNCTIONS_H_
#define SLUICE_BINDINGS_PYTHON_AUDIO_FUNCTIONS_H_

#include "pybind11/pybind11.h"

namespace sluice::python {

// Decoding and resampling (stages/audio/codec/).
void RegisterAudioCodecFunctions(pybind11::module_& module);
// Crop/pad and spectrograms (stages/audio/dsp/).
void RegisterAudioDspFunctions(pybind11::module_& module);

}  // namespace sluice::python

#endif  // SLUICE_BINDINGS_PYTHON_AUDIO_FUNCTIONS_H_
