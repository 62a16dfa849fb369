#!/usr/bin/env python3
"""Every `unsafe { ... }` block in src/ has a `// SAFETY:` note on its line
or in the comment right above its statement (docs/architecture.md, "Safe
FFI"). Exit status 1 lists the blocks without one; run by `make test`.
Usage: check_safety_notes.py [PROJECT_ROOT]"""
import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent


def missing(text):
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("//"):
            continue
        for _ in re.finditer(r"\bunsafe\s*\{", line):
            # The statement's first line: at most three lines up, stopping
            # after a line that ends a statement or opens a block.
            start = i
            while start > 0 and start > i - 3:
                prev = lines[start - 1].strip()
                if prev.startswith("//") or prev.endswith((";", "}", "{")) or not prev:
                    break
                start -= 1
            ok = any("SAFETY" in l for l in lines[start : i + 1])
            # Then the comment block directly above it.
            k = start - 1
            while not ok and k >= 0 and lines[k].strip().startswith("//"):
                ok = "SAFETY" in lines[k]
                k -= 1
            if not ok:
                out.append((i + 1, line.strip()))
    return out


def main():
    bad = []
    total = 0
    for path in sorted((ROOT / "src").rglob("*.rs")):
        text = path.read_text()
        total += len(re.findall(r"\bunsafe\s*\{", text))
        bad += [(path.relative_to(ROOT), n, l) for n, l in missing(text)]
    for path, n, line in bad:
        print(f"{path}:{n}: unsafe block without a // SAFETY: note: {line}")
    if bad:
        return 1
    print(f"safety notes ok: {total} unsafe blocks, each with a // SAFETY: note")
    return 0


if __name__ == "__main__":
    sys.exit(main())
