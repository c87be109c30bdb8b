// fastText's two inner loops as MXNet operators (CPU), loaded with mx.library.load by bag_ops.py.
//
// A batch is a CSR bag of feature rows per document: document d owns the entries
// offsets[d] .. offsets[d+1]-1, each a row index into a table and a weight (count / length).
//
//   fasttext_bag_mean(table, offsets, index, weights) -> docs (n, dim)
//       docs[d] = sum_e weights[e] * table[index[e]]: the mean embedding, read straight from the
//       (possibly 2M-row) table, without gathering the batch's rows into a copy first.
//   fasttext_bag_mean_backward(offsets, index, weights, docs_grad; num_rows, doc_freq_scale, shrink)
//       -> grad (num_rows, dim): grad[r] = sum_e weights[e] * docs_grad[doc of e] over the entries
//       with index[e] == r, here with index the batch's *compact* column (0 .. num_rows-1), so the
//       result is the row-sparse gradient's value array. doc_freq_scale=1 multiplies row r by
//       n / (documents that contain r), shrink=k > 0 by n (1 + k) / (documents that contain r + k):
//       see batches.sgd_row_scale_entries for why SGD wants that.
//
// Both are deterministic whatever the thread count: a document's mean and a row's gradient are
// each summed by one thread in entry order (threads split documents, resp. output rows).
#include <omp.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mxnet/lib_api.h"

using mxnet::ext::MXContext;
using mxnet::ext::MXReturnValue;
using mxnet::ext::MXTensor;
using mxnet::ext::OpResource;
using mxnet::ext::MX_FAIL;
using mxnet::ext::MX_SUCCESS;
using Attrs = std::unordered_map<std::string, std::string>;
using Shapes = std::vector<std::vector<unsigned int>>;

namespace {

MXReturnValue fail(const std::string& msg) {
  MX_ERROR_MSG << msg;
  return MX_FAIL;
}

// Input dtypes, in the order the operators take them.
const int kTable = mxnet::ext::kFloat32, kOffsets = mxnet::ext::kInt64, kIndex = mxnet::ext::kInt32,
          kWeights = mxnet::ext::kFloat32;

// offsets must run from 0 to nnz without going back, or a document would read past the entries.
bool valid_offsets(const int64_t* offsets, int64_t n, int64_t nnz) {
  if (offsets[0] != 0 || offsets[n] != nnz) return false;
  for (int64_t d = 0; d < n; ++d)
    if (offsets[d + 1] < offsets[d]) return false;
  return true;
}

bool check_types(const std::vector<int>& got, const std::vector<int>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) return false;
  return true;
}

// ---- fasttext_bag_mean ----

const int64_t kPrefetch = 8;  // entries ahead
// Below this many multiply-adds (entries x dim) an operator runs on the calling thread: a small batch
// (16 sentences: ~30k) takes microseconds, less than waking and joining OpenMP threads, which on a
// busy machine can wait a whole time slice for a descheduled thread. Results are the same either
// way (every document and row is summed by one thread in entry order).
const int64_t kParallelWork = int64_t(1) << 18;

// The OpenMP threads a bag operator uses, and a single thread for the MXNet operators that run after
// it on the same engine thread. A training step is these two table passes plus ~15 small dense
// operators (the output layer, the loss, their gradients: a batch x dim at most), for which MXNet
// opens an OpenMP region of every thread regardless of size. On short texts those regions cost more
// than their work: each wakes a sleeping thread (OMP_WAIT_POLICY=PASSIVE, fasttext_lib/__init__.py),
// and the woken thread competes for the cores with the Python thread that queues the next step
// (34k short texts, 2 cores: ~10-20% of the epoch time; docs/RESULTS.md 4). MXNet's operators read
// the thread count of the engine thread that runs them (omp_get_max_threads), which is what this sets;
// the bag operators keep the count MXNet had given that thread. Thread counts never change results
// here: every document and row is summed by one thread, and MXNet's dense operators split rows.
thread_local int bag_threads_seen = -1;  // reported by fasttext_engine_threads

int claim_threads() {
  static thread_local const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  bag_threads_seen = threads;
  return threads;
}

MXReturnValue mean_attrs(const Attrs&, int* num_in, int* num_out) {
  *num_in = 4;
  *num_out = 1;
  return MX_SUCCESS;
}

MXReturnValue mean_types(const Attrs&, std::vector<int>* in, std::vector<int>* out) {
  if (!check_types(*in, {kTable, kOffsets, kIndex, kWeights}))
    return fail("fasttext_bag_mean takes (float32 table, int64 offsets, int32 index, float32 weights)");
  (*out)[0] = mxnet::ext::kFloat32;
  return MX_SUCCESS;
}

MXReturnValue mean_shapes(const Attrs&, Shapes* in, Shapes* out) {
  const Shapes& s = *in;
  if (s[0].size() != 2 || s[1].size() != 1 || s[1][0] < 1 || s[2].size() != 1 || s[3] != s[2])
    return fail("fasttext_bag_mean: table must be 2-D, offsets 1-D and non-empty, index and weights 1-D of one length");
  (*out)[0] = {s[1][0] - 1, s[0][1]};
  return MX_SUCCESS;
}

MXReturnValue mean_forward(const Attrs&, std::vector<MXTensor>* in, std::vector<MXTensor>* out,
                           const OpResource&) {
  const int threads = claim_threads();
  const float* table = (*in)[0].data<float>();
  const int64_t rows = (*in)[0].shape[0], dim = (*in)[0].shape[1];
  const int64_t* offsets = (*in)[1].data<int64_t>();
  const int32_t* index = (*in)[2].data<int32_t>();
  const float* weights = (*in)[3].data<float>();
  const int64_t n = (*out)[0].shape[0], nnz = (*in)[2].shape[0];
  float* docs = (*out)[0].data<float>();
  if (!valid_offsets(offsets, n, nnz)) return fail("fasttext_bag_mean: offsets do not span the entries in order");
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (nnz * dim >= kParallelWork) num_threads(threads)
  for (int64_t d = 0; d < n; ++d) {
    float* acc = docs + d * dim;
    std::memset(acc, 0, dim * sizeof(float));
    for (int64_t e = offsets[d]; e < offsets[d + 1]; ++e) {
      // The table is far larger than the caches: ask for a later entry's row while summing this one.
      if (e + kPrefetch < offsets[d + 1]) {
        const int64_t ahead = index[e + kPrefetch];
        if (ahead >= 0 && ahead < rows)
          for (int64_t k = 0; k < dim; k += 16) __builtin_prefetch(table + ahead * dim + k);
      }
      const int64_t r = index[e];
      if (r < 0 || r >= rows) {
        bad = 1;
        continue;
      }
      const float w = weights[e];
      const float* row = table + r * dim;
      for (int64_t k = 0; k < dim; ++k) acc[k] += w * row[k];
    }
  }
  if (bad) return fail("fasttext_bag_mean: an index is outside the table");
  return MX_SUCCESS;
}

// ---- fasttext_bag_mean_backward ----

int64_t int_attr(const Attrs& attrs, const char* name, int64_t fallback) {
  auto it = attrs.find(name);
  return it == attrs.end() ? fallback : std::stoll(it->second);
}

double float_attr(const Attrs& attrs, const char* name, double fallback) {
  auto it = attrs.find(name);
  return it == attrs.end() ? fallback : std::stod(it->second);
}

MXReturnValue grad_attrs(const Attrs& attrs, int* num_in, int* num_out) {
  if (int_attr(attrs, "num_rows", -1) < 1) return fail("fasttext_bag_mean_backward needs num_rows >= 1");
  *num_in = 4;
  *num_out = 1;
  return MX_SUCCESS;
}

MXReturnValue grad_types(const Attrs&, std::vector<int>* in, std::vector<int>* out) {
  if (!check_types(*in, {kOffsets, kIndex, kWeights, mxnet::ext::kFloat32}))
    return fail("fasttext_bag_mean_backward takes (int64 offsets, int32 index, float32 weights, float32 docs_grad)");
  (*out)[0] = mxnet::ext::kFloat32;
  return MX_SUCCESS;
}

MXReturnValue grad_shapes(const Attrs& attrs, Shapes* in, Shapes* out) {
  const Shapes& s = *in;
  if (s[0].size() != 1 || s[1].size() != 1 || s[2] != s[1] || s[3].size() != 2 || s[3][0] + 1 != s[0][0])
    return fail("fasttext_bag_mean_backward: offsets (n+1), index and weights (nnz), docs_grad (n, dim)");
  (*out)[0] = {static_cast<unsigned int>(int_attr(attrs, "num_rows", 1)), s[3][1]};
  return MX_SUCCESS;
}

// The batch transposed by counting sort: the entries of compact row r are starts[r] .. starts[r+1]-1,
// in document order (the sort is stable), so a row's gradient is summed in one go from the small
// docs_grad and written once. Lives in the op's workspace (MXNet hands out one temporary space per
// op call: every alloc_cpu returns the same memory, so it is requested once).
struct Transposed {
  int64_t* starts;
  int32_t* entry_doc;
  float* entry_weight;
  int64_t docs;

  static MXReturnValue make(const int64_t* offsets, const int32_t* index, const float* weights, int64_t n,
                            int64_t nnz, int64_t rows, const OpResource& res, Transposed* t) {
    if (!valid_offsets(offsets, n, nnz)) return fail("fasttext bag ops: offsets do not span the entries in order");
    for (int64_t e = 0; e < nnz; ++e)
      if (index[e] < 0 || index[e] >= rows) return fail("fasttext bag ops: a column is outside the batch's rows");
    const int64_t bytes = (rows + 1) * sizeof(int64_t) + nnz * (sizeof(int32_t) + sizeof(float));
    if (bytes > INT32_MAX) return fail("fasttext bag ops: batch too large, use a smaller batch size");
    char* space = static_cast<char*>(res.alloc_cpu(static_cast<int>(bytes)));
    t->starts = reinterpret_cast<int64_t*>(space);
    t->entry_weight = reinterpret_cast<float*>(space + (rows + 1) * sizeof(int64_t));
    t->entry_doc = reinterpret_cast<int32_t*>(t->entry_weight + nnz);
    t->docs = n;
    std::memset(t->starts, 0, (rows + 1) * sizeof(int64_t));
    for (int64_t e = 0; e < nnz; ++e) ++t->starts[index[e] + 1];
    for (int64_t r = 0; r < rows; ++r) t->starts[r + 1] += t->starts[r];
    std::vector<int64_t> next(t->starts, t->starts + rows);
    for (int64_t d = 0; d < n; ++d) {
      for (int64_t e = offsets[d]; e < offsets[d + 1]; ++e) {
        const int64_t at = next[index[e]]++;
        t->entry_doc[at] = static_cast<int32_t>(d);
        t->entry_weight[at] = weights[e];
      }
    }
    return MX_SUCCESS;
  }

  // acc = gradient of compact row r: sum over its entries of weight * docs_grad[doc]. With
  // doc_freq_scale, times n / (documents that contain r), or with shrink k > 0 times
  // n (1 + k) / (documents that contain r + k); see batches.sgd_row_scale_entries.
  void row_gradient(int64_t r, const float* dh, int64_t dim, bool doc_freq_scale, double shrink, float* acc) const {
    std::memset(acc, 0, dim * sizeof(float));
    const int64_t first = starts[r], last = starts[r + 1];
    const float scale = !doc_freq_scale ? 1.0f
                        : shrink == 0.0 ? static_cast<float>(docs) / static_cast<float>(last - first)
                                        : static_cast<float>(static_cast<double>(docs) * (1.0 + shrink) /
                                                             (static_cast<double>(last - first) + shrink));
    for (int64_t j = first; j < last; ++j) {
      const float w = doc_freq_scale ? entry_weight[j] * scale : entry_weight[j];
      const float* g = dh + static_cast<int64_t>(entry_doc[j]) * dim;
      for (int64_t k = 0; k < dim; ++k) acc[k] += w * g[k];
    }
  }
};

MXReturnValue grad_forward(const Attrs& attrs, std::vector<MXTensor>* in, std::vector<MXTensor>* out,
                           const OpResource& res) {
  const int64_t n = (*in)[3].shape[0], dim = (*in)[3].shape[1], nnz = (*in)[1].shape[0];
  const int64_t rows = (*out)[0].shape[0];
  Transposed t;
  if (!Transposed::make((*in)[0].data<int64_t>(), (*in)[1].data<int32_t>(), (*in)[2].data<float>(), n, nnz, rows,
                        res, &t))
    return MX_FAIL;
  const float* dh = (*in)[3].data<float>();
  const bool doc_freq_scale = int_attr(attrs, "doc_freq_scale", 0) != 0;
  const double shrink = float_attr(attrs, "shrink", 0.0);
  float* grad = (*out)[0].data<float>();
  const int threads = claim_threads();
#pragma omp parallel for schedule(static) if (nnz * dim >= kParallelWork) num_threads(threads)
  for (int64_t r = 0; r < rows; ++r) t.row_gradient(r, dh, dim, doc_freq_scale, shrink, grad + r * dim);
  return MX_SUCCESS;
}

// ---- fasttext_bag_sgd_update: the backward product and a lazy SGD step in one pass ----
//
// inputs: table (mutated in place), offsets, columns, weights, docs_grad, rows (int64: the table row
// of each compact column). Each touched table row gets exactly MXNet's lazy sgd_update (no momentum):
//   table[rows[c]] = (1 - lr * wd) * table[rows[c]] - (lr * rescale_grad) * grad[c]
// with grad[c] as fasttext_bag_mean_backward computes it, but never written out: the row-sparse
// gradient (as large as the rows it touches) is neither stored nor read back.
// with_status=1 adds a 7th input, status (float32 (1,), mutated): set to 1 when a value this step wrote
// is NaN or infinite. It is the run's divergence check (train.py): every change to the table passes
// through here, so the written rows are checked as they are written, at no extra pass over memory.

bool with_status(const Attrs& attrs) { return int_attr(attrs, "with_status", 0) != 0; }

MXReturnValue sgd_attrs(const Attrs& attrs, int* num_in, int* num_out) {
  if (attrs.find("lr") == attrs.end()) return fail("fasttext_bag_sgd_update needs lr");
  *num_in = with_status(attrs) ? 7 : 6;
  *num_out = 1;
  return MX_SUCCESS;
}

MXReturnValue sgd_types(const Attrs& attrs, std::vector<int>* in, std::vector<int>* out) {
  std::vector<int> want = {kTable, kOffsets, kIndex, kWeights, mxnet::ext::kFloat32, mxnet::ext::kInt64};
  if (with_status(attrs)) want.push_back(mxnet::ext::kFloat32);
  if (!check_types(*in, want))
    return fail("fasttext_bag_sgd_update takes (float32 table, int64 offsets, int32 columns, float32 weights, "
                "float32 docs_grad, int64 rows[, float32 status])");
  (*out)[0] = mxnet::ext::kFloat32;
  return MX_SUCCESS;
}

MXReturnValue sgd_shapes(const Attrs& attrs, Shapes* in, Shapes* out) {
  const Shapes& s = *in;
  if (s[0].size() != 2 || s[1].size() != 1 || s[2].size() != 1 || s[3] != s[2] || s[4].size() != 2 ||
      s[4][0] + 1 != s[1][0] || s[4][1] != s[0][1] || s[5].size() != 1 ||
      (with_status(attrs) && (s[6].size() != 1 || s[6][0] != 1)))
    return fail("fasttext_bag_sgd_update: table (rows, dim), offsets (n+1), columns and weights (nnz), "
                "docs_grad (n, dim), rows (columns)[, status (1)]");
  (*out)[0] = {1};
  return MX_SUCCESS;
}

MXReturnValue sgd_mutates(const Attrs& attrs, std::vector<int>* inputs) {
  inputs->push_back(0);
  if (with_status(attrs)) inputs->push_back(6);
  return MX_SUCCESS;
}

MXReturnValue sgd_forward(const Attrs& attrs, std::vector<MXTensor>* in, std::vector<MXTensor>* out,
                          const OpResource& res) {
  const int threads = claim_threads();
  float* table = (*in)[0].data<float>();
  const int64_t table_rows = (*in)[0].shape[0], dim = (*in)[0].shape[1];
  const int64_t n = (*in)[4].shape[0], nnz = (*in)[2].shape[0], rows = (*in)[5].shape[0];
  const int64_t* row_of = (*in)[5].data<int64_t>();
  for (int64_t c = 0; c < rows; ++c)
    if (row_of[c] < 0 || row_of[c] >= table_rows) return fail("fasttext_bag_sgd_update: a row is outside the table");
  Transposed t;
  if (!Transposed::make((*in)[1].data<int64_t>(), (*in)[2].data<int32_t>(), (*in)[3].data<float>(), n, nnz, rows,
                        res, &t))
    return MX_FAIL;
  const float* dh = (*in)[4].data<float>();
  const bool doc_freq_scale = int_attr(attrs, "doc_freq_scale", 0) != 0;
  const double shrink = float_attr(attrs, "shrink", 0.0);
  const float lr = static_cast<float>(float_attr(attrs, "lr", 0)), wd = static_cast<float>(float_attr(attrs, "wd", 0));
  const float rescale = static_cast<float>(float_attr(attrs, "rescale_grad", 1));
  const float decay = 1.f - lr * wd, step = lr * rescale;  // sgd_update's own expression, to the rounding
  int nonfinite = 0;
#pragma omp parallel reduction(| : nonfinite) if (nnz * dim >= kParallelWork) num_threads(threads)
  {
    std::vector<float> grad(dim);
#pragma omp for schedule(static)
    for (int64_t c = 0; c < rows; ++c) {
      if (c + kPrefetch < rows)  // the table row a later column updates: its cache misses overlap this work
        for (int64_t k = 0; k < dim; k += 16) __builtin_prefetch(table + row_of[c + kPrefetch] * dim + k, 1);
      t.row_gradient(c, dh, dim, doc_freq_scale, shrink, grad.data());
      float* w = table + row_of[c] * dim;
      uint32_t bad = 0;  // NaN and infinities are the floats whose exponent bits are all ones (vectorizes)
      for (int64_t k = 0; k < dim; ++k) {
        const float v = decay * w[k] - step * grad[k];
        w[k] = v;
        uint32_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        bad |= (bits & 0x7f800000u) == 0x7f800000u;
      }
      nonfinite |= bad != 0;
    }
  }
  if (nonfinite && with_status(attrs)) (*in)[6].data<float>()[0] = 1.f;
  (*out)[0].data<float>()[0] = static_cast<float>(rows);
  return MX_SUCCESS;
}

// ---- fasttext_engine_threads: what claim_threads left on the engine thread (for tests) ----
// out (2,) float32: the OpenMP thread count MXNet's operators get on this engine thread now, and the
// count the bag operators use (-1 before any bag operator ran on it).
MXReturnValue threads_attrs(const Attrs&, int* num_in, int* num_out) {
  *num_in = 1;  // any array: MXNet's operators need an input to place the call
  *num_out = 1;
  return MX_SUCCESS;
}

MXReturnValue threads_types(const Attrs&, std::vector<int>*, std::vector<int>* out) {
  (*out)[0] = mxnet::ext::kFloat32;
  return MX_SUCCESS;
}

MXReturnValue threads_shapes(const Attrs&, Shapes*, Shapes* out) {
  (*out)[0] = {2};
  return MX_SUCCESS;
}

MXReturnValue threads_forward(const Attrs&, std::vector<MXTensor>*, std::vector<MXTensor>* out, const OpResource&) {
  float* o = (*out)[0].data<float>();
  o[0] = static_cast<float>(omp_get_max_threads());
  o[1] = static_cast<float>(bag_threads_seen);
  return MX_SUCCESS;
}

}  // namespace

REGISTER_OP(fasttext_engine_threads)
    .setParseAttrs(threads_attrs)
    .setInferType(threads_types)
    .setInferShape(threads_shapes)
    .setForward(threads_forward, "cpu");

REGISTER_OP(fasttext_bag_mean)
    .setParseAttrs(mean_attrs)
    .setInferType(mean_types)
    .setInferShape(mean_shapes)
    .setForward(mean_forward, "cpu");

REGISTER_OP(fasttext_bag_mean_backward)
    .setParseAttrs(grad_attrs)
    .setInferType(grad_types)
    .setInferShape(grad_shapes)
    .setForward(grad_forward, "cpu");

REGISTER_OP(fasttext_bag_sgd_update)
    .setParseAttrs(sgd_attrs)
    .setInferType(sgd_types)
    .setInferShape(sgd_shapes)
    .setMutateInputs(sgd_mutates)
    .setForward(sgd_forward, "cpu");

MXReturnValue initialize(int version) {
  return version >= 10900 ? MX_SUCCESS : fail("fasttext bag ops need MXNet >= 1.9");
}
