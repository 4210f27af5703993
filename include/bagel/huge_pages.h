// Transparent huge pages for the big arrays that training reads at random.
//
// Shuffled SGD reads CSR rows and weight rows at random addresses: with
// 4 KiB pages nearly every row is a TLB miss, and in a virtual machine each
// miss is a two-level page walk. Backed by 2 MiB pages, a 300 MB CSR needs
// 150 TLB entries instead of 75,000 (measured: 20% less time per epoch on
// 500k shuffled rows with 2^20 features; the note in data/PERFORMANCE.md has the
// command). The kernel decides; this only asks (madvise MADV_HUGEPAGE), and
// where it says no, nothing changes but the speed.
#pragma once

#include <cstddef>
#include <vector>

namespace bagel {

// Asks for huge pages over the 2 MiB-aligned part of [p, p + bytes). Only
// useful before the pages are first touched. Ignores sizes under 2 MiB and
// kernels without transparent huge pages.
void advise_huge_pages(const void* p, std::size_t bytes);

// Room for `n` elements, the pages advised for huge pages before they are
// first touched (a page fault costs more than filling the page, and a
// virtual machine's page faults cost more still). Call on an empty vector:
// the advice covers only storage not yet touched.
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(T));
}

// n copies of `value` in storage advised for huge pages before first touch.
template <class T>
std::vector<T> huge_vector(std::size_t n, const T& value = T{}) {
  std::vector<T> v;
  reserve_huge(v, n);
  v.resize(n, value);
  return v;
}

}  // namespace bagel
