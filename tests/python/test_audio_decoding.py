"""decode_audio() and resample() (stages/audio/codec/) against references:
python-soundfile's decoding (mixed to mono by mean) on generated clips and
on real recordings Debian ships, and libsoxr's own soxr_oneshot via ctypes.
"""

import ctypes
import ctypes.util
import glob
import io
import shutil
import subprocess

import numpy as np
import pytest

from sluice import _sluice

soundfile = pytest.importorskip("soundfile", reason="needs python3-soundfile")

QUALITIES = {"quick": 0, "low": 1, "medium": 2, "high": 4, "very_high": 6}
ALSA_WAVS = sorted(glob.glob("/usr/share/sounds/alsa/*.wav"))


def encode(samples, rate, fmt, subtype):
    out = io.BytesIO()
    soundfile.write(out, samples, rate, format=fmt, subtype=subtype)
    return out.getvalue()


def reference(data):
    """soundfile's float32 decoding, mixed to mono by the mean."""
    samples, _ = soundfile.read(io.BytesIO(data), dtype="float32",
                                always_2d=True)
    return samples.mean(axis=1)


def make_signal(frames=12000, channels=2, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(frames) / 16000
    columns = [0.6 * np.sin(2 * np.pi * (300 + 97 * c) * t) +
               0.05 * rng.standard_normal(frames) for c in range(channels)]
    return np.clip(np.stack(columns, axis=1), -1, 1).astype(np.float32)


@pytest.mark.parametrize("fmt,subtype", [
    ("WAV", "PCM_16"), ("WAV", "PCM_24"), ("WAV", "FLOAT"),
    ("FLAC", "PCM_16"), ("FLAC", "PCM_24")])
@pytest.mark.parametrize("channels", [1, 2])
def test_matches_soundfile_on_generated_clips(fmt, subtype, channels):
    data = encode(make_signal(channels=channels), 16000, fmt, subtype)
    decoded = _sluice.decode_audio(data)
    assert decoded.dtype == np.float32
    np.testing.assert_array_equal(decoded, reference(data))


@pytest.mark.skipif(not ALSA_WAVS, reason="no /usr/share/sounds/alsa/*.wav "
                    "(Debian package alsa-utils)")
@pytest.mark.parametrize("path", ALSA_WAVS)
def test_matches_soundfile_on_alsa_recordings(path):
    with open(path, "rb") as f:
        data = f.read()
    np.testing.assert_array_equal(_sluice.decode_audio(data), reference(data))


@pytest.mark.skipif(shutil.which("espeak-ng") is None,
                    reason="espeak-ng is not installed")
def test_matches_soundfile_on_espeak_speech(tmp_path):
    wav = tmp_path / "speech.wav"
    subprocess.run(["espeak-ng", "-w", str(wav),
                    "The quick brown fox jumps over the lazy dog."],
                   check=True, capture_output=True)
    data = wav.read_bytes()
    decoded = _sluice.decode_audio(data)
    assert len(decoded) > 10000
    np.testing.assert_array_equal(decoded, reference(data))
    # The same speech as FLAC, re-encoded by soundfile.
    samples, rate = soundfile.read(io.BytesIO(data), dtype="int16")
    flac = encode(samples, rate, "FLAC", "PCM_16")
    np.testing.assert_array_equal(_sluice.decode_audio(flac), decoded)


class Soxr:
    """soxr_oneshot through ctypes on the system's libsoxr.so.0."""

    class IoSpec(ctypes.Structure):
        _fields_ = [("itype", ctypes.c_int), ("otype", ctypes.c_int),
                    ("scale", ctypes.c_double), ("e", ctypes.c_void_p),
                    ("flags", ctypes.c_ulong)]

    class QualitySpec(ctypes.Structure):
        _fields_ = [("precision", ctypes.c_double),
                    ("phase_response", ctypes.c_double),
                    ("passband_end", ctypes.c_double),
                    ("stopband_begin", ctypes.c_double),
                    ("e", ctypes.c_void_p), ("flags", ctypes.c_ulong)]

    class RuntimeSpec(ctypes.Structure):
        _fields_ = [("log2_min_dft_size", ctypes.c_uint),
                    ("log2_large_dft_size", ctypes.c_uint),
                    ("coef_size_kbytes", ctypes.c_uint),
                    ("num_threads", ctypes.c_uint), ("e", ctypes.c_void_p),
                    ("flags", ctypes.c_ulong)]

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libsoxr.so.0")
        except OSError:
            pytest.skip("libsoxr.so.0 is not installed")
        self.lib.soxr_io_spec.restype = self.IoSpec
        self.lib.soxr_io_spec.argtypes = [ctypes.c_int, ctypes.c_int]
        self.lib.soxr_quality_spec.restype = self.QualitySpec
        self.lib.soxr_quality_spec.argtypes = [ctypes.c_ulong, ctypes.c_ulong]
        self.lib.soxr_runtime_spec.restype = self.RuntimeSpec
        self.lib.soxr_runtime_spec.argtypes = [ctypes.c_uint]
        self.lib.soxr_oneshot.restype = ctypes.c_char_p
        self.lib.soxr_oneshot.argtypes = [
            ctypes.c_double, ctypes.c_double, ctypes.c_uint,
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
            ctypes.c_void_p, ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
            ctypes.POINTER(self.IoSpec), ctypes.POINTER(self.QualitySpec),
            ctypes.POINTER(self.RuntimeSpec)]

    def oneshot(self, samples, in_rate, out_rate, quality):
        samples = np.ascontiguousarray(samples, dtype=np.float32)
        out = np.zeros(len(samples) * out_rate // in_rate + 64, np.float32)
        produced = ctypes.c_size_t(0)
        io_spec = self.lib.soxr_io_spec(0, 0)  # SOXR_FLOAT32_I
        q_spec = self.lib.soxr_quality_spec(QUALITIES[quality], 0)
        rt_spec = self.lib.soxr_runtime_spec(1)
        error = self.lib.soxr_oneshot(
            in_rate, out_rate, 1, samples.ctypes.data, len(samples), None,
            out.ctypes.data, len(out), ctypes.byref(produced),
            ctypes.byref(io_spec), ctypes.byref(q_spec), ctypes.byref(rt_spec))
        assert error is None, error
        return out[:produced.value]


@pytest.fixture(scope="module")
def soxr():
    return Soxr()


@pytest.mark.parametrize("quality", sorted(QUALITIES))
@pytest.mark.parametrize("in_rate,out_rate,frames", [
    (44100, 16000, 44100), (48000, 16000, 12345), (8000, 16000, 999),
    (22050, 16000, 7)])
def test_resample_matches_soxr(soxr, quality, in_rate, out_rate, frames):
    samples = make_signal(frames, channels=1, seed=frames)[:, 0]
    expected = soxr.oneshot(samples, in_rate, out_rate, quality)
    ours = _sluice.resample(samples, in_rate, out_rate, quality=quality)
    assert ours.dtype == np.float32
    assert len(ours) == len(expected) == int(frames * out_rate / in_rate + .5)
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-6)


def test_decode_with_sample_rate_resamples(soxr):
    data = encode(make_signal(channels=2), 44100, "WAV", "PCM_16")
    expected = soxr.oneshot(reference(data), 44100, 16000, "medium")
    decoded = _sluice.decode_audio(data, sample_rate=16000, quality="medium")
    np.testing.assert_allclose(decoded, expected, rtol=0, atol=1e-6)
    # The clip's own rate: no resampling.
    np.testing.assert_array_equal(
        _sluice.decode_audio(data, sample_rate=44100), reference(data))


def test_resample_same_rate_and_bad_arguments():
    samples = np.linspace(-1, 1, 100, dtype=np.float32)
    np.testing.assert_array_equal(_sluice.resample(samples, 8000, 8000),
                                  samples)
    with pytest.raises(ValueError, match="quality must be one of"):
        _sluice.resample(samples, 8000, 16000, quality="best")
    with pytest.raises(ValueError, match="positive"):
        _sluice.resample(samples, 0, 16000)
    with pytest.raises(ValueError, match="1-D"):
        _sluice.resample(samples.reshape(10, 10), 8000, 16000)


def test_refusals_name_the_reason():
    clip = encode(make_signal(16000, channels=1), 16000, "FLAC", "PCM_16")
    cases = {
        "empty_clip": b"",
        "not_audio": b"<html>not found</html>" * 10,
        "truncated": clip[:len(clip) // 2],
    }
    for reason, data in cases.items():
        with pytest.raises(ValueError, match=f"^{reason}: "):
            _sluice.decode_audio(data)
    with pytest.raises(ValueError, match="^too_long: "):
        _sluice.decode_audio(clip, max_seconds=0.5)
    assert len(_sluice.decode_audio(clip, max_seconds=1.0)) == 16000
    wav = bytearray(encode(make_signal(1000, channels=1), 16000, "WAV",
                           "PCM_16"))
    data_at = wav.index(b"data")
    wav[data_at + 4:data_at + 8] = (4000).to_bytes(4, "little")
    with pytest.raises(ValueError, match="^length_mismatch: "):
        _sluice.decode_audio(bytes(wav))
    many = encode(np.zeros((10, 40), np.float32), 16000, "WAV", "PCM_16")
    with pytest.raises(ValueError, match="^too_many_channels: "):
        _sluice.decode_audio(many)
