// Whether the tests run under ThreadSanitizer, and data sizes that follow.
// TSan slows threaded code about tenfold, so whole-pipeline tests that push
// many records through take minutes there; a smaller data set drives the
// same code paths (TSan checks every access it sees, however few items
// pass). Other builds keep the full sizes.
//
//   .games = UnlessThreadSanitizer(60, 21),  // 21 games under TSan
//
// Scale every figure an assertion depends on with the data it describes
// (batches taken, distinct batches expected, reservoir and minimum fill).
#ifndef SLUICE_TESTS_TESTING_SANITIZERS_H_
#define SLUICE_TESTS_TESTING_SANITIZERS_H_

#include <type_traits>

// GCC defines __SANITIZE_THREAD__ under -fsanitize=thread; clang answers
// __has_feature(thread_sanitizer).
#if defined(__SANITIZE_THREAD__)
#define SLUICE_TESTS_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLUICE_TESTS_UNDER_TSAN 1
#endif
#endif

namespace sluice::testing {

// True in a ThreadSanitizer build (SLUICE_TSAN).
#ifdef SLUICE_TESTS_UNDER_TSAN
inline constexpr bool kUnderThreadSanitizer = true;
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif

// `full` in every build but ThreadSanitizer's, where `under_tsan`.
template <typename T>
constexpr T UnlessThreadSanitizer(T full, std::type_identity_t<T> under_tsan) {
  return kUnderThreadSanitizer ? under_tsan : full;
}

}  // namespace sluice::testing

#undef SLUICE_TESTS_UNDER_TSAN

#endif  // SLUICE_TESTS_TESTING_SANITIZERS_H_
