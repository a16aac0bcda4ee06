#!/usr/bin/python3
"""The torch peer of bench/audio_pipeline_benchmark.cc: what an audio-ML
user runs today for the eval pipeline of proto/examples/audio_eval.textproto.

A torch.utils.data.DataLoader(num_workers=N, batch_size=B) over the clips
that the benchmark extracted from its Arrow files with sluice's Arrow reader
(Debian's python3 has no pyarrow): DATA is the clips' encoded bytes
concatenated, DATA.offsets.npy int64 [clips + 1] their boundaries and
DATA.labels.npy int64 [clips] their labels; the workers memory-map DATA.
Per clip, as sluice's eval pipeline does: soundfile decode from bytes
(float32), mean of the channels, torchaudio Resample to 16 kHz (one cached
transforms.Resample per source rate), centre crop or zero-pad on both sides
to 1 s, MelSpectrogram(16000, n_fft=400, hop_length=160, n_mels=64), then
log(max(x, 1e-6)). Batches: spectrogram float32 (B, 64, 101), label and
index int64 (B,), collated by the default collate_fn.

  /usr/bin/python3 bench/audio_torch_peer.py DATA [--workers 2]
      [--batch-size 256]

Prints one JSON line: clips, seconds (from iter() to the last batch, worker
start-up included), clips_per_second, first_batch_seconds, and
steady_clips_per_second (after the first batch).
"""

import argparse
import io
import json
import sys
import time

import numpy as np
import soundfile
import torch
import torchaudio

SAMPLE_RATE = 16000
CLIP_SAMPLES = 16000


class Clips(torch.utils.data.Dataset):
    def __init__(self, data_path):
        self.data = np.memmap(data_path, dtype=np.uint8, mode="r")
        self.offsets = np.load(data_path + ".offsets.npy")
        self.labels = np.load(data_path + ".labels.npy")
        self.resamplers = {}  # per worker process (built lazily)
        self.mel = None

    def __len__(self):
        return len(self.labels)

    def _resample(self, waveform, rate):
        if rate == SAMPLE_RATE:
            return waveform
        resampler = self.resamplers.get(rate)
        if resampler is None:
            resampler = torchaudio.transforms.Resample(rate, SAMPLE_RATE)
            self.resamplers[rate] = resampler
        return resampler(waveform)

    def __getitem__(self, index):
        if self.mel is None:
            self.mel = torchaudio.transforms.MelSpectrogram(
                SAMPLE_RATE, n_fft=400, hop_length=160, n_mels=64)
        begin, end = int(self.offsets[index]), int(self.offsets[index + 1])
        samples, rate = soundfile.read(
            io.BytesIO(self.data[begin:end].tobytes()), dtype="float32",
            always_2d=True)
        waveform = torch.from_numpy(samples.mean(axis=1, dtype=np.float32))
        waveform = self._resample(waveform, rate)
        length = waveform.shape[0]
        if length >= CLIP_SAMPLES:
            start = (length - CLIP_SAMPLES) // 2
            waveform = waveform[start:start + CLIP_SAMPLES]
        else:
            left = (CLIP_SAMPLES - length) // 2
            waveform = torch.nn.functional.pad(
                waveform, (left, CLIP_SAMPLES - length - left))
        spectrogram = torch.log(torch.clamp(self.mel(waveform), min=1e-6))
        return {
            "spectrogram": spectrogram,
            "label": int(self.labels[index]),
            "index": index,
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    dataset = Clips(args.data)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size,
                                         num_workers=args.workers,
                                         shuffle=False)
    clips = 0
    first = None
    start = time.perf_counter()
    for batch in loader:
        if first is None:
            first = time.perf_counter()
            first_clips = len(batch["label"])
        assert tuple(batch["spectrogram"].shape[1:]) == (64, 101)
        assert batch["spectrogram"].dtype == torch.float32
        clips += len(batch["label"])
    end = time.perf_counter()
    if clips != len(dataset):
        sys.exit(f"delivered {clips} of {len(dataset)} clips")
    steady = ((clips - first_clips) / (end - first)
              if end > first and clips > first_clips else 0.0)
    print(json.dumps({
        "clips": clips,
        "workers": args.workers,
        "batch_size": args.batch_size,
        "seconds": end - start,
        "clips_per_second": clips / (end - start),
        "first_batch_seconds": first - start,
        "steady_clips_per_second": steady,
        "torch": torch.__version__,
        "torchaudio": torchaudio.__version__,
    }))


if __name__ == "__main__":
    main()
