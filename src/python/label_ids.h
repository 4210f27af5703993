// Distinct labels of a numpy array of fixed-width strings ('<U', '|S') by
// hashing their bytes: np.unique sorts every row's string (3.2 ms of a
// 20,000-row fit), where only the few distinct ones need sorting, which the
// estimator then does with numpy's own order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bagel::python {

struct FirstSeen {
  std::vector<std::int64_t> first;  // the row where each distinct label first appears
  std::vector<std::int32_t> ids;    // each row's label as an index into `first`
};

// `items` holds `rows` items of `item_size` bytes each; two items are one
// label when their bytes are equal (numpy pads shorter strings with zeros,
// so equal strings have equal bytes).
FirstSeen first_seen(std::span<const std::byte> items, std::size_t rows, std::size_t item_size);

}  // namespace bagel::python
