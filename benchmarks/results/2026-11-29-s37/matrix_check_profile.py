"""Session 37: where a cached cupyx matrix's extra time in bfs() goes, piece by piece.

Per graph (Kronecker 14 / 21 / 22, uniform 2^14 and 2^22):
- kernel: fingerprint_check alone (20 back-to-back launches on one stream), beside a plain
  read of the same words (sum, no mixing), the same with 8 words in flight per thread,
  and the two-lane 32-bit mix (lowbias32 on each half) in place of SplitMix64;
- host: unchanged_cupy_graph alone, check_launch alone, confirm after a finished check;
- bfs() event time per call, arms interleaved per root: the CSRGraph; the matrix through
  bfs(); session 36's order (check first, beside on a side stream) from the same pieces.
  (Run 1 had other arms: the check grid at 1 and 2 blocks/SM, the check on the caller's
  stream ahead of the search.)
Usage: python3 matrix_check_profile.py"""
import sys
import time

sys.path.insert(0, "benchmarks")
import numpy as np  # noqa: E402
import road_like  # noqa: E402

from morphgpu import backend, generators, graph_cache  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402

GRAPHS = {
    "kron 14": lambda: generators.kronecker(14, 16, device="gpu"),
    "uniform 2^14": lambda: road_like.uniform_random(1 << 14, 16, device="gpu"),
    "kron 21": lambda: generators.kronecker(21, 16, device="gpu"),
    "uniform 2^22": lambda: road_like.uniform_random(1 << 22, 16, device="gpu"),
    "kron 22": lambda: generators.kronecker(22, 16, device="gpu"),
}

SOURCE = r"""
#define W 0x9E3779B97F4A7C15ull
__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
__device__ __forceinline__ unsigned mix32(unsigned h) {
    h ^= h >> 16; h *= 0x7feb352du; h ^= h >> 15; h *= 0x846ca68bu; h ^= h >> 16;
    return h;
}
template <int U, int MODE>
__device__ void body(const unsigned long long* __restrict__ words, unsigned long long n,
                     unsigned long long* out) {
    const unsigned long long step = (unsigned long long)U * blockDim.x;
    const unsigned long long stride = (unsigned long long)gridDim.x * step;
    unsigned long long acc = 0;
    for (unsigned long long base = (unsigned long long)blockIdx.x * step + threadIdx.x;
         base < n; base += stride) {
        unsigned long long w[U];
#pragma unroll
        for (int i = 0; i < U; ++i) {
            const unsigned long long k = base + (unsigned long long)i * blockDim.x;
            w[i] = k < n ? __ldcs(words + k) : 0;
        }
#pragma unroll
        for (int i = 0; i < U; ++i) {
            const unsigned long long k = base + (unsigned long long)i * blockDim.x;
            if (k < n) {
                if (MODE == 0) acc += w[i];
                else if (MODE == 1) acc += mix64(w[i] + k * W);
                else {
                    const unsigned kk = (unsigned)k * 0x9E3779B9u;
                    acc += (unsigned long long)mix32((unsigned)w[i] + kk)
                         + ((unsigned long long)mix32((unsigned)(w[i] >> 32) ^ kk) << 32);
                }
            }
        }
    }
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}
#define K(name, u, mode) extern "C" __global__ void name(const unsigned long long* w, \
    unsigned long long n, unsigned long long* o) { body<u, mode>(w, n, o); }
K(plain4, 4, 0)
K(plain8, 8, 0)
K(mix64_4, 4, 1)
K(mix64_8, 8, 1)
K(mix32x2_4, 4, 2)
"""


def timed(cp, fn, reps=20):
    ev = [cp.cuda.Event(), cp.cuda.Event()]
    fn()
    cp.cuda.runtime.deviceSynchronize()
    ev[0].record()
    for _ in range(reps):
        fn()
    ev[1].record()
    ev[1].synchronize()
    return cp.cuda.get_elapsed_time(ev[0], ev[1]) * 1e3 / reps


def host_us(fn, reps=2000):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) * 1e6 / reps


def main() -> None:
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as cusp

    print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
    mod = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    sms = backend.gpu_properties(0)["multiprocessors"]
    for label, make in GRAPHS.items():
        profile(cp, cusp, mod, sms, label, make)
        graph_cache._entries.clear()
        cp.get_default_memory_pool().free_all_blocks()


def profile(cp, cusp, mod, sms, label, make) -> None:
    if True:
        g = make()
        matrix = cusp.csr_matrix((cp.ones(g.n_edges, dtype=cp.float32), g.indices,
                                  g.indptr), shape=g.shape)
        variant = bfs(g, 0, device="gpu").variant
        for x in (g, matrix):
            bfs(x, 0, variant=variant, device="gpu")
            bfs(x, 1, variant=variant, device="gpu")
        entry = graph_cache._entries[id(matrix)]
        probe = entry.probe
        nbytes = sum(int(a.nbytes) for a in entry.arrays)
        out = {"graph": label, "n": g.n_vertices, "m": g.n_edges, "variant": variant,
               "guarded_MB": round(nbytes / 1e6, 1), "arrays": len(entry.arrays)}

        def check_kernel():
            probe.launch(entry.arrays, None)
        out["fp_check_us"] = timed(cp, check_kernel)
        probe.busy = False
        big = max(entry.arrays, key=lambda a: a.nbytes)
        words = big.view(cp.uint64) if big.nbytes % 8 == 0 else big[:-1].view(cp.uint64)
        acc = cp.zeros(1, dtype=cp.uint64)
        out["big_MB"] = round(words.nbytes / 1e6, 1)
        for name in ("plain4", "plain8", "mix64_4", "mix64_8", "mix32x2_4"):
            k = mod.get_function(name)
            for per_sm in (8,):
                per_block = 256 * (8 if name.endswith("8") else 4)
                grid = min(-(-words.size // per_block), per_sm * sms)
                args = (words, np.uint64(words.size), acc)
                out[f"{name}_us"] = timed(
                    cp, lambda k=k, grid=grid, args=args: k((grid,), (256,), args))
        out["plain4_TBps"] = round(words.nbytes / out["plain4_us"] / 1e6, 2)
        out["mix64_4_TBps"] = round(words.nbytes / out["mix64_4_us"] / 1e6, 2)
        # host pieces
        out["host_unchanged_us"] = host_us(lambda: graph_cache.unchanged_cupy_graph(matrix))
        t_launch, t_confirm = [], []
        for _ in range(200):
            cp.cuda.runtime.deviceSynchronize()
            t0 = time.perf_counter()
            pending = graph_cache.check_launch(matrix)
            t1 = time.perf_counter()
            pending[0].stream.synchronize()
            t2 = time.perf_counter()
            assert graph_cache.confirm(pending)
            t3 = time.perf_counter()
            t_launch.append(t1 - t0)
            t_confirm.append(t3 - t2)
        out["host_check_launch_us"] = 1e6 * float(np.median(t_launch))
        out["host_confirm_done_us"] = 1e6 * float(np.median(t_confirm))
        # bfs() arms, interleaved per root: the CSRGraph; the matrix through bfs() (its
        # check behind the search in run 2, inside the search from run 3 on); session 36's
        # order rebuilt from the same pieces
        # (the check launched first on the side stream, then the search, then confirm).
        from morphgpu.bfs import api, gpu  # noqa: PLC0415

        def beside(r):
            gr = graph_cache.unchanged_cupy_graph(matrix)
            prepared = gpu.prepared_search(gr, variant)
            pending = [graph_cache._check_beside(id(matrix), graph_cache._entries[id(matrix)])]
            api._prepared_bfs(gr, r, prepared, True)
            assert graph_cache.confirm(pending)

        arms = {"csr": lambda r: bfs(g, r, variant=variant, device="gpu", predecessors=True),
                "matrix": lambda r: bfs(matrix, r, variant=variant, device="gpu",
                                        predecessors=True),
                "beside": beside}
        times = {k: [] for k in arms}
        host = {k: [] for k in arms}
        roots = [int(r) for r in np.random.default_rng(0).integers(0, g.n_vertices, 48)]
        ev = [cp.cuda.Event(), cp.cuda.Event()]
        for r in roots:
            for arm, call in arms.items():
                cp.cuda.runtime.deviceSynchronize()
                ev[0].record()
                t0 = time.perf_counter()
                call(r)
                host[arm].append(time.perf_counter() - t0)
                ev[1].record()
                ev[1].synchronize()
                times[arm].append(cp.cuda.get_elapsed_time(ev[0], ev[1]) * 1e3)
        for arm, t in times.items():
            out[f"bfs_{arm}_us"] = float(np.mean(t))
            out[f"host_{arm}_us"] = 1e6 * float(np.mean(host[arm]))
        out["matrix_over_csr"] = out["bfs_matrix_us"] / out["bfs_csr_us"]
        out["beside_over_csr"] = out["bfs_beside_us"] / out["bfs_csr_us"]
        print(" ".join(f"{k}={round(v, 1) if isinstance(v, float) else v}"
                      for k, v in out.items()), flush=True)


if __name__ == "__main__":
    main()
