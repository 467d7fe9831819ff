"""The Minesweeper deduction helper against hand cases and brute-force enumeration of layouts."""

import itertools
import random

import numpy as np
import pytest

from mage_envs.puzzles import MinesweeperBoard, deduce, has_deducible_safe_move

U = -1  # unopened


def _cells(facts):
    return sorted(facts.safe), sorted(facts.mines)


def test_one_two_pattern_by_hand():
    # Bottom row open: 1 2 1 under three unopened cells. The 2 needs two of the three; each 1
    # allows only one among its two neighbours, so the corners are the mines.
    view = np.array([[U, U, U], [1, 2, 1]])
    assert _cells(deduce(view, num_mines=2)) == ([(0, 1)], [(0, 0), (0, 2)])


def test_the_mine_total_decides_unconstrained_cells():
    # The 1 fixes one mine among (0,1),(1,1); with one mine in all, the far column is safe.
    view = np.array([[1, U, U], [1, U, U]])
    assert _cells(deduce(view, num_mines=1)) == ([(0, 2), (1, 2)], [])
    # With two mines, the second must be in the far column, whose cells stay unknown.
    assert _cells(deduce(view, num_mines=2)) == ([], [])


def test_zero_means_all_neighbours_safe_and_nothing_known_without_numbers():
    view = np.array([[0, U, U], [U, U, U]])
    assert _cells(deduce(view, num_mines=1)) == ([(0, 1), (1, 0), (1, 1)], [])
    assert deduce(np.array([[U, U], [U, U]]), num_mines=1).safe == frozenset()
    assert not has_deducible_safe_move(np.array([[U, U], [U, U]]), num_mines=1)


@pytest.mark.parametrize(
    ("view", "mines"),
    [
        (np.array([[3, U], [U, U]]), 2),  # three mines around, but only two on the board
        (np.array([[2, U], [0, 0]]), 1),  # a 2 with one unopened neighbour
        (np.array([[1, 0], [U, U]]), 1),  # 1 and 0 disagree about the bottom row
    ],
)
def test_inconsistent_views_are_reported(view, mines):
    with pytest.raises(ValueError):
        deduce(view, num_mines=mines)


def _brute_force(view, num_mines):
    """Safe and mine cells over every layout of ``num_mines`` mines that fits ``view``."""
    h, w = view.shape
    unknown = [(r, c) for r in range(h) for c in range(w) if view[r, c] < 0]
    can_mine, can_safe, any_fit = set(), set(), False
    for layout in itertools.combinations(unknown, num_mines):
        mines = np.zeros((h, w), dtype=bool)
        for cell in layout:
            mines[cell] = True
        counts = MinesweeperBoard(mines).counts
        opened = view >= 0
        if (counts[opened] == view[opened]).all():
            any_fit = True
            can_mine.update(layout)
            can_safe.update(set(unknown) - set(layout))
    assert any_fit
    return sorted(set(unknown) - can_mine), sorted(set(unknown) - can_safe)


def _random_positions(count, seed):
    """Views reached by opening random safe cells on random small boards."""
    rng = random.Random(seed)
    for _ in range(count):
        h, w = rng.choice([(3, 4), (4, 4), (3, 5), (4, 5)])
        mines = rng.randint(2, 5)
        board, click = MinesweeperBoard.generate(rng.randrange(10**6), h, w, mines)
        board.reveal(*click)
        for _ in range(rng.randint(0, 3)):
            closed = [
                (r, c)
                for r in range(h)
                for c in range(w)
                if not board.opened[r, c] and not board.mines[r, c]
            ]
            if len(closed) > 1:
                board.reveal(*rng.choice(closed))
        yield board


def test_deduction_equals_brute_force_on_random_boards():
    informative = 0
    for board in _random_positions(100, seed=1):
        view = board.view()
        expected = _brute_force(view, board.num_mines)
        assert _cells(deduce(view, board.num_mines)) == expected
        informative += bool(expected[0] or expected[1])
    assert informative > 30  # many positions have something to deduce


def test_deduced_safe_cells_are_never_mines_on_larger_boards():
    for board in _random_positions(40, seed=2):
        facts = deduce(board.view(), board.num_mines)
        assert not any(board.mines[cell] for cell in facts.safe)
        assert all(board.mines[cell] for cell in facts.mines)
    rng = random.Random(3)
    for _ in range(20):
        board, click = MinesweeperBoard.generate(rng.randrange(10**6), 8, 8, 10)
        board.reveal(*click)
        facts = deduce(board.view(), 10)
        assert not any(board.mines[cell] for cell in facts.safe)
        assert all(board.mines[cell] for cell in facts.mines)


def test_flags_are_treated_as_unopened():
    board = MinesweeperBoard(np.array([[0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0]], dtype=bool))
    board.toggle_flag(2, 3)  # a wrong flag: the player's guess must not count as a fact
    board.reveal(2, 0)  # the cascade stops at the flag
    assert board.view()[2, 3] == -2
    facts = deduce(board.view(), num_mines=1)
    assert _cells(facts) == ([(2, 3)], [(0, 3)])


def test_budget_error_is_clear():
    view = np.full((6, 6), U)
    view[0, :] = 1
    with pytest.raises(RuntimeError, match="max_nodes"):
        deduce(view, num_mines=6, max_nodes=5)
