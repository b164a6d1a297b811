"""The page frame every report page shares: escaping, links, tables, the inline style sheet.

Pages are self-contained (styles inline, no scripts, no fetched asset), so the site works from
``file://`` and offline.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #fbfbfd; }
header { background: #22304a; color: #fff; padding: 10px 24px; }
header a { color: #cfe0ff; margin-right: 14px; }
main { padding: 8px 24px 48px; max-width: 1400px; }
h1 { font-size: 22px; margin: 10px 0; }
h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ccd; }
h3 { font-size: 15px; margin-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #ccd3e0; padding: 3px 8px; vertical-align: top; text-align: left; }
th { background: #eef1f7; }
tr:target { background: #fff3b0; outline: 2px solid #e0b000; }
code, pre { font: 12px/1.4 ui-monospace, monospace; }
pre { background: #f1f3f8; padding: 8px; overflow-x: auto; }
.ok { color: #17702b; font-weight: 600; } .bad { color: #b3141b; font-weight: 600; }
.note { background: #fff6e0; border-left: 4px solid #e0a800; padding: 6px 10px; margin: 8px 0; }
.muted { color: #667; }
.before { color: #8a1c1c; } .after { color: #17602b; }
.cx { display: flex; gap: 24px; align-items: flex-start; flex-wrap: wrap; }
.cx > div { max-width: 100%; overflow-x: auto; }
svg text { font-family: system-ui, sans-serif; }
.graph svg { max-width: 100%; height: auto; }
"""


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def slug(name: str) -> str:
    """A file-name-safe form of a design or mutant name (stable: the same name, the same URL)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".")
    return cleaned or "_"


def unique_slugs(names: Iterable[str]) -> dict[str, str]:
    """Each name's slug; two names that clean to one slug get ``-2``, ``-3`` ... in order."""
    taken: set[str] = set()
    out: dict[str, str] = {}
    for name in names:
        base = slug(name)
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            candidate = f"{base}-{n}"
        taken.add(candidate)
        out[name] = candidate
    return out


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], row_ids: Sequence[str] | None = None) -> str:
    """A table whose cells are already HTML (callers escape their text)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        rid = f' id="{esc(row_ids[i])}"' if row_ids is not None else ""
        body.append(f"<tr{rid}>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def note(text_html: str) -> str:
    return f'<p class="note">{text_html}</p>'


def page(title: str, body: str, root: str, crumbs: Sequence[tuple[str, str]] = ()) -> str:
    """A whole HTML document; ``root`` is the relative path to the site's top ("", "../", ...)."""
    links = [f'<a href="{esc(root)}index.html">all designs</a>']
    links += [f'<a href="{esc(href)}">{esc(label)}</a>' for label, href in crumbs]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n"
        f"<body><header>lanecheck design review &nbsp; {' '.join(links)}</header>\n"
        f"<main><h1>{esc(title)}</h1>\n{body}\n</main></body></html>\n"
    )


def code_block(source: str) -> str:
    return f"<pre><code>{esc(source)}</code></pre>"


def details(summary: str, inner_html: str) -> str:
    return f"<details><summary>{esc(summary)}</summary>{inner_html}</details>"
