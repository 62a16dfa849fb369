#!/usr/bin/env python3
"""Checks the module layering of src/ against the floor order in
docs/architecture.md ("Floors"): no `crate::` reference may run up a floor,
and no two source files may depend on each other, directly or in a circle.

Test-only code is left out: files that their parent declares under
`#[cfg(test)]`, and everything after a file's first `#[cfg(test)]` line
(tests sit at the end of a file in this code base).

Exit status 1 lists every violation; run by `make test` (scripts/test.sh).
Usage: check_floors.py [PROJECT_ROOT]
"""
import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
DOC = ROOT / "docs" / "architecture.md"


def floors():
    """The floor of each top-level module, 0 = the top, from the doc's
    ```floors block: one line per floor, modules separated by spaces."""
    text = DOC.read_text()
    m = re.search(r"```floors\n(.*?)```", text, re.S)
    if not m:
        sys.exit("docs/architecture.md has no ```floors block")
    order = {}
    for level, line in enumerate(l for l in m.group(1).splitlines() if l.strip()):
        for name in line.split():
            order[name] = level
    return order


def module_of(path):
    """src/a/b.rs -> ('a', 'b'); src/a/mod.rs -> ('a',); src/a.rs -> ('a',)."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    if parts == ["lib"]:
        return ()
    return tuple(parts)


def test_only_children(path):
    """Child modules a file declares under #[cfg(test)], by module name and,
    for `#[path = "x.rs"]`, by the file's own module name too."""
    names = set()
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", line)
        if not m:
            continue
        attributes = []
        j = i - 1
        while j >= 0 and lines[j].strip().startswith("#["):
            attributes.append(lines[j].strip())
            j -= 1
        if any("cfg(test)" in a for a in attributes):
            names.add(m.group(1))
            for a in attributes:
                p = re.match(r'#\[path\s*=\s*"([\w/]+)\.rs"\]', a)
                if p:
                    names.add(("path", p.group(1)))
    return names


def production_text(path):
    text = path.read_text()
    cut = text.find("#[cfg(test)]")
    text = text if cut < 0 else text[:cut]
    # Comments and strings say things; only code depends.
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def expand_use(tree):
    """Expands a use tree (`a::{b, c::{d, e}}`) into paths."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, t):
        depth, start, items = 0, 0, []
        if t.startswith("{") and t.endswith("}"):
            body = t[1:-1]
            for i, ch in enumerate(body):
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                elif ch == "," and depth == 0:
                    items.append(body[start:i])
                    start = i + 1
            items.append(body[start:])
            for it in items:
                if it:
                    walk(prefix, it)
            return
        brace = t.find("::{")
        if brace >= 0:
            walk(prefix + t[:brace].split("::"), t[brace + 2:])
        else:
            out.append(prefix + t.split(" as ")[0].split("::"))

    walk([], tree)
    return out


def references(path, here):
    """Module paths (tuples) that the file's production code refers to."""
    text = production_text(path)
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        paths += expand_use(m.group(1))
    for m in re.finditer(r"\b((?:crate|super)(?:::\w+)+)", text):
        paths.append(m.group(1).split("::"))
    resolved = []
    for p in paths:
        if p[0] == "crate":
            base, rest = [], p[1:]
        elif p[0] == "super":
            # Each `super` climbs one module: from src/a/b.rs (module a::b)
            # to a, from src/a/mod.rs (module a) to the crate.
            base, rest = list(here), p
            while rest and rest[0] == "super":
                base = base[:-1]
                rest = rest[1:]
        else:
            continue
        resolved.append(tuple(base + [r for r in rest if r != "self"]))
    return resolved


def main():
    order = floors()
    files = {}
    for path in sorted(SRC.rglob("*.rs")):
        files[module_of(path)] = path
    test_only = set()
    for mod, path in files.items():
        for child in test_only_children(path):
            if isinstance(child, tuple):
                # #[path] is relative to the declaring file's directory.
                parent = mod if path.name == "mod.rs" else mod[:-1]
                test_only.add(parent + tuple(child[1].split("/")))
            else:
                test_only.add(mod + (child,))
    known = set(files)
    errors = []
    edges = {}
    for mod, path in files.items():
        if not mod or any(mod[: i + 1] in test_only for i in range(len(mod))):
            continue
        targets = set()
        for ref in references(path, mod):
            # The longest known module that prefixes the path.
            for n in range(len(ref), 0, -1):
                if ref[:n] in known:
                    targets.add(ref[:n])
                    break
        targets.discard(mod)
        edges[mod] = targets
        top = mod[0]
        for t in sorted(targets):
            if t[0] == top or t[0] in ("error", "quiet"):
                continue
            if top not in order or t[0] not in order:
                errors.append(f"{path.relative_to(ROOT)}: module {top or t[0]} has no floor in docs/architecture.md")
                continue
            if order[t[0]] < order[top]:
                errors.append(
                    f"{path.relative_to(ROOT)}: {'::'.join(mod)} uses {'::'.join(t)}, a floor above it "
                    f"({t[0]} is floor {order[t[0]]}, {top} is floor {order[top]})"
                )
    # A parent and its children depend on each other by design (mod.rs holds
    # the trait and dispatches to the files that implement it): circles are
    # sought among modules that are not each other's ancestors.
    def related(a, b):
        n = min(len(a), len(b))
        return a[:n] == b[:n]

    cycles = find_cycles({m: {t for t in ts if not related(m, t)} for m, ts in edges.items()})
    for c in cycles:
        errors.append("circle: " + " -> ".join("::".join(m) for m in c + [c[0]]))
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} layering violation(s); the floors are in docs/architecture.md")
        return 1
    print(f"floors ok: {len(edges)} modules, no import up a floor, no circle")
    return 0


def find_cycles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in edges:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
