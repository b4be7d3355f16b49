"""Answer links: one-time, expiring, signed links that answer or reject one request through the
operator desk; used once, used twice, expired, tampered, and for a request already settled."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from service_rig import ANN, BOB, TOKENS

from voice_hitl import HumanInputHandler, HumanInputRejectedError
from voice_hitl.board import BoardBridge, BoardRequest, MemoryBoard
from voice_hitl.journal import Journal
from voice_hitl.service import AnswerLinks, LinkInvalidError, create_app
from voice_hitl.service._serve import running_service


@dataclass
class Rig:
    client: httpx.AsyncClient
    bridge: BoardBridge
    board: MemoryBoard
    links: AnswerLinks
    now: list[float]
    journal: Journal

    @property
    def handler(self) -> HumanInputHandler:
        return self.bridge.handler

    async def ask(self, tool: str, arguments: dict[str, object]) -> BoardRequest:
        pending = await self.handler.create(tool, arguments, room_id="room-a", channel_id="phone")
        await self.bridge.drain()
        request = await self.board.get(pending.pending_id)
        assert request is not None
        return request

    def path(self, url: str) -> str:
        return url.removeprefix(self.links.base_url)


@contextlib.asynccontextmanager
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    now = [1_000_000.0]
    links = AnswerLinks(b"link-key-0123456789abcdef", "https://ops.example", clock=lambda: now[0])
    board = MemoryBoard()
    handler = HumanInputHandler()
    journal = Journal.open(tmp_path / "journal.sqlite3", b"links-key")
    journal.attach(handler)
    app = create_app(board, TOKENS, journal=journal, links=links)
    try:
        async with (
            running_service(app) as url,
            BoardBridge(handler, board, worker_id="w-links") as bridge,
            httpx.AsyncClient(base_url=url) as client,
        ):
            yield Rig(client, bridge, board, links, now, journal)
            await handler.close()
    finally:
        await asyncio.to_thread(journal.close)


async def test_a_link_answers_once_and_is_journaled_with_its_holder(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        request = await r.ask("ConfirmAction", {"action": "refund 20 euros"})
        offered = r.links.for_request(request, "chat-ops")
        assert set(offered) == {"yes", "no", "reject"}
        yes = r.path(offered["yes"])
        # Opening it (a chat's link preview, say) shows what it will do, and changes nothing.
        page = await r.client.get(yes)
        assert page.status_code == 200
        assert "refund 20 euros" in page.text and "answer \u201cYes\u201d, once" in page.text
        assert (await r.board.get(request.id)).is_open  # type: ignore[union-attr]
        # The POST answers, through the desk, as the link's holder.
        used = await r.client.post(yes)
        assert used.status_code == 200 and "Answered \u201cYes\u201d" in used.text
        result = json.loads(await r.handler.wait(request.id))
        assert (result["answer"], result["actor_id"]) == (True, "chat-ops")
        settled = await r.board.get(request.id)
        assert settled is not None
        assert (settled.settled_by, settled.settled_via) == ("chat-ops", "link:chat-ops")
        # Used twice: a clear page, nothing changes (for the "no" link of the same request too).
        again = await r.client.post(yes)
        assert again.status_code == 410 and "already used" in again.text
        assert (await r.client.get(yes)).status_code == 410
        no = await r.client.post(r.path(offered["no"]))
        assert no.status_code == 409
        assert "already answered by chat-ops via link:chat-ops" in no.text
        assert "changed nothing" in no.text
        # The journal tells who answered, and how.
        assert await asyncio.to_thread(r.journal.flush)
        story = (
            await r.client.get(
                f"/v1/requests/{request.id}/story", headers={"Authorization": f"Bearer {ANN}"}
            )
        ).json()["entries"]
        vias = {e["data"].get("via") for e in story if e["kind"] in ("board", "settled")}
        assert "link:chat-ops" in vias


async def test_expired_tampered_and_already_settled_links_change_nothing(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        request = await r.ask("AskUserQuestion", {"question": "Which?", "choices": ["red", "blue"]})
        offered = r.links.for_request(request, "sms:+33600000000")
        assert set(offered) == {"red", "blue", "reject"}

        # Tampered: a character of the payload changed, or one link's payload with another's MAC.
        red = r.path(offered["red"])
        token = red.rsplit("/", 1)[1]
        payload, mac = token.split(".")
        flipped = payload[:-3] + ("A" if payload[-3] != "A" else "B") + payload[-2:]
        swapped = r.path(offered["blue"]).rsplit("/", 1)[1].split(".")[0] + "." + mac
        for bad in (f"{flipped}.{mac}", swapped, "not-a-token", f"{payload}."):
            response = await r.client.post(f"/v1/links/{bad}")
            assert response.status_code == 400 and "not valid" in response.text
        with pytest.raises(LinkInvalidError):
            r.links.check(swapped)

        # Expired: past its time it refuses, and the request stays open.
        r.now[0] += r.links.ttl + 1
        expired = await r.client.post(red)
        assert expired.status_code == 410 and "expired" in expired.text
        assert (await r.board.get(request.id)).is_open  # type: ignore[union-attr]

        # A fresh link still works: a choice reads as its label.
        fresh = r.links.for_request(request, "sms:+33600000000")
        used = await r.client.post(r.path(fresh["blue"]))
        assert used.status_code == 200 and "\u201cblue\u201d" in used.text
        assert json.loads(await r.handler.wait(request.id))["choice_id"] == "blue"

        # Already settled (answered elsewhere first): a clear page, and it changes nothing.
        other = await r.ask("ConfirmAction", {"action": "close the account"})
        links = r.links.for_request(other, "chat-ops")
        answered = await r.client.post(
            f"/v1/requests/{other.id}/answer",
            json={"answer": False},
            headers={"Authorization": f"Bearer {ANN}"},
        )
        assert answered.status_code == 200
        for link in (links["yes"], links["reject"]):
            late = await r.client.get(r.path(link))
            assert late.status_code == 409 and "already answered by ann via api" in late.text
        late = await r.client.post(r.path(links["yes"]))
        assert late.status_code == 409 and "changed nothing" in late.text
        assert json.loads(await r.handler.wait(other.id))["answer"] is False


async def test_a_reject_link_rejects_with_its_holder_named(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        request = await r.ask("ConfirmAction", {"action": "wire 5,000 euros"})
        reject = r.links.for_request(request, "mail:ops@example.com")["reject"]
        response = await r.client.post(r.path(reject))
        assert response.status_code == 200 and "Rejected" in response.text
        with pytest.raises(HumanInputRejectedError, match=r"mail:ops@example\.com"):
            await r.handler.wait(request.id)
        # Typed answers (free text) get no links: they need the console or the API.
        typed = await r.ask("AskUserQuestion", {"question": "What is the reference?"})
        assert r.links.for_request(typed, "chat-ops") == {}


async def test_an_operator_makes_links_for_a_message_of_their_own(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        request = await r.ask("ConfirmAction", {"action": "ship the order"})
        ann = {"Authorization": f"Bearer {ANN}"}
        made = await r.client.post(
            f"/v1/requests/{request.id}/links", json={"to": "sms:+33600000000"}, headers=ann
        )
        assert made.status_code == 200, made.text
        body = made.json()
        assert body["holder"] == "ann/sms:+33600000000" and set(body["links"]) >= {"yes", "no"}
        used = await r.client.post(r.path(body["links"]["yes"]))
        assert used.status_code == 200
        settled = await r.board.get(request.id)
        assert settled is not None and settled.settled_via == "link:ann/sms:+33600000000"
        # Out of scope (404, as for an unknown id: existence is not revealed), settled, or a
        # bad 'to': refused with the API's errors.
        bob = {"Authorization": f"Bearer {BOB}"}
        foreign = await r.client.post(f"/v1/requests/{request.id}/links", headers=bob)
        assert foreign.status_code == 404
        unknown = await r.client.post("/v1/requests/hi_unknown/links", headers=bob)
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == foreign.json()["error"]["code"] == "not_found"
        again = await r.client.post(f"/v1/requests/{request.id}/links", headers=ann)
        assert again.status_code == 409
        other = await r.ask("ConfirmAction", {"action": "x"})
        bad = await r.client.post(f"/v1/requests/{other.id}/links", json={"to": "a b"}, headers=ann)
        assert bad.status_code == 422 and "'to'" in bad.text


@pytest.mark.parametrize("part", ["payload", "mac"])
def test_every_other_last_character_is_refused_even_where_it_decodes_the_same(part: str) -> None:
    # The last base64 character of an unpadded part carries unused low bits: some variants
    # decode to the same bytes. Only the canonical spelling is a valid link.
    links = AnswerLinks(b"link-key-0123456789abcdef", "https://ops.example")
    request = BoardRequest("r-1", "ConfirmAction", {"action": "x"}, "w", 1.0)
    for label in ("Y", "Ye", "Yes"):  # one of three payload lengths leaves no spare bits
        token = links.mint(request, "chat", "answer", True, label).rsplit("/", 1)[1]
        payload, mac = token.split(".")
        target = payload if part == "payload" else mac
        if len(target) % 4:  # an unpadded part whose last character has spare bits
            break
    assert links.check(token).request_id == "r-1"
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    variants = [target[:-1] + c for c in alphabet if c != target[-1]]
    assert len(variants) == 63
    same_bytes = 0
    for variant in variants:
        altered = f"{variant}.{mac}" if part == "payload" else f"{payload}.{variant}"
        with contextlib.suppress(ValueError):
            decoded = base64.urlsafe_b64decode(variant + "=" * (-len(variant) % 4))
            canonical = base64.urlsafe_b64decode(target + "=" * (-len(target) % 4))
            same_bytes += decoded == canonical
        with pytest.raises(LinkInvalidError):
            links.check(altered)
    assert same_bytes >= 1  # the variants the old check accepted are among those refused
    for padded in (token.replace(".", "=."), token + "=", token.replace(".", ".+")):
        with pytest.raises(LinkInvalidError):
            links.check(padded)
