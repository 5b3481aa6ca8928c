"""Smoke test of the benchmark runner: bench/run.py runs, prints its table, writes its JSON.

No timing assertions (a shared machine makes them flaky): only that each library's child process ran,
and that the table and the JSON have the documented structure and mutually consistent numbers.
"""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(ROOT, "bench", "run.py")
NAMES = ["import", "chain", "mlp"]  # mlp: a workload with a BLAS floor


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "out.json"
    p = subprocess.run([sys.executable, RUN, "--only", ",".join(NAMES), "--repeat", "1", "--quick", "--smoke",
                        "--compare", "--json", str(out)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return p.stdout, json.loads(out.read_text())


def test_table_has_header_and_one_row_per_workload(result):
    stdout, _ = result
    lines = stdout.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("workload"))
    for col in ("gg med", "gg min", "torch med", "torch min", "ratio", "gg MiB", "torch MiB", "RSS ratio",
                "floor", "gg/floor", "target", "status"):
        assert col in lines[header]
    rows = [ln.split() for ln in lines[header + 2:header + 2 + len(NAMES)]]
    assert [r[0] for r in rows] == NAMES
    assert rows[1][1] == "µs/op"
    for r in rows:
        assert r[-1] == "met" or "MISSED" in r, r  # "MISSED time,rss" splits into two words
    assert "errors:" not in stdout


def test_json_structure(result):
    _, data = result
    meta = data["meta"]
    assert meta["mode"] == "smoke" and meta["repeat"] == 1 and meta["threads"] >= 1
    assert list(data["workloads"]) == NAMES
    for name, row in data["workloads"].items():
        assert {"title", "unit", "target", "glassgrad", "torch", "ratio", "rss_ratio", "status"} <= set(row)
        for lib in ("glassgrad", "torch"):
            s = row[lib]
            assert "error" not in s, s
            assert s["n_processes"] == 1 and s["n_samples"] == 1
            assert 0 < s["min_s"] <= s["median_s"]
            assert s["rss_mib"] > 0
            assert len(s["processes"]) == 1 and len(s["processes"][0]["samples"]) == 1
        assert row["ratio"] == pytest.approx(row["glassgrad"]["median_s"] / row["torch"]["median_s"])
        assert row["rss_ratio"] == pytest.approx(row["glassgrad"]["rss_mib"] / row["torch"]["rss_mib"])
        met = row["ratio"] <= row["target"]["time"] and row["rss_ratio"] <= 1.0
        assert row["status"] == "met" if met else row["status"].startswith("MISSED")
    mlp = data["workloads"]["mlp"]
    assert mlp["floor"]["gemms"] and all(len(g) == 3 for g in mlp["floor"]["gemms"])
    assert mlp["floor"]["gflops"] > 0
    assert mlp["floor_ratio"] == pytest.approx(mlp["glassgrad"]["median_s"] / mlp["floor"]["median_s"])
    assert "floor_ratio" not in data["workloads"]["chain"]
    chain = data["workloads"]["chain"]
    assert chain["glassgrad"]["per"] == chain["torch"]["per"] > 1  # times are per op


def test_glassgrad_child_really_ran_glassgrad(result):
    _, data = result
    g = data["workloads"]["chain"]["glassgrad"]["processes"][0]
    t = data["workloads"]["chain"]["torch"]["processes"][0]
    assert "glassgrad" in g["lib_file"] and "glassgrad" not in t["lib_file"]


def test_unknown_workload_is_refused():
    p = subprocess.run([sys.executable, RUN, "--only", "nope", "--smoke"], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert p.returncode != 0 and "unknown workload" in p.stderr


def test_checkpoint_bench_runs_and_reports_every_row(tmp_path):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "checkpoint.py"), "--mb", "1", "--repeat", "1",
                        "--dir", str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    rows = {ln[:28].strip(): ln[28:].split() for ln in p.stdout.splitlines()[2:]}
    assert list(rows) == ["save", "load (own format)", "load a torch.save file", "open with mmap=True (ms)",
                          "file size (MB)"]
    for name, vals in rows.items():
        assert all(float(v) > 0 for v in vals), (name, vals)
        if len(vals) == 3:                   # the ratio column is glassgrad / torch (of the unrounded values)
            (g, hg), (t, ht) = [(float(v), 0.5 * 10 ** -len(v.partition(".")[2])) for v in vals[:2]]
            assert (g - hg) / (t + ht) - 0.005 <= float(vals[2]) <= (g + hg) / max(t - ht, 1e-9) + 0.005, vals
