"""Monte Carlo tree search opponents, on OpenSpiel's C++ ``MCTSBot``.

At each move the bot runs ``simulations`` simulations from the current position: it selects
children by UCT, expands one node, estimates it with a random rollout to the end of the game, and
backs the result up; then it plays the most visited move. With ``solve=True`` (MCTS-Solver) proven
wins and losses propagate exactly, so a strong enough bot never walks into a forced loss. It needs
the full state, so it plays perfect-information games only (tic-tac-toe, connect four, ...).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from mage_envs.opponents.base import SeatView, is_perfect_information
from mage_envs.opponents.registry import register_opponent, register_opponent_family

__all__ = ["MCTSOpponent"]


class MCTSOpponent:
    """OpenSpiel's C++ MCTS with random-rollout evaluation, seeded per game.

    Args:
        game: A perfect-information OpenSpiel game.
        simulations: Simulations per move (MAGE trained against 100 and evaluated against 1000).
        uct_c: The UCT exploration constant (1.4, MAGE's; OpenSpiel's examples use 2).
        rollouts: Random rollouts per evaluated leaf.
        solve: Use MCTS-Solver backups (exact values for proven positions).
        max_memory_mb: Memory cap of the search tree.

    Example:
        >>> import pyspiel
        >>> game = pyspiel.load_game("tic_tac_toe")
        >>> bot = MCTSOpponent(game, simulations=100)
        >>> bot.reset(seed=0, player=0)
        >>> bot.name, bot.act(SeatView.from_state(game.new_initial_state(), 0)) in range(9)
        ('mcts-100', True)
    """

    def __init__(
        self,
        game: pyspiel.Game,
        simulations: int = 1000,
        uct_c: float = 1.4,
        rollouts: int = 1,
        solve: bool = True,
        max_memory_mb: int = 1000,
    ) -> None:
        if not is_perfect_information(game):
            raise ValueError(
                f"MCTS needs a perfect-information game; {game} hides information. "
                "Use a CFR or scripted opponent instead."
            )
        if int(simulations) < 1 or int(rollouts) < 1:
            raise ValueError(
                f"simulations and rollouts must be >= 1, not {simulations} and {rollouts}."
            )
        self.game = game
        self.simulations = int(simulations)
        self.name = f"mcts-{self.simulations}"
        self._settings = (float(uct_c), int(rollouts), bool(solve), int(max_memory_mb))
        self._bot: pyspiel.MCTSBot | None = None
        self._evaluator: pyspiel.Evaluator | None = None
        self.reset(None, 0)

    def reset(self, seed: int | None, player: int) -> None:
        """Build a fresh bot whose search and rollouts are seeded from ``seed``."""
        uct_c, rollouts, solve, memory = self._settings
        # Kept off mage_envs.seeds.child_seed on purpose: the seeded MCTS records in the bounds
        # table (docs/opponents.md, checked by tests/test_bounds.py) are these draws.
        bot_seed, rollout_seed = np.random.default_rng(seed).integers(2**31 - 1, size=2)
        # Keep a Python reference so the evaluator lives as long as the bot that calls it.
        self._evaluator = pyspiel.RandomRolloutEvaluator(rollouts, int(rollout_seed))
        self._bot = pyspiel.MCTSBot(
            self.game, self._evaluator, uct_c, self.simulations, memory, solve, int(bot_seed), False
        )

    def act(self, view: SeatView) -> int:
        """Search from ``view.state`` and return the most visited move."""
        if view.state is None:
            raise ValueError(
                "MCTS needs the full state, which only perfect-information views carry."
            )
        return int(self._bot.step(view.state))


register_opponent_family(
    r"mcts-([1-9][0-9]*)",
    lambda match, game: MCTSOpponent(game, simulations=int(match.group(1))),
    words="mcts-N for any N >= 1",
)
for _sims in (100, 1000):  # the two MAGE plays, listed by name
    register_opponent(
        f"mcts-{_sims}",
        lambda game, n=_sims: MCTSOpponent(game, simulations=n),
        is_perfect_information,
        games="perfect-information (tic-tac-toe, connect four, ...)",
        description=f"OpenSpiel's C++ `MCTSBot`, {_sims} simulations a move (`mcts-N`: any N >= 1)",
    )
