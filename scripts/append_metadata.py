#!/usr/bin/env python3
"""Append DuckDB's extension metadata footer to a shared library.

DuckDB reads the last 512 bytes of a `.duckdb_extension` file: eight 32-byte
NUL-padded ASCII fields written in reverse order (three unused, ABI type,
extension version, DuckDB/C API version, platform, the magic "4"), then a
256-byte signature area (zeros: unsigned). A 22-byte WebAssembly-style custom
section header precedes them; DuckDB ignores it but its own tooling writes it,
so we do too. Layout verified against DuckDB 1.5.6 (docs/decisions.md).
"""
import argparse
import shutil

START_SIGNATURE = b"\x00\x93\x04\x10duckdb_signature\x80\x04"


def field(text: str) -> bytes:
    raw = text.encode("ascii")
    if len(raw) > 32:
        raise SystemExit(f"metadata field too long: {text!r}")
    return raw + b"\x00" * (32 - len(raw))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--library", required=True, help="the cargo-built shared library")
    p.add_argument("--out", required=True, help="the .duckdb_extension file to write")
    p.add_argument("--platform", required=True, help="e.g. linux_amd64")
    p.add_argument("--duckdb-version", required=True, help="C API version (C_STRUCT) or DuckDB version")
    p.add_argument("--extension-version", required=True)
    p.add_argument("--abi-type", required=True, choices=["C_STRUCT", "C_STRUCT_UNSTABLE"])
    a = p.parse_args()
    shutil.copyfile(a.library, a.out)
    with open(a.out, "ab") as f:
        f.write(START_SIGNATURE)
        for text in ["", "", "", a.abi_type, a.extension_version, a.duckdb_version, a.platform, "4"]:
            f.write(field(text))
        f.write(b"\x00" * 256)


if __name__ == "__main__":
    main()
