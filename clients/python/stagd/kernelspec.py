# SPDX-License-Identifier: Apache-2.0
"""kernelspec.py — the Jupyter kernel "Python 3 (stagd)": an IPython kernel that loads
the stagd extension at start (docs/notebook.md).

    python3 -m stagd.kernelspec install [--user | --sys-prefix | --prefix DIR]
                                        [--name stagd] [--python PATH] [--addr ADDR]
    python3 -m stagd.kernelspec show    # prints the kernel.json it would install

`install` defaults to --user (~/.local/share/jupyter/kernels/stagd). The kernel runs
`PATH -m ipykernel_launcher --ext=stagd` with PYTHONPATH set to the directory holding
this package, and STAGD_ADDR when --addr is given (otherwise the kernel inherits the
environment of the Jupyter server that starts it).
"""
import argparse
import json
import os
import sys
import tempfile

KERNEL_NAME = "stagd"
DISPLAY_NAME = "Python 3 (stagd)"
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kernel_json(python=None, addr=None, display_name=DISPLAY_NAME):
    """The kernel.json dictionary of the stagd kernel."""
    # PYDEVD_…: keeps ipykernel's debugger from warning about frozen modules at each start
    env = {"PYTHONPATH": PACKAGE_PARENT, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    if addr:
        env["STAGD_ADDR"] = addr
    return {
        "argv": [python or sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                 "--ext=stagd"],
        "display_name": display_name,
        "language": "python",
        "env": env,
        "metadata": {"debugger": False},
    }


def install(user=True, prefix=None, name=KERNEL_NAME, python=None, addr=None,
            display_name=DISPLAY_NAME):
    """Installs the kernelspec (through jupyter_client); returns its directory."""
    from jupyter_client.kernelspec import KernelSpecManager
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "kernel.json"), "w", encoding="utf-8") as f:
            json.dump(kernel_json(python, addr, display_name), f, indent=1)
            f.write("\n")
        return KernelSpecManager().install_kernel_spec(
            tmp, kernel_name=name, user=user and prefix is None, prefix=prefix)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m stagd.kernelspec",
                                description=f"Install the Jupyter kernel {DISPLAY_NAME!r}.")
    sub = p.add_subparsers(dest="command", required=True)
    inst = sub.add_parser("install", help="install the kernelspec")
    where = inst.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for this user (the default)")
    where.add_argument("--sys-prefix", action="store_true", help=f"into {sys.prefix}")
    where.add_argument("--prefix", help="into PREFIX/share/jupyter/kernels")
    show = sub.add_parser("show", help="print kernel.json")
    for sp in (inst, show):
        sp.add_argument("--name", default=KERNEL_NAME, help="kernel name (default: stagd)")
        sp.add_argument("--display-name", default=DISPLAY_NAME)
        sp.add_argument("--python", default=None, help="interpreter (default: this one)")
        sp.add_argument("--addr", default=None, help="daemon address the kernel uses")
    a = p.parse_args(argv)
    if a.command == "show":
        print(json.dumps(kernel_json(a.python, a.addr, a.display_name), indent=1))
        return 0
    prefix = sys.prefix if a.sys_prefix else a.prefix
    try:
        dest = install(prefix is None, prefix, a.name, a.python, a.addr, a.display_name)
    except ImportError:
        print("stagd.kernelspec: jupyter_client is not installed (Debian: "
              "apt-get install python3-ipykernel)", file=sys.stderr)
        return 1
    print(f"installed kernelspec {a.name} ({a.display_name}) in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
