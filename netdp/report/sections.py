"""The sections of a result's page, from its JSON object alone (``netdp simulate --json``,
``account``, ``attack``, ``audit``): the command and config, provenance, utility, the
privacy summary with its theoretical lines, faults, the attack, and any other object the
result holds. Tables only, no figure: :meth:`netdp.report.types.Report._repr_html_` shows
these in a notebook, and :mod:`netdp.run.page` adds the figures for the page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netdp.report.html import (
    Section,
    code_block,
    esc,
    generic,
    mapping_table,
    number,
    paragraph,
    records_table,
    table,
)

#: Top-level keys a section of its own presents (every other object gets a generic one).
SHOWN = ("schema", "version", "seed", "config", "provenance", "command", "utility", "privacy",
         "runs", "faults", "attack", "audit", "timing")
#: Columns of the table of empirical pairwise losses, in this order when present.
PAIR_COLUMNS = ("accountant", "regime", "delta", "pairs", "unprotected", "mean", "min", "max",
                "q50", "q90", "q99", "above_target")


def kind(result: Mapping[str, Any]) -> str:
    """Which command wrote ``result``: ``simulate``, ``account``, ``attack`` or ``audit``."""
    if "audit" in result:
        return "audit"
    if "gain" in result and "per_target" in result:
        return "attack"
    if "log" in result and "config" in result:
        return "account"
    return "simulate"


def title(result: Mapping[str, Any]) -> str:
    """One line naming what ran: ``netdp simulate: sum/walk on complete graph (...)``."""
    cfg = result.get("config") if isinstance(result.get("config"), Mapping) else {}
    assert isinstance(cfg, Mapping)
    what = "/".join(str(cfg[k]) for k in ("task", "protocol") if cfg.get(k))
    mech = result.get("mechanism")
    name = mech.get("name") if isinstance(mech, Mapping) else None
    where = result.get("topology") or cfg.get("topology")
    parts = [p for p in (what, f"on {where}" if where else "",
                         "" if what else f"mechanism {name}" if name else "") if p]
    return f"netdp {kind(result)}" + (f": {' '.join(parts)}" if parts else "")


def command_section(result: Mapping[str, Any], command: str | None = None) -> Section:
    """The command (given, or the one the result records) and the resolved config."""
    command = command or recorded_command(result)
    body = [code_block(command, "command") if command else paragraph(
        "The command line is not recorded in this result; the config below, with its seed, "
        "reproduces it (`netdp simulate --config FILE.toml` takes these keys).")]
    cfg = result.get("config")
    if isinstance(cfg, Mapping):
        rows = [(k, v) for k, v in cfg.items() if v is not None]
        body.append(table("Resolved configuration (parameters left unset are omitted)",
                          ("parameter", "value"), rows))
    else:  # attack, audit: their parameters are the result's top-level scalars
        scalars = {k: v for k, v in result.items() if not isinstance(v, Mapping | list)
                   and k not in ("schema", "version", "seed")}
        body.append(mapping_table("Parameters", scalars, ("parameter", "value")))
    for key in ("engine", "topology"):
        if isinstance(result.get(key), str):
            body.append(paragraph(f"{key}: {result[key]}"))
    if isinstance(result.get("mechanism"), Mapping):
        body.append(mapping_table("Mechanism (the randomizer of one contribution)",
                                  result["mechanism"], ("parameter", "value")))
    return Section("command", "Command and configuration", "\n".join(b for b in body if b))


def recorded_command(result: Mapping[str, Any]) -> str | None:
    """The command line a result records (``command``, or its provenance's), if any."""
    prov = result.get("provenance")
    for holder in (result, prov if isinstance(prov, Mapping) else {}):
        found = holder.get("command") or holder.get("argv")
        if isinstance(found, list):
            return " ".join(map(str, found))
        if isinstance(found, str):
            return found
    return None


def provenance_section(holder: Mapping[str, Any], what: str = "result") -> Section:
    """Whatever the ``provenance`` object holds (any keys, nested ones dotted); without
    one, the version and seed the result records."""
    prov = holder.get("provenance")
    if isinstance(prov, Mapping) and prov:
        body = generic(f"Provenance of this {what}", prov)
    else:
        keys = ("schema", "version", "netdp_version", "seed", "base_seed")
        rows = [(k, holder[k]) for k in keys if holder.get(k) is not None]
        body = "\n".join([paragraph(f"This {what} records no provenance object (written by "
                                    "an earlier netdp); what it records:"),
                          table(f"Version and seed of this {what}", ("key", "value"), rows)])
    return Section("provenance", "Provenance", body)


def utility_section(result: Mapping[str, Any]) -> Section | None:
    """The task's utility (estimate, error and its closed forms) and each run's figures."""
    util = result.get("utility")
    if not isinstance(util, Mapping):
        return None
    body = [generic("Utility over the runs", util)]
    runs = result.get("runs")
    if isinstance(runs, list) and runs and all(isinstance(r, Mapping) for r in runs):
        body.append(records_table("Each run", runs))
    return Section("utility", "Utility", "\n".join(body))


def privacy_section(result: Mapping[str, Any]) -> Section | None:
    """Pairwise losses per accountant, the LDP baseline, the theoretical lines, notes and
    the summaries by hop distance."""
    priv = result.get("privacy")
    if not isinstance(priv, Mapping):
        return None
    body = []
    if "epsilon0" in priv:
        body.append(paragraph(f"Each contribution is ε0 = {number(priv['epsilon0'])}-LDP "
                              f"(δ0 = {number(priv.get('delta0'))}); ε(u → v) is the loss of "
                              "node u towards observer v, over the ordered pairs and runs."))
    empirical = [e for e in priv.get("empirical") or [] if isinstance(e, Mapping)]
    if empirical:
        columns = [c for c in PAIR_COLUMNS if any(c in e for e in empirical)]
        rows = [[e.get(c) for c in columns] for e in empirical]
        body.append(table("Empirical pairwise losses ε(u → v), per accountant", columns, rows))
    ldp = priv.get("ldp")
    if isinstance(ldp, Mapping):
        body.append(mapping_table("LDP baseline: a node's loss over its own contributions",
                                  ldp, ("measure", "value")))
    theory = priv.get("theory")
    if isinstance(theory, Mapping) and theory:
        body.append(table("Theoretical lines at this setting", ("curve", "ε"),
                          list(theory.items())))
    if priv.get("note"):
        body.append(f'<p class="note">note: {esc(priv["note"])}</p>')
    for e in empirical:
        label = e.get("regime") or e.get("accountant")
        if isinstance(e.get("ratio_to_exact"), Mapping):
            body.append(mapping_table(f"{label} / exact", e["ratio_to_exact"],
                                      ("measure", "ratio")))
        if isinstance(e.get("by_distance"), list) and e["by_distance"]:
            body.append(records_table(f"{label}: pairwise loss by hop distance from u to v",
                                      e["by_distance"]))
    rest = {k: v for k, v in priv.items() if k not in (
        "epsilon0", "delta0", "empirical", "ldp", "theory", "note")}
    if rest:
        body.append(generic("Other privacy figures", rest))
    return Section("privacy", "Privacy", "\n".join(b for b in body if b))


#: Utility figures the answer names first, in this order (the first two found).
UTILITY_KEYS = ("abs_error", "mse", "rmse", "l1", "linf", "error", "accuracy", "f1",
                "precision", "recall", "loss", "gap")


def _ratio_words(value: float, baseline: float) -> str:
    """``6.2x below`` / ``1.3x above`` the baseline (or ``at``)."""
    if not (value > 0 and baseline > 0):
        return "below" if value < baseline else "at" if value == baseline else "above"
    r = baseline / value if value < baseline else value / baseline
    side = "below" if value < baseline else "above"
    return f"{r:.3g}x {side}" if round(r, 2) != 1 else "at"


def answer_section(result: Mapping[str, Any]) -> Section | None:
    """The answer, first: the first accountant's mean pairwise loss, its q99 and worst
    pair against the LDP baseline at the report's δ, the share of pairs below the
    baseline, the note that qualifies them, and the utility's headline figures."""
    priv = result.get("privacy") if isinstance(result.get("privacy"), Mapping) else None
    util = result.get("utility") if isinstance(result.get("utility"), Mapping) else None
    if priv is None and util is None:
        return None
    lines = []
    if priv is not None:
        assert isinstance(priv, Mapping)
        emp = [e for e in priv.get("empirical") or [] if isinstance(e, Mapping)]
        ldp = priv.get("ldp") if isinstance(priv.get("ldp"), Mapping) else {}
        assert isinstance(ldp, Mapping)
        base = ldp.get("mean")
        if emp and isinstance(emp[0].get("mean"), int | float):
            e = emp[0]
            label = e.get("regime") or e.get("accountant")
            head = (f"Mean pairwise loss ε(u → v) = <strong>{number(e['mean'])}</strong> "
                    f"({esc(label)}, δ = {number(e.get('delta'))})")
            if isinstance(base, int | float):
                head += (f": <strong>{_ratio_words(float(e['mean']), float(base))}</strong> "
                         f"the LDP baseline's {number(base)}")
            lines.append(f'<p class="answer-main">{head}.</p>')
            facts = [f"q99 {number(e.get('q99'))}, worst pair {number(e.get('max'))}, over "
                     f"{number(e.get('pairs'))} ordered pairs"]
            if isinstance(e.get("below_ldp"), int | float):
                facts.append(f"{100 * e['below_ldp']:.3g}% of the pairs below the LDP "
                             "baseline's mean")
            if e.get("unprotected"):
                facts.append(f"{number(e['unprotected'])} pairs unprotected (ε = ∞)")
            lines.append("<ul>" + "".join(f"<li>{esc(f)}</li>" for f in facts) + "</ul>")
        else:
            lines.append('<p class="answer-main">No pairwise figure in this result'
                         + (f"; the LDP baseline's mean is {number(base)}"
                            if isinstance(base, int | float) else "") + ".</p>")
        if priv.get("note"):
            lines.append(f'<p class="note">note: {esc(priv["note"])}</p>')
    if util is not None:
        assert isinstance(util, Mapping)
        found = [(k, util[k]) for k in UTILITY_KEYS
                 if isinstance(util.get(k), int | float) and not isinstance(util[k], bool)]
        if found:
            what = f" of the {esc(util['quantity'])}" if isinstance(util.get("quantity"),
                                                                     str) else ""
            lines.append(f"<p>Utility{what}: " + ", ".join(
                f"{esc(k.replace('_', ' '))} {number(v)}" for k, v in found[:2]) + ".</p>")
    return Section("answer", "The answer", '<div class="answer">' + "\n".join(lines)
                   + "</div>")


def result_sections(result: Mapping[str, Any], command: str | None = None) -> list[Section]:
    """Every section of a result's page but the figures, in reading order: the answer,
    the details (utility, privacy, faults, attack, audit, any other object, time), then
    the command, its configuration and the provenance."""
    out = [s for s in (answer_section(result), utility_section(result),
                       privacy_section(result)) if s is not None]
    for key, name in (("faults", "Faults"), ("attack", "Attack"), ("audit", "Audit")):
        value = result.get(key)
        if isinstance(value, Mapping | list):
            out.append(Section(key, name, generic(name, value)))
    for key, value in result.items():
        if key not in SHOWN and key not in ("mechanism", "engine", "topology") and isinstance(
                value, Mapping | list) and value:
            out.append(Section(f"more-{key}", key.replace("_", " ").capitalize(),
                               generic(key, value)))
    if isinstance(result.get("timing"), Mapping | list):
        out.append(Section("timing", "Time", generic("Time", result["timing"])))
    return [*out, command_section(result, command), provenance_section(result)]


def summary_html(result: Mapping[str, Any]) -> str:
    """The sections as one ``<div>`` (a notebook's rich display: no script, no figure)."""
    body = "\n".join(s.html().replace("<h2 ", "<h3 ").replace("</h2>", "</h3>")
                     for s in result_sections(result))
    return f'<div class="netdp-report">\n<h2>{esc(title(result))}</h2>\n{body}\n</div>'
