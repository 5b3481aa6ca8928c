"""The `glassgrad` command: the torch import hook, `glassgrad explain SCRIPT.py`, `glassgrad demo`.

Scripts run in subprocesses (``python -m glassgrad ...``), as a user runs them; the reports are parsed
with html.parser.
"""
import os
import re
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "explain" / "two_losses.py"
RUNNER = ROOT / "examples" / "run_as_glassgrad.py"
PY = sys.executable


def _run(args, cwd, timeout=60):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    return subprocess.run([PY, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def _explain(tmp, *args):
    return _run(["-m", "glassgrad", "explain", *args], cwd=tmp)


class Report(HTMLParser):
    """Section ids, whether the graph section has <svg> / <pre>, text of table rows per section."""

    def __init__(self, text):
        super().__init__()
        self.sections = []
        self.cur = None
        self.tags = {}          # section -> set of tags seen inside
        self.rows = {}          # section -> [row text]
        self.text = {}          # section -> all text
        self._row = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.cur = a.get("id")
            self.sections.append(self.cur)
        if self.cur is not None:
            self.tags.setdefault(self.cur, set()).add(tag)
        if tag == "tr":
            self._row = []

    def handle_endtag(self, tag):
        if tag == "tr" and self._row is not None and self.cur is not None:
            self.rows.setdefault(self.cur, []).append(" ".join(t for t in self._row if t))
            self._row = None
        if tag == "section":
            self.cur = None

    def handle_data(self, data):
        if self.cur is not None:
            self.text[self.cur] = self.text.get(self.cur, "") + data
            if self._row is not None:
                self._row.append(data.strip())


def _first_cells(rows):
    return {r.split(" ")[0] for r in rows}


# -- the import hook --------------------------------------------------------------------------------------
def test_alias_serves_torch_submodules_and_restores_real_torch():
    import importlib
    import glassgrad
    from glassgrad._torch_alias import torch_alias, is_installed
    before = sys.modules.get("torch")
    with torch_alias():
        assert is_installed()
        import torch
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        from torch.optim import lr_scheduler
        assert torch is glassgrad
        assert F is importlib.import_module("glassgrad.nn.functional")
        assert DataLoader is importlib.import_module("glassgrad.utils.data").DataLoader
        assert lr_scheduler is importlib.import_module("glassgrad.optim.lr_scheduler")
        with pytest.raises(ModuleNotFoundError, match="torch.no_such_module"):
            importlib.import_module("torch.no_such_module")
    assert not is_installed()
    assert sys.modules.get("torch") is before           # the real torch (the oracle) is back
    if before is not None:
        assert before is not glassgrad


def test_script_importing_torch_gets_glassgrad(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import torch\nimport torch.nn.functional as F\nimport sys\n"
                      "x = torch.ones(2, requires_grad=True)\ny = F.relu(x * 3).sum()\ny.backward()\n"
                      "print(torch.__name__, F.__name__, type(x).__module__, x.grad.tolist(), sys.argv[1:])\n")
    for runner in (["-m", "glassgrad", "explain", script, "--quiet", "--out", tmp_path / "r.html", "a1"],
                   [RUNNER, script, "a1"]):
        p = _run(runner, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert "glassgrad glassgrad.nn.functional glassgrad._tensor [3.0, 3.0] ['a1']" in p.stdout


# -- glassgrad explain -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def two_losses(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("explain")
    out = tmp / "report.html"
    p = _explain(tmp, EXAMPLE, "--iters", "6", "--out", out)
    plain = _run([RUNNER, EXAMPLE, "--iters", "2"], cwd=tmp)
    return p, out, plain


def test_explain_exit_code_and_script_output(two_losses):
    p, out, plain = two_losses
    assert p.returncode == 0, p.stderr
    assert plain.returncode == 0, plain.stderr
    # the script's own lines are printed unchanged (same as a plain run), the last step is cut by the stop
    expected = [ln for ln in plain.stdout.splitlines() if ln.startswith("step")]
    assert len(expected) == 2
    got = p.stdout.splitlines()
    assert got[:2] == expected
    assert "training done" not in p.stdout
    assert f"report written to {out}" in p.stdout
    assert "stopped after 3 steps" in p.stderr


def test_explain_report_sections(two_losses):
    _, out, _ = two_losses
    rep = Report(out.read_text())
    for sec in ("summary", "graph", "attribution", "flow", "nan", "why-no-grad"):
        assert sec in rep.sections
    assert "error" not in rep.sections
    assert {"svg", "pre"} & rep.tags["graph"]
    assert "3 of 3 requested" in rep.text["summary"]
    assert "TwoHead" in rep.text["summary"]


def test_explain_attribution_names_the_terms(two_losses):
    _, out, _ = two_losses
    rep = Report(out.read_text())
    rows = rep.rows["attribution"]
    terms = _first_cells(r for r in rows if not r.startswith(("body", "cls", "reg", "unused", "parameter")))
    # loss = loss_cls + 0.5 * loss_reg: two terms, named after the script's variables
    assert terms == {"loss_cls", "mul(loss_reg)"}
    # the classification head is only reached by loss_cls, the regression head only by the other term
    reg_rows = rows[[i for i, r in enumerate(rows) if r.startswith("reg.weight")][0]:][:3]
    assert reg_rows[1].startswith("loss_cls unreachable")
    assert not reg_rows[2].split(" ")[1] == "unreachable"


def test_explain_flow_and_why_no_grad(two_losses):
    _, out, _ = two_losses
    rep = Report(out.read_text())
    layers = _first_cells(rep.rows["flow"][1:])
    assert layers == {"body.0", "body.2", "cls", "reg", "unused"}
    unused = [r for r in rep.rows["flow"] if r.startswith("unused")][0]
    assert "no_grad" in unused
    why = rep.text["why-no-grad"]
    assert "unused.weight" in why and "unused.bias" in why and "body.0.weight" not in why


def test_explain_steps_option_stops_after_two_steps(tmp_path):
    out = tmp_path / "r.html"
    p = _explain(tmp_path, EXAMPLE, "--steps", "2", "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    assert "stopped after 2 steps" in p.stderr
    assert re.search(r"^step  0 ", p.stdout, re.M) and not re.search(r"^step  1 ", p.stdout, re.M)
    rep = Report(out.read_text())
    assert "2 of 2 requested" in rep.text["summary"]
    assert "stopped after 2 steps" in rep.text["summary"]


def test_explain_full_runs_to_the_end_and_terms_option(tmp_path):
    out = tmp_path / "r.html"
    p = _explain(tmp_path, EXAMPLE, "--iters", "4", "--steps", "1", "--full", "--terms", "loss_reg,loss_cls",
                 "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    assert len([ln for ln in p.stdout.splitlines() if ln.startswith("step")]) == 4
    assert "training done" in p.stdout
    rep = Report(out.read_text())
    assert "ran to the end" in rep.text["summary"]
    rows = rep.rows["attribution"]
    assert {"loss_reg", "loss_cls"} <= _first_cells(rows)
    assert "mul(loss_reg)" not in _first_cells(rows)


def test_explain_script_error_is_reported(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("import torch\nprint('before')\nw = torch.ones(3, requires_grad=True)\n"
                      "(w * 2).sum().backward()\n\ndef broken():\n    raise ValueError('boom in the script')\n\n"
                      "broken()\n")
    out = tmp_path / "r.html"
    p = _explain(tmp_path, script, "--out", out)
    assert p.returncode == 1
    assert p.stdout.startswith("before\n")
    assert "the script failed: ValueError: boom in the script" in p.stderr
    assert "Traceback" not in p.stderr            # reported cleanly, the traceback is in the report
    rep = Report(out.read_text())
    assert "error" in rep.sections
    err = rep.text["error"]
    assert "bad.py" in err and "line 9" in err and "boom in the script" in err
    assert "runpy" not in err and "_session.py" not in err
    assert "1 of 3 requested" in rep.text["summary"]


def test_explain_reports_the_where_trap(tmp_path):
    pytest.importorskip("glassgrad.explain._nan", reason="explain.nan_watch is not available")
    script = tmp_path / "trap.py"
    script.write_text("import torch\nw = torch.tensor([-1.0, 4.0], requires_grad=True)\n"
                      "y = torch.where(w > 0, torch.sqrt(w), 0.0)\ny.sum().backward()\nprint('grad', w.grad)\n")
    out = tmp_path / "r.html"
    p = _explain(tmp_path, script, "--out", out, "--quiet")
    assert p.returncode == 1
    assert "the script failed: NonFiniteError: nan_watch: the backward of SqrtBackward0" in p.stderr
    rep = Report(out.read_text())
    nan = rep.text["nan"]
    assert "SqrtBackward0" in nan and "trap.py:3" in nan and "where trap" in nan and "backward" in nan
    p = _explain(tmp_path, script, "--out", out, "--quiet", "--no-nan")    # without the watch it runs on
    assert p.returncode == 0 and "grad tensor([   nan, 0.2500])" in p.stdout
    assert "layer w: the gradient holds NaN/Inf" in Report(out.read_text()).text["nan"]   # the basic check


def test_explain_missing_script_and_usage(tmp_path):
    p = _explain(tmp_path, tmp_path / "nope.py")
    assert p.returncode == 2 and "no such script" in p.stderr
    p = _run(["-m", "glassgrad"], cwd=tmp_path)
    assert p.returncode == 2 and "explain SCRIPT.py" in p.stdout


# -- glassgrad demo --------------------------------------------------------------------------------------
def test_demo_one_epoch_under_60s(tmp_path):
    pytest.importorskip("sklearn", reason="the demo needs scikit-learn (the demo extra)")
    pytest.importorskip("tqdm", reason="the demo needs tqdm (the demo extra)")
    t0 = time.perf_counter()
    p = _run(["-m", "glassgrad", "demo", "--epochs", "1", "--out", tmp_path / "demo"], cwd=tmp_path, timeout=60)
    elapsed = time.perf_counter() - t0
    assert p.returncode == 0, p.stderr
    assert elapsed < 60
    m = re.search(r"test accuracy: ([0-9.]+)", p.stdout)
    assert m and float(m.group(1)) > 0.3            # chance is 0.1
    report = tmp_path / "demo" / "report.html"
    assert f"report: {report}" in p.stdout
    assert "batch" in p.stderr                      # the progress bar
    rep = Report(report.read_text())
    assert {"summary", "graph", "attribution", "flow"} <= set(rep.sections)
    assert {"loss_digit", "loss_even"} <= _first_cells(rep.rows["attribution"])
    assert {"conv1", "conv2", "fc", "digit", "even"} <= _first_cells(rep.rows["flow"][1:])
