"""The shape every measurement tool of tools/ shares: `measure` (in the measurement virtual environment) writes
committed data, `check BATCHFIT_CLI` (any python3) estimates it again, and --write-doc puts the table between
a doc's BEGIN/END markers."""
import argparse


def main(doc, data, doc_path, measure, check, measure_args=()):
    """Parses `measure [--out] [extra]` / `check CLI [--data] [--doc] [--write-doc]` and runs one.
    measure_args: (flag, keyword arguments) pairs the measure command also takes."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", default=data)
    for flag, kwargs in measure_args:
        m.add_argument(flag, **kwargs)
    c = sub.add_parser("check")
    c.add_argument("cli")
    c.add_argument("--data", default=data)
    c.add_argument("--doc", default=doc_path)
    c.add_argument("--write-doc", action="store_true")
    args = p.parse_args()
    if args.cmd == "measure":
        measure(args)
        return 0
    return check(args)


def splice(path, begin, end, text):
    """Replaces what lies between the markers `begin` and `end` in the file at `path` by `text`."""
    with open(path) as f:
        doc = f.read()
    head, rest = doc.split(begin, 1)
    tail = rest.split(end, 1)[1]
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + "\n" + end + tail)
