"""The ``train`` command of ``python -m baselines.run``: a model trained on trials (TRL underneath).

``command`` is the command (its flags generated from ``MetaRLConfig`` by ``flags``), ``config``
reads a training config (``base:`` chains, ready configs in ``baselines/configs/train/``),
``check`` is ``train --check`` (with ``trial_shape``'s measured pages and ``refusals``, what the
machine cannot run), ``folder`` plans the output folder (resume, restart, final model), ``output``
writes its curves and resolved config, and ``processes`` says which process of a launch writes.

It may import the shared modules at the top of ``baselines``, the ``report`` room (the training
folder's page), ``mage_agents`` and ``mage_envs``; no other room of ``baselines``. Importing the
room is light: torch and TRL load when ``command`` runs.
"""
