"""scripts/check_floors.py passes on this repository and fails on the
violations it exists to catch (an import up a floor, a circle)."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "check_floors.py"

DOC = """# Architecture

```floors
pipeline
formats
value
```
"""


def run(root):
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)


def tree(tmp_path, files):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "architecture.md").write_text(DOC)
    for name, text in files.items():
        path = tmp_path / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_this_repository_keeps_its_floors():
    r = run(REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no import up a floor, no circle" in r.stdout


def test_an_import_up_a_floor_fails(tmp_path):
    root = tree(tmp_path, {
        "lib.rs": "pub mod formats;\npub mod pipeline;\npub mod value;\n",
        "value/mod.rs": "use crate::formats::Thing;\n",
        "formats/mod.rs": "pub struct Thing;\n",
        "scan/mod.rs": "use crate::{formats::Thing, value};\n",
    })
    r = run(root)
    assert r.returncode == 1
    lines = [line for line in r.stdout.splitlines() if "a floor above it" in line]
    assert len(lines) == 1 and "value uses formats, a floor above it" in lines[0], r.stdout


def test_a_circle_between_siblings_fails_and_parent_child_does_not(tmp_path):
    root = tree(tmp_path, {
        "lib.rs": "pub mod formats;\n",
        "formats/mod.rs": "mod a;\nmod b;\n#[cfg(test)]\nmod t;\npub struct Batch;\nuse self::a::A;\n",
        "formats/a.rs": "use super::b::B;\nuse super::Batch;\npub struct A;\n",
        "formats/b.rs": "pub struct B;\nfn f() { let _ = super::a::A; }\n",
        # Test-only code may use anything.
        "formats/t.rs": "use crate::scan::Anything;\n",
    })
    r = run(root)
    assert r.returncode == 1
    assert "circle: formats::a -> formats::b -> formats::a" in r.stdout
    assert r.stdout.count("circle") == 1, r.stdout


SAFETY_SCRIPT = REPO / "scripts" / "check_safety_notes.py"


def test_every_unsafe_block_has_a_safety_note_and_the_check_can_fail(tmp_path):
    r = subprocess.run([sys.executable, str(SAFETY_SCRIPT), str(REPO)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text(
        "fn a() {\n    // SAFETY: fine.\n    unsafe { f() };\n}\nfn b() {\n    let x = 1;\n    unsafe { g() };\n}\n"
    )
    r = subprocess.run([sys.executable, str(SAFETY_SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1
    assert "src/lib.rs:7" in r.stdout and "src/lib.rs:3" not in r.stdout, r.stdout
