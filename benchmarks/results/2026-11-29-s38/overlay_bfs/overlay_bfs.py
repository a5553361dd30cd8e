"""Session 38 prototype: BFS over a tile overlay (overlay_bfs.cu) against bfs() with
``tiled``, ``persistent`` and ``auto`` on deep graphs, one process, the same roots; the
labels checked against bfs()'s on every root. Per graph: the overlay's preparation (the
tiled copy's build is bfs()'s own, reported beside it), its size (boundary vertices, D
entries), then per arm event time per search (distances only) and us per level; for the
overlay, rounds and tile visits per search.
Usage: python3 overlay_bfs.py [--quick]"""
import sys
import time
from pathlib import Path

sys.path.insert(0, "benchmarks")
import numpy as np  # noqa: E402
import road_like  # noqa: E402
from harness import event_seconds  # noqa: E402

from morphgpu import backend, barrier, generators  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402
from morphgpu.bfs.gpu import tiled  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

SOURCE = Path(__file__).resolve().parent / "overlay_bfs.cu"
SHIFTS = (10,)
# (threads per block of overlay_rounds, its delta: 0 = plain Bellman-Ford rounds)
ARMS = ((256, 0), (256, 8), (512, 8), (1024, 0), (1024, 8), (1024, 16))
BLOCK = 256  # overlay_bfs.cu's BLOCK: the rounds and the rows
FINAL_BLOCK = 256  # the final labels: more tiles resident at once (their levels wait)
CHUNK = 8192
INF = 0x3FFFFFFF
GRAPHS = {
    "delaunay 16k": lambda: road_like.delaunay(1 << 14, device="gpu"),
    "grid-del 256^2": lambda: road_like.grid_with_deletions(256, 256, device="gpu"),
    "delaunay 1M": lambda: road_like.delaunay(1_000_000, device="gpu"),
    "grid-del 1000^2": lambda: road_like.grid_with_deletions(1000, 1000, device="gpu"),
    "delaunay 4M": lambda: road_like.delaunay(4_000_000, device="gpu"),
    "grid 4000^2": lambda: generators.grid2d(4000, 4000, device="gpu"),
}


def main() -> None:
    cp = backend.cupy_module()
    quick = "--quick" in sys.argv
    print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
    modules = {}
    for shift in SHIFTS:
        code = f"#define T_SHIFT {shift}\n" + SOURCE.read_text()
        modules[shift] = (cp.RawModule(code=code, options=("-std=c++17",)),
                          {b: cp.RawModule(code=f"#define BLOCK {b}\n" + code,
                                           options=("-std=c++17",),
                                           enable_cooperative_groups=True)
                           for b in sorted({b for b, _ in ARMS})})
    names = list(GRAPHS)[:2] if quick else list(GRAPHS)[2:]
    for label in names:
        run_graph(cp, modules, label, GRAPHS[label](), quick)
        cp.get_default_memory_pool().free_all_blocks()


class Overlay:
    def __init__(self, cp, plain, coop, g, shift):
        SHIFT = shift
        T = 1 << shift
        self.shift = shift
        ws = workspace(g)
        t0 = time.perf_counter()
        self.copy = tiled.tile_copy(ws, SHIFT)
        cp.cuda.Device().synchronize()
        self.copy_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        tg = self.copy.graph
        n_pad = tg.n_vertices
        indptr = tg.indptr.astype(cp.int64)
        indices = tg.indices.astype(cp.int32)
        src = cp.repeat(cp.arange(n_pad, dtype=cp.int32), cp.diff(indptr).astype(cp.int64))
        cut = (src >> SHIFT) != (indices >> SHIFT)
        bnd = cp.zeros(n_pad, dtype=cp.bool_)
        bnd[src[cut]] = True
        bnd[indices[cut]] = True
        bverts = cp.flatnonzero(bnd).astype(cp.int32)
        n_ov = int(bverts.size)
        ov_of = cp.full(n_pad, -1, dtype=cp.int32)
        ov_of[bverts] = cp.arange(n_ov, dtype=cp.int32)
        n_tiles = -(-n_pad // T)
        bstart = cp.searchsorted(bverts, cp.arange(n_tiles + 1, dtype=cp.int64) * T)
        bstart = bstart.astype(cp.int32)
        nb = cp.diff(bstart).astype(cp.int64)
        stride = (nb + 7) // 8 * 8  # D rows of 16 bytes' multiples
        dofs = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(nb * stride)])
        total = int(dofs[-1])
        D = cp.empty(max(total, 1), dtype=cp.uint16)
        cu = ov_of[src[cut]]
        cw = ov_of[indices[cut]]
        order = cp.argsort(cu)
        cut_dst = cw[order].astype(cp.int32)
        cut_ptr = cp.searchsorted(cu[order], cp.arange(n_ov + 1, dtype=cp.int32)).astype(cp.int64)
        ov_tile = (bverts >> SHIFT).astype(cp.int32)
        cut_tile = ov_tile[cut_dst]
        inside = ~cut
        lptr = cp.searchsorted(src[inside], cp.arange(n_pad + 1, dtype=cp.int32))
        lptr = lptr.astype(cp.int32)
        lptr = cp.concatenate([lptr, cp.full(n_tiles * T - n_pad, lptr[-1], cp.int32)])
        lidx = (indices[inside] & (T - 1)).astype(cp.uint16)
        tile_edges = lptr[T::T] - lptr[:-1:T]
        self.bfs_smem = 2 * max(1, int(tile_edges.max()))
        self.local = (lptr, lidx)
        rows = plain.get_function("overlay_rows")
        self.source_k = plain.get_function("source_tile")
        self.final_k = plain.get_function("final_labels")
        for k in (rows, self.source_k, self.final_k):
            k.max_dynamic_shared_size_bytes = self.bfs_smem
        if n_ov:
            rows((n_ov,), (BLOCK,), (lptr, lidx, bverts, bstart, dofs, D),
                 shared_mem=self.bfs_smem)
        cp.cuda.Device().synchronize()
        self.prep_s = time.perf_counter() - t0
        self.max_nb = max(1, int(nb.max()))
        self.n_ov, self.total, self.n_tiles, self.n_pad = n_ov, total, n_tiles, n_pad
        self.nb_mean = float(nb.mean())
        self.arrays = (indptr, indices, bverts, bstart, dofs, D, cut_ptr, cut_dst, cut_tile)
        self.L = cp.empty(max(n_ov, 1), cp.int32)
        self.applied = cp.empty_like(self.L)
        self.sent = cp.empty_like(self.L)
        self.mark = cp.empty(n_tiles, cp.int32)
        self.lists = cp.empty(2 * n_tiles, cp.int32)
        self.counts = cp.empty(3, cp.int32)
        self.stats = cp.zeros(16, cp.int32)
        self.dist = cp.empty(g.n_vertices, cp.int32)
        self.perm = self.copy.perm.astype(cp.int32)
        self.smem = 2 * CHUNK + 8 * self.max_nb
        sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
        self.rounds = {}  # threads per block -> (kernel, grid)
        for b, module in coop.items():
            k = module.get_function("overlay_rounds")
            k.max_dynamic_shared_size_bytes = self.smem
            self.rounds[b] = (k, barrier.blocks_per_multiprocessor(k, b, self.smem) * sms)
        self.grid = self.rounds[BLOCK][1]
        self.cp = cp

    def search(self, root: int, delta: int = 0, block: int = BLOCK):
        _, _, bverts, bstart, dofs, D, cut_ptr, cut_dst, cut_tile = self.arrays
        lptr, lidx = self.local
        s = int(self.copy.inverse_host[root])
        self.L.fill(INF)
        self.applied.fill(INF)
        self.sent.fill(INF)
        self.mark.fill(0)
        self.counts.fill(0)
        self.stats.fill(0)
        self.dist.fill(-1)
        nt = np.int32(self.n_tiles)
        self.source_k((1,), (BLOCK,), (lptr, lidx, bverts, bstart, self.L, self.mark,
                                      self.lists, self.counts, nt, np.int32(s)),
                      shared_mem=self.bfs_smem)
        rounds_k, grid = self.rounds[block]
        rounds_k((grid,), (block,),
                 (self.L, self.applied, self.sent, bstart, dofs, D, cut_ptr, cut_dst,
                  cut_tile, self.mark, self.lists, self.counts, nt,
                  np.int32(self.max_nb), self.stats, np.int32(delta)),
                 shared_mem=self.smem)
        self.final_k((self.n_tiles,), (FINAL_BLOCK,), (lptr, lidx, bverts, bstart, self.L,
                                                 self.perm, self.dist, np.int32(s)),
                     shared_mem=self.bfs_smem)
        return self.dist


def run_graph(cp, modules, label: str, g, quick: bool) -> None:
    n = g.n_vertices
    degree = cp.asnumpy(cp.diff(g.indptr))
    roots = [int(r) for r in np.random.default_rng(1).choice(np.flatnonzero(degree), 8)]
    reference = {}
    for variant in ("tiled", "persistent", "auto"):
        for r in roots[:3]:
            bfs(g, r, variant=variant, device="gpu")
        seconds, levels, ran = [], [], ""
        for r in roots:
            s, res = event_seconds(lambda r=r, v=variant: bfs(g, r, variant=v, device="gpu"))
            seconds.append(s)
            levels.append(res.n_levels)
            ran = res.variant
            reference[r] = res.distances
        print(f"graph={label} n={n} arm=bfs {variant} ran={ran} "
              f"ms={1e3 * float(np.mean(seconds)):.4f} levels={np.mean(levels):.1f} "
              f"us_per_level={1e6 * float(np.sum(seconds)) / float(np.sum(levels)):.3f}",
              flush=True)
    for shift in SHIFTS:
        run_overlay(cp, modules[shift], label, g, n, roots, reference, shift, quick)


def run_overlay(cp, mods, label, g, n, roots, reference, shift, quick) -> None:
    ov = Overlay(cp, mods[0], mods[1], g, shift)
    label = f"{label} T={1 << shift}"
    print(f"graph={label} overlay tiles={ov.n_tiles} boundary={ov.n_ov} "
          f"({ov.n_ov / n:.3f} of n) nb_mean={ov.nb_mean:.0f} nb_max={ov.max_nb} "
          f"D_entries={ov.total / 1e6:.1f}M rounds_grid={ov.grid} "
          f"tile_copy_s={ov.copy.seconds:.3f} "
          f"overlay_prep_s={ov.prep_s:.3f}", flush=True)
    clock_khz = cp.cuda.runtime.getDeviceProperties(0)["clockRate"]
    for block, delta in ARMS:
        grid = ov.rounds[block][1]
        ov.search(roots[0], delta, block)
        seconds, right, rounds, visits, sources, prof = [], True, [], [], [], []
        for r in roots:
            s, dist = event_seconds(lambda r=r, d=delta, b=block: ov.search(r, d, b))
            seconds.append(s)
            right &= bool((dist == reference[r]).all())
            st = ov.stats.get()
            u = st.view(np.uint64)
            rounds.append(int(st[0]))
            sources.append(int(u[1]))
            visits.append(int(u[2]))
            prof.append(u[3:8].astype(np.float64))
        lv = [int(reference[r].max()) + 1 for r in roots]
        p = np.sum(prof, axis=0)
        us = 1e3 / clock_khz  # us per cycle
        per_visit = [p[q] / max(p[4], 1) * us for q in range(3)]
        sync_per_round = p[3] / max(grid * float(np.sum(rounds)), 1) * us
        print(f"graph={label} n={n} arm=overlay block={block} grid={grid} delta={delta} "
              f"ms={1e3 * float(np.mean(seconds)):.4f} "
              f"us_per_level={1e6 * float(np.sum(seconds)) / float(np.sum(lv)):.3f} "
              f"rounds={np.mean(rounds):.1f} visits={np.mean(visits):.0f} "
              f"sources={np.mean(sources):.0f} labels_equal={right} "
              f"visit_us step1={per_visit[0]:.2f} minplus={per_visit[1]:.2f} "
              f"cut={per_visit[2]:.2f} sync_per_round_us={sync_per_round:.2f}", flush=True)
    if quick or not right:
        return
    # Where the time goes: each phase alone (event time), root 0.
    r = roots[0]
    s0 = int(ov.copy.inverse_host[r])
    ov.search(r)
    cp.cuda.Device().synchronize()
    ph = {}
    _, _, bverts, bstart, dofs, D, cut_ptr, cut_dst, cut_tile = ov.arrays
    lptr, lidx = ov.local
    ph["final"], _ = event_seconds(lambda: ov.final_k(
        (ov.n_tiles,), (FINAL_BLOCK,), (lptr, lidx, bverts, bstart, ov.L, ov.perm, ov.dist,
                                  np.int32(s0)), shared_mem=ov.bfs_smem))
    ph["source"], _ = event_seconds(lambda: ov.source_k(
        (1,), (BLOCK,), (lptr, lidx, bverts, bstart, ov.L, ov.mark, ov.lists,
                         ov.counts, np.int32(ov.n_tiles), np.int32(s0),),
        shared_mem=ov.bfs_smem))
    print(f"graph={label} phases_us source={1e6 * ph['source']:.1f} "
          f"final={1e6 * ph['final']:.1f}", flush=True)


if __name__ == "__main__":
    main()
