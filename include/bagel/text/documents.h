// The documents of a text corpus as views: into text the list keeps alive
// (a memory-mapped file it holds a share of), or into its own blocks, where
// copied text is packed end to end. Reading a large file thus makes no
// string per document: the `lines` reader points into the mapped file, and
// the other readers copy each document once into a block.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bagel {

class Documents {
 public:
  std::size_t size() const { return views_.size(); }
  bool empty() const { return views_.empty(); }
  std::string_view operator[](std::size_t i) const { return views_[i]; }
  std::span<const std::string_view> views() const { return views_; }
  auto begin() const { return views_.begin(); }
  auto end() const { return views_.end(); }

  // Appends a copy of `text`.
  void push_back(std::string_view text);
  // Appends `text` itself: it must lie in memory that an owner given to
  // keep_alive holds.
  void push_view(std::string_view text) { views_.push_back(text); }
  // Appends `count` empty documents and gives them to be set to views (as
  // push_view's), so that threads can fill ranges of them.
  std::span<std::string_view> extend(std::size_t count);
  void keep_alive(std::shared_ptr<const void> owner);
  // Appends the documents of `other`, taking over what keeps them alive.
  void append(Documents&& other);
  void reserve(std::size_t documents) { views_.reserve(documents); }

 private:
  std::vector<std::string_view> views_;
  std::vector<std::unique_ptr<char[]>> blocks_;  // copied text; a block never moves
  char* free_ = nullptr;                         // the free end of blocks_.back()
  std::size_t free_bytes_ = 0;
  std::vector<std::shared_ptr<const void>> owners_;
};

}  // namespace bagel
