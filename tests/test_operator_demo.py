"""``voice-hitl demo --operator``: the supervisor's answer (through the service) lets the call
continue; the caller's spoken answers do the rest."""

from __future__ import annotations

import pytest

pytest.importorskip("pocketsphinx", reason="the demo needs the 'speech' extra")

# A whole call (the service, a browser-less supervisor, four recognised turns): 20-40 s on an
# idle 2-core machine, over a minute at load 12 (it timed out at 60 s in CI there). The bound
# only stops a hang; what is checked is the outcome.
pytestmark = pytest.mark.timeout(180)


async def test_the_operator_demo_moves_money_with_the_supervisors_reference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from voice_hitl.demo._operator import REFERENCE, run_operator_demo

    moved = await run_operator_demo(speed=0, port=0, timeout=60)
    out = capsys.readouterr().out
    assert moved == [(REFERENCE, 500.0)]
    assert "operator console: http://127.0.0.1:" in out and "/#token=" in out
    assert '"via": "operator", "actor_id": "supervisor"' in out
