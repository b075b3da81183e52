#!/usr/bin/env python3
"""Read report.html's Verification section for tests/bridge/test_report_html.sh.

Usage: report_checks.py REPORT.html

Checks that the whole page is well-formed HTML (every element closed in
order, void elements aside) and prints, one line each:
  verify-summary: TEXT
  diff-summary: TEXT
  row: TABLE|CELL|CELL...[|marked]  (the rows of table#checks; marked: class "over")
  example: KIND|KEY|COLUMNS      (the rows of the diff examples tables)
Exit status 1 (with the reason on stderr) when the page is not well-formed
or has no Verification section.
"""
import sys
from html.parser import HTMLParser

# (SVG elements dot writes self-closed, <path .../>, come to handle_startendtag)
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
        "meta", "source", "track", "wbr"}


class Report(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors = [], []
        self.rows, self.examples, self.summaries = [], [], {}
        self.table = None          # "checks" / "examples" while inside one
        self.row = None
        self.cell = None
        self.summary = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "table" and a.get("id") == "checks":
            self.table = "checks"
        elif tag == "table" and "examples" in (a.get("class") or ""):
            self.table = "examples"
        elif tag == "tr" and self.table:
            self.row = ["*" if a.get("class") == "over" else ""]
        elif tag == "td" and self.row is not None:
            self.cell = ""
        elif tag == "p" and (a.get("id") or "").endswith("-summary"):
            self.summary = a["id"]
            self.summaries[self.summary] = ""

    def handle_startendtag(self, tag, attrs):
        pass                        # <path .../> and the like: nothing to close

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"line {self.getpos()[0]}: </{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()
        if tag == "td" and self.cell is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if len(self.row) > 1:
                (self.rows if self.table == "checks" else self.examples).append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None
        elif tag == "p":
            self.summary = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.summary:
            self.summaries[self.summary] += data


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    r = Report()
    r.feed(text)
    r.close()
    if r.stack:
        r.errors.append("not closed at the end: " + " ".join(r.stack))
    if "<!-- cqlbridge:verification -->" not in text:
        r.errors.append("no Verification section")
    if r.errors:
        print("\n".join(r.errors[:10]), file=sys.stderr)
        return 1
    for k in ("verify-summary", "diff-summary"):
        print(f"{k}: {' '.join(r.summaries.get(k, '').split())}")
    for row in r.rows:
        print("row: " + "|".join(row[1:]) + ("|marked" if row[0] else ""))
    for row in r.examples:
        print("example: " + "|".join(row[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
