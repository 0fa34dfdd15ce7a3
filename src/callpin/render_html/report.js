(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var ops = Array.prototype.slice.call(document.querySelectorAll(".op"));
  var position = document.getElementById("position");
  var current = -1;
  function show(k, scroll) {
    if (!ops.length) return;
    current = (k + ops.length) % ops.length;
    var old = document.querySelector(".op.current");
    if (old) old.classList.remove("current");
    var row = ops[current];
    row.classList.add("current");
    if (scroll) row.scrollIntoView({block: "center"});
    history.replaceState(null, "", "#" + row.id);
    if (position) position.textContent = (current + 1) + " / " + ops.length;
  }
  function fromHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    for (var k = 0; k < ops.length; k++) if (ops[k].id === id) { show(k, true); return; }
  }
  function step(by) { show(current < 0 && by < 0 ? 0 : current + by, true); }
  var next = document.getElementById("next"), prev = document.getElementById("prev");
  if (next) next.addEventListener("click", function () { step(1); });
  if (prev) prev.addEventListener("click", function () { step(-1); });
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target && e.target.tagName;
    if (t === "INPUT" || t === "TEXTAREA" || t === "SELECT") return;
    if (e.key === "n" || e.key === "j") { step(1); e.preventDefault(); }
    else if (e.key === "p" || e.key === "k") { step(-1); e.preventDefault(); }
  });
  window.addEventListener("hashchange", fromHash);
  ops.forEach(function (row, k) {
    row.addEventListener("click", function (e) {
      if (!(e.target.closest && e.target.closest("a,summary"))) show(k, false);
    });
  });
  if (location.hash) fromHash();

  function inflate(text) {
    var bytes = Uint8Array.from(atob(text), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    return new Response(stream).arrayBuffer().then(function (buffer) { return new Uint8Array(buffer); });
  }

  // ---- Folded equal events kept as their frames (render_html/packing.py) ----
  // Each is decoded here (msgpack, only what docs/FORMAT.md writes) and drawn as
  // render_html/cells.py draws it; every text reaches the page as textContent.
  var factsNode = document.getElementById("callpin-facts");
  var facts = factsNode ? JSON.parse(factsNode.textContent) : null;
  var KINDS = ["call", "return", "raise", "mark"];
  var ARROWS = {call: "call", "return": "ret", raise: "raise"};
  var MAX_NESTING = 1024, MAX_EXT_NESTING = 100;
  var utf8 = new TextDecoder("utf-8", {fatal: true});

  function Unreadable(reason) { this.reason = reason; }
  function fail(reason) { throw new Unreadable(reason); }
  // The Python types a text must tell apart from JavaScript's own values.
  function PyFloat(v) { this.v = v; }
  function PyBytes(b) { this.b = b; }
  function PyTuple(items) { this.items = items; }
  function PyDict(keys, values) { this.keys = keys; this.values = values; }
  function PyExt(code, parts) { this.code = code; this.parts = parts; }
  // A set as Python decodes it: `ordered` when its elements form a set (each hashable,
  // none equal to another), which value_text writes in the order of their texts;
  // otherwise its elements are kept as stored and written so.
  function PySet(frozen, items, ordered) { this.frozen = frozen; this.items = items; this.ordered = ordered; }

  function Reader(bytes, start, end) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = start;
    this.end = end;
    this.nesting = 0;
    this.extNesting = 0;
  }
  Reader.prototype.take = function (n) {
    var at = this.pos;
    if (at + n > this.end) fail("truncated value");
    this.pos = at + n;
    return at;
  };
  Reader.prototype.int64 = function (signed) {
    var at = this.take(8);
    var big = signed ? this.view.getBigInt64(at) : this.view.getBigUint64(at);
    return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
  };
  Reader.prototype.str = function (n) {
    var at = this.take(n);
    try { return utf8.decode(this.bytes.subarray(at, at + n)); } catch (e) { fail("text that is not UTF-8"); }
  };
  Reader.prototype.items = function (n) {
    var items = [];
    for (var k = 0; k < n; k++) items.push(this.value());
    return items;
  };
  Reader.prototype.map = function (n) {
    var keys = [], values = [];
    for (var k = 0; k < n; k++) { keys.push(this.value()); values.push(this.value()); }
    return dictOf(keys, values);
  };
  Reader.prototype.value = function () {
    if (++this.nesting > MAX_NESTING) fail("value nested too deep");
    try { return this.one(); } finally { this.nesting--; }
  };
  Reader.prototype.one = function () {
    var v = this.view, b = this.bytes[this.take(1)];
    if (b <= 0x7f) return b;
    if (b >= 0xe0) return b - 256;
    if (b <= 0x8f) return this.map(b & 0x0f);
    if (b <= 0x9f) return this.items(b & 0x0f);
    if (b <= 0xbf) return this.str(b & 0x1f);
    switch (b) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: return this.bin(v.getUint8(this.take(1)));
      case 0xc5: return this.bin(v.getUint16(this.take(2)));
      case 0xc6: return this.bin(v.getUint32(this.take(4)));
      case 0xc7: return this.ext(v.getUint8(this.take(1)));
      case 0xc8: return this.ext(v.getUint16(this.take(2)));
      case 0xc9: return this.ext(v.getUint32(this.take(4)));
      case 0xca: return new PyFloat(v.getFloat32(this.take(4)));
      case 0xcb: return new PyFloat(v.getFloat64(this.take(8)));
      case 0xcc: return v.getUint8(this.take(1));
      case 0xcd: return v.getUint16(this.take(2));
      case 0xce: return v.getUint32(this.take(4));
      case 0xcf: return this.int64(false);
      case 0xd0: return v.getInt8(this.take(1));
      case 0xd1: return v.getInt16(this.take(2));
      case 0xd2: return v.getInt32(this.take(4));
      case 0xd3: return this.int64(true);
      case 0xd4: return this.ext(1);
      case 0xd5: return this.ext(2);
      case 0xd6: return this.ext(4);
      case 0xd7: return this.ext(8);
      case 0xd8: return this.ext(16);
      case 0xd9: return this.str(v.getUint8(this.take(1)));
      case 0xda: return this.str(v.getUint16(this.take(2)));
      case 0xdb: return this.str(v.getUint32(this.take(4)));
      case 0xdc: return this.items(v.getUint16(this.take(2)));
      case 0xdd: return this.items(v.getUint32(this.take(4)));
      case 0xde: return this.map(v.getUint16(this.take(2)));
      case 0xdf: return this.map(v.getUint32(this.take(4)));
    }
    fail("a byte no msgpack value starts with");
  };
  Reader.prototype.bin = function (n) {
    var at = this.take(n);
    return new PyBytes(this.bytes.subarray(at, at + n));
  };
  Reader.prototype.ext = function (n) {
    var code = this.view.getInt8(this.take(1));
    var at = this.take(n);
    if (++this.extNesting > MAX_EXT_NESTING) fail("value nested too deep");
    try {
      if (code === 6) {
        if (n !== 16) fail("malformed uuid");
        return new PyExt(6, [this.bytes.subarray(at, at + 16)]);
      }
      var inner = new Reader(this.bytes, at, at + n);
      inner.nesting = this.nesting;
      inner.extNesting = this.extNesting;
      var payload = inner.value();
      if (inner.pos !== at + n) fail("malformed ext payload");
      return extValue(code, payload);
    } finally { this.extNesting--; }
  };

  var SHAPES = {12: "ss", 13: "sm", 14: "sl", 15: "si", 17: "ss", 19: "ss", 20: "si", 21: "s*", 22: "sim"};
  function extValue(code, payload) {
    if (code === 1) {
      if (!Array.isArray(payload)) fail("malformed ext payload");
      return new PyTuple(payload);
    }
    if (code === 2 || code === 3) {
      if (!Array.isArray(payload)) fail("malformed ext payload");
      var signs = payload.map(keySign);
      var ordered = signs.indexOf(null) < 0 && new Set(signs).size === signs.length;
      return new PySet(code === 3, payload, ordered);
    }
    if (code === 16) {
      if (!isInt(payload)) fail("malformed cycle marker");
      return new PyExt(16, [payload]);
    }
    var shape = SHAPES[code];
    if (!shape) fail("a value of ext type " + code + ", drawn only by callpin itself");
    if (!Array.isArray(payload) || payload.length !== shape.length) fail("malformed ext payload");
    for (var k = 0; k < shape.length; k++) {
      var part = payload[k], c = shape[k];
      var fits = c === "*" || (c === "s" && typeof part === "string") || (c === "i" && isInt(part)) ||
        (c === "l" && Array.isArray(part)) || (c === "m" && part instanceof PyDict);
      if (!fits) fail("malformed ext payload");
    }
    if (code === 13 || code === 22) {
      var fields = payload[payload.length - 1];
      if (!fields.keys.every(function (key) { return typeof key === "string"; })) fail("malformed record");
    }
    return new PyExt(code, payload);
  }
  function isInt(v) { return typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v)); }

  // A map as Python builds it: equal hashable keys collapse into the first one,
  // holding the last value; a map with an unhashable key keeps every pair.
  function dictOf(keys, values) {
    var seen = new Map(), signs = [];
    for (var k = 0; k < keys.length; k++) {
      var sign = keySign(keys[k]);
      if (sign === null) return new PyDict(keys, values);
      signs.push(sign);
    }
    var kept = [], held = [];
    for (k = 0; k < keys.length; k++) {
      var at = seen.get(signs[k]);
      if (at === undefined) { seen.set(signs[k], kept.length); kept.push(keys[k]); held.push(values[k]); }
      else held[at] = values[k];
    }
    return new PyDict(kept, held);
  }
  var nanCount = 0;
  function keySign(v) {
    if (v === null) return "N";
    if (v === true || v === false) return "n" + (v ? 1 : 0);
    if (typeof v === "number" || typeof v === "bigint") return "n" + String(v);
    if (typeof v === "string") return "s" + v;
    if (v instanceof PyFloat) {
      if (v.v !== v.v) return "nan" + (nanCount++);
      return Number.isInteger(v.v) ? "n" + BigInt(v.v).toString() : "f" + String(v.v);
    }
    if (v instanceof PyBytes) return "b" + Array.prototype.join.call(v.b, ",");
    if (v instanceof PySet) {
      if (!v.frozen || !v.ordered) return null;
      return JSON.stringify(["frozenset", v.items.map(keySign).sort()]);
    }
    var parts = v instanceof PyTuple ? v.items : v instanceof PyExt ? v.parts : null;
    if (parts === null) return null;
    var signs = [];
    for (var k = 0; k < parts.length; k++) {
      var part = parts[k];
      var sign = part instanceof PyDict ? null : part instanceof Uint8Array ? Array.prototype.join.call(part, ",") :
        Array.isArray(part) && v instanceof PyExt ? keySign(new PyTuple(part)) : keySign(part);
      if (sign === null) return null;
      signs.push(sign);
    }
    return JSON.stringify([v instanceof PyTuple ? "t" : v.code, signs]);
  }

  // ---- Text as Python writes it (text.py: printable, value_text; event.py: render_event) ----
  var NOT_PRINTABLE = /(?! )[\p{C}\p{Z}]/u;
  var NOT_PRINTABLE_ALL = /(?! )[\p{C}\p{Z}]/gu;
  function hex(n, width) { var t = n.toString(16); while (t.length < width) t = "0" + t; return t; }
  function escapeChar(ch) {
    var c = ch.codePointAt(0);
    if (c === 9) return "\\t";
    if (c === 10) return "\\n";
    if (c === 13) return "\\r";
    return c < 0x100 ? "\\x" + hex(c, 2) : c < 0x10000 ? "\\u" + hex(c, 4) : "\\U" + hex(c, 8);
  }
  function printable(text) { return NOT_PRINTABLE.test(text) ? text.replace(NOT_PRINTABLE_ALL, escapeChar) : text; }
  function strRepr(s) {
    var quote = s.indexOf("'") >= 0 && s.indexOf('"') < 0 ? '"' : "'";
    if (/^[\x20-\x7e]*$/.test(s) && s.indexOf(quote) < 0 && s.indexOf("\\") < 0) return quote + s + quote;
    var out = quote;
    for (var ch of s) {
      var c = ch.codePointAt(0);
      if (ch === quote || ch === "\\") out += "\\" + ch;
      else if (c < 0x20 || c === 0x7f) out += escapeChar(ch);
      else if (c < 0x7f || !NOT_PRINTABLE.test(ch)) out += ch;
      else out += escapeChar(ch);
    }
    return out + quote;
  }
  function bytesRepr(b) {
    var quote = b.indexOf(39) >= 0 && b.indexOf(34) < 0 ? '"' : "'", q = quote.charCodeAt(0);
    var out = "b" + quote;
    for (var k = 0; k < b.length; k++) {
      var c = b[k];
      if (c === q || c === 92) out += "\\" + String.fromCharCode(c);
      else if (c === 9) out += "\\t";
      else if (c === 10) out += "\\n";
      else if (c === 13) out += "\\r";
      else if (c < 0x20 || c >= 0x7f) out += "\\x" + hex(c, 2);
      else out += String.fromCharCode(c);
    }
    return out + quote;
  }
  function floatRepr(x) {
    if (x !== x) return "nan";
    if (x === Infinity) return "inf";
    if (x === -Infinity) return "-inf";
    if (x === 0) return 1 / x < 0 ? "-0.0" : "0.0";
    var m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(x.toExponential());
    var sign = m[1], digits = m[2] + (m[3] || ""), exp = parseInt(m[4], 10);
    if (exp < -4 || exp >= 16) {
      var mantissa = digits[0] + (digits.length > 1 ? "." + digits.slice(1) : "");
      var e = Math.abs(exp);
      return sign + mantissa + "e" + (exp < 0 ? "-" : "+") + (e < 10 ? "0" : "") + e;
    }
    if (exp < 0) return sign + "0." + "0".repeat(-exp - 1) + digits;
    if (digits.length <= exp + 1) return sign + digits + "0".repeat(exp + 1 - digits.length) + ".0";
    return sign + digits.slice(0, exp + 1) + "." + digits.slice(exp + 1);
  }
  // Python's order of texts: by code point (a JavaScript sort compares UTF-16 units).
  function byCodePoints(a, b) {
    var i = 0, j = 0;
    while (i < a.length && j < b.length) {
      var x = a.codePointAt(i), y = b.codePointAt(j);
      if (x !== y) return x - y;
      i += x > 0xffff ? 2 : 1;
      j += y > 0xffff ? 2 : 1;
    }
    return (a.length - i) - (b.length - j);
  }
  function shortName(qualified) { return qualified.indexOf("<") >= 0 ? qualified : qualified.slice(qualified.lastIndexOf(".") + 1); }
  function uuidText(b) {
    var h = Array.prototype.map.call(b, function (c) { return hex(c, 2); }).join("");
    return "UUID('" + h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20) + "')";
  }
  // value_text: repr() of the decoded value, cut to "..." past SHOWN_DEPTH levels.
  function valueText(v) { return textAt(v, facts.shownDepth); }
  function textAt(v, depth) {
    if (depth <= 0) return "...";
    var inner = function (item) { return textAt(item, depth - 1); };
    if (v === null) return "None";
    if (v === true) return "True";
    if (v === false) return "False";
    if (typeof v === "number" || typeof v === "bigint") return String(v);
    if (typeof v === "string") return strRepr(v);
    if (v instanceof PyFloat) return floatRepr(v.v);
    if (v instanceof PyBytes) return bytesRepr(v.b);
    if (Array.isArray(v)) return "[" + v.map(inner).join(", ") + "]";
    if (v instanceof PyTuple) return "(" + v.items.map(inner).join(", ") + (v.items.length === 1 ? ",)" : ")");
    if (v instanceof PySet) {
      if (!v.items.length) return v.frozen ? "frozenset()" : "set()";
      var texts = v.items.map(inner);
      if (v.ordered) texts.sort(byCodePoints);
      var inside = "{" + texts.join(", ") + "}";
      return v.frozen ? "frozenset(" + inside + ")" : inside;
    }
    if (v instanceof PyDict) {
      return "{" + v.keys.map(function (key, k) { return inner(key) + ": " + inner(v.values[k]); }).join(", ") + "}";
    }
    var p = v.parts;
    var named = function (fields) {
      return fields.keys.map(function (name, k) { return name + "=" + inner(fields.values[k]); }).join(", ");
    };
    switch (v.code) {
      case 6: return uuidText(p[0]);
      case 12: return shortName(p[0]) + "." + p[1];
      case 13: return shortName(p[0]) + "(" + named(p[1]) + ")";
      case 14: return shortName(p[0]) + "(" + p[1].map(inner).join(", ") + ")";
      case 15: return "<" + p[0] + ":" + p[1] + ">";
      case 16: return "<cycle:" + p[0] + ">";
      case 17: return p[1];
      case 19: return "<unencodable " + shortName(p[0]) + ": " + p[1] + ">";
      case 20: return "<" + shortName(p[0]) + "#" + p[1] + ">";
      case 21: return shortName(p[0]) + "(" + inner(p[1]) + ")";
      case 22: return shortName(p[0]) + "#" + p[1] + "(" + named(p[2]) + ")";
    }
    fail("a value this page cannot write");
  }

  function decodeEvent(bytes, start, end) {
    var reader = new Reader(bytes, start, end);
    var f = reader.value();
    if (reader.pos !== end) fail("bytes after the event");
    if (!Array.isArray(f) || f.length !== 8) fail("not an event array");
    var kind = f[0], label = f[1], args = f[2], kwargs = f[3], error = f[5], thread = f[6], depth = f[7];
    var wellFormed = typeof kind === "number" && kind >= 0 && kind < 4 && Number.isInteger(kind) &&
      typeof label === "string" && Array.isArray(args) && kwargs instanceof PyDict &&
      kwargs.keys.every(function (key) { return typeof key === "string"; }) &&
      (error === null || (Array.isArray(error) && error.length === 2 &&
        typeof error[0] === "string" && typeof error[1] === "string")) &&
      isInt(thread) && thread >= 1 && isInt(depth) && depth >= 0;
    if (!wellFormed) fail("a malformed event");
    return {kind: KINDS[kind], label: label, args: args, kwargs: kwargs, value: f[4], error: error,
            thread: thread, depth: depth};
  }
  // render_event of the event at thread 1 and depth 0 (the cell shows both its own way).
  function eventLine(e) {
    var text;
    if (e.kind === "mark") text = "mark " + e.label + " = " + valueText(e.value);
    else {
      text = e.label;
      if (e.kind === "call" || e.args.length || e.kwargs.keys.length) {
        var parts = e.args.map(valueText);
        e.kwargs.keys.forEach(function (name, k) { parts.push(name + "=" + valueText(e.kwargs.values[k])); });
        text += "(" + parts.join(", ") + ")";
      }
      if (e.kind === "return") text += " → " + valueText(e.value);
      else if (e.kind === "raise") text += raisedText(e.error || ["?", ""]);
    }
    return printable(text);
  }
  function raisedText(error) { return error[1] ? " !! " + error[0] + ": " + error[1] : " !! " + error[0]; }

  // ---- Cells as cells.py draws them ----
  function element(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text) node.textContent = text;
    return node;
  }
  function styled(node, style) { node.setAttribute("style", style); return node; }
  function threadClass(thread) { return "t" + (Number((BigInt(thread) - 1n) % BigInt(facts.threadColors)) + 1); }
  function codePoints(text) { return text.length <= facts.longChars ? null : Array.from(text); }
  function textCell(e) {
    var plain = e.line, depth = e.depth, cell = element("span", "tx k-" + e.kind);
    var parts = [];
    if (depth > facts.indentDepth) {
      parts.push(element("span", "dp", "[depth " + depth + "] "));
      depth = facts.indentDepth;
    }
    if (depth > 0) styled(cell, "--d:" + depth);
    var tail = null;
    if (e.kind === "raise" && e.error !== null) {
      var raised = printable(raisedText(e.error));
      if (plain.slice(plain.length - raised.length) === raised) {
        plain = plain.slice(0, plain.length - raised.length);
        tail = element("span", "err", raised);
      }
    }
    parts.push(document.createTextNode(plain));
    if (tail) parts.push(tail);
    var points = codePoints(plain);
    if (points && points.length > facts.longChars) {
      var open = element("details", "long"), summary = element("summary");
      summary.append(points.slice(0, facts.longHead).join("") + "… ",
        element("em", "", "(" + String(points.length).replace(/\B(?=(\d{3})+(?!\d))/g, ",") + " characters)"));
      open.append.apply(open, [summary].concat(parts));
      parts = [open];
    }
    cell.append.apply(cell, parts.filter(function (part) { return part.nodeType !== 3 || part.data; }));
    return cell;
  }
  // Like the Python painter, each distinct drawing is built once, then copied.
  var drawings = new Map();
  function drawing(e, step) {
    var key = [e.kind, e.thread, step.source, step.target, step.bars.join(";")].join("|");
    var drawn = drawings.get(key);
    if (!drawn) drawings.set(key, drawn = newDrawing(e, step));
    return drawn.cloneNode(true);
  }
  function newDrawing(e, step) {
    var g = element("span", "g " + threadClass(e.thread));
    var last = step.bars.length - 1;
    step.bars.forEach(function (bar, k) {
      var end = "";
      if (k === last && e.kind === "call") end = " top";
      else if (k === last && e.kind !== "mark" && bar[0] === step.source) end = " end";
      g.appendChild(styled(element("b", "bar" + end), "--l:" + bar[0] + ";--k:" + bar[1]));
    });
    if (e.kind === "mark") g.appendChild(styled(element("i", "mk"), "--a:" + step.source));
    else if (step.source === step.target) g.appendChild(styled(element("i", "ar " + ARROWS[e.kind] + " self"), "--a:" + step.source));
    else {
      var direction = step.target > step.source ? "r" : "l";
      g.appendChild(styled(element("i", "ar " + ARROWS[e.kind] + " " + direction),
        "--a:" + Math.min(step.source, step.target) + ";--n:" + Math.abs(step.target - step.source)));
    }
    return g;
  }
  function sideCell(row, index, e, step) {
    if (index === null) {
      row.append(element("span", "ix"), element("span", "g"), element("span", "tx"));
      return;
    }
    var ix = element("span", "ix", String(index));
    if (e instanceof Unreadable) {
      row.append(ix, element("span", "g"), element("span", "tx bad", "unreadable event: " + e.reason));
      return;
    }
    if (e.thread != 1) ix.append(" ", element("b", threadClass(e.thread), "t" + e.thread));
    row.append(ix, drawing(e, step), textCell(e));
  }

  // ---- Placing, as render_html/sequence.py places events ----
  function opened(flat) {
    var stacks = new Map();
    flat.forEach(function (item) {
      var calls = [];
      for (var k = 1; k < item.length; k += 2) calls.push([item[k], item[k + 1]]);
      stacks.set(String(item[0]), calls);
    });
    return stacks;
  }
  function laneOf(label) {
    var dot = label.lastIndexOf(".");
    var lane = facts.lanes[dot > 0 ? label.slice(0, dot) : label];
    return lane === undefined ? 0 : lane;
  }
  function bars(stack) {
    var placed = [];
    stack.forEach(function (call) {
      placed.push([call[1], placed.filter(function (bar) { return bar[0] === call[1]; }).length]);
    });
    return placed;
  }
  function place(stacks, e) {
    var key = String(e.thread), stack = stacks.get(key), depth = e.depth, caller;
    if (!stack) { stack = []; stacks.set(key, stack); }
    var top = function () { return stack[stack.length - 1]; };
    if (e.kind === "mark" || e.kind === "call") {
      while (stack.length && top()[0] >= depth) stack.pop();
      caller = stack.length ? top()[1] : 0;
      if (e.kind === "mark") return {source: caller, target: caller, bars: bars(stack)};
      var lane = laneOf(e.label);
      stack.push([depth, lane]);
      return {source: caller, target: lane, bars: bars(stack)};
    }
    while (stack.length && top()[0] > depth) stack.pop();
    var returning = stack.length > 0 && top()[0] == depth;
    var below = returning ? stack.slice(0, -1) : stack;
    caller = below.length ? below[below.length - 1][1] : 0;
    var step = {source: laneOf(e.label), target: caller, bars: bars(stack)};
    if (returning) stack.pop();
    return step;
  }

  // A frames chunk's rows: each equal event at its old and its new place.
  function drawFrames(chunk, bytes) {
    var count = Number(chunk.dataset.count), newStart = Number(chunk.dataset.new);
    var oldStart = chunk.dataset.old === "" ? null : Number(chunk.dataset.old);
    var both = JSON.parse(chunk.dataset.stacks);
    var sides = [{stacks: opened(both[0])}, {stacks: opened(both[1])}];
    var view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    var at = 0;
    function framesOf(side) {
      if (at + 4 * count > bytes.length) fail("a chunk cut short");
      var bounds = [], start = at + 4 * count;
      for (var k = 0; k < count; k++) {
        var end = start + view.getUint32(at + 4 * k, true);
        bounds.push([start, end]);
        start = end;
      }
      if (start > bytes.length) fail("a chunk cut short");
      side.bounds = bounds;
      at = start;
    }
    framesOf(sides[1]);
    if (chunk.dataset.pairs) framesOf(sides[0]);
    else sides[0].bounds = sides[1].bounds;
    var part = document.createDocumentFragment();
    for (var k = 0; k < count; k++) {
      var row = element("div", "row eq");
      row.appendChild(element("i"));
      var shared = null;
      [0, 1].forEach(function (s) {
        var side = sides[s], index = s === 0 ? (oldStart === null ? null : oldStart + k) : newStart + k;
        if (index === null) { sideCell(row, null); return; }
        var bound = side.bounds[k], e;
        if (s === 1 && shared && sides[0].bounds === sides[1].bounds) e = shared;
        else {
          try {
            e = decodeEvent(bytes, bound[0], bound[1]);
            e.line = eventLine(e);
          } catch (err) {
            if (!(err instanceof Unreadable)) throw err;
            e = err;
          }
        }
        shared = e;
        sideCell(row, index, e, e instanceof Unreadable ? null : place(side.stacks, e));
      });
      part.appendChild(row);
    }
    return part;
  }

  var PACKED = "script[type='text/x-callpin-rows'],script[type='text/x-callpin-frames']";
  function drawNext(block) {
    if (block.busy) return;
    var chunk = block.querySelector(PACKED);
    var more = block.querySelector("button.more");
    if (!chunk) { if (more) more.remove(); return; }
    block.busy = true;
    var part = document.createElement("div");
    part.className = "chunk";
    inflate(chunk.textContent).then(function (bytes) {
      if (chunk.type === "text/x-callpin-frames") part.appendChild(drawFrames(chunk, bytes));
      else part.innerHTML = utf8.decode(bytes);
    }).catch(function (err) {
      var reason = err instanceof Unreadable ? err.reason : String(err);
      part.replaceChildren(element("p", "bad", "These events could not be drawn: " + reason));
    }).then(function () {
      chunk.remove();
      block.querySelector(".rows").appendChild(part);
      block.busy = false;
      if (!block.querySelector(PACKED) && more) more.remove();
    });
  }
  var watcher = "IntersectionObserver" in window ? new IntersectionObserver(function (seen) {
    seen.forEach(function (entry) {
      if (entry.isIntersecting) drawNext(entry.target.closest(".lazy"));
    });
  }, {rootMargin: "600px"}) : null;
  Array.prototype.forEach.call(document.querySelectorAll(".lazy"), function (block) {
    var more = block.querySelector("button.more");
    if (more) {
      more.addEventListener("click", function () { drawNext(block); });
      if (watcher) watcher.observe(more);
    }
    if (block.tagName === "DETAILS") {
      block.addEventListener("toggle", function () { if (block.open) drawNext(block); });
    }
  });
})();
