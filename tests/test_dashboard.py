"""The static dashboard: the data it inlines, and the page itself in a real headless Chromium
(Debian's chromium driven by playwright; skipped with the reason when either is missing)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dashboard.build import build, collect
from suite import results as res
from tests.synth_history import row, write_run

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
FAIL_MSG = "17 of 1048576 elements differ; first at [3]"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The committed results (two devices) plus a synthetic run with a failed cell, built once."""
    tmp = tmp_path_factory.mktemp("dash")
    shutil.copytree(res.COMMITTED_DIR, tmp / "results", ignore=shutil.ignore_patterns("reports"))
    write_run(tmp / "results", 0, [row(op="vector_add", backend="opencl", variant="naive", status="failed",
                                       message=FAIL_MSG, median_s=None),
                                   row(op="vector_add", backend="cuda", variant="vec4", median_s=1e-3)])
    return build(tmp / "results", tmp / "site")


def test_collect_has_cells_history_runs_and_peaks(site: Path) -> None:
    d = collect(site.parent.parent / "results")
    devices = {c["device"] for c in d["cells"]}
    assert {"nvidia-h200", "cpu-amd-epyc", "gpu-synth"} <= devices
    assert d["devices"]["nvidia-h200"]["peaks"]["measured"]["bandwidth"]["value"] > 1e12
    assert any(c["x_torch"] for c in d["cells"] if c["device"] == "nvidia-h200")
    assert any(c["status"] == "failed" and c["message"] == FAIL_MSG for c in d["cells"])
    assert d["history"] and d["runs"]


def test_page_is_self_contained(site: Path) -> None:
    html = site.read_text()
    assert "window.SOLBENCH = " in html and "Plotly" in html
    assert "cdn." not in html.split("window.SOLBENCH")[1][:200]  # data, not a fetch
    assert '<script src="http' not in html and "<link" not in html


def _browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing: apt-get install chromium (scripts/setup.sh does as root)")
    pw = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    return pw


def test_page_in_headless_chromium(site: Path) -> None:
    pw = _browser()
    url = site.resolve().as_uri()
    with pw.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))

            def show(view: str) -> None:
                page.goto(f"{url}#{view}")
                page.wait_for_function(f"document.body.dataset.rendered === {view!r}")

            def charts() -> list[int]:
                # points in every trace of every chart on the view
                return page.evaluate("""Array.from(document.querySelectorAll('.js-plotly-plot')).map(
                    d => d.data.reduce((n, t) => n + ((t.x || []).length), 0))""")

            show("overview")
            assert page.locator("table.overview").count() == 3  # two real devices + the synthetic one
            failed = page.locator('table.overview[data-device="gpu-synth"] td[data-op="vector_add"]'
                                  '[data-backend="opencl"]')
            assert "failed" in failed.inner_text() and FAIL_MSG in failed.inner_text()
            h200 = page.locator('table.overview[data-device="nvidia-h200"] td.ok').count()
            assert h200 >= 16
            for view in ("op/vector_add", "op/scan", "roofline", "history"):
                show(view)
                n = charts()
                assert n and all(k > 0 for k in n), (view, n)
                assert page.locator(".js-plotly-plot .main-svg").count() >= len(n)
            show("runs")
            assert page.locator("table.runs tr").count() > 8
            assert "SM MHz" in page.inner_text("table.runs")
            # a filter changes what is shown: untick the H200
            show("overview")
            page.locator('#filter-device input[value="nvidia-h200"]').uncheck()
            page.wait_for_function("!document.querySelector('table.overview[data-device=\"nvidia-h200\"]')")
            assert page.locator("table.overview").count() == 2
            page.locator('#filter-backend input[value="opencl"]').uncheck()
            assert page.locator('td[data-backend="opencl"]').count() == 0
            assert not errors, errors
            assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
        finally:
            browser.close()
