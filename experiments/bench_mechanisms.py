"""Local randomizers against the public LDP libraries: speed and accuracy.

Usage:
    python -m pip install --target /tmp/benchlibs --no-deps pure-ldp==1.2.0 \\
        multi-freq-ldpy==0.2.5 'xxhash<4' bitstring bitarray scikit-learn joblib \\
        threadpoolctl statsmodels pandas patsy tzdata narwhals formulaic interface_meta \\
        wrapt cloudpickle
    python experiments/bench_mechanisms.py --libs-path /tmp/benchlibs [--runs 5] [--only olh cms]

The libraries are installed for this benchmark only, with ``--no-deps`` into their own
folder so that they never replace the numpy, scipy and numba of the main environment
(pure-ldp imports scikit-learn and statsmodels for its RAPPOR without declaring them,
hence the long list; both libraries hash ``str`` with xxhash, which xxhash 4 refuses).
A library that cannot be imported is skipped with a message.

Setting: n users (default 100 000) with categories drawn once (seed 12345) from a
Zipf-like law ``f_i ∝ (i + 1)^-1.1`` over d = 100 categories, ε = 1. For every frequency
oracle we share with a library, each run perturbs all n values, aggregates them and
estimates all d frequencies, with each implementation's idiomatic API (ours: one
vectorized call per stage; the libraries: one Python call per user, as they are written).
Run r is seeded with r (ours: ``default_rng(r)``; libraries: ``random.seed``,
``numpy.random.seed`` and numba's generator). Time: median over the runs. MSE: the mean
over bins and runs of ``(f̂_i - f_i)^2`` against the empirical frequencies of the data,
next to the closed form (our ``variance`` averaged over bins). Two estimates agree when
their per-run MSEs differ by less than 3 standard errors (Welch). Where a library clips
or renormalises its estimate (multi-freq-ldpy's ``*_Aggregator_MI``, pure-ldp's RAPPOR
regression) the MSE column uses the unbiased estimate computed from the same aggregate
(the library's own counts, before its post-processing); the shipped estimate is printed
in a second table.

The numeric randomizers (Duchi, Piecewise, Hybrid) have no counterpart in either
library (pure-ldp has none, multi-freq-ldpy only frequency oracles); they are timed
alone, with the MSE of the mean of n reports against its closed form.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from importlib import metadata

import numpy as np

from netdp.core.errors import InputError
from netdp.mechanisms import RAPPOR, frequency_oracle, numeric

FREQUENCY_ORACLES = ("grr", "sue", "oue", "blh", "olh", "the", "she", "hr", "cms", "hcms",
                     "rappor")
NUMERIC = ("duchi", "piecewise", "hybrid")
RAPPOR_HASHES, RAPPOR_BLOOM = 2, 128


# -- data ----------------------------------------------------------------------------------

def zipf_data(n: int, d: int, seed: int = 12345, s: float = 1.1) -> np.ndarray:
    """n categories drawn from ``f_i ∝ (i + 1)^-s`` (shuffled users, fixed seed)."""
    law = 1.0 / np.arange(1, d + 1) ** s
    return np.random.default_rng(seed).choice(d, size=n, p=law / law.sum())


def ours(name: str, epsilon: float, d: int):
    """Our mechanism for the shared setting (RAPPOR: pure-ldp's one, permanent RR only)."""
    if name == "rappor":
        # pure-ldp's RAPPOR reports the permanent randomized response (no instantaneous
        # step: p = 0, q = 1 here) with ε = 2h ln((1 - f/2)/(f/2)); same h and Bloom size.
        # The first hash seed whose Bloom design has full rank (least squares needs it).
        for hash_seed in range(1000):
            try:
                return RAPPOR.from_epsilon(epsilon, d, p=0.0, q=1.0, hashes=RAPPOR_HASHES,
                                           bloom=RAPPOR_BLOOM, hash_seed=hash_seed)
            except InputError:
                continue
    return frequency_oracle(name, epsilon, d)


def run_ours(mech, values: np.ndarray, seed: int) -> tuple[np.ndarray, dict]:
    """Perturb, aggregate, estimate; returns the frequencies and the time of each stage."""
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    reports = mech.perturb(values, rng)
    t1 = time.perf_counter()
    agg = mech.aggregate(reports)
    t2 = time.perf_counter()
    est = mech.estimate_counts(agg, len(values)) / len(values)
    t3 = time.perf_counter()
    return est, {"perturb": t1 - t0, "aggregate": t2 - t1, "estimate": t3 - t2}


# -- the libraries -------------------------------------------------------------------------

def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - the libraries draw from the global state
    _seed_numba(seed)


def _seed_numba(seed: int) -> None:
    """numba keeps its own generator, seeded only from compiled code."""
    global _NUMBA_SEED
    if _NUMBA_SEED is None:
        import numba

        @numba.njit
        def _seed(s):
            np.random.seed(s)  # noqa: NPY002

        _NUMBA_SEED = _seed
    _NUMBA_SEED(seed)


_NUMBA_SEED = None


class Run:
    """One library run: ``shipped`` is the library's own estimate, ``unbiased`` the
    estimate before any clipping or renormalisation (the same array when there is none)."""

    def __init__(self, shipped: np.ndarray, unbiased: np.ndarray | None = None):
        self.shipped = np.asarray(shipped, dtype=float)
        self.unbiased = self.shipped if unbiased is None else np.asarray(unbiased, float)


def _numpy1_zeros(module) -> None:
    """pure-ldp 1.2.0's servers call ``np.zeros(d)`` with ``d = None`` for the sketches
    (CMS, HCMS), which numpy 2 refuses; numpy 1 returned ``np.zeros(())``. Give the
    module a numpy whose ``zeros`` does that (the sketch servers never use the array)."""
    if getattr(module.np, "patched_for_none", False):
        return
    import types

    shim = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    shim.zeros = lambda shape, *a, **kw: np.zeros(() if shape is None else shape, *a, **kw)
    shim.patched_for_none = True
    module.np = shim


def pure_ldp_runner(name: str, epsilon: float, d: int) -> Callable | None:
    """A function ``values -> Run`` using pure-ldp's client/server objects, or None."""
    import pure_ldp.core._freq_oracle_server as server_module
    import pure_ldp.frequency_oracles as fo

    _numpy1_zeros(server_module)
    ident = lambda x: x  # noqa: E731 - our categories are already 0..d-1

    def generic(make_client, make_server, items=range(d), shift=0):
        def run(values):
            server = make_server()
            client = make_client(server)
            for v in values.tolist():
                server.aggregate(client.privatise(v + shift))
            est = np.array(server.estimate_all([i + shift for i in items],
                                               suppress_warnings=True)) / len(values)
            return Run(est), server
        return run

    if name == "grr":
        run = generic(lambda s: fo.DEClient(epsilon, d, index_mapper=ident),
                      lambda: fo.DEServer(epsilon, d, index_mapper=ident))
    elif name in ("sue", "oue"):
        oue = name == "oue"
        run = generic(lambda s: fo.UEClient(epsilon, d, use_oue=oue, index_mapper=ident),
                      lambda: fo.UEServer(epsilon, d, use_oue=oue, index_mapper=ident))
    elif name in ("blh", "olh"):
        olh = name == "olh"
        run = generic(lambda s: fo.LHClient(epsilon, d, g=2, use_olh=olh, index_mapper=ident),
                      lambda: fo.LHServer(epsilon, d, g=2, use_olh=olh, index_mapper=ident))
    elif name in ("she", "the"):
        the = name == "the"
        run = generic(lambda s: fo.HEClient(epsilon, d, index_mapper=ident),
                      lambda: fo.HEServer(epsilon, d, use_the=the, index_mapper=ident))
    elif name == "hr":
        # pure-ldp's Hadamard mechanism with t = 1 is our "hr": one uniformly drawn
        # coefficient of the item's Hadamard row, flipped w.p. 1/(e^ε+1). Its domain must
        # be a power of two: we pad to m = 128 and put item v on row v + 1, as we do.
        m = 128
        run = generic(lambda s: fo.HadamardMechClient(epsilon, m, 1, index_mapper=ident),
                      lambda: fo.HadamardMechServer(epsilon, m, 1, index_mapper=ident),
                      shift=1)
    elif name in ("cms", "hcms"):
        had = name == "hcms"
        k, m = 16, 1024  # our defaults

        def run_cms(values):
            server = fo.CMSServer(epsilon, k, m, is_hadamard=had)
            client = fo.CMSClient(epsilon, server.get_hash_funcs(), m, is_hadamard=had)
            for v in values.tolist():
                server.aggregate(client.privatise(v))
            est = np.array(server.estimate_all(range(d), suppress_warnings=True))
            return Run(est / len(values)), server
        run = run_cms
    elif name == "rappor":
        def run_rappor(values):
            # f from ε = 2h ln((1 - f/2)/(f/2)), unrounded (its convert_eps_to_f rounds
            # to 2 digits and assumes h = 1); one cohort, like ours
            f = 2 / (1 + math.exp(epsilon / (2 * RAPPOR_HASHES)))
            server = fo.RAPPORServer(f, RAPPOR_BLOOM, RAPPOR_HASHES, d, num_of_cohorts=1,
                                     index_mapper=ident)
            client = fo.RAPPORClient(f, RAPPOR_BLOOM, server.get_hash_funcs(),
                                     num_of_cohorts=1, index_mapper=ident)
            for v in values.tolist():
                server.aggregate(client.privatise(v))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = np.array(server.estimate_all(range(d), suppress_warnings=True))
            return Run(est / len(values)), server
        run = run_rappor
    else:
        return None

    def finish(values):
        result, server = run(values)
        if name == "rappor":  # unbiased: plain least squares on the same aggregate
            sol = np.linalg.lstsq(server._create_X(), server._create_y(), rcond=None)[0]
            result.unbiased = sol / len(values)
        return result
    return finish


_MFL_CAPTURED: dict = {}
_MFL_MI: dict = {}


def _capturing_mi(count_report, n, p, q):
    """multi-freq-ldpy's ``MI`` (clip at 0, renormalise), recording the unbiased estimate
    ``(C - n q)/(p - q)/n`` it receives first."""
    _MFL_CAPTURED["unbiased"] = (np.asarray(count_report, float) - n * q) / (p - q) / n
    return next(iter(_MFL_MI.values()))(count_report, n, p, q)


def mfl_runner(name: str, epsilon: float, d: int) -> Callable | None:
    """A function ``values -> Run`` using multi-freq-ldpy's client/aggregator functions."""
    from multi_freq_ldpy.pure_frequency_oracles import GRR, HE, LH, UE

    captured = _MFL_CAPTURED
    for module in (GRR, HE, LH, UE):
        if module.MI is not _capturing_mi:
            _MFL_MI[module.__name__] = module.MI
            module.MI = _capturing_mi

    def with_capture(client, aggregate):
        def run(values):
            captured.clear()
            reports = [client(v) for v in values.tolist()]
            shipped = aggregate(reports)
            unbiased = captured.get("unbiased")
            if unbiased is None:  # SHE: the aggregate is the sum of the noisy vectors
                unbiased = np.sum(reports, axis=0) / len(values)
            return Run(shipped, unbiased)
        return run

    if name == "grr":
        return with_capture(lambda v: GRR.GRR_Client(v, d, epsilon),
                            lambda r: GRR.GRR_Aggregator_MI(r, d, epsilon))
    if name in ("sue", "oue"):
        oue = name == "oue"
        return with_capture(lambda v: UE.UE_Client(v, d, epsilon, oue),
                            lambda r: UE.UE_Aggregator_MI(r, epsilon, oue))
    if name in ("blh", "olh"):
        olh = name == "olh"
        return with_capture(lambda v: LH.LH_Client(v, d, epsilon, olh),
                            lambda r: LH.LH_Aggregator_MI(r, d, epsilon, olh))
    if name in ("she", "the"):
        the = name == "the"
        return with_capture(lambda v: HE.HE_Client(v, d, epsilon),
                            lambda r: HE.HE_Aggregator_MI(r, d, epsilon, the))
    return None


def load_libraries(libs_path: str | None) -> dict:
    """The importable libraries: ``{label: (version, runner factory)}``."""
    if libs_path:
        sys.path.append(libs_path)  # after the main environment: never shadow its numpy
    libs = {}
    for label, module, dist, factory in (("pure-ldp", "pure_ldp.frequency_oracles",
                                          "pure-ldp", pure_ldp_runner),
                                         ("multi-freq-ldpy", "multi_freq_ldpy",
                                          "multi-freq-ldpy", mfl_runner)):
        try:
            __import__(module)
        except ImportError as exc:
            print(f"skipping {label}: cannot import {module} ({exc}); install it with the "
                  "command in this script's docstring and pass --libs-path", file=sys.stderr)
            continue
        libs[label] = (metadata.version(dist), factory)
    return libs


# -- statistics ----------------------------------------------------------------------------

def closed_form_mse(mech, truth: np.ndarray, n: int) -> float:
    """Mean over bins of our exact MSE: the variance, plus for the sketches (whose hash
    keys stay fixed over the runs) the square of their exact fixed-key bias."""
    mse = np.asarray(mech.variance(truth, n), dtype=float)
    if hasattr(mech, "expected_counts_given_keys"):
        counts = truth * n
        mse = mse + ((mech.expected_counts_given_keys(counts) - counts) / n) ** 2
    return float(np.mean(mse))


def mse_stats(estimates: list[np.ndarray], truth: np.ndarray) -> tuple[float, float, list]:
    """Mean over runs of the per-run MSE, its standard error, and the per-run values."""
    per_run = [float(np.mean((e - truth) ** 2)) for e in estimates]
    se = statistics.stdev(per_run) / math.sqrt(len(per_run)) if len(per_run) > 1 else math.nan
    return statistics.fmean(per_run), se, per_run


def welch_z(a: tuple, b: tuple) -> float:
    return (a[0] - b[0]) / math.sqrt(a[1] ** 2 + b[1] ** 2)


# -- main ----------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--libs-path", default=None,
                        help="folder the libraries were pip-installed into (--target)")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5, help="runs (seeds 0..runs-1)")
    parser.add_argument("--only", nargs="*", default=None, help="mechanisms to run")
    parser.add_argument("--no-libs", action="store_true", help="time ours only")
    parser.add_argument("--json", default=None, help="write every figure to this file")
    args = parser.parse_args()

    n, d, eps = args.n, args.d, args.epsilon
    values = zipf_data(n, d)
    truth = np.bincount(values, minlength=d) / n
    libs = {} if args.no_libs else load_libraries(args.libs_path)
    names = [x for x in FREQUENCY_ORACLES + NUMERIC if not args.only or x in args.only]

    print(f"machine: {platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}; libraries: "
          + (", ".join(f"{k} {v[0]}" for k, v in libs.items()) or "none"))
    print(f"n = {n:,}, d = {d}, epsilon = {eps}, Zipf(1.1) data, {args.runs} runs "
          "(seeds 0..), median time of perturb + aggregate + estimate\n")
    rows, numeric_rows = [], []
    for name in names:
        if name in NUMERIC:
            numeric_rows.append(bench_numeric(name, eps, n, args.runs))
            continue
        mech = ours(name, eps, d)
        est, stages = [], []
        run_ours(mech, values[:1000], 0)  # warm-up (imports, caches)
        for r in range(args.runs):
            e, st = run_ours(mech, values, r)
            est.append(e)
            stages.append(st)
        total = [sum(s.values()) for s in stages]
        row = {"mechanism": name, "ours_s": statistics.median(total),
               "ours_stages_s": {k: statistics.median(s[k] for s in stages)
                                 for k in stages[0]},
               "mse_ours": mse_stats(est, truth),
               "mse_closed_form": closed_form_mse(mech, truth, n)}
        for label, (_, factory) in libs.items():
            runner = factory(name, eps, d)
            if runner is None:
                continue
            seed_everything(0)
            runner(values[:200])  # warm-up: numba compilation, imports
            times, runs = [], []
            for r in range(args.runs):
                seed_everything(r)
                start = time.perf_counter()
                runs.append(runner(values))
                times.append(time.perf_counter() - start)
            row[f"{label}_s"] = statistics.median(times)
            row[f"mse_{label}"] = mse_stats([x.unbiased for x in runs], truth)
            row[f"mse_{label}_shipped"] = mse_stats([x.shipped for x in runs], truth)
            print(f"  {name} {label}: {row[f'{label}_s']:.2f} s", file=sys.stderr)
        rows.append(row)
        print(f"  {name} ours: {row['ours_s']:.4f} s {row['ours_stages_s']}", file=sys.stderr)

    print_tables(rows, numeric_rows, list(libs))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"n": n, "d": d, "epsilon": eps, "runs": args.runs,
                       "libraries": {k: v[0] for k, v in libs.items()},
                       "frequency": rows, "numeric": numeric_rows}, fh, indent=1,
                      default=float)


def bench_numeric(name: str, eps: float, n: int, runs: int) -> dict:
    """Perturb n values uniform on [-1, 1] and estimate each; no library has these.

    MSE: mean over users and runs of ``(estimate - x)^2``, against the mean of the
    closed-form variance.
    """
    mech = numeric(name, eps)
    x = np.random.default_rng(12345).uniform(-1, 1, n)
    times, errors = [], []
    mech.perturb(x[:1000], np.random.default_rng(0))
    for r in range(runs):
        start = time.perf_counter()
        est = mech.estimate(mech.perturb(x, np.random.default_rng(r)))
        times.append(time.perf_counter() - start)
        errors.append(float(np.mean((est - x) ** 2)))
    return {"mechanism": name, "ours_s": statistics.median(times),
            "mse": statistics.fmean(errors),
            "mse_se": statistics.stdev(errors) / math.sqrt(runs) if runs > 1 else math.nan,
            "closed_form": float(mech.variance(x).mean())}


def print_tables(rows: list[dict], numeric_rows: list[dict], labels: list[str]) -> None:
    def secs(row, key):
        return f"{row[key]:.3f}" if key in row else "-"

    def mse(row, key):
        return f"{row[key][0]:.3g}" if key in row else "-"

    head = ["mechanism", "ours (s)"] + [f"{lab} (s)" for lab in labels] + [
        "speed-up", "MSE ours"] + [f"MSE {lab}" for lab in labels] + [
        "MSE closed form", "agree (|z| < 3)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        theirs = [row[f"{lab}_s"] for lab in labels if f"{lab}_s" in row]
        speed = f"{min(theirs) / row['ours_s']:,.0f}x" if theirs else "-"
        zs = [welch_z(row["mse_ours"], row[f"mse_{lab}"]) for lab in labels
              if f"mse_{lab}" in row]
        zc = (row["mse_ours"][0] - row["mse_closed_form"]) / row["mse_ours"][1]
        agree = ", ".join(f"{z:+.1f}" for z in zs) + (f"; vs closed form {zc:+.1f}")
        cells = [row["mechanism"], f"{row['ours_s']:.4f}"] + [
            secs(row, f"{lab}_s") for lab in labels] + [speed, mse(row, "mse_ours")] + [
            mse(row, f"mse_{lab}") for lab in labels] + [
            f"{row['mse_closed_form']:.3g}", agree]
        print("| " + " | ".join(cells) + " |")
    shipped = [(row["mechanism"], lab, row[f"mse_{lab}_shipped"][0], row[f"mse_{lab}"][0])
               for row in rows for lab in labels
               if f"mse_{lab}" in row and row[f"mse_{lab}_shipped"][2] != row[f"mse_{lab}"][2]]
    if shipped:
        print("\nLibrary estimates as shipped (clipped / renormalised / regularised):")
        print("| mechanism | library | MSE shipped | MSE unbiased, same aggregate |")
        print("|---|---|---|---|")
        for name, lab, a, b in shipped:
            print(f"| {name} | {lab} | {a:.3g} | {b:.3g} |")
    if numeric_rows:
        print("\nNumeric randomizers (ours only; n values uniform on [-1, 1]):")
        print("| mechanism | perturb + estimate (s) | MSE per report | closed form | z |")
        print("|---|---|---|---|---|")
        for row in numeric_rows:
            z = (row["mse"] - row["closed_form"]) / row["mse_se"]
            print(f"| {row['mechanism']} | {row['ours_s']:.4f} | {row['mse']:.4g} | "
                  f"{row['closed_form']:.4g} | {z:+.1f} |")


if __name__ == "__main__":
    main()
