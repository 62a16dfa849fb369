"""Cuts a JSON Lines file into N files of about equal size, at line ends
(a benchmark input, not a test): the scaling target is measured on one
large file and on 64 files.

    .venv/bin/python bench/split_jsonl.py --parts 64 \\
        bench/data/events-300mb-seed42.jsonl bench/data/events-300mb-seed42-64files

Writes OUTDIR/part-00.jsonl ... and leaves an existing OUTDIR with the same
number of parts alone (the files' bytes are the input's, so they do not
change between runs).
"""
import argparse
import os
import sys


def split(src: str, out_dir: str, parts: int) -> list[str]:
    names = [os.path.join(out_dir, f"part-{i:02d}.jsonl") for i in range(parts)]
    if all(os.path.exists(n) for n in names) and len(os.listdir(out_dir)) == parts:
        return names
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.getsize(src) / parts
    with open(src, "rb") as f:
        for i, name in enumerate(names):
            with open(name, "wb") as out:
                written = 0
                for line in f:
                    out.write(line)
                    written += len(line)
                    if written >= target and i < parts - 1:
                        break
    return names


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", type=int, default=64)
    p.add_argument("src")
    p.add_argument("out_dir")
    a = p.parse_args(argv)
    names = split(a.src, a.out_dir, a.parts)
    print(f"{len(names)} files in {a.out_dir}, {sum(os.path.getsize(n) for n in names):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
