// A row's output count, K, as the per-row code takes it: an int, or
// std::integral_constant<int, K> where the caller knows K at compile time
// (the batch-1 training loop, train/row_steps.cpp). The heads (loss.h), the
// layer's row functions (embedding_bag.h) and the step limit take either,
// so one source serves both: at a constant width their loops over the
// outputs lose the run-time trip counts (and their vector loops' prologues
// and remainders), and the arithmetic, lane by lane, is the same.
#pragma once

#include <algorithm>
#include <concepts>
#include <type_traits>
#include <utility>

namespace bagel {

template <class W>
concept Width = std::same_as<W, int> || std::same_as<W, std::integral_constant<int, W::value>>;

template <int K>
inline constexpr std::integral_constant<int, K> kWidth{};

// Calls body(i0, n) for the chunks [i0, i0 + n) of [0, k) in order, each
// Chunk wide but the last. At a constant width n is a constant too: a loop
// over the chunks would leave the body a run-time n, and GCC 12 then keeps
// the vector code for n == Chunk only (the last chunk of 20 outputs in 16s,
// 4 exps, ran scalar; it ignores `#pragma GCC unroll` in these templates).
template <int Chunk, class Body>
[[gnu::always_inline]] inline void for_output_chunks(Width auto k, Body&& body) {
  if constexpr (std::same_as<decltype(k), int>) {
    for (int i0 = 0; i0 < k; i0 += Chunk) body(i0, std::min(Chunk, k - i0));
  } else {
    constexpr int K = decltype(k)::value;
    [&]<int... C>(std::integer_sequence<int, C...>) {
      (body(C * Chunk, kWidth<std::min(Chunk, K - C * Chunk)>), ...);
    }(std::make_integer_sequence<int, (K + Chunk - 1) / Chunk>{});
  }
}

}  // namespace bagel
