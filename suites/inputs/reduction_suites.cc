#include "suites/inputs/reduction_suites.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/inputs/counter_rng.h"

namespace ulpgate {
namespace {

using Kind = OperandKind;
using Role = TermRole;

float RandomSign(CounterRng& rng, float x) { return (rng.Next() & 1) ? -x : x; }

// |x| log-uniform over [2^lo, 2^hi), all p significand bits random (p the
// precision of the suite's format, 24 at most); exact (ldexp of a p-bit
// significand), rounded only where it leaves the normal range.
float LogUniformMagnitude(CounterRng& rng, int lo, int hi, int p = 24) {
  const int e = lo + static_cast<int>(rng.Below(static_cast<uint64_t>(hi - lo)));
  const float significand =
      1.0f + static_cast<float>(rng.Next32() >> (33 - p)) * std::ldexp(1.0f, 1 - p);
  return std::ldexp(significand, e);
}

float LogUniform(CounterRng& rng, int lo, int hi, int p = 24) {
  return RandomSign(rng, LogUniformMagnitude(rng, lo, hi, p));
}

// The binades of the adversarial families in a format: f32 and bf16 share
// binary32's exponent range (bf16's subnormals start at 2^-133); f16 spans
// 2^-24 .. 65504, so its families are placed in that range: products that
// reach its top or its subnormals, cancellations its sums cannot hold.
struct Binades {
  int huge;                 // huge_range: 2^-huge .. 2^huge
  int cancel;               // mirrored and equal families: 2^-cancel .. 2^cancel
  int sub_lo, sub_hi;       // operands whose products are subnormal or below
  int tiny_lo, tiny_hi;     // the format's subnormals: [2^(emin-p+1), 2^emin)
  int big_lo, big_hi;       // operands whose products reach the top of the range
  int pair_lo, pair_hi;     // huge mirrored pairs
  int left_lo, left_hi;     // the tiny terms they leave
  int top_lo, top_hi;       // magnitudes at the top of the range: [2^(emax-1), max]
  int grad_big_lo, grad_big_hi, grad_small_lo, grad_small_hi;  // extreme grad_out
};

Binades BinadesOf(const FloatFormat& f) {
  const int subnormal = f.emin - f.precision + 1;
  if (f.emax == kBinary32.emax) {
    return {40, 20, -90, -60, subnormal, f.emin, 62, 64, 30, 40, -30, -20, f.emax - 1, f.emax + 1,
            100, 120, std::max(-140, subnormal), -120};
  }
  // A narrower range (f16: 2^-24 .. 65504), placed by its exponents, h =
  // (emax + 1) / 2: operands below 2^h multiply to at most the top 2^(2h);
  // products of operands in [2^(h-1), 2^h) reach it, mirrored pairs of 2^h ..
  // 2^(h+4) make sums no accumulator of the format holds, operands near
  // 2^(emin-2) .. 2^(emin+4) multiply into its subnormals or below.
  const int h = (f.emax + 1) / 2;
  return {h - 2, h - 2, f.emin - 2, f.emin + 4, subnormal, f.emin, h - 1, h, h, h + 4, -h, -h / 2,
          f.emax - 1, f.emax + 1, h, f.emax, subnormal, f.emin - 2};
}

// Normal-like with unit variance (Irwin-Hall of four uniforms, exact in
// double): portable, no libm, so every machine draws the same inputs.
double NormalLike(CounterRng& rng) {
  double s = 0;
  for (int k = 0; k < 4; ++k) s += rng.Unit();
  return (s - 2.0) * 1.7320508075688772;  // sqrt(12 / 4)
}

// An integer uniform in [-2^bits, 2^bits].
float SmallInteger(CounterRng& rng, int bits) {
  const uint64_t range = (uint64_t{1} << bits) * 2 + 1;
  return static_cast<float>(static_cast<int64_t>(rng.Below(range)) - (int64_t{1} << bits));
}

int CeilLog2(uint64_t x) {
  int bits = 0;
  while ((uint64_t{1} << bits) < x) ++bits;
  return bits;
}

class Generator {
 public:
  Generator(const ReductionOpInfo& op, const ReductionShape& shape, std::string_view suite,
            uint64_t seed, uint64_t instance, const FloatFormat& format)
      : format_(format),
        p_(format.precision),
        b_(BinadesOf(format)),
        op_(op),
        shape_(shape),
        suite_(suite),
        seed_(seed),
        instance_(instance),
        n_(ReductionLength(op, shape)),
        layouts_(op.operand_info) {
    if (suite_ == "adversarial") {
      family_ = op.adversarial_families[instance % op.adversarial_families.size()];
    }
    // Mirrored pairs (cancel families): terms h + j repeat term (j + shift)
    // mod h with the left operand negated, for j < h.
    CounterRng rng = Rng(99, 0, 0);
    pairs_ = family_ == "cancel_leaving_tiny" ? (n_ == 0 ? 0 : (n_ - 1) / 2) : n_ / 2;
    shift_ = pairs_ == 0 ? 0 : rng.Below(pairs_);
    // The exact fill: integers small enough that every intermediate of every
    // variant is an integer of magnitude <= 2^p, exact in the format (and in
    // binary32, where it accumulates).
    const int log_terms = CeilLog2(n_ + 2);
    switch (op.exact_fill) {
      case ExactFill::kPlainSum:
        exact_bits_ = p_ - log_terms;  // n 2^b + ... <= 2^p
        break;
      case ExactFill::kSquaredDifferences:
        exact_bits_ = (p_ - log_terms) / 2 - 1;  // |y - t| <= 2^(b+1), n 4^(b+1) <= 2^p
        break;
      case ExactFill::kProducts:
        exact_bits_ = (p_ - log_terms) / 2;  // (n + 1) 4^b <= 2^p
        break;
    }
    if (exact_bits_ < 0) exact_bits_ = 0;
  }

  ReductionInstance Generate() {
    ReductionInstance instance;
    instance.index = instance_;
    const auto shapes = ReductionOperandShapes(op_, shape_);
    for (size_t t = 0; t < layouts_.size(); ++t) {
      const std::vector<size_t>& extents = shapes[t];
      std::vector<float> values;
      if (extents.empty()) {  // a scalar
        values.push_back(Value(t, 0, 0));
      } else if (extents.size() == 1) {
        for (size_t i = 0; i < extents[0]; ++i) {
          values.push_back(layouts_[t].reduction_axis == 0 ? Value(t, i, 0) : Value(t, 0, i));
        }
      } else {
        for (size_t row = 0; row < extents[0]; ++row) {
          for (size_t col = 0; col < extents[1]; ++col) {
            values.push_back(layouts_[t].reduction_axis == 1 ? Value(t, col, row)
                                                             : Value(t, row, col));
          }
        }
      }
      instance.operands.push_back(std::move(values));
    }
    return instance;
  }

 private:
  CounterRng Rng(size_t tensor, uint64_t k, uint64_t r) const {
    const uint64_t stream = StreamId(suite_) ^ Mix64(1 + tensor + 16 * op_.input_stream);
    return CounterRng(seed_, stream, Mix64(instance_ + 0x51ed27) ^ Mix64((k << 32) ^ r));
  }

  // Tensor t at reduction index k and other index r (k = 0 outside the
  // reduction), a value of the suite's format (a draw outside its range
  // rounds, as a framework's cast would).
  float Value(size_t t, uint64_t k, uint64_t r) const {
    const float v = BinaryValue(t, k, r);
    if (format_.bits == 32) return v;
    return static_cast<float>(RoundToFormat(format_, static_cast<double>(v)));
  }

  float BinaryValue(size_t t, uint64_t k, uint64_t r) const {
    const ReductionOperandInfo& layout = layouts_[t];
    const bool mirrored_family =
        op_.adversarial_draw == AdversarialDraw::kProducts &&
        (family_ == "cancel_to_zero" || family_ == "cancel_leaving_tiny");
    if (mirrored_family && layout.term_role != Role::kOutside) {
      if (k >= pairs_ && k < 2 * pairs_) {
        const uint64_t source = (k - pairs_ + shift_) % pairs_;
        const float v = Base(t, source, r);
        return layout.term_role == Role::kLeft ? -v : v;
      }
    }
    return Base(t, k, r);
  }

  float Base(size_t t, uint64_t k, uint64_t r) const {
    const ReductionOperandInfo& layout = layouts_[t];
    CounterRng rng = Rng(t, k, r);
    if (suite_ == "well_conditioned") {
      if (layout.kind == Kind::kGradOut) return LogUniformMagnitude(rng, -4, 4, p_);
      return LogUniformMagnitude(rng, -2, 2, p_);
    }
    if (suite_ == "cancellation") {
      if (layout.kind == Kind::kGradOut) return LogUniform(rng, -4, 4, p_);
      return LogUniform(rng, -2, 2, p_);
    }
    if (suite_ == "training") return Training(t, k, r);
    if (suite_ == "exact") {
      if (layout.kind == Kind::kGradOut) {
        return RandomSign(rng, std::ldexp(1.0f, static_cast<int>(rng.Below(5)) - 2));
      }
      return SmallInteger(rng, exact_bits_);
    }
    if (suite_ == "adversarial") {
      return op_.adversarial_draw == AdversarialDraw::kDifferences
                 ? AdversarialDifferences(t, k, rng)
                 : AdversarialProducts(t, k, rng);
    }
    throw InputError("unknown suite '" + suite_ +
                     "' (well_conditioned, cancellation, training, adversarial, exact)");
  }

  float Training(size_t t, uint64_t k, uint64_t r) const {
    const ReductionOperandInfo& layout = layouts_[t];
    CounterRng rng = Rng(t, k, r);
    switch (layout.kind) {
      case Kind::kActivation:
        return static_cast<float>(NormalLike(rng));
      case Kind::kWeight: {  // fan-in scaled, as initializers do: W [out, in]
        const size_t fan_in = shape_[layout.shape.extent[layout.shape.rank - 1]];
        return static_cast<float>(NormalLike(rng) / std::sqrt(static_cast<double>(fan_in)));
      }
      case Kind::kBias:
        return static_cast<float>(0.1 * NormalLike(rng));
      case Kind::kGradient:  // small gradients
        return static_cast<float>(NormalLike(rng) * 0x1p-7);
      case Kind::kPrediction:
      case Kind::kTarget: {
        // A prediction near its target: both drawn from one stream per index.
        CounterRng shared = Rng(0, k, r);
        const double target = NormalLike(shared);
        const double noise = 0.25 * NormalLike(shared);
        return static_cast<float>(layout.kind == Kind::kTarget ? target : target + noise);
      }
      case Kind::kGradOut:
        return 1.0f;  // the loss is the last node of the graph
    }
    return 0.0f;
  }

  // The families of sums of products (and plain sums), by name.
  float AdversarialProducts(size_t t, uint64_t k, CounterRng& rng) const {
    const ReductionOperandInfo& layout = layouts_[t];
    const bool outside = layout.term_role == Role::kOutside;
    if (family_ == "huge_range") {  // huge dynamic range within one sum
      return LogUniform(rng, -b_.huge, b_.huge, p_);
    }
    if (family_ == "cancel_to_zero") {  // exact cancellation: mirrored pairs, bias 0, odd term 0
      if (outside) return 0.0f;
      if (k >= 2 * pairs_ && layout.term_role == Role::kLeft) return 0.0f;
      return LogUniform(rng, -b_.cancel, b_.cancel, p_);
    }
    if (family_ == "subnormal_products") {  // products in the subnormal range or below it
      if (outside) return LogUniform(rng, b_.tiny_lo, b_.tiny_hi, p_);
      return LogUniform(rng, b_.sub_lo, b_.sub_hi, p_);
    }
    if (family_ == "overflowing_partials") {
      // Products near 2^127, positive then negative: partial sums overflow.
      if (outside) return LogUniform(rng, -2, 2, p_);
      if (layout.term_role == Role::kLeft) {
        const float m = LogUniformMagnitude(rng, b_.big_lo, b_.big_hi, p_);
        return k < (n_ + 1) / 2 ? m : -m;
      }
      return LogUniformMagnitude(rng, b_.big_lo, b_.big_hi, p_);
    }
    if (family_ == "cancel_leaving_tiny") {  // huge mirrored pairs cancel, leaving tiny terms
      if (outside) return 0.0f;
      if (k < 2 * pairs_) return LogUniform(rng, b_.pair_lo, b_.pair_hi, p_);
      return layout.term_role == Role::kLeft ? LogUniform(rng, b_.left_lo, b_.left_hi, p_)
                                             : LogUniform(rng, -2, 2, p_);
    }
    throw std::logic_error(std::string(op_.name) + ": no adversarial family '" +
                           std::string(family_) + "' among the products' draws");
  }

  // The families of functions of y - t, by name.
  float AdversarialDifferences(size_t t, uint64_t k, CounterRng& rng) const {
    const ReductionOperandInfo& layout = layouts_[t];
    if (layout.kind == Kind::kGradOut) {
      if (family_ == "extreme_grad_out") {
        return (rng.Next() & 1) ? LogUniform(rng, b_.grad_big_lo, b_.grad_big_hi, p_) : LogUniform(rng, b_.grad_small_lo, b_.grad_small_hi, p_);
      }
      return LogUniform(rng, -4, 4, p_);
    }
    // The prediction is derived from the target's draw where the family ties them.
    CounterRng shared = Rng(0, k, 0);
    const bool target = layout.kind == Kind::kTarget;
    if (family_ == "huge_range") {  // huge dynamic range
      return LogUniform(rng, -b_.huge, b_.huge, p_);
    }
    if (family_ == "equal") {  // y == t exactly: loss 0, gradient 0
      return LogUniform(shared, -b_.cancel, b_.cancel, p_);
    }
    if (family_ == "subnormal_differences") {  // subnormal differences: squares underflow
      return LogUniform(rng, b_.tiny_lo, b_.tiny_hi, p_);
    }
    if (family_ == "overflowing_partials") {  // squares near 2^127: partial sums overflow
      return target ? LogUniform(rng, -2, 2, p_) : LogUniform(rng, b_.big_lo, b_.big_hi, p_);
    }
    if (family_ == "overflowing_difference") {
      // y - t overflows: opposite signs near the top of the range.
      const float m = LogUniformMagnitude(rng, b_.top_lo, b_.top_hi, p_);
      const bool positive = (shared.Next() & 1) != 0;
      return (positive != target) ? m : -m;
    }
    if (family_ == "near_equal") {  // t within a few ulps of y: exact tiny differences
      const float y = LogUniform(shared, -b_.cancel, b_.cancel, p_);
      if (!target) return y;
      const int32_t step = static_cast<int32_t>(rng.Below(9)) - 4;
      if (format_.bits == 32) {
        return FloatFromBits(static_cast<uint32_t>(static_cast<int32_t>(FloatBits(y)) + step));
      }
      // Steps of the format's ulp: y is rounded to it first (|y| >= 2^-cancel
      // is normal, so no step crosses zero).
      const uint64_t bits = EncodeBits(format_, RoundToFormat(format_, static_cast<double>(y)));
      return static_cast<float>(
          DecodeBits(format_, static_cast<uint64_t>(static_cast<int64_t>(bits) + step)));
    }
    if (family_ == "extreme_grad_out") return LogUniform(rng, -2, 2, p_);  // y, t ordinary
    throw std::logic_error(std::string(op_.name) + ": no adversarial family '" +
                           std::string(family_) + "' among the differences' draws");
  }

  const FloatFormat& format_;
  int p_;
  Binades b_;
  const ReductionOpInfo& op_;
  ReductionShape shape_;
  std::string suite_;
  uint64_t seed_;
  uint64_t instance_;
  size_t n_;
  std::vector<ReductionOperandInfo> layouts_;
  std::string_view family_;  // the adversarial suite's, by name
  uint64_t pairs_ = 0;
  uint64_t shift_ = 0;
  int exact_bits_ = 0;
};

}  // namespace

const std::vector<SuiteInfo>& ReductionSuites() {
  static const std::vector<SuiteInfo> suites = {
      {"well_conditioned",
       "all operands positive, log-uniform in [2^-2, 2^2): no cancellation", 4},
      {"cancellation", "operands of random sign, log-uniform in [2^-2, 2^2): sums cancel", 4},
      {"training",
       "normal-like activations, fan-in scaled weights, small biases, gradients ~ 2^-7; "
       "MSE: predictions near targets, grad_out 1",
       4},
      {"adversarial",
       "instance i uses family i mod 5: huge dynamic range, exact cancellation to zero, "
       "subnormal products, overflowing partial sums, huge pairs cancelling to tiny terms "
       "(MSE: huge range, y == t, subnormal differences, overflow, near-equal or extreme "
       "grad_out)",
       10},
      {"exact",
       "small integers: every variant is exact (error 0); for the MSE ops when N is a power "
       "of two (2/N and 1/N exact)",
       4},
  };
  return suites;
}

bool IsReductionSuite(std::string_view suite) {
  for (const auto& s : ReductionSuites()) {
    if (s.name == suite) return true;
  }
  return false;
}

const std::vector<std::string>& AdversarialFamilies(const ReductionOpInfo& op) {
  return op.adversarial_families;
}

ReductionInstance GenerateReductionInstance(const ReductionOpInfo& op, const ReductionShape& shape,
                                            std::string_view suite, uint64_t seed,
                                            uint64_t index, const FloatFormat& format) {
  if (!IsReductionSuite(suite)) {
    throw InputError("unknown suite '" + std::string(suite) +
                     "' (well_conditioned, cancellation, training, adversarial, exact)");
  }
  return Generator(op, shape, suite, seed, index, format).Generate();
}

ReductionInputSet GenerateReductionSuite(const ReductionOpInfo& op, const ReductionShape& shape,
                                         std::string_view suite, uint64_t seed, size_t count,
                                         const FloatFormat& format) {
  ReductionInputSet set;
  set.format = &format;
  set.op = &op;
  set.shape = shape;
  set.source = std::string(suite);
  set.seed = seed;
  for (size_t i = 0; i < count; ++i) {
    set.instances.push_back(GenerateReductionInstance(op, shape, suite, seed, i, format));
  }
  return set;
}

std::vector<ReductionShape> TailShapes(const ReductionOpInfo& op) {
  std::vector<ReductionShape> shapes;
  for (size_t s = 1; s <= 31; s += 2) {
    ReductionShape shape;
    shape.rank = op.extents.size();
    for (size_t e = 0; e < shape.rank; ++e) shape[e] = s;
    shapes.push_back(shape);
  }
  return shapes;
}

std::vector<ReductionShape> TrainingShapes(const ReductionOpInfo& op) {
  return op.training_shapes;
}

}  // namespace ulpgate
