// Simplification after fixing variables: satisfied clauses are marked (removed from the
// graph, paper §7.2) and unit clauses fix their last free literal.
//
// One launch is one wave over the open clauses (a list the host keeps, kernels/survey.cu's
// compaction: a superset of the open ones, as marks only grow); the host relaunches while
// a wave fixed something. Values only ever go from 0 to +-1 (atomicCAS), so a clause that
// sees all its literals fixed and false is false for good (a contradiction), and two unit
// clauses that force opposite values on one variable meet at the CAS: the loser reports
// the contradiction, as the clause it holds has then lost its last literal.
#include <morphgpu/common.cuh>

using mg::eid_t;
using mg::i64;
using mg::vid_t;

extern "C" __global__ void unit_wave(
    i64 n_listed, const eid_t* __restrict__ clause_list, int width,
    const vid_t* __restrict__ lit_var, const signed char* __restrict__ lit_neg, int* fixed,
    unsigned char* satisfied, int* changed, int* contradiction)
{
    for (i64 t = mg::global_tid(); t < n_listed; t += mg::global_stride()) {
        const i64 a = (i64)clause_list[t];
        if (satisfied[a]) continue;
        const i64 base = a * width;
        int n_free = 0;
        int last_free = -1;
        bool is_true = false;
        for (int j = 0; j < width; ++j) {
            const vid_t v = lit_var[base + j];
            if (v < 0) continue;
            const int value = mg::load_volatile(fixed + v);
            if (value == 0) { n_free += 1; last_free = j; }
            else if ((value > 0) != (lit_neg[base + j] != 0)) { is_true = true; break; }
        }
        if (is_true) { satisfied[a] = 1; continue; }
        if (n_free == 0) { *contradiction = 1; continue; }
        if (n_free == 1) {
            const vid_t v = lit_var[base + last_free];
            const int want = lit_neg[base + last_free] ? -1 : 1;
            const int old = atomicCAS(fixed + v, 0, want);
            if (old == 0) *changed = 1;
            else if (old != want) *contradiction = 1;
        }
    }
}

// Fix the chosen variables to the sign of their bias (ties go to true), recording them as
// decisions (backtracking releases decisions; unit propagation's values are recomputed).
extern "C" __global__ void fix_chosen(
    i64 n_chosen, const i64* __restrict__ chosen, const float* __restrict__ diff, int* fixed,
    int* decided)
{
    for (i64 t = mg::global_tid(); t < n_chosen; t += mg::global_stride()) {
        const i64 v = chosen[t];
        const int value = diff[v] >= 0.0f ? 1 : -1;
        fixed[v] = value;
        decided[v] = value;
    }
}
