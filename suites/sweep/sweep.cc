#include "suites/sweep/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/narrow_formats.h"
#include "oracles/float_text.h"
#include "suites/engine/digest.h"
#include "suites/inputs/inputs.h"
#include "suites/reports/json_file.h"
#include "suites/reports/report.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/plugins.h"
#include "suites/investigate/explain.h"
#include "suites/reports/replay.h"

namespace ulpgate {

using Json = nlohmann::ordered_json;

namespace {

constexpr uint64_t kPatterns = uint64_t{1} << 32;  // 32-bit patterns, 16-bit pairs


// splitmix64's finalizer.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Json IndexJson(const SweepDomain& domain, int64_t index) {
  return index < 0 ? Json() : SweepInputJson(domain, static_cast<uint64_t>(index));
}

}  // namespace

uint64_t SweepDigestKey(uint64_t index) {
  // Tabulation over the index's low 12 bits and its rest: a tile of inputs
  // shares one Mix, and every key is odd, so that two outputs differing at a
  // single input never give the same digest (odd * nonzero 32-bit difference
  // is nonzero mod 2^64).
  return (Mix(index >> 12) & ~uint64_t{1}) ^ (Mix((index & 0xfff) + 0x9e3779b97f4a7c15ULL) | 1);
}

void UlpSum::Add(const UlpSum& other) {
  unsigned __int128 carry = 0;
  for (size_t i = 0; i < limbs_.size(); ++i) {
    carry += static_cast<unsigned __int128>(limbs_[i]) + other.limbs_[i];
    limbs_[i] = static_cast<uint64_t>(carry);
    carry >>= 64;
  }
}

void UlpSum::AddUnits(uint64_t units, int shift) {
  UlpSum other;
  const int bit = 32 * shift;
  const size_t limb = static_cast<size_t>(bit / 64);
  const int offset = bit % 64;
  other.limbs_[limb] = units << offset;
  if (offset != 0 && limb + 1 < other.limbs_.size()) other.limbs_[limb + 1] = units >> (64 - offset);
  Add(other);
}

void UlpSum::AddUlp(double ulp) {
  if (!(ulp > 0)) return;
  // ulp = m * 2^k with m < 2^53 an integer; floor(ulp * 2^64) = m * 2^(k+64)
  // when k + 64 >= 0, else m >> -(k + 64).
  int exponent;
  const double fraction = std::frexp(ulp, &exponent);
  const auto m = static_cast<uint64_t>(std::ldexp(fraction, 53));
  const int shift = exponent - 53 + 64;
  if (shift <= 0) {
    if (shift > -64) AddUnits(m >> -shift);
    return;
  }
  UlpSum other;
  const size_t limb = static_cast<size_t>(shift / 64);
  const int offset = shift % 64;
  other.limbs_[limb] = m << offset;
  if (offset != 0 && limb + 1 < other.limbs_.size()) other.limbs_[limb + 1] = m >> (64 - offset);
  Add(other);
}

std::string UlpSum::ToDecimal() const {
  std::array<uint64_t, 8> x = limbs_;
  std::string digits;
  const auto zero = [&] {
    for (uint64_t l : x) {
      if (l != 0) return false;
    }
    return true;
  };
  while (!zero()) {
    unsigned __int128 remainder = 0;
    for (size_t i = x.size(); i-- > 0;) {
      const unsigned __int128 current = (remainder << 64) | x[i];
      x[i] = static_cast<uint64_t>(current / 10);
      remainder = current % 10;
    }
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(remainder)));
  }
  return digits.empty() ? "0" : digits;
}

std::optional<UlpSum> UlpSum::FromDecimal(std::string_view text) {
  if (text.empty()) return std::nullopt;
  UlpSum sum;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return std::nullopt;
    unsigned __int128 carry = static_cast<unsigned>(ch - '0');
    for (uint64_t& limb : sum.limbs_) {
      carry += static_cast<unsigned __int128>(limb) * 10;
      limb = static_cast<uint64_t>(carry);
      carry >>= 64;
    }
    if (carry != 0) return std::nullopt;
  }
  return sum;
}

double UlpSum::ToDouble() const {
  size_t top = limbs_.size();
  while (top > 0 && limbs_[top - 1] == 0) --top;
  if (top == 0) return 0;
  // The leading 64 bits, the lowest of them set when any bit below is: a
  // value from which converting to 53 bits rounds as the whole would (two
  // guard bits at least).
  const uint64_t high = limbs_[top - 1];
  const int lead = 64 - __builtin_clzll(high);  // bits in the top limb
  uint64_t bits = high;
  bool sticky = false;
  if (top >= 2) {
    const uint64_t next = limbs_[top - 2];
    bits = lead == 64 ? high : (high << (64 - lead)) | (next >> lead);
    sticky = lead == 64 ? next != 0 : (next << (64 - lead)) != 0;
    for (size_t i = 0; i + 2 < top; ++i) sticky = sticky || limbs_[i] != 0;
  }
  if (sticky) bits |= 1;
  const int scale = top >= 2 ? static_cast<int>(64 * (top - 2)) + lead : 0;
  return std::ldexp(static_cast<double>(bits), scale - 64);
}

void MergeSweepCase(const FloatFormat& format, SweepCase& into, const SweepCase& other) {
  ErrorStatistics::State a = into.stats.state();
  const ErrorStatistics::State b = other.stats.state();
  for (size_t i = 0; i < a.counts.size(); ++i) a.counts[i] += b.counts[i];
  for (size_t i = 0; i < a.fine.size(); ++i) a.fine[i] += b.fine[i];
  a.n += b.n;
  a.special_mismatch += b.special_mismatch;
  a.signed_zero_mismatch += b.signed_zero_mismatch;
  a.correctly_rounded += b.correctly_rounded;
  // The larger error; on a tie the lower index, whichever part it came from.
  if (b.max_index >= 0 && (a.max_index < 0 || b.max_ulp > a.max_ulp ||
                           (b.max_ulp == a.max_ulp && b.max_index < a.max_index))) {
    a.max_ulp = b.max_ulp;
    a.max_index = b.max_index;
  }
  const auto first = [](int64_t x, int64_t y) { return x < 0 ? y : y < 0 ? x : std::min(x, y); };
  a.first_special_index = first(a.first_special_index, b.first_special_index);
  MergeSpecialCauses(a.special_causes, b.special_causes);
  a.first_signed_zero_index = first(a.first_signed_zero_index, b.first_signed_zero_index);
  into.stats = ErrorStatistics(format, a);
  into.sum_ulp.Add(other.sum_ulp);
  into.digest += other.digest;
  Conformance& c = into.conformance;
  const Conformance& l = other.conformance;
  c.mismatches += l.mismatches;
  c.first_mismatch_index = first(c.first_mismatch_index, l.first_mismatch_index);
  c.matching.erase(std::remove_if(c.matching.begin(), c.matching.end(),
                                  [&](const std::string& m) {
                                    return std::find(l.matching.begin(), l.matching.end(), m) ==
                                           l.matching.end();
                                  }),
                   c.matching.end());
}

uint64_t SweepDomain::size() const {
  return kind == Kind::kPairs ? kPatterns : kPatterns * fixed.size();
}

void SweepDomain::Input(uint64_t index, float* grad, float* t) const {
  if (kind == Kind::kPairs) {
    *grad = static_cast<float>(DecodeBits(*format, index >> 16));
    *t = static_cast<float>(DecodeBits(*format, index & 0xffff));
    return;
  }
  const float fixed_value = fixed[index >> 32];
  const float swept = FloatFromBits(static_cast<uint32_t>(index));
  *grad = kind == Kind::kOverT ? fixed_value : swept;
  *t = kind == Kind::kOverT ? swept : fixed_value;
}

void SweepDomain::Inputs(uint64_t begin, uint64_t count, float* grad, float* t) const {
  for (uint64_t i = 0; i < count; ++i) Input(begin + i, grad + i, t + i);
}

std::string SweepDomain::KindName() const {
  switch (kind) {
    case Kind::kPairs:
      return "pairs";
    case Kind::kOverT:
      return "over_" + operands[1];
    case Kind::kOverGrad:
      return "over_" + operands[0];
  }
  return "?";
}

std::string SweepDomain::Description() const {
  const std::string& a = operands[0];
  const std::string& b = operands[1];
  if (kind == Kind::kPairs) return fmt::format("all 2^32 ({}, {}) pairs in {}", a, b, format->name);
  std::string values;
  for (float v : fixed) values += (values.empty() ? "" : ", ") + HexFloat(v);
  return kind == Kind::kOverT
             ? fmt::format("every f32 {} (2^32 patterns) at {} = {}", b, a, values)
             : fmt::format("every f32 {} (2^32 patterns) at {} = {}", a, b, values);
}

SweepDomain MakeSweepDomain(const FloatFormat& format, SweepDomain::Kind kind,
                            const std::vector<float>& fixed,
                            const std::array<std::string, 2>& operands) {
  SweepDomain d;
  d.operands = operands;
  d.format = &format;
  d.kind = kind;
  d.fixed = fixed;
  if (kind == SweepDomain::Kind::kPairs) {
    if (format.bits != 16 || NarrowFormatIndex(format.name) < 0) {
      throw InputError(std::string("all pairs are swept in bf16 or f16, not ") + format.name +
                       " (f32: every " + operands[1] + " at given " + operands[0] + "s, or every " +
                       operands[0] + " at given " + operands[1] + ")");
    }
    if (!fixed.empty()) throw InputError("a sweep of all pairs fixes no operand");
    return d;
  }
  if (!IsBinary32(format)) {
    throw InputError("every " + operands[1] + " (or " + operands[0] + ") is swept in f32; " +
                     format.name + " sweeps all pairs");
  }
  if (fixed.empty()) throw InputError("give the values of the fixed operand");
  if (fixed.size() > 1024) throw InputError("at most 1024 fixed values");
  for (float v : fixed) {
    if (!std::isfinite(v)) throw InputError("a fixed value must be finite, not " + HexFloat(v));
  }
  return d;
}

Json SweepInputJson(const SweepDomain& domain, uint64_t index) {
  float grad, t;
  domain.Input(index, &grad, &t);
  const auto bits = [&](float x) {
    return IsBinary32(*domain.format) ? BitsHex(x)
                                      : fmt::format("{:#06x}", EncodeBits(*domain.format, x));
  };
  Json j;
  j["index"] = index;
  const std::string& a = domain.operands[0];
  const std::string& b = domain.operands[1];
  j[a] = HexFloat(grad);
  j[b] = HexFloat(t);
  j[a + "_bits"] = domain.kind == SweepDomain::Kind::kPairs ? fmt::format("{:#06x}", index >> 16)
                                                            : bits(grad);
  j[b + "_bits"] = domain.kind == SweepDomain::Kind::kPairs
                       ? fmt::format("{:#06x}", index & 0xffff)
                       : bits(t);
  return j;
}

double SweepCase::mean_ulp() const {
  const uint64_t measured = stats.n() - stats.special_mismatch();
  if (measured == 0) return 0;
  return sum_ulp.ToDouble() / static_cast<double>(measured);
}

std::pair<uint64_t, uint64_t> SweepShard(uint64_t begin, uint64_t end, uint64_t k, uint64_t n) {
  if (n == 0 || k >= n) throw InputError(fmt::format("shard {}/{}: K runs from 0 to N-1", k, n));
  const uint64_t length = end - begin;
  // Cuts at block multiples of the domain's index, so that the shards' blocks
  // are the whole sweep's.
  auto cut = [&](uint64_t i) {
    if (i == 0) return begin;
    if (i == n) return end;
    const uint64_t at = begin + static_cast<uint64_t>(
                                    (static_cast<unsigned __int128>(length) * i) / n);
    return std::clamp(at / kSweepBlock * kSweepBlock, begin, end);
  };
  return {cut(k), cut(k + 1)};
}

Json SweepJson(const SweepResult& r) {
  Json j;
  j["format"] = kSweepFormat;
  j["tool"] = ToolVersion();
  j["op"] = r.op;
  j["dtype"] = r.domain.format->name;
  Json fixed = Json::array();
  for (float v : r.domain.fixed) fixed.push_back(HexFloat(v));
  j["domain"] = {{"kind", r.domain.KindName()},
                 {"fixed", fixed},
                 {"size", r.domain.size()},
                 {"description", r.domain.Description()}};
  j["range"] = {r.begin, r.end};
  j["block"] = kSweepBlock;
  j["cases"] = Json::array();
  for (const SweepCase& c : r.cases) {
    const ErrorStatistics::State s = c.stats.state();
    Json fine = Json::object();
    for (size_t i = 0; i < s.fine.size(); ++i) {
      if (s.fine[i] != 0) fine[std::to_string(i)] = s.fine[i];
    }
    Json cj;
    cj["variant"] = c.variant;
    cj["target"] = c.target;
    cj["kind"] = c.kind;
    if (c.fault) {
      // Not measured: the fault alone, no figure.
      const KernelFault& f = *c.fault;
      cj["fault"] = {{"kind", KernelFaultKey(f.kind)},
                     {"detail", f.detail},
                     {"input", IndexJson(r.domain, f.index)},
                     {"call_first", f.first},
                     {"call_count", f.count}};
      j["cases"].push_back(cj);
      continue;
    }
    cj["n"] = s.n;
    cj["histogram"] = s.counts;
    cj["fine_histogram"] = fine;
    cj["special_mismatch"] = s.special_mismatch;
    cj["signed_zero_mismatch"] = s.signed_zero_mismatch;
    cj["correctly_rounded"] = s.correctly_rounded;
    cj["max_ulp"] = s.max_ulp;
    cj["max_input"] = IndexJson(r.domain, s.max_index);
    cj["first_special_input"] = IndexJson(r.domain, s.first_special_index);
    if (s.special_mismatch > 0) {
      Json causes = Json::object();
      for (int k = 0; k < kSpecialCauseCount; ++k) {
        const SpecialCauseCount& cause = s.special_causes[k];
        if (cause.count == 0) continue;
        causes[SpecialCauseKey(SpecialCauseAt(k))] = {
            {"count", cause.count}, {"first_input", IndexJson(r.domain, cause.first_index)}};
      }
      cj["special_mismatch_causes"] = causes;
    }
    if (s.first_signed_zero_index >= 0) {
      cj["first_signed_zero_input"] = IndexJson(r.domain, s.first_signed_zero_index);
    }
    cj["sum_ulp_2^-64"] = c.sum_ulp.ToDecimal();
    cj["mean_ulp"] = c.mean_ulp();
    cj["p99"] = c.stats.Percentile(99);
    const Conformance& k = c.conformance;
    cj["conformance"] = {{"expected", k.expected_model},
                         {"model", k.model()},
                         {"matching", k.matching},
                         {"mismatches", k.mismatches},
                         {"first_mismatch", IndexJson(r.domain, k.first_mismatch_index)}};
    cj["outputs_digest"] = DigestHex(c.digest);
    j["cases"].push_back(cj);
  }
  return j;
}

SweepResult SweepFromJson(const std::string& path, const Json& json) {
  const JsonField root(path, "", json);
  root.RequireObject();
  root.OnlyKeys({"format", "tool", "op", "dtype", "domain", "range", "block", "cases"});
  if (root["format"].String() != kSweepFormat) {
    root["format"].Fail(fmt::format("'{}' is not a sweep report ({})", root["format"].String(),
                                    kSweepFormat));
  }
  const ElementwiseOpInfo* op = FindElementwiseOp(root["op"].String());
  if (op == nullptr || op->arity() != 2) {
    root["op"].Fail("not an elementwise op of two operands this ulpgate knows");
  }
  const std::array<std::string, 2> operands = {std::string(op->operands[0].name),
                                               std::string(op->operands[1].name)};
  if (root["block"].Unsigned() != kSweepBlock) {
    root["block"].Fail(fmt::format("blocks of {} inputs, this ulpgate's are {}",
                                   root["block"].Unsigned(), kSweepBlock));
  }
  const FloatFormat* format = FindFormat(root["dtype"].String());
  if (format == nullptr) root["dtype"].Fail("unknown format");
  const JsonField d = root["domain"];
  d.OnlyKeys({"kind", "fixed", "size", "description"});
  SweepResult r;
  r.op = op->name;
  r.domain = ParseSweepDomain(d["kind"], d["fixed"], *format, operands);
  if (d["size"].Unsigned() != r.domain.size()) d["size"].Fail("not the domain's size");
  r.begin = root["range"][0].Unsigned();
  r.end = root["range"][1].Unsigned();
  if (root["range"].Size() != 2 || r.begin > r.end || r.end > r.domain.size()) {
    root["range"].Fail("expected [begin, end] within the domain");
  }
  const JsonField cases = root["cases"];
  for (size_t i = 0; i < cases.Size(); ++i) {
    const JsonField c = cases[i];
    SweepCase sc;
    sc.variant = c["variant"].String();
    sc.target = c["target"].String();
    sc.kind = c["kind"].String();
    if (c.Has("fault")) {
      const JsonField f = c["fault"];
      KernelFault fault;
      const std::string kind = f["kind"].String();
      const std::optional<KernelFaultKind> parsed = KernelFaultFromKey(kind);
      if (!parsed) f["kind"].Fail("unknown fault kind '" + kind + "'");
      fault.kind = *parsed;
      fault.detail = f["detail"].String();
      fault.index = f.Has("input") && !f["input"].json().is_null()
                        ? static_cast<int64_t>(f["input"]["index"].Unsigned())
                        : -1;
      fault.first = static_cast<int64_t>(f["call_first"].Unsigned());
      fault.count = static_cast<int64_t>(f["call_count"].Unsigned());
      sc.fault = fault;
      sc.stats = ErrorStatistics(*format);
      r.cases.push_back(std::move(sc));
      continue;
    }
    ErrorStatistics::State s;
    s.n = c["n"].Unsigned();
    for (size_t b = 0; b < c["histogram"].Size(); ++b) s.counts.push_back(c["histogram"][b].Unsigned());
    s.fine.assign(ErrorStatistics::FineBinCount(), 0);
    c["fine_histogram"].RequireObject();
    for (const auto& [bin, count] : c["fine_histogram"].json().items()) {
      const size_t at = std::strtoull(bin.c_str(), nullptr, 10);
      if (at >= s.fine.size() || !count.is_number_unsigned()) c["fine_histogram"].Fail("bad bin " + bin);
      s.fine[at] = count.get<uint64_t>();
    }
    s.special_mismatch = c["special_mismatch"].Unsigned();
    s.signed_zero_mismatch = c["signed_zero_mismatch"].Unsigned();
    s.correctly_rounded = c["correctly_rounded"].Unsigned();
    s.max_ulp = c["max_ulp"].Number();
    s.max_index = c.Has("max_input") ? static_cast<int64_t>(c["max_input"]["index"].Unsigned()) : -1;
    s.first_special_index = c.Has("first_special_input")
                                ? static_cast<int64_t>(c["first_special_input"]["index"].Unsigned())
                                : -1;
    if (c.Has("first_signed_zero_input")) {
      s.first_signed_zero_index = static_cast<int64_t>(c["first_signed_zero_input"]["index"].Unsigned());
    }
    if (c.Has("special_mismatch_causes")) {
      const JsonField causes = c["special_mismatch_causes"];
      causes.RequireObject();
      for (const auto& [key, value] : causes.json().items()) {
        int at = -1;
        for (int k = 0; k < kSpecialCauseCount; ++k) {
          if (key == SpecialCauseKey(SpecialCauseAt(k))) at = k;
        }
        if (at < 0) causes.Fail("unknown cause " + key);
        const JsonField cause = causes[key];
        s.special_causes[at].count = cause["count"].Unsigned();
        s.special_causes[at].first_index =
            static_cast<int64_t>(cause["first_input"]["index"].Unsigned());
      }
    }
    try {
      sc.stats = ErrorStatistics(*format, s);
    } catch (const std::invalid_argument& e) {
      c["histogram"].Fail(e.what());
    }
    const auto sum = UlpSum::FromDecimal(c["sum_ulp_2^-64"].String());
    if (!sum) c["sum_ulp_2^-64"].Fail("expected a decimal integer below 2^512");
    sc.sum_ulp = *sum;
    const JsonField conformance = c["conformance"];
    sc.conformance.expected_model = conformance["expected"].String();
    sc.conformance.matching = conformance["matching"].Strings();
    sc.conformance.mismatches = conformance["mismatches"].Unsigned();
    sc.conformance.first_mismatch_index =
        conformance.Has("first_mismatch")
            ? static_cast<int64_t>(conformance["first_mismatch"]["index"].Unsigned())
            : -1;
    const std::string digest = c["outputs_digest"].String();
    sc.digest = std::strtoull(digest.c_str(), nullptr, 16);
    r.cases.push_back(std::move(sc));
  }
  return r;
}

SweepResult MergeSweeps(const std::vector<std::pair<std::string, SweepResult>>& parts) {
  if (parts.empty()) throw InputError("nothing to merge");
  std::vector<const std::pair<std::string, SweepResult>*> order;
  for (const auto& p : parts) order.push_back(&p);
  std::sort(order.begin(), order.end(),
            [](const auto* a, const auto* b) { return a->second.begin < b->second.begin; });
  SweepResult merged = order.front()->second;
  const auto same_sweep = [&](const SweepResult& a, const SweepResult& b) {
    if (a.op != b.op || std::string_view(a.domain.format->name) != b.domain.format->name ||
        a.domain.kind != b.domain.kind || a.cases.size() != b.cases.size()) {
      return false;
    }
    for (size_t i = 0; i < a.domain.fixed.size(); ++i) {
      if (FloatBits(a.domain.fixed[i]) != FloatBits(b.domain.fixed[i])) return false;
    }
    for (size_t i = 0; i < a.cases.size(); ++i) {
      if (a.cases[i].variant != b.cases[i].variant || a.cases[i].target != b.cases[i].target ||
          a.cases[i].kind != b.cases[i].kind ||
          (!a.cases[i].fault && !b.cases[i].fault &&  // a faulted case's report has no model
           a.cases[i].conformance.expected_model != b.cases[i].conformance.expected_model)) {
        return false;
      }
    }
    return a.domain.fixed.size() == b.domain.fixed.size();
  };
  for (size_t p = 1; p < order.size(); ++p) {
    const auto& [path, part] = *order[p];
    const auto& previous = *order[p - 1];
    if (!same_sweep(merged, part)) {
      throw InputError(fmt::format("{}: not the same sweep as {} (domain, format, variants or "
                                   "targets differ)", path, order.front()->first));
    }
    if (part.begin != merged.end) {
      throw InputError(fmt::format("{} covers {}:{} and {} covers {}:{}: they {}", previous.first,
                                   previous.second.begin, previous.second.end, path, part.begin,
                                   part.end, part.begin < merged.end ? "overlap" : "leave a gap"));
    }
    for (size_t c = 0; c < merged.cases.size(); ++c) {
      // A fault in any part is the merged case's (the lowest input's): no
      // part's figures make a measurement of it.
      SweepCase& into = merged.cases[c];
      const SweepCase& other = part.cases[c];
      if (into.fault || other.fault) {
        const auto at = [](const KernelFault& f) { return f.index >= 0 ? f.index : f.first; };
        if (!into.fault || (other.fault && at(*other.fault) < at(*into.fault))) into.fault = other.fault;
        continue;
      }
      MergeSweepCase(*merged.domain.format, into, other);
    }
    merged.end = part.end;
  }
  return merged;
}

std::string SweepReplayCommand(const std::string& op, const SweepDomain& domain,
                               const std::string& variant, const std::string& target,
                               uint64_t index) {
  float grad, t;
  domain.Input(index, &grad, &t);
  ReplayKernel kernel;
  kernel.op = op;
  kernel.dtype = domain.format->name;
  kernel.variant = variant;
  kernel.target = target;
  if (const LoadedPlugin* plugin = FindPlugin(target)) kernel.source = plugin->Source();
  return ReplayInputCommand(kernel, {domain.operands[0], domain.operands[1]}, {grad, t});
}

SweepDomain ParseSweepDomain(const JsonField& kind, const JsonField& fixed,
                             const FloatFormat& format, const std::array<std::string, 2>& operands) {
  const std::string name = kind.String();
  SweepDomain::Kind k = SweepDomain::Kind::kPairs;
  if (name == "over_" + operands[1]) {
    k = SweepDomain::Kind::kOverT;
  } else if (name == "over_" + operands[0]) {
    k = SweepDomain::Kind::kOverGrad;
  } else if (name != "pairs") {
    kind.Fail("expected pairs, over_" + operands[1] + " or over_" + operands[0]);
  }
  std::vector<float> values;
  for (size_t i = 0; i < fixed.Size(); ++i) {
    std::string error;
    const auto v = ParseFloat(fixed[i].String(), &error);
    if (!v) fixed[i].Fail("expected a hex float: " + error);
    values.push_back(*v);
  }
  try {
    return MakeSweepDomain(format, k, values, operands);
  } catch (const InputError& e) {
    kind.Fail(e.what());
  }
}

}  // namespace ulpgate
