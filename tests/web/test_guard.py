"""A local server stays local: a Host that is not this server's address is refused (DNS
rebinding), a change without this launch's token is refused, no CORS header is ever sent."""

from __future__ import annotations

import pytest

from lessonloop.web.guard import allowed_hosts

from .conftest import TOKEN

pytestmark = pytest.mark.usefixtures("home")


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1:9999", ""])
def test_a_request_naming_another_host_is_refused(client, host):
    answer = client.get("/api/runs", headers={"Host": host})
    assert answer.status_code == 403
    assert answer.json()["error"].startswith("refused: Host")
    page = client.get("/", headers={"Host": host})
    assert page.status_code == 403


def test_localhost_with_the_port_names_a_loopback_server():
    assert allowed_hosts("127.0.0.1", 8765) == {"127.0.0.1:8765", "localhost:8765"}
    assert allowed_hosts("::1", 8000) == {"[::1]:8000", "localhost:8000"}
    assert allowed_hosts("192.0.2.7", 8765) == {"192.0.2.7:8765"}


def test_a_request_naming_localhost_is_served(client):
    assert client.get("/api/runs", headers={"Host": "localhost:8765"}).status_code == 200


@pytest.mark.parametrize("headers", [{}, {"X-Lessonloop-Token": "wrong"}])
def test_a_change_without_the_token_is_refused_and_changes_nothing(client, cli, headers):
    added = cli("memory", "add", "--type", "decision", "--summary", "Keep it", "--json").json()
    for answer in (
        client.delete(f"/api/memories/{added['id']}", headers=headers),
        client.post("/api/runs", json={"scenario": "grid_ctf", "iterations": 1}, headers=headers),
    ):
        assert answer.status_code == 403
        assert "X-Lessonloop-Token" in answer.json()["error"]
    assert [item["id"] for item in cli("memory", "list", "--json").json()] == [added["id"]]
    assert cli("list", "--json").json() == []


def test_no_cors_and_the_safety_headers_on_every_answer(client):
    for answer in (
        client.get("/api/runs", headers={"Origin": "http://evil.example"}),
        client.options(
            "/api/runs",
            headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "DELETE"},
        ),
        client.get("/"),
    ):
        assert not [name for name in answer.headers if name.lower().startswith("access-control")]
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]


def test_pages_carry_the_token_for_their_forms(client):
    assert f'<meta name="lessonloop-token" content="{TOKEN}">' in client.get("/memories").text
