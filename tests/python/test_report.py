"""ait report: the page from a tune, opened in headless Chromium (no console
error, a non-empty screenshot, the numbers shown equal the JSON's)."""
import html.parser
import json
import os
import shutil
import struct

import pytest

from conftest import run

FAST = ["--timeout", "20", "--warmup", "1", "--window", "3", "--cap", "5", "--no-cache"]


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def browse(page, *args):
    """Runs headless Chromium on page; returns the completed process."""
    exe = chromium()
    if not exe:
        pytest.skip("chromium is not installed (tools/setup installs Debian's chromium)")
    r = run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--no-first-run", "--enable-logging=stderr", "--v=0", *args,
             "file://" + os.path.abspath(page)])
    if r.returncode != 0 and not r.stdout:
        pytest.skip("chromium cannot run here: " + r.stderr.strip().splitlines()[-1])
    return r


def console_errors(stderr):
    """Console messages and uncaught exceptions (Chromium's own dbus and GPU
    chatter is not the page's)."""
    return [l for l in stderr.splitlines()
            if "CONSOLE" in l or "Uncaught" in l or "Failed to load resource" in l]


class Cells(html.parser.HTMLParser):
    """Rows of candidate tables: (module section's data-module, data-batch,
    data-cand) -> {cell class: text}."""

    def __init__(self):
        super().__init__()
        self.rows, self.sec, self.row, self.cls, self.ext = {}, None, None, None, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and "data-module" in a:
            self.sec = (a["data-module"], int(a["data-batch"]))
        elif tag == "tr" and "data-cand" in a and self.sec:
            self.row = self.rows.setdefault(self.sec + (a["data-cand"],), {})
        elif tag == "td" and self.row is not None:
            self.cls = (a.get("class") or "").replace("n ", "")
        elif tag in ("link", "script", "img", "iframe") or (tag == "a" and
                                                            "://" in a.get("href", "")):
            self.ext.append((tag, a))

    def handle_endtag(self, tag):
        if tag == "tr":
            self.row = None
        if tag == "td":
            self.cls = None

    def handle_data(self, data):
        if self.row is not None and self.cls:
            self.row[self.cls] = self.row.get(self.cls, "") + data


@pytest.fixture(scope="module")
def tuned(torch_model, ait_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    path = torch_model[0]
    r = run([ait_bin, "tune", path, "--batch-sizes", "1,2", "--json", "-o", str(d / "net.ait"),
             *FAST])
    assert r.returncode == 0, r.stderr
    (d / "tune.json").write_text(r.stdout)
    return d, json.loads(r.stdout)


def check_numbers(page, tune):
    p = Cells()
    p.feed(page)
    assert not p.ext, "the page fetches or links outside itself: %s" % p.ext
    n = 0
    for m in tune["modules"]:
        for c in m["candidates"]:
            row = p.rows[(m["path"], m["batch"], c["name"])]
            for key, cls, tol in (("median_ms", "median", 5e-4), ("spread_ms", "spread", 5e-4)):
                if c[key] is None:
                    assert row[cls] == "-"
                else:
                    assert abs(float(row[cls]) - c[key]) <= tol, (m["path"], c["name"], key)
                    n += 1
            if c["max_rel_err"] is not None:
                shown = float(row["err"])
                assert abs(shown - c["max_rel_err"]) <= 5e-3 * abs(c["max_rel_err"])  # %.3g
    assert n >= 4


def test_report_in_chromium(tuned, ait_bin):
    d, tune = tuned
    page = d / "report.html"
    r = run([ait_bin, "report", str(d / "net.ait"), "-o", str(page)])
    assert r.returncode == 0, r.stderr
    dom = browse(page, "--dump-dom")
    assert "Module tree and time shares" in dom.stdout and "<svg" in dom.stdout
    assert not console_errors(dom.stderr), console_errors(dom.stderr)
    check_numbers(dom.stdout, tune)
    # The screenshot: beside the build's other outputs, for a look by eye.
    shot = os.path.abspath(os.environ.get("AIT_REPORT_SHOT", str(d / "report.png")))
    if os.path.exists(shot):
        os.remove(shot)
    browse(page, "--window-size=1200,2400", "--screenshot=" + shot)
    with open(shot, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", head[16:24])
    assert (w, h) == (1200, 2400) and os.path.getsize(shot) > 10000
    print("screenshot:", shot)


def test_console_check_can_fail(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><script>nosuchthing();</script></body></html>")
    assert console_errors(browse(bad, "--dump-dom").stderr)


def test_report_from_tune_json(tuned, ait_bin):
    d, tune = tuned
    page = d / "from_json.html"
    r = run([ait_bin, "report", str(d / "tune.json"), "-o", str(page)])
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    check_numbers(text, tune)
    assert "baseline time" in text  # shares from the tune alone
    assert "Trade-offs" not in text  # no quantised variant tried


def test_tradeoff_table_when_quantised(tuned, ait_bin):
    d, tune = tuned
    q = json.loads(json.dumps(tune))
    c = dict(q["modules"][0]["candidates"][-1], name="onednn:int8/t1", variant="int8",
             chosen=False, median_ms=0.125, max_rel_err=0.02, sqnr_db=31.5)
    q["modules"][0]["candidates"].append(c)
    (d / "q.json").write_text(json.dumps(q))
    r = run([ait_bin, "report", str(d / "q.json"), "-o", str(d / "q.html")])
    assert r.returncode == 0, r.stderr
    text = (d / "q.html").read_text()
    assert "Trade-offs: quantised variants" in text
    assert "onednn:int8/t1" in text and "31.5" in text and "0.125" in text


def test_report_errors(ait_bin, tmp_path):
    r = run([ait_bin, "report", str(tmp_path)])
    assert r.returncode == 2 and "-o REPORT.html" in r.stderr
    r = run([ait_bin, "report", str(tmp_path), "-o", str(tmp_path / "r.html")])
    assert r.returncode == 1 and "directory" in r.stderr
    (tmp_path / "x.json").write_text('{"a": 1}')
    r = run([ait_bin, "report", str(tmp_path / "x.json"), "-o", str(tmp_path / "r.html")])
    assert r.returncode == 1 and "not a tune's JSON" in r.stderr
    r = run([ait_bin, "report", "a.ait", "b.ait"])
    assert r.returncode == 2 and "unexpected argument 'b.ait'" in r.stderr
    r = run([ait_bin, "report", "--bogus"])
    assert r.returncode == 2 and "see ait report --help" in r.stderr and len(r.stderr.splitlines()) == 1
