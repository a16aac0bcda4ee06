"""sluice.Rescorer in the lc0 pipeline: the stage goes between the pool and
the unpacker, rescores the games (tests/data/rescorer: golden lc0 games and
the 3-4-piece Syzygy tables) and reports its counts."""

import pathlib

import pytest

import sluice

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "rescorer"


def rescorer(**options):
    return sluice.Rescorer(syzygy_paths=str(DATA / "tables"), **options)


def test_rescorer_stage_goes_before_the_unpacker():
    config = sluice.lc0_pipeline(
        "/data", rescore=rescorer(deblunder=(0.1, 0.03)))
    names = [stage.name for stage in config.stage]
    assert names.index("rescorer") == names.index("unpacker") - 1
    stage = config.stage[names.index("rescorer")]
    assert list(stage.input) == ["pool"]
    assert list(config.stage[names.index("unpacker")].input) == ["rescorer"]
    assert list(stage.chunk_rescorer.syzygy_paths) == [str(DATA / "tables")]
    assert stage.chunk_rescorer.deblunder.threshold == pytest.approx(0.1)
    assert stage.chunk_rescorer.deblunder.width == pytest.approx(0.03)


def test_bad_rescorer_options_are_config_errors():
    with pytest.raises(sluice.ConfigError):
        sluice.Rescorer(syzygy_paths=[])
    with pytest.raises(sluice.ConfigError):
        sluice.Rescorer(syzygy_paths="/t", deblunder=(0.1,))
    config = sluice.lc0_pipeline(
        str(DATA / "input"),
        rescore=sluice.Rescorer(syzygy_paths="/nonexistent/tables"))
    with pytest.raises(sluice.ConfigError, match="/nonexistent/tables"):
        sluice.DataLoader(config).start()


def test_eval_pass_over_rescored_games():
    config = sluice.lc0_pipeline(
        str(DATA / "input"), mode="eval", batch_size=64, threads=2,
        rescore=rescorer(deblunder=(0.1, 0.03)))
    positions = 0
    with sluice.DataLoader(config) as loader:
        for batch in loader:
            positions += batch.planes.shape[0]
        totals = {stage.name: stage
                  for stage in loader.metrics().total_stage_metrics}
    counts = totals["rescorer"].chunk_rescorer
    assert counts.games == 59
    assert counts.positions_probed > 0
    assert counts.results_changed > 0
    assert counts.blunders > 0
    # Format-1 games only reach the format-1 unpacker; two records of g30
    # are marked for deletion and dropped.
    assert 0 < positions < counts.positions


def test_v7_fields_reach_the_batches():
    config = sluice.lc0_pipeline(
        str(DATA / "input"), mode="eval", batch_size=32, threads=2,
        rescore=rescorer(output_version=7))
    for stage in config.stage:
        if stage.HasField("tensor_generator"):
            stage.tensor_generator.v7_fields = True
    with sluice.DataLoader(config) as loader:
        batch = loader.get_next()
        assert isinstance(batch, sluice.Tensors)
        assert batch.q_st.shape == (32,)
        assert batch.d_st.shape == (32,)
        assert batch.opp_played_idx.shape == (32,)
        assert ((batch.next_played_idx >= 0)
                & (batch.next_played_idx <= 65535)).all()
        assert ((batch.d_st >= 0) & (batch.d_st <= 1)).all()
