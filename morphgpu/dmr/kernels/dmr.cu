// Delaunay mesh refinement rounds on the GPU (the CPU twin is morphgpu/dmr/cpu.py).
//
// Mesh layout (see morphgpu/dmr/mesh.py): x/y per vertex; per triangle slot t, tri[3t+i]
// the vertices (CCW), nbr[3t+i] the triangle across edge i (opposite vertex i, -1 on the
// boundary), seg[3t+i] 0 for a free edge or 1 + the segment's marker index.
//
// One round = five launches, no host read between the last four:
//   find_bad        the bad triangles among the candidates -> worklist (one atomic per
//                   block, block order kept); the candidates are the slots the last
//                   round pushed, so a round costs what is left to do, not the mesh size
//   plan_and_race   one thread per claimant: give way to a nearby bad triangle of higher
//                   rank (defers), else walk to the circumcentre, build the cavity
//                   in local memory (or a segment split), store the plan (cavity, then
//                   the ring of triangles just outside), race the cavity (mg::conflict_race)
//   prioritycheck   mg::conflict_prioritycheck (atomicMax) over the cavity
//   check           mg::conflict_check: the cavity winners
//   ring_check_and_apply
//                   a cavity winner also rewrites one neighbour pointer of each ring
//                   triangle: safe unless that triangle is in another winner's cavity.
//                   Such conflicts are symmetric (my ring meets your cavity iff yours
//                   meets mine), so the lower mark waits and the higher goes on; the
//                   round's highest mark always does. Then the winner re-triangulates: the
//                   cavity's own slots are reused and the 1 or 2 extra ones come from the
//                   slot counter the host grew beforehand from the number of claimants
//                   (host-only growth: a winner adds at most two triangles, one vertex).
//                   Last, every bad triangle and every slot written is pushed (once) on
//                   the next round's candidate list.
// Sharing the rings (instead of claiming them with the cavity) cuts the aborts a lot:
// rings of neighbouring cavities overlap almost always.
//
// Each phase is one __device__ function (find_bad_phase, ...): the five kernels above wrap
// them one launch each, and refine_tail (at the end of the file) runs whole rounds of them
// in one persistent launch, with mg::grid_sync (include/morphgpu/barrier.cuh) between the
// phases, for the many small rounds at the end of a refinement.
//
// Geometry is float64 with Shewchuk's static error bounds: a predicate whose sign is not
// certain answers "unknown", the claimant gives up and its triangle is marked stuck; the
// host finishes stuck triangles with the CPU path's exact arithmetic. The same happens to
// cavities larger than MAX_CAVITY and walks longer than MAX_WALK, so a bounded thread
// never makes a wrong decision.
#include <morphgpu/barrier.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/conflict.cuh>
#include <morphgpu/worklist.cuh>

#ifndef DMR_BLOCK
#define DMR_BLOCK 256
#endif
#ifndef MAX_CAVITY
#define MAX_CAVITY 24
#endif
#define MAX_BOUNDARY (MAX_CAVITY + 2)
#define MAX_HOOD (MAX_CAVITY + MAX_BOUNDARY)
#ifndef MAX_WALK
#define MAX_WALK 512
#endif

using mg::i64;
using mg::u64;
using mg::vid_t;

namespace {

constexpr double kEps = 1.1102230246251565e-16;  // 2^-53
constexpr double kOrientBound = (3.0 + 16.0 * kEps) * kEps;
constexpr double kIncircleBound = (10.0 + 96.0 * kEps) * kEps;
constexpr int kUnknown = 2;

// +1 CCW, -1 CW, 0 collinear only when exactly zero with no rounding, kUnknown otherwise.
__device__ int orient(double ax, double ay, double bx, double by, double cx, double cy) {
    const double left = (ax - cx) * (by - cy);
    const double right = (ay - cy) * (bx - cx);
    const double det = left - right;
    const double bound = kOrientBound * (fabs(left) + fabs(right));
    if (det > bound) return 1;
    if (-det > bound) return -1;
    return kUnknown;
}

// +1 when d is strictly inside the circle through CCW a, b, c; -1 outside; kUnknown near.
__device__ int incircle(double ax, double ay, double bx, double by, double cx, double cy,
                        double dx, double dy) {
    const double adx = ax - dx, ady = ay - dy, bdx = bx - dx, bdy = by - dy;
    const double cdx = cx - dx, cdy = cy - dy;
    const double bdxcdy = bdx * cdy, cdxbdy = cdx * bdy;
    const double cdxady = cdx * ady, adxcdy = adx * cdy;
    const double adxbdy = adx * bdy, bdxady = bdx * ady;
    const double alift = adx * adx + ady * ady;
    const double blift = bdx * bdx + bdy * bdy;
    const double clift = cdx * cdx + cdy * cdy;
    const double det = alift * (bdxcdy - cdxbdy) + blift * (cdxady - adxcdy) +
                       clift * (adxbdy - bdxady);
    const double permanent = (fabs(bdxcdy) + fabs(cdxbdy)) * alift +
                             (fabs(cdxady) + fabs(adxcdy)) * blift +
                             (fabs(adxbdy) + fabs(bdxady)) * clift;
    const double bound = kIncircleBound * permanent;
    if (det > bound) return 1;
    if (-det > bound) return -1;
    return kUnknown;
}

struct MeshView {
    const double* x;
    const double* y;
    vid_t* tri;
    vid_t* nbr;
    int* seg;
};

__device__ __forceinline__ vid_t corner(const MeshView& m, vid_t t, int i) {
    return m.tri[3 * (i64)t + (i % 3)];
}

// Is triangle t bad: smallest angle below the limit, or area above max_area (max_area <=
// 0: no area limit). Not bad when the small angle cannot be improved: two segments form
// it, or the shortest edge joins two shell vertices of one apex at the same distance
// from it (a small input angle's price, Triangle's rule). *shortest2_out: the squared
// length of its shortest edge (the refinement order's key, see outranks).
__device__ bool is_bad(const MeshView& m, const vid_t* apex, vid_t t, double min_cos,
                       double max_area, double* shortest2_out) {
    double len2[3];
    for (int i = 0; i < 3; ++i) {
        const vid_t u = corner(m, t, i + 1), v = corner(m, t, i + 2);
        const double ex = m.x[v] - m.x[u], ey = m.y[v] - m.y[u];
        len2[i] = ex * ex + ey * ey;
    }
    int s = 0;
    if (len2[1] < len2[s]) s = 1;
    if (len2[2] < len2[s]) s = 2;
    const double a2 = len2[s], b2 = len2[(s + 1) % 3], c2 = len2[(s + 2) % 3];
    const double cos_small = (b2 + c2 - a2) / (2.0 * sqrt(b2 * c2));
    *shortest2_out = a2;
    bool bad = cos_small > min_cos;
    const i64 base = 3 * (i64)t;
    if (m.seg[base + (s + 1) % 3] != 0 && m.seg[base + (s + 2) % 3] != 0) bad = false;
    if (bad) {
        const vid_t u = corner(m, t, s + 1), v = corner(m, t, s + 2);
        const vid_t a = apex[u];
        if (a >= 0 && apex[v] == a) {
            const double du = (m.x[u] - m.x[a]) * (m.x[u] - m.x[a]) +
                              (m.y[u] - m.y[a]) * (m.y[u] - m.y[a]);
            const double dv = (m.x[v] - m.x[a]) * (m.x[v] - m.x[a]) +
                              (m.y[v] - m.y[a]) * (m.y[v] - m.y[a]);
            // ... and only when the segments meet below 60° (chord shorter than the
            // radius): a wider input angle does not force skinny triangles
            if (fabs(du - dv) <= 1e-6 * du && a2 < du) bad = false;
        }
    }
    if (max_area > 0.0) {
        const vid_t a = corner(m, t, 0), b = corner(m, t, 1), c = corner(m, t, 2);
        const double area = 0.5 * fabs((m.x[b] - m.x[a]) * (m.y[c] - m.y[a]) -
                                       (m.y[b] - m.y[a]) * (m.x[c] - m.x[a]));
        bad = bad || area > max_area;
    }
    return bad;
}

// A cavity under construction, in local memory.
struct Cavity {
    vid_t tri[MAX_CAVITY];
    int n;
    __device__ bool has(vid_t t) const {
        for (int i = 0; i < n; ++i)
            if (tri[i] == t) return true;
        return false;
    }
};

enum GrowResult { kGrown = 0, kTooBig = 1, kUnsure = 2 };

// Bowyer–Watson cavity of point (px, py) from the seeds already in `cav`, never crossing a
// segment.
__device__ GrowResult grow_cavity(const MeshView& m, Cavity& cav, double px, double py) {
    for (int head = 0; head < cav.n; ++head) {
        const vid_t t = cav.tri[head];
        for (int k = 0; k < 3; ++k) {
            const i64 e = 3 * (i64)t + k;
            const vid_t o = m.nbr[e];
            if (o < 0 || m.seg[e] != 0 || cav.has(o)) continue;
            const vid_t a = corner(m, o, 0), b = corner(m, o, 1), c = corner(m, o, 2);
            const int in = incircle(m.x[a], m.y[a], m.x[b], m.y[b], m.x[c], m.y[c], px, py);
            if (in == kUnknown) return kUnsure;
            if (in > 0) {
                if (cav.n == MAX_CAVITY) return kTooBig;
                cav.tri[cav.n++] = o;
            }
        }
    }
    return kGrown;
}

// The boundary edges of a cavity (CCW as seen from inside), skipping `through_edge`
// (3t+k of a boundary segment being split, or -1). Returns their number, or -1 when the
// cavity is not a disc or the point does not see every edge (not star-shaped).
__device__ int cavity_boundary(const MeshView& m, const Cavity& cav, i64 through_edge,
                               double px, double py, vid_t* bu, vid_t* bv, vid_t* bo,
                               int* bseg) {
    int nb = 0;
    for (int i = 0; i < cav.n; ++i) {
        const vid_t t = cav.tri[i];
        for (int k = 0; k < 3; ++k) {
            const i64 e = 3 * (i64)t + k;
            const vid_t o = m.nbr[e];
            if (o >= 0 && cav.has(o)) continue;
            if (e == through_edge) continue;
            if (nb == MAX_BOUNDARY) return -1;
            const vid_t u = corner(m, t, k + 1), v = corner(m, t, k + 2);
            if (orient(m.x[u], m.y[u], m.x[v], m.y[v], px, py) != 1) return -1;
            bu[nb] = u;
            bv[nb] = v;
            bo[nb] = o;
            bseg[nb] = m.seg[e];
            ++nb;
        }
    }
    return nb >= cav.n ? nb : -1;
}

// Where to refine the counter-clockwise triangle (a, b, c): its circumcentre, or Üngör's
// off-centre on the bisector of the shortest edge when that is nearer the edge (fewer,
// better-spread points; Triangle's default). off_k <= 0: always the circumcentre. The
// same code as cpu.insertion_point, so both sides pick the same point.
__device__ void insertion_point(const double* x, const double* y, vid_t a, vid_t b, vid_t c,
                                double off_k, double* px_out, double* py_out) {
    // circumcentre relative to a
    const double bx = x[b] - x[a], by = y[b] - y[a], cx = x[c] - x[a], cy = y[c] - y[a];
    const double d = 2.0 * (bx * cy - by * cx);
    const double b2 = bx * bx + by * by, c2 = cx * cx + cy * cy;
    const double px = x[a] + (cy * b2 - by * c2) / d;
    const double py = y[a] + (bx * c2 - cx * b2) / d;
    *px_out = px;
    *py_out = py;
    if (off_k <= 0.0 || !isfinite(px) || !isfinite(py)) return;
    const vid_t v[3] = {a, b, c};
    double len2[3];
    for (int i = 0; i < 3; ++i) {
        const double ex = x[v[(i + 2) % 3]] - x[v[(i + 1) % 3]];
        const double ey = y[v[(i + 2) % 3]] - y[v[(i + 1) % 3]];
        len2[i] = ex * ex + ey * ey;
    }
    int s = 0;
    if (len2[1] < len2[s]) s = 1;
    if (len2[2] < len2[s]) s = 2;
    const double ux = x[v[(s + 1) % 3]], uy = y[v[(s + 1) % 3]];
    const double dx = x[v[(s + 2) % 3]] - ux, dy = y[v[(s + 2) % 3]] - uy;
    // the midpoint plus off_k times the edge turned left, towards the opposite vertex
    const double ox = 0.5 * dx - off_k * dy, oy = 0.5 * dy + off_k * dx;
    if (ox * ox + oy * oy < (px - ux) * (px - ux) + (py - uy) * (py - uy)) {
        *px_out = ux + ox;
        *py_out = uy + oy;
    }
}

// Where to split segment ab: next to an input vertex at the power-of-two distance from it
// that lies in [1/3, 2/3] of the length (concentric shells, as Triangle does), so pieces
// of segments meeting at a small angle match; elsewhere the midpoint.
__device__ void split_point(double ax, double ay, double bx, double by, bool a_input,
                            bool b_input, double* px, double* py) {
    if (a_input == b_input) {
        *px = 0.5 * (ax + bx);
        *py = 0.5 * (ay + by);
        return;
    }
    const double length = sqrt((bx - ax) * (bx - ax) + (by - ay) * (by - ay));
    int e;
    const double mant = frexp(length / 3.0, &e);
    const double d = ldexp(1.0, mant > 0.5 ? e : e - 1);
    const double f = a_input ? d / length : 1.0 - d / length;
    *px = ax + f * (bx - ax);
    *py = ay + f * (by - ay);
}

// The deferral rule's order, highest first: the shorter shortest edge (bad_rank's low
// word: the float bits of its squared length, counted down from the top), then this
// round's hashed priority, then the slot. Shortest edge first is Triangle's order (its
// bad-triangle queues are keyed by it); it makes fewer, better-spread insertions than
// worst angle first (the CPU twin: 1.00-1.04x Triangle's output against 1.07-1.08x, see
// gpu.py). bad_rank's high word is the round's stamp, so an entry of an earlier round is
// not bad now.
__device__ __forceinline__ bool outranks(u64 other_entry, vid_t other, u64 my_entry, vid_t t,
                                         unsigned stamp, u64 round) {
    if ((unsigned)(other_entry >> 32) != stamp) return false;
    const unsigned key = (unsigned)other_entry, my_key = (unsigned)my_entry;
    if (key != my_key) return key > my_key;
    const unsigned p = mg::claim_priority(round, (u64)other);
    const unsigned q = mg::claim_priority(round, (u64)t);
    if (p != q) return p > q;
    return other > t;
}

// Does bad triangle t give way this round to a bad claimant that outranks it within
// `depth` (1 to 3) edge steps? The cavities of such close bad triangles nearly always
// overlap, so at most one of them could win; the others' plans would be built only to be
// thrown away. The highest-ranked claimant never gives way, so a round with bad
// triangles still has a claimant (and the claim protocol a winner).
__device__ bool defers(const MeshView& m, const u64* bad_rank, unsigned stamp, u64 round,
                       vid_t t, int depth) {
    const u64 mine = bad_rank[t];
    for (int k = 0; k < 3; ++k) {
        const vid_t o = m.nbr[3 * (i64)t + k];
        if (o < 0) continue;
        if (outranks(bad_rank[o], o, mine, t, stamp, round)) return true;
        if (depth < 2) continue;
        for (int q = 0; q < 3; ++q) {
            const vid_t o2 = m.nbr[3 * (i64)o + q];
            if (o2 < 0 || o2 == t) continue;
            if (outranks(bad_rank[o2], o2, mine, t, stamp, round)) return true;
            if (depth < 3) continue;
            for (int r = 0; r < 3; ++r) {
                const vid_t o3 = m.nbr[3 * (i64)o2 + r];
                if (o3 < 0 || o3 == o || o3 == t) continue;
                if (outranks(bad_rank[o3], o3, mine, t, stamp, round)) return true;
            }
        }
    }
    return false;
}

struct Plans {
    double* px;
    double* py;
    vid_t* hood;       // MAX_HOOD per claimant: the cavity first, then the outside triangles
    int* n_cavity;     // -1: no plan this round
    int* n_hood;
    i64* through;      // 3t+k of a boundary segment being split, else -1
    vid_t* split_a;    // endpoints of the segment being split (-1: circumcentre insertion)
    vid_t* split_b;
    int* split_seg;
};

}  // namespace

// Bad triangles -> worklist, and the first max_claimants of them stamped and ranked in
// bad_rank (the deferral rule reads it). The triangles tested are
// `candidates[0 .. *n_candidates)` (the slots last round's claimants and winners pushed),
// or, with candidates == nullptr, every slot below n_slots (the first round, the full
// scan that confirms the lists, stuck retries). Also empties the candidate list the
// coming round fills (no kernel of this round reads it before apply).
__device__ __forceinline__ void find_bad_phase(
    const double* x, const double* y, vid_t* tri, vid_t* nbr, int* seg, const vid_t* apex,
    const unsigned char* stuck, const vid_t* candidates, const u64* n_candidates, i64 n_slots,
    double min_cos, double max_area, unsigned stamp, u64* bad_rank, vid_t* worklist,
    i64 max_claimants, u64* n_bad, u64* n_next_candidates) {
    const MeshView m{x, y, tri, nbr, seg};
    if (blockIdx.x == 0 && threadIdx.x == 0) *n_next_candidates = 0;
    // the same bound for every thread of a block (block_reserve is block-wide)
    const i64 n = candidates ? (i64)mg::load_volatile(n_candidates) : n_slots;
    for (i64 base = (i64)blockIdx.x * DMR_BLOCK; base < n; base += (i64)gridDim.x * DMR_BLOCK) {
        const i64 i = base + threadIdx.x;
        const vid_t t = i < n ? (candidates ? candidates[i] : (vid_t)i) : -1;
        double shortest2 = 0.0;
        const bool bad =
            t >= 0 && !stuck[t] && is_bad(m, apex, t, min_cos, max_area, &shortest2);
        const i64 slot = mg::block_reserve<DMR_BLOCK>(n_bad, bad ? 1 : 0);
        if (bad) worklist[slot] = t;
        // only claimants are stamped: one never gives way to a bad triangle past the
        // round's claimant limit, so the highest-ranked claimant always claims
        if (bad && slot < max_claimants)
            bad_rank[t] = ((u64)stamp << 32) | (0xFFFFFFFFu - __float_as_uint((float)shortest2));
    }
}

__device__ __forceinline__ void plan_and_race_phase(
    const double* x, const double* y, vid_t* tri, vid_t* nbr, int* seg, unsigned char* stuck,
    const vid_t* worklist, i64 n_claimants, u64 round, double min_split, double off_k,
    vid_t n_input, u64* marks, unsigned* mark_round, double* px_out, double* py_out,
    vid_t* hood, int* n_cavity, int* n_hood, i64* through, vid_t* split_a, vid_t* split_b,
    int* split_seg, const u64* bad_rank, unsigned stamp, int defer_depth, int consecutive) {
    const MeshView m{x, y, tri, nbr, seg};
    // consecutive: a range of consecutive claimants per thread (the paper's local
    // worklist: after the Morton layout one thread's cavities are close together); else
    // neighbouring threads take neighbouring claimants (coalesced plan stores).
    i64 begin = mg::global_tid(), end = n_claimants, step = mg::global_stride();
    if (consecutive) {
        mg::range_of_thread<i64>(n_claimants, &begin, &end);
        step = 1;
    }
    for (i64 i = begin; i < end; i += step) {
        n_cavity[i] = -1;
        const vid_t t = worklist[i];
        if (defer_depth > 0 && defers(m, bad_rank, stamp, round, t, defer_depth)) {
            n_cavity[i] = -2;  // gave way (counted in ring_check_and_apply)
            continue;
        }
        const vid_t a = corner(m, t, 0), b = corner(m, t, 1), c = corner(m, t, 2);
        double px, py;
        insertion_point(x, y, a, b, c, off_k, &px, &py);
        bool ok = isfinite(px) && isfinite(py);
        // Walk towards the circumcentre; stop inside its triangle or at a segment.
        vid_t cur = t;
        i64 split_edge = -1;
        int steps = 0;
        while (ok) {
            int exit_k = -1;
            for (int k = 0; k < 3 && ok; ++k) {
                const vid_t u = corner(m, cur, k + 1), v = corner(m, cur, k + 2);
                const int o = orient(x[u], y[u], x[v], y[v], px, py);
                if (o == kUnknown) ok = false;
                else if (o < 0) { exit_k = k; break; }
            }
            if (!ok || exit_k < 0) break;
            const i64 e = 3 * (i64)cur + exit_k;
            if (seg[e] != 0) { split_edge = e; break; }
            cur = nbr[e];
            if (++steps > MAX_WALK) ok = false;
        }
        Cavity cav;
        cav.n = 0;
        vid_t bu[MAX_BOUNDARY], bv[MAX_BOUNDARY], bo[MAX_BOUNDARY];
        int bseg[MAX_BOUNDARY];
        int nb = -1;
        if (ok && split_edge < 0) {
            cav.tri[cav.n++] = cur;
            ok = grow_cavity(m, cav, px, py) == kGrown;
            if (ok) {
                // A segment on the cavity's boundary whose diametral circle holds the new
                // point is encroached: split it instead (Ruppert).
                for (int i = 0; i < cav.n && split_edge < 0; ++i) {
                    for (int k = 0; k < 3; ++k) {
                        const i64 e = 3 * (i64)cav.tri[i] + k;
                        if (seg[e] == 0) continue;
                        const vid_t o = nbr[e];
                        if (o >= 0 && cav.has(o)) continue;
                        const vid_t u = corner(m, cav.tri[i], k + 1);
                        const vid_t v = corner(m, cav.tri[i], k + 2);
                        if ((x[u] - px) * (x[v] - px) + (y[u] - py) * (y[v] - py) <= 0.0) {
                            split_edge = e;
                            break;
                        }
                    }
                }
                if (split_edge < 0) nb = cavity_boundary(m, cav, -1, px, py, bu, bv, bo, bseg);
            }
        }
        vid_t sa = -1, sb = -1;
        int sseg = 0;
        i64 skip = -1;
        if (ok && split_edge >= 0) {
            const vid_t st = (vid_t)(split_edge / 3);
            const int sk = (int)(split_edge % 3);
            sa = corner(m, st, sk + 1);
            sb = corner(m, st, sk + 2);
            sseg = seg[split_edge];
            const double lx = x[sb] - x[sa], ly = y[sb] - y[sa];
            ok = sqrt(lx * lx + ly * ly) >= min_split;
            split_point(x[sa], y[sa], x[sb], y[sb], sa < n_input, sb < n_input, &px, &py);
            cav.n = 0;
            cav.tri[cav.n++] = st;
            const vid_t across = nbr[split_edge];
            if (across >= 0) cav.tri[cav.n++] = across;
            else skip = split_edge;
            if (ok) ok = grow_cavity(m, cav, px, py) == kGrown;
            if (ok) nb = cavity_boundary(m, cav, skip, px, py, bu, bv, bo, bseg);
        }
        // A new vertex nearer an old one than the size floor would only make slivers.
        for (int j = 0; ok && j < nb; ++j) {
            const double dx = x[bu[j]] - px, dy = y[bu[j]] - py;
            if (sqrt(dx * dx + dy * dy) < min_split) ok = false;
        }
        if (!ok || nb < 0) {
            stuck[t] = 1;  // the host finishes it with exact arithmetic
            continue;
        }
        vid_t* h = hood + i * MAX_HOOD;
        int nh = 0;
        for (int j = 0; j < cav.n; ++j) h[nh++] = cav.tri[j];
        for (int j = 0; j < nb; ++j)
            if (bo[j] >= 0) h[nh++] = bo[j];
        px_out[i] = px;
        py_out[i] = py;
        n_cavity[i] = cav.n;
        n_hood[i] = nh;
        through[i] = skip;
        split_a[i] = sa;
        split_b[i] = sb;
        split_seg[i] = sseg;
        const u64 mark = mg::claim_mark(mg::claim_priority(round, (u64)i), (unsigned)i);
        mg::conflict_race(marks, h, cav.n, mark);
        for (int j = 0; j < cav.n; ++j) mark_round[h[j]] = (unsigned)(round + 1);
    }
}

__device__ __forceinline__ void prioritycheck_phase(u64* marks, const vid_t* hood,
                                                    int* n_cavity, const int* n_hood,
                                                    i64 n_claimants, u64 round) {
    for (i64 i = mg::global_tid(); i < n_claimants; i += mg::global_stride()) {
        if (n_cavity[i] < 0) continue;
        const u64 mark = mg::claim_mark(mg::claim_priority(round, (u64)i), (unsigned)i);
        if (!mg::conflict_prioritycheck(marks, hood + i * MAX_HOOD, n_cavity[i], mark))
            n_cavity[i] = -1;  // lost: skip phase 3
    }
}

__device__ __forceinline__ void check_phase(const u64* marks, const vid_t* hood,
                                            int* n_cavity, i64 n_claimants, u64 round) {
    for (i64 i = mg::global_tid(); i < n_claimants; i += mg::global_stride()) {
        if (n_cavity[i] < 0) continue;
        const u64 mark = mg::claim_mark(mg::claim_priority(round, (u64)i), (unsigned)i);
        if (!mg::conflict_check(marks, hood + i * MAX_HOOD, n_cavity[i], mark))
            n_cavity[i] = -1;
    }
}

// Triangle j of the fan a cavity's re-triangulation writes around its new vertex p: corners
// (u, v, p) over boundary edge j, its fan neighbours found by shared corners, the triangle
// across (u, v) re-pointed at it. seg_vp / seg_pu mark the fan's inner edges (v, p) and
// (p, u) (a split segment's halves); the boundary edge keeps its own mark. Shared by the
// refinement's insertions and the CDT's.
__device__ __forceinline__ void write_fan_triangle(vid_t* tri, vid_t* nbr, int* seg,
                                                   const vid_t* bu, const vid_t* bv,
                                                   const vid_t* bo, const int* bseg,
                                                   const vid_t* slot, int nb, int j, vid_t p,
                                                   int seg_vp, int seg_pu) {
    const vid_t u = bu[j], v = bv[j], s = slot[j];
    vid_t after = -1, before = -1;
    for (int q = 0; q < nb; ++q) {
        if (bu[q] == v) after = slot[q];
        if (bv[q] == u) before = slot[q];
    }
    const i64 e = 3 * (i64)s;
    tri[e] = u;
    tri[e + 1] = v;
    tri[e + 2] = p;
    nbr[e] = after;
    nbr[e + 1] = before;
    nbr[e + 2] = bo[j];
    seg[e] = seg_vp;
    seg[e + 1] = seg_pu;
    seg[e + 2] = bseg[j];
    const vid_t o = bo[j];
    if (o >= 0) {
        const i64 oe = 3 * (i64)o;
        int k = 0;
        for (; k < 3; ++k)
            if (tri[oe + k] != u && tri[oe + k] != v) break;
        nbr[oe + k] = s;
    }
}

// Claimant i's phase 4 and re-triangulation (see the top of the file). Returns the number
// of slots it wrote (their ids in `written`), 0 when it waits.
__device__ int ring_check_and_apply_one(const MeshView& m, double* x, double* y, i64 i,
                                        int* vertex_marker,
                                        vid_t* apex, vid_t n_input, unsigned char* stuck,
                                        const int* segment_markers, const u64* marks,
                                        const unsigned* mark_round, const vid_t* hood,
                                        const int* n_cavity, const int* n_hood,
                                        const double* px_in, const double* py_in,
                                        const i64* through, const vid_t* split_a,
                                        const vid_t* split_b, const int* split_seg,
                                        i64 n_claimants, u64 round, u64* n_triangles,
                                        u64* n_vertices, u64* n_refined, vid_t* written) {
    const vid_t* h = hood + i * MAX_HOOD;
    const u64 mark = mg::claim_mark(mg::claim_priority(round, (u64)i), (unsigned)i);
    for (int j = n_cavity[i]; j < n_hood[i]; ++j) {
        const vid_t o = h[j];
        if (mark_round[o] != (unsigned)(round + 1)) continue;  // unclaimed this round
        const u64 held = marks[o];
        const i64 holder = (i64)mg::mark_claimant(held);
        if (holder != i && holder < n_claimants && n_cavity[holder] >= 0 && held > mark)
            return 0;  // wait
    }
    // This thread owns its cavity, and no winner touches its ring but to rewrite other
    // neighbour pointers: rebuild the boundary from the unchanged cavity, write the fan.
    Cavity cav;
    cav.n = n_cavity[i];
    for (int j = 0; j < cav.n; ++j) cav.tri[j] = h[j];
    const double px = px_in[i], py = py_in[i];
    vid_t bu[MAX_BOUNDARY], bv[MAX_BOUNDARY], bo[MAX_BOUNDARY];
    vid_t* slot = written;
    int bseg[MAX_BOUNDARY];
    const int nb = cavity_boundary(m, cav, through[i], px, py, bu, bv, bo, bseg);
    if (nb < 0) return 0;  // cannot happen: the same inputs passed in plan_and_race
    const int fresh = nb - cav.n;
    const i64 first = fresh > 0 ? (i64)atomicAdd(n_triangles, (u64)fresh) : 0;
    for (int j = 0; j < nb; ++j) slot[j] = j < cav.n ? cav.tri[j] : (vid_t)(first + j - cav.n);
    const vid_t p = (vid_t)atomicAdd(n_vertices, 1ull);
    x[p] = px;
    y[p] = py;
    const vid_t sa = split_a[i], sb = split_b[i];
    const int sseg = split_seg[i];
    vertex_marker[p] = sseg ? segment_markers[sseg - 1] : 0;
    const bool a_in = sa >= 0 && sa < n_input, b_in = sb >= 0 && sb < n_input;
    apex[p] = (sseg && a_in != b_in) ? (a_in ? sa : sb) : -1;
    vid_t* tri = m.tri;
    vid_t* nbr = m.nbr;
    int* seg = m.seg;
    for (int j = 0; j < nb; ++j) {
        const vid_t u = bu[j], v = bv[j];
        write_fan_triangle(tri, nbr, seg, bu, bv, bo, bseg, slot, nb, j, p,
                           (sseg && (v == sa || v == sb)) ? sseg : 0,
                           (sseg && (u == sa || u == sb)) ? sseg : 0);
        stuck[slot[j]] = 0;
    }
    atomicAdd(n_refined, 1ull);
    return nb;
}

// Phase 4 and re-triangulation for the claimants, then the next round's candidates: only
// they can be bad then, since badness depends on a triangle alone and only written slots
// change. Every bad triangle of this round stays a candidate (it may have lost, waited,
// given way or not been a claimant at all; a segment split need not remove its origin)
// and every slot a winner wrote becomes one. The `queued` stamps keep the list free of
// duplicates, so it never holds more entries than there are slots.
__device__ __forceinline__ void ring_check_and_apply_phase(
    double* x, double* y, vid_t* tri, vid_t* nbr, int* seg, int* vertex_marker, vid_t* apex,
    vid_t n_input, unsigned char* stuck, const int* segment_markers, const u64* marks,
    const unsigned* mark_round, const vid_t* hood, const int* n_cavity, const int* n_hood,
    const double* px_in, const double* py_in, const i64* through, const vid_t* split_a,
    const vid_t* split_b, const int* split_seg, i64 n_claimants, u64 round, u64* n_triangles,
    u64* n_vertices, u64* n_refined, const vid_t* worklist, i64 n_bad, unsigned stamp,
    unsigned* queued, vid_t* next_candidates, u64* n_next_candidates, u64* n_gave_way) {
    const MeshView m{x, y, tri, nbr, seg};
    for (i64 base = (i64)blockIdx.x * DMR_BLOCK; base < n_bad;
         base += (i64)gridDim.x * DMR_BLOCK) {
        const i64 i = base + threadIdx.x;
        vid_t push[MAX_BOUNDARY + 1];
        int n_push = 0;
        if (i < n_bad) {
            push[n_push++] = worklist[i];
            if (i < n_claimants && n_cavity[i] >= 0)
                n_push += ring_check_and_apply_one(
                    m, x, y, i, vertex_marker, apex, n_input, stuck, segment_markers, marks,
                    mark_round, hood, n_cavity, n_hood, px_in, py_in, through, split_a,
                    split_b, split_seg, n_claimants, round, n_triangles, n_vertices,
                    n_refined, push + 1);
        }
        const int gave_way = __syncthreads_count(i < n_claimants && n_cavity[i] == -2);
        if (threadIdx.x == 0 && gave_way > 0) atomicAdd(n_gave_way, (u64)gave_way);
        int kept = 0;
        for (int j = 0; j < n_push; ++j)
            if (atomicExch(&queued[push[j]], stamp) != stamp) push[kept++] = push[j];
        const i64 first = mg::block_reserve<DMR_BLOCK>(n_next_candidates, kept);
        for (int j = 0; j < kept; ++j) next_candidates[first + j] = push[j];
    }
}

// The kernels of the host-driven rounds: one launch per phase, one copy of each phase.

extern "C" __global__ void find_bad(const double* x, const double* y, vid_t* tri, vid_t* nbr,
                                    int* seg, const vid_t* apex, const unsigned char* stuck,
                                    const vid_t* candidates, const u64* n_candidates,
                                    i64 n_slots, double min_cos, double max_area,
                                    unsigned stamp, u64* bad_rank, vid_t* worklist,
                                    i64 max_claimants, u64* n_bad, u64* n_next_candidates) {
    find_bad_phase(x, y, tri, nbr, seg, apex, stuck, candidates, n_candidates, n_slots, min_cos,
                   max_area, stamp, bad_rank, worklist, max_claimants, n_bad, n_next_candidates);
}

extern "C" __global__ void plan_and_race(
    const double* x, const double* y, vid_t* tri, vid_t* nbr, int* seg, unsigned char* stuck,
    const vid_t* worklist, i64 n_claimants, u64 round, double min_split, double off_k,
    vid_t n_input, u64* marks, unsigned* mark_round, double* px_out, double* py_out,
    vid_t* hood, int* n_cavity, int* n_hood, i64* through, vid_t* split_a, vid_t* split_b,
    int* split_seg, const u64* bad_rank, unsigned stamp, int defer_depth, int consecutive) {
    plan_and_race_phase(x, y, tri, nbr, seg, stuck, worklist, n_claimants, round, min_split,
                        off_k, n_input, marks, mark_round, px_out, py_out, hood, n_cavity,
                        n_hood, through, split_a, split_b, split_seg, bad_rank, stamp,
                        defer_depth, consecutive);
}

extern "C" __global__ void prioritycheck(u64* marks, const vid_t* hood, int* n_cavity,
                                         const int* n_hood, i64 n_claimants, u64 round) {
    prioritycheck_phase(marks, hood, n_cavity, n_hood, n_claimants, round);
}

extern "C" __global__ void check(const u64* marks, const vid_t* hood, int* n_cavity,
                                 i64 n_claimants, u64 round) {
    check_phase(marks, hood, n_cavity, n_claimants, round);
}

extern "C" __global__ void ring_check_and_apply(
    double* x, double* y, vid_t* tri, vid_t* nbr, int* seg, int* vertex_marker, vid_t* apex,
    vid_t n_input, unsigned char* stuck, const int* segment_markers, const u64* marks,
    const unsigned* mark_round, const vid_t* hood, const int* n_cavity, const int* n_hood,
    const double* px_in, const double* py_in, const i64* through, const vid_t* split_a,
    const vid_t* split_b, const int* split_seg, i64 n_claimants, u64 round, u64* n_triangles,
    u64* n_vertices, u64* n_refined, const vid_t* worklist, i64 n_bad, unsigned stamp,
    unsigned* queued, vid_t* next_candidates, u64* n_next_candidates, u64* n_gave_way) {
    ring_check_and_apply_phase(x, y, tri, nbr, seg, vertex_marker, apex, n_input, stuck,
                               segment_markers, marks, mark_round, hood, n_cavity, n_hood,
                               px_in, py_in, through, split_a, split_b, split_seg, n_claimants,
                               round, n_triangles, n_vertices, n_refined, worklist, n_bad,
                               stamp, queued, next_candidates, n_next_candidates, n_gave_way);
}

// The slots below n whose stuck flag is set, for the host's finish (morphgpu/dmr/finish.py):
// their ids in out (in no particular order; at most capacity of them) and their number
// added to *count (zeroed by the host). One pass, no scan: the host reads the count and
// then only that many ids, where copying the flags back would move one byte per slot.
extern "C" __global__ void list_stuck(const unsigned char* stuck, i64 n, vid_t* out,
                                      i64 capacity, u64* count) {
    for (i64 base = (i64)blockIdx.x * DMR_BLOCK; base < n; base += (i64)gridDim.x * DMR_BLOCK) {
        const i64 t = base + threadIdx.x;
        const bool flagged = t < n && stuck[t] != 0;
        const i64 slot = mg::block_reserve<DMR_BLOCK>(count, flagged ? 1 : 0);
        if (flagged && slot < capacity) out[slot] = (vid_t)t;
    }
}

// The counters the host and refine_tail share (u64 words; gpu.py names them too).
#define C_BAD 0          // bad triangles found by the last find_bad
#define C_TRIANGLES 1    // slots in use
#define C_VERTICES 2
#define C_REFINED 3      // cavities re-triangulated, all rounds
#define C_CANDIDATES 4   // 4 and 5: the lengths of the two candidate lists
#define C_GAVE_WAY 6
#define C_TAIL_ROUNDS 7  // rounds refine_tail ran, all launches
#define C_TAIL_CLAIMS 8  // their bad triangles, summed
#define C_TAIL_LAST 9    // the bad triangles of refine_tail's last round

// The small rounds of the end of a refinement, all in one persistent launch: the rounds of
// the kernels above, phase after phase, separated by the shared grid barrier instead of
// kernel boundaries (a host-driven round costs 150-250 µs of launches and a read, however
// few its claimants). Starts with find_bad of round first_round (reading the candidate
// list that round's parity selects; the host zeroed C_BAD) and always stops right after
// a find_bad, leaving that round's bad count in C_BAD for the host to go on from: when it
// is 0 (the host confirms with a full scan, retries stuck triangles or ends), when it is
// above claim_capacity (the plan buffers' size), when the round might need more triangle
// or vertex slots than there are (a winner adds at most 2 triangles and 1 vertex; the host
// grows the arrays), or after max_rounds complete rounds.
//
// Every exit test reads values that no thread writes between the barrier before it and
// the barrier after the next phase, so the whole grid takes the same branch and no block
// is left waiting at a barrier. The block-wide steps (block_reserve, __syncthreads_count)
// sit in loops whose bounds every thread of a block reads alike.
extern "C" __global__ void __launch_bounds__(DMR_BLOCK) refine_tail(
    double* x, double* y, vid_t* tri, vid_t* nbr, int* seg, int* vertex_marker, vid_t* apex,
    vid_t n_input, unsigned char* stuck, const int* segment_markers, u64* marks,
    unsigned* mark_round, u64* bad_rank, vid_t* worklist, vid_t* candidates0,
    vid_t* candidates1, unsigned* queued, double* px, double* py, vid_t* hood, int* n_cavity,
    int* n_hood, i64* through, vid_t* split_a, vid_t* split_b, int* split_seg, u64* counters,
    double min_cos, double max_area, double min_split, double off_k, int defer_depth,
    int consecutive, i64 max_claimants, u64 first_round, i64 max_rounds, i64 claim_capacity,
    i64 triangle_capacity, i64 vertex_capacity, unsigned* barrier_state) {
    mg::GridBarrier bar(barrier_state);
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    for (u64 rnd = first_round;; ++rnd) {
        const unsigned stamp = (unsigned)(rnd + 1);
        const int cur = (int)(rnd & 1);
        vid_t* here = cur ? candidates1 : candidates0;
        vid_t* next = cur ? candidates0 : candidates1;
        u64* n_here = counters + C_CANDIDATES + cur;
        u64* n_next = counters + C_CANDIDATES + 1 - cur;
        find_bad_phase(x, y, tri, nbr, seg, apex, stuck, here, n_here, 0, min_cos, max_area,
                       stamp, bad_rank, worklist, max_claimants, counters + C_BAD, n_next);
        mg::grid_sync(bar);
        const i64 n_bad = (i64)mg::load_volatile(counters + C_BAD);
        const i64 nt = (i64)mg::load_volatile(counters + C_TRIANGLES);
        const i64 nv = (i64)mg::load_volatile(counters + C_VERTICES);
        if (n_bad == 0 || n_bad > claim_capacity || (i64)(rnd - first_round) >= max_rounds ||
            nt + 2 * n_bad > triangle_capacity || nv + n_bad > vertex_capacity)
            return;
        plan_and_race_phase(x, y, tri, nbr, seg, stuck, worklist, n_bad, rnd, min_split, off_k,
                            n_input, marks, mark_round, px, py, hood, n_cavity, n_hood,
                            through, split_a, split_b, split_seg, bad_rank, stamp, defer_depth,
                            consecutive);
        mg::grid_sync(bar);
        // Every thread read the bad count before that barrier; the next find_bad counts
        // afresh (and the next read of it is two barriers away).
        if (leader) counters[C_BAD] = 0;
        prioritycheck_phase(marks, hood, n_cavity, n_hood, n_bad, rnd);
        mg::grid_sync(bar);
        check_phase(marks, hood, n_cavity, n_bad, rnd);
        mg::grid_sync(bar);
        ring_check_and_apply_phase(x, y, tri, nbr, seg, vertex_marker, apex, n_input, stuck,
                                   segment_markers, marks, mark_round, hood, n_cavity, n_hood,
                                   px, py, through, split_a, split_b, split_seg, n_bad, rnd,
                                   counters + C_TRIANGLES, counters + C_VERTICES,
                                   counters + C_REFINED, worklist, n_bad, stamp, queued, next,
                                   n_next, counters + C_GAVE_WAY);
        if (leader) {
            counters[C_TAIL_ROUNDS] += 1;
            counters[C_TAIL_CLAIMS] += (u64)n_bad;
            counters[C_TAIL_LAST] = (u64)n_bad;
        }
        mg::grid_sync(bar);
    }
}

// ---------------------------------------------------------------------------------------
// Constrained Delaunay triangulation of a PSLG's free vertices (host side: morphgpu/dmr/
// cdt.py and cdt_gpu.py; CPU twin: cdt.insert_cpu). Triangle builds the CDT of the segment
// vertices alone over their convex hull (the triangles outside the domain flagged by the
// host, never touched); every other input vertex ("free", index fi into free_ids) is then
// inserted in rounds, the refinement's Bowyer-Watson cavities with a given vertex instead
// of a circumcentre:
//   cdt_locate      each free vertex walks to its triangle (a thread walks a run of
//                   consecutive vertices, Morton-sorted, each from the last one's triangle)
//   cdt_claim       per triangle the vertex it picked (see cdt_relocate_pick) -> claims
//   cdt_plan        the claimant's cavity (never across a segment) and ring, and its mark:
//                   the triangle's count of waiting vertices first (CDT_COUNT_BITS), then
//                   a per-round hash. Coarse-to-fine: a triangle holding many vertices
//                   wins over its finer neighbours, so the mesh refines evenly and every
//                   round's claimants spread over the domain (with the hash alone, crowded
//                   coarse triangles kept losing to the fine ones around them: the round
//                   count grew like n^0.6, 1503 rounds at 3.5M vertices on an H100)
//   CDT_PASSES x (cdt_race, cdt_prioritycheck, cdt_check, cdt_ring_lock): the claim
//                   protocol, repeated within the round among the claimants still
//                   undecided whose cavity and ring touch no winner's (Luby's rounds on
//                   the conflict graph: one pass leaves many claimants that lost only to a
//                   claimant that itself lost or waited)
//   cdt_apply       the winners' fans; written slots stamped, their picks reset
//   cdt_relocate_pick
//                   a vertex whose triangle was rewritten walks around the new fan's apex
//                   to its triangle there (the fan covers the old cavity exactly) and
//                   offers itself to it for the next rounds (nearest the centroid first: a
//                   64-bit atomicMin; a vertex whose cavity was too big goes last) and
//                   counts itself there; picks and counts of triangles not rewritten
//                   persist (their vertices are the same); the waiting vertices -> the
//                   next round's list
// A cavity never crosses a segment and is empty-circle within what it can see, so every
// round leaves a CDT of the vertices inserted so far. A sign the float filter cannot decide
// (a vertex on a segment or an edge, a duplicate vertex, cocircular points) marks the vertex
// stuck; the host then hands the whole input to Triangle (cdt_gpu.py says so in the stats).
#define CDT_DONE -1      // inserted
#define CDT_OUTSIDE -2   // in a hole or outside the domain: left out, as Triangle leaves it
#define CDT_STUCK -3     // undecided sign or a walk past its bound
#define CDT_C_CLAIMS 0   // counters (u64): claimants this round (may pass the cap)
#define CDT_C_NEXT0 1    // 1 and 2: the lengths of the two active lists
#define CDT_C_TRIANGLES 3
#define CDT_C_INSERTED 4
#define CDT_C_STUCK 5
#define CDT_C_OUTSIDE 6
#define CDT_C_BIG 7      // plans whose cavity passed MAX_CAVITY (retried later)
#define CDT_COUNT_BITS 16  // the mark's priority: min(count, 2^16 - 1), then 16 hash bits
// a claimant's state within a round (cdt_plan .. cdt_apply)
#define CDT_UNDECIDED 0
#define CDT_WINNER 1
#define CDT_OUT -1       // no plan, or its cavity or ring met a winner's

// The pick key: the squared distance to the triangle's centroid (float bits; +inf for a
// vertex whose cavity was too big: others of the triangle first), then the vertex.
__device__ __forceinline__ u64 cdt_key(const MeshView& m, vid_t t, double px, double py,
                                       bool big, i64 fi) {
    const vid_t a = corner(m, t, 0), b = corner(m, t, 1), c = corner(m, t, 2);
    const double cx = (m.x[a] + m.x[b] + m.x[c]) / 3.0, cy = (m.y[a] + m.y[b] + m.y[c]) / 3.0;
    const float d2 = (float)((px - cx) * (px - cx) + (py - cy) * (py - cy));
    const unsigned bits = big ? 0x7F800000u : __float_as_uint(d2);
    return ((u64)bits << 32) | (u64)(unsigned)fi;
}

extern "C" __global__ void cdt_locate(const double* x, const double* y, vid_t* tri, vid_t* nbr,
                                      int* seg, const unsigned char* outside,
                                      const vid_t* free_ids, i64 n_free, i64 run, vid_t start,
                                      i64 max_walk, vid_t* loc, u64* counters) {
    const MeshView m{x, y, tri, nbr, seg};
    for (i64 r = mg::global_tid(); r * run < n_free; r += mg::global_stride()) {
        vid_t cur = start;
        const i64 stop = (r + 1) * run < n_free ? (r + 1) * run : n_free;
        for (i64 fi = r * run; fi < stop; ++fi) {
            const vid_t p = free_ids[fi];
            const double px = x[p], py = y[p];
            // A remembering stochastic walk (never back across the edge it came through;
            // the first edge tried varies): it ends in any triangulation of the hull.
            vid_t prev = -1;
            vid_t code = CDT_STUCK;
            for (i64 step = 0; step < max_walk; ++step) {
                const int k0 = (int)(mg::claim_priority((u64)step, (u64)fi) % 3u);
                int next_k = -1;
                bool unsure = false;
                for (int j = 0; j < 3; ++j) {
                    const int k = (k0 + j) % 3;
                    const vid_t o = nbr[3 * (i64)cur + k];
                    if (o >= 0 && o == prev) continue;
                    const vid_t u = corner(m, cur, k + 1), v = corner(m, cur, k + 2);
                    const int s = orient(x[u], y[u], x[v], y[v], px, py);
                    if (s == -1) {
                        next_k = k;
                        break;
                    }
                    if (s == kUnknown) unsure = true;
                }
                if (next_k < 0) {
                    code = unsure ? CDT_STUCK : (outside[cur] ? CDT_OUTSIDE : cur);
                    break;
                }
                const vid_t o = nbr[3 * (i64)cur + next_k];
                if (o < 0) {  // beyond the hull of the segment vertices
                    code = CDT_OUTSIDE;
                    break;
                }
                prev = cur;
                cur = o;
            }
            loc[fi] = code;
            if (code == CDT_STUCK) atomicAdd(counters + CDT_C_STUCK, 1ull);
            else if (code == CDT_OUTSIDE) atomicAdd(counters + CDT_C_OUTSIDE, 1ull);
        }
    }
}

// The active list: `list[0 .. *n_list)`, or with list == nullptr every free vertex below
// n_all (the first round).
__device__ __forceinline__ i64 cdt_list_length(const vid_t* list, const u64* n_list, i64 n_all) {
    return list ? (i64)mg::load_volatile(n_list) : n_all;
}

// The picked vertices -> claims (the first max_claims of them; *n_claims counts them all;
// a triangle past the cap keeps its pick and count for the next round). Zeroes the count
// of the list the coming cdt_relocate_pick fills. *n_claims is zeroed by the host's
// previous read (cdt_gpu.py) or by the last round's cdt_apply.
extern "C" __global__ void cdt_claim(const vid_t* list, const u64* n_list, i64 n_all,
                                     const vid_t* loc, u64* pick, unsigned* count,
                                     vid_t* claims, i64 max_claims, u64* n_claims,
                                     u64* n_next) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *n_next = 0;
    const i64 n = cdt_list_length(list, n_list, n_all);
    for (i64 base = (i64)blockIdx.x * DMR_BLOCK; base < n; base += (i64)gridDim.x * DMR_BLOCK) {
        const i64 i = base + threadIdx.x;
        const i64 fi = i < n ? (list ? list[i] : i) : -1;
        const vid_t t = fi >= 0 ? loc[fi] : -1;
        const bool picked = t >= 0 && (unsigned)pick[t] == (unsigned)fi;
        const i64 slot = mg::block_reserve<DMR_BLOCK>(n_claims, picked ? 1 : 0);
        if (picked && slot < max_claims) claims[slot] = (vid_t)fi;
    }
}

__device__ __forceinline__ u64 cdt_mark(unsigned count, u64 round, i64 i) {
    const unsigned c = count < (1u << CDT_COUNT_BITS) ? count : (1u << CDT_COUNT_BITS) - 1;
    const unsigned prio = (c << (32 - CDT_COUNT_BITS)) |
                          (mg::claim_priority(round, (u64)i) >> CDT_COUNT_BITS);
    return mg::claim_mark(prio, (unsigned)i);
}

extern "C" __global__ void cdt_plan(
    const double* x, const double* y, vid_t* tri, vid_t* nbr, int* seg, const vid_t* free_ids,
    const vid_t* claims, i64 n_claims, u64 round, vid_t* loc, unsigned char* big, u64* pick,
    unsigned* count, unsigned* written, u64* cmark, int* state, vid_t* hood, int* n_cavity,
    int* n_hood, u64* counters) {
    const MeshView m{x, y, tri, nbr, seg};
    for (i64 i = mg::global_tid(); i < n_claims; i += mg::global_stride()) {
        state[i] = CDT_OUT;
        n_cavity[i] = -1;
        const vid_t fi = claims[i];
        const vid_t t = loc[fi];
        const unsigned waiting = count[t];  // t is this claimant's alone this round
        const vid_t p = free_ids[fi];
        const double px = x[p], py = y[p];
        Cavity cav;
        cav.n = 1;
        cav.tri[0] = t;
        const GrowResult grown = grow_cavity(m, cav, px, py);
        if (grown == kTooBig) {
            // its key goes last: t's vertices offer themselves again (cdt_relocate_pick
            // takes t as rewritten this round; cdt_apply resets what a winner writes the
            // same way)
            big[fi] = 1;
            pick[t] = ~0ull;
            count[t] = 0;
            written[t] = (unsigned)(round + 1);
            atomicAdd(counters + CDT_C_BIG, 1ull);
            continue;
        }
        vid_t bu[MAX_BOUNDARY], bv[MAX_BOUNDARY], bo[MAX_BOUNDARY];
        int bseg[MAX_BOUNDARY];
        const int nb = grown == kGrown ? cavity_boundary(m, cav, -1, px, py, bu, bv, bo, bseg)
                                       : -1;
        // an interior vertex's cavity is a disc whose fan has two triangles more; anything
        // else (an undecided sign, a vertex on the cavity's boundary) is not ours to insert
        if (nb != cav.n + 2) {
            loc[fi] = CDT_STUCK;
            atomicAdd(counters + CDT_C_STUCK, 1ull);
            continue;
        }
        vid_t* h = hood + i * MAX_HOOD;
        int nh = 0;
        for (int j = 0; j < cav.n; ++j) h[nh++] = cav.tri[j];
        for (int j = 0; j < nb; ++j)
            if (bo[j] >= 0) h[nh++] = bo[j];
        n_cavity[i] = cav.n;
        n_hood[i] = nh;
        cmark[i] = cdt_mark(waiting, round, i);
        state[i] = CDT_UNDECIDED;
    }
}

// One pass of the claim protocol. `pass` (round * CDT_PASSES + pass + 1, never 0) stamps
// the marks raced in it (mark_round) and the claimants racing (racing); `lock_stamp`
// (2 * (round + 1)) marks the triangles of this round's winners in `lock`: lock_stamp for
// a ring triangle, lock_stamp + 1 for a cavity one (cdt_ring_lock). A claimant still
// undecided races only when its cavity touches no winner's cavity or ring and its ring no
// winner's cavity; otherwise it is out for the round.
extern "C" __global__ void cdt_race(i64 n_claims, unsigned pass, unsigned lock_stamp,
                                    const unsigned* lock, const vid_t* hood,
                                    const int* n_cavity, const int* n_hood, const u64* cmark,
                                    int* state, unsigned* racing, u64* marks,
                                    unsigned* mark_round) {
    for (i64 i = mg::global_tid(); i < n_claims; i += mg::global_stride()) {
        if (state[i] != CDT_UNDECIDED) continue;
        const vid_t* h = hood + i * MAX_HOOD;
        const int nc = n_cavity[i], nh = n_hood[i];
        bool free_hood = true;
        for (int j = 0; j < nh && free_hood; ++j) {
            const unsigned l = lock[h[j]];
            free_hood = j < nc ? (l >> 1) != (lock_stamp >> 1) : l != lock_stamp + 1;
        }
        if (!free_hood) {
            state[i] = CDT_OUT;
            continue;
        }
        racing[i] = pass;
        mg::conflict_race(marks, h, nc, cmark[i]);
        for (int j = 0; j < nc; ++j) mark_round[h[j]] = pass;
    }
}

extern "C" __global__ void cdt_prioritycheck(i64 n_claims, unsigned pass, const vid_t* hood,
                                             const int* n_cavity, const u64* cmark,
                                             unsigned* racing, u64* marks) {
    for (i64 i = mg::global_tid(); i < n_claims; i += mg::global_stride()) {
        if (racing[i] != pass) continue;
        if (!mg::conflict_prioritycheck(marks, hood + i * MAX_HOOD, n_cavity[i], cmark[i]))
            racing[i] = 0;  // lost this pass; may race again in the next
    }
}

extern "C" __global__ void cdt_check(i64 n_claims, unsigned pass, const vid_t* hood,
                                     const int* n_cavity, const u64* cmark, unsigned* racing,
                                     const u64* marks) {
    for (i64 i = mg::global_tid(); i < n_claims; i += mg::global_stride()) {
        if (racing[i] != pass) continue;
        if (!mg::conflict_check(marks, hood + i * MAX_HOOD, n_cavity[i], cmark[i]))
            racing[i] = 0;
    }
}

// A cavity winner of this pass becomes a winner unless a triangle of its ring lies in the
// cavity of another cavity winner of this pass with a higher mark (the refinement's
// ring_check_and_apply_one: such conflicts are symmetric, so the lower waits and may race
// again in the next pass if the higher's triangles leave it room). Winners lock their
// cavity and ring for the passes after this one.
extern "C" __global__ void cdt_ring_lock(i64 n_claims, unsigned pass, unsigned lock_stamp,
                                         const vid_t* hood, const int* n_cavity,
                                         const int* n_hood, const u64* cmark,
                                         const unsigned* racing, const u64* marks,
                                         const unsigned* mark_round, int* state,
                                         unsigned* lock) {
    for (i64 i = mg::global_tid(); i < n_claims; i += mg::global_stride()) {
        if (racing[i] != pass || state[i] != CDT_UNDECIDED) continue;
        const vid_t* h = hood + i * MAX_HOOD;
        const u64 mark = cmark[i];
        bool wait = false;
        for (int j = n_cavity[i]; j < n_hood[i] && !wait; ++j) {
            const vid_t o = h[j];
            if (mark_round[o] != pass) continue;
            const u64 held = marks[o];
            const i64 holder = (i64)mg::mark_claimant(held);
            wait = holder != i && holder < n_claims && racing[holder] == pass && held > mark;
        }
        if (wait) continue;
        state[i] = CDT_WINNER;
        for (int j = 0; j < n_hood[i]; ++j)
            lock[h[j]] = j < n_cavity[i] ? lock_stamp + 1 : lock_stamp;
    }
}

// The winners' fans around their vertices; every slot written gets this round's stamp,
// for cdt_relocate_pick.
extern "C" __global__ void cdt_apply(const double* x, const double* y, vid_t* tri, vid_t* nbr,
                                     int* seg, const vid_t* free_ids, const vid_t* claims,
                                     i64 n_claims, u64 round, const int* state,
                                     const vid_t* hood, const int* n_cavity, vid_t* loc,
                                     unsigned* written, u64* pick, unsigned* count,
                                     u64* counters) {
    const MeshView m{x, y, tri, nbr, seg};
    if (blockIdx.x == 0 && threadIdx.x == 0) counters[CDT_C_CLAIMS] = 0;  // for cdt_claim
    for (i64 i = mg::global_tid(); i < n_claims; i += mg::global_stride()) {
        if (state[i] != CDT_WINNER) continue;
        const vid_t* h = hood + i * MAX_HOOD;
        Cavity cav;
        cav.n = n_cavity[i];
        for (int j = 0; j < cav.n; ++j) cav.tri[j] = h[j];
        const vid_t fi = claims[i];
        const vid_t p = free_ids[fi];
        const double px = x[p], py = y[p];
        vid_t bu[MAX_BOUNDARY], bv[MAX_BOUNDARY], bo[MAX_BOUNDARY], slot[MAX_BOUNDARY];
        int bseg[MAX_BOUNDARY];
        const int nb = cavity_boundary(m, cav, -1, px, py, bu, bv, bo, bseg);
        if (nb != cav.n + 2) continue;  // cannot happen: the same inputs passed the plan
        const i64 first = (i64)atomicAdd(counters + CDT_C_TRIANGLES, 2ull);
        for (int j = 0; j < nb; ++j) slot[j] = j < cav.n ? cav.tri[j] : (vid_t)(first + j - cav.n);
        const unsigned stamp = (unsigned)(round + 1);
        for (int j = 0; j < nb; ++j) {
            write_fan_triangle(tri, nbr, seg, bu, bv, bo, bseg, slot, nb, j, p, 0, 0);
            const vid_t s = slot[j];
            written[s] = stamp;
            pick[s] = ~0ull;  // its vertices (relocated) offer themselves again
            count[s] = 0;
        }
        loc[fi] = CDT_DONE;
        atomicAdd(counters + CDT_C_INSERTED, 1ull);
    }
}

// The vertices of the list still waiting: one whose triangle was rewritten this round
// (written[t] == stamp) walks around that fan's apex (tri[3t+2]) to its triangle and
// offers itself there for the next rounds (pick, count); all of them -> the next list.
// Picks persist: a triangle not rewritten keeps its vertices, so its pick (the least key
// of them) and count stand, and its vertices skip the key and the two atomics (most
// vertices in most rounds). offer_all (the first call): every vertex offers itself in
// the triangle it was located in, without a walk.
extern "C" __global__ void cdt_relocate_pick(const double* x, const double* y, vid_t* tri,
                                             vid_t* nbr, int* seg, const vid_t* free_ids,
                                             const vid_t* list, const u64* n_list, i64 n_all,
                                             vid_t* loc, const unsigned* written,
                                             unsigned stamp, int offer_all,
                                             const unsigned char* big, u64* pick,
                                             unsigned* count, vid_t* next, u64* n_next,
                                             u64* counters) {
    const MeshView m{x, y, tri, nbr, seg};
    const i64 n = cdt_list_length(list, n_list, n_all);
    for (i64 base = (i64)blockIdx.x * DMR_BLOCK; base < n; base += (i64)gridDim.x * DMR_BLOCK) {
        const i64 i = base + threadIdx.x;
        const i64 fi = i < n ? (list ? list[i] : i) : -1;
        vid_t t = fi >= 0 ? loc[fi] : -1;
        const bool moved = t >= 0 && written[t] == stamp;
        const bool offer = moved || (offer_all && t >= 0);
        double px = 0.0, py = 0.0;
        if (offer) {
            const vid_t p = free_ids[fi];
            px = x[p];
            py = y[p];
        }
        if (moved) {
            vid_t found = CDT_STUCK;
            for (int step = 0; step <= MAX_BOUNDARY && t >= 0; ++step) {
                const i64 e = 3 * (i64)t;
                const vid_t u = tri[e], v = tri[e + 1], q = tri[e + 2];
                // (u, v, q) counter-clockwise: edge 1 runs q -> u, edge 0 v -> q
                const int s1 = orient(x[q], y[q], x[u], y[u], px, py);
                if (s1 == -1) {
                    t = nbr[e + 1];
                    continue;
                }
                const int s0 = orient(x[v], y[v], x[q], y[q], px, py);
                if (s0 == -1) {
                    t = nbr[e];
                    continue;
                }
                if (s1 == 1 && s0 == 1) found = t;
                break;
            }
            loc[fi] = found;
            if (found == CDT_STUCK) atomicAdd(counters + CDT_C_STUCK, 1ull);
            t = found;
        }
        if (offer && t >= 0) {
            atomicMin(pick + t, cdt_key(m, t, px, py, big[fi] != 0, fi));
            atomicAdd(count + t, 1u);
        }
        const bool keep = t >= 0;
        const i64 slot = mg::block_reserve<DMR_BLOCK>(n_next, keep ? 1 : 0);
        if (keep) next[slot] = (vid_t)fi;
    }
}
