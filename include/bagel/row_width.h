// A row's output count, K, as the per-row code takes it: an int, or
// std::integral_constant<int, K> where the caller knows K at compile time
// (the batch-1 training loop, train/row_steps.cpp). The heads (loss.h), the
// layer's row functions (embedding_bag.h) and the step limit take either,
// so one source serves both: at a constant width their loops over the
// outputs lose the run-time trip counts (and their vector loops' prologues
// and remainders), and the arithmetic, lane by lane, is the same.
#pragma once

#include <concepts>
#include <type_traits>

namespace bagel {

template <class W>
concept Width = std::same_as<W, int> || std::same_as<W, std::integral_constant<int, W::value>>;

template <int K>
inline constexpr std::integral_constant<int, K> kWidth{};

}  // namespace bagel
