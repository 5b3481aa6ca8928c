"""The ``glassgrad`` command.

    glassgrad run [--nproc-per-node N] SCRIPT.py [script args...]
    glassgrad explain SCRIPT.py [script args...] [--steps N] [--out report.html] [--terms a,b] [--full] [--no-nan]
    glassgrad demo [--epochs E] [--out DIR]

``explain`` runs an unmodified PyTorch script with glassgrad standing in for ``torch`` (an import hook),
watches its first N training steps and writes one self-contained HTML report.  glassgrad's own options may
come before or after the script; everything else after the script is passed to it (``--`` ends
glassgrad's options: all that follows goes to the script).
"""
import argparse
import os
import sys

__all__ = ["main"]

_EXPLAIN_OPTS = {"--steps": True, "--out": True, "-o": True, "--terms": True, "--full": False,
                 "--no-nan": False, "--quiet": False, "-q": False}


def _split_explain_args(argv):
    """(glassgrad options, script, script args): options are recognised anywhere except after ``--``."""
    ours, script, rest = [], None, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest += argv[i + 1:]
            break
        key = a.split("=", 1)[0]
        if key in _EXPLAIN_OPTS:
            ours.append(a)
            if _EXPLAIN_OPTS[key] and "=" not in a and i + 1 < len(argv):
                ours.append(argv[i + 1])
                i += 1
        elif a in ("-h", "--help") and script is None:
            ours.append(a)
        elif script is None:
            script = a
        else:
            rest.append(a)
        i += 1
    return ours, script, rest


def _explain(argv):
    ours, script, rest = _split_explain_args(argv)
    p = argparse.ArgumentParser(prog="glassgrad explain",
                                usage="glassgrad explain SCRIPT.py [script args...] [--steps N] [--out report.html] "
                                      "[--terms a,b] [--full] [--no-nan]",
                                description="Run a PyTorch script on glassgrad and write an HTML report of how its "
                                            "gradients flow.")
    p.add_argument("--steps", type=int, default=3, help="training steps to watch (default 3)")
    p.add_argument("--out", "-o", default=None, help="report path (default: SCRIPT_explain.html here)")
    p.add_argument("--terms", default=None, help="comma-separated variable names of the loss terms to attribute")
    p.add_argument("--full", action="store_true", help="let the script run to its end after the watched steps")
    p.add_argument("--no-nan", action="store_true", help="do not run under explain.nan_watch")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    opts = p.parse_args(ours)
    if script is None:
        p.error("the script to run is missing")
    if opts.steps < 1:
        p.error("--steps must be at least 1")
    if not os.path.isfile(script):
        print(f"glassgrad explain: no such script: {script}", file=sys.stderr)
        return 2
    out = opts.out or os.path.splitext(os.path.basename(script))[0] + "_explain.html"
    terms = [t.strip() for t in opts.terms.split(",") if t.strip()] if opts.terms else None
    from .explain._session import run_script
    from .explain._report import write_report
    res = run_script(script, rest, steps=opts.steps, terms=terms, full=opts.full, nan=not opts.no_nan,
                     progress=not opts.quiet)
    sys.stdout.flush()
    path = write_report(res, out)
    if res.stopped:
        print(f"glassgrad explain: stopped after {len(res.steps)} step{'s' if len(res.steps) != 1 else ''}",
              file=sys.stderr)
    elif not res.steps and not res.error:
        print("glassgrad explain: no training step was seen (no backward() of a scalar loss)", file=sys.stderr)
    if res.error:
        print(f"glassgrad explain: the script failed: {res.error_summary or res.error_type}", file=sys.stderr)
    print(f"glassgrad explain: report written to {path}")
    return res.exit_code


def _demo(argv):
    p = argparse.ArgumentParser(prog="glassgrad demo",
                                description="Train a small CNN with two loss terms on scikit-learn's handwritten "
                                            "digits and write the explain report of it.")
    p.add_argument("--epochs", type=int, default=None, help="training epochs (default 10)")
    p.add_argument("--out", default="glassgrad-demo", help="output directory (default ./glassgrad-demo)")
    p.add_argument("--seed", type=int, default=0)
    opts = p.parse_args(argv)
    from .demo import run_demo, MissingExtra
    try:
        run_demo(epochs=opts.epochs, out=opts.out, seed=opts.seed)
    except MissingExtra as e:
        print(f"glassgrad demo: {e}", file=sys.stderr)
        return 2
    return 0


_USAGE = """usage: glassgrad <command> [options]

commands:
  run [--nproc-per-node N] SCRIPT.py [args...]
                                run a PyTorch script on glassgrad (on N processes through MPI, as torchrun)
  explain SCRIPT.py [args...]   run a PyTorch script on glassgrad, watch its first steps, write an HTML report
  demo                          train a small CNN on handwritten digits and write its explain report

run `glassgrad <command> --help` for a command's options."""


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_USAGE)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "run":
        from ._launch import run
        return run(rest)
    if cmd == "explain":
        return _explain(rest)
    if cmd == "demo":
        return _demo(rest)
    if cmd in ("--version", "version"):
        from importlib.metadata import version, PackageNotFoundError
        try:
            print(version("glassgrad"))
        except PackageNotFoundError:
            print("glassgrad (not installed)")
        return 0
    print(f"glassgrad: unknown command {cmd!r}\n\n{_USAGE}", file=sys.stderr)
    return 2


def console_main():
    """Entry point of the ``glassgrad`` console script."""
    sys.exit(main())
