"""The NetworkX backend, through NetworkX's own dispatch (``backend="morphgpu"``).

NetworkX reads its backends' entry points once, when it is imported. Installed (CI runs
``pip install -e ".[test]"``), morphgpu's are there and the tests below run in this
process. From a checkout that is not installed, ``test_suite_through_entry_points``
writes the entry points of ``pyproject.toml`` into a throwaway ``.dist-info`` folder and
runs this file again in a fresh interpreter that sees it; either way the entry points
NetworkX loads are the ones in ``pyproject.toml``.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import morphgpu.bfs
from morphgpu import networkx_backend

REPO = Path(__file__).resolve().parents[1]
REGISTERED = "morphgpu" in nx.utils.backends.backends
# NetworkX notes once per call that a converted graph came from its cache: expected here.
pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")
in_process = pytest.mark.skipif(
    not REGISTERED,
    reason="morphgpu's NetworkX entry points are not installed in this interpreter "
    "(test_suite_through_entry_points runs these tests in one that has them)",
)


def _entry_points_env(tmp_path: Path) -> dict[str, str]:
    """An environment whose Python finds morphgpu's NetworkX entry points."""
    env = dict(os.environ)
    if REGISTERED:
        return env
    try:
        import tomllib  # noqa: PLC0415
    except ImportError:  # Python 3.10
        pytest.skip("needs tomllib (Python 3.11+) to read pyproject.toml's entry points")
    with open(REPO / "pyproject.toml", "rb") as fh:
        groups = tomllib.load(fh)["project"]["entry-points"]
    info = tmp_path / "morphgpu_entry_points-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: morphgpu-entry-points\n"
                                   "Version: 0\n")
    text = "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
                   for group, eps in groups.items())
    (info / "entry_points.txt").write_text(text)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(tmp_path), str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def test_pyproject_names_the_backend():
    text = (REPO / "pyproject.toml").read_text()
    assert '[project.entry-points."networkx.backends"]' in text
    assert 'morphgpu = "morphgpu.networkx_backend:BackendInterface"' in text
    assert '[project.entry-points."networkx.backend_info"]' in text
    info = networkx_backend.get_info()
    assert info["backend_name"] == "morphgpu"
    assert set(info["functions"]) == set(networkx_backend.FUNCTIONS)
    for name in networkx_backend.FUNCTIONS:
        assert hasattr(nx, name), name  # every name is a NetworkX function
        assert callable(getattr(networkx_backend.BackendInterface, name))


def test_fresh_interpreter_dispatches_to_morphgpu(tmp_path):
    script = (
        "import networkx as nx\n"
        "assert 'morphgpu' in nx.utils.backends.backends, nx.utils.backends.backends\n"
        "assert 'morphgpu' in nx.bfs_edges.backends\n"
        "G = nx.grid_2d_graph(5, 4)\n"
        "got = list(nx.bfs_edges(G, (0, 0), backend='morphgpu'))\n"
        "assert got == list(nx.bfs_edges(G, (0, 0))), got\n"
        "print('dispatched', len(got))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], env=_entry_points_env(tmp_path),
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "dispatched 19" in proc.stdout


def test_suite_through_entry_points(tmp_path):
    if REGISTERED:
        pytest.skip("the entry points are installed: the tests ran in this process")
    env = _entry_points_env(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         str(Path(__file__))],
        env=env, capture_output=True, text=True, cwd=REPO, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout


# --------------------------------------------------------------------------- inputs
def _graphs() -> list[tuple[str, nx.Graph, object]]:
    rng = random.Random(7)
    gnp = nx.gnp_random_graph(300, 0.02, seed=3)
    digraph = nx.gnp_random_graph(200, 0.03, seed=4, directed=True)
    shuffled = nx.Graph()
    nodes = list(range(120))
    rng.shuffle(nodes)
    shuffled.add_nodes_from(nodes)  # node order differs from the labels
    shuffled.add_edges_from(nx.gnm_random_graph(120, 300, seed=5).edges())
    labelled = nx.relabel_nodes(nx.karate_club_graph(), {i: f"v{i}" for i in range(34)})
    disconnected = nx.disjoint_union(nx.path_graph(10), nx.cycle_graph(7))
    multi = nx.MultiGraph([(0, 1), (0, 1), (1, 2), (2, 0), (2, 3)])
    return [
        ("grid", nx.grid_2d_graph(12, 9), (3, 4)),
        ("gnp", gnp, 0),
        ("digraph", digraph, 5),
        ("shuffled", shuffled, nodes[0]),
        ("karate-strings", labelled, "v0"),
        ("disconnected", disconnected, 2),
        ("multigraph", multi, 1),
    ]


GRAPHS = _graphs()
IDS = [name for name, _, _ in GRAPHS]


@pytest.fixture
def on_device(device):
    """Run the backend on ``device`` (NetworkX's backend config), and restore it after."""
    cfg = nx.config.backends.morphgpu
    before = cfg.device
    cfg.device = device
    yield device
    cfg.device = before


@pytest.fixture
def calls(monkeypatch):
    """Counts the calls of morphgpu.bfs.bfs, to show the backend really ran."""
    seen = []
    real = morphgpu.bfs.bfs

    def counting(*args, **kwargs):
        seen.append(kwargs.get("device"))
        return real(*args, **kwargs)

    monkeypatch.setattr(morphgpu.bfs, "bfs", counting)
    return seen


# --------------------------------------------------------------------------- BFS family
@in_process
@pytest.mark.parametrize(("name", "G", "source"), GRAPHS, ids=IDS)
def test_bfs_edges_equal_networkx_in_order(name, G, source, on_device, calls):
    assert list(nx.bfs_edges(G, source, backend="morphgpu")) == list(nx.bfs_edges(G, source))
    assert calls == [on_device]
    for limit in (0, 1, 3):
        assert (list(nx.bfs_edges(G, source, depth_limit=limit, backend="morphgpu"))
                == list(nx.bfs_edges(G, source, depth_limit=limit)))


@in_process
@pytest.mark.parametrize(("name", "G", "source"), GRAPHS, ids=IDS)
def test_bfs_family_equal_networkx(name, G, source, on_device):
    mg = {"backend": "morphgpu"}
    assert (list(nx.bfs_predecessors(G, source, **mg))
            == list(nx.bfs_predecessors(G, source)))
    assert list(nx.bfs_successors(G, source, **mg)) == list(nx.bfs_successors(G, source))
    assert (list(nx.bfs_successors(G, source, depth_limit=2, **mg))
            == list(nx.bfs_successors(G, source, depth_limit=2)))
    ours, theirs = nx.bfs_tree(G, source, **mg), nx.bfs_tree(G, source)
    assert list(ours.nodes) == list(theirs.nodes)
    assert list(ours.edges) == list(theirs.edges)
    ours = nx.single_source_shortest_path_length(G, source, **mg)
    theirs = nx.single_source_shortest_path_length(G, source)
    assert list(ours.items()) == list(theirs.items())
    assert (nx.single_source_shortest_path_length(G, source, cutoff=2, **mg)
            == nx.single_source_shortest_path_length(G, source, cutoff=2))
    ours = nx.single_target_shortest_path_length(G, source, **mg)
    theirs = nx.single_target_shortest_path_length(G, source)
    assert list(ours.items()) == list(theirs.items())
    assert (nx.single_target_shortest_path_length(G, source, cutoff=1, **mg)
            == nx.single_target_shortest_path_length(G, source, cutoff=1))
    assert (list(nx.generic_bfs_edges(G, source, depth_limit=2, **mg))
            == list(nx.generic_bfs_edges(G, source, depth_limit=2)))
    assert list(nx.bfs_layers(G, source, **mg)) == list(nx.bfs_layers(G, source))
    for d in (0, 1, 2, 50):
        assert (nx.descendants_at_distance(G, source, d, **mg)
                == nx.descendants_at_distance(G, source, d))


@in_process
def test_reverse_and_several_sources(on_device):
    G = nx.gnp_random_graph(150, 0.03, seed=11, directed=True)
    assert (list(nx.bfs_edges(G, 3, reverse=True, backend="morphgpu"))
            == list(nx.bfs_edges(G, 3, reverse=True)))
    H = nx.grid_2d_graph(15, 10)
    sources = [(0, 0), (14, 9), (7, 5)]
    assert list(nx.bfs_layers(H, sources, backend="morphgpu")) == list(nx.bfs_layers(H, sources))
    assert list(nx.bfs_layers(H, [], backend="morphgpu")) == list(nx.bfs_layers(H, []))


@in_process
def test_missing_nodes_raise_as_networkx_does():
    G = nx.path_graph(4)
    with pytest.raises(nx.NetworkXError):
        list(nx.bfs_edges(G, 99, backend="morphgpu"))
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_shortest_path_length(G, 99, backend="morphgpu")
    with pytest.raises(nx.NetworkXError):
        list(nx.bfs_layers(G, [0, 99], backend="morphgpu"))
    with pytest.raises(nx.NetworkXError):
        nx.descendants_at_distance(G, 99, 1, backend="morphgpu")


@in_process
def test_sort_neighbors_is_declined_with_a_reason():
    G = nx.path_graph(4)
    assert "sort_neighbors" in networkx_backend.BackendInterface.can_run(
        "bfs_edges", (G, 0), {"sort_neighbors": sorted})
    with pytest.raises(NotImplementedError):
        list(nx.bfs_edges(G, 0, sort_neighbors=sorted, backend="morphgpu"))
    with pytest.raises(NotImplementedError):
        list(nx.generic_bfs_edges(G, 0, neighbors=G.neighbors, backend="morphgpu"))


# --------------------------------------------------------------------------- spanning trees
def _weighted(seed: int, n: int = 80, m: int = 300, ties: bool = True) -> nx.Graph:
    rng = random.Random(seed)
    G = nx.gnm_random_graph(n, m, seed=seed)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = rng.randint(1, 5) if ties else rng.random()
        G.edges[u, v]["label"] = f"{u}-{v}"
    G.add_node(n, color="red")  # an isolated node with an attribute
    G.graph["name"] = "weighted"
    return G


@in_process
@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_minimum_spanning_edges_equal_kruskal(seed, ties, on_device):
    G = _weighted(seed, ties=ties)
    assert (list(nx.minimum_spanning_edges(G, backend="morphgpu"))
            == list(nx.minimum_spanning_edges(G)))
    assert (list(nx.minimum_spanning_edges(G, data=False, backend="morphgpu"))
            == list(nx.minimum_spanning_edges(G, data=False)))
    assert (list(nx.maximum_spanning_edges(G, backend="morphgpu"))
            == list(nx.maximum_spanning_edges(G)))


@in_process
@pytest.mark.parametrize("function", ["minimum_spanning_tree", "maximum_spanning_tree"])
def test_spanning_tree_graph_equals_networkx(function, on_device):
    G = _weighted(4)
    ours = getattr(nx, function)(G, backend="morphgpu")
    theirs = getattr(nx, function)(G)
    assert type(ours) is type(theirs)
    assert ours.graph == theirs.graph
    assert list(ours.nodes(data=True)) == list(theirs.nodes(data=True))
    assert list(ours.edges(data=True)) == list(theirs.edges(data=True))


@in_process
def test_spanning_tree_weights_rules(on_device):
    G = nx.Graph()
    G.add_edge("a", "b", cost=2.5)
    G.add_edge("b", "c")  # no cost: weight 1, as NetworkX says
    G.add_edge("a", "c", cost=0.5)
    G.add_edge("c", "d", cost=-3)
    G.add_edge("d", "d", cost=-10)  # a self-loop is never in the tree
    assert (sorted(nx.minimum_spanning_tree(G, weight="cost", backend="morphgpu").edges)
            == sorted(nx.minimum_spanning_tree(G, weight="cost").edges))
    G.add_edge("a", "d", cost=math.nan)
    with pytest.raises(ValueError, match="NaN"):
        list(nx.minimum_spanning_edges(G, weight="cost", backend="morphgpu"))
    assert (list(nx.minimum_spanning_edges(G, weight="cost", ignore_nan=True,
                                           backend="morphgpu"))
            == list(nx.minimum_spanning_edges(G, weight="cost", ignore_nan=True)))
    with pytest.raises(ValueError, match="not a valid choice"):
        nx.minimum_spanning_edges(G, algorithm="nope", backend="morphgpu")


@in_process
def test_spanning_tree_declines_multigraphs():
    M = nx.MultiGraph([(0, 1), (0, 1)])
    assert "multigraph" in networkx_backend.BackendInterface.can_run(
        "minimum_spanning_tree", (M,), {})
