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
    cfg, mech, util = result["config"], result["mechanism"], result["utility"]
    if cfg["topology"] == "ring":
        walk = f"{cfg['rounds']} turn(s) = {result['runs'][0]['hops']:,} hops"
    else:
        walk = f"{cfg['steps']:,} steps x {cfg['tokens']} token(s), {cfg['walk']} walk"
    noise = f"{mech['name']} eps={mech['epsilon']:g}"
    if mech["name"] == "gaussian":
        noise += (f" delta={mech['delta']:g} -> sigma={mech['sigma']:.4g} "
                  f"({mech['calibration']} calibration)")
    else:
        noise += f" -> scale={mech['scale']:.4g}"
    lines = [
        f"netdp {result['version']}: {cfg['task']} on {result['topology']}",
        f"  walk    {walk}; engine {result['engine']}; {len(result['runs'])} run(s); "
        f"seed {result['seed']}",
        f"  noise   {noise}; sensitivity {mech['sensitivity']:g} (range "
        f"[{cfg['low']:g}, {cfg['high']:g}])",
        "",
        f"  {'':10}{'estimate':>12}{'truth':>12}{'abs error':>12}{'theory std':>12}"
        f"{'run std':>12}",
        f"  {util['quantity']:10}{_fmt(util['estimate']):>12}{_fmt(util['truth']):>12}"
        f"{_fmt(util['abs_error']):>12}{_fmt(util['theoretical_std']):>12}"
        f"{_fmt(util['empirical_std']):>12}",
    ]
    if util.get("ldp_std") is not None:
        lines.append(f"  LDP baseline (noise at every hop): std {_fmt(util['ldp_std'])}")
    lines += ["", f"  {result['hops']:,} hops in {result['runtime_s']:.3g} s"]
    return "\n".join(lines)
