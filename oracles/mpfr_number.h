// A value type over mpfr_t: owns one MPFR number of a fixed precision.
//
// Boost.Multiprecision's mpfr_float hides the ternary value of each operation
// and the exponent range, and the oracles need both (exactness checks, binary32
// emulation), so the hot paths use mpfr_t through this thin owner.
#ifndef ULPGATE_ORACLES_MPFR_NUMBER_H_
#define ULPGATE_ORACLES_MPFR_NUMBER_H_

#include <mpfr.h>

#include <string>

namespace ulpgate {

class MpfrNumber {
 public:
  explicit MpfrNumber(mpfr_prec_t precision) { mpfr_init2(value_, precision); }
  MpfrNumber(mpfr_prec_t precision, float x) : MpfrNumber(precision) {
    mpfr_set_flt(value_, x, MPFR_RNDN);  // exact: precision >= 24
  }
  MpfrNumber(const MpfrNumber& other) : MpfrNumber(mpfr_get_prec(other.value_)) {
    mpfr_set(value_, other.value_, MPFR_RNDN);  // same precision: exact
  }
  MpfrNumber(MpfrNumber&& other) noexcept : MpfrNumber(MPFR_PREC_MIN) {
    mpfr_swap(value_, other.value_);
  }
  MpfrNumber& operator=(const MpfrNumber& other) {
    if (this != &other) {
      mpfr_set_prec(value_, mpfr_get_prec(other.value_));
      mpfr_set(value_, other.value_, MPFR_RNDN);
    }
    return *this;
  }
  MpfrNumber& operator=(MpfrNumber&& other) noexcept {
    mpfr_swap(value_, other.value_);
    return *this;
  }
  ~MpfrNumber() { mpfr_clear(value_); }

  mpfr_ptr get() { return value_; }
  mpfr_srcptr get() const { return value_; }
  mpfr_prec_t precision() const { return mpfr_get_prec(value_); }

  bool IsNan() const { return mpfr_nan_p(value_) != 0; }
  bool IsInf() const { return mpfr_inf_p(value_) != 0; }
  bool IsZero() const { return mpfr_zero_p(value_) != 0; }
  bool IsFinite() const { return mpfr_number_p(value_) != 0; }
  double ToDouble() const { return mpfr_get_d(value_, MPFR_RNDN); }

  // Decimal with `digits` significant digits, e.g. "-1.2345678901234567e-3".
  std::string ToDecimal(int digits = 25) const;

  // The exact value as a normalized C99 hex float, "0x1.fffffcp-1", with as
  // many hex digits as the value needs (none is dropped, so it reads back
  // exactly with any arbitrary-precision parser); "0x0p+0"/"-0x0p+0", "inf",
  // "-inf", "nan" for the specials. MPFR's own %Ra is exact too but does not
  // normalize the leading digit ("0xcp-4" for 0.75).
  std::string ToHexExact() const;

 private:
  mpfr_t value_;
};

// Frees MPFR's per-thread caches (constants such as log 2, kept in
// thread-local storage) when it goes out of scope. Every worker thread that
// calls MPFR holds one for its whole life: a thread that ends without freeing
// them leaks them, once per thread.
struct MpfrThreadCaches {
  MpfrThreadCaches() = default;
  MpfrThreadCaches(const MpfrThreadCaches&) = delete;
  MpfrThreadCaches& operator=(const MpfrThreadCaches&) = delete;
  ~MpfrThreadCaches() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }
};

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_MPFR_NUMBER_H_
