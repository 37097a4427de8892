"""The pages, server-rendered: each shows what its use case answers, escaped."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("home")


def test_every_page_renders(client, cli, finished_run):
    cli("memory", "add", "--type", "decision", "--summary", "Use <b>SQLite</b> & WAL")
    for url, words in (
        ("/", "r3"),
        ("/runs/r3", 'id="score-chart"'),
        ("/start", "<option>grid_ctf</option>"),
        ("/scenarios", "retreat_threshold"),
        ("/playbooks", "scenario:grid_ctf"),
        ("/playbooks/grid_ctf", "Playbook of scenario:grid_ctf"),
        ("/memories", "Use &lt;b&gt;SQLite&lt;/b&gt; &amp; WAL"),
        ("/memories/project/1", "Where it came from"),
        ("/memories?q=SQLite", "1 memory, matching"),
    ):
        answer = client.get(url)
        assert answer.status_code == 200, (url, answer.text[:300])
        assert answer.headers["content-type"].startswith("text/html")
        assert words in answer.text, url
        assert "<b>SQLite</b>" not in answer.text


def test_the_run_page_is_the_report_with_one_point_per_generation(client, finished_run):
    html = client.get("/runs/r3").text
    assert html.count('class="m-advance gen-point"') + html.count("gen-point") >= 3
    assert html.count("data-generation=") >= 3
    assert '"live": false' in html  # a finished run's page opens no event stream


def test_pages_for_unknown_things_are_404_pages(client):
    for url in ("/runs/nope", "/playbooks/task:none", "/memories/project/5"):
        answer = client.get(url)
        assert answer.status_code == 404
        assert answer.headers["content-type"].startswith("text/html")
    assert "unknown run id" in client.get("/runs/nope").text


def test_the_icon_a_browser_asks_for_is_served(client):
    answer = client.get("/favicon.ico")
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/svg+xml"
    assert answer.text.startswith("<svg") and "<script" not in answer.text
    assert client.get("/favicon.ico", headers={"Host": "evil.example"}).status_code == 403
    assert '<link rel="icon" href="/favicon.ico"' in client.get("/memories").text


def test_the_page_of_a_run_whose_process_is_gone_follows_nothing(client, finished_run):
    """A run killed with -9 stays "running" in the store; no process holds its lock, so its
    page says interrupted (as ``status`` does) and opens no event stream."""
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    with open_store() as store:
        run_store.set_status(store, finished_run, "running", None)
    html = client.get(f"/runs/{finished_run}").text
    assert '"live": false' in html
    assert "status <b>interrupted</b> (the process running it is gone" in html
