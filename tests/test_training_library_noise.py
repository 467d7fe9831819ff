import warnings

import pytest

pytest.importorskip("trl")


def test_a_config_hands_checkpointing_over_without_a_deprecation_warning(tmp_path):
    from mage_agents.training import MetaRLConfig

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = MetaRLConfig(output_dir=str(tmp_path), use_cpu=True, gradient_checkpointing=True)
    renames = [w for w in caught if "gradient_checkpointing" in str(w.message)]
    assert renames == []
    assert config.gradient_checkpointing is True  # TRL's name still reads the setting
    if hasattr(config, "activation_checkpointing"):
        assert config.activation_checkpointing is True


def test_bars_are_off_inside_the_block_and_restored_after():
    from transformers.utils import logging as hf_logging

    from mage_agents.training.library_noise import library_bars_off

    hf_logging.enable_progress_bar()
    with library_bars_off():
        assert not hf_logging.is_progress_bar_enabled()
    assert hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    with library_bars_off():
        pass
    assert not hf_logging.is_progress_bar_enabled()  # off before, off after
    hf_logging.enable_progress_bar()


def test_the_rename_filter_matches_transformers_messages():
    import re

    from mage_agents.training.library_noise import RENAME_WARNING

    for name in ("gradient_checkpointing", "is_gradient_checkpointing"):
        assert re.match(RENAME_WARNING, f"`{name}` is deprecated and will be removed in v6.")
    assert not re.match(RENAME_WARNING, "`max_length` is deprecated")
