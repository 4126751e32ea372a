"""``ember-run``: run an exported ``.vmfb`` on ``.npy`` inputs, or describe its signature.

    ember-run model.vmfb --describe
    ember-run model.vmfb --input w.npy --input b.npy --input x.npy --output y.npy
    ember-run model.vmfb --input x.npy --output results.npz --backend vulkan

Inputs are the argument leaves in the order ``--describe`` lists them (the pytree order of
the exported function's arguments); outputs likewise. One ``.npz`` output holds every result
under its name. Needs only ``iree-base-runtime`` and NumPy.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ember-run", description="Run an exported ember module (.vmfb).")
    p.add_argument("module", help="the .vmfb written by ember.export or ember-compile")
    p.add_argument("--input", "-i", action="append", default=[], metavar="FILE.npy",
                   help="one input leaf (repeat, in the order --describe lists)")
    p.add_argument("--output", "-o", action="append", default=[], metavar="FILE",
                   help="one .npy per output leaf, or one .npz for all (default: print)")
    p.add_argument("--backend", choices=["cpu", "vulkan", "cuda"], default=None,
                   help="device to run on (default: the first target present)")
    p.add_argument("--describe", action="store_true", help="print the signature and exit")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    return p


def _load_input(path: str, index: int, name: str) -> np.ndarray:
    from ember.errors import ArgumentError
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ArgumentError(f"input {index} ({name}): cannot read '{path}' as a .npy file: "
                            f"{getattr(e, 'strerror', None) or e}") from None
    if not isinstance(arr, np.ndarray):
        raise ArgumentError(f"input {index} ({name}): '{path}' is an .npz archive; give one "
                            ".npy file per input")
    return arr


def run(args) -> int:
    from ember.errors import ArgumentError
    from ember.exported import load, read_signature

    if args.describe:
        sys.stdout.write(read_signature(args.module).describe())
        return 0
    module = load(args.module, backend=args.backend)
    sig = module.signature
    names = [d["name"] for d in sig.inputs]
    if len(args.input) != len(names):
        raise ArgumentError(f"{args.module} takes {len(names)} inputs "
                            f"({', '.join(names) or 'none'}), got {len(args.input)} --input "
                            "files (see --describe)")
    hosts = []
    for i, (path, aval, name) in enumerate(zip(args.input, module.in_avals, names)):
        arr = _load_input(path, i, name)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                hosts.append(module._host(arr, aval, name))
        except ArgumentError as e:
            raise ArgumentError(f"input {i} ('{path}'): {e}") from None
        for w in caught:     # a 64-bit input converted to the module's 32 bits
            print(f"ember-run: warning: input {i} ('{path}'): {w.message}", file=sys.stderr)
    module.check_sizes(hosts)
    results = module.run_flat(hosts)
    out_names = [d["name"] for d in sig.outputs]
    outs = args.output
    if not outs:
        with np.printoptions(threshold=64):
            for name, r in zip(out_names, results):
                print(f"{name}: {r.dtype}{list(r.shape)}\n{r}")
        return 0
    if len(outs) == 1 and outs[0].endswith(".npz"):
        np.savez(outs[0], **{n: r for n, r in zip(out_names, results)})
        return 0
    if len(outs) != len(results):
        raise ArgumentError(f"{args.module} has {len(results)} outputs "
                            f"({', '.join(out_names)}), got {len(outs)} --output files; give "
                            "one .npy per output or one .npz")
    for path, r in zip(outs, results):
        np.save(path, r, allow_pickle=False)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv or bool(os.environ.get("EMBER_TRACEBACK"))
    from ember.errors import EmberError
    try:
        return run(_parser().parse_args(argv))
    except _UsageError as e:
        print(f"ember-run: error: {e}\n(see ember-run --help)", file=sys.stderr)
        return 1
    except (EmberError, OSError) as e:
        if debug:
            raise
        print(f"ember-run: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug in ember
        if debug:
            raise
        print(f"ember-run: error: internal error: {type(e).__name__}: {e} (run with --debug "
              "for a traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
