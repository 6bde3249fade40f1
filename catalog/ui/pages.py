"""The UI's HTML, rendered on the server: the tables list (complete without JavaScript), the login
form, and the table page's frame, which `static/app.js` fills from the JSON endpoints."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from catalog.ui.tables import TableRow

STATIC = "/ui/static"


def _page(title: str, body: str, *, table: str | None = None) -> str:
    data = f' data-table="{escape(table)}"' if table is not None else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} · hudi-shim</title>
<link rel="stylesheet" href="{STATIC}/style.css">
<link rel="icon" href="data:,">
</head>
<body{data}>
<header class="top"><a class="brand" href="/ui">hudi-shim</a><span class="where">{escape(title)}</span>
<form class="logout" method="post" action="/ui/logout"><button type="submit">log out</button></form></header>
<main>
{body}
</main>
<script src="{STATIC}/app.js" defer></script>
</body>
</html>
"""


def instant_text(instant: str | None) -> str:
    """`20240601120000123` as `2024-06-01 12:00:00.123`."""
    if not instant or not instant.isdigit() or len(instant) < 14:
        return instant or ""
    text = f"{instant[:4]}-{instant[4:6]}-{instant[6:8]} {instant[8:10]}:{instant[10:12]}:{instant[12:14]}"
    return text + (f".{instant[14:]}" if len(instant) > 14 else "")


def tables_page(rows: Sequence[TableRow]) -> str:
    """Every registered table, one row each."""
    lines = []
    for row in rows:
        link = f'<a href="/ui/tables/{quote(row.name, safe="")}">{escape(row.name)}</a>'
        views = " ".join(f"<code>{escape(v)}</code>" for v in row.views)
        if row.error is not None:
            error = f'{escape(str(row.error.get("type")))}: {escape(str(row.error.get("message")))}'
            lines.append(f'<tr data-table="{escape(row.name)}"><td>{link}</td><td colspan="6" class="error">{error}</td>'
                         f'<td>{escape(row.location)}</td><td>{views}</td></tr>')
            continue
        last = "—"
        if row.last_commit is not None:
            commit = row.last_commit
            operation = f" · {escape(commit.operation)}" if commit.operation else ""
            last = f'<span class="instant">{escape(instant_text(commit.time))}</span> {escape(commit.action)}{operation}'
        rows_text = f"≈ {row.rows:,}" if row.rows is not None else "—"
        lines.append(
            f'<tr data-table="{escape(row.name)}"><td>{link}</td><td>{escape(row.hudi_name or "")}</td>'
            f'<td>{escape(row.table_type or "")}</td><td class="num">{row.version}</td><td>{last}</td>'
            f'<td class="num" data-rows="{row.rows}">{rows_text}</td><td class="num">{row.file_slices}</td>'
            f'<td class="path">{escape(row.location)}</td><td>{views}</td></tr>')
    body = "\n".join(lines) or '<tr><td colspan="9">No tables are registered.</td></tr>'
    return _page("tables", f"""<h1>Tables</h1>
<table class="grid tables" id="tables">
<thead><tr><th>name</th><th>Hudi name</th><th>type</th><th>version</th><th>last commit</th><th>rows</th>
<th>file slices</th><th>location</th><th>published views (DuckDB, Iceberg <code>default</code>)</th></tr></thead>
<tbody>
{body}
</tbody>
</table>""")


def table_page(name: str) -> str:
    """The frame of one table's page: tabs filled by `app.js`."""
    quoted = escape(name)
    return _page(name, f"""<h1>{quoted}</h1>
<div id="summary" class="summary"></div>
<nav class="tabs">
<a href="#schema" data-tab="schema">Schema history</a>
<a href="#timeline" data-tab="timeline">Timeline</a>
<a href="#files" data-tab="files">Files</a>
<a href="#plan" data-tab="plan">Query plan</a>
</nav>
<noscript><p class="error">This page draws its views with JavaScript. The JSON it reads is at
<code>/ui/api/tables/{quoted}/schemas</code>, <code>…/timeline</code>, <code>…/files</code> and <code>…/plan</code>.</p></noscript>
<div id="error" class="error" hidden></div>
<section id="tab-schema" data-tab="schema"></section>
<section id="tab-timeline" data-tab="timeline" hidden></section>
<section id="tab-files" data-tab="files" hidden>
<form id="files-form" class="controls">
<label>view <select name="view"><option value="snapshot">snapshot</option>
<option value="read_optimized">read_optimized</option></select></label>
<label>as of <input name="as_of" placeholder="latest (yyyyMMddHHmmssSSS or yyyy-MM-dd HH:mm:ss)" size="36"></label>
<button type="submit">show</button></form>
<div id="files-body"></div>
</section>
<section id="tab-plan" data-tab="plan" hidden>
<form id="plan-form" class="controls">
<label>filter <input name="filter" size="50" placeholder="city = 'sf' AND fare &gt; 10"></label>
<label>as of <input name="as_of" size="24" placeholder="latest"></label>
<label>mode <select name="mode"><option value="snapshot">snapshot</option>
<option value="read_optimized">read_optimized</option></select></label>
<button type="submit">explain</button></form>
<div id="plan-body"></div>
</section>
<div id="tooltip" class="tooltip" role="tooltip" hidden></div>""", table=name)


def login_page(next_path: str, *, message: str = "", needed: bool = True) -> str:
    """The login form (the server's token)."""
    if not needed:
        return _page("log in", '<p>This server runs without a token: <a href="/ui">open the tables</a>.</p>')
    note = f'<p class="error">{escape(message)}</p>' if message else ""
    return _page("log in", f"""<h1>Log in</h1>
{note}
<form method="post" action="/ui/login" class="login">
<label>Token <input type="password" name="token" autocomplete="current-password" autofocus required></label>
<input type="hidden" name="next" value="{escape(next_path)}">
<button type="submit">log in</button>
</form>
<p class="hint">The token the server was started with (<code>HUDI_SHIM_TOKEN</code>).</p>""")
