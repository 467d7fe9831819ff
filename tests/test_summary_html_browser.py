"""summary.html in a real browser (headless Chromium): it renders, lists the trials, opens one."""

import json

import pytest

from baselines.run import main
from benchmarks.browser_check import chromium, open_page, page_url

pytestmark = pytest.mark.skipif(
    chromium() is None,
    reason="Chromium is absent, so summary.html is not checked in a browser: install it "
    "(Debian: apt-get install --no-install-recommends chromium; .ci/run does) to run this test.",
)


def hostile(observation, info):
    """Answers that try to break the page: markup, a script, then a legal move or nothing."""
    if info.get("phase") == "reflect":
        return "<reflection><img src=x onerror=alert(1)> next time: bet</reflection>"
    if info.get("step_in_episode") == 0 and info.get("episode_index") == 0:
        return "</script><script>document.title='hacked'</script>"  # invalid
    return f"<b>bold?</b> <action>{info['legal_actions'][-1]}</action>"


def test_the_page_renders_without_console_errors_and_lists_and_opens_the_trials(tmp_path):
    out = tmp_path / "run"
    agent = f"python:{__name__}:hostile"
    assert (
        main(["--agent", agent, "--env", "mage/KuhnPoker-v0", "--tasks", "4", "--out", str(out)])
        == 0
    )
    assert main(["--env", "mage/KuhnPoker-v0", "--tasks", "3", "--out", str(out)]) == 0  # 2 agents
    assert main(["report", str(out)]) == 0
    ids = [json.loads(line)["trial_id"] for line in (out / "results.jsonl").open()]
    shot = tmp_path / "page.png"
    page = open_page(page_url(out / "summary.html", ids[0]), screenshot=shot, window=(1400, 2000))
    assert page.console == []
    assert sorted(page.listed_trials()) == sorted(ids) and len(ids) == 7
    assert "<title>Evaluation</title>" in page.dom  # the hostile answers changed nothing
    assert page.dom.count('class="attempt"') == 3  # the trial opened: its attempts side by side
    assert 'class="turn play invalid"' in page.dom and 'class="turn reflect"' in page.dom
    assert "&lt;/script&gt;&lt;script&gt;" in page.dom  # shown as text, not run
    assert '<img src="x"' not in page.dom and "Invalid move: " in page.dom
    assert "Hidden from the agent" in page.dom and "opponent_card" in page.dom
    assert '<a href="transcripts.jsonl.gz">' in page.dom
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def lone_surrogates(observation, info):
    """Answers holding lone UTF-16 surrogates (an answer cut inside a character), then a move."""
    if info.get("phase") == "reflect":
        return "<reflection>\udcff half \ud83d</reflection>"
    return f"\udcff half \ud83d <action>{info['legal_actions'][-1]}</action>"


def test_a_transcript_with_lone_surrogates_renders_and_its_dom_reads(tmp_path):
    out = tmp_path / "run"
    agent = f"python:{__name__}:lone_surrogates"
    argv = ["--agent", agent, "--env", "mage/KuhnPoker-v0", "--tasks", "2", "--no-plots"]
    assert main([*argv, "--out", str(out)]) == 0
    trial_id = json.loads((out / "results.jsonl").read_text().splitlines()[0])["trial_id"]
    page = open_page(page_url(out / "summary.html", trial_id))  # --dump-dom crashed on these
    assert page.console == [] and page.dom.count('class="attempt"') == 3
    assert "\ufffd half \ufffd " in page.dom  # each lone surrogate shown as U+FFFD


# Appended to a copy of the page: lists the table headers whose right edge lies past the window.
PAST_EDGE_PROBE = """<script>
addEventListener("load", () => setTimeout(() => {
  const past = [...document.querySelectorAll("#tables th")]
    .filter((th) => th.getBoundingClientRect().right > innerWidth)
    .map((th) => th.textContent);
  document.body.dataset.pastEdge = JSON.stringify(past);
}, 0));
</script>"""


def junk(observation, info):
    return "I am not sure."


def test_the_key_columns_stay_on_a_1400_px_screen(tmp_path):
    import html
    import re

    out = tmp_path / "run"
    argv = ["--config", "mage_kuhn", "--agent", f"python:{__name__}:junk", "--agent", "random"]
    assert main([*argv, "--tasks", "2", "--no-plots", "--out", str(out)]) == 0
    page = (out / "summary.html").read_text(encoding="utf-8")
    probe = out / "probe.html"
    probe.write_text(page.replace("</body>", PAST_EDGE_PROBE + "</body>"), encoding="utf-8")
    dom = open_page(page_url(probe), window=(1400, 1000)).dom
    past = json.loads(html.unescape(re.search(r'data-past-edge="([^"]*)"', dom).group(1)))
    key = {"agent", "final return", "final return, published scoring", "W/D/L", "invalid"}
    key |= {"forfeit", "% of achievable"}
    assert not key & set(past), past
    narrow = open_page(page_url(probe), window=(700, 1000)).dom  # the probe itself works
    assert "% of achievable" in html.unescape(re.search(r'data-past-edge="([^"]*)"', narrow)[1])
