"""Session 39 (run 6): session 38's overlay_package_ab.py with grid-del 5000^2 (25M
vertices) added under --more. (Run 6 ran a copy of that file with the one line added;
this loads the original and adds the graph, the same runs.)
Usage: python3 overlay_package_ab.py [--more]"""
import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, "benchmarks")
import road_like  # noqa: E402

S38 = Path(__file__).resolve().parent.parent / "2026-11-29-s38" / "overlay_package_ab.py"
spec = importlib.util.spec_from_file_location("overlay_package_ab_s38", S38)
s38 = importlib.util.module_from_spec(spec)
spec.loader.exec_module(s38)
s38.MORE["grid-del 5000^2"] = lambda: road_like.grid_with_deletions(5000, 5000, device="gpu")

if __name__ == "__main__":
    s38.main()
