#!/usr/bin/env python3
"""Checks the layering of kernel/: the rings' order and that no two files depend on each other.

Rings, inner to outer (a file may include headers of its own ring and of the rings listed for it):
  ir < shape < schedule < codegen < runtime < engine < {viz, tensor} < {onnx, distributed} < public
viz and tensor both sit on the engine and do not know each other; onnx (libtg_onnx) and
distributed (libtg_distributed) sit on the tensor ring and do not know each other; public/ (the
umbrella headers) may include any ring.

A unit is a header and the .cpp of the same name (kernel/engine/realize.hpp + realize.cpp). Unit A
depends on unit B when A's header or source includes B's header. The dependency graph must have
no cycle: two files that call each other are one idea split in two, or a missing interface. (A
header whose functions some other .cpp defines would hide a cycle from this check: keep a header's
definitions in the .cpp of its name.)

usage: check_layers.py KERNEL_DIR     check a tree (exit 1 and the violations when it breaks a rule)
       check_layers.py --self-test    check that broken trees are caught
"""
import os
import re
import sys
import tempfile

RINGS = ["ir", "shape", "schedule", "codegen", "runtime", "engine", "viz", "tensor", "onnx", "distributed", "public"]
ALLOWED = {
    "ir": {"ir"},
    "shape": {"ir", "shape"},
    "schedule": {"ir", "shape", "schedule"},
    "codegen": {"ir", "shape", "schedule", "codegen"},
    "runtime": {"ir", "shape", "schedule", "codegen", "runtime"},
    "engine": {"ir", "shape", "schedule", "codegen", "runtime", "engine"},
    "viz": {"ir", "shape", "schedule", "codegen", "runtime", "engine", "viz"},
    "tensor": {"ir", "shape", "schedule", "codegen", "runtime", "engine", "tensor"},
    "onnx": {"ir", "shape", "schedule", "codegen", "runtime", "engine", "tensor", "onnx"},
    "distributed": {"ir", "shape", "schedule", "codegen", "runtime", "engine", "tensor", "distributed"},
    "public": set(RINGS),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"kernel/([a-z_]+)/([A-Za-z0-9_/]+)\.hpp"', re.M)


def scan(kernel_dir):
    """{unit: set(units it includes)}, [ring violations]; a unit is 'ring/name'."""
    deps, errors = {}, []
    for ring in sorted(os.listdir(kernel_dir)):
        ring_dir = os.path.join(kernel_dir, ring)
        if not os.path.isdir(ring_dir):
            continue
        if ring not in ALLOWED:
            errors.append(f"kernel/{ring}/: a directory that is no ring (add it to check_layers.py's RINGS)")
            continue
        for root, _, files in os.walk(ring_dir):
            for f in sorted(files):
                stem, ext = os.path.splitext(f)
                if ext not in (".hpp", ".cpp"):
                    continue
                path = os.path.join(root, f)
                rel = os.path.relpath(path, kernel_dir)
                unit = os.path.splitext(rel)[0]
                deps.setdefault(unit, set())
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for other_ring, name in INCLUDE.findall(text):
                    if other_ring not in ALLOWED[ring]:
                        errors.append(f"kernel/{rel}: includes kernel/{other_ring}/{name}.hpp, "
                                      f"but ring '{ring}' may include only {sorted(ALLOWED[ring])}")
                    target = f"{other_ring}/{name}"
                    if target != unit:
                        deps[unit].add(target)
    return deps, errors


def cycles(deps):
    """The strongly connected components of more than one unit (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(deps):
        if start in index:
            continue
        work = [(start, iter(sorted(deps.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(deps.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    u = stack.pop()
                    on_stack.discard(u)
                    component.append(u)
                    if u == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def check(kernel_dir):
    deps, errors = scan(kernel_dir)
    for component in cycles(deps):
        errors.append("these units depend on each other in a loop: " + " <-> ".join(component))
    return deps, errors


def self_test():
    def tree(files):
        d = tempfile.mkdtemp(prefix="tg_layers_")
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w", encoding="utf-8") as fh:
                fh.write(text)
        return d

    good = tree({"ir/a.hpp": "", "ir/a.cpp": '#include "kernel/ir/a.hpp"\n',
                 "engine/b.hpp": '#include "kernel/ir/a.hpp"\n', "engine/b.cpp": '#include "kernel/engine/b.hpp"\n',
                 "tensor/c.cpp": '#include "kernel/engine/b.hpp"\n'})
    upward = tree({"ir/a.cpp": '#include "kernel/engine/b.hpp"\n', "engine/b.hpp": ""})
    sideways = tree({"viz/a.cpp": '#include "kernel/tensor/t.hpp"\n', "tensor/t.hpp": ""})
    loop = tree({"engine/r.hpp": "", "engine/r.cpp": '#include "kernel/engine/s.hpp"\n',
                 "engine/s.hpp": "", "engine/s.cpp": '  #include "kernel/engine/r.hpp"\n'})
    failures = []
    if check(good)[1]:
        failures.append("a well-layered tree was refused: " + "; ".join(check(good)[1]))
    if not any("ring 'ir' may include only" in e for e in check(upward)[1]):
        failures.append("an include from ir up to engine was not caught")
    if not any("ring 'viz' may include only" in e for e in check(sideways)[1]):
        failures.append("an include from viz into tensor was not caught")
    if not any("engine/r <-> engine/s" in e for e in check(loop)[1]):
        failures.append("two units including each other were not caught")
    for f in failures:
        print("check_layers self-test: " + f)
    print("check_layers self-test: " + ("FAILED" if failures else "4 cases caught as expected"))
    return 1 if failures else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    deps, errors = check(argv[1])
    for e in errors:
        print("check_layers: " + e)
    edges = sum(len(v) for v in deps.values())
    print(f"check_layers: {len(deps)} units, {edges} dependencies, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
