"""``make mutate``: mutation testing with cosmic-ray, one session per module group, and its report.

A group is a ``.mutation/<group>.toml`` (cosmic-ray's configuration: the module, the fast tests that cover it,
the timeout per mutant, the local distributor). For each group asked for, this runs::

    cosmic-ray init --force .mutation/<group>.toml .mutation/<group>.sqlite
    cr-filter-operators .mutation/<group>.sqlite .mutation/<group>.toml
    cosmic-ray exec .mutation/<group>.toml .mutation/<group>.sqlite

after two checks that keep a broken set-up from passing for a result: the test command's ``python`` imports
``dcops`` from this checkout (if it imported another copy, every mutant would survive), and the test command
passes on the unmutated code (if it failed, every mutant would count as killed). Then it writes
``reports/mutation/README.md`` from the session databases (``--report-only`` does only that). The sessions
(``*.sqlite``) are not committed, so a group without one here (not run in this checkout) keeps its table row,
test command and section from the report as it stands: running one group rewrites only that group's figures.

The operator set is cosmic-ray's core set less two families (``exclude-operators`` in every TOML), for run time:

- an arithmetic operator replaced by a bitwise or shift one (``&``, ``|``, ``^``, ``<<``, ``>>``): 5 of the 13
  replacements of every ``+ - * / // % **``. These modules do no bit arithmetic: on floats such a mutant raises
  ``TypeError`` wherever the line runs, and on ints it changes the value as the ``+ - * /`` replacements kept do;
- a value comparison (``== != < <= > >=``) replaced by ``is`` / ``is not``: on numbers and strings ``is`` is
  (almost) never true, so the mutant is the comparison forced false or true, which the kept replacements
  (``==`` by ``!=``, ``<`` by ``>=``, and ``not`` added) already make.

Mutants inside annotations are skipped too: every module mutated here starts with ``from __future__ import
annotations``, so an annotation is a string that nothing evaluates and no test can tell ``str | None`` from
``str - None``.

``--retest-survivors`` runs again only the mutants that survived the last run (after tests were added): a
test added cannot let a mutant that was killed survive, so the figures it leaves are those of a full run.

Survivors that no test can kill (equivalent mutants) are listed with the reason in ``.mutation/equivalent.toml``
and shown apart in the report.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import os
import shlex
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the toml package, a dependency of cosmic-ray
    import toml as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / ".mutation"
REPORT = ROOT / "reports" / "mutation" / "README.md"
NOTES_MARKER = "<!-- Notes: everything below this line is kept when .mutation/run.py rewrites the report. -->"
PHYSICS_GROUPS = ("chiller", "economiser", "zones", "auxiliaries", "psychrometrics", "plant", "single_plant",
                  "compiled_plant", "v2_chiller", "v2_tower", "v2_storage", "v2_coil", "v2_servers", "v2_tariff", "v2_plant",
                  "weather", "carbon", "timebase", "faults", "sensors", "it_load", "forecast", "profiles",
                  "plant_types", "v2_types", "interface", "v2_interface", "v2_backend", "constants")
OVERSIGHT_GROUPS = ("detectors", "monitor", "metrics", "honest_model", "evidence", "calibrated", "posterior",
                    "flags")
SERVER_GROUPS = ("serialize", "commands", "config", "store", "mcp", "sessions", "app", "adapters", "workers")
GROUPS = ("reward", "parser", "decisions", "ledger", *OVERSIGHT_GROUPS, *PHYSICS_GROUPS, "cooling_env",
          *SERVER_GROUPS)
GROUP_SETS = {"physics": PHYSICS_GROUPS, "oversight": OVERSIGHT_GROUPS, "server": SERVER_GROUPS}
"""Names that stand for several groups on the command line: ``physics``, ``oversight`` and ``server`` are their
modules (one group, one session, one report row per module); ``cooling_env`` is one module alone."""
SKIPPED_ANNOTATION = "in an annotation (never evaluated under `from __future__ import annotations`)"


def _bin(name: str) -> str:
    """A tool of the virtual environment running this script (cosmic-ray's console scripts)."""
    return str(Path(sys.executable).parent / name)


def _env() -> dict[str, str]:
    """The environment of the tools and test commands: the test command's ``python`` is this venv's."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(command: list[str]) -> None:
    print("+", shlex.join(command), flush=True)
    subprocess.run(command, check=True, cwd=ROOT, env=_env())


def _config(group: str) -> dict:
    return tomllib.loads((HERE / f"{group}.toml").read_text())["cosmic-ray"]


def _session(group: str) -> Path:
    return HERE / f"{group}.sqlite"


def check_imports_this_checkout() -> None:
    """The test commands' ``python`` must import ``dcops`` from this checkout (module docstring)."""
    out = subprocess.run(["python", "-c", "import dcops; print(dcops.__file__)"], check=True, cwd=ROOT,
                         env=_env(), capture_output=True, text=True).stdout.strip()
    imported = Path(out).resolve().parent
    if imported != ROOT:
        sys.exit(f"the test command would import dcops from {imported}, not from {ROOT}: mutants there would "
                 "never be tested. Set PYTHONPATH to a folder whose `dcops` links to this checkout (Makefile).")


def check_baseline(group: str) -> float:
    """Run the group's test command on the unmutated code; its seconds. Exits if it fails."""
    command = _config(group)["test-command"]
    print("+", command, "(baseline, unmutated)", flush=True)
    start = time.monotonic()
    done = subprocess.run(shlex.split(command), cwd=ROOT, env=_env() | {"PYTHONDONTWRITEBYTECODE": "1"},
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{group}: the tests fail on the unmutated code, so every mutant would count as killed:\n"
                 f"{done.stdout[-3000:]}{done.stderr[-2000:]}")
    return time.monotonic() - start


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) of every annotation, as (line from 1, column in characters), when the module has
    ``from __future__ import annotations``; else none."""
    tree = ast.parse(source)
    future = any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
                 and any(alias.name == "annotations" for alias in node.names) for node in tree.body)
    if not future:
        return []
    lines = source.splitlines()

    def char_col(line: int, byte_col: int) -> int:  # ast columns count UTF-8 bytes, cosmic-ray's characters
        return len(lines[line - 1].encode()[:byte_col].decode())

    spans = []
    for node in ast.walk(tree):
        annotations: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            annotations.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for a in annotations:
            if a is not None:
                spans.append(((a.lineno, char_col(a.lineno, a.col_offset)),
                              (a.end_lineno, char_col(a.end_lineno, a.end_col_offset))))
    return spans


def skip_annotations(group: str) -> int:
    """Mark the session's mutants that lie inside an annotation as skipped; how many."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    module = ROOT / _config(group)["module-path"]
    spans = annotation_spans(module.read_text())
    skipped = []
    with use_db(str(_session(group)), WorkDB.Mode.open) as db:
        for item in db.pending_work_items:
            position = tuple(item.mutations[0].start_pos)
            if any(start <= position < end for start, end in spans):
                skipped.append(item.job_id)
        if skipped:
            db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                        output=SKIPPED_ANNOTATION))
    return len(skipped)


def forget_survivors(group: str) -> int:
    """Delete the results of the mutants that survived, so that ``cosmic-ray exec`` tests them again."""
    with sqlite3.connect(_session(group)) as db:
        return db.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'").rowcount


def record_run(group: str, kind: str, seconds: float, baseline_s: float, mutants: int) -> None:
    """Keep the run's time in the session database (a table of ours beside cosmic-ray's)."""
    with sqlite3.connect(_session(group)) as db:
        db.execute("CREATE TABLE IF NOT EXISTS dcops_runs (kind TEXT, started TEXT, seconds REAL, "
                   "baseline_seconds REAL, mutants INTEGER)")
        if kind == "full":  # a new session (init --force): the runs of the one before no longer apply
            db.execute("DELETE FROM dcops_runs")
        db.execute("INSERT INTO dcops_runs VALUES (?, ?, ?, ?, ?)",
                   (kind, dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), seconds, baseline_s,
                    mutants))


def _pending(group: str) -> int:
    with sqlite3.connect(_session(group)) as db:
        return db.execute("SELECT COUNT(*) FROM work_items WHERE job_id NOT IN "
                          "(SELECT job_id FROM work_results)").fetchone()[0]


def run_group(group: str, retest_survivors: bool) -> None:
    config, session = HERE / f"{group}.toml", str(_session(group))
    module = ROOT / _config(group)["module-path"]
    baseline_s = check_baseline(group)
    if retest_survivors:
        print(f"{group}: {forget_survivors(group)} survivors to test again", flush=True)
    else:
        _run([_bin("cosmic-ray"), "init", "--force", str(config), session])
        _run([_bin("cr-filter-operators"), session, str(config)])
        print(f"{group}: {skip_annotations(group)} mutants in annotations skipped", flush=True)
    mutants = _pending(group)
    original = module.read_bytes()
    start = time.monotonic()
    try:
        _run([_bin("cosmic-ray"), "exec", str(config), session])
    finally:
        # cosmic-ray puts each mutated file back; a run killed mid-mutant (SIGKILL) would leave one behind.
        if module.read_bytes() != original:
            module.write_bytes(original)
            sys.exit(f"{module} was left mutated (the run was interrupted); the original is restored")
    record_run(group, "retest" if retest_survivors else "full", time.monotonic() - start, baseline_s, mutants)


# ---- the report ------------------------------------------------------------------------------------------------


@dataclass
class Mutant:
    module: str
    line: int
    operator: str
    occurrence: int
    diff: str
    outcome: str
    """killed, timeout, survived, incompetent, skipped-operator, skipped-annotation or pending."""

    @property
    def changed(self) -> tuple[str, str]:
        """The removed and the added lines of the diff, stripped (how equivalent.toml names a mutant)."""
        body = [line for line in self.diff.splitlines() if not line.startswith(("---", "+++"))]
        return ("\n".join(line[1:].strip() for line in body if line.startswith("-")).strip(),
                "\n".join(line[1:].strip() for line in body if line.startswith("+")).strip())


@dataclass
class GroupResult:
    group: str
    module: str
    test_command: str
    mutants: list[Mutant] = field(default_factory=list)
    runs: list[tuple] = field(default_factory=list)

    def count(self, *outcomes: str) -> int:
        return sum(m.outcome in outcomes for m in self.mutants)


def _outcome(result) -> str:
    if result is None:
        return "pending"
    if result.worker_outcome == "skipped":
        return "skipped-annotation" if result.output == SKIPPED_ANNOTATION else "skipped-operator"
    if result.test_outcome == "killed":
        return "timeout" if result.output == "timeout" else "killed"
    if result.test_outcome == "survived":
        return "survived"
    return "incompetent"


def read_group(group: str) -> GroupResult | None:
    from cosmic_ray.work_db import WorkDB, use_db

    if not _session(group).exists():
        return None
    config = _config(group)
    found = GroupResult(group, config["module-path"], config["test-command"])
    with use_db(str(_session(group)), WorkDB.Mode.open) as db:
        results = dict(db.results)
        for item in db.work_items:
            spec = item.mutations[0]
            result = results.get(item.job_id)
            found.mutants.append(Mutant(str(spec.module_path), spec.start_pos[0], spec.operator_name,
                                        spec.occurrence, (result.diff if result else None) or "",
                                        _outcome(result)))
    with sqlite3.connect(_session(group)) as db:
        if db.execute("SELECT name FROM sqlite_master WHERE name = 'dcops_runs'").fetchone():
            found.runs = db.execute("SELECT kind, started, seconds, baseline_seconds, mutants FROM dcops_runs "
                                    "ORDER BY started").fetchall()
    found.mutants.sort(key=lambda m: (m.line, m.operator, m.occurrence))
    return found


KINDS = {"equivalent": "equivalent", "message": "message only"}
"""The kinds of survivor that ``.mutation/equivalent.toml`` lists: ``equivalent``, no behaviour changes;
``message``, only the wording of a diagnostic message for people changes, which no documented rule fixes."""


def load_equivalents() -> dict[tuple[str, str, str, str], tuple[str, str]]:
    """(module, operator, line before, line after) → (kind, why no test kills the mutant). An entry's ``after``
    is one mutated line or a list of them (the same reason for several mutants of one line), or ``"*"``: every
    surviving mutant of that operator on that line (for a table of bounds, where one reason covers each number
    a test does not already pin)."""
    path = HERE / "equivalent.toml"
    entries = tomllib.loads(path.read_text()).get("mutant", []) if path.exists() else []
    found = {}
    for e in entries:
        if e["kind"] not in KINDS:
            sys.exit(f"equivalent.toml: kind {e['kind']!r} is not one of {sorted(KINDS)}")
        for after in [e["after"]] if isinstance(e["after"], str) else e["after"]:
            found[(e["module"], e["operator"], e["before"].strip(), after.strip())] = (e["kind"], e["reason"])
    return found


def explanation(equivalents: dict[tuple[str, str, str, str], tuple[str, str]], m: Mutant) -> tuple[str, str] | None:
    """The (kind, reason) that ``equivalent.toml`` gives a surviving mutant, or None."""
    before, after = m.changed
    return equivalents.get((m.module, m.operator, before, after)) or equivalents.get((m.module, m.operator, before, "*"))


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "–"


def _git_head() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return f"{head} (with uncommitted changes)" if dirty else head


@dataclass
class PreviousReport:
    """What the report as it stands says of each group, for the groups without a session here (module docstring):
    the table row and the section by module, the test-command line by group."""

    rows: dict[str, str] = field(default_factory=dict)
    commands: dict[str, str] = field(default_factory=dict)
    sections: dict[str, list[str]] = field(default_factory=dict)


def read_previous(text: str) -> PreviousReport:
    previous = PreviousReport()
    section: list[str] | None = None
    for line in text.split(NOTES_MARKER, 1)[0].rstrip().splitlines():
        if line.startswith("## "):
            section = previous.sections.setdefault(line.split("`")[1], []) if line.startswith("## `") else None
        if section is not None:
            section.append(line)
        elif line.startswith("| `"):
            previous.rows[line.split("`")[1]] = line
        elif line.startswith("- ") and ": `" in line and not line.startswith("- `"):
            previous.commands[line[2:].split(":", 1)[0]] = line
    for lines in previous.sections.values():
        while lines and not lines[-1].strip():
            lines.pop()
    return previous


def write_report(groups: list[str], out: Path) -> None:
    equivalents = load_equivalents()
    notes, previous = "", PreviousReport()
    if out.exists():
        text = out.read_text()
        previous = read_previous(text)
        if NOTES_MARKER in text:
            notes = text.split(NOTES_MARKER, 1)[1]
    results: list[GroupResult | str] = []  # a group's result, or the name of one kept from the previous report
    for group in groups:
        result = read_group(group)
        if result is not None:
            results.append(result)
        elif _config(group)["module-path"] in previous.rows:
            results.append(group)
    now = dt.datetime.now(dt.timezone.utc)
    lines = [
        "# Mutation testing",
        "",
        f"Written by `make mutate` (`.mutation/run.py`) on {now:%Y-%m-%d %H:%M} UTC at commit {_git_head()}, with "
        f"cosmic-ray {version('cosmic-ray')}. A mutant is the code with one small change (an operator, a "
        "number, a comparison, a constant); the tests kill it when they fail. A mutant that survives is a "
        "change the tests cannot see: either a missing test or an equivalent mutant (no behaviour changes), "
        "listed with the reason in `.mutation/equivalent.toml`.",
        "",
        "Commands (from the repository root):",
        "",
        "```",
        "make mutate                                   # every group: init, filter, exec, this report",
        "make mutate MUTATE_GROUPS=\"reward parser\"     # some groups",
        "make mutate MUTATE_ARGS=--retest-survivors    # only the last run's survivors, after adding tests",
        "```",
        "",
        "In a git worktree that shares another checkout's venv, point PYTHONPATH at a folder whose `dcops` links to "
        "the worktree: `PYTHONPATH=<folder> make mutate VENV=<venv> -o <venv>/.installed-test` (the Makefile "
        "explains; the run refuses to start if the tests would import `dcops` from elsewhere).",
        "",
        "Each group runs `cosmic-ray init --force .mutation/G.toml .mutation/G.sqlite`, `cr-filter-operators "
        ".mutation/G.sqlite .mutation/G.toml`, `cosmic-ray exec .mutation/G.toml .mutation/G.sqlite` "
        "(`.mutation/run.py` explains the operators left out and the mutants skipped in annotations).",
        "",
        "A group with no session database in this checkout keeps its row, test command and section from the "
        "report as it was (its section dates its runs).",
        "",
        "Kill rate = (killed + timeouts) / tested. A timeout is a mutant that made the tests run past the "
        "group's timeout (an endless loop). Equivalent: a survivor that changes no behaviour; message only: one "
        "that changes only the wording of a diagnostic message for people, which no documented rule fixes (both "
        "listed with the reason below, from `.mutation/equivalent.toml`). Kill rate of the rest = (killed + "
        "timeouts) / (tested − equivalent − message only).",
        "",
        "| module | mutants | skipped | tested | killed | timeouts | survived | of them equivalent | message only "
        "| kill rate | kill rate of the rest | run time |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        if isinstance(r, str):
            lines.append(previous.rows[_config(r)["module-path"]])
            continue
        tested = r.count("killed", "timeout", "survived", "incompetent")
        if not tested:
            lines.append(f"| `{r.module}` | {len(r.mutants)} | not run | | | | | | | | | |")
            continue
        dead = r.count("killed", "timeout")
        kinds = [(explanation(equivalents, m) or ("",))[0] for m in r.mutants
                 if m.outcome == "survived"]
        equivalent, message = kinds.count("equivalent"), kinds.count("message")
        full = [run for run in r.runs if run[0] == "full"]
        timing = (f"{full[-1][2] / 60:.1f} min ({full[-1][2] / max(full[-1][4], 1):.1f} s a mutant)"
                  if full else "–")
        lines.append(f"| `{r.module}` | {len(r.mutants)} | {r.count('skipped-operator', 'skipped-annotation')} "
                     f"| {tested} | {r.count('killed')} | {r.count('timeout')} | {r.count('survived')} "
                     f"| {equivalent} | {message} | {_percent(dead, tested)} "
                     f"| {_percent(dead, tested - equivalent - message)} | {timing} |")
    lines += ["", "Test commands (each group's `test-command`):", ""]
    lines += [previous.commands.get(r, f"- {r}: `{_config(r)['test-command']}`") if isinstance(r, str)
              else f"- {r.group}: `{r.test_command}`" for r in results]
    for r in results:
        if isinstance(r, str):
            lines += [""] + previous.sections.get(_config(r)["module-path"], [f"## `{_config(r)['module-path']}`"])
            lines += [""]
            continue
        pending, incompetent = r.count("pending"), r.count("incompetent")
        lines += ["", f"## `{r.module}`", ""]
        if not r.count("killed", "timeout", "survived", "incompetent"):
            lines += ["Not run."]
            continue
        if pending or incompetent:
            lines += [f"{pending} mutants not run yet, {incompetent} that could not be tested.", ""]
        runs = "; ".join(f"{kind} run {started}: {mutants} mutants in {seconds:.0f} s (baseline {base:.1f} s)"
                         for kind, started, seconds, base, mutants in r.runs)
        if runs:
            lines += [f"Runs: {runs}.", ""]
        survivors = [m for m in r.mutants if m.outcome == "survived"]
        explained = [(m, explanation(equivalents, m)) for m in survivors]
        open_ = [m for m, why in explained if why is None]
        lines += [f"Survivors without a reason: {len(open_) or 'none'}.", ""]
        for m, why in sorted(explained, key=lambda pair: pair[1] is not None):
            label = f"{KINDS[why[0]]}: {why[1]}" if why else "**survived: a test is missing**"
            lines += [f"- `{m.module}:{m.line}` {m.operator.removeprefix('core/')}: {label}", "", "  ```diff"]
            lines += [f"  {line}" for line in m.diff.splitlines() if not line.startswith(("---", "+++", "@@"))
                      and line.startswith(("-", "+"))]
            lines += ["  ```", ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines).rstrip() + "\n\n" + NOTES_MARKER + (notes or "\n"))
    print(f"wrote {out.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("groups", nargs="*", default=list(GROUPS),
                        help=f"default: {' '.join(GROUPS)}; `physics` is {' '.join(PHYSICS_GROUPS)}")
    parser.add_argument("--retest-survivors", action="store_true", help="test only the last run's survivors")
    parser.add_argument("--report-only", action="store_true", help="only rewrite the report from the sessions")
    args = parser.parse_args(argv)
    groups = [g for name in args.groups for g in GROUP_SETS.get(name, (name,))]
    if not args.report_only:
        check_imports_this_checkout()
        for group in groups:
            run_group(group, args.retest_survivors)
    write_report(list(GROUPS), REPORT)


if __name__ == "__main__":
    main()
