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

// Groups of `lanes` threads (a power of two, at most 32) over a list: item = g +
// lane / lanes for g = first, first + step, ...; g stays the same across a warp, so loops
// over it are warp-uniform and full-mask shuffles and ballots inside them are legal.
struct LaneGroups {
    int lane;  // in the warp
    int sub;   // in the group
    i64 first;
    i64 step;
};

__device__ __forceinline__ LaneGroups lane_groups(int lanes) {
    const int lane = (int)mg::lane_id();
    return {lane, lane & (lanes - 1), (mg::global_tid() - lane) / lanes,
            mg::global_stride() / lanes};
}

// `lanes` threads (a power of two, at most 32) share a variable: lane `sub` takes its
// slots sub, sub + lanes, ..., and the group combines its partial products and zero
// counts with shuffles. The loop is warp-uniform (every lane of a warp runs the same trip
// count) so the full-mask shuffles are legal; launch with a multiple of 32 threads.
// Variables are those of the host's list (var_list[item], its slots offsets[item] ..
// offsets[item + 1] of codes), which compaction (below) keeps to the free variables and
// their open clauses' slots.
extern "C" __global__ void sp_var_products(
    i64 n_list, const vid_t* __restrict__ var_list, const i64* __restrict__ offsets,
    const code_t* __restrict__ codes, int lanes, const float* __restrict__ eta,
    const int* __restrict__ fixed, double2* prods, const unsigned* prev_delta, float epsilon)
{
    if (converged_before(prev_delta, epsilon)) return;
    const LaneGroups lg = lane_groups(lanes);
    const int sub = lg.sub;
    for (i64 g = lg.first; g < n_list; g += lg.step) {
        const i64 item = g + lg.lane / lanes;
        const i64 v = item < n_list ? (i64)var_list[item] : 0;
        const bool live = item < n_list && fixed[v] == 0;
        // By sign in named registers, not arrays indexed by the sign: an indexed array
        // would sit in local memory (ptxas: a 32-byte stack frame per thread).
        double p_pos = 1.0, p_neg = 1.0;
        int z_pos = 0, z_neg = 0;
        if (live) {
            const i64 end = offsets[item + 1];
            for (i64 k = offsets[item] + sub; k < end; k += lanes) {
                const code_t code = codes[k];
                if (code < 0) continue;
                const bool negated = (code & 1) != 0;
                const double f = 1.0 - (double)eta[code >> 1];
                const bool zero = f == 0.0;
                const double factor = zero ? 1.0 : f;
                if (negated) { p_neg *= factor; z_neg += zero; }
                else { p_pos *= factor; z_pos += zero; }
            }
        }
        for (int offset = lanes >> 1; offset > 0; offset >>= 1) {
            p_pos *= __shfl_xor_sync(0xffffffffu, p_pos, offset);
            p_neg *= __shfl_xor_sync(0xffffffffu, p_neg, offset);
            z_pos += __shfl_xor_sync(0xffffffffu, z_pos, offset);
            z_neg += __shfl_xor_sync(0xffffffffu, z_neg, offset);
        }
        if (live && sub == 0) {
            prods[2 * v] = make_double2(p_pos, p_neg);
            prods[2 * v + 1] = make_double2((double)z_pos, (double)z_neg);
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

// Compaction, after each unit propagation: the sweeps move to a smaller formula holding
// only what is still open. The host keeps the open clauses (in the same fixed-width layout,
// fixed variables' literals turned to -1, surveys carried over; clause_list holds their
// ids in the input) and renumbers them: new_index[c] is clause c's place among the kept
// ones, -1 if it was satisfied. Here the variable side follows: sp_live_counts counts each
// listed free variable's slots in kept clauses, the host scans the counts, and
// sp_compact_codes copies those slots' codes, renumbered. A sweep then reads dense arrays
// of what is open, with no satisfied or fixed marks to look up: at K=4 ratio 9.9 the late
// decimation rounds, one of which runs to the sweep cap, hold about 40% of the edges.
__device__ __forceinline__ bool slot_open(code_t code, int width,
                                          const i64* __restrict__ new_index) {
    return code >= 0 && new_index[(i64)(code >> 1) / width] >= 0;
}

// The code of the same slot in the renumbered clauses.
__device__ __forceinline__ code_t renumbered(code_t code, int width,
                                             const i64* __restrict__ new_index) {
    const i64 edge = (i64)(code >> 1);
    const i64 clause = edge / width;
    return (code_t)(((new_index[clause] * width + (edge - clause * width)) << 1) | (code & 1));
}

extern "C" __global__ void sp_live_counts(
    i64 n_list, const vid_t* __restrict__ var_list, const i64* __restrict__ offsets,
    const code_t* __restrict__ codes, int width, const int* __restrict__ fixed,
    const i64* __restrict__ new_index, int lanes, i64* counts)
{
    const LaneGroups lg = lane_groups(lanes);
    const int sub = lg.sub;
    for (i64 g = lg.first; g < n_list; g += lg.step) {
        const i64 item = g + lg.lane / lanes;
        i64 count = 0;
        if (item < n_list && fixed[var_list[item]] == 0) {
            const i64 end = offsets[item + 1];
            for (i64 k = offsets[item] + sub; k < end; k += lanes)
                count += slot_open(codes[k], width, new_index) ? 1 : 0;
        }
        for (int offset = lanes >> 1; offset > 0; offset >>= 1)
            count += __shfl_xor_sync(0xffffffffu, count, offset);
        if (item < n_list && sub == 0) counts[item] = count;
    }
}

// A group's lanes take `lanes` consecutive slots per step and place the open ones by a
// ballot, so the copy keeps each variable's slot order. The step count is the warp's
// largest, so every lane of the warp reaches every ballot.
extern "C" __global__ void sp_compact_codes(
    i64 n_list, const vid_t* __restrict__ var_list, const i64* __restrict__ offsets,
    const code_t* __restrict__ codes, int width, const int* __restrict__ fixed,
    const i64* __restrict__ new_index, int lanes, const i64* __restrict__ new_offsets,
    code_t* new_codes)
{
    const LaneGroups lg = lane_groups(lanes);
    const int sub = lg.sub;
    const int group_first = lg.lane & ~(lanes - 1);
    const unsigned group_bits = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
    for (i64 g = lg.first; g < n_list; g += lg.step) {
        const i64 item = g + lg.lane / lanes;
        const bool live = item < n_list && fixed[var_list[item]] == 0;
        const i64 begin = live ? offsets[item] : 0;
        const i64 end = live ? offsets[item + 1] : 0;
        i64 out = live ? new_offsets[item] : 0;
        i64 steps = (end - begin + lanes - 1) / lanes;
        for (int offset = 16; offset > 0; offset >>= 1)
            steps = max(steps, (i64)__shfl_xor_sync(0xffffffffu, steps, offset));
        for (i64 t = 0; t < steps; ++t) {
            const i64 k = begin + t * lanes + sub;
            const code_t code = k < end ? codes[k] : (code_t)-1;
            const bool keep = k < end && slot_open(code, width, new_index);
            const unsigned bits = (__ballot_sync(0xffffffffu, keep) >> group_first) & group_bits;
            if (keep)
                new_codes[out + __popc(bits & ((1u << sub) - 1u))] =
                    renumbered(code, width, new_index);
            out += __popc(bits);
        }
    }
}

// Pi^u / (Pi^u + Pi^s + Pi^0) of variable v, whose literal is negated when `neg`, seen
// from a clause whose factor in v's products is `own` (1 - its survey; 1 when the clause
// is not in them).
__device__ __forceinline__ double ratio_with_own(
    bool neg, vid_t v, double own, const double2* prods)
{
    const double2 p = prods[2 * (i64)v];
    const double2 z = prods[2 * (i64)v + 1];
    const double p_same = neg ? p.y : p.x;
    const int z_same = (int)(neg ? z.y : z.x);
    const double p_opp = neg ? p.x : p.y;
    const int z_opp = (int)(neg ? z.x : z.y);
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

// The same of variable v seen from the clause whose edge is e (a live edge: its survey is
// in v's products).
__device__ __forceinline__ double edge_ratio(
    i64 e, vid_t v, const signed char* lit_neg, const float* eta, const double2* prods)
{
    return ratio_with_own(lit_neg[e] != 0, v, 1.0 - (double)eta[e], prods);
}

#define RATIO_CACHE 8

// SP_WIDTH, when the host defines it (clause widths up to RATIO_CACHE), makes the clause
// width a constant: the loops over a clause's edges unroll and the ratio cache lives in
// registers; with a run-time width it is an indexed array in local memory (a 64-byte
// stack frame per thread).
#ifdef SP_WIDTH
#define CLAUSE_WIDTH(w) SP_WIDTH
#else
#define CLAUSE_WIDTH(w) (w)
#endif

// Over the n_clauses clauses of lit_var / lit_neg / eta: the input formula, whose
// satisfied clauses and fixed variables the kernel skips by their marks, or the compacted
// one (compacted != 0), where every clause is open and every literal left is free.
extern "C" __global__ void sp_clause_update(
    i64 n_clauses, int compacted, int width, const vid_t* __restrict__ lit_var,
    const signed char* __restrict__ lit_neg, float* eta, const int* __restrict__ fixed,
    const unsigned char* __restrict__ satisfied, const double2* __restrict__ prods,
    float damping, unsigned* max_delta_bits, const unsigned* prev_delta, float epsilon)
{
    if (converged_before(prev_delta, epsilon)) return;
    width = CLAUSE_WIDTH(width);
    float worst = 0.0f;
    for (i64 a = mg::global_tid(); a < n_clauses; a += mg::global_stride()) {
        if (!compacted && satisfied[a]) continue;
        const i64 base = a * width;
        double prod = 1.0;
        int zeros = 0;
        // The first RATIO_CACHE edges' ratios are kept for the second pass (registers once
        // the loops unroll for the usual K <= 8); wider clauses recompute the rest.
        double cached[RATIO_CACHE];
        for (int j = 0; j < width; ++j) {
            const vid_t v = lit_var[base + j];
            if (v < 0 || (!compacted && fixed[v] != 0)) continue;
            const double r = edge_ratio(base + j, v, lit_neg, eta, prods);
            if (j < RATIO_CACHE) cached[j] = r;
            if (r == 0.0) zeros += 1; else prod *= r;
        }
        for (int i = 0; i < width; ++i) {
            const vid_t v = lit_var[base + i];
            if (v < 0 || (!compacted && fixed[v] != 0)) continue;
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

// Backtracking survey propagation (morphgpu/sp/api.py): per decided variable v (decided[v]
// = its value, +-1), s * (W+ - W-) with s that value and W v's SP marginal as if it were
// free; +inf for the others. The cavity survey of v's clause a is 0 when another
// variable's fixed value satisfies a, else the product over a's free variables u of their
// ratio from u's products, in which a is only when open (v's literal false; own factor
// 1 - eta) and not when v alone satisfies it (own factor 1). Those surveys feed nothing
// else (v is out of every clause), so this one evaluation after SP converged is the value
// the sweeps would give them. eta is in the input formula's edge order; prods are fresh
// for the free variables. One thread per variable: the kernel runs once per backtracking
// step.
extern "C" __global__ void sp_decided_scores(
    i64 n_vars, const int* __restrict__ decided, const int* __restrict__ fixed,
    const i64* __restrict__ var_offsets, const eid_t* __restrict__ var_edges, int width,
    const vid_t* __restrict__ lit_var, const signed char* __restrict__ lit_neg,
    const float* __restrict__ eta, const double2* __restrict__ prods, float* score)
{
    width = CLAUSE_WIDTH(width);
    for (i64 v = mg::global_tid(); v < n_vars; v += mg::global_stride()) {
        const int s = decided[v];
        if (s == 0) { score[v] = __int_as_float(0x7f800000); continue; }  // +inf
        double p_pos = 1.0, p_neg = 1.0;
        int z_pos = 0, z_neg = 0;
        for (i64 k = var_offsets[v]; k < var_offsets[v + 1]; ++k) {
            const i64 e = (i64)var_edges[k];
            const i64 base = e - e % width;
            const bool negated = lit_neg[e] != 0;
            const bool open = (fixed[v] > 0) == negated;  // v's literal is false in a
            double cavity = 1.0;
            for (int j = 0; j < width; ++j) {
                const i64 e2 = base + j;
                const vid_t u = lit_var[e2];
                if (e2 == e || u < 0) continue;
                const int fu = fixed[u];
                if (fu != 0) {
                    if ((fu > 0) != (lit_neg[e2] != 0)) { cavity = 0.0; break; }
                    continue;
                }
                const double own = open ? 1.0 - (double)eta[e2] : 1.0;
                cavity *= ratio_with_own(lit_neg[e2] != 0, u, own, prods);
            }
            const double f = 1.0 - cavity;
            const bool zero = f == 0.0;
            const double factor = zero ? 1.0 : f;
            if (negated) { p_neg *= factor; z_neg += zero; }
            else { p_pos *= factor; z_pos += zero; }
        }
        const double pp = z_pos > 0 ? 0.0 : p_pos;
        const double pn = z_neg > 0 ? 0.0 : p_neg;
        const double pi_plus = (1.0 - pp) * pn;
        const double pi_minus = (1.0 - pn) * pp;
        const double total = pi_plus + pi_minus + pp * pn;
        const double w_plus = total > 0.0 ? pi_plus / total : 0.0;
        const double w_minus = total > 0.0 ? pi_minus / total : 0.0;
        score[v] = (float)(s * (w_plus - w_minus));
    }
}
