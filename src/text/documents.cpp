#include "bagel/text/documents.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "bagel/huge_pages.h"

namespace bagel {

namespace {

// Large enough that allocations are rare, small enough that a few short
// documents do not reserve much.
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

}  // namespace

void Documents::push_back(std::string_view text) {
  if (text.size() > free_bytes_) {
    free_bytes_ = std::max(kBlockBytes, text.size());
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(free_bytes_));
    free_ = blocks_.back().get();
  }
  if (!text.empty()) std::memcpy(free_, text.data(), text.size());
  views_.emplace_back(free_, text.size());
  free_ += text.size();
  free_bytes_ -= text.size();
}

std::span<std::string_view> Documents::extend(std::size_t count) {
  const std::size_t begin = views_.size();
  if (views_.capacity() < begin + count) {
    // A file's million lines are 16 MB of views: their first touch costs
    // less in huge pages than in 4 KiB faults.
    std::vector<std::string_view> views;
    reserve_huge(views, begin + count);
    views.assign(views_.begin(), views_.end());
    views_ = std::move(views);
  }
  views_.resize(begin + count);
  return std::span<std::string_view>(views_).subspan(begin);
}

void Documents::keep_alive(std::shared_ptr<const void> owner) {
  if (std::find(owners_.begin(), owners_.end(), owner) == owners_.end()) owners_.push_back(std::move(owner));
}

void Documents::append(Documents&& other) {
  if (views_.empty()) {
    views_ = std::move(other.views_);
  } else {
    views_.insert(views_.end(), other.views_.begin(), other.views_.end());
  }
  blocks_.insert(blocks_.end(), std::make_move_iterator(other.blocks_.begin()),
                 std::make_move_iterator(other.blocks_.end()));
  // The last block may now be other's: new text starts a block of its own.
  free_ = nullptr;
  free_bytes_ = 0;
  for (std::shared_ptr<const void>& owner : other.owners_) keep_alive(std::move(owner));
  other = Documents{};
}

}  // namespace bagel
