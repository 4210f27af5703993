#include "label_ids.h"

#include <string_view>
#include <unordered_map>

namespace bagel::python {

FirstSeen first_seen(std::span<const std::byte> items, std::size_t rows, std::size_t item_size) {
  FirstSeen out;
  out.ids.resize(rows);
  std::unordered_map<std::string_view, std::int32_t> id_of;
  const auto* base = reinterpret_cast<const char*>(items.data());
  for (std::size_t i = 0; i < rows; ++i) {
    const std::string_view item(base + i * item_size, item_size);
    const auto [it, added] = id_of.try_emplace(item, static_cast<std::int32_t>(out.first.size()));
    if (added) out.first.push_back(static_cast<std::int64_t>(i));
    out.ids[i] = it->second;
  }
  return out;
}

}  // namespace bagel::python
