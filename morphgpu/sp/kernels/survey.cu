// Survey propagation sweeps on the factor graph (morphgpu/sp/factor.py has the layout).
//
// One sweep is two kernels launched back to back:
//   sp_var_products   per free variable, over its live clauses: the product of the
//                     non-zero factors (1 - eta) and the count of zero factors, by sign
//                     (the paper's edge caching: "all but one" becomes a division);
//   sp_clause_update  per live clause: the new survey on each of its live edges, and the
//                     sweep's max |delta eta| (atomicMax on the float's bits, which order
//                     like the floats themselves because they are non-negative).
// A clause reads only its own edges' surveys and the cached products, so it can write
// its surveys in place. sp_biases turns the same products into W+ - W- and max(W+, W-).
//
// The product kernel walks a variable's edges through slot codes (sp_slot_codes, rebuilt
// after each unit propagation): 2 * edge + negated, or -1 where the edge's clause is
// satisfied, so each edge costs one contiguous code and one gather of eta, not gathers of
// eta, lit_neg and the clause's mark; a group of lanes shares a variable so a thread no
// longer walks a degree of 40-260 (K = 4..6) alone. (Keeping the surveys in variable
// order too, scattered by the clause update, made the K=3 sweep 1.3x slower on an H200:
// 12.6M random 4-byte stores cost more than the gathers they saved.)
//
// Products are accumulated in double: a variable of degree ~40 multiplies factors near
// zero, and float32 loses the "all but one" division there. Surveys stay float32.
#include <morphgpu/common.cuh>

#ifndef SP_CODE_T
#define SP_CODE_T long long
#endif
typedef SP_CODE_T code_t;

using mg::i64;
using mg::eid_t;
using mg::vid_t;

// Per variable one 32-byte record, read as two double2 (one memory sector):
//   prods[2v]   = (product over positive occurrences, product over negative ones)
//   prods[2v+1] = (zero factors among positive occurrences, among negative ones)
// A sweep launched after the one that converged does nothing: both kernels of a sweep
// first read the previous sweep's max |delta eta| (prev_delta; +inf bits for the first of
// a batch) and return when it is below epsilon, so a batch of sweeps launched back to back
// costs no work past convergence and the host can count the sweeps that ran.
__device__ __forceinline__ bool converged_before(const unsigned* prev_delta, float epsilon) {
    return __uint_as_float(*prev_delta) < epsilon;
}

// `lanes` threads (a power of two, at most 32) share a variable: lane `sub` takes its
// slots sub, sub + lanes, ..., and the group combines its partial products and zero
// counts with shuffles. The loop is warp-uniform (every lane of a warp runs the same trip
// count) so the full-mask shuffles are legal; launch with a multiple of 32 threads.
extern "C" __global__ void sp_var_products(
    i64 n_vars, const i64* __restrict__ var_offsets, const code_t* __restrict__ codes,
    int lanes, const float* __restrict__ eta, const int* __restrict__ fixed, double2* prods,
    const unsigned* prev_delta, float epsilon)
{
    if (converged_before(prev_delta, epsilon)) return;
    const i64 tid = mg::global_tid();
    const int lane = (int)mg::lane_id();
    const int sub = lane & (lanes - 1);
    const i64 step = mg::global_stride() / lanes;
    for (i64 g = (tid - lane) / lanes; g < n_vars; g += step) {
        const i64 v = g + lane / lanes;
        const bool live = v < n_vars && fixed[v] == 0;
        double p[2] = {1.0, 1.0};
        int z[2] = {0, 0};
        if (live) {
            const i64 end = var_offsets[v + 1];
            for (i64 k = var_offsets[v] + sub; k < end; k += lanes) {
                const code_t code = codes[k];
                if (code < 0) continue;
                const int s = (int)(code & 1);
                const double f = 1.0 - (double)eta[code >> 1];
                if (f == 0.0) z[s] += 1; else p[s] *= f;
            }
        }
        for (int offset = lanes >> 1; offset > 0; offset >>= 1) {
            p[0] *= __shfl_xor_sync(0xffffffffu, p[0], offset);
            p[1] *= __shfl_xor_sync(0xffffffffu, p[1], offset);
            z[0] += __shfl_xor_sync(0xffffffffu, z[0], offset);
            z[1] += __shfl_xor_sync(0xffffffffu, z[1], offset);
        }
        if (live && sub == 0) {
            prods[2 * v] = make_double2(p[0], p[1]);
            prods[2 * v + 1] = make_double2((double)z[0], (double)z[1]);
        }
    }
}

// Slot k of variable order (edge var_edges[k]): 2 * edge + negated, -1 if its clause is
// satisfied.
extern "C" __global__ void sp_slot_codes(
    i64 n_slots, const eid_t* __restrict__ var_edges, int width,
    const signed char* __restrict__ lit_neg, const unsigned char* __restrict__ satisfied,
    code_t* codes)
{
    for (i64 k = mg::global_tid(); k < n_slots; k += mg::global_stride()) {
        const i64 e = (i64)var_edges[k];
        codes[k] = satisfied[e / width] ? (code_t)-1 : (code_t)(2 * e + (lit_neg[e] ? 1 : 0));
    }
}

// Pi^u / (Pi^u + Pi^s + Pi^0) of variable v seen from the clause whose edge is e.
__device__ __forceinline__ double edge_ratio(
    i64 e, vid_t v, const signed char* lit_neg, const float* eta, const double2* prods)
{
    const bool neg = lit_neg[e] != 0;
    const double2 p = prods[2 * (i64)v];
    const double2 z = prods[2 * (i64)v + 1];
    const double p_same = neg ? p.y : p.x;
    const int z_same = (int)(neg ? z.y : z.x);
    const double p_opp = neg ? p.x : p.y;
    const int z_opp = (int)(neg ? z.x : z.y);
    const double own = 1.0 - (double)eta[e];
    double same;
    if (own == 0.0) same = (z_same - 1 > 0) ? 0.0 : p_same;
    else same = (z_same > 0) ? 0.0 : fmin(p_same / own, 1.0);
    const double opp = (z_opp > 0) ? 0.0 : p_opp;
    const double pi_u = (1.0 - opp) * same;
    const double pi_s = (1.0 - same) * opp;
    const double pi_0 = same * opp;
    const double total = pi_u + pi_s + pi_0;
    return total > 0.0 ? pi_u / total : 0.0;
}

#define RATIO_CACHE 8

extern "C" __global__ void sp_clause_update(
    i64 n_clauses, int width, const vid_t* __restrict__ lit_var,
    const signed char* __restrict__ lit_neg, float* eta, const int* __restrict__ fixed,
    const unsigned char* __restrict__ satisfied, const double2* __restrict__ prods,
    float damping, unsigned* max_delta_bits, const unsigned* prev_delta, float epsilon)
{
    if (converged_before(prev_delta, epsilon)) return;
    float worst = 0.0f;
    for (i64 a = mg::global_tid(); a < n_clauses; a += mg::global_stride()) {
        if (satisfied[a]) continue;
        const i64 base = a * width;
        double prod = 1.0;
        int zeros = 0;
        // The first RATIO_CACHE edges' ratios are kept for the second pass (registers once
        // the loops unroll for the usual K <= 8); wider clauses recompute the rest.
        double cached[RATIO_CACHE];
        for (int j = 0; j < width; ++j) {
            const vid_t v = lit_var[base + j];
            if (v < 0 || fixed[v] != 0) continue;
            const double r = edge_ratio(base + j, v, lit_neg, eta, prods);
            if (j < RATIO_CACHE) cached[j] = r;
            if (r == 0.0) zeros += 1; else prod *= r;
        }
        for (int i = 0; i < width; ++i) {
            const vid_t v = lit_var[base + i];
            if (v < 0 || fixed[v] != 0) continue;
            const double r = i < RATIO_CACHE ? cached[i]
                                             : edge_ratio(base + i, v, lit_neg, eta, prods);
            double fresh;
            if (r == 0.0) fresh = (zeros - 1 > 0) ? 0.0 : prod;
            else fresh = (zeros > 0) ? 0.0 : prod / r;
            // Convergence is judged on the undamped change; damping (a share of the old
            // survey kept) only steadies the synchronous sweep, which can oscillate.
            const float old = eta[base + i];
            const float undamped = (float)fmin(fresh, 1.0);
            worst = fmaxf(worst, fabsf(undamped - old));
            eta[base + i] = (1.0f - damping) * undamped + damping * old;
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1)
        worst = fmaxf(worst, __shfl_xor_sync(0xffffffffu, worst, offset));
    if (mg::lane_id() == 0 && worst > 0.0f) atomicMax(max_delta_bits, __float_as_uint(worst));
}

extern "C" __global__ void sp_biases(
    i64 n_vars, const int* __restrict__ fixed, const double2* __restrict__ prods, float* diff,
    float* strength)
{
    for (i64 v = mg::global_tid(); v < n_vars; v += mg::global_stride()) {
        if (fixed[v] != 0) { diff[v] = 0.0f; strength[v] = 0.0f; continue; }
        const double2 p = prods[2 * v];
        const double2 z = prods[2 * v + 1];
        const double pp = z.x > 0.0 ? 0.0 : p.x;
        const double pn = z.y > 0.0 ? 0.0 : p.y;
        const double pi_plus = (1.0 - pp) * pn;
        const double pi_minus = (1.0 - pn) * pp;
        const double total = pi_plus + pi_minus + pp * pn;
        const double w_plus = total > 0.0 ? pi_plus / total : 0.0;
        const double w_minus = total > 0.0 ? pi_minus / total : 0.0;
        diff[v] = (float)(w_plus - w_minus);
        strength[v] = (float)fmax(w_plus, w_minus);
    }
}
