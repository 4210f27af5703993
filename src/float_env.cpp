#include "bagel/float_env.h"

#include <omp.h>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace bagel {

namespace {

#if defined(__SSE__)
constexpr unsigned kFlushBits = 0x8040;  // MXCSR: FTZ (bit 15) | DAZ (bit 6)
unsigned long read_mode() { return _mm_getcsr(); }
void write_mode(unsigned long mode) { _mm_setcsr(static_cast<unsigned>(mode)); }
#elif defined(__aarch64__)
constexpr unsigned long kFlushBits = 1ul << 24;  // FPCR.FZ: flushes inputs and outputs
unsigned long read_mode() { return __builtin_aarch64_get_fpcr64(); }
void write_mode(unsigned long mode) { __builtin_aarch64_set_fpcr64(mode); }
#else
constexpr unsigned long kFlushBits = 0;  // no known control: denormals stay
unsigned long read_mode() { return 0; }
void write_mode(unsigned long) {}
#endif

}  // namespace

DenormalsAreZero::DenormalsAreZero(int team_threads)
    : saved_(read_mode()),
      end_pool_(team_threads > 1 && (saved_ & kFlushBits) != kFlushBits && !omp_in_parallel()) {
  if ((saved_ & kFlushBits) != kFlushBits) write_mode(saved_ | kFlushBits);
}

DenormalsAreZero::~DenormalsAreZero() {
  if (end_pool_) omp_pause_resource_all(omp_pause_soft);
  if ((saved_ & kFlushBits) != kFlushBits) write_mode(saved_);
}

bool DenormalsAreZero::active() { return kFlushBits != 0 && (read_mode() & kFlushBits) == kFlushBits; }

}  // namespace bagel
