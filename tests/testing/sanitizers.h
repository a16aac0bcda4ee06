// Whether the tests run under a sanitizer (ThreadSanitizer or
// AddressSanitizer), and data sizes that follow. TSan slows threaded code
// about tenfold and ASan about threefold, so whole-pipeline tests that push
// many records through take minutes there; a smaller data set drives the
// same code paths (a sanitizer checks every access it sees, however few
// items pass). The release build keeps the full sizes.
//
//   .games = UnlessSanitizer(60, 21),  // 21 games under a sanitizer
//
// Scale every figure an assertion depends on with the data it describes
// (batches taken, distinct batches expected, reservoir and minimum fill).
#ifndef SLUICE_TESTS_TESTING_SANITIZERS_H_
#define SLUICE_TESTS_TESTING_SANITIZERS_H_

#include <type_traits>

// GCC defines __SANITIZE_THREAD__ and __SANITIZE_ADDRESS__; clang answers
// __has_feature(thread_sanitizer) and __has_feature(address_sanitizer).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SLUICE_TESTS_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SLUICE_TESTS_UNDER_SANITIZER 1
#endif
#endif

namespace sluice::testing {

// True in a ThreadSanitizer or AddressSanitizer build (SLUICE_TSAN,
// SLUICE_ASAN).
#ifdef SLUICE_TESTS_UNDER_SANITIZER
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif

// `full` in the release build, `sanitized` under a sanitizer.
template <typename T>
constexpr T UnlessSanitizer(T full, std::type_identity_t<T> sanitized) {
  return kUnderSanitizer ? sanitized : full;
}

}  // namespace sluice::testing

#undef SLUICE_TESTS_UNDER_SANITIZER

#endif  // SLUICE_TESTS_TESTING_SANITIZERS_H_
