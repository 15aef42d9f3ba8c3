"""Human-readable reports built from a result's JSON dict."""

from __future__ import annotations


def _fmt(x, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}" if abs(x) < 1e-3 or abs(x) >= 1e5 else f"{x:.{digits}f}"
    return str(x)


def format_text(result: dict) -> str:
    """The short table ``netdp simulate`` prints without ``--json``."""
    cfg = result["config"]
    if cfg["task"] == "sgd":
        return "\n".join(_sgd_lines(result))
    mech, util = result["mechanism"], result["utility"]
    if cfg["task"] == "histogram":
        return "\n".join(_histogram_lines(result) + _privacy_lines(result))
    noise = f"{mech['name']} eps={mech['epsilon']:g}"
    if mech["name"] == "gaussian":
        noise += (f" delta={mech['delta']:g} -> sigma={mech['sigma']:.4g} "
                  f"({mech['calibration']} calibration)")
    elif "scale" in mech:
        noise += f" -> scale={mech['scale']:.4g}"
    else:
        noise += " (report replaces the value, at every hop)"
    lines = [
        f"netdp {result['version']}: {cfg['task']} on {result['topology']}",
        _walk_line(result),
        f"  noise   {noise}; range [{cfg['low']:g}, {cfg['high']:g}]",
        "",
        f"  {'':10}{'estimate':>12}{'truth':>12}{'abs error':>12}{'theory std':>12}"
        f"{'run std':>12}",
        f"  {util['quantity']:10}{_fmt(util['estimate']):>12}{_fmt(util['truth']):>12}"
        f"{_fmt(util['abs_error']):>12}{_fmt(util['theoretical_std']):>12}"
        f"{_fmt(util['empirical_std']):>12}",
    ]
    if util.get("ldp_std") is not None:
        lines.append(f"  LDP baseline (noise at every hop): std {_fmt(util['ldp_std'])}")
    return "\n".join(lines + _privacy_lines(result))


def _walk_line(result: dict) -> str:
    cfg = result["config"]
    if cfg["topology"] == "ring":
        walk = f"{cfg['rounds']} turn(s) = {result['runs'][0]['hops']:,} hops"
    else:
        walk = f"{cfg['steps']:,} steps x {cfg['tokens']} token(s), {cfg['walk']} walk"
    return (f"  walk    {walk}; engine {result['engine']}; {len(result['runs'])} run(s); "
            f"seed {result['seed']}")


def _histogram_lines(result: dict) -> list[str]:
    cfg, mech, util = result["config"], result["mechanism"], result["utility"]
    est, truth = util["estimate"], util["truth"]
    shown = min(len(est), 12)
    lines = [
        f"netdp {result['version']}: histogram on {result['topology']}",
        _walk_line(result),
        f"  oracle  {mech['name']} eps={mech['epsilon']:.4g}, domain {cfg['domain']}; "
        f"{util['reports']:,} reports"
        + (f" + 2 x {util['dummies']:,} dummies" if util.get("dummies") else ""),
        "",
        f"  {'category':>10}{'estimate':>12}{'truth':>12}",
    ]
    lines += [f"  {j:>10}{_fmt(est[j]):>12}{_fmt(truth[j]):>12}" for j in range(shown)]
    if shown < len(est):
        lines.append(f"  {'...':>10}  ({len(est) - shown} more in --json)")
    lines += ["", f"  error   L1 {_fmt(util['l1'])}  Linf {_fmt(util['linf'])}  "
                  f"MSE {_fmt(util['mse'])} (theory {_fmt(util['theoretical_mse'])}); "
                  f"LDP baseline MSE {_fmt(util['ldp_mse'])} (one report per node)"]
    return lines


def _privacy_lines(result: dict) -> list[str]:
    lines = []
    priv = result.get("privacy")
    if priv:
        lines += ["", f"  privacy: eps(u -> v) over ordered pairs; each contribution is "
                      f"eps0={priv['epsilon0']:g}-LDP",
                  f"  {'':14}{'mean':>10}{'min':>10}{'max':>10}{'q50':>10}{'q90':>10}"
                  f"{'q99':>10}  delta"]
        for emp in priv["empirical"]:
            if "shuffle_bound" in priv:
                label = f"kov+{priv['shuffle_bound']}"
            else:
                label = emp["accountant"] + (" (ref.)" if emp["accountant"] == "kov" else "")
            lines.append(f"  {label:14}" + "".join(f"{_fmt(emp[k]):>10}" for k in
                                                   ("mean", "min", "max", "q50", "q90", "q99"))
                         + f"  {emp['delta']:.2g}")
            if emp.get("unprotected"):
                lines.append(f"  {'':14}{emp['unprotected']} pair(s) unprotected (infinite "
                             "loss): the coalition sees their contributions in the clear")
        ldp = priv["ldp"]
        lines.append(f"  {'LDP baseline':14}" + "".join(f"{_fmt(ldp[k]):>10}"
                                                        for k in ("mean", "min", "max")))
        for name, eps in priv.get("theory", {}).items():
            lines.append(f"  theory {name}: {_fmt(eps)}")
        if priv.get("note"):
            lines.append(f"  note: {priv['note']}")
    lines += ["", f"  {result['hops']:,} hops in {result['runtime_s']:.3g} s"]
    return lines


def _sgd_lines(result: dict) -> list[str]:
    cfg, util, data, model = (result["config"], result["utility"], result["dataset"],
                              result["model"])
    per_node = data["rows_per_node"]
    metric = "accuracy" if util["metric"] == "accuracy" else "R2"
    lines = [
        f"netdp {result['version']}: sgd on {result['topology']}",
        _walk_line(result),
        f"  data    {data['name']}: {data['train_rows']} training rows "
        f"({per_node['min']}-{per_node['max']} per node), {data['test_rows']} test rows, "
        f"d = {data['dim']}",
        f"  model   {model['name']}, gradients clipped to L = {model['lipschitz']:g} before "
        f"the noise, lr {model['lr']:g} ({model['lr_schedule']})",
        f"  target  eps = {cfg['epsilon']:g}, delta = {cfg['delta']:g} for every regime",
        "",
        f"  {'regime':12}{'sigma':>10}{'objective':>12}{'test ' + metric:>15}  accountant",
    ]
    for regime in cfg["regimes"]:
        u = util[regime]
        lines.append(f"  {regime:12}{_fmt(u['sigma']):>10}{_fmt(u['final_objective']):>12}"
                     f"{_fmt(u['final_accuracy']):>15}  {u['accountant']}")
    opt = util["optimum"]
    lines.append(f"  {'optimum':12}{'':>10}{_fmt(opt['objective']):>12}"
                 f"{_fmt(opt['score']):>15}  {opt['solver']}")
    priv = result["privacy"]
    if priv["empirical"]:
        lines += ["", f"  pairwise eps of this walk (network view, delta = {cfg['delta']:g}; "
                  "local = a node's own updates fully exposed)",
                  f"  {'regime':12}{'mean':>9}{'q50':>9}{'q90':>9}{'q99':>9}{'max':>9}"
                  f"{'> target':>10}{'local mean':>12}"]
        for row in priv["empirical"]:
            lines.append(f"  {row['regime']:12}{_fmt(row['mean']):>9}{_fmt(row['q50']):>9}"
                         f"{_fmt(row['q90']):>9}{_fmt(row['q99']):>9}{_fmt(row['max']):>9}"
                         f"{row['above_target']:>10.1%}{_fmt(row['ldp']['mean']):>12}")
    else:
        lines.append(f"  {priv.get('note', '')}")
    if result.get("curves_files"):
        lines.append(f"  curves written to {', '.join(result['curves_files'])}")
    lines.append(f"  seed {result['seed']} (rerun with --seed {result['seed']})")
    return lines
