"""Measuring, in the browser, whether a page's charts fit its window: for the charts that are
shown (a chart is drawn wide and narrow, the style sheet shows one), the smallest label as
rendered in CSS pixels (its font size times the drawing's scale on screen), the chart's box,
whether its box scrolls sideways, and the last point of the score chart; and whether its
tables read on a phone (``check_tables_read``)."""

from __future__ import annotations

from pathlib import Path

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
SIZES = ((1280, 800), (390, 844))
SMALLEST_LABEL_PX = 11
TALLEST_ROW_PX = 200  # a row that reads at a glance (a rationale in a 93 px column: 427 px)

TABLES = """
() => [...document.querySelectorAll('main table')]
  .filter((table) => table.getBoundingClientRect().width > 0)  // not in a folded <details>
  .map((table) => {
    const holder = table.parentElement;
    const heights = [...table.querySelectorAll('tbody tr')]
      .map((row) => row.getBoundingClientRect().height);
    return {table: table.className || table.id || '(plain)', rows: heights.length,
            tallest: Math.max(0, ...heights), cut: holder.scrollWidth > holder.clientWidth};
  })
"""

MEASURE = """
(last) => {
  const shown = [...document.querySelectorAll('svg.chart')]
    .filter((chart) => chart.getBoundingClientRect().width > 0);
  const charts = shown.map((chart) => {
    const scale = chart.getScreenCTM().a;  // viewBox units to CSS pixels
    const sizes = [...chart.querySelectorAll('text')]
      .map((label) => parseFloat(getComputedStyle(label).fontSize) * scale);
    const box = chart.getBoundingClientRect();
    const holder = chart.parentElement;
    return {id: chart.id, labels: sizes.length, smallest: Math.min(...sizes),
            left: box.left, right: box.right,
            scrolls: holder.scrollWidth > holder.clientWidth};
  });
  const score = shown.find((chart) => chart.id.startsWith('score-chart'));
  const point = score && score.querySelector(`path.gen-point[data-generation="${last}"]`);
  const box = point && point.getBoundingClientRect();
  return {charts, page: document.documentElement.scrollWidth, width: innerWidth,
          last: box && {left: box.left, right: box.right, top: box.top, bottom: box.bottom,
                        scrollX: scrollX}};
}
"""


def check_charts_fit(browser, url: str, name: str, charts: int, last: int | None = None) -> None:
    """At 1280x800 and 390x844: ``charts`` charts shown, each as wide as the window allows,
    no box or page scrolling sideways, every label >= 11 px; the score chart's point of
    generation ``last`` (when given) inside the window. Screenshots go to tests/artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)
    for width, height in SIZES:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(url)
        seen = page.evaluate(MEASURE, last)
        first = page.locator(f"#{seen['charts'][0]['id']}") if seen["charts"] else None
        if first is not None:
            first.scroll_into_view_if_needed()  # the window around the first chart shown
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}x{height}.png"))
        assert len(seen["charts"]) == charts, seen
        assert seen["page"] <= width, f"the page scrolls sideways at {width}: {seen['page']}"
        for chart in seen["charts"]:
            assert chart["labels"] > 0 and chart["smallest"] >= SMALLEST_LABEL_PX, (width, chart)
            assert 0 <= chart["left"] and chart["right"] <= width, (width, chart)
            assert not chart["scrolls"], (width, chart)
        if width < 600:
            check_tables_read(page, width)
        if last is not None:
            point = seen["last"]
            assert point is not None, f"no point of generation {last} shown at {width}"
            assert point["scrollX"] == 0 and 0 <= point["left"] and point["right"] <= width, (
                width,
                point,
            )
        page.close()


def check_tables_read(page, width: int) -> list[dict]:
    """On a narrow window, every table shown is whole (nothing cut off on the right, to be
    found by scrolling it sideways) and no row is taller than ``TALLEST_ROW_PX``."""
    tables = page.evaluate(TABLES)
    for table in tables:
        assert not table["cut"], f"a table is cut off on the right at {width}: {table}"
        assert table["tallest"] <= TALLEST_ROW_PX, f"a row too tall at {width}: {table}"
    return tables
