// layout.js measures the report's layout in the browser that shows it.
// browser_test.go injects it into its own copy of the report (the real
// report has no script) and reads the result back from the DOM that
// `chromium --headless --dump-dom` prints: a <pre id="layout-result">
// holding JSON.
//
// It records:
//   cells:    every th/td with a word (text between spaces) that is wider
//             than the cell's content box, or that the browser laid out
//             on more than one line (broken inside the word); with
//             window.layoutPrint set (the page measured as printed), a
//             word may break, but never between two letters or digits
//             (CJK aside) and never an option or setting, and each of its
//             lines must fit;
//   code:     every pre that wraps on screen, and every token of code
//             laid out on more than one line;
//   overflow: every element that reaches past the viewport's left or
//             right edge and is not inside a scroll container (an
//             element whose overflow-x is auto, scroll or hidden);
//   charts:   every figure.chart with its id, whether it holds an SVG and
//             its drawn size, or the note of an empty chart.
(function () {
  "use strict";
  var spaces = /[ \t\n\r\f]+/;
  var wordRE = /[^ \t\n\r\f]+/g;

  function describe(el) {
    var s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (typeof el.className === "string" && el.className) s += "." + el.className.trim().split(spaces).join(".");
    return s;
  }

  // inScroller reports whether an ancestor of el clips or scrolls its
  // content sideways, so el may be wider than the page.
  function inScroller(el) {
    for (var p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      var ox = getComputedStyle(p).overflowX;
      if (ox === "auto" || ox === "scroll" || ox === "hidden") return true;
    }
    return false;
  }

  // lines returns how many distinct lines the range's boxes sit on.
  function lines(range) {
    var tops = [];
    var rects = range.getClientRects();
    for (var i = 0; i < rects.length; i++) {
      if (rects[i].width === 0) continue;
      var top = Math.round(rects[i].top);
      if (tops.every(function (t) { return Math.abs(t - top) > 2; })) tops.push(top);
    }
    return tops.length;
  }

  // On paper, which cannot scroll, a word too long for its column may
  // break where a reader can still read it as one word: anywhere but
  // between two letters or digits (after a hyphen, slash or underscore),
  // or anywhere next to a CJK character or an emoji (which break between
  // any two). An option or setting never breaks.
  var option = /=|^-|^#/;
  var alnum = /^[\p{L}\p{N}]$/u;
  var ideographic = /[\u2E80-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFFEF]|\p{Extended_Pictographic}/u;
  // paperBreaks returns "" when every line break inside word (at pos in
  // the cell's text; at maps a position to its text node) is one paper
  // allows, and else what is wrong.
  function paperBreaks(pos, word, at) {
    if (option.test(word)) return "an option broken";
    var chars = Array.from(word);
    var off = pos, prevTop = null;
    for (var i = 0; i < chars.length; i++) {
      var a = at(off), z = at(off + chars[i].length - 1);
      off += chars[i].length;
      var r = document.createRange();
      r.setStart(a.node, a.offset);
      r.setEnd(z.node, z.offset + 1);
      var rect = r.getBoundingClientRect();
      if (rect.width === 0) continue;
      var top = Math.round(rect.top);
      if (prevTop !== null && Math.abs(top - prevTop) > 2) {
        var before = chars[i - 1], after = chars[i];
        if (alnum.test(before) && alnum.test(after) && !ideographic.test(before) && !ideographic.test(after)) {
          return "broken between " + JSON.stringify(before) + " and " + JSON.stringify(after);
        }
      }
      prevTop = top;
    }
    return "";
  }

  // words returns the words (runs of non-space text) of el with a Range
  // over each, found in el's text as a whole, so that a word split over
  // elements (a span, a <wbr>) is still one word; at maps a position in
  // that text to its text node and offset.
  function words(el) {
    var nodes = [], all = "";
    var walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (var n = walk.nextNode(); n; n = walk.nextNode()) {
      nodes.push({ node: n, start: all.length });
      all += n.data;
    }
    var at = function (pos) {
      for (var k = nodes.length - 1; k >= 0; k--) {
        if (nodes[k].start <= pos) return { node: nodes[k].node, offset: pos - nodes[k].start };
      }
      return null;
    };
    var out = [], m;
    wordRE.lastIndex = 0;
    while ((m = wordRE.exec(all)) !== null) {
      var a = at(m.index), z = at(m.index + m[0].length - 1);
      var r = document.createRange();
      r.setStart(a.node, a.offset);
      r.setEnd(z.node, z.offset + 1);
      out.push({ word: m[0], pos: m.index, range: r });
    }
    return { words: out, at: at };
  }

  // checkCode records every code block that wraps on screen (where it
  // scrolls instead) and every token of code laid out on more than one
  // line anywhere: code wraps, on paper only, at spaces.
  function checkCode(res) {
    document.querySelectorAll("pre").forEach(function (pre) {
      res.code_blocks++;
      var text = pre.textContent.replace(/\n$/, "");
      if (!window.layoutPrint) {
        var r = document.createRange();
        r.selectNodeContents(pre);
        var want = text.split("\n").filter(function (l) { return l.trim() !== ""; }).length;
        if (lines(r) > want) res.bad_code.push({ text: text.slice(0, 80), why: lines(r) + " lines for " + want });
      }
      words(pre).words.forEach(function (wd) {
        if (lines(wd.range) > 1) res.bad_code.push({ text: text.slice(0, 80), why: "token " + wd.word + " broken" });
      });
    });
  }

  function checkCells(res) {
    var probe = document.createElement("span");
    probe.style.cssText = "position:absolute;visibility:hidden;white-space:nowrap;left:0;top:0;padding:0;border:0;margin:0";
    document.querySelectorAll("th, td").forEach(function (cell) {
      res.cells++;
      var cs = getComputedStyle(cell);
      var box = cell.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      var text = cell.textContent;
      var longest = "", width = 0;
      cell.appendChild(probe);
      text.split(spaces).forEach(function (w) {
        if (!w) return;
        probe.textContent = w;
        var pw = probe.getBoundingClientRect().width;
        if (pw > width) { width = pw; longest = w; }
      });
      cell.removeChild(probe);
      var cr = cell.getBoundingClientRect();
      var left = cr.left + cell.clientLeft + parseFloat(cs.paddingLeft);
      var right = left + box;
      var broken = [], outside = [];
      var t = words(cell);
      t.words.forEach(function (wd) {
        var r = wd.range;
        if (lines(r) > 1) {
          var why = window.layoutPrint ? paperBreaks(wd.pos, wd.word, t.at) : "broken";
          if (why) broken.push(wd.word + " (" + why + ")");
        }
        var rects = r.getClientRects();
        for (var k = 0; k < rects.length; k++) {
          if (rects[k].width > 0 && (rects[k].left < left - 1 || rects[k].right > right + 1)) {
            outside.push(wd.word);
            break;
          }
        }
      });
      // On screen a word must fit whole; on paper its lines must.
      var tooWide = window.layoutPrint ? outside.length > 0 : width > box + 1;
      if (tooWide || broken.length > 0) {
        res.bad_cells.push({
          text: text.slice(0, 80), word: (outside[0] || longest).slice(0, 80),
          word_px: Math.round(width * 10) / 10, box_px: Math.round(box * 10) / 10, broken: broken.slice(0, 5)
        });
      }
    });
  }

  function checkOverflow(res) {
    var vw = document.documentElement.clientWidth;
    var over = new Set();
    // Elements come in document order, parents first: only the outermost
    // element of an overflowing subtree is recorded.
    document.querySelectorAll("body *").forEach(function (el) {
      if (el.id === "layout-result") return;
      var r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return;
      if ((r.right > vw + 1 || r.left < -1) && !inScroller(el)) {
        over.add(el);
        if (!over.has(el.parentElement)) {
          res.overflow.push({ element: describe(el), text: (el.textContent || "").trim().slice(0, 60), left: Math.round(r.left), right: Math.round(r.right) });
        }
      }
    });
    res.scroll_width = document.documentElement.scrollWidth;
    document.querySelectorAll(".table-wrap").forEach(function (w) {
      if (w.scrollWidth > w.clientWidth + 1) res.scrolling_tables++;
    });
  }

  function checkCharts(res) {
    document.querySelectorAll("figure.chart").forEach(function (f) {
      var svg = f.querySelector("svg");
      var c = { id: f.id, svg: !!svg, empty: "" };
      if (svg) {
        var r = svg.getBoundingClientRect();
        c.width = Math.round(r.width);
        c.height = Math.round(r.height);
        c.shapes = svg.querySelectorAll("path, rect, line, polyline, polygon, circle, text").length;
      } else if (f.classList.contains("chart-empty")) {
        var p = f.querySelector("p");
        c.empty = p ? p.textContent.trim() : "";
      }
      res.charts.push(c);
    });
  }

  function run() {
    var res = {
      viewport: document.documentElement.clientWidth, cells: 0, bad_cells: [], code_blocks: 0, bad_code: [],
      overflow: [], scroll_width: 0, scrolling_tables: 0, charts: [],
      font: getComputedStyle(document.body).fontFamily
    };
    try {
      checkCells(res);
      checkCode(res);
      checkOverflow(res);
      checkCharts(res);
    } catch (e) {
      res.error = String(e && e.stack || e);
    }
    var out = document.createElement("pre");
    out.id = "layout-result";
    out.style.display = "none";
    out.textContent = JSON.stringify(res);
    document.body.appendChild(out);
  }

  if (document.readyState === "complete") run();
  else window.addEventListener("load", run);
})();
