"""The dashboard's pages, rendered on the server: runs (live status), a run (the report's page,
its charts redrawn as generations complete), start a run, scenarios, playbooks per scope,
promotions (candidates, their decisions and trials, what is served), memories (search, why,
forget with a confirmation).

No framework and nothing fetched from elsewhere: every value passes ``esc`` (HTML escaping),
every value put in a script passes ``script_json``; the few lines of script use the API
(server-sent events to follow a run, ``fetch`` with the launch token to change something).
"""

from __future__ import annotations

import json
from html import escape
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..app import dashboard, memory, scenarios
from ..errors import LessonloopError, log_internal_error, one_line
from . import runs_feed
from .answers import error_text, int_parameter, status_of
from .events import log_size
from .guard import TOKEN_HEADER

LIVE_STATUSES = ("created", "running")  # a run page says it follows these (it follows all)

STYLE = """
:root{--ink:#1b1f24;--muted:#57606a;--line:#d0d7de;--card:#f6f8fa;--accent:#0969da;--bad:#c0392b}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink)}
nav.top{display:flex;flex-wrap:wrap;gap:4px 16px;align-items:center;padding:8px 20px;
border-bottom:1px solid var(--line);background:var(--card);font-size:15px}
nav.top a{color:var(--accent);text-decoration:none}nav.top a:hover{text-decoration:underline}
nav.top b{margin-right:8px}nav.top .live{margin-left:auto;color:var(--muted)}
main.dash{max-width:1120px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:1.5rem;margin:.2em 0 .4em;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:1.4em 0 .5em;border-bottom:1px solid var(--line)}
.sub{color:var(--muted)}
.stale{color:var(--bad)}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td{overflow-wrap:anywhere}
form.inline{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin:.5em 0 1em}
label{display:flex;flex-direction:column;font-size:.85rem;color:var(--muted)}
input,select,button{font:inherit;padding:4px 8px}
button{cursor:pointer}
button.danger{color:#fff;background:var(--bad);border:1px solid var(--bad);border-radius:4px}
.message{padding:6px 10px;border-radius:4px;background:var(--card);border:1px solid var(--line)}
.message.error{border-color:var(--bad);color:var(--bad)}
.promotions td{overflow-wrap:break-word}.promotions td.when,.nb{white-space:nowrap}.promotions td.when .probation{white-space:normal}
details.candidate{margin:.6em 0;padding:4px 10px;border:1px solid var(--line);border-radius:4px}
details.candidate>summary{cursor:pointer;overflow-wrap:anywhere;padding:2px 0}
details.trials>summary{cursor:pointer;color:var(--accent);margin:.4em 0}
details.trials table{font-size:.85rem;width:auto;min-width:50%}
details.trials td,details.trials th{padding:2px 6px}
.st-active{color:#00875a;font-weight:bold}.st-rolled-back,.st-rejected{color:var(--bad)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
pre{white-space:pre-wrap;overflow-wrap:anywhere}
@media (max-width:600px){main.dash{padding:10px}nav.top{padding:6px 10px}
details.candidate{padding:4px 6px}details.trials table{font-size:.75rem}
details.trials td,details.trials th{padding:2px 3px}
table.stack thead{display:none}
table.stack tr{display:block;padding:6px 0;border-bottom:1px solid var(--line)}
table.stack td{display:block;border:0;padding:1px 4px;text-align:left}
table.stack td[data-label]::before{content:attr(data-label) " ";color:var(--muted)}}
"""

SEND = (
    """
const TOKEN = document.querySelector('meta[name=lessonloop-token]').content;
async function send(method, url, body) {
  const options = {method, headers: {'%s': TOKEN}};
  if (body !== undefined) {
    options.headers['Content-Type'] = 'application/json';
    options.body = JSON.stringify(body);
  }
  const answer = await fetch(url, options);
  let value = null;
  try { value = await answer.json(); } catch (e) { value = {error: answer.statusText}; }
  if (!answer.ok) throw new Error(value && value.error ? value.error : answer.statusText);
  return value;
}
function say(text, bad) {
  const box = document.getElementById('message');
  box.hidden = false; box.textContent = text; box.className = bad ? 'message error' : 'message';
}
"""
    % TOKEN_HEADER
)


def esc(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def script_json(value: Any) -> str:
    """A value as JavaScript inside a <script> element (no ``</script>`` can close it)."""
    return (
        json.dumps(value)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def number(value: object, spec: str = ".4f") -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return format(value, spec)
    return "–"


def nav(token: str, live: str = "") -> str:
    links = [
        ("/", "Runs"),
        ("/start", "Start a run"),
        ("/scenarios", "Scenarios"),
        ("/playbooks", "Playbooks"),
        ("/promotions", "Promotions"),
        ("/memories", "Memories"),
    ]
    return (
        '<nav class="top"><b>lessonloop</b>'
        + "".join(f'<a href="{href}">{esc(label)}</a>' for href, label in links)
        + f'<span class="live" id="live">{esc(live)}</span></nav>'
    )


def head(title: str, token: str) -> str:
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="lessonloop-token" content="{esc(token)}">'
        f'<title>{esc(title)}</title><link rel="icon" href="/favicon.ico" type="image/svg+xml">'
        f"<style>{STYLE}</style>"
    )


def page(title: str, token: str, body: str, script: str = "") -> HTMLResponse:
    scripts = f"<script>{SEND}{script}</script>"
    return HTMLResponse(
        head(title, token)
        + f"</head><body>{nav(token)}<main class=dash>{body}"
        + '<p id="message" class="message" hidden></p></main>'
        + scripts
        + "</body></html>"
    )


def table(
    headers: list[str],
    rows: list[str],
    numeric: tuple[int, ...] = (),
    table_id: str = "",
    stacked: bool = False,
) -> str:
    """A table whose rows are ``<tr>`` elements already escaped; ``stacked``: on a narrow
    window each row is a block of its cells, one under the other, each cell as wide as the
    window (no word cut into pieces by a column a few letters wide)."""
    cells = "".join(
        f'<th scope="col"{" class=num" if i in numeric else ""}>{esc(h)}</th>'
        for i, h in enumerate(headers)
    )
    attributes = (f' id="{table_id}"' if table_id else "") + (' class="stack"' if stacked else "")
    return (
        f'<div class="table-wrap"><table{attributes}><thead><tr>{cells}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def shown(handler: Any) -> Any:
    """A page handler (run in the thread pool) whose failures are a page with the one line,
    with the status the API would give."""

    async def route(request: Request) -> Response:
        token = request.app.state.token
        try:
            return await run_in_threadpool(handler, request, token)
        except Exception as exc:  # every failure is one line to the reader
            if isinstance(exc, LessonloopError):
                status, message = status_of(exc), error_text(exc)
            else:
                status = 500
                message = one_line(
                    f"internal error: {exc.__class__.__name__}{log_internal_error()}"
                )
            body = f"<h1>{esc('Not found' if status == 404 else 'Error')}</h1>"
            response = page(
                "lessonloop: error", token, body + f'<p class="message error">{esc(message)}</p>'
            )
            response.status_code = status
            return response

    route.__name__ = handler.__name__
    return route


# the runs ------------------------------------------------------------------------------------
def run_row(run: dict[str, Any]) -> str:
    run_id = run["run_id"]
    return (
        f'<tr data-run="{esc(run_id)}">'
        f'<td class="id"><a href="/runs/{quote(run_id)}">{esc(run_id)}</a></td>'
        f'<td class="scenario">{esc(run["scenario"])}</td>'
        f'<td class="status">{esc(run["status"])}</td>'
        f'<td class="num generations" data-label="generations">'
        f"{esc(run['generations_completed'])}/{esc(run['target_generations'])}</td>"
        f'<td class="num best" data-label="best">{number(run["best_score"])}</td>'
        f'<td class="created">{esc(run["created_at"])}</td></tr>'
    )


RUNS_SCRIPT = """
// one stream for the whole list: a run started elsewhere appears, a row follows its run
const body = document.querySelector('#runs tbody');
const number = (value) => (typeof value === 'number' ? value.toFixed(4) : '\u2013');
function rowOf(run) {
  let row = body.querySelector(`tr[data-run="${CSS.escape(run.run_id)}"]`);
  if (!row) {
    row = document.createElement('tr');
    row.dataset.run = run.run_id;
    for (const name of ['id', 'scenario', 'status', 'num generations', 'num best', 'created']) {
      const cell = document.createElement('td');
      cell.className = name;
      if (name.startsWith('num ')) cell.dataset.label = name.slice(4);
      row.append(cell);
    }
    const link = document.createElement('a');
    link.href = `/runs/${encodeURIComponent(run.run_id)}`;
    link.textContent = run.run_id;
    row.querySelector('.id').append(link);
    body.prepend(row);
    document.getElementById('no-runs')?.remove();
    document.getElementById('runs').hidden = false;
  }
  return row;
}
const feed = new EventSource('/api/runs-live');
feed.addEventListener('run', (message) => {
  const run = JSON.parse(message.data);
  const row = rowOf(run);
  row.querySelector('.scenario').textContent = run.scenario;
  row.querySelector('.status').textContent = run.status;
  row.querySelector('.generations').textContent =
    `${run.generations_completed}/${run.target_generations}`;
  row.querySelector('.best').textContent = number(run.best_score);
  row.querySelector('.created').textContent = run.created_at;
});
"""


def runs_page(request: Request, token: str) -> Response:
    """The runs, newest first, kept current by ``/api/runs-live`` (new runs, status and
    generations as they change)."""
    runs = runs_feed.current_runs()
    body = table(
        ["run", "scenario", "status", "generations", "best", "created"],
        [run_row(run) for run in runs],
        numeric=(3, 4),
        table_id="runs",
        stacked=True,
    )
    if not runs:
        body = '<p id="no-runs">No runs yet: <a href="/start">start one</a>.</p>' + body.replace(
            '<table id="runs"', '<table id="runs" hidden', 1
        )
    return page("lessonloop: runs", token, "<h1>Runs</h1>" + body, RUNS_SCRIPT)


RUN_SCRIPT = """
const RUN = %s;
const live = document.getElementById('live');
let busy = false, again = false;
async function redraw() {
  if (busy) { again = true; return; }
  busy = true;
  try {
    const answer = await fetch(location.pathname, {cache: 'no-store'});
    const fresh = new DOMParser().parseFromString(await answer.text(), 'text/html');
    const main = fresh.querySelector('main');
    if (answer.ok && main) document.querySelector('main').replaceWith(main);
  } finally {
    busy = false;
    if (again) { again = false; redraw(); }
  }
}
live.textContent = RUN.live ? 'following the run…' : 'not running';
// follow=1: the stream outlives the run, so a resume or an extension shows here too
const feed = new EventSource(
  `/api/runs/${encodeURIComponent(RUN.id)}/events?follow=1&from=${RUN.offset}`);
feed.addEventListener('generation_completed', (message) => {
  live.textContent = `generation ${JSON.parse(message.data).payload.generation} completed`;
  redraw();
});
for (const name of ['run_started', 'run_resumed', 'run_completed', 'run_stopped', 'run_failed'])
  feed.addEventListener(name, () => { live.textContent = name.replace('_', ' '); redraw(); });
feed.addEventListener('idle', () => { live.textContent = 'not running'; });
feed.addEventListener('end', () => { feed.close(); live.textContent = 'not running'; });
"""


def run_view(request: Request, token: str) -> Response:
    """The run's report page (``report/``'s rendering), with the navigation and the script
    that redraws it as its events come: while it is played, and when it is resumed or
    extended later (its event stream is asked to outlive the run)."""
    run_id = request.path_params["run_id"]
    run = dashboard.known_run(run_id)
    offset = log_size(dashboard.events_path(run_id))  # before the page: nothing is missed
    html = dashboard.run_page(run_id)
    html = with_promotions_link(html, run_id, run["scenario"])
    follow = {"id": run_id, "offset": offset, "live": run["status"] in LIVE_STATUSES}
    html = html.replace("<body>", f"<body>{nav(token)}<style>{NAV_STYLE}</style>", 1)
    html = html.replace("</body>", f"<script>{RUN_SCRIPT % script_json(follow)}</script></body>", 1)
    return HTMLResponse(html)


def with_promotions_link(html: str, run_id: str, scenario: str) -> str:
    """The run's page with a link to its scope's promotions (when it holds candidates) under
    the line below the run's title."""
    scope = dashboard.run_promotion_scope(run_id, scenario)
    heading = html.find("</h1>")
    end = html.find("</p>", heading) if heading >= 0 else -1
    if scope is None or end < 0:
        return html
    after = end + len("</p>")
    return html[:after] + promotions_link(scope, dashboard.promotion_count(scope)) + html[after:]


NAV_STYLE = STYLE[STYLE.index("nav.top") : STYLE.index("main.dash")]


# start a run ----------------------------------------------------------------------------------
START_SCRIPT = """
document.getElementById('start').addEventListener('submit', async (submitted) => {
  submitted.preventDefault();
  const form = new FormData(submitted.target);
  const body = {scenario: form.get('scenario'), iterations: Number(form.get('iterations'))};
  for (const name of ['matches', 'seed'])
    if (form.get(name) !== '') body[name] = Number(form.get(name));
  for (const name of ['run_id', 'provider', 'model'])
    if (form.get(name).trim() !== '') body[name] = form.get(name).trim();
  try {
    const started = await send('POST', '/api/runs', body);
    say(started.started ? `started run ${started.run_id}` : `${started.run_id}: ${started.detail}`);
    location.href = `/runs/${encodeURIComponent(started.run_id)}`;
  } catch (error) { say(error.message, true); }
});
"""


def start_view(request: Request, token: str) -> Response:
    names = [item["name"] for item in scenarios.list_scenarios()]
    chosen = request.query_params.get("scenario", "")
    options = "".join(
        f"<option{' selected' if name == chosen else ''}>{esc(name)}</option>" for name in names
    )
    body = (
        "<h1>Start a run</h1>"
        '<p class="sub">The run is played in its own process (as <code>lessonloop run</code>); '
        "its page follows it.</p>"
        '<form id="start" class="inline">'
        f'<label>scenario<select name="scenario" required>{options}</select></label>'
        '<label>generations<input name="iterations" type="number" min="1" value="10" required></label>'
        '<label>matches (per attempt)<input name="matches" type="number" min="1" placeholder="5"></label>'
        '<label>seed<input name="seed" type="number" min="0" placeholder="0"></label>'
        '<label>run id (optional)<input name="run_id" placeholder="a new one"></label>'
        '<label>provider (optional)<input name="provider" placeholder="configured"></label>'
        '<label>model (optional)<input name="model"></label>'
        '<button type="submit">Start</button></form>'
    )
    return page("lessonloop: start a run", token, body, START_SCRIPT)


# scenarios ------------------------------------------------------------------------------------
def parameter_text(name: str, schema: dict[str, Any]) -> str:
    bounds = [
        f"{word} {schema[key]}"
        for key, word in (("minimum", "from"), ("maximum", "to"))
        if key in schema
    ]
    kind = schema.get("type", "") if isinstance(schema, dict) else ""
    return f"<code>{esc(name)}</code> {esc(kind)} {esc(' '.join(bounds))}".strip()


def scenarios_view(request: Request, token: str) -> Response:
    items = dashboard.redacted(scenarios.list_scenarios())
    rows = []
    for item in items:
        properties = item["strategy_schema"].get("properties", {})
        parameters = "<br>".join(
            parameter_text(name, schema if isinstance(schema, dict) else {})
            for name, schema in properties.items()
        )
        rows.append(
            f"<tr><td><b>{esc(item['name'])}</b><br>"
            f'<a href="/start?scenario={quote(item["name"])}">run it</a> · '
            f'<a href="/playbooks/{quote(item["name"])}">playbook</a></td>'
            f"<td>{esc(item['description'])}</td><td>{parameters}</td></tr>"
        )
    body = "<h1>Scenarios</h1>" + table(["scenario", "description", "strategy"], rows)
    return page("lessonloop: scenarios", token, body)


# playbooks ------------------------------------------------------------------------------------
def playbooks_view(request: Request, token: str) -> Response:
    scopes = dashboard.knowledge_scopes()
    if not scopes:
        body = "<p>No lessons yet: a run writes its playbook as it learns.</p>"
    else:
        body = table(
            ["scope", "playbook", "hints", "dead ends"],
            [
                f'<tr><td><a href="/playbooks/{quote(item["scope"], safe=":")}">'
                f"{esc(item['scope'])}</a></td>"
                f'<td class=num data-label="playbook">{esc(item["playbook"])}</td>'
                f'<td class=num data-label="hints">{esc(item["hints"])}</td>'
                f'<td class=num data-label="dead ends">{esc(item["dead_ends"])}</td></tr>'
                for item in scopes
            ],
            numeric=(1, 2, 3),
            stacked=True,
        )
    return page("lessonloop: playbooks", token, "<h1>Playbooks</h1>" + body)


def entry_rows(entries: list[dict[str, Any]]) -> list[str]:
    return [
        f"<tr><td class=num>{esc(entry['id'])}</td><td><b>{esc(entry['summary'])}</b>"
        + (
            f"<br>{esc(entry['content'])}"
            if entry["content"] and entry["content"] != entry["summary"]
            else ""
        )
        + (f"<br><code>{esc(' '.join(entry['tags']))}</code>" if entry["tags"] else "")
        + '</td><td class=num data-label="evidence">'
        f"+{esc(entry['helpful'])} −{esc(entry['harmful'])}</td>"
        f'<td class=num data-label="seen">{esc(entry["seen"])}</td></tr>'
        for entry in entries
    ]


def promotions_link(scope: str, count: int) -> str:
    """A line linking to the promotions page of ``scope`` (which holds ``count`` candidates)."""
    href = f"/promotions?scope={quote(scope, safe=':')}"
    words = f"{count} promotion candidate{'' if count == 1 else 's'}"
    return (
        f'<p class="sub promotions-link"><a href="{esc(href)}">{words} of {esc(scope)}</a>: '
        "what was tried against the served context or model, and what is served now.</p>"
    )


def playbook_view(request: Request, token: str) -> Response:
    lists = dashboard.knowledge(request.path_params["scope"])
    body = f"<h1>Playbook of {esc(lists['scope'])}</h1>"
    count = dashboard.promotion_count(lists["scope"])
    if count:
        body += promotions_link(lists["scope"], count)
    for name, title in (("playbook", "Playbook"), ("hints", "Hints"), ("dead_ends", "Dead ends")):
        entries = lists[name]
        body += f"<h2>{title} ({len(entries)})</h2>"
        body += (
            table(
                ["id", "lesson", "evidence", "seen"],
                entry_rows(entries),
                numeric=(0, 2, 3),
                stacked=True,
            )
            if entries
            else "<p>None.</p>"
        )
    return page(f"lessonloop: {lists['scope']}", token, body)


# memories -------------------------------------------------------------------------------------
MEMORIES_SCRIPT = r"""
for (const button of document.querySelectorAll('button.forget')) {
  button.addEventListener('click', async () => {
    const row = button.closest('tr');
    const {id, scope, summary} = row.dataset;
    if (!confirm(`Forget [${scope} ${id}] "${summary}" for good?`)) return;
    try {
      const gone = await send('DELETE',
        `/api/memories/${encodeURIComponent(id)}?scope=${encodeURIComponent(scope)}`);
      row.remove();
      const count = document.getElementById('count');
      const left = document.querySelectorAll('button.forget:not(.held)').length;
      count.textContent = count.textContent.replace(
        /^\d+ memor(y|ies)/, `${left} ${left === 1 ? 'memory' : 'memories'}`);
      say(`forgot [${gone.scope} ${gone.forgotten}] ${gone.summary}`);
    } catch (error) { say(error.message, true); }
  });
}
"""


def memory_row(item: dict[str, Any], held: bool = False) -> str:
    link = f"/memories/{quote(item['scope'])}/{esc(item['id'])}"
    score = f" (score {number(item['score'], '.2f')})" if "score" in item else ""
    return (
        f'<tr data-id="{esc(item["id"])}" data-scope="{esc(item["scope"])}" '
        f'data-summary="{esc(item["summary"])}">'
        f'<td><a href="{link}">{esc(item["scope"])} {esc(item["id"])}</a></td>'
        f"<td>{esc(item['type'])}</td><td><b>{esc(item['summary'])}</b>"
        + (f"<br>{esc(item['content'])}" if item["content"] else "")
        + f"</td><td>{esc(item['author'])}, seen {esc(item['seen'])}{esc(score)}</td>"
        f"<td>{evidence_cell(item)}</td>"
        f'<td><button type="button" class="forget danger{" held" if held else ""}">forget'
        "</button></td></tr>"
    )


def evidence_cell(item: dict[str, Any]) -> str:
    """A memory's evidence as the page shows it: helped/misled, how often it was given to a
    session and when last, its status when it is out of recall, and ``stale?`` when it names
    something the project no longer has."""
    used = dashboard.ago(item.get("last_used_at"))
    parts = [
        f"helped {esc(item.get('helped', 0))} / misled {esc(item.get('misled', 0))}",
        f"injected {esc(item.get('injected', 0))}"
        + (f", last used {esc(used)}{'' if used == 'today' else ' ago'}" if used else ""),
    ]
    if item.get("stale"):
        parts.append('<b class="stale" title="names a path or command the project no longer '
                     'has; out of recall until confirmed">stale?</b>')  # fmt: skip
    elif item.get("status", "active") != "active":
        parts.append(f"<b>{esc(item['status'])}</b>")
    return "<br>".join(parts)


def counted(count: int) -> str:
    """``1 memory``, ``2 memories``."""
    return f"{count} {'memory' if count == 1 else 'memories'}"


def memories_view(request: Request, token: str) -> Response:
    query = request.query_params.get("q", "")
    scope = request.query_params.get("scope", "all")
    audit = request.query_params.get("audit", "") == "1"
    if query.strip():
        limit = int_parameter(request, "limit", 50) or 50
        items, what = memory.search_memories(query, scope, limit), f"matching {query!r}"
    elif audit:
        items, what = memory.recent_memories(scope, 50, automatic_only=True), "automatic, newest"
    else:
        items, what = memory.useful_memories(scope), "most useful first"
    items = dashboard.with_evidence(items)
    held = [] if query.strip() or audit else dashboard.held_memories(scope)
    scopes = "".join(
        f"<option{' selected' if name == scope else ''}>{name}</option>"
        for name in ("all", "project", "user")
    )
    body = (
        "<h1>Memories</h1>"
        '<form class="inline" method="get" action="/memories">'
        f'<label>search<input name="q" value="{esc(query)}" placeholder="words"></label>'
        f'<label>scope<select name="scope">{scopes}</select></label>'
        '<button type="submit">Search</button>'
        f'<a href="/memories?audit=1&scope={quote(scope)}">audit the automatic ones</a></form>'
        f'<p class="sub" id="count">{counted(len(items))}, {esc(what)}.</p>'
    )
    body += (
        table(
            ["id", "type", "memory", "from", "evidence", ""],
            [memory_row(item) for item in items],
            stacked=True,
        )
        if items
        else "<p>No memories here.</p>"
    )
    if held:
        body += (
            f"<h2>Out of recall</h2><p>{counted(len(held))} kept but not given to "
            "sessions: stale? ones until confirmed, retired, superseded or pending review.</p>"
            + table(
                ["id", "type", "memory", "from", "evidence", ""],
                [memory_row(item, held=True) for item in held],
                stacked=True,
            )
        )
    return page("lessonloop: memories", token, body, MEMORIES_SCRIPT)


def memory_view(request: Request, token: str) -> Response:
    from .answers import path_int

    scope = request.path_params["scope"]
    value = memory.memory_history(path_int(request, "memory_id"), scope)
    evidence = evidence_cell(dashboard.with_evidence([value])[0]).replace("<br>", " · ")
    fields = "".join(
        f"<p><b>{esc(name.replace('_', ' '))}:</b> {esc(value[name])}</p>"
        for name in ("content", "why", "how_to_apply")
        if value[name]
    )
    origins = [
        f"<tr><td>{esc(origin['created_at'])}</td><td>{esc(origin['source'])}</td>"
        f"<td>{esc(origin.get('session_id') or origin.get('run_id') or '')}</td></tr>"
        for origin in value["provenance"]
    ]
    history = [
        f"<tr><td>{esc(event['created_at'])}</td><td>{esc(event['action'])}</td>"
        f"<td>{esc(event['detail'])}</td></tr>"
        for event in value["events"]
    ]
    body = (
        f"<h1>[{esc(scope)} {esc(value['id'])}] {esc(value['summary'])}</h1>"
        f'<p class="sub">{esc(value["type"])} · {esc(value["author"])} · seen '
        f"{esc(value['seen'])} · tags {esc(', '.join(value['tags']) or '–')}</p>"
        f'<p class="sub">{evidence}</p>{fields}'
        "<h2>Where it came from</h2>"
        + (table(["when", "source", "session or run"], origins) if origins else "<p>–</p>")
        + "<h2>History</h2>"
        + (table(["when", "action", "detail"], history) if history else "<p>–</p>")
    )
    return page(f"lessonloop: memory {value['id']}", token, body)
