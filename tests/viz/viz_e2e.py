#!/usr/bin/env python3
"""VIZ end to end: a small training step runs with VIZ=1 and saves its trace; `tg viz` serves it;
headless Chromium opens the page, follows the sidebar's link to a kernel (a click) and the
rewrites tab's link to a step, and the dumped DOM must show that kernel's and that step's node
names and rule names, read independently from the saved JSON. Screenshots go to OUT_DIR.

usage: viz_e2e.py TG TRAIN_STEP OUT_DIR   (exit 77 when chromium is absent)"""
import html, json, os, re, shutil, signal, subprocess, sys, time

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None

def browser(exe, profile, url, *mode):
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
           "--user-data-dir=" + profile, "--window-size=1200,800", *mode, url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit("chromium failed on %s (exit %d): %s" % (url, r.returncode, r.stderr[-2000:]))
    return r.stdout

def check(cond, what):
    if not cond:
        sys.exit("FAILED: " + what)
    print("ok:", what)

def label(node):  # what the SVG shows for a node's first line
    dtype = "" if node["dtype"] in ("", "void") else " " + node["dtype"]
    return node["op"] + dtype

def main():
    tg, train_step, out = sys.argv[1:4]
    exe = chromium()
    if not exe:
        print("skipped: unavailable (no chromium)")
        return 77
    os.makedirs(out, exist_ok=True)
    trace_path = os.path.join(out, "trace.json")
    env = dict(os.environ, VIZ="1", VIZ_FILE=trace_path)
    r = subprocess.run([train_step], env=env, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "the training step ran with VIZ=1 (%s)" % r.stderr[-500:])
    check("saved to " + trace_path in r.stderr, "it said where the trace went")
    trace = json.load(open(trace_path))
    kernels = [(ri, ki, k) for ri, rz in enumerate(trace["realizes"]) for ki, k in enumerate(rz["kernels"])]
    check(len(kernels) >= 3, "the trace holds the step's kernels (%d)" % len(kernels))
    # The smallest rewrite (of 6 nodes or more, where there is one) that created nodes: quick to
    # lay out, readable in the screenshot.
    steps = [(len(rw["after"]) < 6, len(rw["after"]), ri, ki, s) for ri, ki, k in kernels for s, rw in enumerate(k["rewrites"])
             if any(n.get("changed") for n in rw["after"])]
    check(steps, "some kernel recorded graph_rewrite calls that created nodes")
    _, _, ri, ki, step = min(steps)
    kernel = trace["realizes"][ri]["kernels"][ki]

    env = dict(os.environ)
    env.pop("VIZ", None)
    server = subprocess.Popen([tg, "viz", trace_path, "--port", "0"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = server.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:\d+/", line)
        check(m is not None, "tg viz printed a loopback URL: " + line.strip())
        base = m.group(0)
        profile = os.path.join(out, "chromium-profile")

        dom = browser(exe, profile, base + "?r=%d" % ri, "--dump-dom")
        check('id="timeline"' in dom, "the realize page shows the schedule timeline")
        link = re.search(r'id="kernel-%d-%d" href="([^"]+)"' % (ri, ki), dom) or \
            re.search(r'href="([^"]+)"[^>]*id="kernel-%d-%d"' % (ri, ki), dom)
        check(link is not None, "the sidebar links kernel %d of realize %d" % (ki, ri))
        kernel_url = base.rstrip("/") + html.unescape(link.group(1))
        widest = max(range(len(trace["realizes"])), key=lambda i: len(trace["realizes"][i]["kernels"]))
        browser(exe, profile, base + "?r=%d" % widest, "--screenshot=" + os.path.join(out, "schedule.png"))

        dom = browser(exe, profile, kernel_url, "--dump-dom")
        check(html.escape(kernel["name"]) in dom, "the kernel page names the kernel " + kernel["name"])
        tab = re.search(r'id="tab-rewrite"[^>]*href="([^"]+)"', dom) or re.search(r'href="([^"]+)"[^>]*>rewrites', dom)
        check(tab is not None, "the kernel page links its rewrites")
        step_url = base.rstrip("/") + html.unescape(tab.group(1)) + "&step=%d" % step
        dom = browser(exe, profile, step_url, "--dump-dom")
        rw = kernel["rewrites"][step]
        for s in rw["steps"][:3]:
            check(html.escape(s["rule"]) in dom, "step %d lists the rule '%s'" % (step, s["rule"]))
        svg_text = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", dom))
        for node in {label(n) for n in rw["after"]}:
            check(html.escape(node) in svg_text, "the laid-out graph shows node '%s'" % node)
        changed = sum(1 for n in rw["after"] if n.get("changed"))
        check(dom.count('class="node changed"') == changed,
              "the %d changed nodes are highlighted" % changed)
        browser(exe, profile, step_url, "--screenshot=" + os.path.join(out, "rewrite.png"))
        check(os.path.getsize(os.path.join(out, "rewrite.png")) > 1000, "a screenshot was saved")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)
    print("screenshots:", os.path.join(out, "schedule.png"), os.path.join(out, "rewrite.png"))
    return 0

if __name__ == "__main__":
    sys.exit(main())
