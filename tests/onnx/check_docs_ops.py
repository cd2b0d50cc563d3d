#!/usr/bin/env python3
"""Checks that docs/onnx.md's op list (between the ops markers) is what `tg onnx-test --list-ops`
prints. usage: check_docs_ops.py TG DOCS_MD"""
import subprocess
import sys

tg, docs = sys.argv[1], sys.argv[2]
printed = subprocess.run([tg, "onnx-test", "--list-ops"], check=True, capture_output=True, text=True).stdout.strip()
text = open(docs, encoding="utf-8").read()
begin, end = "<!-- ops begin -->\n", "\n<!-- ops end -->"
if begin not in text or end not in text:
    sys.exit(f"{docs}: no '<!-- ops begin -->' ... '<!-- ops end -->' section")
listed = text[text.index(begin) + len(begin):text.index(end)].strip()
if listed != printed:
    print(f"{docs} lists:\n{listed}\n\n`tg onnx-test --list-ops` prints:\n{printed}")
    sys.exit(f"{docs}: the op list differs from the code; paste the second into the first")
print(f"{docs}: op list matches the code")
