// train_rows() (epoch_loop.h): run_epoch()'s batch-1 loop body, one
// instance per output count.
#include <array>
#include <utility>

#include "train/epoch_loop.h"

namespace bagel::train {

namespace {

using RowsFn = void (*)(const RowPass&, std::size_t, std::size_t, double&, std::int64_t&);

// run_epoch()'s general loop at batch 1, statement for statement (so that
// the model is the same bit for bit), with k = K.
template <int K>
void train_rows_fixed(const RowPass& p, std::size_t begin, std::size_t end, double& loss_sum,
                      std::int64_t& limited) {
  constexpr auto k = kWidth<K>;
  float* z = p.scratch.logits.data();
  float* grad = p.scratch.grads.data();
  const std::size_t n = p.rows.size();
  const bool weighted = !p.weights.empty();
  LossSum sum(loss_sum);
  for (std::size_t i = begin; i < end; ++i) {
    const std::size_t next = i + 1;
    if (p.scattered) prefetch_ahead(p.x, p.y, p.rows, next, 1);
    if (next < n) p.layer.prefetch_row(p.x.row(p.rows[next]), k);
    const RowView row = p.x.row(p.rows[i]);
    p.layer.forward_row(row, z, p.thread, k);
    const double eta = p.schedule.eta(p.clock.next());
    const double loss = row_loss_and_grad(z, p.y[p.rows[i]], grad, k, p.scratch.head, weighted, sum);
    limited += counts_as_clipped(limit_logit_step(grad, k, row, eta, p.layer.bias_rate()),  // reach eta / B, B = 1
                                 p.weights, p.original[i]);
    weigh_row(loss, grad, k, p.weights, p.original[i], sum);
    p.layer.step_row(row, grad, eta, p.thread, k);
    if (p.touched != nullptr) p.touched->record(row);
  }
  loss_sum = sum.total();
}

template <int... K>
constexpr std::array<RowsFn, sizeof...(K)> table(std::integer_sequence<int, K...>) {
  return {train_rows_fixed<K + 1>...};
}

constexpr auto kRows = table(std::make_integer_sequence<int, detail::kMaxFixedOutputs>{});

}  // namespace

void train_rows(const RowPass& pass, std::size_t begin, std::size_t end, double& loss_sum,
                std::int64_t& limited) {
  kRows[static_cast<std::size_t>(pass.layer.outputs() - 1)](pass, begin, end, loss_sum, limited);
}

}  // namespace bagel::train
