#!/usr/bin/env python3
"""Drives `hprof serve`'s single-page application in headless Chromium (Selenium + chromedriver) and
prints, as one JSON object on stdout, what each view showed; tests/serve_spa.rs compares those numbers
with `hprof histo`, `dominators` and `path` on the same files.

usage: spa.py URL OUT_DIR CLASS FRAME
  URL      the address `hprof serve A B BAD` printed (A: a dump with a CPU profile, B: a second one, BAD: unreadable)
  OUT_DIR  where a screenshot, the page and the browser log of a failing step are kept
  CLASS    a class to find with the histogram's search
  FRAME    a frame to search, zoom to and diff in the flame graphs
Exit status 0 when every step passed; otherwise 1, with the failing step on stderr.
"""
import json
import os
import sys
import time
import traceback
from urllib.parse import parse_qs, urlparse

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

URL, OUT, CLASS, FRAME = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3], sys.argv[4]
TIMEOUT = 60
report = {"views": [], "console": []}
step = "start"


def browser():
    o = Options()
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"]:
        o.add_argument(a)
    o.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=o, service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")))


d = browser()
# The router redraws a view when its answer comes: an element found just before is then stale; look again.
wait = WebDriverWait(d, TIMEOUT, ignored_exceptions=[StaleElementReferenceException])


def console_errors():
    """The browser's console errors since the last call (SEVERE: errors, failed requests)."""
    errs = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]
    report["console"].extend(e["message"] for e in errs)
    return errs


def view_ready(name):
    """Waits until the router has drawn `name` (main#view's data-view), and checks it drew no error."""
    wait.until(lambda _: d.execute_script(
        "const v=document.getElementById('view'); return v.dataset.view===arguments[0] && v.dataset.ready && "
        "!document.getElementById('status').textContent", name))
    errors = d.find_elements(By.ID, "view-error")
    assert not errors, f"view {name} shows an error: {errors[0].text}"
    assert not console_errors(), f"console errors on {name}: {report['console']}"
    report["views"].append(name)


def drawn():
    """The router's count of views drawn: a view redrawn after an action has a higher one."""
    return int(d.find_element(By.ID, "view").get_attribute("data-ready") or 0)


def redrawn(name, before):
    """Waits for `name` drawn again after `before` (what drawn() said before the action)."""
    wait.until(lambda _: drawn() > before)
    view_ready(name)


def click_nav(name):
    global step
    step = f"open the {name} view"
    d.find_element(By.ID, "nav-" + name).click()
    view_ready(name)


def rows(css):
    return d.find_elements(By.CSS_SELECTOR, css)


def cells(tr):
    return [td.text for td in tr.find_elements(By.TAG_NAME, "td")]


def num(s):
    return int(s.split()[0].replace(",", ""))


def wait_for(css, what=None, n=1):
    global step
    if what:
        step = what
    wait.until(lambda _: len(rows(css)) >= n)
    return rows(css)


def diff_objects_shown():
    """What the object-by-object dump diff shows: its totals and each group's numbers."""
    summary = d.find_element(By.ID, "diffobjects-summary")
    return {
        "new_objects": int(summary.get_attribute("data-new-objects")),
        "new_bytes": int(summary.get_attribute("data-new-bytes")),
        "groups": [{"holder": tr.get_attribute("data-holder"), "new_objects": num(cells(tr)[1]),
                    "new_bytes": num(cells(tr)[2]), "retained_bytes": num(cells(tr)[3])}
                   for tr in rows("table.diffobjects-table tbody tr")],
    }


try:
    # First, while the files are still being indexed: the object diff, computed in the background once they
    # are, says "computing" and shows itself when ready (whether "computing" was seen depends on timing).
    step = "the object diff opened right after start"
    d.get(URL + "/#/diff?f=0&mode=objects")
    computing = False
    end = time.time() + TIMEOUT
    while time.time() < end and not rows("#diffobjects-summary"):
        computing = computing or bool(rows("#diffobjects-computing"))
        time.sleep(0.05)
    view_ready("diff")
    report["diff_objects_at_start"] = diff_objects_shown()
    report["diff_objects_computing_seen"] = computing

    step = "load the overview"
    d.get(URL + "/#/overview?f=0")
    view_ready("overview")
    report["overview_classes"] = [cells(tr) for tr in rows("table.biggest-classes tbody tr")]
    report["overview_objects"] = [
        {"id": tr.find_element(By.CSS_SELECTOR, "a.obj").get_attribute("data-id"), "cells": cells(tr)}
        for tr in rows("table.biggest-objects tbody tr")]
    report["objects_total"] = num(d.find_element(By.ID, "objects-total").text)

    # Histogram: find a class by search, then group by package and by class loader.
    click_nav("histo")
    step = f"find {CLASS} with the histogram's search"
    box = d.find_element(By.ID, "histo-filter")
    box.clear()
    box.send_keys(CLASS, Keys.ENTER)
    wait.until(lambda _: any(tr.get_attribute("data-class") == CLASS for tr in rows("table.histo-table tbody tr")))
    view_ready("histo")
    tr = next(tr for tr in rows("table.histo-table tbody tr") if tr.get_attribute("data-class") == CLASS)
    c = cells(tr)
    report["histo_row"] = {"class": c[0], "instances": num(c[1]), "shallow_bytes": num(c[2]), "retained_bytes": num(c[3])}
    step = "open the class's instances"
    tr.find_element(By.CSS_SELECTOR, "a.class-link").click()
    wait_for("table.instances-table tbody tr a.obj")
    step = "clear the histogram's filter"
    before = drawn()
    box = d.find_element(By.ID, "histo-filter")
    box.clear()
    box.send_keys(Keys.ENTER)
    wait.until(lambda _: "filter=" not in d.current_url)
    redrawn("histo", before)
    for group in ["package", "loader"]:
        step = f"group the histogram by {group}"
        d.execute_script("const s=document.getElementById('histo-group'); s.value=arguments[0];"
                         "s.dispatchEvent(new Event('change'));", group)
        wait.until(lambda _: f"group={group}" in d.current_url)
        view_ready("histo")
        wait_for("table.histo-table tbody tr")
        report[f"histo_{group}_rows"] = len(rows("table.histo-table tbody tr"))
        report[f"histo_{group}"] = [{"name": tr.get_attribute("data-class"), "instances": num(cells(tr)[1]),
                                     "retained_bytes": num(cells(tr)[3])} for tr in rows("table.histo-table tbody tr")[:10]]

    # Dominator tree: three levels opened, each under the first row that has children.
    click_nav("dominators")
    report["dominator_roots"] = [
        {"id": tr.get_attribute("data-id"), "retained_bytes": num(cells(tr)[2])} for tr in rows("tr.dom-row")[:5]]
    chain = []
    for depth in range(3):
        step = f"open level {depth + 1} of the dominator tree"
        candidates = [tr for tr in rows(f"tr.dom-row[data-depth='{depth}']")
                      if tr.find_element(By.CSS_SELECTOR, ".toggle").text == "▸"]
        if chain:
            # Below the row opened last.
            ids = d.execute_script(
                "const out=[]; let n=document.querySelector(`tr.dom-row[data-id='${arguments[0]}']`).nextSibling;"
                "while(n && Number(n.dataset.depth)>arguments[1]){ if(Number(n.dataset.depth)===arguments[1]+1) out.push(n.dataset.id); n=n.nextSibling;}"
                "return out;", chain[-1]["id"], depth - 1)
            candidates = [tr for tr in candidates if tr.get_attribute("data-id") in ids]
        assert candidates, f"no row with children at depth {depth}"
        tr = candidates[0]
        chain.append({"id": tr.get_attribute("data-id"), "retained_bytes": num(cells(tr)[2])})
        tr.find_element(By.CSS_SELECTOR, ".toggle").click()
        wait_for(f"tr.dom-row[data-depth='{depth + 1}']")
    deepest = rows("tr.dom-row[data-depth='3']")[0]
    chain.append({"id": deepest.get_attribute("data-id"), "retained_bytes": num(cells(deepest)[2])})
    report["dominator_chain"] = chain
    assert not console_errors(), report["console"]

    # The object inspector: open the deepest object, read its path from a GC root, follow it.
    step = "open an object from the dominator tree"
    deepest.find_element(By.CSS_SELECTOR, "a.obj").click()
    view_ready("object")
    wait_for("#path li.step", "read the path from a GC root")
    report["object"] = {
        "id": chain[-1]["id"],
        "shallow_bytes": num(d.find_element(By.ID, "shallow").text),
        "retained_bytes": num(d.find_element(By.ID, "retained").text),
        "path": [a.get_attribute("data-id") for a in rows("#path a.step-link")],
        "path_fields": [li.find_element(By.CSS_SELECTOR, ".field").text.rstrip(" →") if li.find_elements(By.CSS_SELECTOR, ".field") else None
                        for li in rows("#path li.step")],
        "outgoing": len(rows("table.outgoing tbody tr")),
    }
    wait_for("#incoming table", "list the references in")
    step = "follow the path to the object the GC root holds"
    first = rows("#path a.step-link")[0]
    first_id = first.get_attribute("data-id")
    first.click()
    wait.until(lambda _: first_id in d.current_url)
    view_ready("object")
    wait_for("#path li.step")
    report["path_root_object"] = {"id": first_id, "title": d.find_element(By.ID, "object-title").text,
                                  "path_len": len(rows("#path li.step"))}
    step = "ask for the path through weak references too"
    d.find_element(By.ID, "path-weak").click()
    wait_for("#path li.step")

    click_nav("leaks")
    report["leaks"] = len(rows("#suspects > li"))
    click_nav("waste")
    report["waste_bytes"] = int(d.find_element(By.ID, "waste-total").get_attribute("data-bytes"))
    click_nav("loaders")
    report["loaders"] = len(rows("table.loaders-table tbody tr"))
    click_nav("threads")
    report["threads"] = len(rows("details.thread"))

    # Flame graph: search (matched share), zoom, icicle, per-thread filter.
    click_nav("flame")
    wait_for(".flame .fr", "draw the flame graph")
    report["flame_total"] = num(d.find_element(By.ID, "flame-total").text)
    step = f"search {FRAME} in the flame graph"
    d.find_element(By.ID, "flame-search").send_keys(FRAME)
    wait.until(lambda _: d.find_element(By.ID, "flame-info").get_attribute("data-matched") not in (None, ""))
    report["flame_matched"] = int(d.find_element(By.ID, "flame-info").get_attribute("data-matched"))
    report["flame_matched_text"] = d.find_element(By.ID, "flame-info").text
    report["flame_match_frames"] = len(rows(".flame .fr.match"))
    step = f"zoom to {FRAME}"
    target = next(f for f in rows(".flame .fr.match"))
    name = target.get_attribute("data-name")
    target.click()
    wait.until(lambda _: d.find_element(By.ID, "flame-info").get_attribute("data-focus") == name)
    report["flame_zoom"] = {"frame": name, "info": d.find_element(By.ID, "flame-info").text}
    d.find_element(By.ID, "flame-icicle").click()
    d.find_element(By.ID, "flame-reset").click()
    wait.until(lambda _: d.find_element(By.ID, "flame-info").get_attribute("data-focus") == "all")
    # The timeline: samples per time bucket; a range dragged across it redraws the flame graph for it.
    step = "draw the timeline"
    strip = wait_for("#timeline-bars .tl-bar")[0].find_element(By.XPATH, "../..")
    wait.until(lambda _: strip.get_attribute("data-total"))
    report["timeline_total"] = int(strip.get_attribute("data-total"))
    report["timeline_end_ms"] = int(strip.get_attribute("data-end-ms"))
    step = "drag a range across the timeline"
    width = strip.size["width"]
    before = drawn()
    ActionChains(d).move_to_element_with_offset(strip, -width // 4, 0).click_and_hold() \
        .move_by_offset(width // 2, 0).release().perform()
    wait.until(lambda _: "from=" in d.current_url and "to=" in d.current_url)
    redrawn("flame", before)
    wait_for(".flame .fr")
    q = parse_qs(urlparse(d.current_url).fragment.split("?", 1)[1])
    report["range"] = {"from": int(q["from"][0]), "to": int(q["to"][0]),
                       "total": num(d.find_element(By.ID, "flame-total").text)}
    step = "type a range into the timeline's inputs"
    for box, value in [("timeline-from", "0"), ("timeline-to", str(report["range"]["from"]))]:
        d.find_element(By.ID, box).clear()
        d.find_element(By.ID, box).send_keys(value)
    before = drawn()
    d.find_element(By.ID, "timeline-apply").click()
    wait.until(lambda _: "from=0" in d.current_url)
    redrawn("flame", before)
    wait_for(".flame .fr")
    report["range_typed"] = {"from": 0, "to": report["range"]["from"],
                             "total": num(d.find_element(By.ID, "flame-total").text)}
    before = drawn()
    d.find_element(By.ID, "timeline-clear").click()
    wait.until(lambda _: "from=" not in d.current_url)
    redrawn("flame", before)
    wait_for(".flame .fr")
    threads = d.find_elements(By.CSS_SELECTOR, "#profile-thread option")
    report["flame_threads"] = len(threads) - 1 if threads else 0
    if len(threads) > 1:
        step = "filter the flame graph by thread"
        serial = threads[1].get_attribute("value")
        thread_name = threads[1].text.rsplit(" (", 1)[0]
        before = drawn()
        d.execute_script("const s=document.getElementById('profile-thread'); s.value=arguments[0];"
                         "s.dispatchEvent(new Event('change'));", serial)
        wait.until(lambda _: f"thread={serial}" in d.current_url)
        redrawn("flame", before)
        wait_for(".flame .fr")
        report["flame_thread"] = {"serial": serial, "name": thread_name}
        report["flame_thread_total"] = num(d.find_element(By.ID, "flame-total").text)
        wait.until(lambda _: d.find_element(By.ID, "timeline").get_attribute("data-total"))
        report["timeline_thread_total"] = int(d.find_element(By.ID, "timeline").get_attribute("data-total"))

    click_nav("callers")
    step = f"callers of {FRAME}"
    link = next(a for a in rows("a.method") if FRAME in a.text)
    link.click()
    wait.until(lambda _: "frame=" in d.current_url)
    view_ready("callers")
    wait_for("#callers-graph .fr")
    report["callers_title"] = d.find_element(By.ID, "callers-title").text

    # Differential flame graph against the second profile.
    click_nav("flamediff")
    wait_for("#flamediff-graph .fr", "draw the differential flame graph")
    d.find_element(By.ID, "flamediff-search").send_keys(FRAME)
    wait.until(lambda _: d.find_element(By.ID, "flamediff-info").get_attribute("data-matched") not in (None, ""))
    report["flamediff_matched"] = int(d.find_element(By.ID, "flamediff-info").get_attribute("data-matched"))
    report["flamediff_totals"] = d.find_element(By.ID, "flamediff-totals").text
    report["flamediff_title"] = [f.get_attribute("title") for f in rows("#flamediff-graph .fr.match")][:1]
    if "flame_thread" in report:
        # The thread filter: this file's thread, and the second file's thread of the same name.
        step = "filter the differential flame graph by thread"
        serial, name = report["flame_thread"]["serial"], report["flame_thread"]["name"]
        before = drawn()
        d.execute_script("const s=document.getElementById('profile-thread'); s.value=arguments[0];"
                         "s.dispatchEvent(new Event('change'));", serial)
        wait.until(lambda _: f"thread={serial}" in d.current_url)
        redrawn("flamediff", before)
        wait_for("#flamediff-graph .fr")
        report["flamediff_thread_totals"] = d.find_element(By.ID, "flamediff-totals").text
        step = "the second file's flame graph for the thread of that name"
        before = drawn()
        d.get(URL + "/#/flame?f=1")
        redrawn("flame", before)
        opt = next(o for o in rows("#profile-thread option") if o.text.rsplit(" (", 1)[0] == name)
        before = drawn()
        d.execute_script("const s=document.getElementById('profile-thread'); s.value=arguments[0];"
                         "s.dispatchEvent(new Event('change'));", opt.get_attribute("value"))
        wait.until(lambda _: "thread=" in d.current_url)
        redrawn("flame", before)
        wait_for(".flame .fr")
        report["b_thread_total"] = num(d.find_element(By.ID, "flame-total").text)
        before = drawn()
        d.get(URL + "/#/flamediff?f=0")
        redrawn("flamediff", before)

    click_nav("diff")
    wait_for("table.diff-table tbody tr", "list the dump diff")
    report["diff_rows"] = len(rows("table.diff-table tbody tr"))
    step = "the dump diff object by object"
    before = drawn()
    d.execute_script("const s=document.getElementById('diff-mode'); s.value='objects';"
                     "s.dispatchEvent(new Event('change'));")
    wait.until(lambda _: "mode=objects" in d.current_url)
    redrawn("diff", before)
    report["diff_objects"] = diff_objects_shown()

    # The fourth file holds CPU samples and lock times: the lock profile picked in the type picker.
    step = "pick the lock profile in the type picker"
    before = drawn()
    d.get(URL + "/#/flame?f=3")
    redrawn("flame", before)
    report["lock_kinds"] = [o.get_attribute("value") for o in rows("#profile-kind option")]
    before = drawn()
    d.execute_script("const s=document.getElementById('profile-kind'); s.value='lock';"
                     "s.dispatchEvent(new Event('change'));")
    wait.until(lambda _: "kind=lock" in d.current_url)
    redrawn("flame", before)
    wait_for(".flame .fr")
    report["lock_total"] = num(d.find_element(By.ID, "flame-total").text)

    # The unreadable third file: an error page naming it, and the server still answers.
    step = "open the unreadable file"
    d.get(URL + "/#/overview?f=2")
    wait.until(lambda _: d.find_elements(By.ID, "file-error"))
    report["bad_file"] = d.find_element(By.ID, "file-error").text
    step = "come back to the first file"
    d.get(URL + "/#/overview?f=0")
    d.refresh()
    view_ready("overview")
    print(json.dumps(report))
    d.quit()
except Exception:
    os.makedirs(OUT, exist_ok=True)
    shot = os.path.join(OUT, "failure.png")
    try:
        d.save_screenshot(shot)
        with open(os.path.join(OUT, "failure.html"), "w") as f:
            f.write(d.page_source)
        with open(os.path.join(OUT, "browser.log"), "w") as f:
            f.write("\n".join(str(e) for e in d.get_log("browser")))
    except Exception:
        pass
    sys.stderr.write(f"FAILED at step: {step}\nscreenshot: {shot}\n{traceback.format_exc()}\n"
                     f"seen so far: {json.dumps(report)}\n")
    d.quit()
    sys.exit(1)
