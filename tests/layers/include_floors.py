#!/usr/bin/python3
"""Checks that no #include runs up a floor (docs/architecture.md, "Layers").

Floors, lowest first: pipeline/, swemu/, hostlib/ (the end hosts), hostlib/testbed/, then the
front ends (tools/, hostlib/python/). A file may include its own floor or a lower one, with
two sideways rules: a hostlib area includes only itself, hostlib/common and hostlib/workload;
a tools/ folder includes only itself, tools/*.h and tools/common/ (a main in tools/, such as
gen_pcap.cc, its own folder too), and hostlib/python no tool. Prints one line per arrow
that breaks a rule and exits 1, or prints the count of arrows checked and exits 0.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"((?:pipeline|swemu|hostlib|tools)/[^"]+)"', re.M)
SHARED_HOSTLIB = {"common", "workload"}


def unit(path):
    """(floor, area) of a source path relative to the tree, or None outside the floors."""
    parts = path.split("/")
    top = parts[0]
    if top == "pipeline":
        return 0, "pipeline"
    if path == "swemu/main.cc":
        return 4, "swemu-main"  # the binary's entry hands the app hostlib/testbed's back ends
    if top == "swemu":
        return 1, "swemu"
    if top == "hostlib" and len(parts) > 2:
        area = parts[1]
        if area == "testbed":
            return 3, area
        if area == "python":
            return 4, "hostlib/python"
        return 2, area
    if top == "tools":
        return 4, parts[1] if len(parts) > 2 else ""
    return None


def arrow_allowed(src, dst):
    src_floor, src_area = unit(src)
    dst_floor, dst_area = unit(dst)
    if dst_floor > src_floor:
        return False
    if src_floor == dst_floor == 2:
        return dst_area in (src_area, *SHARED_HOSTLIB)
    if src_floor == dst_floor == 4:
        if src_area == "hostlib/python" or dst_area == "hostlib/python":
            return src_area == dst_area
        if src_area == "" and src.endswith(".cc"):
            return True  # a tool's main (gen_pcap.cc, replay.cc) over its own folder
        return dst_area in (src_area, "", "common")
    return True


def check(root):
    bad, checked = [], 0
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if unit(rel) is None:
            continue
        for target in INCLUDE.findall(path.read_text(errors="replace")):
            if unit(target) is None:
                continue
            checked += 1
            if not arrow_allowed(rel, target):
                bad.append(f"{rel} includes {target}: an arrow up a floor or sideways")
    return bad, checked


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the source tree")
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    scanned = [root / top for top in ("pipeline", "swemu", "hostlib", "tools")]
    if not all(top.is_dir() for top in scanned):
        print(f"include_floors: {root} is not a swemu source tree", file=sys.stderr)
        return 2
    bad, checked = check(root)
    for line in bad:
        print(line)
    if bad:
        return 1
    print(f"include_floors: {checked} include arrows, none runs up a floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
