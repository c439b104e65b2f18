"""`python -m tools.docs_images`: the pictures of docs/images/, made from real runs on kubesim.

- docs/images/demo-run.svg: the rollout-verify run of `make demo`'s first story (the Secret that
  arrived late found, the one restart, the pass), as a terminal shows it, colours included;
- docs/images/step-summary.png: the Markdown summary (`--summary`, GitHub's job summary) of the
  same story run with `--restart never`, so it shows a failed pod, rendered in GitHub's style
  by headless Chromium (`apt-get install chromium fonts-noto-color-emoji`).

The demo keeps its environment from rollout-verify, so the settings go on its command line
(`--story 1 --color always -- --restart never --summary PATH`, see tests/support/demo.py). Each
picture is the output of a run at the time the script ran: pod names differ from run to run.
Needs what `make demo` needs (root, /usr/bin/kubectl) plus chromium for the PNG.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import markdown

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
COLUMNS = 116  # the terminal's width: longer lines wrap, as they would there
_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_COLOURS = {"31": "#f14c4c", "32": "#23d18b", "33": "#f5f543", "36": "#29b8db"}


def demo(*, flags: list[str]) -> str:
    """The first story's output, coloured (stdout and the run's stderr in one stream, as a terminal
    shows them), rollout-verify run with `flags` besides its config."""
    command = [sys.executable, "-m", "tests.support.demo", "--story", "1", "--color", "always", "--", *flags]
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}  # --color always is the tool's choice
    done = subprocess.run(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600
    )
    return done.stdout


def _wrapped(line: str) -> list[str]:
    """`line` cut every COLUMNS visible characters, its colour codes kept where they were."""
    out, current, visible = [], "", 0
    for piece in re.split(r"(\x1b\[[0-9;]*m)", line):
        if _SGR.fullmatch(piece):
            current += piece
            continue
        for ch in piece:
            if visible == COLUMNS:
                out.append(current)
                current, visible = "", 0
            current += ch
            visible += 1
    return [*out, current]


def terminal_svg(text: str, *, title: str) -> str:
    """`text` (with SGR colour codes) as an SVG terminal window."""
    lines = [w for line in text.rstrip("\n").split("\n") for w in _wrapped(line)]
    char_w, line_h, pad, bar = 7.8, 17, 14, 28
    width = int(COLUMNS * char_w + 2 * pad)
    height = int(len(lines) * line_h + 2 * pad + bar)
    rows = []
    bold, colour = False, ""
    for i, line in enumerate(lines):
        y = bar + pad + (i + 1) * line_h - 4
        spans = []
        for piece in re.split(r"(\x1b\[[0-9;]*m)", line):
            m = _SGR.fullmatch(piece)
            if m:
                for code in (m.group(1) or "0").split(";"):
                    if code in ("", "0"):
                        bold, colour = False, ""
                    elif code == "1":
                        bold = True
                    elif code in _COLOURS:
                        colour = _COLOURS[code]
                continue
            if not piece:
                continue
            style = (' font-weight="bold"' if bold else "") + (f' fill="{colour}"' if colour else "")
            spans.append(f"<tspan{style}>{html.escape(piece, quote=False)}</tspan>")
        rows.append(f'<text x="{pad}" y="{y}" xml:space="preserve">{"".join(spans)}</text>')
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">',
            f"<title>{html.escape(title)}</title>",
            f'<rect width="{width}" height="{height}" rx="8" fill="#1e1e1e"/>',
            f'<rect width="{width}" height="{bar}" rx="8" fill="#323233"/>',
            *(
                f'<circle cx="{18 + 20 * i}" cy="14" r="6" fill="{c}"/>'
                for i, c in enumerate(("#ff5f57", "#febc2e", "#28c840"))
            ),
            '<g font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="13" fill="#d4d4d4">',
            *rows,
            "</g>",
            "</svg>",
            "",
        ]
    )


_PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; background: #ffffff; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans",
  Helvetica, Arial, sans-serif; color: #1f2328; }}
.box {{ margin: 16px; padding: 8px 24px 16px; border: 1px solid #d1d9e0; border-radius: 6px; }}
h3 {{ font-size: 1.25em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }}
h4 {{ font-size: 1em; }}
code {{ background: #eff1f3; padding: .2em .4em; border-radius: 6px; font-size: 85%;
  font-family: "DejaVu Sans Mono", monospace; }}
table {{ border-collapse: collapse; margin: 8px 0; }}
th, td {{ border: 1px solid #d1d9e0; padding: 6px 13px; text-align: left; }}
tr:nth-child(2n) {{ background: #f6f8fa; }}
</style></head><body><div class="box" id="summary">{body}</div></body></html>"""


def summary_png(markdown_text: str, out: Path, *, width: int = 1100) -> None:
    """`markdown_text` rendered as GitHub renders a job summary, screenshotted by Chromium."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    body = markdown.markdown(markdown_text, extensions=["tables"])
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "summary.html"
        page.write_text(_PAGE.format(body=body), encoding="utf-8")
        flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 f"--user-data-dir={tmp}/profile"]  # fmt: skip
        # the page's height, then a screenshot of exactly that much
        probe = Path(tmp) / "height.html"
        probe.write_text(
            _PAGE.format(body=body).replace(
                "</body>",
                "<script>document.title = document.getElementById('summary').getBoundingClientRect()"
                ".bottom + 16;</script></body>",
            ),
            encoding="utf-8",
        )
        dom = subprocess.run(
            [*flags, f"--window-size={width},4000", "--dump-dom", probe.as_uri()],
            capture_output=True, text=True, timeout=120, check=True,
        ).stdout  # fmt: skip
        found = re.search(r"<title>([0-9.]+)</title>", dom)
        height = int(float(found.group(1))) + 1 if found else 1200
        subprocess.run(
            [*flags, f"--window-size={width},{height}", f"--screenshot={out}", page.as_uri()],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip


_SGR_ANY = re.compile(r"\x1b\[[0-9;]*m")


def run_lines(text: str) -> str:
    """The rollout-verify run of the demo's `text`: its config, the command and its output, up to
    the demo's recap, then the story's end line. Raises SystemExit when the story did not end as
    the docs tell it (exit code 0 after one restart)."""
    plain = _SGR_ANY.sub("", text)
    start = plain.find("== Now: rollout-verify")
    end_line = next((line for line in plain.split("\n") if "Story 1 ends: " in line), "")
    if start < 0 or "exit code 0; restarts sent by rollout-verify: 1" not in end_line:
        raise SystemExit("the demo did not run as expected:\n" + plain[-2000:])
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if "== Now: rollout-verify" in _SGR_ANY.sub("", line))
    recap = next(i for i, line in enumerate(lines) if "== What to read" in _SGR_ANY.sub("", line))
    # "== Now: rollout-verify --config verify.yaml   (kept at ...)", the file, a blank line, the run
    head, *run = lines[at:recap]
    blank = run.index("")
    command = "$ " + _SGR_ANY.sub("", head).split("== Now: ", 1)[1].split("   (kept at", 1)[0]
    while run and not run[-1].strip():
        run.pop()
    return "\n".join(["$ cat verify.yaml", *run[:blank], command, *run[blank + 1 :], "", end_line])


def main() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    run = run_lines(demo(flags=[]))
    (IMAGES / "demo-run.svg").write_text(terminal_svg(run, title="make demo: rollout-verify's run"))
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.md"
        demo(flags=["--restart", "never", "--summary", str(summary)])
        summary_png(summary.read_text(encoding="utf-8"), IMAGES / "step-summary.png")
    print(f"wrote {IMAGES.relative_to(ROOT)}/demo-run.svg and step-summary.png", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
