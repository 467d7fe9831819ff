"""Two processes (gloo on the CPU) compute the one-process update of the same trials.

One step of ``tiny_kuhn_robust`` under ``accelerate launch`` with two processes, each playing
its half of the trials, the trials one process plans for the same rows (tasks, agent seeds): the
advantages (batch-scaled, with the legal-move entropy bonus: both read statistics of the whole
batch) and the gradient DDP averages equal those one process computes from all the rows
together. The benchmark (``python -m benchmarks trainer --processes``) adds resume and
timing; docs/training.md says what each showed.
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("accelerate")

from benchmarks.trainer_processes import capture_command, compare, launch  # noqa: E402


@pytest.mark.skipif(not torch.distributed.is_gloo_available(), reason="no gloo backend")
def test_two_processes_compute_the_one_process_update_of_the_same_trials(tmp_path):
    launch(capture_command("tiny_kuhn_robust", tmp_path, 8), processes=2)
    result = compare("tiny_kuhn_robust", tmp_path, 8)
    assert result["processes"] == 2 and result["trials"] == 16
    assert result["same_trials"] == 1.0  # the tasks, agent seeds, opponents of one process's
    assert result["advantage_difference"] < 1e-9
    assert result["gradient_norm"] > 1e-3 and result["gradient_difference"] < 1e-5
