"""The package's layers import only downward, and no two files import each other, at any depth.

Layers, bottom to top (ARCHITECTURE.md section 1): ``physics`` (and ``intervals``, the statistics helper) →
``cluster`` → ``agents`` and ``oversight`` →
the environments at the root (``env``, ``datacenter_ops_v1``, ``cooling_env``, ``cooling_env_v1``, ``registry``, ``vector_env``,
``models``, ``command``, ``boundary``) → ``server``, ``training``, ``evaluation``, ``bench`` and the wire-side root modules (``client``, ``runner``, ``remote_env``)
→ ``cli``. An import is read wherever it stands: at module level, under ``TYPE_CHECKING`` or inside a
function, since a function-level import only hides a dependency, it does not remove it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

import dcops

ROOT = Path(dcops.__file__).resolve().parent
_NOT_PACKAGE = {"tests", "examples", "reports", "build", "runs", ".venv", ".git"}

LAYERS: dict[str, int] = {
    "physics": 0, "intervals": 0,
    "cluster": 1,
    "agents": 2, "oversight": 2,
    "": 3, "env": 3, "datacenter_ops_v1": 3, "cooling_env": 3, "cooling_env_v1": 3, "registry": 3, "vector_env": 3, "models": 3, "command": 3, "boundary": 3,
    "server": 4, "training": 4, "evaluation": 4, "bench": 4, "client": 4, "runner": 4, "remote_env": 4,
    "cli": 5,
}
DOMAIN = ("physics", "cluster", "agents", "oversight")


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (``dcops`` for the root ``__init__``)."""
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[0] in _NOT_PACKAGE or any(p.startswith(".") for p in parts):
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(("dcops", *parts))] = path
    return modules


MODULES = _modules()


def _resolve(name: str) -> str:
    """The module a dotted import name lands in (``dcops.a.b.Name`` → ``dcops.a.b``)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _imports(module: str, path: Path) -> set[str]:
    """The dcops modules ``module`` imports, anywhere in its body."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(_resolve(alias.name) for alias in node.names if alias.name.split(".")[0] == "dcops")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] == "dcops":
                found.update(_resolve(f"{source}.{alias.name}") for alias in node.names)
    found.discard(module)
    return found


GRAPH = nx.DiGraph([(m, target) for m, path in MODULES.items() for target in _imports(m, path)])


def _top(module: str) -> str:
    """The first name under ``dcops`` (``""`` for the root package)."""
    return module.split(".")[1] if "." in module else ""


def _layer(module: str) -> int:
    top = _top(module)
    assert top in LAYERS, f"{module}: no layer declared for {top!r} (add it to LAYERS)"
    return LAYERS[top]


def test_the_graph_sees_the_package():
    # A broken walk would make the tests below pass vacuously.
    assert {"dcops.physics.plant", "dcops.cluster.episode", "dcops.env", "dcops.cli"} <= set(MODULES)
    assert GRAPH.number_of_edges() > 300
    assert GRAPH.has_edge("dcops.cluster.episode", "dcops.physics.plant")


def test_every_import_goes_down_or_stays_in_its_layer():
    upward = sorted(f"{a} -> {b}" for a, b in GRAPH.edges if _layer(b) > _layer(a))
    assert not upward, "imports that reach up a layer:\n" + "\n".join(upward)


@pytest.mark.parametrize("above", ["dcops.cli", "dcops.training", "dcops.evaluation", "dcops.server"])
def test_the_domain_layers_never_import_commands_training_evaluation_or_the_server(above):
    reached = sorted(f"{a} -> {b}" for a, b in GRAPH.edges
                     if _top(a) in DOMAIN and (b == above or b.startswith(above + ".")))
    assert not reached, "\n".join(reached)


def test_no_two_modules_import_each_other_at_any_depth():
    circles = [sorted(c) for c in nx.strongly_connected_components(GRAPH) if len(c) > 1]
    assert not circles, f"import circles: {circles}"


def test_every_command_module_of_the_cli_is_above_the_domain():
    from dcops.cli import COMMAND_MODULES

    for name in COMMAND_MODULES:
        assert name in MODULES, name
        assert _top(name) not in DOMAIN, f"{name} declares commands inside a domain package"
