"""Config forms, the lc0 pipeline builder, and every ValueError case."""

import pytest
from google.protobuf import text_format

import sluice

# Quick enough for the installed-wheel check of scripts/test.sh.
pytestmark = pytest.mark.smoke

COUNTING_TEXT = """
worker_threads: 1
stage { name: "numbers" counting_source { count: 50 start: 7 } }
"""


def counting_config():
    config = sluice.DataLoaderConfig()
    text_format.Parse(COUNTING_TEXT, config)
    return config


def drain(config):
    with sluice.DataLoader(config) as loader:
        return list(loader)


@pytest.mark.parametrize("form", ["message", "bytes", "text"])
def test_every_config_form_round_trips(form):
    config = counting_config()
    given = {
        "message": config,
        "bytes": config.SerializeToString(),
        "text": text_format.MessageToString(config),
    }[form]
    loader = sluice.DataLoader(given)
    assert loader.config == config
    assert isinstance(loader.config, sluice.DataLoaderConfig)
    with loader:
        assert list(loader) == list(range(7, 57))
        assert loader.get_next() is None


def test_config_is_copied():
    config = counting_config()
    loader = sluice.DataLoader(config)
    config.seed = 99
    assert loader.config.seed == 0
    loader.config.seed = 5
    assert loader.config.seed == 0


def test_other_types_raise_type_error():
    with pytest.raises(TypeError, match="DataLoaderConfig"):
        sluice.DataLoader(42)


def test_lc0_pipeline_sets_the_options(tmp_path):
    config = sluice.lc0_pipeline(tmp_path, batch_size=64, chunk_pool_size=10,
                                 reservoir=100, min_fill=20, seed=9,
                                 threads=2, input_format=3)
    assert isinstance(config, sluice.DataLoaderConfig)
    assert config.seed == 9 and config.worker_threads == 2
    stages = {stage.name: stage for stage in config.stage}
    assert list(stages["files"].file_path_provider.directory) == [
        str(tmp_path)
    ]
    assert stages["pool"].shuffling_chunk_pool.chunk_pool_size == 10
    assert stages["sampler"].shuffling_frame_sampler.reservoir_size == 100
    assert stages["sampler"].shuffling_frame_sampler.min_fill == 20
    assert stages["tensors"].tensor_generator.batch_size == 64
    assert stages["tensors"].tensor_generator.input_format == 3
    assert stages["unpacker"].chunk_unpacker.input_format == 3
    # Every form of the builder's config builds a loader.
    for form in (config, config.SerializeToString(),
                 text_format.MessageToString(config)):
        assert sluice.DataLoader(form).config == config


def test_lc0_pipeline_modes(tmp_path):
    train = sluice.lc0_pipeline([tmp_path, tmp_path / "b"])
    assert list(train.stage[0].file_path_provider.directory) == [
        str(tmp_path), str(tmp_path / "b")
    ]
    evaluation = sluice.lc0_pipeline(tmp_path, mode="eval")
    pools = [s for s in evaluation.stage if s.HasField("shuffling_chunk_pool")]
    assert pools[0].shuffling_chunk_pool.single_pass


# (config text, substrings the ValueError must contain)
BAD_CONFIGS = {
    "unknown stage type": (
        'stage { name: "a" magic_source {} }', ["magic_source"]),
    "no stage config": (
        'stage { name: "a" }', ["stage 'a'", "counting_source"]),
    "two stage configs": (
        'stage { name: "a" counting_source {} pass_through {} }',
        ["stage 'a'", "counting_source", "pass_through"]),
    "unknown input": (
        'stage { name: "a" counting_source {} }'
        'stage { name: "b" input: "nope" pass_through {} }',
        ["stage 'b'", "nope"]),
    "duplicate name": (
        'stage { name: "a" counting_source {} }'
        'stage { name: "a" counting_source {} }', ["stage 'a'", "name"]),
    "zero capacity": (
        'stage { name: "a" counting_source {} output { capacity: 0 } }',
        ["stage 'a'", "capacity"]),
    "zero metrics interval": (
        'metrics_interval_seconds: 0 stage { name: "a" counting_source {} }',
        ["metrics_interval_seconds"]),
    "unknown output": (
        'stage { name: "a" counting_source {} } output: "a.nope"', ["nope"]),
    "bad text": ('stage { name: "a" ', ["DataLoaderConfig"]),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_configs_raise_value_error(case):
    text, expected = BAD_CONFIGS[case]
    with pytest.raises(ValueError) as raised:
        sluice.DataLoader(text)
    assert isinstance(raised.value, sluice.ConfigError)
    for part in expected:
        assert part in str(raised.value)


def lc0_with(directory, edit):
    config = sluice.lc0_pipeline(directory, reservoir=100, min_fill=10)
    stages = {stage.name: stage for stage in config.stage}
    edit(stages)
    return config


def test_zero_batch_size_names_the_stage(tmp_path):
    config = lc0_with(
        tmp_path, lambda s: setattr(s["tensors"].tensor_generator,
                                    "batch_size", 0))
    with pytest.raises(ValueError, match="tensors.*batch_size"):
        sluice.DataLoader(config)
    with pytest.raises(ValueError, match="batch_size"):
        sluice.lc0_pipeline(tmp_path, batch_size=0)


def test_reservoir_smaller_than_min_fill_names_the_stage(tmp_path):
    with pytest.raises(ValueError, match="sampler.*min_fill"):
        sluice.DataLoader(
            sluice.lc0_pipeline(tmp_path, reservoir=10, min_fill=20))


def test_missing_directory_names_the_stage(tmp_path):
    with pytest.raises(ValueError, match="files.*missing"):
        sluice.DataLoader(sluice.lc0_pipeline(tmp_path / "missing"))


def test_bad_builder_options(tmp_path):
    with pytest.raises(ValueError, match="mode"):
        sluice.lc0_pipeline(tmp_path, mode="test")
    with pytest.raises(ValueError, match="reservoir"):
        sluice.lc0_pipeline(tmp_path, reservoir=-1)
    with pytest.raises(ValueError, match="directory"):
        sluice.lc0_pipeline([])


def test_unknown_output_alias_in_get_next():
    with sluice.DataLoader(COUNTING_TEXT) as loader:
        with pytest.raises(ValueError, match="nope"):
            loader.get_next("nope")


def test_bytes_that_do_not_parse_raise_value_error():
    with pytest.raises(ValueError, match="not a serialized"):
        sluice.DataLoader(b"\xff\xff\xff")
