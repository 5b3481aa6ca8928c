"""Shrink tests/strict/pending.py to the op-table rows that still fail on the strict device.

    python scripts/strict_pending.py [pytest -k expression]

Runs tests/strict/test_strict_ops.py with GLASSGRAD_STRICT_DEVICE=1 and removes from PENDING every row that now
passes (its xfail says DID NOT RAISE).  Rows that newly fail are listed, not added: a row that worked must not
silently become pending again -- fix it."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PENDING = os.path.join(ROOT, "tests", "strict", "pending.py")
PREFIX = "tests/strict/test_strict_ops.py::test_op_on_device_equals_cpu["


def main():
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rf", "--tb=no", "-n", "2", "tests/strict"]
    if len(sys.argv) > 1:
        cmd += ["-k", sys.argv[1]]
    env = dict(os.environ, GLASSGRAD_STRICT_DEVICE="1", PYTHONPATH=os.path.join(ROOT, "src"))
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True).stdout
    failed = set()
    for line in out.splitlines():
        if line.startswith("FAILED " + PREFIX):
            rid = line[len("FAILED " + PREFIX):].partition(" - ")[0]
            failed.add(rid[:-1] if rid.endswith("]") else rid)
    text = open(PENDING).read()
    rows = re.findall(r"^    '(.*)',$", text, re.M) + re.findall(r'^    "(.*)",$', text, re.M)
    passing = failed & set(rows)            # a pending row fails only when it passes (its xfail did not raise)
    failing = failed - set(rows)
    keep = [r for r in sorted(set(rows)) if r not in passing]
    head = text[:text.index("PENDING = {")]
    with open(PENDING, "w") as f:
        body = "{\n" + "".join(f"    {r!r},\n" for r in keep) + "}" if keep else "set()"
        f.write(head + "PENDING = " + body + "\n")
    print(f"{len(passing)} rows now pass (removed), {len(keep)} pending")
    if failing:
        print(f"{len(failing)} rows FAIL that are not pending (fix them):\n  " + "\n  ".join(sorted(failing)))
    print(out.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
