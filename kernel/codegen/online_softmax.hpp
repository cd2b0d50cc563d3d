// Online softmax: a sum weighted by exp(x - max) over the loop that computes that max runs in the
// max's own loop (Milakov and Gimelshein's one-pass softmax, FlashAttention's inner loop).
#pragma once

#include "kernel/ir/uop.hpp"

#include <cstdint>
#include <unordered_map>

namespace tg {

// Rewrites a lowered value (REDUCE over RANGEs). A float sum REDUCE(ADD, v, Ra) whose value reads a
// float REDUCE(MAX, t, Rm) with one loop of the same length only as exp2((x - h(max)) * c), c > 0
// constant (softmax's shift, h any function of the max), becomes
//   REDUCE(MULACC, term, factor, Rm)  (acc = acc * factor + term each step, in the max's loop)
// with term = v with Rm for Ra and the running max (RUNNING after this step) for the max, and
// factor = exp2((h(max before) - h(max after)) * c): what the sum so far is scaled by when the max
// grows. Factors of v that the loop does not change (softmax's 1/sum, itself such a sum) multiply
// the result instead. Reduces nested in v that repeat ones nested in t (the scores, per key) are
// computed once per step. A step before any finite max adds nothing (exp(-inf - h) is 0 there).
// When the max's value is `c ? x : -inf` with c false from some step b on (a causal mask: key <=
// query), the loop stops at b: those steps leave the max as it is and add exp(-inf) = 0 (a
// non-finite value under such a mask is not read, as in FlashAttention).
class OnlineSoftmax {
public:
  // next_range_id: where the lowerer's RANGE ids continue (a shortened loop is a new RANGE)
  explicit OnlineSoftmax(int64_t& next_range_id) : next_range_id_(next_range_id) {}
  UOpRef operator()(const UOpRef& value);

private:
  UOpRef rewrite(const UOpRef& u);
  UOpRef online(const UOpRef& sum);
  UOpRef shortened(const UOpRef& max);
  int64_t& next_range_id_;
  std::unordered_map<const UOp*, UOpRef> done_;
  std::unordered_map<const UOp*, UOpRef> loops_; // a max's loop -> the loop that replaces it
};

} // namespace tg
