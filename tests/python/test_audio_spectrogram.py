"""sluice's spectrograms (stages/audio/dsp/) against torchaudio 0.13, and
crop positions against the audio loader design's formula (seed 004).

Each spectrogram is compared with torchaudio run on the same float32
waveform twice: in float64 (the transforms' exact values) and in float32
(what users run). Tolerances, on the linear values (a log or dB output is
turned back into them first):
- rtol=1e-4 plus atol=1e-6 * max(|reference|), the atol covering bins many
  orders of magnitude below the peak where float32 FFT rounding dominates;
- except mel against torchaudio float32: rtol=3e-4, because torchaudio
  evaluates its filterbank in float32, which moves its own mel energies by
  up to ~2e-4 from its float64 values (sluice's filterbank is computed in
  double: its mel energies agree with float64 to ~1e-6 in the loud bins);
- and on the log outputs themselves, in the bins within 60 dB of the
  (power) peak: 1e-3 absolute in dB; in natural log the linear rtol as an
  absolute tolerance (1e-4; 3e-4 for mel against float32).
Run with -s to print the errors reached.
"""

import pathlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchaudio = pytest.importorskip("torchaudio")

from sluice import _sluice  # noqa: E402

RTOL = 1e-4
MEL_RTOL_FLOAT32 = 3e-4
ATOL_OF_MAX = 1e-6
DB_ATOL = 1e-3
LOG_ATOL = 1e-4
STRONG_POWER_RATIO = 1e-6  # 60 dB below the peak
RECORDING = pathlib.Path("/usr/share/sounds/alsa/Front_Center.wav")


def chirp_and_noise(sample_rate, seconds=1.3, seed=0):
    """A 50 Hz -> 0.45 * sample_rate linear chirp plus white noise at
    -30 dB; 1.3 s so that the length is not a multiple of common hops."""
    t = np.arange(int(sample_rate * seconds)) / sample_rate
    f0, f1 = 50.0, 0.45 * sample_rate
    phase = 2 * np.pi * (f0 * t + (f1 - f0) * t * t / (2 * seconds))
    noise = np.random.default_rng(seed).standard_normal(t.size)
    return (0.5 * np.sin(phase) + 0.015 * noise).astype(np.float32)


def recording():
    """Front_Center.wav mixed down to mono, float32, and its rate."""
    soundfile = pytest.importorskip("soundfile")
    if not RECORDING.exists():
        pytest.skip(f"{RECORDING} not present")
    data, sample_rate = soundfile.read(str(RECORDING), dtype="float32",
                                       always_2d=True)
    return np.ascontiguousarray(data.mean(axis=1, dtype=np.float32)), sample_rate


def torchaudio_reference(waveform, dtype, sample_rate=16000, n_fft=400,
                         win_length=None, hop_length=None, power=2.0,
                         center=True, n_mels=0, f_min=0.0, f_max=None,
                         mel_scale="htk", norm=None, log=None, log_floor=1e-6,
                         top_db=None):
    """The same spectrogram computed by torchaudio (CPU) in `dtype`. The
    transform is built with `dtype` as torch's default, so that the mel
    filterbank, too, is computed in it (converting a float32 transform
    keeps its float32-rounded filterbank)."""
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        if n_mels:
            transform = torchaudio.transforms.MelSpectrogram(
                sample_rate=sample_rate, n_fft=n_fft, win_length=win_length,
                hop_length=hop_length, f_min=f_min, f_max=f_max,
                n_mels=n_mels, power=power, center=center, norm=norm,
                mel_scale=mel_scale)
        else:
            transform = torchaudio.transforms.Spectrogram(
                n_fft=n_fft, win_length=win_length, hop_length=hop_length,
                power=power, center=center)
    finally:
        torch.set_default_dtype(default_dtype)
    with torch.no_grad():
        spec = transform(torch.from_numpy(waveform).to(dtype))
        if log == "log":
            spec = torch.log(torch.clamp(spec, min=log_floor))
        elif log == "db":
            stype = "power" if power == 2.0 else "magnitude"
            spec = torchaudio.transforms.AmplitudeToDB(stype, top_db)(spec)
    return spec.numpy().astype(np.float64)


def linear(values, params):
    """Undoes the log of a spectrogram (clamped values stay clamped)."""
    if params.get("log") == "log":
        return np.exp(values)
    if params.get("log") == "db":
        multiplier = 10.0 if params.get("power", 2.0) == 2.0 else 20.0
        return 10.0 ** (values / multiplier)
    return values


def compare(actual, expected, params, rtol):
    """Asserts the tolerances of the module docstring; returns (max relative
    error of the strong linear bins, max absolute error of the output)."""
    actual = actual.astype(np.float64)
    actual_linear = linear(actual, params)
    expected_linear = linear(expected, params)
    peak = np.abs(expected_linear).max()
    np.testing.assert_allclose(actual_linear, expected_linear, rtol=rtol,
                               atol=ATOL_OF_MAX * peak)
    as_power = expected_linear if params.get("power", 2.0) == 2.0 else (
        expected_linear ** 2)
    strong = as_power >= STRONG_POWER_RATIO * as_power.max()
    if params.get("log"):
        # A relative error r of the linear value is r in natural log.
        atol = DB_ATOL if params["log"] == "db" else max(LOG_ATOL, rtol)
        np.testing.assert_allclose(actual[strong], expected[strong], rtol=0,
                                   atol=atol)
    relative = (np.abs(actual_linear - expected_linear)[strong] /
                np.abs(expected_linear[strong])).max()
    return relative, np.abs(actual - expected).max()


def assert_matches_torchaudio(waveform, params):
    actual = _sluice.spectrogram(waveform, **params)
    assert actual.dtype == np.float32
    for dtype in (torch.float64, torch.float32):
        expected = torchaudio_reference(waveform, dtype, **params)
        assert actual.shape == expected.shape
        rtol = MEL_RTOL_FLOAT32 if (
            dtype == torch.float32 and params.get("n_mels")) else RTOL
        relative, absolute = compare(actual, expected, params, rtol)
        print(f"\n{params} vs torchaudio {dtype}: max relative {relative:.2e}"
              f" (strong bins), max absolute {absolute:.2e}", end="")


PARAMETER_SETS = {
    "defaults": {},
    "400_160_64mel_htk": dict(n_fft=400, hop_length=160, n_mels=64),
    "1024_320_128mel_slaney_norm": dict(
        sample_rate=32000, n_fft=1024, hop_length=320, n_mels=128,
        mel_scale="slaney", norm="slaney"),
    "512_win400_power1": dict(n_fft=512, win_length=400, power=1.0),
    "odd_n_fft": dict(n_fft=401, win_length=300, hop_length=123),
    "center_false_mel": dict(n_fft=400, hop_length=100, center=False,
                             n_mels=40),
    "fmin_fmax": dict(n_fft=512, hop_length=160, n_mels=64, f_min=125.0,
                      f_max=7600.0),
    "log_mel": dict(n_fft=400, hop_length=160, n_mels=64, log="log",
                    log_floor=1e-6),
    "db_mel_top_db": dict(n_fft=1024, hop_length=256, n_mels=128, log="db",
                          top_db=80.0),
    "db_magnitude": dict(n_fft=512, hop_length=128, power=1.0, log="db"),
}


@pytest.mark.parametrize("name", sorted(PARAMETER_SETS))
def test_chirp_matches_torchaudio(name):
    params = PARAMETER_SETS[name]
    waveform = chirp_and_noise(params.get("sample_rate", 16000))
    assert_matches_torchaudio(waveform, params)


@pytest.mark.parametrize("params", [
    dict(n_fft=1024, hop_length=320, n_mels=128),
    dict(n_fft=2048, hop_length=480, n_mels=128, mel_scale="slaney",
         norm="slaney", f_min=20.0),
    dict(n_fft=1024, hop_length=320, n_mels=128, log="db", top_db=80.0),
    dict(n_fft=960, win_length=720, hop_length=240),
], ids=["htk", "slaney_norm", "db", "linear"])
@pytest.mark.filterwarnings("ignore:At least one mel filterbank has all zero")
def test_recording_matches_torchaudio(params):
    waveform, sample_rate = recording()
    assert_matches_torchaudio(waveform, dict(params, sample_rate=sample_rate))


def test_frame_count_is_torchs():
    for length in (201, 1000, 16000, 16159, 16160):
        waveform = chirp_and_noise(16000, seconds=length / 16000)[:length]
        spec = _sluice.spectrogram(waveform, n_fft=400, hop_length=160)
        assert spec.shape == (201, 1 + length // 160)


@pytest.mark.parametrize("kwargs, field", [
    (dict(n_fft=1), "n_fft"),
    (dict(hop_length=0), "hop_length"),
    (dict(n_fft=400, win_length=401), "win_length"),
    (dict(n_mels=64, f_max=8001.0), "f_max"),
    (dict(n_mels=-1), "n_mels"),
    (dict(n_mels=64, mel_scale="mel"), "mel_scale"),
    (dict(n_mels=64, norm="l2"), "norm"),
    (dict(log="log10"), "log"),
    (dict(power=0.5), "power"),
    (dict(top_db=80.0), "top_db"),
])
def test_bad_parameters_raise_value_error_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        _sluice.spectrogram(chirp_and_noise(16000), **kwargs)


def test_bad_waveforms_raise_value_error():
    with pytest.raises(ValueError, match="1-D"):
        _sluice.spectrogram(np.zeros((2, 16000), dtype=np.float32))
    with pytest.raises(ValueError, match="too short"):
        _sluice.spectrogram(np.zeros(200, dtype=np.float32), n_fft=400)


# Crop positions: seed 004's random_crop_or_pad / center_crop_or_pad.
MASK = (1 << 64) - 1


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def seed_crop_start(length, clip_length, seed, index, train):
    """The clip's start by the seed's rules; negative is left padding."""
    if length <= clip_length:
        return 0 if train else -((clip_length - length) // 2)
    max_start = length - clip_length
    if not train:
        return max_start // 2
    mixed = seed ^ (((index & MASK) * 0xD6E8FEB86659FD93) & MASK)
    return splitmix64(mixed) % (max_start + 1)


def test_crop_start_follows_the_seed_formula():
    for seed in (0, 1, 42, 0xDEADBEEF, MASK):
        for index in (0, 1, 7, -1, 123456789, -(1 << 63)):
            for length in (100, 16000, 16001, 48000, 1000003):
                for train in (True, False):
                    assert _sluice.crop_start(length, 16000, seed, index,
                                              train) == seed_crop_start(
                        length, 16000, seed, index, train), (
                        seed, index, length, train)
    # The values the C++ test pins too.
    assert _sluice.crop_start(48000, 16000, 42, 7, True) == 28428
    assert _sluice.crop_start(48000, 16000, 0xDEADBEEF, -1, True) == 29857


def test_new_seed_gives_new_positions():
    starts = [_sluice.crop_start(48000, 16000, 1, i, True) for i in range(200)]
    others = [_sluice.crop_start(48000, 16000, 2, i, True) for i in range(200)]
    assert len(set(starts)) > 190
    assert sum(a == b for a, b in zip(starts, others)) < 5


def test_crop_or_pad_contents():
    waveform = np.arange(1, 101, dtype=np.float32)
    for seed, index in ((3, 0), (3, 1), (99, -5)):
        start = seed_crop_start(100, 30, seed, index, True)
        np.testing.assert_array_equal(
            _sluice.crop_or_pad(waveform, 30, seed, index, True),
            waveform[start:start + 30])
    np.testing.assert_array_equal(
        _sluice.crop_or_pad(waveform, 30, 3, 0, False), waveform[35:65])
    short = np.arange(1, 6, dtype=np.float32)
    np.testing.assert_array_equal(
        _sluice.crop_or_pad(short, 8, 3, 0, True), [1, 2, 3, 4, 5, 0, 0, 0])
    np.testing.assert_array_equal(
        _sluice.crop_or_pad(short, 8, 3, 0, False), [0, 1, 2, 3, 4, 5, 0, 0])
